//! Raw single-thread emulator throughput (frames/s), no preprocessing: the ceiling for everything else.
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
#[path = "../tests/common/mod.rs"]
mod common;
use torchwm::Ale;

const FRAMES: u64 = 1000;

fn emulator_frames(c: &mut Criterion) {
    let mut group = c.benchmark_group("emulator");
    group.throughput(Throughput::Elements(FRAMES));
    group.sample_size(20);
    for game in ["breakout", "pong", "space_invaders", "ms_pacman"] {
        let rom = common::rom(game);
        let mut ale = Ale::new().unwrap();
        ale.set_int("random_seed", 0).unwrap();
        ale.load_rom(&rom).unwrap();
        let actions = ale.minimal_action_set().unwrap();
        let mut t = 0usize;
        group.bench_function(game, |b| {
            b.iter(|| {
                for _ in 0..FRAMES {
                    t = t.wrapping_mul(1103515245).wrapping_add(12345);
                    ale.act(actions[(t >> 16) % actions.len()], 1.0).unwrap();
                    if ale.game_over(true).unwrap() {
                        ale.reset_game().unwrap();
                    }
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, emulator_frames);
criterion_main!(benches);
