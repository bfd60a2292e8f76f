/* C ABI over ale::ALEInterface, used by src/ffi/ (declared for Rust in src/ffi/bindings.rs).
 *
 * Every function that can fail returns 0 on success and -1 on failure; the failure's message is kept
 * in a thread-local and read back with twm_last_error(). No C++ exception crosses this boundary: the
 * functions are noexcept, and those that can fail catch every exception (TWM_PROTECT). */
#ifndef TORCHWM_ALE_SHIM_H
#define TORCHWM_ALE_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define TWM_NOEXCEPT noexcept
extern "C" {
#else
#define TWM_NOEXCEPT
#endif

typedef struct TwmAle TwmAle;
typedef struct TwmState TwmState;

const char* twm_last_error(void) TWM_NOEXCEPT;
int twm_set_logger_mode(int mode) TWM_NOEXCEPT;

int twm_ale_new(TwmAle** out) TWM_NOEXCEPT;
void twm_ale_free(TwmAle* ale) TWM_NOEXCEPT;

int twm_ale_set_int(TwmAle* ale, const char* key, int value) TWM_NOEXCEPT;
int twm_ale_set_float(TwmAle* ale, const char* key, float value) TWM_NOEXCEPT;
int twm_ale_set_bool(TwmAle* ale, const char* key, int value) TWM_NOEXCEPT;
int twm_ale_set_string(TwmAle* ale, const char* key, const char* value) TWM_NOEXCEPT;
int twm_ale_get_int(const TwmAle* ale, const char* key, int* out) TWM_NOEXCEPT;
int twm_ale_get_float(const TwmAle* ale, const char* key, float* out) TWM_NOEXCEPT;
int twm_ale_get_bool(const TwmAle* ale, const char* key, int* out) TWM_NOEXCEPT;
/* Copies at most cap-1 bytes and a NUL; *len receives the full length. */
int twm_ale_get_string(const TwmAle* ale, const char* key, char* buf, size_t cap, size_t* len) TWM_NOEXCEPT;

int twm_rom_is_supported(const char* path, int* out) TWM_NOEXCEPT;
int twm_ale_load_rom(TwmAle* ale, const char* path) TWM_NOEXCEPT;

int twm_ale_act(TwmAle* ale, int action, float paddle_strength, int* reward) TWM_NOEXCEPT;
int twm_ale_reset_game(TwmAle* ale) TWM_NOEXCEPT;
int twm_ale_game_over(const TwmAle* ale, int with_truncation, int* out) TWM_NOEXCEPT;
int twm_ale_game_truncated(const TwmAle* ale, int* out) TWM_NOEXCEPT;
int twm_ale_lives(TwmAle* ale, int* out) TWM_NOEXCEPT;
int twm_ale_frame_number(const TwmAle* ale, int* out) TWM_NOEXCEPT;
int twm_ale_episode_frame_number(const TwmAle* ale, int* out) TWM_NOEXCEPT;

/* Action / mode / difficulty lists: writes up to cap entries, *len receives the full count. */
int twm_ale_minimal_action_set(const TwmAle* ale, int* buf, size_t cap, size_t* len) TWM_NOEXCEPT;
int twm_ale_legal_action_set(const TwmAle* ale, int* buf, size_t cap, size_t* len) TWM_NOEXCEPT;
int twm_ale_available_modes(const TwmAle* ale, unsigned* buf, size_t cap, size_t* len) TWM_NOEXCEPT;
int twm_ale_available_difficulties(const TwmAle* ale, unsigned* buf, size_t cap, size_t* len) TWM_NOEXCEPT;
int twm_ale_set_mode(TwmAle* ale, unsigned mode) TWM_NOEXCEPT;
int twm_ale_get_mode(const TwmAle* ale, unsigned* out) TWM_NOEXCEPT;
int twm_ale_set_difficulty(TwmAle* ale, unsigned difficulty) TWM_NOEXCEPT;
int twm_ale_get_difficulty(const TwmAle* ale, unsigned* out) TWM_NOEXCEPT;

int twm_ale_screen_dims(const TwmAle* ale, size_t* height, size_t* width) TWM_NOEXCEPT;
/* Buffers must hold height*width bytes (raw palette indices, grayscale) or height*width*3 (RGB). */
int twm_ale_screen_raw(const TwmAle* ale, uint8_t* buf, size_t len) TWM_NOEXCEPT;
int twm_ale_screen_grayscale(const TwmAle* ale, uint8_t* buf, size_t len) TWM_NOEXCEPT;
int twm_ale_screen_rgb(const TwmAle* ale, uint8_t* buf, size_t len) TWM_NOEXCEPT;
/* The grayscale value ALE gives each screen byte (palette index): 256 entries. */
int twm_ale_grayscale_palette(const TwmAle* ale, uint8_t* buf, size_t len) TWM_NOEXCEPT;
/* The RGB colour ALE gives each screen byte: 256 x 3 bytes. */
int twm_ale_rgb_palette(const TwmAle* ale, uint8_t* buf, size_t len) TWM_NOEXCEPT;

int twm_ale_ram(const TwmAle* ale, uint8_t* buf, size_t len, size_t* ram_size) TWM_NOEXCEPT;
int twm_ale_set_ram(TwmAle* ale, size_t index, uint8_t value) TWM_NOEXCEPT;

int twm_ale_clone_state(TwmAle* ale, int include_rng, TwmState** out) TWM_NOEXCEPT;
int twm_ale_restore_state(TwmAle* ale, const TwmState* state) TWM_NOEXCEPT;
void twm_state_free(TwmState* state) TWM_NOEXCEPT;

/* The emulator's state as bytes: ALE's cloneState(include_rng=true).serialize(), the bytes ale_py's
 * ALEState pickles. Writes min(cap, *size) bytes; *size is the whole length (call again with a buffer
 * that large when it exceeds cap). Restoring needs the same ROM loaded. */
int twm_ale_serialize_state(TwmAle* ale, uint8_t* buf, size_t cap, size_t* size) TWM_NOEXCEPT;
int twm_ale_restore_serialized_state(TwmAle* ale, const uint8_t* buf, size_t len) TWM_NOEXCEPT;

/* What ALE's states leave out. The actions and paddle strengths that sticky actions repeat: */
typedef struct TwmStickyActions {
  int player_a_action;
  int player_b_action;
  float paddle_a_strength;
  float paddle_b_strength;
} TwmStickyActions;
int twm_ale_sticky_actions(const TwmAle* ale, TwmStickyActions* out) TWM_NOEXCEPT;
int twm_ale_set_sticky_actions(TwmAle* ale, const TwmStickyActions* sticky) TWM_NOEXCEPT;
/* and the screen-sized start of the TIA's two frame buffers (a frame shorter than the screen leaves
 * rows of earlier frames in view). `len` is each buffer's length: exactly height * width. */
int twm_ale_frame_buffers(const TwmAle* ale, uint8_t* current, uint8_t* previous, size_t len) TWM_NOEXCEPT;
int twm_ale_set_frame_buffers(TwmAle* ale, const uint8_t* current, const uint8_t* previous,
                              size_t len) TWM_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif
