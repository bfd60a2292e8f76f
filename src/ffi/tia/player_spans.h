// 16-pixel blocks of the player spans of ALE's TIA::updateFrameScanline (its cases for player 0,
// player 1, and both players, each with any score and priority bits: nothing else is on there, so
// neither changes a pixel): tia/player0_span.inc, player1_span.inc and two_players.inc call this at
// the top of those cases.
// Space Invaders draws its invaders so, 23% of its instructions in the both-players loop alone
// (12 instructions a pixel where a player's mask is on).
//
// The pixels and collision of ALE's loops: player 0's colour where its mask's bit is in GRP0, else
// player 1's where its mask's bit is in GRP1, else the background; the P0-P1 collision where both are
// on. A span with one player passes its mask with no bits (`bits1` 0) as the other, drawn under it. Only whole
// blocks: ALE's loop draws the rest of the span (under 16 pixels) from where this stops, as in
// tia/two_missiles.inc (which says why that is ALE's drawing). Returns the pixels drawn, and whether
// the players overlapped on one of them. Out of line, for the same reason as tia/two_missiles.inc.
#ifndef TORCHWM_TIA_PLAYER_SPANS_H
#define TORCHWM_TIA_PLAYER_SPANS_H
#include "tia/simd.h"
#if defined(TORCHWM_TIA_SIMD)
struct TorchwmPlayersDrawn
{
  uint32_t pixels;
  bool overlap;
};

__attribute__((noinline)) inline TorchwmPlayersDrawn torchwmDrawPlayers(uint8_t* frame, uint32_t pixels,
    const uint8_t* mask0, uint8_t bits0, const uint8_t* mask1, uint8_t bits1, uint8_t background,
    uint8_t color0, uint8_t color1)
{
  const simd::Bytes colorBK = simd::splatByte(background);
  const simd::Bytes color0s = simd::splatByte(color0), color1s = simd::splatByte(color1);
  const simd::Bytes bits0s = simd::splatByte(bits0), bits1s = simd::splatByte(bits1);
  simd::Bytes overlap = simd::zero();
  uint32_t done = 0;
  for(; pixels - done >= 16; done += 16)
  {
    const simd::Bytes off0 = simd::zeroBytes(simd::bitAnd(simd::load(mask0 + done), bits0s));
    const simd::Bytes off1 = simd::zeroBytes(simd::bitAnd(simd::load(mask1 + done), bits1s));
    // Player 1 or the background, then player 0 over it.
    simd::store(frame + done, simd::select(off0, simd::select(off1, colorBK, color1s), color0s));
    overlap = simd::bitOr(overlap, simd::andNot(simd::bitOr(off0, off1), simd::allOnes()));
  }
  return {done, simd::anyLane(overlap)};
}

// At the top of a player case, over its locals (tia/scanline_begin.inc): draws the span's whole
// blocks, advances the frame pointer past them, ORs in the collision, and returns the pixels drawn
// for the case to advance its mask pointers.
[[gnu::always_inline]] inline uint32_t torchwmPlayerBlocks(uint8_t*& frame, const uint8_t* ending, const uint8_t* mask0,
    uint8_t bits0, const uint8_t* mask1, uint8_t bits1, uint32_t background, uint32_t color0, uint32_t color1,
    uint16_t& collision, uint16_t overlapCollision)
{
  if(ending - frame < 16)
    return 0;
  const TorchwmPlayersDrawn drawn = torchwmDrawPlayers(frame, uint32_t(ending - frame), mask0, bits0, mask1, bits1,
      uint8_t(background), uint8_t(color0), uint8_t(color1));
  if(drawn.overlap)
    collision |= overlapCollision;
  frame += drawn.pixels;
  return drawn.pixels;
}
#endif
#endif
