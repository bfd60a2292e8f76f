//! Settings given one value per env (torchwm's own): the game mode, difficulty and sticky-action
//! probability, which leave every env's observation shape as it is. The game itself is chosen per env
//! by [`VectorConfig::roms`](super::VectorConfig::roms).
use crate::atari::AtariConfig;
use crate::error::{Error, Result};

/// For each setting, `None` (all envs take the scalar in `VectorConfig::env`) or one value per env.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PerEnvSettings {
    pub mode: Option<Vec<Option<u32>>>,
    pub difficulty: Option<Vec<Option<u32>>>,
    pub repeat_action_probability: Option<Vec<f32>>,
}

impl PerEnvSettings {
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }

    /// Env `env_id`'s values over `config`.
    pub fn apply(&self, env_id: usize, config: &mut AtariConfig) {
        if let Some(modes) = &self.mode {
            config.mode = modes[env_id];
        }
        if let Some(difficulties) = &self.difficulty {
            config.difficulty = difficulties[env_id];
        }
        if let Some(probabilities) = &self.repeat_action_probability {
            config.repeat_action_probability = probabilities[env_id];
        }
    }

    /// Each list has one value per env.
    pub fn check_lengths(&self, num_envs: usize) -> Result<()> {
        let lengths = [
            ("mode", self.mode.as_ref().map(Vec::len)),
            ("difficulty", self.difficulty.as_ref().map(Vec::len)),
            ("repeat_action_probability", self.repeat_action_probability.as_ref().map(Vec::len)),
        ];
        for (name, length) in lengths {
            if let Some(length) = length.filter(|&length| length != num_envs) {
                return Err(Error::InvalidArgument(format!(
                    "{name} must be one value or one per env: got {length} values for num_envs={num_envs}"
                )));
            }
        }
        Ok(())
    }
}
