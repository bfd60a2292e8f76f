//! ROM lookup for the benches: `TORCHWM_ROM_DIR`, else the installed ale-py package's (via python3).
use std::path::PathBuf;
use std::process::Command;

pub fn rom(game: &str) -> Option<PathBuf> {
    let dir = match std::env::var_os("TORCHWM_ROM_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => {
            let python = std::env::var("PYO3_PYTHON").unwrap_or_else(|_| "python3".into());
            let out = Command::new(python)
                .args(["-c", "import ale_py.roms, pathlib; print(pathlib.Path(ale_py.roms.__file__).parent)"])
                .output()
                .ok()?;
            if !out.status.success() {
                return None;
            }
            PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
        }
    };
    let path = dir.join(format!("{game}.bin"));
    if path.is_file() {
        Some(path)
    } else {
        eprintln!("bench skipped: ROM {} not found (set TORCHWM_ROM_DIR or install ale-py)", path.display());
        None
    }
}
