//! Measurements the `torchwm bench` command reports next to the vector envs, run in Rust so no
//! Python call overhead is counted.
use std::path::Path;
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
