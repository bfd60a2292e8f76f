// Checks every function of src/ffi/tia/simd.h, the vectors of the TIA's span blocks, against what it
// promises lane by lane, on random inputs: the same file checks the SSE2 and the NEON functions
// (tests/tia_simd.rs compiles it for each target it can run). Prints the first mismatches and exits
// 1 if there is any; exits 2 where the target has neither (the span blocks are then left out).
#include "tia/simd.h"

#include <cstdio>
#include <cstring>

#if !defined(TORCHWM_TIA_SIMD)
int main() { std::puts("tia/simd.h has no vectors for this target"); return 2; }
#else
using namespace simd;

namespace {
struct Lanes { uint8_t at[16]; };
uint64_t state = 0x9e3779b97f4a7c15ull;
int failures = 0;

uint8_t randomByte()
{
  state ^= state << 13; state ^= state >> 7; state ^= state << 17;
  return uint8_t(state >> 29);
}
Lanes lanesOf(Bytes v) { Lanes l; store(l.at, v); return l; }
// Random lanes of one of three kinds: any bytes, lane masks, mostly zero.
Lanes randomLanes(int kind)
{
  Lanes l;
  for(uint8_t& b : l.at)
  {
    const uint8_t r = randomByte();
    b = kind == 0 ? r : kind == 1 ? ((r & 1) ? 0xff : 0) : ((r & 3) ? 0 : r);
  }
  return l;
}
// Lane masks of whole words.
Lanes randomWordMask()
{
  Lanes l;
  for(int w = 0; w < 4; ++w) std::memset(l.at + 4 * w, (randomByte() & 1) ? 0xff : 0, 4);
  return l;
}
void expectLanes(const char* what, Bytes got, const Lanes& want)
{
  const Lanes have = lanesOf(got);
  if(std::memcmp(have.at, want.at, 16) == 0) return;
  if(++failures <= 10)
  {
    std::printf("%s: got", what);
    for(uint8_t b : have.at) std::printf(" %02x", b);
    std::printf(", want");
    for(uint8_t b : want.at) std::printf(" %02x", b);
    std::printf("\n");
  }
}
void expectValue(const char* what, unsigned got, unsigned want)
{
  if(got != want && ++failures <= 10) std::printf("%s: got %u, want %u\n", what, got, want);
}
// The lanes `lane(0)`, ..., `lane(15)`.
template<class Lane> Lanes each(Lane lane)
{
  Lanes l;
  for(int i = 0; i < 16; ++i) l.at[i] = uint8_t(lane(i));
  return l;
}
// The bitwise functions and the byte compares, on lanes `a`, `b` and the lane mask `m`.
void checkBitwise(const Lanes& a, const Lanes& b, const Lanes& m)
{
  const Bytes va = load(a.at), vb = load(b.at), vm = load(m.at);
  expectLanes("zero", zero(), each([](int) { return 0; }));
  expectLanes("allOnes", allOnes(), each([](int) { return 0xff; }));
  expectLanes("bitAnd", bitAnd(va, vb), each([&](int i) { return a.at[i] & b.at[i]; }));
  expectLanes("bitOr", bitOr(va, vb), each([&](int i) { return a.at[i] | b.at[i]; }));
  expectLanes("andNot", andNot(va, vb), each([&](int i) { return ~a.at[i] & b.at[i]; }));
  expectLanes("select", select(vm, va, vb), each([&](int i) { return m.at[i] ? a.at[i] : b.at[i]; }));
  expectLanes("equalBytes", equalBytes(va, vb), each([&](int i) { return a.at[i] == b.at[i] ? 0xff : 0; }));
  expectLanes("zeroBytes", zeroBytes(va), each([&](int i) { return a.at[i] == 0 ? 0xff : 0; }));
  expectLanes("nonzeroBytes", nonzeroBytes(va), each([&](int i) { return a.at[i] != 0 ? 0xff : 0; }));
  expectLanes("zeroWords", zeroWords(va), each([&](int i) {
                const int w = i & ~3;
                return (a.at[w] | a.at[w + 1] | a.at[w + 2] | a.at[w + 3]) == 0 ? 0xff : 0;
              }));
  expectLanes("minusOne", minusOne(va), each([&](int i) { return a.at[i] - 1; }));
  expectValue("firstByte", firstByte(va), a.at[0]);
  bool any = false, all = true, anyNonzero = false;
  for(int i = 0; i < 16; ++i) { any |= m.at[i] != 0; all &= m.at[i] != 0; anyNonzero |= a.at[i] != 0; }
  expectValue("anyLane", anyLane(vm), any);
  expectValue("allLanes", allLanes(vm), all);
  expectValue("anyNonzeroByte", anyNonzeroByte(va), anyNonzero);
}

// The broadcasts, the words of every fourth, the packs of word masks, the lanes below a count, and unaligned loads.
void checkBuilt(const Lanes& a)
{
  const uint8_t value = randomByte();
  const uint32_t word = uint32_t(randomByte()) << 24 | uint32_t(randomByte()) << 12 | randomByte();
  expectLanes("splatByte", splatByte(value), each([&](int) { return value; }));
  Lanes w;
  for(int i = 0; i < 4; ++i) std::memcpy(w.at + 4 * i, &word, 4);
  expectLanes("splatWord", splatWord(word), w);
  uint32_t sixteen[16];
  for(uint32_t i = 0; i < 16; ++i) sixteen[i] = word * (i + 1);
  const uint32_t firsts[4] = {sixteen[0], sixteen[4], sixteen[8], sixteen[12]};
  std::memcpy(w.at, firsts, 16);
  expectLanes("everyFourthWord", everyFourthWord(sixteen), w);
  const Lanes m0 = randomWordMask(), m1 = randomWordMask(), m2 = randomWordMask(), m3 = randomWordMask();
  const Lanes* masks[4] = {&m0, &m1, &m2, &m3};
  expectLanes("packWordMasks", packWordMasks(load(m0.at), load(m1.at), load(m2.at), load(m3.at)),
              each([&](int i) { return masks[i / 4]->at[4 * (i % 4)]; }));
  const uint32_t count = value % 17;
  expectLanes("lanesBelow", lanesBelow(count), each([&](int i) { return uint32_t(i) < count ? 0xff : 0; }));
  uint8_t bytes[48] = {};
  const int offset = value % 32;
  std::memcpy(bytes + offset, a.at, 16);
  expectLanes("load (unaligned)", load(bytes + offset), a);
  store(bytes + 31 - offset, load(a.at));
  expectLanes("store (unaligned)", load(bytes + 31 - offset), a);
}
}  // namespace

int main()
{
  for(int trial = 0; trial < 20000 && failures < 10; ++trial)
  {
    checkBitwise(randomLanes(trial % 3), randomLanes(trial / 3 % 3), randomLanes(1));
    checkBuilt(randomLanes(trial % 3));
  }
  std::printf("%s\n", failures ? "mismatches" : "every function as promised");
  return failures ? 1 : 0;
}
#endif
