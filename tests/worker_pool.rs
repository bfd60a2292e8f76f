//! The vectorizer's thread pools: named threads, pinned when asked, the reset threads at the lowest
//! priority, all joined by `close`.
//! (One test in its own binary: other tests' pools would be counted too.)
#![cfg(target_os = "linux")]
mod common;

use std::fs;

use torchwm::atari::AtariConfig;
use torchwm::vector::{AtariVectorEnv, ResetAheadMode, VectorConfig};

/// `(name, allowed cores, nice)` of every thread of this process named `torchwm-*`.
fn pool_threads() -> Vec<(String, String, i32)> {
    let mut threads = Vec::new();
    for task in fs::read_dir("/proc/self/task").unwrap().flatten() {
        let name = fs::read_to_string(task.path().join("comm")).unwrap_or_default().trim().to_string();
        if !name.starts_with("torchwm-") {
            continue;
        }
        // Field 19 of /proc/<tid>/stat is the nice value; the fields after the `(comm)` start at 3.
        let stat = fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        let after_comm = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        let nice = after_comm.split_whitespace().nth(16).and_then(|n| n.parse().ok()).unwrap_or(i32::MIN);
        let status = fs::read_to_string(task.path().join("status")).unwrap_or_default();
        let cores = status
            .lines()
            .find_map(|line| line.strip_prefix("Cpus_allowed_list:"))
            .map(|cores| cores.trim().to_string())
            .unwrap_or_default();
        threads.push((name, cores, nice));
    }
    threads.sort();
    threads
}

fn process_nice() -> i32 {
    let stat = fs::read_to_string("/proc/self/stat").unwrap();
    stat.rsplit_once(')').unwrap().1.split_whitespace().nth(16).unwrap().parse().unwrap()
}

#[test]
fn pool_threads_are_named_pinned_and_joined_at_close() {
    let cores = core_affinity::get_core_ids().unwrap_or_default().len();
    let mut config = VectorConfig::new(common::rom("pong"), 4, AtariConfig::default());
    config.num_threads = 2;
    config.thread_affinity_offset = Some(1);
    config.reset_ahead = ResetAheadMode::Always;
    let mut env = AtariVectorEnv::new(config).unwrap();
    let threads = env.num_threads();
    env.reset(&[0, 1, 2, 3], &[Some(1); 4]).unwrap();
    env.step(&[0; 4], &[1.0; 4]).unwrap();

    let expected: Vec<String> =
        ["atari", "reset"].iter().flat_map(|pool| (0..threads).map(move |i| format!("torchwm-{pool}-{i}"))).collect();
    // A pool thread names, pins and (for resets) lowers itself when it starts running, which on a busy
    // machine can be after `step` returned: wait for all of them to have done so (the loop ends as soon
    // as they have; a minute only bounds a pool that never settles: with every core busy, a new thread
    // can wait seconds for its first time slice).
    let settled = |running: &[(String, String, i32)]| {
        running.iter().map(|(name, _, _)| name.as_str()).eq(expected.iter().map(String::as_str))
            && running.iter().all(|(name, _, nice)| !name.starts_with("torchwm-reset") || *nice == 19)
    };
    let mut running = pool_threads();
    for _ in 0..1200 {
        if settled(&running) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        running = pool_threads();
    }
    let names: Vec<&str> = running.iter().map(|(name, _, _)| name.as_str()).collect();
    assert_eq!(names, expected);
    for (name, allowed, nice) in &running {
        let index: usize = name.rsplit('-').next().unwrap().parse().unwrap();
        if cores > 0 {
            assert_eq!(allowed, &((1 + index) % cores).to_string(), "thread {name} is not on its core");
        }
        // Pool threads keep the process's priority; reset threads take the lowest (nice 19).
        let expected_nice = if name.starts_with("torchwm-reset") { 19 } else { process_nice() };
        assert_eq!(*nice, expected_nice, "thread {name}'s priority");
    }

    env.close();
    assert_eq!(pool_threads(), vec![], "close() must join every pool thread");
}
