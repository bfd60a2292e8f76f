//! `AtariEnvState`: everything that makes an [`AtariEnv`]'s next step what it would have been (the
//! emulator with its RNG, the noop RNG, the max-pool frames, the frame stack, the episode's counters),
//! as a plain value that `AtariEnv::save_state` takes and `AtariEnv::restore_state` puts back (after
//! [`AtariEnv::fits`](super::AtariEnv::fits) checked its sizes). `vector::saved_state` turns it into bytes.
use serde::{Deserialize, Serialize};

use crate::ale::EmulatorState;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AtariEnvState {
    pub(super) emulator: EmulatorState,
    pub(super) noop_rng: (u32, u64),
    pub(super) raw_frames: [Vec<u8>; 2],
    pub(super) pooled: Vec<u8>,
    pub(super) pooler_flags: (bool, bool),
    pub(super) stack: (Vec<u8>, usize),
    pub(super) elapsed_frames: u32,
    pub(super) game_over: bool,
    pub(super) lives: i32,
    pub(super) was_life_lost: bool,
    pub(super) reward: i32,
    pub(super) raw_reward: i32,
    pub(super) raw_return: i64,
    pub(super) episode_steps: u32,
    pub(super) action_index: usize,
    pub(super) paddle_strength: f32,
    pub(super) pending_seed: Option<u32>,
}
