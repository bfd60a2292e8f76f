//! Settings of a preprocessed Atari env; the same defaults and meanings as ale_py 0.12.1, their
//! ranges, and their check ([`AtariConfig::validate`]). `vector::settings` gives them their keywords.
use std::fmt::Display;
use std::ops::RangeInclusive;

use crate::ale::RAM_SIZE;
use crate::error::{Error, Result};

/// ALE stores counts in a C `int`.
pub const INT_MAX: i64 = i32::MAX as i64;
/// The observation's height and width, in pixels.
pub const IMAGE_SIDE: RangeInclusive<i64> = 1..=4096;
pub const POSITIVE: RangeInclusive<i64> = 1..=INT_MAX;
pub const NON_NEGATIVE: RangeInclusive<i64> = 0..=INT_MAX;
pub const PROBABILITY: RangeInclusive<f64> = 0.0..=1.0;

/// The error for `name`'s `value` outside `range` (the settings table words its own the same way).
pub fn out_of_range<T: Display>(name: &str, range: &RangeInclusive<T>, value: impl Display, what: &str) -> Error {
    Error::InvalidArgument(format!("{name} must be {what} in [{}, {}], got {value}", range.start(), range.end()))
}

/// Checks that the integer `value` of setting `name` is in `range`.
pub fn check_int(name: &str, value: impl TryInto<i64> + Display + Copy, range: &RangeInclusive<i64>) -> Result<()> {
    match value.try_into() {
        Ok(v) if range.contains(&v) => Ok(()),
        _ => Err(out_of_range(name, range, value, "an integer")),
    }
}
/// What an observation's frames are: the screen (grayscale or RGB, preprocessed), or the RAM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObsFormat {
    Grayscale,
    Rgb,
    /// The console's 128 bytes of RAM after each step (ale_py's `obs_type="ram"`).
    Ram,
}

impl ObsFormat {
    /// The names of the `obs_type` keyword, in the order of ale_py's `AtariEnv`.
    pub const NAMES: [(&'static str, ObsFormat); 3] =
        [("rgb", ObsFormat::Rgb), ("grayscale", ObsFormat::Grayscale), ("ram", ObsFormat::Ram)];

    pub fn name(self) -> &'static str {
        Self::NAMES.iter().find(|(_, format)| *format == self).map_or("?", |(name, _)| name)
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
    /// The game mode and difficulty (`None`: the ROM's defaults); checked against the ROM's own when
    /// it is loaded, as ale_py's `AtariEnv(mode=, difficulty=)` checks them.
    pub mode: Option<u32>,
    pub difficulty: Option<u32>,
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
            mode: None,
            difficulty: None,
        }
    }
}

impl AtariConfig {
    /// The shape of one processed frame: `(img_height, img_width)` grayscale, `(img_height, img_width,
    /// 3)` RGB, `(128,)` RAM.
    pub fn frame_shape(&self) -> Vec<usize> {
        match self.obs_format {
            ObsFormat::Grayscale => vec![self.img_height, self.img_width],
            ObsFormat::Rgb => vec![self.img_height, self.img_width, 3],
            ObsFormat::Ram => vec![RAM_SIZE],
        }
    }

    /// The shape of one stacked observation: `stack_num`, then [`frame_shape`](Self::frame_shape).
    pub fn obs_shape(&self) -> Vec<usize> {
        std::iter::once(self.stack_num).chain(self.frame_shape()).collect()
    }

    /// Bytes of one processed frame.
    pub fn frame_size(&self) -> usize {
        self.frame_shape().iter().product()
    }

    /// Bytes of one stacked observation.
    pub fn stacked_obs_size(&self) -> usize {
        self.frame_size() * self.stack_num
    }

    /// [`stacked_obs_size`](Self::stacked_obs_size) computed without overflow, for any settings
    /// (`VectorConfig::validate` decides with it whether the buffers fit before any is allocated).
    pub fn stacked_obs_bytes(&self) -> u128 {
        self.obs_shape().iter().fold(1u128, |bytes, &factor| bytes.saturating_mul(factor as u128))
    }

    /// The one check of these settings: each in its range, then those that bound each other.
    pub fn validate(&self) -> Result<()> {
        check_int("img_height", self.img_height, &IMAGE_SIDE)?;
        check_int("img_width", self.img_width, &IMAGE_SIDE)?;
        check_int("stack_num", self.stack_num, &POSITIVE)?;
        check_int("frameskip", self.frame_skip, &POSITIVE)?;
        check_int("noop_max", self.noop_max, &NON_NEGATIVE)?;
        check_int("max_num_frames_per_episode", self.max_episode_frames, &POSITIVE)?;
        if let Some(mode) = self.mode {
            check_int("mode", mode, &NON_NEGATIVE)?;
        }
        if let Some(difficulty) = self.difficulty {
            check_int("difficulty", difficulty, &NON_NEGATIVE)?;
        }
        let sticky = self.repeat_action_probability;
        if !PROBABILITY.contains(&f64::from(sticky)) {
            return Err(out_of_range("repeat_action_probability", &PROBABILITY, sticky, "a number"));
        }
        let max_frames = self.max_episode_frames;
        // Beyond the episode's frame limit these mean nothing (every step or reset would end the
        // episode), and they bound how long one step or reset can run.
        for (name, value) in [("frameskip", self.frame_skip), ("noop_max", self.noop_max)] {
            if value > max_frames {
                return Err(Error::InvalidArgument(format!(
                    "{name} must be at most max_num_frames_per_episode={max_frames}, got {value}"
                )));
            }
        }
        Ok(())
    }
}
