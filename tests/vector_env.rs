//! The Rust vectorizer: determinism across thread counts, async batches, protocol errors.
mod common;

use torchwm::atari::AtariConfig;
use torchwm::vector::{AtariVectorEnv, AutoresetMode, BatchResult, VectorConfig};
use torchwm::Error;

fn rollout(num_threads: usize, mode: AutoresetMode) -> Vec<BatchResult> {
    let rom = common::rom("breakout");
    let mut config = VectorConfig::new(rom, 4, AtariConfig { repeat_action_probability: 0.25, ..Default::default() });
    config.num_threads = num_threads;
    config.autoreset_mode = mode;
    let mut env = AtariVectorEnv::new(config).unwrap();
    let n = env.action_set().len() as i64;
    let mut batches = vec![env.reset(&[0, 1, 2, 3], &[Some(10), Some(11), Some(12), Some(13)]).unwrap()];
    for t in 0..200i64 {
        let actions: Vec<i64> = (0..4).map(|i| (t * 7 + i * 3) % n).collect();
        batches.push(env.step(&actions, &[1.0; 4]).unwrap());
    }
    batches
}

#[test]
fn trajectories_do_not_depend_on_thread_count() {
    for mode in [AutoresetMode::NextStep, AutoresetMode::SameStep] {
        let one = rollout(1, mode);
        let two = rollout(2, mode);
        assert!(one == two, "{mode:?}: 1 and 2 threads differ");
        assert_eq!(one[1].obs.len(), 4 * 4 * 84 * 84);
    }
}

#[test]
fn async_batches_return_first_ready_envs_and_every_env_is_served() {
    let rom = common::rom("pong");
    let mut config = VectorConfig::new(rom, 6, AtariConfig::default());
    config.batch_size = 2;
    let mut env = AtariVectorEnv::new(config).unwrap();
    let ids: Vec<usize> = (0..6).collect();
    let first = env.reset(&ids, &[None; 6]).unwrap();
    assert_eq!(first.batch_size(), 2);
    let mut served = vec![0usize; 6];
    let mut batch = first;
    for _ in 0..60 {
        for &id in &batch.env_ids {
            served[id as usize] += 1;
        }
        env.send(&[0, 1], &[1.0, 1.0]).unwrap();
        batch = env.recv().unwrap();
        let mut unique = batch.env_ids.clone();
        unique.dedup();
        assert_eq!(unique.len(), 2);
    }
    assert!(served.iter().all(|&count| count > 0), "{served:?}");
}

#[test]
fn protocol_errors_leave_the_env_usable() {
    let rom = common::rom("breakout");
    let mut env = AtariVectorEnv::new(VectorConfig::new(rom, 2, AtariConfig::default())).unwrap();
    assert!(matches!(env.recv(), Err(e) if e.is_state_error()));
    assert!(matches!(env.send(&[0, 0], &[1.0, 1.0]), Err(e) if e.is_state_error()));
    env.reset(&[0, 1], &[Some(1), Some(2)]).unwrap();
    assert!(matches!(env.recv(), Err(e) if e.is_state_error()));
    assert!(matches!(env.send(&[0, 99], &[1.0, 1.0]), Err(Error::InvalidArgument(_))));
    assert!(matches!(env.send(&[0], &[1.0]), Err(Error::InvalidArgument(_))));
    assert!(matches!(env.send(&[0, 1], &[f32::NAN, 1.0]), Err(Error::InvalidArgument(_))));
    env.send(&[0, 1], &[1.0, 1.0]).unwrap();
    assert!(matches!(env.send(&[0, 1], &[1.0, 1.0]), Err(e) if e.is_state_error()));
    assert_eq!(env.recv().unwrap().batch_size(), 2);
    assert!(matches!(env.reset(&[0, 0], &[None, None]), Err(Error::InvalidArgument(_))));
    assert!(matches!(env.reset(&[5], &[None]), Err(Error::InvalidArgument(_))));
    env.close();
    env.close();
    assert!(matches!(env.reset(&[0, 1], &[None, None]), Err(e) if e.is_state_error()));
}

#[test]
fn invalid_configs_are_rejected() {
    let rom = common::rom("breakout");
    let bad = |f: &dyn Fn(&mut VectorConfig)| {
        let mut config = VectorConfig::new(rom.clone(), 2, AtariConfig::default());
        f(&mut config);
        matches!(AtariVectorEnv::new(config), Err(Error::InvalidArgument(_)))
    };
    assert!(bad(&|c| c.num_envs = 0));
    assert!(bad(&|c| c.batch_size = 3));
    assert!(bad(&|c| c.env.frame_skip = 0));
    assert!(bad(&|c| c.env.stack_num = 0));
    assert!(bad(&|c| c.env.img_height = 0));
    assert!(bad(&|c| c.env.repeat_action_probability = 1.5));
}

/// `episode_statistics`: each ended episode's raw return and steps are the sums of the raw rewards
/// and steps reported since it began; rewards are those raw rewards clipped; off, no columns.
#[test]
fn episode_statistics_sum_the_raw_rewards_of_each_episode() {
    for mode in [AutoresetMode::NextStep, AutoresetMode::SameStep] {
        let rom = common::rom("breakout");
        let mut config = VectorConfig::new(rom, 2, AtariConfig { max_episode_frames: 400, ..Default::default() });
        config.autoreset_mode = mode;
        assert!(AtariVectorEnv::new(config.clone()).unwrap().reset(&[0, 1], &[None; 2]).unwrap().episodes.is_none());
        config.episode_statistics = true;
        let mut env = AtariVectorEnv::new(config).unwrap();
        env.reset(&[0, 1], &[Some(3), Some(4)]).unwrap();
        let (mut sums, mut steps, mut ended, mut restart) = ([0i64; 2], [0i64; 2], 0, [false; 2]);
        for t in 0..300i64 {
            let batch = env.step(&[t % 4, (t + 1) % 4], &[1.0; 2]).unwrap();
            let columns = batch.episodes.as_ref().unwrap();
            for row in 0..2 {
                let raw = columns.raw_rewards[row];
                assert_eq!(batch.rewards[row], raw.clamp(-1, 1));
                // Next-step mode spends a step on the reset; it belongs to no episode.
                if std::mem::take(&mut restart[row]) && mode == AutoresetMode::NextStep {
                    assert_eq!(raw, 0);
                    continue;
                }
                sums[row] += i64::from(raw);
                steps[row] += 1;
                let done = batch.terminations[row] || batch.truncations[row];
                assert_eq!(columns.ended[row], done, "no lives mode: every end is an episode's");
                if done {
                    assert_eq!((columns.returns[row], columns.lengths[row]), (sums[row] as f64, steps[row]));
                    (sums[row], steps[row], restart[row]) = (0, 0, true);
                    ended += 1;
                } else {
                    assert_eq!((columns.returns[row], columns.lengths[row], columns.frames[row]), (0.0, 0, 0));
                }
            }
        }
        assert!(ended >= 2, "{mode:?}: {ended}");
    }
}

#[test]
fn an_env_with_settings_out_of_range_is_an_error_not_a_panic() {
    use torchwm::atari::AtariEnv;
    let rom = common::rom("pong");
    for config in [
        AtariConfig { stack_num: 0, ..Default::default() },
        AtariConfig { img_height: 0, ..Default::default() },
        AtariConfig { frame_skip: 0, ..Default::default() },
        AtariConfig { noop_max: 200_000, ..Default::default() },
        AtariConfig { repeat_action_probability: 1.5, ..Default::default() },
    ] {
        match AtariEnv::new(&rom, &config, Some(0)) {
            Err(Error::InvalidArgument(message)) => assert!(message.contains("must be"), "{message}"),
            other => panic!("{config:?}: expected InvalidArgument, got {:?}", other.map(|_| ())),
        }
    }
    let message = AtariEnv::new(&rom, &AtariConfig { stack_num: 0, ..Default::default() }, None).err().unwrap();
    assert_eq!(message.to_string(), "stack_num must be an integer in [1, 2147483647], got 0");
}
