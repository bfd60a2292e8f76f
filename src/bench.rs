//! Measurements the `torchwm bench` command reports next to the vector envs, run in Rust so no
//! Python call overhead is counted; and where the Rust tests, benches and examples find ROMs.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::ale::Ale;
use crate::error::{Error, Result};

/// Raw single-thread emulator speed: `frames` frames of random minimal-set actions (resetting at game
/// over), no preprocessing. Returns frames per second.
pub fn emulator_frames_per_second(rom: &Path, frames: u64, seed: u32) -> Result<f64> {
    if frames == 0 {
        return Err(Error::InvalidArgument("frames must be positive".into()));
    }
    let mut ale = Ale::new()?;
    ale.set_int("random_seed", seed as i32)?;
    ale.load_rom(rom)?;
    let actions = ale.minimal_action_set()?;
    let mut state = seed as u64 | 1;
    let start = Instant::now();
    for _ in 0..frames {
        // xorshift: a cheap action stream that costs nothing next to a frame.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        ale.act(actions[(state % actions.len() as u64) as usize], 1.0)?;
        if ale.game_over(true)? {
            ale.reset_game()?;
        }
    }
    Ok(frames as f64 / start.elapsed().as_secs_f64())
}

/// The ROM file of `game` (`"breakout"`, `"pong"`...) for the Rust tests, benches and examples: in
/// `TORCHWM_ROM_DIR`, else in the installed ale-py package's ROM directory (asked of the Python
/// interpreter `PYO3_PYTHON`, else `python3`). Python code finds ROMs through ale-py itself.
pub fn find_rom(game: &str) -> Result<PathBuf> {
    let path = rom_dir()?.join(format!("{game}.bin"));
    if path.is_file() {
        Ok(path)
    } else {
        Err(Error::RomNotFound(format!("{} (set TORCHWM_ROM_DIR to ale-py's roms directory)", path.display())))
    }
}

fn rom_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("TORCHWM_ROM_DIR") {
        return Ok(PathBuf::from(dir));
    }
    let python = std::env::var("PYO3_PYTHON").unwrap_or_else(|_| "python3".into());
    let not_found = |why: String| {
        Error::RomNotFound(format!("no ROM directory: TORCHWM_ROM_DIR is not set and {why}; set TORCHWM_ROM_DIR"))
    };
    let output = Command::new(&python)
        .args(["-c", "import ale_py.roms, pathlib; print(pathlib.Path(ale_py.roms.__file__).parent)"])
        .output()
        .map_err(|e| not_found(format!("`{python}` cannot be run ({e})")))?;
    if !output.status.success() {
        return Err(not_found(format!("`{python}` cannot import ale_py.roms")));
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()))
}
