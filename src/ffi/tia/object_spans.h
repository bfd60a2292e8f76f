// 16-pixel blocks of the spans of ALE's TIA::updateFrameScanline that have one or two objects on (a
// player, a missile, the ball or the playfield), each drawn by ALE's case for that combination:
// tia/object_spans.inc draws with these. Space Invaders draws its invaders with both
// players, 23% of its instructions in that case's loop alone (12 instructions a pixel where a
// player's mask is on); Seaquest's ball with player 1, Ms. Pac-Man's playfield with player 1 or the
// ball.
//
// ALE's cases draw two layers over the background: the top object's colour where it is on, else the
// other's, else the background's, and the pair's collision where both are on. A player is on where its
// mask's bit is in its GRP, a missile or the ball where its mask byte is nonzero, the playfield where
// its mask word's bit is in PF. A span with one object has no layer under it.
//
// ALE's loops store a whole word of background (or, with the playfield, of the playfield's colour under
// the word's first pixel) where the word's object masks are all off. Drawn pixel by pixel that is the
// same word; with the playfield, only where the frame's words start on pixels that are multiples of 4
// (the playfield's masks are 4 pixels wide from pixel 0): elsewhere tia/object_spans.inc draws
// nothing and leaves the span to ALE's loop. Only whole blocks: ALE's loop draws the rest of the span (under 16 pixels)
// from where the blocks stop, as in tia/two_missiles.inc (which says why that is ALE's drawing).
#ifndef TORCHWM_TIA_OBJECT_SPANS_H
#define TORCHWM_TIA_OBJECT_SPANS_H
#include "tia/simd.h"
#if defined(TORCHWM_TIA_SIMD)
// One layer: an object's masks from the span's first pixel, the bits that make a pixel of it on
// (GRP for a player, 0xff for a missile or the ball, PF for the playfield, 0 for no layer), its colour.
struct TorchwmLayer
{
  const void* masks;
  uint32_t bits;
  uint8_t color;
};

struct TorchwmLayersDrawn
{
  uint32_t pixels;
  bool overlap;
};

// Lanes where the layer is off, for the 16 pixels from `done`.
template <bool Playfield>
[[gnu::always_inline]] inline simd::Bytes torchwmLayerOff(const TorchwmLayer& layer, simd::Bytes bits, uint32_t done)
{
  if(Playfield)
  {
    const uint32_t* words = (const uint32_t*)layer.masks + done;
    return simd::packWordMasks(simd::zeroWords(simd::bitAnd(simd::load(words), bits)),
        simd::zeroWords(simd::bitAnd(simd::load(words + 4), bits)),
        simd::zeroWords(simd::bitAnd(simd::load(words + 8), bits)),
        simd::zeroWords(simd::bitAnd(simd::load(words + 12), bits)));
  }
  return simd::zeroBytes(simd::bitAnd(simd::load((const uint8_t*)layer.masks + done), bits));
}

// The blocks of a span of two layers (tia/object_spans.inc, itself out of line, inlines it).
// `Under` false: one object (`under` unused).
template <bool TopPlayfield, bool UnderPlayfield, bool Under = true>
[[gnu::always_inline]] inline TorchwmLayersDrawn torchwmDrawLayers(uint8_t* frame, uint32_t pixels, TorchwmLayer top,
    TorchwmLayer under, uint8_t background)
{
  const simd::Bytes colorBK = simd::splatByte(background);
  const simd::Bytes colorTop = simd::splatByte(top.color), colorUnder = simd::splatByte(under.color);
  const simd::Bytes topBits = TopPlayfield ? simd::splatWord(top.bits) : simd::splatByte(top.bits);
  const simd::Bytes underBits = UnderPlayfield ? simd::splatWord(under.bits) : simd::splatByte(under.bits);
  simd::Bytes overlap = simd::zero();
  uint32_t done = 0;
  for(; pixels - done >= 16; done += 16)
  {
    const simd::Bytes topOff = torchwmLayerOff<TopPlayfield>(top, topBits, done);
    const simd::Bytes underOff = Under ? torchwmLayerOff<UnderPlayfield>(under, underBits, done) : simd::allOnes();
    simd::store(frame + done, simd::select(topOff, simd::select(underOff, colorBK, colorUnder), colorTop));
    overlap = simd::bitOr(overlap, simd::andNot(simd::bitOr(topOff, underOff), simd::allOnes()));
  }
  return {done, simd::anyLane(overlap)};
}

#endif
#endif
