//! Builds the Arcade Learning Environment (ALE 0.12.1, C++) from its pinned source together with our
//! C++ shim (`src/ffi/ale_shim.cpp`).
//!
//! The source is the ale-py 0.12.1 source distribution, verified by sha256. It is looked up, in order:
//! 1. `TORCHWM_ALE_SOURCE`: an already-fetched `ale_py-0.12.1.tar.gz` or its extracted directory
//!    (for offline builds);
//! 2. the cache directory (`TORCHWM_CACHE_DIR`, else `$XDG_CACHE_HOME/torchwm`, else `~/.cache/torchwm`);
//! 3. otherwise it is downloaded into that cache with `python -m pip download` (pip is the package
//!    index client every Python has; the interpreter is `PYO3_PYTHON`, `PYTHON_SYS_EXECUTABLE` or `python3`).
use std::env;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

#[path = "build/ale_edits.rs"]
mod ale_edits;
use ale_edits::SOURCE_EDITS;

const ALE_VERSION: &str = "0.12.1";
const SDIST_NAME: &str = "ale_py-0.12.1.tar.gz";
const SDIST_SHA256: &str = "c503d574c5983e1063b451201ccb779d935919c0f6bf116fb0f4f8aa4c86d249";
/// ALE directories that are not the emulator core: Python/WASM bindings and ALE's own vectorizer
/// (which needs OpenCV; ours is in Rust).
const EXCLUDED_DIRS: [&str; 3] = ["python", "vector", "wasm"];

fn main() {
    for var in [
        "TORCHWM_ALE_SOURCE",
        "TORCHWM_CACHE_DIR",
        "XDG_CACHE_HOME",
        "HOME",
        "PYO3_PYTHON",
        "PYTHON_SYS_EXECUTABLE",
        "CXX",
        "CXXFLAGS",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build/ale_edits.rs");
    println!("cargo:rerun-if-changed=src/ffi/ale_shim.cpp");
    println!("cargo:rerun-if-changed=src/ffi/ale_shim.h");

    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let source_root = ale_source_root(&out_dir).unwrap_or_else(|message| fail(&message));
    let ale_src = source_root.join("src");
    let generated = out_dir.join("generated");
    write_version_header(&generated).unwrap_or_else(|e| fail(&format!("cannot write version.hpp: {e}")));

    let mut sources = Vec::new();
    collect_sources(&ale_src.join("ale"), &mut sources)
        .unwrap_or_else(|e| fail(&format!("cannot list ALE sources in {}: {e}", ale_src.display())));
    sources.sort();
    if sources.len() < 100 {
        fail(&format!(
            "found only {} C++ files under {}: the ALE source looks incomplete; delete it and build again",
            sources.len(),
            ale_src.display()
        ));
    }

    let unity_sources = write_unity_sources(&generated, &ale_src, &sources)
        .unwrap_or_else(|e| fail(&format!("cannot write the unity sources: {e}")));

    let mut build = cc::Build::new();
    build
        .cpp(true)
        .std("c++17")
        // ALE's own release build uses -O3; the emulator is the hot path, so debug builds use it too.
        .opt_level(3)
        .debug(false)
        .pic(true)
        .warnings(false)
        // As ALE's release build: assertions off (one asserts on negative seeds, which ale_py passes through).
        .define("NDEBUG", None)
        .flag_if_supported("-w")
        // `generated` first: it holds the edited copies of ALE files (see `SOURCE_EDITS`).
        .include(&generated)
        .include(&ale_src)
        .include("src/ffi")
        .files(&unity_sources)
        .file("src/ffi/ale_shim.cpp");
    if let Some(zlib_include) = env::var_os("DEP_Z_INCLUDE") {
        build.include(zlib_include);
    }
    build.compile("torchwm_ale");
    // libz-sys (static) provides zlib; the C++ runtime is linked by cc's compile() for us.
}

fn fail(message: &str) -> ! {
    eprintln!("torchwm build error: {message}");
    panic!("torchwm build error: {message}");
}

/// Returns the extracted `ale_py-0.12.1` directory (which holds `src/ale`).
fn ale_source_root(out_dir: &Path) -> Result<PathBuf, String> {
    if let Some(given) = env::var_os("TORCHWM_ALE_SOURCE") {
        let given = PathBuf::from(given);
        println!("cargo:rerun-if-changed={}", given.display());
        if given.is_dir() {
            if given.join("src/ale/ale_interface.hpp").is_file() {
                return Ok(given);
            }
            return Err(format!(
                "TORCHWM_ALE_SOURCE={} is a directory without src/ale/ale_interface.hpp; point it at the \
                 extracted ale_py-{ALE_VERSION} source or at {SDIST_NAME}",
                given.display()
            ));
        }
        verify_sha256(&given)?;
        return extract(&given, out_dir);
    }
    let cache_dir = cache_dir()?;
    let tarball = cache_dir.join(SDIST_NAME);
    if !tarball.is_file() || verify_sha256(&tarball).is_err() {
        download(&cache_dir)?;
    }
    verify_sha256(&tarball)?;
    extract(&tarball, out_dir)
}

fn cache_dir() -> Result<PathBuf, String> {
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

fn download(cache_dir: &Path) -> Result<(), String> {
    // Interpreters to try, in order. Under `pip install .` the build runs inside pip's isolated
    // build environment, whose PYTHONPATH hides the interpreter's own pip: run pip without it.
    let mut candidates: Vec<String> =
        ["PYO3_PYTHON", "PYTHON_SYS_EXECUTABLE"].iter().filter_map(|v| env::var(v).ok()).collect();
    candidates.extend(["python3".to_string(), "python".to_string()]);
    candidates.dedup();
    let mut failures = Vec::new();
    for python in &candidates {
        // Download into a private directory first so an interrupted download never looks complete.
        let staging = cache_dir.join(format!("download-{}", std::process::id()));
        let _ = fs::remove_dir_all(&staging);
        let status = Command::new(python)
            .args(["-m", "pip", "download", "--no-deps", "--no-binary", "ale-py"])
            .arg(format!("ale-py=={ALE_VERSION}"))
            .arg("-d")
            .arg(&staging)
            .env_remove("PYTHONPATH")
            .env_remove("PYTHONHOME")
            .env_remove("PYTHONNOUSERSITE")
            .env_remove("PIP_REQUIRE_VIRTUALENV")
            .status();
        let fetched = staging.join(SDIST_NAME);
        match status {
            Ok(status) if status.success() && fetched.is_file() => {
                verify_sha256(&fetched)?;
                fs::rename(&fetched, cache_dir.join(SDIST_NAME))
                    .map_err(|e| format!("cannot move {SDIST_NAME} into the cache: {e}"))?;
                let _ = fs::remove_dir_all(&staging);
                return Ok(());
            }
            Ok(status) => failures.push(format!("`{python} -m pip download` exited with {status}")),
            Err(e) => failures.push(format!("cannot run `{python}`: {e}")),
        }
        let _ = fs::remove_dir_all(&staging);
    }
    Err(format!("could not download ale-py {ALE_VERSION}'s source ({}); {}", failures.join("; "), offline_hint()))
}

fn offline_hint() -> String {
    format!(
        "to build offline, fetch the source once with `python -m pip download --no-deps --no-binary ale-py \
         ale-py=={ALE_VERSION} -d DIR` and set TORCHWM_ALE_SOURCE=DIR/{SDIST_NAME}"
    )
}

fn verify_sha256(path: &Path) -> Result<(), String> {
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
    let digest: String = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
    if digest == SDIST_SHA256 {
        Ok(())
    } else {
        Err(format!(
            "{} has sha256 {digest}, expected {SDIST_SHA256} (ale-py {ALE_VERSION} source); delete it and build again",
            path.display()
        ))
    }
}

fn extract(tarball: &Path, out_dir: &Path) -> Result<PathBuf, String> {
    let root = out_dir.join(format!("ale_py-{ALE_VERSION}"));
    let marker = out_dir.join("ale-source.extracted");
    if marker.is_file() && root.join("src/ale/ale_interface.hpp").is_file() {
        return Ok(root);
    }
    let _ = fs::remove_dir_all(&root);
    let file = fs::File::open(tarball).map_err(|e| format!("cannot open {}: {e}", tarball.display()))?;
    tar::Archive::new(flate2::read::GzDecoder::new(file))
        .unpack(out_dir)
        .map_err(|e| format!("cannot extract {}: {e}", tarball.display()))?;
    if !root.join("src/ale/ale_interface.hpp").is_file() {
        return Err(format!("{} does not contain ale_py-{ALE_VERSION}/src/ale", tarball.display()));
    }
    fs::write(&marker, SDIST_SHA256).map_err(|e| format!("cannot write {}: {e}", marker.display()))?;
    Ok(root)
}

fn write_version_header(dir: &Path) -> std::io::Result<()> {
    fs::create_dir_all(dir)?;
    let mut parts = ALE_VERSION.split('.');
    let (major, minor, patch) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
    let header = format!(
        "#ifndef __VERSION_HPP__\n#define __VERSION_HPP__\n\
         #define ALE_VERSION \"{ALE_VERSION}\"\n#define ALE_VERSION_MAJOR \"{major}\"\n\
         #define ALE_VERSION_MINOR \"{minor}\"\n#define ALE_VERSION_PATCH \"{patch}\"\n\
         #define ALE_VERSION_GIT_SHA \"torchwm\"\n#define STELLA_VERSION \"2.4.2\"\n#endif\n"
    );
    fs::write(dir.join("version.hpp"), header)
}

/// Writes the edited copies (see `SOURCE_EDITS`) and the two unity translation units ALE is compiled
/// as: the emulator core, and the per-game ROM settings (two, so they compile in parallel). One unit
/// per half instead of 170 files builds ALE several times faster; the emulator runs as fast either way.
fn write_unity_sources(generated: &Path, ale_src: &Path, sources: &[PathBuf]) -> std::io::Result<[PathBuf; 2]> {
    let mut edited = Vec::new();
    for (relative, edits) in SOURCE_EDITS {
        let original = ale_src.join(relative);
        let mut text = fs::read_to_string(&original)?;
        for (from, to) in edits {
            if text.matches(from).count() != 1 {
                fail(&format!("{} is not the expected ALE {ALE_VERSION} source", original.display()));
            }
            text = text.replace(from, to);
        }
        let copy = generated.join(relative);
        fs::create_dir_all(copy.parent().expect("a file in a directory"))?;
        fs::write(&copy, &text)?;
        edited.push((original, copy));
    }
    remove_stale_copies(&generated.join("ale"), &edited.iter().map(|e| e.1.clone()).collect::<Vec<_>>())?;
    let source_of =
        |file: &PathBuf| edited.iter().find(|(original, _)| original == file).map_or(file.clone(), |e| e.1.clone());

    let games_dir = ale_src.join("ale/games");
    let (games, core): (Vec<&PathBuf>, Vec<&PathBuf>) = sources.iter().partition(|p| p.starts_with(&games_dir));
    let units = [generated.join("ale_core_unity.cpp"), generated.join("ale_games_unity.cpp")];
    for (unit, files) in units.iter().zip([core, games]) {
        let text: String = files.iter().map(|f| format!("#include \"{}\"\n", source_of(f).display())).collect();
        fs::write(unit, &text)?;
    }
    Ok(units)
}

/// Deletes edited copies left in `dir` by an earlier build whose edits are gone: `generated` comes
/// first on the include path, so a stale header copy would still be compiled.
fn remove_stale_copies(dir: &Path, keep: &[PathBuf]) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            remove_stale_copies(&path, keep)?;
        } else if !keep.contains(&path) {
            fs::remove_file(&path)?;
        }
    }
    Ok(())
}

fn collect_sources(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if !EXCLUDED_DIRS.contains(&name) {
                collect_sources(&path, out)?;
            }
        } else if matches!(path.extension().and_then(|e| e.to_str()), Some("cpp" | "cxx")) {
            out.push(path);
        }
    }
    Ok(())
}
