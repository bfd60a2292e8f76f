//! `AtariEnv`: one emulator plus frameskip, max-pool, grayscale/RGB, resize, frame stack, noop and
//! fire reset, episodic life, reward clipping and the frame limit.
//!
//! The order of emulator calls and random draws follows ale_py 0.12.1's `PreprocessedEnv` exactly,
//! so the same seed gives the same trajectory as ale_py's `AtariVectorEnv`, quirks included (for
//! example, frames from before an early episode end stay in the max-pool buffers).
use std::path::{Path, PathBuf};

use super::config::{AtariConfig, ObsFormat};
use super::env_state::AtariEnvState;
use super::ram::Ram;
use crate::ale::{Ale, NoopRng, ACTION_FIRE, ACTION_NOOP, RAM_SIZE};
use crate::error::{Error, Result};
use crate::preprocess::{FramePooler, FrameStack, Resizer};

/// An episode that a step ended: game over, the frame limit, or (under `episodic_life`) a lost life,
/// after which ale_py 0.12.1's reset starts a new game. Not a life lost under `life_loss_info` alone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EpisodeStats {
    /// Sum of the unclipped rewards of its steps.
    pub raw_return: i64,
    /// Agent steps.
    pub steps: u32,
    /// Emulator frames its steps ran (what `max_episode_frames` limits; the reset's no-ops excluded).
    pub frames: u32,
}

/// Scalars of one env after a step or reset, as reported in a batch, and its RAM then.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StepOutput {
    pub reward: i32,
    /// The step's reward before clipping (0 after a reset).
    pub raw_reward: i32,
    /// The episode this step ended, if it ended one.
    pub episode: Option<EpisodeStats>,
    pub terminated: bool,
    pub truncated: bool,
    pub lives: i32,
    pub frame_number: i32,
    pub episode_frame_number: i32,
    /// Read with the rest (an FFI call and 128 bytes), so it stays the step's when a reset runs ahead.
    pub ram: Ram,
}

/// The last two captured raw frames (palette indices), and what turns them into an observation frame.
struct Pixels {
    /// `[0]` the newest, `[1]` the one before.
    raw_frames: [Vec<u8>; 2],
    /// Turns them into the pooled grayscale or RGB frame.
    pooler: FramePooler,
    resizer: Resizer,
}

impl Pixels {
    fn new(ale: &Ale, config: &AtariConfig) -> Result<Self> {
        let (raw_h, raw_w) = ale.screen_dims()?;
        let (palette, channels) = match config.obs_format {
            ObsFormat::Rgb => (ale.rgb_palette()?, 3),
            _ => (ale.grayscale_palette()?, 1),
        };
        Ok(Self {
            raw_frames: [vec![0; raw_h * raw_w], vec![0; raw_h * raw_w]],
            pooler: FramePooler::new(palette, channels, raw_h, raw_w),
            resizer: Resizer::new(raw_h, raw_w, config.img_height, config.img_width, channels),
        })
    }
}

pub struct AtariEnv {
    ale: Ale,
    rom_path: PathBuf,
    config: AtariConfig,
    action_set: Vec<i32>,
    minimal_action_set: Vec<i32>,
    has_fire_action: bool,
    noop_rng: NoopRng,
    /// Screen observations' pipeline; `None` for RAM observations.
    pixels: Option<Pixels>,
    stack: FrameStack,
    elapsed_frames: u32,
    game_over: bool,
    lives: i32,
    was_life_lost: bool,
    reward: i32,
    /// The last step's unclipped reward, and the episode's sum of them and steps so far.
    raw_reward: i32,
    raw_return: i64,
    episode_steps: u32,
    action_index: usize,
    paddle_strength: f32,
    pending_seed: Option<u32>,
}

/// `seed` as ALE's `random_seed` setting, a C `int` (ale_py's seeds are in `[0, 2**31)` too).
fn ale_seed(seed: u32) -> Result<i32> {
    i32::try_from(seed).map_err(|_| Error::InvalidArgument(format!("seeds must be in [0, 2**31), got {seed}")))
}

/// Sets the configured game mode and difficulty on a freshly loaded ROM (they take effect at the next
/// `reset_game`, as ale_py's `AtariEnv` sets them); a value the ROM does not have is an error naming
/// the game and the values it has.
fn apply_mode_and_difficulty(ale: &mut Ale, config: &AtariConfig, rom_path: &Path) -> Result<()> {
    let game = rom_path.file_stem().map_or_else(|| rom_path.display().to_string(), |s| s.to_string_lossy().into());
    if let Some(mode) = config.mode {
        check_available("mode", mode, &ale.available_modes()?, &game)?;
        ale.set_mode(mode)?;
    }
    if let Some(difficulty) = config.difficulty {
        check_available("difficulty", difficulty, &ale.available_difficulties()?, &game)?;
        ale.set_difficulty(difficulty)?;
    }
    Ok(())
}

/// `value` of the setting `name` must be one of the ROM's `available` values; the error names the game.
fn check_available(name: &str, value: u32, available: &[u32], game: &str) -> Result<()> {
    if available.contains(&value) {
        return Ok(());
    }
    Err(Error::InvalidArgument(format!(
        "{name}={value} is not a {name} of {game}; its available {} are {available:?}",
        if name == "mode" { "modes" } else { "difficulties" }
    )))
}

/// A seed from the OS when the caller gives none (ale_py uses std::random_device).
fn entropy_seed() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64),
    );
    hasher.finish() as u32
}

impl AtariEnv {
    /// Builds the env and loads the ROM. `seed` seeds ALE and the noop draws; `None` means random.
    pub fn new(rom_path: &Path, config: &AtariConfig, seed: Option<u32>) -> Result<Self> {
        config.validate()?;
        let mut ale = Ale::new()?;
        ale.set_float("repeat_action_probability", config.repeat_action_probability)?;
        // ALE reads -1 as "seed from the clock".
        ale.set_int("random_seed", seed.map_or(Ok(-1), ale_seed)?)?;
        ale.load_rom(rom_path)?;
        apply_mode_and_difficulty(&mut ale, config, rom_path)?;
        let minimal_action_set = ale.minimal_action_set()?;
        let action_set = if config.full_action_space { ale.legal_action_set()? } else { minimal_action_set.clone() };
        let has_fire_action = action_set.contains(&ACTION_FIRE);
        let pixels = if config.obs_format == ObsFormat::Ram { None } else { Some(Pixels::new(&ale, config)?) };
        Ok(Self {
            ale,
            rom_path: rom_path.to_path_buf(),
            config: config.clone(),
            action_set,
            minimal_action_set,
            has_fire_action,
            noop_rng: NoopRng::new(seed.unwrap_or_else(entropy_seed)),
            pixels,
            stack: FrameStack::new(config.stack_num, config.frame_size()),
            elapsed_frames: config.max_episode_frames + 1,
            game_over: false,
            lives: 0,
            was_life_lost: false,
            reward: 0,
            raw_reward: 0,
            raw_return: 0,
            episode_steps: 0,
            action_index: 0,
            paddle_strength: 1.0,
            pending_seed: None,
        })
    }

    /// ALE action ids this env's action indices map to (minimal or full set).
    pub fn action_set(&self) -> &[i32] {
        &self.action_set
    }

    /// The game's minimal action set (ALE ids), whichever set the actions index.
    pub fn minimal_action_set(&self) -> &[i32] {
        &self.minimal_action_set
    }

    pub fn config(&self) -> &AtariConfig {
        &self.config
    }

    /// Seed to apply at the next reset (reloading the ROM, as ale_py does); `None` keeps the RNG state.
    pub fn set_seed(&mut self, seed: Option<u32>) {
        self.pending_seed = seed;
    }

    /// Action for the next step: an index into [`action_set`](Self::action_set) (checked by the
    /// vectorizer's `send`).
    pub fn set_action(&mut self, action_index: usize, paddle_strength: f32) {
        debug_assert!(action_index < self.action_set.len() && paddle_strength.is_finite());
        self.action_index = action_index;
        self.paddle_strength = paddle_strength;
    }

    pub fn reset(&mut self) -> Result<()> {
        if let Some(seed) = self.pending_seed.take() {
            self.ale.set_int("random_seed", ale_seed(seed)?)?;
            self.noop_rng.seed(seed);
            self.ale.load_rom(&self.rom_path)?;
            // Loading the ROM restores its default mode and difficulty, as in ale_py's AtariEnv.seed().
            apply_mode_and_difficulty(&mut self.ale, &self.config, &self.rom_path)?;
        }
        self.ale.reset_game()?;
        let fire = self.config.use_fire_reset && self.has_fire_action;
        if fire {
            self.ale.act(ACTION_FIRE, 1.0)?;
        }
        let noop_high = i32::try_from(self.config.noop_max.saturating_sub(1)).unwrap_or(i32::MAX);
        let mut noops = self.noop_rng.uniform(0, noop_high) - fire as i32;
        while noops > 0 {
            self.ale.act(ACTION_NOOP, 1.0)?;
            if self.ale.game_over(true)? {
                self.ale.reset_game()?;
            }
            noops -= 1;
        }
        self.stack.clear();
        self.capture_screen(0)?;
        if let Some(pixels) = &mut self.pixels {
            pixels.pooler.reset();
        }
        self.process_screen()?;
        self.elapsed_frames = 0;
        self.reward = 0;
        self.raw_reward = 0;
        self.raw_return = 0;
        self.episode_steps = 0;
        self.game_over = false;
        self.lives = self.ale.lives()?;
        self.was_life_lost = false;
        self.action_index = 0;
        Ok(())
    }

    pub fn step(&mut self) -> Result<()> {
        let action = self.action_set[self.action_index];
        let strength = self.paddle_strength;
        let mut reward = 0i32;
        for skip in (1..=self.config.frame_skip).rev() {
            reward = reward.saturating_add(self.ale.act(action, strength)?);
            self.game_over = self.ale.game_over(true)?;
            self.elapsed_frames += 1;
            let lives = self.ale.lives()?;
            self.was_life_lost = lives < self.lives && lives > 0;
            if self.game_over
                || self.elapsed_frames >= self.config.max_episode_frames
                || (self.config.episodic_life && self.was_life_lost)
            {
                break;
            }
            if skip <= 2 {
                self.capture_screen(skip as usize - 1)?;
            }
        }
        self.process_screen()?;
        self.lives = self.ale.lives()?;
        self.reward = if self.config.reward_clipping { reward.clamp(-1, 1) } else { reward };
        self.raw_reward = reward;
        self.raw_return = self.raw_return.saturating_add(reward.into());
        self.episode_steps = self.episode_steps.saturating_add(1);
        Ok(())
    }

    /// Whether the next step must reset instead (game over, frame limit, or a life lost in episodic mode).
    pub fn is_episode_over(&self) -> bool {
        self.game_over
            || self.elapsed_frames >= self.config.max_episode_frames
            || (self.config.episodic_life && self.was_life_lost)
    }

    pub fn output(&self) -> Result<StepOutput> {
        let terminated =
            self.game_over || ((self.config.life_loss_info || self.config.episodic_life) && self.was_life_lost);
        let episode = self.is_episode_over().then_some(EpisodeStats {
            raw_return: self.raw_return,
            steps: self.episode_steps,
            frames: self.elapsed_frames,
        });
        Ok(StepOutput {
            reward: self.reward,
            raw_reward: self.raw_reward,
            episode,
            terminated,
            truncated: self.elapsed_frames >= self.config.max_episode_frames && !terminated,
            lives: self.lives,
            frame_number: self.ale.frame_number()?,
            episode_frame_number: self.ale.episode_frame_number()?,
            ram: {
                let mut ram = Ram::default();
                self.ale.ram_into(&mut ram.0)?;
                ram
            },
        })
    }

    /// `(height, width)` of the emulator screen that [`render_rgb_into`](Self::render_rgb_into) writes.
    pub fn screen_dims(&self) -> Result<(usize, usize)> {
        self.ale.screen_dims()
    }

    /// The current screen in full-resolution RGB, `height * width * 3` bytes (ale_py's `render()`).
    pub fn render_rgb_into(&self, dst: &mut [u8]) -> Result<()> {
        self.ale.screen_rgb_into(dst)
    }

    /// Bytes of one stacked observation.
    pub fn stacked_obs_size(&self) -> usize {
        self.stack.stacked_size()
    }

    /// Writes the stacked observation, oldest frame first, into `dst`.
    pub fn write_obs(&self, dst: &mut [u8]) {
        self.stack.write_linear(dst);
    }

    /// Everything that makes the next step what it would have been (see [`AtariEnvState`]).
    pub fn save_state(&mut self) -> Result<AtariEnvState> {
        Ok(AtariEnvState {
            emulator: self.ale.save_emulator()?,
            noop_rng: self.noop_rng.position(),
            raw_frames: self.pixels.as_ref().map_or_else(Default::default, |p| p.raw_frames.clone()),
            pooled: self.pixels.as_ref().map_or_else(Vec::new, |p| p.pooler.pooled().to_vec()),
            pooler_flags: self.pixels.as_ref().map_or((false, false), |p| p.pooler.flags()),
            stack: (self.stack.frames().to_vec(), self.stack.next_index()),
            elapsed_frames: self.elapsed_frames,
            game_over: self.game_over,
            lives: self.lives,
            was_life_lost: self.was_life_lost,
            reward: self.reward,
            raw_reward: self.raw_reward,
            raw_return: self.raw_return,
            episode_steps: self.episode_steps,
            action_index: self.action_index,
            paddle_strength: self.paddle_strength,
            pending_seed: self.pending_seed,
        })
    }

    /// Whether `state`'s buffers have this env's sizes: a state decoded from bytes is checked with this
    /// before it is restored (its settings were checked equal, so only damage could make them differ).
    pub fn fits(&self, state: &AtariEnvState) -> bool {
        let raw = state.raw_frames[0].len();
        let e = &state.emulator;
        self.state_sizes() == (raw, state.pooled.len(), state.stack.0.len())
            && state.raw_frames[1].len() == raw
            && self.screen_dims().is_ok_and(|(h, w)| e.current_frame.len() == h * w)
            && e.previous_frame.len() == e.current_frame.len()
            && state.stack.1 < self.stack.stack_num()
            && state.action_index < self.action_set().len()
            && state.paddle_strength.is_finite()
    }

    /// Puts back a state saved from an env of the same game and settings, whose sizes
    /// [`fits`](Self::fits) checked.
    pub fn restore_state(&mut self, state: &AtariEnvState) -> Result<()> {
        debug_assert!(self.fits(state), "the caller checks the state's sizes");
        self.ale.restore_emulator(&state.emulator)?;
        self.noop_rng.restore_position(state.noop_rng);
        if let Some(pixels) = &mut self.pixels {
            pixels.raw_frames.clone_from(&state.raw_frames);
            pixels.pooler.restore(&state.pooled, state.pooler_flags);
        }
        self.stack.restore(&state.stack.0, state.stack.1);
        self.elapsed_frames = state.elapsed_frames;
        self.game_over = state.game_over;
        self.lives = state.lives;
        self.was_life_lost = state.was_life_lost;
        self.reward = state.reward;
        self.raw_reward = state.raw_reward;
        self.raw_return = state.raw_return;
        self.episode_steps = state.episode_steps;
        self.action_index = state.action_index;
        self.paddle_strength = state.paddle_strength;
        self.pending_seed = state.pending_seed;
        Ok(())
    }

    /// `(raw frame, pooled frame, frame stack)` sizes in bytes, which a restored state must have.
    fn state_sizes(&self) -> (usize, usize, usize) {
        let (raw, pooled) = self.pixels.as_ref().map_or((0, 0), |p| (p.raw_frames[0].len(), p.pooler.pooled().len()));
        (raw, pooled, self.stack.frames().len())
    }

    fn capture_screen(&mut self, index: usize) -> Result<()> {
        if let Some(pixels) = &mut self.pixels {
            self.ale.screen_raw_into(&mut pixels.raw_frames[index])?;
            pixels.pooler.captured(index);
        }
        Ok(())
    }

    /// The next frame of the stack: the pooled, resized screen, or the RAM.
    fn process_screen(&mut self) -> Result<()> {
        let slot = self.stack.next_slot();
        match &mut self.pixels {
            Some(Pixels { raw_frames: [newest, previous], pooler, resizer }) => {
                let (frame, changed_rows) = pooler.pool(newest, previous, self.config.maxpool);
                resizer.resize_changed_rows(frame, changed_rows, slot);
            }
            None => {
                let ram: &mut [u8; RAM_SIZE] = slot.try_into().expect("a RAM frame is RAM_SIZE bytes");
                self.ale.ram_into(ram)?;
            }
        }
        self.stack.advance();
        Ok(())
    }
}
