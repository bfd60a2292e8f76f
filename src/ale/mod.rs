//! A safe Atari emulator: one `ale::ALEInterface` behind the FFI handle, with argument checks that
//! turn would-be crashes (missing ROM, unknown action id, empty buffers) into typed errors.
use std::path::{Path, PathBuf};
use std::sync::Once;

use crate::error::{Error, Result};
use crate::ffi::{self, c_string, RawAle, RawState, StickyActions};

mod noop_rng;
pub(crate) use noop_rng::NoopRng;

/// The ALE release compiled in: the `ale-py==X` pin of pyproject.toml (see build.rs).
pub const ALE_VERSION: &str = env!("TORCHWM_ALE_VERSION");

/// Number of single-player actions (`PLAYER_A_NOOP` .. `PLAYER_A_DOWNLEFTFIRE`).
pub const NUM_ACTIONS: i32 = 18;
pub const ACTION_NOOP: i32 = 0;
pub const ACTION_FIRE: i32 = 1;
/// Bytes of the console's RAM.
pub const RAM_SIZE: usize = 128;

/// The grayscale value or the RGB colour of each palette index (raw screen byte), as ALE's
/// `getScreenGrayscale` / `getScreenRGB` map it (a grayscale table repeats its value in all three).
pub type Palette = [[u8; 3]; 256];

static QUIET_LOGGER: Once = Once::new();

/// ALE's log level. ALE logs to stderr; by default torchwm keeps only errors, as ale_py's vectorizer does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    Info = 0,
    Warning = 1,
    Error = 2,
}

pub fn set_log_level(level: LogLevel) -> Result<()> {
    QUIET_LOGGER.call_once(|| {});
    ffi::set_logger_mode(level as i32)
}

/// Whether `path` is a ROM that ALE recognises (by MD5).
pub fn is_supported_rom(path: &Path) -> Result<bool> {
    if !path.is_file() {
        return Err(Error::RomNotFound(path.display().to_string()));
    }
    ffi::rom_is_supported(&c_string("ROM path", &path.to_string_lossy())?)
}

/// All of an emulator's state that a saved env needs: ALE's own (`cloneState(include_rng=true)`,
/// serialized as ale_py pickles it) and what that leaves out, the actions that sticky actions repeat
/// and the screen-sized start of the TIA's two frame buffers.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EmulatorState {
    pub ale_state: Vec<u8>,
    /// Players A and B: the action (ALE id) and paddle strength sticky actions repeat.
    pub sticky_actions: [(i32, f32); 2],
    pub current_frame: Vec<u8>,
    pub previous_frame: Vec<u8>,
}

/// One emulator. Not `Sync`: it is stepped by one thread at a time (it is `Send`).
pub struct Ale {
    raw: RawAle,
    rom: Option<PathBuf>,
}

/// A saved emulator state, to restore later into the same game.
pub struct AleState {
    raw: RawState,
}

impl Ale {
    pub fn new() -> Result<Self> {
        QUIET_LOGGER.call_once(|| {
            let _ = ffi::set_logger_mode(LogLevel::Error as i32);
        });
        Ok(Self { raw: RawAle::new()?, rom: None })
    }

    pub fn set_int(&mut self, key: &str, value: i32) -> Result<()> {
        self.raw.set_int(&c_string("setting name", key)?, value)
    }
    pub fn set_float(&mut self, key: &str, value: f32) -> Result<()> {
        self.raw.set_float(&c_string("setting name", key)?, value)
    }
    pub fn set_bool(&mut self, key: &str, value: bool) -> Result<()> {
        self.raw.set_bool(&c_string("setting name", key)?, value)
    }
    pub fn set_string(&mut self, key: &str, value: &str) -> Result<()> {
        self.raw.set_string(&c_string("setting name", key)?, &c_string("setting value", value)?)
    }
    pub fn get_int(&self, key: &str) -> Result<i32> {
        self.raw.get_int(&c_string("setting name", key)?)
    }
    pub fn get_float(&self, key: &str) -> Result<f32> {
        self.raw.get_float(&c_string("setting name", key)?)
    }
    pub fn get_bool(&self, key: &str) -> Result<bool> {
        self.raw.get_bool(&c_string("setting name", key)?)
    }
    pub fn get_string(&self, key: &str) -> Result<String> {
        self.raw.get_string(&c_string("setting name", key)?)
    }

    /// Loads (or reloads, applying changed settings such as `random_seed`) a ROM file.
    pub fn load_rom(&mut self, path: &Path) -> Result<()> {
        if !is_supported_rom(path)? {
            return Err(Error::UnsupportedRom(path.display().to_string()));
        }
        self.raw.load_rom(&c_string("ROM path", &path.to_string_lossy())?)?;
        self.rom = Some(path.to_path_buf());
        Ok(())
    }

    /// The ROM loaded last, if any.
    pub fn rom_path(&self) -> Option<&Path> {
        self.rom.as_deref()
    }

    /// Applies an action (an ALE action id in `0..18`, not an index into an action set) for one frame.
    pub fn act(&mut self, action: i32, paddle_strength: f32) -> Result<i32> {
        if !(0..NUM_ACTIONS).contains(&action) {
            return Err(Error::InvalidArgument(format!(
                "action must be an ALE action id in [0, {NUM_ACTIONS}), got {action}"
            )));
        }
        if !paddle_strength.is_finite() {
            return Err(Error::InvalidArgument(format!("paddle_strength must be finite, got {paddle_strength}")));
        }
        self.raw.act(action, paddle_strength)
    }

    pub fn reset_game(&mut self) -> Result<()> {
        self.raw.reset_game()
    }
    pub fn game_over(&self, with_truncation: bool) -> Result<bool> {
        self.raw.game_over(with_truncation)
    }
    pub fn game_truncated(&self) -> Result<bool> {
        self.raw.game_truncated()
    }
    pub fn lives(&mut self) -> Result<i32> {
        self.raw.lives()
    }
    pub fn frame_number(&self) -> Result<i32> {
        self.raw.frame_number()
    }
    pub fn episode_frame_number(&self) -> Result<i32> {
        self.raw.episode_frame_number()
    }
    pub fn minimal_action_set(&self) -> Result<Vec<i32>> {
        self.raw.minimal_action_set()
    }
    pub fn legal_action_set(&self) -> Result<Vec<i32>> {
        self.raw.legal_action_set()
    }
    pub fn available_modes(&self) -> Result<Vec<u32>> {
        self.raw.available_modes()
    }
    pub fn available_difficulties(&self) -> Result<Vec<u32>> {
        self.raw.available_difficulties()
    }
    pub fn set_mode(&mut self, mode: u32) -> Result<()> {
        if !self.available_modes()?.contains(&mode) {
            return Err(Error::InvalidArgument(format!("mode {mode} is not one of {:?}", self.available_modes()?)));
        }
        self.raw.set_mode(mode)
    }
    pub fn mode(&self) -> Result<u32> {
        self.raw.mode()
    }
    pub fn set_difficulty(&mut self, difficulty: u32) -> Result<()> {
        let available = self.available_difficulties()?;
        if !available.contains(&difficulty) {
            return Err(Error::InvalidArgument(format!("difficulty {difficulty} is not one of {available:?}")));
        }
        self.raw.set_difficulty(difficulty)
    }
    pub fn difficulty(&self) -> Result<u32> {
        self.raw.difficulty()
    }

    /// `(height, width)` of the screen (210 x 160 for every supported game).
    pub fn screen_dims(&self) -> Result<(usize, usize)> {
        self.raw.screen_dims()
    }
    /// Raw palette indices, `height * width` bytes.
    pub fn screen_raw_into(&self, buf: &mut [u8]) -> Result<()> {
        self.raw.screen_raw(buf)
    }
    /// ALE's grayscale palette, `height * width` bytes.
    pub fn screen_grayscale_into(&self, buf: &mut [u8]) -> Result<()> {
        self.raw.screen_grayscale(buf)
    }
    /// RGB, row-major `height * width * 3` bytes.
    pub fn screen_rgb_into(&self, buf: &mut [u8]) -> Result<()> {
        self.raw.screen_rgb(buf)
    }
    /// The grayscale value of each raw screen byte (palette index), as `screen_grayscale` maps it
    /// (in all three entries).
    pub fn grayscale_palette(&self) -> Result<Palette> {
        let mut table = [0u8; 256];
        self.raw.grayscale_palette(&mut table)?;
        Ok(table.map(|gray| [gray; 3]))
    }

    /// The RGB colour of each raw screen byte (palette index), as `screen_rgb` maps it.
    pub fn rgb_palette(&self) -> Result<Palette> {
        let mut table = [0u8; 768];
        self.raw.rgb_palette(&mut table)?;
        Ok(std::array::from_fn(|i| [table[3 * i], table[3 * i + 1], table[3 * i + 2]]))
    }
    pub fn screen_grayscale(&self) -> Result<Vec<u8>> {
        let (h, w) = self.screen_dims()?;
        let mut buf = vec![0; h * w];
        self.screen_grayscale_into(&mut buf)?;
        Ok(buf)
    }
    pub fn screen_rgb(&self) -> Result<Vec<u8>> {
        let (h, w) = self.screen_dims()?;
        let mut buf = vec![0; h * w * 3];
        self.screen_rgb_into(&mut buf)?;
        Ok(buf)
    }
    pub fn ram(&self) -> Result<Vec<u8>> {
        let mut ram = [0; RAM_SIZE];
        self.ram_into(&mut ram)?;
        Ok(ram.to_vec())
    }
    /// The RAM into `buf`, without allocating.
    pub fn ram_into(&self, buf: &mut [u8; RAM_SIZE]) -> Result<()> {
        self.raw.ram_into(buf)
    }
    pub fn set_ram(&mut self, index: usize, value: u8) -> Result<()> {
        if index >= RAM_SIZE {
            return Err(Error::InvalidArgument(format!("RAM index must be in [0, 128), got {index}")));
        }
        self.raw.set_ram(index, value)
    }
    pub fn clone_state(&mut self, include_rng: bool) -> Result<AleState> {
        Ok(AleState { raw: self.raw.clone_state(include_rng)? })
    }
    pub fn restore_state(&mut self, state: &AleState) -> Result<()> {
        self.raw.restore_state(&state.raw)
    }

    /// ALE's `cloneState(include_rng=true).serialize()`, the bytes ale_py's `ALEState.serialize()` gives.
    pub fn serialize_state(&mut self) -> Result<Vec<u8>> {
        self.raw.serialize_state()
    }
    /// Restores [`serialize_state`](Self::serialize_state)'s bytes, saved from the same ROM.
    pub fn restore_serialized_state(&mut self, bytes: &[u8]) -> Result<()> {
        self.raw.restore_serialized_state(bytes)
    }

    /// Everything of the emulator that [`restore_emulator`](Self::restore_emulator) puts back.
    pub fn save_emulator(&mut self) -> Result<EmulatorState> {
        let (height, width) = self.screen_dims()?;
        let (mut current_frame, mut previous_frame) = (vec![0; height * width], vec![0; height * width]);
        self.raw.frame_buffers(&mut current_frame, &mut previous_frame)?;
        let sticky = self.raw.sticky_actions()?;
        Ok(EmulatorState {
            ale_state: self.serialize_state()?,
            sticky_actions: [
                (sticky.player_a_action, sticky.paddle_a_strength),
                (sticky.player_b_action, sticky.paddle_b_strength),
            ],
            current_frame,
            previous_frame,
        })
    }

    /// Puts back a state saved from an emulator of the same ROM (which the caller checks: ALE does not).
    pub fn restore_emulator(&mut self, state: &EmulatorState) -> Result<()> {
        let [(player_a_action, paddle_a_strength), (player_b_action, paddle_b_strength)] = state.sticky_actions;
        self.restore_serialized_state(&state.ale_state)?;
        self.raw.set_sticky_actions(&StickyActions {
            player_a_action,
            player_b_action,
            paddle_a_strength,
            paddle_b_strength,
        })?;
        self.raw.set_frame_buffers(&state.current_frame, &state.previous_frame)
    }
}
