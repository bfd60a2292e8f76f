/* For the Windows tests under wine only, never shipped: wine 8 (Debian 12's) lacks bcryptprimitives.dll,
 * whose ProcessPrng Rust's standard library (1.78 on) imports for its random seeds on every Windows 10 and
 * later. This stand-in, put beside the test interpreter, gives the same bytes from BCryptGenRandom, which
 * wine has (scripts/windows_check.sh). */
#include <windows.h>
#include <bcrypt.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    return BCryptGenRandom(NULL, data, (ULONG)length, BCRYPT_USE_SYSTEM_PREFERRED_RNG) >= 0;
}
