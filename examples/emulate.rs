//! Runs the raw emulator for a fixed number of frames and prints frames/s: a steady workload for
//! profilers (`perf record`, `valgrind --tool=callgrind`), with ROMs found as the benches find them.
//!
//! `cargo run --release --example emulate -- breakout 20000`

#[path = "../tests/common/mod.rs"]
mod common;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let game = args.next().unwrap_or_else(|| "breakout".into());
    let frames: u64 = args.next().map(|f| f.parse()).transpose()?.unwrap_or(20_000);
    let rom = common::rom(&game);
    let fps = torchwm::bench::emulator_frames_per_second(&rom, frames, 0)?;
    println!("{game}: {fps:.0} frames/s over {frames} frames");
    Ok(())
}
