// C ABI over ale::ALEInterface (see ale_shim.h).
//
// Every entry point that can fail runs inside TWM_PROTECT: a C++ exception becomes a -1 return and a
// thread-local message, so nothing unwinds into Rust (and all are noexcept: were anything to escape,
// the process would stop at once instead). ALE calls std::exit() on some bad inputs (a missing or
// unsupported ROM); those are checked here first so the process never exits under the caller.
#include "ale_shim.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ale/ale_interface.hpp"
#include "ale/emucore/MD5.hxx"
#include "ale/games/Roms.hpp"

namespace {

thread_local std::string last_error;
// Set when the message itself could not be stored (no memory left for it).
thread_local const char* last_error_fallback = nullptr;

void set_error(const char* message) noexcept {
  try {
    last_error = message ? message : "unknown C++ error";
    last_error_fallback = nullptr;
  } catch (...) {
    last_error_fallback = "a C++ error whose message could not be stored (out of memory)";
  }
}

}  // namespace

#define TWM_PROTECT(body)                       \
  try {                                         \
    body;                                       \
    return 0;                                   \
  } catch (const std::exception& e) {           \
    set_error(e.what());                        \
  } catch (const char* message) {               \
    /* Stella's (de)serializer throws these */  \
    set_error(message);                         \
  } catch (...) {                               \
    set_error("unknown C++ exception");         \
  }                                             \
  return -1;

struct TwmAle {
  ale::ALEInterface ale;
};

struct TwmState {
  ale::ALEState state;
};

namespace {

// Calls that touch the emulator need a loaded ROM: before loadROM() ALE's environment is null.
const ale::ALEInterface& loaded(const TwmAle* handle) {
  if (handle == nullptr) throw std::invalid_argument("null ALE handle");
  if (!handle->ale.environment) throw std::logic_error("no ROM is loaded: call load_rom() first");
  return handle->ale;
}

ale::ALEInterface& loaded(TwmAle* handle) {
  return const_cast<ale::ALEInterface&>(loaded(static_cast<const TwmAle*>(handle)));
}

template <typename T, typename U>
void copy_list(const std::vector<U>& values, T* buf, size_t cap, size_t* len) {
  *len = values.size();
  const size_t n = std::min(cap, values.size());
  for (size_t i = 0; i < n; ++i) buf[i] = static_cast<T>(values[i]);
}

// Larger than any Atari 2600 cartridge (the largest bank-switched ones hold a few hundred KiB).
constexpr std::uintmax_t kMaxRomBytes = 16u << 20;

// ALE's ALEInterface::isSupportedROM, without its leak (it never frees the RomSettings it builds:
// 24 bytes per call, and every seeded reset reloads the ROM) and without reading a file too large to
// be a cartridge. The ROM's name if ALE knows its MD5, else nothing.
std::optional<std::string> supported_rom(const std::filesystem::path& rom) {
  if (!std::filesystem::is_regular_file(rom)) throw std::invalid_argument("ROM file not found: " + rom.string());
  if (std::filesystem::file_size(rom) > kMaxRomBytes) return std::nullopt;
  std::ifstream file(rom, std::ios::binary);
  if (!file) throw std::runtime_error("cannot open ROM file " + rom.string());
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const std::string md5 = ale::stella::MD5(bytes.data(), static_cast<uint32_t>(bytes.size()));
  const std::unique_ptr<ale::RomSettings> settings(ale::buildRomRLWrapper(rom, md5));
  if (settings != nullptr && settings->md5() == md5) return std::string(settings->rom());
  return std::nullopt;
}

void check_buffer(size_t got, size_t need, const char* what) {
  if (got < need) {
    throw std::length_error(std::string(what) + " buffer holds " + std::to_string(got) + " bytes, needs " +
                            std::to_string(need));
  }
}

}  // namespace

extern "C" {

const char* twm_last_error(void) noexcept {
  return last_error_fallback != nullptr ? last_error_fallback : last_error.c_str();
}

int twm_set_logger_mode(int mode) noexcept {
  TWM_PROTECT({
    if (mode < 0 || mode > 2) throw std::invalid_argument("logger mode must be 0 (info), 1 (warning) or 2 (error)");
    ale::Logger::setMode(static_cast<ale::Logger::mode>(mode));
  })
}

int twm_ale_new(TwmAle** out) noexcept { TWM_PROTECT({ *out = new TwmAle(); }) }

// Destructors are noexcept: nothing to catch.
void twm_ale_free(TwmAle* ale) noexcept { delete ale; }

int twm_ale_set_int(TwmAle* ale, const char* key, int value) noexcept { TWM_PROTECT(ale->ale.setInt(key, value)) }
int twm_ale_set_float(TwmAle* ale, const char* key, float value) noexcept { TWM_PROTECT(ale->ale.setFloat(key, value)) }
int twm_ale_set_bool(TwmAle* ale, const char* key, int value) noexcept { TWM_PROTECT(ale->ale.setBool(key, value != 0)) }
int twm_ale_set_string(TwmAle* ale, const char* key, const char* value) noexcept {
  TWM_PROTECT(ale->ale.setString(key, value))
}
int twm_ale_get_int(const TwmAle* ale, const char* key, int* out) noexcept { TWM_PROTECT(*out = ale->ale.getInt(key)) }
int twm_ale_get_float(const TwmAle* ale, const char* key, float* out) noexcept {
  TWM_PROTECT(*out = ale->ale.getFloat(key))
}
int twm_ale_get_bool(const TwmAle* ale, const char* key, int* out) noexcept {
  TWM_PROTECT(*out = ale->ale.getBool(key) ? 1 : 0)
}
int twm_ale_get_string(const TwmAle* ale, const char* key, char* buf, size_t cap, size_t* len) noexcept {
  TWM_PROTECT({
    const std::string& value = ale->ale.getStringInplace(key);
    *len = value.size();
    if (cap > 0) {
      const size_t n = std::min(cap - 1, value.size());
      std::memcpy(buf, value.data(), n);
      buf[n] = '\0';
    }
  })
}

int twm_rom_is_supported(const char* path, int* out) noexcept {
  TWM_PROTECT(*out = supported_rom(std::filesystem::path(path)).has_value() ? 1 : 0)
}

int twm_ale_load_rom(TwmAle* ale, const char* path) noexcept {
  TWM_PROTECT({
    const std::filesystem::path rom(path);
    // loadROM() calls std::exit(1) on a ROM it cannot wrap; refuse such files here instead.
    if (!supported_rom(rom).has_value()) {
      throw std::invalid_argument("not a supported Atari 2600 ROM (unknown MD5): " + rom.string());
    }
    ale->ale.loadROM(rom);
  })
}

int twm_ale_act(TwmAle* ale, int action, float paddle_strength, int* reward) noexcept {
  TWM_PROTECT({
    if (action < 0 || action >= static_cast<int>(ale::PLAYER_B_NOOP)) {
      throw std::out_of_range("action " + std::to_string(action) + " is not in [0, 18)");
    }
    *reward = loaded(ale).act(static_cast<ale::Action>(action), paddle_strength);
  })
}

int twm_ale_reset_game(TwmAle* ale) noexcept { TWM_PROTECT(loaded(ale).reset_game()) }
int twm_ale_game_over(const TwmAle* ale, int with_truncation, int* out) noexcept {
  TWM_PROTECT(*out = loaded(ale).game_over(with_truncation != 0) ? 1 : 0)
}
int twm_ale_game_truncated(const TwmAle* ale, int* out) noexcept { TWM_PROTECT(*out = loaded(ale).game_truncated() ? 1 : 0) }
int twm_ale_lives(TwmAle* ale, int* out) noexcept { TWM_PROTECT(*out = loaded(ale).lives()) }
int twm_ale_frame_number(const TwmAle* ale, int* out) noexcept { TWM_PROTECT(*out = loaded(ale).getFrameNumber()) }
int twm_ale_episode_frame_number(const TwmAle* ale, int* out) noexcept {
  TWM_PROTECT(*out = loaded(ale).getEpisodeFrameNumber())
}

int twm_ale_minimal_action_set(const TwmAle* ale, int* buf, size_t cap, size_t* len) noexcept {
  TWM_PROTECT(copy_list(loaded(ale).getMinimalActionSet(), buf, cap, len))
}
int twm_ale_legal_action_set(const TwmAle* ale, int* buf, size_t cap, size_t* len) noexcept {
  TWM_PROTECT(copy_list(loaded(ale).getLegalActionSet(), buf, cap, len))
}
int twm_ale_available_modes(const TwmAle* ale, unsigned* buf, size_t cap, size_t* len) noexcept {
  TWM_PROTECT(copy_list(loaded(ale).getAvailableModes(), buf, cap, len))
}
int twm_ale_available_difficulties(const TwmAle* ale, unsigned* buf, size_t cap, size_t* len) noexcept {
  TWM_PROTECT(copy_list(loaded(ale).getAvailableDifficulties(), buf, cap, len))
}
int twm_ale_set_mode(TwmAle* ale, unsigned mode) noexcept { TWM_PROTECT(loaded(ale).setMode(mode)) }
int twm_ale_get_mode(const TwmAle* ale, unsigned* out) noexcept { TWM_PROTECT(*out = loaded(ale).getMode()) }
int twm_ale_set_difficulty(TwmAle* ale, unsigned difficulty) noexcept { TWM_PROTECT(loaded(ale).setDifficulty(difficulty)) }
int twm_ale_get_difficulty(const TwmAle* ale, unsigned* out) noexcept { TWM_PROTECT(*out = loaded(ale).getDifficulty()) }

int twm_ale_screen_dims(const TwmAle* ale, size_t* height, size_t* width) noexcept {
  TWM_PROTECT({
    const ale::ALEScreen& screen = loaded(ale).getScreen();
    *height = screen.height();
    *width = screen.width();
  })
}

int twm_ale_screen_raw(const TwmAle* ale, uint8_t* buf, size_t len) noexcept {
  TWM_PROTECT({
    const ale::ALEScreen& screen = loaded(ale).getScreen();
    const size_t n = screen.height() * screen.width();
    check_buffer(len, n, "screen");
    std::memcpy(buf, screen.getArray(), n);
  })
}

int twm_ale_screen_grayscale(const TwmAle* ale, uint8_t* buf, size_t len) noexcept {
  TWM_PROTECT({
    const ale::ALEInterface& interface = loaded(ale);
    const ale::ALEScreen& screen = interface.getScreen();
    const size_t n = screen.height() * screen.width();
    check_buffer(len, n, "grayscale screen");
    interface.theOSystem->colourPalette().applyPaletteGrayscale(buf, screen.getArray(), n);
  })
}

int twm_ale_grayscale_palette(const TwmAle* ale, uint8_t* buf, size_t len) noexcept {
  TWM_PROTECT({
    check_buffer(len, 256, "grayscale palette");
    ale::ColourPalette& palette = loaded(ale).theOSystem->colourPalette();
    // ALE reads entry `index + 1` for each screen byte, so 255 would read past the table; the TIA
    // only produces even indices, and 255 keeps 254's value.
    for (int index = 0; index < 255; ++index) {
      uint8_t source = static_cast<uint8_t>(index);
      palette.applyPaletteGrayscale(&buf[index], &source, 1);
    }
    buf[255] = buf[254];
  })
}

int twm_ale_rgb_palette(const TwmAle* ale, uint8_t* buf, size_t len) noexcept {
  TWM_PROTECT({
    check_buffer(len, 256 * 3, "RGB palette");
    ale::ColourPalette& palette = loaded(ale).theOSystem->colourPalette();
    for (int index = 0; index < 256; ++index) {
      uint8_t source = static_cast<uint8_t>(index);
      palette.applyPaletteRGB(&buf[3 * index], &source, 1);
    }
  })
}

int twm_ale_screen_rgb(const TwmAle* ale, uint8_t* buf, size_t len) noexcept {
  TWM_PROTECT({
    const ale::ALEInterface& interface = loaded(ale);
    const ale::ALEScreen& screen = interface.getScreen();
    const size_t n = screen.height() * screen.width();
    check_buffer(len, n * 3, "RGB screen");
    interface.theOSystem->colourPalette().applyPaletteRGB(buf, screen.getArray(), n);
  })
}

int twm_ale_ram(const TwmAle* ale, uint8_t* buf, size_t len, size_t* ram_size) noexcept {
  TWM_PROTECT({
    const ale::ALERAM& ram = loaded(ale).getRAM();
    *ram_size = ram.size();
    std::memcpy(buf, ram.array(), std::min(len, ram.size()));
  })
}

int twm_ale_set_ram(TwmAle* ale, size_t index, uint8_t value) noexcept { TWM_PROTECT(loaded(ale).setRAM(index, value)) }

int twm_ale_clone_state(TwmAle* ale, int include_rng, TwmState** out) noexcept {
  TWM_PROTECT(*out = new TwmState{loaded(ale).cloneState(include_rng != 0)})
}
int twm_ale_restore_state(TwmAle* ale, const TwmState* state) noexcept { TWM_PROTECT(loaded(ale).restoreState(state->state)) }
// Destructors are noexcept: nothing to catch.
void twm_state_free(TwmState* state) noexcept { delete state; }

int twm_ale_serialize_state(TwmAle* ale, uint8_t* buf, size_t cap, size_t* size) noexcept {
  TWM_PROTECT({
    const std::string bytes = loaded(ale).cloneState(true).serialize();
    *size = bytes.size();
    std::memcpy(buf, bytes.data(), std::min(cap, bytes.size()));
  })
}
int twm_ale_restore_serialized_state(TwmAle* ale, const uint8_t* buf, size_t len) noexcept {
  TWM_PROTECT({
    ale::ALEInterface& interface = loaded(ale);
    const ale::ALEState state(std::string(reinterpret_cast<const char*>(buf), len));
    interface.restoreState(state);
  })
}

namespace {
TwmStickyActions to_c(const ale::StellaEnvironment::StickyActions& sticky) {
  return {static_cast<int>(sticky.player_a_action), static_cast<int>(sticky.player_b_action),
          sticky.paddle_a_strength, sticky.paddle_b_strength};
}
ale::StellaEnvironment::StickyActions from_c(const TwmStickyActions& sticky) {
  return {static_cast<ale::Action>(sticky.player_a_action), static_cast<ale::Action>(sticky.player_b_action),
          sticky.paddle_a_strength, sticky.paddle_b_strength};
}
}  // namespace

int twm_ale_sticky_actions(const TwmAle* ale, TwmStickyActions* out) noexcept {
  TWM_PROTECT(*out = to_c(loaded(ale).environment->getStickyActions()))
}
int twm_ale_set_sticky_actions(TwmAle* ale, const TwmStickyActions* sticky) noexcept {
  TWM_PROTECT(loaded(ale).environment->setStickyActions(from_c(*sticky)))
}

// C++ linkage inside the `extern "C"` block: it returns a C++ reference, which clang warns about
// (-Wreturn-type-c-linkage) under C linkage, as zig's clang compiles the macOS wheel.
extern "C++" {
namespace {
ale::stella::MediaSource& media_source(const ale::ALEInterface& interface, size_t len) {
  ale::stella::MediaSource& media = interface.theOSystem->console().mediaSource();
  const size_t screen = size_t{media.height()} * media.width();
  if (len != screen) {
    throw std::length_error("frame buffers are saved screen-sized: " + std::to_string(screen) + " bytes, got " +
                            std::to_string(len));
  }
  return media;
}
}  // namespace
}  // extern "C++"

int twm_ale_frame_buffers(const TwmAle* ale, uint8_t* current, uint8_t* previous, size_t len) noexcept {
  TWM_PROTECT({
    const ale::stella::MediaSource& media = media_source(loaded(ale), len);
    std::memcpy(current, media.currentFrameBuffer(), len);
    std::memcpy(previous, media.previousFrameBuffer(), len);
  })
}
int twm_ale_set_frame_buffers(TwmAle* ale, const uint8_t* current, const uint8_t* previous, size_t len) noexcept {
  TWM_PROTECT({
    const ale::stella::MediaSource& media = media_source(loaded(ale), len);
    // ALE's screen is copied from the current frame buffer when read (ale_env/lazy_screen.inc): take
    // that copy before the buffer changes, as ALE took it after the last frame.
    loaded(ale).getScreen();
    std::memcpy(media.currentFrameBuffer(), current, len);
    std::memcpy(media.previousFrameBuffer(), previous, len);
  })
}

}  // extern "C"
