//! Shared helpers for the Rust integration tests and benches (benches include this file by path).
use std::path::PathBuf;
use std::process::Command;

/// The ROM of `game` (`"breakout"`, `"pong"`...): in `TORCHWM_ROM_DIR`, else in the installed ale-py
/// package's ROM directory (asked of `PYO3_PYTHON`, else `python3`). A test that needs one fails,
/// naming what is missing, when it cannot be found: it must not pass without running.
pub fn rom(game: &str) -> PathBuf {
    let path = rom_dir().join(format!("{game}.bin"));
    assert!(
        path.is_file(),
        "this needs ROMs: {} is missing (set TORCHWM_ROM_DIR to ale-py's roms directory)",
        path.display()
    );
    path
}

fn rom_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("TORCHWM_ROM_DIR") {
        return PathBuf::from(dir);
    }
    let python = std::env::var("PYO3_PYTHON").unwrap_or_else(|_| "python3".into());
    let output = Command::new(&python)
        .args(["-c", "import ale_py.roms, pathlib; print(pathlib.Path(ale_py.roms.__file__).parent)"])
        .output()
        .unwrap_or_else(|e| panic!("TORCHWM_ROM_DIR is not set and `{python}` cannot be run: {e}"));
    assert!(output.status.success(), "TORCHWM_ROM_DIR is not set and `{python}` cannot import ale_py.roms");
    PathBuf::from(String::from_utf8_lossy(&output.stdout).trim())
}
