// 16-byte vectors for the span blocks of tia/two_missiles.inc, playfield_words.inc and
// mixed_objects.inc, included at the top of ALE's TIA.cxx (see build/ale_edits.rs): one set of small
// functions over SSE2 (x86-64's baseline) and over NEON (AArch64's), so each span block is written
// once. TORCHWM_TIA_SIMD says whether either is there; without it the blocks are left out and ALE's
// (or our) scalar loops draw every pixel.
//
// Lanes are bytes unless a name says words (4 bytes). A "lane mask" holds all-ones or zero in each
// lane, as compares make them. On x86-64 each function is the one or few SSE2 instructions the
// blocks used directly before, so their code there is unchanged.
#ifndef TORCHWM_TIA_SIMD_H
#define TORCHWM_TIA_SIMD_H
#include <cstdint>
#if defined(__SSE2__)
#include <emmintrin.h>
#define TORCHWM_TIA_SIMD 1
#elif defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#define TORCHWM_TIA_SIMD 1
#endif

#if defined(TORCHWM_TIA_SIMD)
namespace simd
{
#if defined(__SSE2__)
using Bytes = __m128i;

[[gnu::always_inline]] inline Bytes zero() { return _mm_setzero_si128(); }
[[gnu::always_inline]] inline Bytes allOnes() { return _mm_set1_epi32(-1); }
// `value` (under 256) in every byte. From a general register: GCC's _mm_set1_epi8 goes through the
// stack and stalls on store forwarding.
[[gnu::always_inline]] inline Bytes splatByte(uint32_t value) { return _mm_set1_epi32(int(value * 0x01010101u)); }
[[gnu::always_inline]] inline Bytes splatWord(uint32_t value) { return _mm_set1_epi32(int(value)); }
// from[0], from[4], from[8] and from[12]: the first word of each 4 (reads no word past from[15]).
[[gnu::always_inline]] inline Bytes everyFourthWord(const uint32_t* from)
{
  return _mm_setr_epi32(int(from[0]), int(from[4]), int(from[8]), int(from[12]));
}
[[gnu::always_inline]] inline Bytes load(const void* from) { return _mm_loadu_si128((const __m128i*)from); }
[[gnu::always_inline]] inline void store(void* to, Bytes v) { _mm_storeu_si128((__m128i*)to, v); }
[[gnu::always_inline]] inline Bytes bitAnd(Bytes a, Bytes b) { return _mm_and_si128(a, b); }
[[gnu::always_inline]] inline Bytes bitOr(Bytes a, Bytes b) { return _mm_or_si128(a, b); }
// ~a & b.
[[gnu::always_inline]] inline Bytes andNot(Bytes a, Bytes b) { return _mm_andnot_si128(a, b); }
// `a` in the lanes of `lanes`, `b` in the others.
[[gnu::always_inline]] inline Bytes select(Bytes lanes, Bytes a, Bytes b)
{
  return _mm_or_si128(_mm_and_si128(lanes, a), _mm_andnot_si128(lanes, b));
}
[[gnu::always_inline]] inline Bytes equalBytes(Bytes a, Bytes b) { return _mm_cmpeq_epi8(a, b); }
[[gnu::always_inline]] inline Bytes zeroBytes(Bytes v) { return _mm_cmpeq_epi8(v, _mm_setzero_si128()); }
[[gnu::always_inline]] inline Bytes nonzeroBytes(Bytes v) { return _mm_andnot_si128(zeroBytes(v), allOnes()); }
[[gnu::always_inline]] inline Bytes zeroWords(Bytes v) { return _mm_cmpeq_epi32(v, _mm_setzero_si128()); }
// Four word lane masks as one byte lane mask, in order (signed saturation keeps 0 and -1).
[[gnu::always_inline]] inline Bytes packWordMasks(Bytes a, Bytes b, Bytes c, Bytes d)
{
  return _mm_packs_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d));
}
// The lanes before lane `count` (at most 16).
[[gnu::always_inline]] inline Bytes lanesBelow(uint32_t count)
{
  const __m128i index = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  return _mm_cmplt_epi8(index, _mm_set1_epi8(char(count)));
}
[[gnu::always_inline]] inline Bytes minusOne(Bytes v) { return _mm_sub_epi8(v, splatByte(1)); }
[[gnu::always_inline]] inline uint8_t firstByte(Bytes v) { return uint8_t(_mm_cvtsi128_si32(v)); }
[[gnu::always_inline]] inline bool anyLane(Bytes laneMask) { return _mm_movemask_epi8(laneMask) != 0; }
[[gnu::always_inline]] inline bool allLanes(Bytes laneMask) { return _mm_movemask_epi8(laneMask) == 0xffff; }
[[gnu::always_inline]] inline bool anyNonzeroByte(Bytes v) { return !allLanes(zeroBytes(v)); }
#else
using Bytes = uint8x16_t;

[[gnu::always_inline]] inline Bytes zero() { return vdupq_n_u8(0); }
[[gnu::always_inline]] inline Bytes allOnes() { return vdupq_n_u8(0xff); }
[[gnu::always_inline]] inline Bytes splatByte(uint32_t value) { return vdupq_n_u8(uint8_t(value)); }
[[gnu::always_inline]] inline Bytes splatWord(uint32_t value) { return vreinterpretq_u8_u32(vdupq_n_u32(value)); }
// from[0], from[4], from[8] and from[12]: the first word of each 4 (one de-interleaving load of
// from[0..15]).
[[gnu::always_inline]] inline Bytes everyFourthWord(const uint32_t* from)
{
  return vreinterpretq_u8_u32(vld4q_u32(from).val[0]);
}
[[gnu::always_inline]] inline Bytes load(const void* from) { return vld1q_u8((const uint8_t*)from); }
[[gnu::always_inline]] inline void store(void* to, Bytes v) { vst1q_u8((uint8_t*)to, v); }
[[gnu::always_inline]] inline Bytes bitAnd(Bytes a, Bytes b) { return vandq_u8(a, b); }
[[gnu::always_inline]] inline Bytes bitOr(Bytes a, Bytes b) { return vorrq_u8(a, b); }
// ~a & b.
[[gnu::always_inline]] inline Bytes andNot(Bytes a, Bytes b) { return vbicq_u8(b, a); }
// `a` in the lanes of `lanes`, `b` in the others.
[[gnu::always_inline]] inline Bytes select(Bytes lanes, Bytes a, Bytes b) { return vbslq_u8(lanes, a, b); }
[[gnu::always_inline]] inline Bytes equalBytes(Bytes a, Bytes b) { return vceqq_u8(a, b); }
[[gnu::always_inline]] inline Bytes zeroBytes(Bytes v) { return vceqzq_u8(v); }
[[gnu::always_inline]] inline Bytes nonzeroBytes(Bytes v) { return vtstq_u8(v, v); }
[[gnu::always_inline]] inline Bytes zeroWords(Bytes v)
{
  return vreinterpretq_u8_u32(vceqzq_u32(vreinterpretq_u32_u8(v)));
}
// Four word lane masks as one byte lane mask, in order: the low byte of each word (little-endian).
[[gnu::always_inline]] inline Bytes packWordMasks(Bytes a, Bytes b, Bytes c, Bytes d)
{
  const uint16x8_t ab = vuzp1q_u16(vreinterpretq_u16_u8(a), vreinterpretq_u16_u8(b));
  const uint16x8_t cd = vuzp1q_u16(vreinterpretq_u16_u8(c), vreinterpretq_u16_u8(d));
  return vuzp1q_u8(vreinterpretq_u8_u16(ab), vreinterpretq_u8_u16(cd));
}
// The lanes before lane `count` (at most 16).
[[gnu::always_inline]] inline Bytes lanesBelow(uint32_t count)
{
  const uint8x16_t index = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  return vcltq_u8(index, vdupq_n_u8(uint8_t(count)));
}
[[gnu::always_inline]] inline Bytes minusOne(Bytes v) { return vsubq_u8(v, vdupq_n_u8(1)); }
[[gnu::always_inline]] inline uint8_t firstByte(Bytes v) { return vgetq_lane_u8(v, 0); }
[[gnu::always_inline]] inline bool anyLane(Bytes laneMask) { return vmaxvq_u8(laneMask) != 0; }
[[gnu::always_inline]] inline bool allLanes(Bytes laneMask) { return vminvq_u8(laneMask) == 0xff; }
[[gnu::always_inline]] inline bool anyNonzeroByte(Bytes v) { return vmaxvq_u8(v) != 0; }
#endif
}  // namespace simd
#endif
#endif
