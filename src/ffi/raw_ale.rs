//! `RawAle` and `RawState`: owned handles of an `ale::ALEInterface` and an `ale::ALEState`.
use std::ffi::{c_int, c_uint, CStr};
use std::ptr::{self, NonNull};

use super::bindings::*;
use super::check;
use crate::error::{Error, Result};

/// One `ale::ALEInterface`, owned.
pub(crate) struct RawAle {
    ptr: NonNull<TwmAle>,
}

// SAFETY: an ALEInterface has no thread affinity; it is only ever used through &mut / & from one
// thread at a time, which Rust's borrow rules enforce on this owner.
unsafe impl Send for RawAle {}

impl Drop for RawAle {
    fn drop(&mut self) {
        // SAFETY: we own the pointer, allocated by twm_ale_new, and free it exactly once.
        unsafe { twm_ale_free(self.ptr.as_ptr()) }
    }
}

/// Calls a shim getter that writes one value through an out-pointer.
macro_rules! out_value {
    ($call:ident($($arg:expr),*), $init:expr) => {{
        let mut out = $init;
        // SAFETY: the handle is live (owned by self), and `out` is a live local.
        check(unsafe { $call($($arg,)* &mut out) })?;
        Ok::<_, crate::error::Error>(out)
    }};
}

/// Calls a shim list getter twice if needed: once to learn the length, once to fill.
macro_rules! out_list {
    ($call:ident($handle:expr), $ty:ty) => {{
        let mut values: Vec<$ty> = vec![0; 32];
        let mut len = 0usize;
        // SAFETY: `values` holds `values.len()` elements; the shim writes at most that many.
        check(unsafe { $call($handle, values.as_mut_ptr(), values.len(), &mut len) })?;
        if len > values.len() {
            values.resize(len, 0);
            // SAFETY: as above, with the buffer grown to the reported length.
            check(unsafe { $call($handle, values.as_mut_ptr(), values.len(), &mut len) })?;
        }
        values.truncate(len);
        Ok(values)
    }};
}

impl RawAle {
    pub(crate) fn new() -> Result<Self> {
        let mut ptr = ptr::null_mut();
        // SAFETY: `ptr` is a live out-pointer; on success it holds a fresh heap object.
        check(unsafe { twm_ale_new(&mut ptr) })?;
        NonNull::new(ptr).map(|ptr| Self { ptr }).ok_or_else(|| Error::Ale("ALEInterface allocation failed".into()))
    }

    fn mut_ptr(&mut self) -> *mut TwmAle {
        self.ptr.as_ptr()
    }

    fn const_ptr(&self) -> *const TwmAle {
        self.ptr.as_ptr()
    }

    pub(crate) fn set_int(&mut self, key: &CStr, value: i32) -> Result<()> {
        // SAFETY: live handle, valid C string.
        check(unsafe { twm_ale_set_int(self.mut_ptr(), key.as_ptr(), value) })
    }
    pub(crate) fn set_float(&mut self, key: &CStr, value: f32) -> Result<()> {
        // SAFETY: live handle, valid C string.
        check(unsafe { twm_ale_set_float(self.mut_ptr(), key.as_ptr(), value) })
    }
    pub(crate) fn set_bool(&mut self, key: &CStr, value: bool) -> Result<()> {
        // SAFETY: live handle, valid C string.
        check(unsafe { twm_ale_set_bool(self.mut_ptr(), key.as_ptr(), value as c_int) })
    }
    pub(crate) fn set_string(&mut self, key: &CStr, value: &CStr) -> Result<()> {
        // SAFETY: live handle, valid C strings.
        check(unsafe { twm_ale_set_string(self.mut_ptr(), key.as_ptr(), value.as_ptr()) })
    }
    pub(crate) fn get_int(&self, key: &CStr) -> Result<i32> {
        out_value!(twm_ale_get_int(self.const_ptr(), key.as_ptr()), 0)
    }
    pub(crate) fn get_float(&self, key: &CStr) -> Result<f32> {
        out_value!(twm_ale_get_float(self.const_ptr(), key.as_ptr()), 0.0)
    }
    pub(crate) fn get_bool(&self, key: &CStr) -> Result<bool> {
        let value: c_int = out_value!(twm_ale_get_bool(self.const_ptr(), key.as_ptr()), 0)?;
        Ok(value != 0)
    }
    pub(crate) fn get_string(&self, key: &CStr) -> Result<String> {
        let mut buf = vec![0u8; 256];
        let mut len = 0usize;
        // SAFETY: `buf` holds `buf.len()` bytes; the shim writes at most that many including the NUL.
        check(unsafe {
            twm_ale_get_string(self.const_ptr(), key.as_ptr(), buf.as_mut_ptr().cast(), buf.len(), &mut len)
        })?;
        if len + 1 > buf.len() {
            buf.resize(len + 1, 0);
            // SAFETY: as above, with the buffer grown to the reported length.
            check(unsafe {
                twm_ale_get_string(self.const_ptr(), key.as_ptr(), buf.as_mut_ptr().cast(), buf.len(), &mut len)
            })?;
        }
        buf.truncate(len);
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }

    pub(crate) fn load_rom(&mut self, path: &CStr) -> Result<()> {
        // SAFETY: live handle, valid C string.
        check(unsafe { twm_ale_load_rom(self.mut_ptr(), path.as_ptr()) })
    }

    pub(crate) fn act(&mut self, action: i32, paddle_strength: f32) -> Result<i32> {
        out_value!(twm_ale_act(self.mut_ptr(), action, paddle_strength), 0)
    }
    pub(crate) fn reset_game(&mut self) -> Result<()> {
        // SAFETY: live handle.
        check(unsafe { twm_ale_reset_game(self.mut_ptr()) })
    }
    pub(crate) fn game_over(&self, with_truncation: bool) -> Result<bool> {
        let value: c_int = out_value!(twm_ale_game_over(self.const_ptr(), with_truncation as c_int), 0)?;
        Ok(value != 0)
    }
    pub(crate) fn game_truncated(&self) -> Result<bool> {
        let value: c_int = out_value!(twm_ale_game_truncated(self.const_ptr()), 0)?;
        Ok(value != 0)
    }
    pub(crate) fn lives(&mut self) -> Result<i32> {
        out_value!(twm_ale_lives(self.mut_ptr()), 0)
    }
    pub(crate) fn frame_number(&self) -> Result<i32> {
        out_value!(twm_ale_frame_number(self.const_ptr()), 0)
    }
    pub(crate) fn episode_frame_number(&self) -> Result<i32> {
        out_value!(twm_ale_episode_frame_number(self.const_ptr()), 0)
    }

    pub(crate) fn minimal_action_set(&self) -> Result<Vec<i32>> {
        out_list!(twm_ale_minimal_action_set(self.const_ptr()), c_int)
    }
    pub(crate) fn legal_action_set(&self) -> Result<Vec<i32>> {
        out_list!(twm_ale_legal_action_set(self.const_ptr()), c_int)
    }
    pub(crate) fn available_modes(&self) -> Result<Vec<u32>> {
        out_list!(twm_ale_available_modes(self.const_ptr()), c_uint)
    }
    pub(crate) fn available_difficulties(&self) -> Result<Vec<u32>> {
        out_list!(twm_ale_available_difficulties(self.const_ptr()), c_uint)
    }
    pub(crate) fn set_mode(&mut self, mode: u32) -> Result<()> {
        // SAFETY: live handle.
        check(unsafe { twm_ale_set_mode(self.mut_ptr(), mode) })
    }
    pub(crate) fn mode(&self) -> Result<u32> {
        out_value!(twm_ale_get_mode(self.const_ptr()), 0)
    }
    pub(crate) fn set_difficulty(&mut self, difficulty: u32) -> Result<()> {
        // SAFETY: live handle.
        check(unsafe { twm_ale_set_difficulty(self.mut_ptr(), difficulty) })
    }
    pub(crate) fn difficulty(&self) -> Result<u32> {
        out_value!(twm_ale_get_difficulty(self.const_ptr()), 0)
    }

    pub(crate) fn screen_dims(&self) -> Result<(usize, usize)> {
        let (mut height, mut width) = (0usize, 0usize);
        // SAFETY: live handle, live out-pointers.
        check(unsafe { twm_ale_screen_dims(self.const_ptr(), &mut height, &mut width) })?;
        Ok((height, width))
    }
    /// The shim checks `buf` is large enough and writes within `buf.len()` bytes.
    pub(crate) fn screen_raw(&self, buf: &mut [u8]) -> Result<()> {
        // SAFETY: live handle; the shim writes at most `buf.len()` bytes (it errors if too small).
        check(unsafe { twm_ale_screen_raw(self.const_ptr(), buf.as_mut_ptr(), buf.len()) })
    }
    pub(crate) fn screen_grayscale(&self, buf: &mut [u8]) -> Result<()> {
        // SAFETY: as screen_raw.
        check(unsafe { twm_ale_screen_grayscale(self.const_ptr(), buf.as_mut_ptr(), buf.len()) })
    }
    pub(crate) fn screen_rgb(&self, buf: &mut [u8]) -> Result<()> {
        // SAFETY: as screen_raw.
        check(unsafe { twm_ale_screen_rgb(self.const_ptr(), buf.as_mut_ptr(), buf.len()) })
    }
    pub(crate) fn grayscale_palette(&self, buf: &mut [u8; 256]) -> Result<()> {
        // SAFETY: as screen_raw; the shim checks the length against 256.
        check(unsafe { twm_ale_grayscale_palette(self.const_ptr(), buf.as_mut_ptr(), buf.len()) })
    }
    pub(crate) fn rgb_palette(&self, buf: &mut [u8; 768]) -> Result<()> {
        // SAFETY: as screen_raw; the shim checks the length against 768.
        check(unsafe { twm_ale_rgb_palette(self.const_ptr(), buf.as_mut_ptr(), buf.len()) })
    }
    /// The 128 bytes of RAM into `buf` (the 2600 has exactly that much; a different size is an error).
    pub(crate) fn ram_into(&self, buf: &mut [u8; 128]) -> Result<()> {
        let mut size = 0usize;
        // SAFETY: live handle; the shim copies at most `buf.len()` bytes.
        check(unsafe { twm_ale_ram(self.const_ptr(), buf.as_mut_ptr(), buf.len(), &mut size) })?;
        if size != buf.len() {
            return Err(Error::Ale(format!("ALE reports {size} bytes of RAM, expected {}", buf.len())));
        }
        Ok(())
    }
    pub(crate) fn set_ram(&mut self, index: usize, value: u8) -> Result<()> {
        // SAFETY: live handle; ALE bounds-checks the index and throws.
        check(unsafe { twm_ale_set_ram(self.mut_ptr(), index, value) })
    }

    pub(crate) fn clone_state(&mut self, include_rng: bool) -> Result<RawState> {
        let mut ptr = ptr::null_mut();
        // SAFETY: live handle and out-pointer; on success `ptr` is a fresh heap object we own.
        check(unsafe { twm_ale_clone_state(self.mut_ptr(), include_rng as c_int, &mut ptr) })?;
        NonNull::new(ptr).map(|ptr| RawState { ptr }).ok_or_else(|| Error::Ale("cloneState returned null".into()))
    }
    pub(crate) fn restore_state(&mut self, state: &RawState) -> Result<()> {
        // SAFETY: both handles are live; the state is only read.
        check(unsafe { twm_ale_restore_state(self.mut_ptr(), state.ptr.as_ptr()) })
    }

    /// ALE's `cloneState(include_rng=true).serialize()`.
    pub(crate) fn serialize_state(&mut self) -> Result<Vec<u8>> {
        let mut bytes = vec![0u8; 8192];
        let mut size = 0usize;
        // SAFETY: live handle; the shim writes at most `bytes.len()` bytes and the whole size to `size`.
        check(unsafe { twm_ale_serialize_state(self.mut_ptr(), bytes.as_mut_ptr(), bytes.len(), &mut size) })?;
        if size > bytes.len() {
            bytes.resize(size, 0);
            // SAFETY: as above, with the buffer grown to the reported size.
            check(unsafe { twm_ale_serialize_state(self.mut_ptr(), bytes.as_mut_ptr(), bytes.len(), &mut size) })?;
        }
        bytes.truncate(size);
        Ok(bytes)
    }
    /// Restores what [`serialize_state`](Self::serialize_state) wrote, for the same ROM.
    pub(crate) fn restore_serialized_state(&mut self, bytes: &[u8]) -> Result<()> {
        // SAFETY: live handle; the shim reads exactly `bytes.len()` bytes, and ALE's deserializer
        // throws (caught in the shim) rather than read past the string it was given.
        check(unsafe { twm_ale_restore_serialized_state(self.mut_ptr(), bytes.as_ptr(), bytes.len()) })
    }
    pub(crate) fn sticky_actions(&self) -> Result<TwmStickyActions> {
        out_value!(twm_ale_sticky_actions(self.const_ptr()), TwmStickyActions::default())
    }
    pub(crate) fn set_sticky_actions(&mut self, sticky: &TwmStickyActions) -> Result<()> {
        // SAFETY: live handle; the struct is only read.
        check(unsafe { twm_ale_set_sticky_actions(self.mut_ptr(), sticky) })
    }
    /// The screen-sized start of the TIA's current and previous frame buffers (`len` bytes each).
    pub(crate) fn frame_buffers(&self, current: &mut [u8], previous: &mut [u8]) -> Result<()> {
        if current.len() != previous.len() {
            return Err(Error::InvalidArgument("the two frame buffers must have one length".into()));
        }
        // SAFETY: live handle; both buffers hold `len` bytes, and the shim checks `len` is the screen's size.
        check(unsafe {
            twm_ale_frame_buffers(self.const_ptr(), current.as_mut_ptr(), previous.as_mut_ptr(), current.len())
        })
    }
    pub(crate) fn set_frame_buffers(&mut self, current: &[u8], previous: &[u8]) -> Result<()> {
        if current.len() != previous.len() {
            return Err(Error::InvalidArgument("the two frame buffers must have one length".into()));
        }
        // SAFETY: as in frame_buffers; the shim only reads the two buffers.
        check(unsafe { twm_ale_set_frame_buffers(self.mut_ptr(), current.as_ptr(), previous.as_ptr(), current.len()) })
    }
}

/// A snapshot of an emulator (`ale::ALEState`), owned.
pub(crate) struct RawState {
    ptr: NonNull<TwmState>,
}

// SAFETY: an ALEState is an immutable value (serialized bytes plus counters) with no thread affinity.
unsafe impl Send for RawState {}
// SAFETY: it is never mutated after creation; restore only reads it.
unsafe impl Sync for RawState {}

impl Drop for RawState {
    fn drop(&mut self) {
        // SAFETY: owned pointer from twm_ale_clone_state, freed exactly once.
        unsafe { twm_state_free(self.ptr.as_ptr()) }
    }
}
