//! Settings of a preprocessed Atari env; the same defaults and meanings as ale_py 0.12.1. Their
//! keywords, ranges and the one check are in `vector::settings`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObsFormat {
    Grayscale,
    Rgb,
}

impl ObsFormat {
    pub fn channels(self) -> usize {
        match self {
            ObsFormat::Grayscale => 1,
            ObsFormat::Rgb => 3,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct AtariConfig {
    pub img_height: usize,
    pub img_width: usize,
    pub obs_format: ObsFormat,
    pub stack_num: usize,
    pub frame_skip: u32,
    pub maxpool: bool,
    /// Resets take a uniform number of no-ops in `[0, noop_max - 1]` (ale_py's draw).
    pub noop_max: u32,
    pub use_fire_reset: bool,
    pub episodic_life: bool,
    pub life_loss_info: bool,
    pub reward_clipping: bool,
    /// Emulator frames per episode before truncation.
    pub max_episode_frames: u32,
    pub repeat_action_probability: f32,
    pub full_action_space: bool,
}

impl Default for AtariConfig {
    fn default() -> Self {
        Self {
            img_height: 84,
            img_width: 84,
            obs_format: ObsFormat::Grayscale,
            stack_num: 4,
            frame_skip: 4,
            maxpool: true,
            noop_max: 30,
            use_fire_reset: true,
            episodic_life: false,
            life_loss_info: false,
            reward_clipping: true,
            max_episode_frames: 108_000,
            repeat_action_probability: 0.0,
            full_action_space: false,
        }
    }
}

impl AtariConfig {
    /// Bytes of one processed frame.
    pub fn frame_size(&self) -> usize {
        self.img_height * self.img_width * self.obs_format.channels()
    }

    /// Bytes of one stacked observation.
    pub fn stacked_obs_size(&self) -> usize {
        self.frame_size() * self.stack_num
    }

    /// [`stacked_obs_size`](Self::stacked_obs_size) computed without overflow, for any settings
    /// (`VectorConfig::validate` decides with it whether the buffers fit before any is allocated).
    pub fn stacked_obs_bytes(&self) -> u128 {
        [self.img_height, self.img_width, self.obs_format.channels(), self.stack_num]
            .iter()
            .fold(1u128, |bytes, &factor| bytes.saturating_mul(factor as u128))
    }

    /// Whether the settings are within the ranges `VectorConfig::validate` enforces (for asserts).
    pub fn is_plausible(&self) -> bool {
        self.frame_size() > 0 && self.stack_num > 0 && self.frame_skip > 0 && self.max_episode_frames > 0
    }
}
