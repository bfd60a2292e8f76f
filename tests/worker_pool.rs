//! The vectorizer's thread pool: named threads, pinned when asked, all joined by `close`.
//! (One test in its own binary: other tests' pools would be counted too.)
#![cfg(target_os = "linux")]
mod common;

use std::fs;

use torchwm::atari::AtariConfig;
use torchwm::vector::{AtariVectorEnv, VectorConfig};

/// `(name, allowed cores)` of every thread of this process named `torchwm-atari*`.
fn pool_threads() -> Vec<(String, String)> {
    let mut threads = Vec::new();
    for task in fs::read_dir("/proc/self/task").unwrap().flatten() {
        let name = fs::read_to_string(task.path().join("comm")).unwrap_or_default().trim().to_string();
        if !name.starts_with("torchwm-atari") {
            continue;
        }
        let status = fs::read_to_string(task.path().join("status")).unwrap_or_default();
        let cores = status
            .lines()
            .find_map(|line| line.strip_prefix("Cpus_allowed_list:"))
            .map(|cores| cores.trim().to_string())
            .unwrap_or_default();
        threads.push((name, cores));
    }
    threads.sort();
    threads
}

#[test]
fn pool_threads_are_named_pinned_and_joined_at_close() {
    let cores = core_affinity::get_core_ids().unwrap_or_default().len();
    let mut config = VectorConfig::new(common::rom("pong"), 4, AtariConfig::default());
    config.num_threads = 2;
    config.thread_affinity_offset = Some(1);
    let mut env = AtariVectorEnv::new(config).unwrap();
    let threads = env.num_threads();
    env.reset(&[0, 1, 2, 3], &[Some(1); 4]).unwrap();
    env.step(&[0; 4], &[1.0; 4]).unwrap();

    let running = pool_threads();
    let names: Vec<&str> = running.iter().map(|(name, _)| name.as_str()).collect();
    let expected: Vec<String> = (0..threads).map(|i| format!("torchwm-atari-{i}")).collect();
    assert_eq!(names, expected);
    if cores > 0 {
        for (index, (_, allowed)) in running.iter().enumerate() {
            assert_eq!(allowed, &((1 + index) % cores).to_string(), "thread {index} is not on its core");
        }
    }

    env.close();
    assert_eq!(pool_threads(), vec![], "close() must join every pool thread");
}
