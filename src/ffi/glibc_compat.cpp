// Linked into the portable wheel only (build/wheel_cxx.rs): the two glibc symbols that GCC's static
// libstdc++, built against a newer glibc, refers to and glibc 2.28 (the wheel's floor) lacks. Both are
// hidden: the extension keeps them to itself and never stands in for the process's glibc.
#include <cstdint>
#include <cstdlib>
#include <unistd.h>

extern "C" {

// glibc 2.32: libstdc++ skips atomic reference counts while this says the process has a single
// thread. 0 ("there may be others") keeps them atomic, which is always correct.
__attribute__((visibility("hidden"))) char __libc_single_threaded = 0;

// glibc 2.36: one of std::random_device's sources. torchwm never makes a random_device, but
// libstdc++'s string instantiations refer to it. getentropy is glibc 2.25.
__attribute__((visibility("hidden"))) uint32_t arc4random(void) noexcept {
    uint32_t value = 0;
    if (getentropy(&value, sizeof value) != 0) {
        std::abort();
    }
    return value;
}

}
