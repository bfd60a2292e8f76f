//! The generated C++ ALE is compiled from: its `version.hpp`, the patched copies of its files (see
//! `ale_edits.rs`), and the two unity translation units that include every source file.
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::ale_bank_edits;
use crate::ale_edits::{self, PATCHES};
use crate::ale_source::AleRelease;

/// ALE directories that are not the emulator core: Python/WASM bindings and ALE's own vectorizer
/// (which needs OpenCV; ours is in Rust).
const EXCLUDED_DIRS: [&str; 3] = ["python", "vector", "wasm"];

/// ALE's `version.hpp`, which its CMake build generates from `version.hpp.in`.
pub fn write_version_header(dir: &Path, release: &AleRelease) -> Result<(), String> {
    let (major, minor, patch) = release.version_parts()?;
    let version = &release.version;
    let header = format!(
        "#ifndef __VERSION_HPP__\n#define __VERSION_HPP__\n\
         #define ALE_VERSION \"{version}\"\n#define ALE_VERSION_MAJOR \"{major}\"\n\
         #define ALE_VERSION_MINOR \"{minor}\"\n#define ALE_VERSION_PATCH \"{patch}\"\n\
         #define ALE_VERSION_GIT_SHA \"torchwm\"\n#define STELLA_VERSION \"2.4.2\"\n#endif\n"
    );
    fs::create_dir_all(dir).and_then(|()| fs::write(dir.join("version.hpp"), header)).map_err(|e| e.to_string())
}

/// Every C++ source file of ALE's emulator core, sorted.
pub fn ale_sources(ale_src: &Path) -> Result<Vec<PathBuf>, String> {
    let mut sources = Vec::new();
    collect_sources(&ale_src.join("ale"), &mut sources)
        .map_err(|e| format!("cannot list ALE sources in {}: {e}", ale_src.display()))?;
    sources.sort();
    if sources.len() < 100 {
        return Err(format!(
            "found only {} C++ files under {}: the ALE source looks incomplete; delete it and build again",
            sources.len(),
            ale_src.display()
        ));
    }
    Ok(sources)
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

/// Writes the patched copies into `generated`, returning `(original, copy)` pairs.
pub fn write_patched_copies(generated: &Path, ale_src: &Path) -> Result<Vec<(PathBuf, PathBuf)>, String> {
    let mut patched: BTreeMap<&str, String> = BTreeMap::new();
    for patch in PATCHES.iter().chain(&ale_bank_edits::PATCHES) {
        let original = ale_src.join(patch.file);
        let text = match patched.remove(patch.file) {
            Some(text) => text,
            None => fs::read_to_string(&original).map_err(|e| format!("cannot read {}: {e}", original.display()))?,
        };
        let text = ale_edits::apply(patch, &text)
            .map_err(|e| format!("{} is not the source build/ale_edits.rs was written for: {e}", original.display()))?;
        patched.insert(patch.file, text);
    }
    let mut copies = Vec::new();
    for (relative, text) in patched {
        let copy = generated.join(relative);
        fs::create_dir_all(copy.parent().expect("a file in a directory"))
            .and_then(|()| fs::write(&copy, text))
            .map_err(|e| format!("cannot write {}: {e}", copy.display()))?;
        copies.push((ale_src.join(relative), copy));
    }
    let keep: Vec<PathBuf> = copies.iter().map(|(_, copy)| copy.clone()).collect();
    remove_stale_copies(&generated.join("ale"), &keep)
        .map_err(|e| format!("cannot clean {}: {e}", generated.display()))?;
    Ok(copies)
}

/// Deletes patched copies left in `dir` by an earlier build whose edits are gone: `generated` comes
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

/// Writes the two unity translation units ALE is compiled as: the emulator core, and the per-game
/// ROM settings (two, so they compile in parallel). One unit per half instead of 170 files builds
/// ALE several times faster; the emulator runs as fast either way.
pub fn write_unity_sources(
    generated: &Path,
    ale_src: &Path,
    sources: &[PathBuf],
    copies: &[(PathBuf, PathBuf)],
) -> Result<[PathBuf; 2], String> {
    let source_of =
        |file: &PathBuf| copies.iter().find(|(original, _)| original == file).map_or(file.clone(), |c| c.1.clone());
    let games_dir = ale_src.join("ale/games");
    let (games, core): (Vec<&PathBuf>, Vec<&PathBuf>) = sources.iter().partition(|p| p.starts_with(&games_dir));
    let units = [generated.join("ale_core_unity.cpp"), generated.join("ale_games_unity.cpp")];
    for (unit, files) in units.iter().zip([core, games]) {
        let text: String = files.iter().map(|f| format!("#include \"{}\"\n", source_of(f).display())).collect();
        fs::write(unit, &text).map_err(|e| format!("cannot write {}: {e}", unit.display()))?;
    }
    Ok(units)
}
