//! Vector env throughput (env steps/s, each step = 4 emulator frames + preprocessing) for Breakout,
//! 84x84 gray, stack 4: by num_envs, by num_threads, and async batches.
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use torchwm::atari::AtariConfig;
#[path = "../tests/common/mod.rs"]
mod common;
use torchwm::vector::{AtariVectorEnv, VectorConfig};

const STEPS: usize = 20;

fn make(num_envs: usize, num_threads: usize, batch_size: usize) -> AtariVectorEnv {
    let rom = common::rom("breakout");
    let mut config = VectorConfig::new(rom, num_envs, AtariConfig::default());
    config.num_threads = num_threads;
    config.batch_size = batch_size;
    let mut env = AtariVectorEnv::new(config).unwrap();
    let ids: Vec<usize> = (0..num_envs).collect();
    let seeds: Vec<Option<u32>> = (0..num_envs as u32).map(Some).collect();
    env.reset(&ids, &seeds).unwrap();
    env
}

fn run(env: &mut AtariVectorEnv, steps: usize, t: &mut i64) {
    let n = env.action_set().len() as i64;
    let batch = env.batch_size();
    let mut actions = vec![0i64; batch];
    let strengths = vec![1.0f32; batch];
    for _ in 0..steps {
        for a in actions.iter_mut() {
            *t = t.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            *a = (*t >> 33).rem_euclid(n);
        }
        env.send(&actions, &strengths).unwrap();
        env.recv().unwrap();
    }
}

fn vector_steps(c: &mut Criterion) {
    let mut group = c.benchmark_group("vector_num_envs");
    group.sample_size(10);
    for num_envs in [2usize, 4, 8, 16, 32] {
        let mut env = make(num_envs, 0, 0);
        let mut t = 1;
        group.throughput(Throughput::Elements((STEPS * num_envs) as u64));
        group.bench_with_input(BenchmarkId::from_parameter(num_envs), &num_envs, |b, _| {
            b.iter(|| run(&mut env, STEPS, &mut t))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("vector_num_threads_8_envs");
    group.sample_size(10);
    for threads in [1usize, 2, 4] {
        let mut env = make(8, threads, 0);
        let mut t = 1;
        group.throughput(Throughput::Elements((STEPS * 8) as u64));
        group.bench_with_input(BenchmarkId::from_parameter(threads), &threads, |b, _| {
            b.iter(|| run(&mut env, STEPS, &mut t))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("vector_batch_size_8_envs");
    group.sample_size(10);
    for batch in [2usize, 4, 8] {
        let mut env = make(8, 0, batch);
        let mut t = 1;
        group.throughput(Throughput::Elements((STEPS * batch) as u64));
        group.bench_with_input(BenchmarkId::from_parameter(batch), &batch, |b, _| {
            b.iter(|| run(&mut env, STEPS, &mut t))
        });
    }
    group.finish();
}

criterion_group!(benches, vector_steps);
criterion_main!(benches);
