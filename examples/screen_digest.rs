//! Plays a game with random minimal-set actions (resetting at game over) and prints a digest of each
//! frame's raw screen, RAM and reward: two builds that print the same lines drew the same pixels and
//! made the same game state, frame by frame. For comparing builds the parity tests cannot run side by
//! side with ale_py: another compiler, or an aarch64 build under qemu against the x86-64 one.
//!
//! `cargo run --release --example screen_digest -- breakout 3000 > breakout.txt`

#[path = "../tests/common/mod.rs"]
mod common;

use torchwm::Ale;

/// FNV-1a, 64 bits: enough to tell two runs apart, and the same on every target.
fn fnv1a(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let game = args.next().unwrap_or_else(|| "breakout".into());
    let frames: u64 = args.next().map(|f| f.parse()).transpose()?.unwrap_or(3_000);
    let mut ale = Ale::new()?;
    ale.set_int("random_seed", 0)?;
    ale.load_rom(&common::rom(&game))?;
    let actions = ale.minimal_action_set()?;
    let (height, width) = ale.screen_dims()?;
    let mut screen = vec![0u8; height * width];
    let mut state: u64 = 1;
    let mut whole_run: u64 = 0xcbf2_9ce4_8422_2325;
    for frame in 0..frames {
        // The action stream of torchwm::bench::emulator_frames_per_second (xorshift).
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let reward = ale.act(actions[(state % actions.len() as u64) as usize], 1.0)?;
        ale.screen_raw_into(&mut screen)?;
        let digest = fnv1a(fnv1a(fnv1a(0xcbf2_9ce4_8422_2325, &screen), &ale.ram()?), &reward.to_le_bytes());
        println!("{frame} {digest:016x}");
        whole_run = fnv1a(whole_run, &digest.to_le_bytes());
        if ale.game_over(true)? {
            ale.reset_game()?;
        }
    }
    eprintln!("{game}: {frames} frames, digest {whole_run:016x}");
    Ok(())
}
