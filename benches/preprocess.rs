//! Cost per frame of each preprocessing step: resize (INTER_AREA 210x160 -> 84x84), palette lookup
//! with max-pool, stack copy.
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use torchwm::preprocess::{FramePooler, FrameStack, Resizer};

fn preprocess(c: &mut Criterion) {
    let mut group = c.benchmark_group("preprocess");
    group.throughput(Throughput::Elements(1));
    let gray: Vec<u8> = (0..210 * 160).map(|i| (i * 31 % 251) as u8).collect();
    let rgb: Vec<u8> = (0..210 * 160 * 3).map(|i| (i * 17 % 253) as u8).collect();

    let mut resizer = Resizer::new(210, 160, 84, 84, 1);
    let mut out = vec![0u8; 84 * 84];
    group.bench_function("resize_gray_210x160_to_84x84", |b| b.iter(|| resizer.resize(black_box(&gray), &mut out)));

    let mut resizer = Resizer::new(210, 160, 84, 84, 3);
    let mut out = vec![0u8; 84 * 84 * 3];
    group.bench_function("resize_rgb_210x160_to_84x84", |b| b.iter(|| resizer.resize(black_box(&rgb), &mut out)));

    // Every row changes from call to call (the two frames swap), so this is the whole-frame cost.
    let palette: torchwm::preprocess::Palette = std::array::from_fn(|i| [i as u8, (i / 2) as u8, (255 - i) as u8]);
    let other: Vec<u8> = gray.iter().map(|v| v.wrapping_add(1)).collect();
    for (name, channels) in [("pool_gray_210x160", 1), ("pool_rgb_210x160", 3)] {
        let mut pooler = FramePooler::new(palette, channels, 210, 160);
        let mut swap = false;
        group.bench_function(name, |b| {
            b.iter(|| {
                swap = !swap;
                let (newest, previous) = if swap { (&gray, &other) } else { (&other, &gray) };
                pooler.captured(0);
                pooler.captured(1);
                black_box(pooler.pool(newest, previous, true).0.len())
            })
        });
    }

    let mut stack = FrameStack::new(4, 84 * 84);
    let mut linear = vec![0u8; 4 * 84 * 84];
    group.bench_function("stack_push_and_copy_4x84x84", |b| {
        b.iter(|| {
            stack.next_slot().copy_from_slice(&gray[..84 * 84]);
            stack.advance();
            stack.write_linear(black_box(&mut linear));
        })
    });
    group.finish();
}

criterion_group!(benches, preprocess);
criterion_main!(benches);
