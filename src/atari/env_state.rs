//! `AtariEnvState`: everything that makes an [`AtariEnv`]'s next step what it would have been (the
//! emulator with its RNG, the noop RNG, the max-pool frames, the frame stack, the episode's counters),
//! as a plain value that [`AtariEnv::save_state`] takes and [`AtariEnv::restore_state`] puts back.
//! `vector::saved_state` turns it into bytes.
use serde::{Deserialize, Serialize};

use super::env::{AtariEnv, Ram};
use crate::ale::{EmulatorState, RAM_SIZE};

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

impl AtariEnvState {
    /// Whether the buffers have the sizes of `env`'s: a state decoded from bytes is checked with this
    /// before it is restored (its settings were checked equal, so only damage could make them differ).
    pub(crate) fn fits(&self, env: &AtariEnv) -> bool {
        let raw = self.raw_frames[0].len();
        let e = &self.emulator;
        env.state_sizes() == (raw, self.pooled.len(), self.stack.0.len())
            && self.raw_frames[1].len() == raw
            && env.screen_dims().is_ok_and(|(h, w)| e.current_frame.len() == h * w)
            && e.previous_frame.len() == e.current_frame.len()
            && self.stack.1 < env.stack_num()
            && self.action_index < env.action_set().len()
            && self.paddle_strength.is_finite()
    }
}

impl Serialize for Ram {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        self.0.as_slice().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Ram {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let bytes = Vec::<u8>::deserialize(deserializer)?;
        let ram: [u8; RAM_SIZE] = bytes
            .try_into()
            .map_err(|bytes: Vec<u8>| serde::de::Error::invalid_length(bytes.len(), &"128 bytes of RAM"))?;
        Ok(Ram(ram))
    }
}
