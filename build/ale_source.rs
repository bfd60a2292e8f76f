//! ALE's pinned C++ source: which version (the `ale-py==X` pin in pyproject.toml, the one place the
//! version is written), where its source distribution comes from, and its check by sha256.
//!
//! The source is looked up, in order:
//! 1. `TORCHWM_ALE_SOURCE`: an already-fetched `ale_py-X.tar.gz` or its extracted directory (for
//!    offline builds);
//! 2. the cache directory (`TORCHWM_CACHE_DIR`, else `$XDG_CACHE_HOME/torchwm`, else `~/.cache/torchwm`);
//! 3. otherwise it is downloaded into that cache with `python -m pip download` (pip is the package
//!    index client every Python has; the interpreter is `PYO3_PYTHON`, `PYTHON_SYS_EXECUTABLE` or `python3`),
//!    else with `uv tool run pip download` (a uv virtualenv has no pip; uv names itself in `UV`).
use std::env;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

/// The sha256 of each ale-py source distribution this build knows. Pinning a new version in
/// pyproject.toml needs its line here, and `ale_edits.rs`'s anchors checked against its source.
const KNOWN_SDISTS: [(&str, &str); 1] =
    [("0.12.1", "c503d574c5983e1063b451201ccb779d935919c0f6bf116fb0f4f8aa4c86d249")];

/// The environment variables that decide where the source comes from.
pub const ENV_VARS: [&str; 6] =
    ["TORCHWM_ALE_SOURCE", "TORCHWM_CACHE_DIR", "XDG_CACHE_HOME", "HOME", "PYO3_PYTHON", "PYTHON_SYS_EXECUTABLE"];

/// One pinned ALE release.
pub struct AleRelease {
    pub version: String,
    sha256: &'static str,
}

impl AleRelease {
    /// The release pinned by pyproject.toml's `ale-py==X` dependency.
    pub fn pinned(pyproject: &Path) -> Result<Self, String> {
        let text = fs::read_to_string(pyproject).map_err(|e| format!("cannot read {}: {e}", pyproject.display()))?;
        let pins: Vec<&str> =
            text.lines().filter_map(|line| line.split("\"ale-py==").nth(1)?.split('"').next()).collect();
        let [version] = pins[..] else {
            return Err(format!(
                "{} must pin ale-py exactly once as \"ale-py==X.Y.Z\" (found {} pins)",
                pyproject.display(),
                pins.len()
            ));
        };
        let Some(&(_, sha256)) = KNOWN_SDISTS.iter().find(|(known, _)| *known == version) else {
            return Err(format!(
                "pyproject.toml pins ale-py=={version}, but build/ale_source.rs knows no sha256 for its source; \
                 add it to KNOWN_SDISTS and check that build/ale_edits.rs's anchors match the new source"
            ));
        };
        Ok(Self { version: version.to_string(), sha256 })
    }

    pub fn sdist_name(&self) -> String {
        format!("ale_py-{}.tar.gz", self.version)
    }

    /// `(major, minor, patch)`.
    pub fn version_parts(&self) -> Result<(&str, &str, &str), String> {
        let mut parts = self.version.split('.');
        match (parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some(major), Some(minor), Some(patch), None) => Ok((major, minor, patch)),
            _ => Err(format!("ale-py version {:?} is not MAJOR.MINOR.PATCH", self.version)),
        }
    }

    /// Returns the extracted `ale_py-X` directory (which holds `src/ale`).
    pub fn source_root(&self, out_dir: &Path) -> Result<PathBuf, String> {
        if let Some(given) = env::var_os("TORCHWM_ALE_SOURCE") {
            let given = PathBuf::from(given);
            println!("cargo:rerun-if-changed={}", given.display());
            if given.is_dir() {
                if given.join("src/ale/ale_interface.hpp").is_file() {
                    return Ok(given);
                }
                return Err(format!(
                    "TORCHWM_ALE_SOURCE={} is a directory without src/ale/ale_interface.hpp; point it at the \
                     extracted ale_py-{} source or at {}",
                    given.display(),
                    self.version,
                    self.sdist_name()
                ));
            }
            self.verify_sha256(&given)?;
            return self.extract(&given, out_dir);
        }
        let cache_dir = cache_dir()?;
        let tarball = cache_dir.join(self.sdist_name());
        if !tarball.is_file() || self.verify_sha256(&tarball).is_err() {
            self.download(&cache_dir)?;
        }
        self.verify_sha256(&tarball)?;
        self.extract(&tarball, out_dir)
    }

    fn download(&self, cache_dir: &Path) -> Result<(), String> {
        let mut failures = Vec::new();
        for (program, prefix) in pip_runners() {
            match self.download_with(&program, prefix, cache_dir) {
                Ok(()) => return Ok(()),
                Err(failure) => failures.push(failure),
            }
        }
        Err(format!(
            "could not download ale-py {}'s source ({}); {}",
            self.version,
            failures.join("; "),
            self.offline_hint()
        ))
    }

    fn download_with(&self, program: &str, prefix: &[&str], cache_dir: &Path) -> Result<(), String> {
        // Download into a private directory first so an interrupted download never looks complete.
        let staging = cache_dir.join(format!("download-{}", std::process::id()));
        let _ = fs::remove_dir_all(&staging);
        let pip = [program, prefix.join(" ").as_str(), "download"].join(" ");
        let status = Command::new(program)
            .args(prefix)
            .args(["download", "--no-deps", "--no-binary", "ale-py"])
            .arg(format!("ale-py=={}", self.version))
            .arg("-d")
            .arg(&staging)
            .env_remove("PYTHONPATH")
            .env_remove("PYTHONHOME")
            .env_remove("PYTHONNOUSERSITE")
            .env_remove("PIP_REQUIRE_VIRTUALENV")
            .status();
        let fetched = staging.join(self.sdist_name());
        let result = match status {
            Ok(status) if status.success() && fetched.is_file() => self.verify_sha256(&fetched).and_then(|()| {
                fs::rename(&fetched, cache_dir.join(self.sdist_name()))
                    .map_err(|e| format!("cannot move {} into the cache: {e}", self.sdist_name()))
            }),
            Ok(status) => Err(format!("`{pip}` exited with {status}")),
            Err(e) => Err(format!("cannot run `{program}`: {e}")),
        };
        let _ = fs::remove_dir_all(&staging);
        result
    }

    fn offline_hint(&self) -> String {
        format!(
            "to build offline, fetch the source once with `python -m pip download --no-deps --no-binary ale-py \
             ale-py=={} -d DIR` and set TORCHWM_ALE_SOURCE=DIR/{}",
            self.version,
            self.sdist_name()
        )
    }

    fn verify_sha256(&self, path: &Path) -> Result<(), String> {
        let digest = sha256_file(path)?;
        if digest == self.sha256 {
            Ok(())
        } else {
            Err(format!(
                "{} has sha256 {digest}, expected {} (ale-py {} source); delete it and build again",
                path.display(),
                self.sha256,
                self.version
            ))
        }
    }

    fn extract(&self, tarball: &Path, out_dir: &Path) -> Result<PathBuf, String> {
        let root = out_dir.join(format!("ale_py-{}", self.version));
        let marker = out_dir.join("ale-source.extracted");
        let extracted = fs::read_to_string(&marker).is_ok_and(|sha| sha == self.sha256);
        if extracted && root.join("src/ale/ale_interface.hpp").is_file() {
            return Ok(root);
        }
        let _ = fs::remove_dir_all(&root);
        let file = fs::File::open(tarball).map_err(|e| format!("cannot open {}: {e}", tarball.display()))?;
        tar::Archive::new(flate2::read::GzDecoder::new(file))
            .unpack(out_dir)
            .map_err(|e| format!("cannot extract {}: {e}", tarball.display()))?;
        if !root.join("src/ale/ale_interface.hpp").is_file() {
            return Err(format!("{} does not contain ale_py-{}/src/ale", tarball.display(), self.version));
        }
        fs::write(&marker, self.sha256).map_err(|e| format!("cannot write {}: {e}", marker.display()))?;
        Ok(root)
    }
}

pub fn cache_dir() -> Result<PathBuf, String> {
    let dir = if let Some(dir) = env::var_os("TORCHWM_CACHE_DIR") {
        PathBuf::from(dir)
    } else if let Some(xdg) = env::var_os("XDG_CACHE_HOME") {
        PathBuf::from(xdg).join("torchwm")
    } else if let Some(home) = env::var_os("HOME") {
        PathBuf::from(home).join(".cache").join("torchwm")
    } else {
        return Err("no cache directory: set TORCHWM_CACHE_DIR or TORCHWM_ALE_SOURCE".into());
    };
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create cache directory {}: {e}", dir.display()))?;
    Ok(dir)
}

/// The ways to run pip, in order: each interpreter of the build (`-m pip`), then uv's (`tool run pip`).
/// Under `pip install .` the build runs inside pip's isolated build environment, whose PYTHONPATH hides
/// the interpreter's own pip: pip runs without it. A virtualenv made by uv has no pip; uv sets `UV` to
/// itself in the builds it runs.
fn pip_runners() -> Vec<(String, &'static [&'static str])> {
    let mut pythons: Vec<String> =
        ["PYO3_PYTHON", "PYTHON_SYS_EXECUTABLE"].iter().filter_map(|v| env::var(v).ok()).collect();
    pythons.extend(["python3".to_string(), "python".to_string()]);
    pythons.dedup();
    let mut uvs: Vec<String> = env::var("UV").ok().into_iter().collect();
    uvs.push("uv".to_string());
    uvs.dedup();
    let python_pip: &'static [&'static str] = &["-m", "pip"];
    let uv_pip: &'static [&'static str] = &["tool", "run", "pip"];
    pythons.into_iter().map(|p| (p, python_pip)).chain(uvs.into_iter().map(|uv| (uv, uv_pip))).collect()
}

/// The file's sha256, in lowercase hex.
pub fn sha256_file(path: &Path) -> Result<String, String> {
    let mut file = fs::File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 16];
    loop {
        let read = file.read(&mut buffer).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    Ok(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
}
