//! The C ABI of `ale_shim.h`, declared for Rust: opaque handle types and the shim's functions.
//!
//! Each fallible function returns 0 on success and -1 on failure, with the message in a thread-local
//! read by `twm_last_error`; no C++ exception crosses this boundary (see `ale_shim.cpp`).
use std::ffi::{c_char, c_int, c_uint};

#[repr(C)]
pub(super) struct TwmAle {
    _private: [u8; 0],
}
#[repr(C)]
pub(super) struct TwmState {
    _private: [u8; 0],
}

/// `TwmStickyActions`: the actions and paddle strengths that sticky actions repeat.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TwmStickyActions {
    pub player_a_action: c_int,
    pub player_b_action: c_int,
    pub paddle_a_strength: f32,
    pub paddle_b_strength: f32,
}

extern "C" {
    pub(super) fn twm_last_error() -> *const c_char;
    pub(super) fn twm_set_logger_mode(mode: c_int) -> c_int;
    pub(super) fn twm_ale_new(out: *mut *mut TwmAle) -> c_int;
    pub(super) fn twm_ale_free(ale: *mut TwmAle);
    pub(super) fn twm_ale_set_int(ale: *mut TwmAle, key: *const c_char, value: c_int) -> c_int;
    pub(super) fn twm_ale_set_float(ale: *mut TwmAle, key: *const c_char, value: f32) -> c_int;
    pub(super) fn twm_ale_set_bool(ale: *mut TwmAle, key: *const c_char, value: c_int) -> c_int;
    pub(super) fn twm_ale_set_string(ale: *mut TwmAle, key: *const c_char, value: *const c_char) -> c_int;
    pub(super) fn twm_ale_get_int(ale: *const TwmAle, key: *const c_char, out: *mut c_int) -> c_int;
    pub(super) fn twm_ale_get_float(ale: *const TwmAle, key: *const c_char, out: *mut f32) -> c_int;
    pub(super) fn twm_ale_get_bool(ale: *const TwmAle, key: *const c_char, out: *mut c_int) -> c_int;
    pub(super) fn twm_ale_get_string(
        ale: *const TwmAle,
        key: *const c_char,
        buf: *mut c_char,
        cap: usize,
        len: *mut usize,
    ) -> c_int;
    pub(super) fn twm_rom_is_supported(path: *const c_char, out: *mut c_int) -> c_int;
    pub(super) fn twm_ale_load_rom(ale: *mut TwmAle, path: *const c_char) -> c_int;
    pub(super) fn twm_ale_act(ale: *mut TwmAle, action: c_int, paddle_strength: f32, reward: *mut c_int) -> c_int;
    pub(super) fn twm_ale_reset_game(ale: *mut TwmAle) -> c_int;
    pub(super) fn twm_ale_game_over(ale: *const TwmAle, with_truncation: c_int, out: *mut c_int) -> c_int;
    pub(super) fn twm_ale_game_truncated(ale: *const TwmAle, out: *mut c_int) -> c_int;
    pub(super) fn twm_ale_lives(ale: *mut TwmAle, out: *mut c_int) -> c_int;
    pub(super) fn twm_ale_frame_number(ale: *const TwmAle, out: *mut c_int) -> c_int;
    pub(super) fn twm_ale_episode_frame_number(ale: *const TwmAle, out: *mut c_int) -> c_int;
    pub(super) fn twm_ale_minimal_action_set(ale: *const TwmAle, buf: *mut c_int, cap: usize, len: *mut usize)
        -> c_int;
    pub(super) fn twm_ale_legal_action_set(ale: *const TwmAle, buf: *mut c_int, cap: usize, len: *mut usize) -> c_int;
    pub(super) fn twm_ale_available_modes(ale: *const TwmAle, buf: *mut c_uint, cap: usize, len: *mut usize) -> c_int;
    pub(super) fn twm_ale_available_difficulties(
        ale: *const TwmAle,
        buf: *mut c_uint,
        cap: usize,
        len: *mut usize,
    ) -> c_int;
    pub(super) fn twm_ale_set_mode(ale: *mut TwmAle, mode: c_uint) -> c_int;
    pub(super) fn twm_ale_get_mode(ale: *const TwmAle, out: *mut c_uint) -> c_int;
    pub(super) fn twm_ale_set_difficulty(ale: *mut TwmAle, difficulty: c_uint) -> c_int;
    pub(super) fn twm_ale_get_difficulty(ale: *const TwmAle, out: *mut c_uint) -> c_int;
    pub(super) fn twm_ale_screen_dims(ale: *const TwmAle, height: *mut usize, width: *mut usize) -> c_int;
    pub(super) fn twm_ale_screen_raw(ale: *const TwmAle, buf: *mut u8, len: usize) -> c_int;
    pub(super) fn twm_ale_screen_grayscale(ale: *const TwmAle, buf: *mut u8, len: usize) -> c_int;
    pub(super) fn twm_ale_screen_rgb(ale: *const TwmAle, buf: *mut u8, len: usize) -> c_int;
    pub(super) fn twm_ale_grayscale_palette(ale: *const TwmAle, buf: *mut u8, len: usize) -> c_int;
    pub(super) fn twm_ale_rgb_palette(ale: *const TwmAle, buf: *mut u8, len: usize) -> c_int;
    pub(super) fn twm_ale_ram(ale: *const TwmAle, buf: *mut u8, len: usize, ram_size: *mut usize) -> c_int;
    pub(super) fn twm_ale_set_ram(ale: *mut TwmAle, index: usize, value: u8) -> c_int;
    pub(super) fn twm_ale_clone_state(ale: *mut TwmAle, include_rng: c_int, out: *mut *mut TwmState) -> c_int;
    pub(super) fn twm_ale_restore_state(ale: *mut TwmAle, state: *const TwmState) -> c_int;
    pub(super) fn twm_state_free(state: *mut TwmState);
    pub(super) fn twm_ale_serialize_state(ale: *mut TwmAle, buf: *mut u8, cap: usize, size: *mut usize) -> c_int;
    pub(super) fn twm_ale_restore_serialized_state(ale: *mut TwmAle, buf: *const u8, len: usize) -> c_int;
    pub(super) fn twm_ale_sticky_actions(ale: *const TwmAle, out: *mut TwmStickyActions) -> c_int;
    pub(super) fn twm_ale_set_sticky_actions(ale: *mut TwmAle, sticky: *const TwmStickyActions) -> c_int;
    pub(super) fn twm_ale_frame_buffers(ale: *const TwmAle, current: *mut u8, previous: *mut u8, len: usize) -> c_int;
    pub(super) fn twm_ale_set_frame_buffers(
        ale: *mut TwmAle,
        current: *const u8,
        previous: *const u8,
        len: usize,
    ) -> c_int;
}
