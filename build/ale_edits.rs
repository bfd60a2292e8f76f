//! Exact-match edits to ALE's pinned source (see `SOURCE_EDITS`), kept apart from the build logic.

/// Edits to ALE's pinned source, applied to copies in `generated`: that directory comes first on the
/// include path, and the unity units include its copies instead of the originals. Each `from` must
/// occur exactly once, or the build stops (the source is pinned by sha256, so it always does).
pub const SOURCE_EDITS: [(&str, &[(&str, &str)]); 4] = [
    // NullDev.hxx closes its namespaces after its include guard's `#endif`, which breaks a second
    // inclusion in one translation unit.
    (
        "ale/emucore/NullDev.hxx",
        &[(
            "};\n#endif\n\n}  // namespace stella\n}  // namespace ale",
            "};\n\n}  // namespace stella\n}  // namespace ale\n#endif",
        )],
    ),
    // The colour-averaging tables (an RGB -> palette map of 64^3 nearest-colour searches over 128
    // colours) cost ~70 ms of every `loadROM`, that is of every env's construction and seeded
    // reset, and are used only with `color_averaging` on: build them on first use instead.
    (
        "ale/environment/phosphor_blend.hpp",
        &[(
            "  uint8_t m_phosphor_blend_ratio;\n",
            "  uint8_t m_phosphor_blend_ratio;\n  bool m_average_palette_ready = false;\n",
        )],
    ),
    (
        "ale/environment/phosphor_blend.cpp",
        &[
            ("  m_phosphor_blend_ratio = 77;\n\n  makeAveragePalette();\n", "  m_phosphor_blend_ratio = 77;\n"),
            (
                "void PhosphorBlend::process(ALEScreen& screen) {\n",
                "void PhosphorBlend::process(ALEScreen& screen) {\n  if (!m_average_palette_ready) {\n    \
                 makeAveragePalette();\n    m_average_palette_ready = true;\n  }\n",
            ),
        ],
    ),
    // `updateFrameScanline`, which draws each span of a scanline, is the emulator's hottest code
    // after the CPU. Its cases work on locals instead of members (see `TIA_SCANLINE_START_LOCALS`),
    // and its `default` case, the per-pixel loop for spans with several objects, runs 16 pixels at
    // a time (see `TIA_MIXED_OBJECTS_LOOP_LOCALS`). Bit-identical: tests/test_ale_parity.py plays
    // every supported ROM against ale_py.
    (
        "ale/emucore/TIA.cxx",
        &[
            ("#include <cstring>\n", "#include <cstring>\n#if defined(__SSE2__)\n#include <emmintrin.h>\n#endif\n"),
            (TIA_SCANLINE_START, TIA_SCANLINE_START_LOCALS),
            (TIA_MIXED_OBJECTS_LOOP, TIA_MIXED_OBJECTS_LOOP_LOCALS),
            (TIA_SCANLINE_END, TIA_SCANLINE_END_LOCALS),
        ],
    ),
];

const TIA_SCANLINE_START: &str = "inline void TIA::updateFrameScanline(uint32_t clocksToUpdate, uint32_t hpos)\n{\n";

/// Every case of `updateFrameScanline` reads these members per pixel and stores pixels through a
/// byte pointer, which may alias them all: GCC re-read them after every store. The cases work on
/// locals instead, under the members' names, and the two it changes are written back at the end.
const TIA_SCANLINE_START_LOCALS: &str = r"inline void TIA::updateFrameScanline(uint32_t clocksToUpdate, uint32_t hpos)
{
  uint8_t* framePointer_ = myFramePointer;
  uint16_t collision_ = myCollision;
  const uint32_t colubk_ = myCOLUBK, colupf_ = myCOLUPF, colup0_ = myCOLUP0, colup1_ = myCOLUP1;
  const uint32_t pf_ = myPF;
  const uint8_t grp0_ = myCurrentGRP0, grp1_ = myCurrentGRP1;
  const uint32_t* const pfMask_ = myCurrentPFMask;
  const uint8_t* const blMask_ = myCurrentBLMask;
  const uint8_t* const p0Mask_ = myCurrentP0Mask;
  const uint8_t* const p1Mask_ = myCurrentP1Mask;
  const uint8_t* const m0Mask_ = myCurrentM0Mask;
  const uint8_t* const m1Mask_ = myCurrentM1Mask;
#define myFramePointer framePointer_
#define myCollision collision_
#define myCOLUBK colubk_
#define myCOLUPF colupf_
#define myCOLUP0 colup0_
#define myCOLUP1 colup1_
#define myPF pf_
#define myCurrentGRP0 grp0_
#define myCurrentGRP1 grp1_
#define myCurrentPFMask pfMask_
#define myCurrentBLMask blMask_
#define myCurrentP0Mask p0Mask_
#define myCurrentP1Mask p1Mask_
#define myCurrentM0Mask m0Mask_
#define myCurrentM1Mask m1Mask_
";

const TIA_SCANLINE_END: &str = "  myFramePointer = ending;
}

// - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -
inline void TIA::updateFrame(int clock)";

const TIA_SCANLINE_END_LOCALS: &str = "#undef myFramePointer
#undef myCollision
#undef myCOLUBK
#undef myCOLUPF
#undef myCOLUP0
#undef myCOLUP1
#undef myPF
#undef myCurrentGRP0
#undef myCurrentGRP1
#undef myCurrentPFMask
#undef myCurrentBLMask
#undef myCurrentP0Mask
#undef myCurrentP1Mask
#undef myCurrentM0Mask
#undef myCurrentM1Mask
  myFramePointer = ending;
  myCollision = collision_;
}

// - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -
inline void TIA::updateFrame(int clock)";

/// The `default` case's loop: the pixels of spans with several objects on (in Breakout, the
/// playfield with both missiles).
const TIA_MIXED_OBJECTS_LOOP: &str = r"        for(; myFramePointer < ending; ++myFramePointer, ++hpos)
        {
          uint8_t enabled = (myPF & myCurrentPFMask[hpos]) ? myPFBit : 0;

          if((myEnabledObjects & myBLBit) && myCurrentBLMask[hpos])
            enabled |= myBLBit;

          if(myCurrentGRP1 & myCurrentP1Mask[hpos])
            enabled |= myP1Bit;

          if((myEnabledObjects & myM1Bit) && myCurrentM1Mask[hpos])
            enabled |= myM1Bit;

          if(myCurrentGRP0 & myCurrentP0Mask[hpos])
            enabled |= myP0Bit;

          if((myEnabledObjects & myM0Bit) && myCurrentM0Mask[hpos])
            enabled |= myM0Bit;

          myCollision |= ourCollisionTable[enabled];
          *myFramePointer = myColor[myPriorityEncoder[hpos < 80 ? 0 : 1]
              [enabled | myPlayfieldPriorityAndScore]];
        }
";

/// The same pixels and collisions, 16 at a time where SSE2 is there (x86-64's baseline), else the
/// original per-pixel logic without branches. The member names are the function's locals here (see
/// `TIA_SCANLINE_START_LOCALS`).
const TIA_MIXED_OBJECTS_LOOP_LOCALS: &str = r#"        // A disabled ball or missile contributes nothing, whatever its mask says.
        const uint8_t ball = myEnabledObjects & myBLBit;
        const uint8_t missile0 = myEnabledObjects & myM0Bit, missile1 = myEnabledObjects & myM1Bit;
        const uint8_t* encoderLeft = &myPriorityEncoder[0][myPlayfieldPriorityAndScore];
        const uint8_t* encoderRight = &myPriorityEncoder[1][myPlayfieldPriorityAndScore];
        // The frame holds the low byte of each colour register.
        const uint8_t colors[4] = {uint8_t(myColor[0]), uint8_t(myColor[1]), uint8_t(myColor[2]), uint8_t(myColor[3])};
#if defined(__SSE2__)
        // 16 pixels at a time: each pixel's object bits from the masks with byte compares, its
        // colour by the priority rules in lane selects, and the collisions by table where objects
        // overlap. Reads no mask entry past the span; the scalar loop below finishes it.
        if(ending - myFramePointer >= 16)
        {
          // Broadcasts from general registers: GCC's _mm_set1_epi8 goes through the stack and
          // stalls on store forwarding, once per span.
          auto bytes = [](uint32_t value) { return _mm_set1_epi32(int(value * 0x01010101u)); };
          const __m128i zero = _mm_setzero_si128();
          const __m128i pfBits = _mm_set1_epi32(int(myPF));
          const __m128i grp0Bits = bytes(myCurrentGRP0), grp1Bits = bytes(myCurrentGRP1);
          const __m128i pfBit = bytes(myPFBit), p0Bit = bytes(myP0Bit), p1Bit = bytes(myP1Bit);
          const __m128i ballBit = bytes(ball), missile0Bit = bytes(missile0), missile1Bit = bytes(missile1);
          // `bit` where the mask byte, ANDed with `select`, is nonzero.
          auto objectBits = [&](const uint8_t* mask, __m128i select, __m128i bit) {
            const __m128i hit = _mm_and_si128(_mm_loadu_si128((const __m128i*)(mask + hpos)), select);
            return _mm_andnot_si128(_mm_cmpeq_epi8(hit, zero), bit);
          };
          const __m128i all = _mm_set1_epi32(-1);
          auto nonzero = [&](__m128i v) { return _mm_andnot_si128(_mm_cmpeq_epi8(v, zero), all); };
          auto select = [](__m128i lanes, __m128i a, __m128i b) {
            return _mm_or_si128(_mm_and_si128(lanes, a), _mm_andnot_si128(lanes, b));
          };
          const __m128i p0OrM0 = bytes(myP0Bit | myM0Bit), p1OrM1 = bytes(myP1Bit | myM1Bit);
          const __m128i colorBK = bytes(colors[0]), colorPF = bytes(colors[1]);
          const __m128i colorP0 = bytes(colors[2]), colorP1 = bytes(colors[3]);
          const __m128i laneIndex = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
          const bool priority = myPlayfieldPriorityAndScore & PriorityBit;
          const bool score = myPlayfieldPriorityAndScore & ScoreBit;
          for(; ending - myFramePointer >= 16; myFramePointer += 16, hpos += 16)
          {
            __m128i pfOff[4];
            for(int i = 0; i < 4; ++i)
              pfOff[i] = _mm_cmpeq_epi32(_mm_and_si128(_mm_loadu_si128((const __m128i*)(myCurrentPFMask + hpos + 4 * i)), pfBits), zero);
            const __m128i pfOffBytes = _mm_packs_epi16(_mm_packs_epi32(pfOff[0], pfOff[1]), _mm_packs_epi32(pfOff[2], pfOff[3]));
            __m128i objects = _mm_andnot_si128(pfOffBytes, pfBit);
            objects = _mm_or_si128(objects, objectBits(myCurrentBLMask, all, ballBit));
            objects = _mm_or_si128(objects, objectBits(myCurrentP1Mask, grp1Bits, p1Bit));
            objects = _mm_or_si128(objects, objectBits(myCurrentM1Mask, all, missile1Bit));
            objects = _mm_or_si128(objects, objectBits(myCurrentP0Mask, grp0Bits, p0Bit));
            objects = _mm_or_si128(objects, objectBits(myCurrentM0Mask, all, missile0Bit));
            const uint8_t first = uint8_t(_mm_cvtsi128_si32(objects));
            // Runs of one object combination, on one side of the screen, are the common case.
            const bool uniform = _mm_movemask_epi8(_mm_cmpeq_epi8(objects, bytes(first))) == 0xffff;
            if(uniform && (hpos >= 80 || hpos + 16 <= 80))
            {
              myCollision |= ourCollisionTable[first];
              std::memset(myFramePointer, colors[(hpos < 80 ? encoderLeft : encoderRight)[first]], 16);
              continue;
            }
            // The colours by the priority encoder's rules (see the TIA constructor), lane by lane.
            const __m128i p0Lanes = nonzero(_mm_and_si128(objects, p0OrM0));
            const __m128i p1Lanes = nonzero(_mm_and_si128(objects, p1OrM1));
            const __m128i pfLanes = nonzero(_mm_and_si128(objects, pfBit));
            const __m128i blLanes = nonzero(_mm_and_si128(objects, bytes(myBLBit)));
            __m128i color = colorBK;
            if(priority)
            {
              color = select(p1Lanes, colorP1, color);
              color = select(p0Lanes, colorP0, color);
              color = select(_mm_or_si128(pfLanes, blLanes), colorPF, color);
            }
            else
            {
              color = select(blLanes, colorPF, color);
              // In score mode the playfield takes player 0's colour on the left, player 1's on the right.
              const __m128i left = hpos >= 80 ? zero
                  : _mm_cmplt_epi8(laneIndex, _mm_set1_epi8(char(hpos + 16 <= 80 ? 16 : 80 - hpos)));
              color = select(pfLanes, score ? select(left, colorP0, colorP1) : colorPF, color);
              // Player 1 does not cover the playfield drawn in player 0's colour.
              const __m128i keptP0 = score ? _mm_and_si128(pfLanes, left) : zero;
              color = select(_mm_andnot_si128(keptP0, p1Lanes), colorP1, color);
              color = select(p0Lanes, colorP0, color);
            }
            _mm_storeu_si128((__m128i*)myFramePointer, color);
            // Collisions need two objects on one pixel: rare, so looked up only then.
            const __m128i overlaps = _mm_and_si128(objects, _mm_sub_epi8(objects, bytes(1)));
            if(_mm_movemask_epi8(_mm_cmpeq_epi8(overlaps, zero)) != 0xffff)
            {
              alignas(16) uint8_t enabled[16];
              _mm_store_si128((__m128i*)enabled, objects);
              for(int i = 0; i < 16; ++i)
                myCollision |= ourCollisionTable[enabled[i]];
            }
          }
        }
#endif
        for(; myFramePointer < ending; ++myFramePointer, ++hpos)
        {
          uint8_t enabled = (myPF & myCurrentPFMask[hpos]) ? myPFBit : 0;
          enabled |= myCurrentBLMask[hpos] ? ball : 0;
          enabled |= (myCurrentGRP1 & myCurrentP1Mask[hpos]) ? myP1Bit : 0;
          enabled |= myCurrentM1Mask[hpos] ? missile1 : 0;
          enabled |= (myCurrentGRP0 & myCurrentP0Mask[hpos]) ? myP0Bit : 0;
          enabled |= myCurrentM0Mask[hpos] ? missile0 : 0;
          myCollision |= ourCollisionTable[enabled];
          *myFramePointer = colors[(hpos < 80 ? encoderLeft : encoderRight)[enabled]];
        }
"#;
