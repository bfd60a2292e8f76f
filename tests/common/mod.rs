//! Shared helpers for the Rust integration tests: where the ROMs are.
#![allow(dead_code)]
use std::path::PathBuf;
use std::process::Command;

/// ROM directory: `TORCHWM_ROM_DIR`, else the installed ale-py package's (asked through `python3`).
/// `None` when neither exists; ROM-dependent tests then print why and pass without running.
pub fn rom_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("TORCHWM_ROM_DIR") {
        return Some(PathBuf::from(dir));
    }
    let python = std::env::var("PYO3_PYTHON").unwrap_or_else(|_| "python3".into());
    let output = Command::new(python)
        .args(["-c", "import ale_py.roms, pathlib; print(pathlib.Path(ale_py.roms.__file__).parent)"])
        .output()
        .ok()?;
    output.status.success().then(|| PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()))
}

pub fn rom(game: &str) -> Option<PathBuf> {
    let path = rom_dir()?.join(format!("{game}.bin"));
    if path.is_file() {
        Some(path)
    } else {
        eprintln!("skipping: ROM {} not found (set TORCHWM_ROM_DIR or install ale-py)", path.display());
        None
    }
}
