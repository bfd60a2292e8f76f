//! Exact-match edits to ALE's pinned source (see `SOURCE_EDITS`), kept apart from the build logic.

/// Edits to ALE's pinned source, applied to copies in `generated`: that directory comes first on the
/// include path, and the unity units include its copies instead of the originals. Each `from` must
/// occur exactly once, or the build stops (the source is pinned by sha256, so it always does).
pub const SOURCE_EDITS: [(&str, &[(&str, &str)]); 4] = [
    // NullDev.hxx closes its namespaces after its include guard's `#endif`, which breaks a second
    // inclusion in one translation unit.
    (
        "ale/emucore/NullDev.hxx",
        &[("};\n#endif\n\n}  // namespace stella\n}  // namespace ale", "};\n\n}  // namespace stella\n}  // namespace ale\n#endif")],
    ),
    // The colour-averaging tables (an RGB -> palette map of 64^3 nearest-colour searches over 128
    // colours) cost ~70 ms of every `loadROM`, that is of every env's construction and seeded
    // reset, and are used only with `color_averaging` on: build them on first use instead.
    (
        "ale/environment/phosphor_blend.hpp",
        &[("  uint8_t m_phosphor_blend_ratio;\n", "  uint8_t m_phosphor_blend_ratio;\n  bool m_average_palette_ready = false;\n")],
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
    // The per-pixel loop for scanlines with several objects on (most frames of most games, and the
    // emulator's hottest loop) worked on member fields. A byte stored into the frame may alias any
    // of them, so for every pixel the compiler re-read them all and wrote the collision register
    // back. The same logic over locals, stored back once per span.
    (
        "ale/emucore/TIA.cxx",
        &[
            ("#include <cstring>\n", "#include <cstring>\n#if defined(__SSE2__)\n#include <emmintrin.h>\n#endif\n"),
            (TIA_MIXED_OBJECTS_LOOP, TIA_MIXED_OBJECTS_LOOP_LOCALS),
        ],
    ),
];

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

const TIA_MIXED_OBJECTS_LOOP_LOCALS: &str = r#"        uint8_t* pixel = myFramePointer;
        uint16_t collision = myCollision;
        const uint32_t pf = myPF;
        const uint8_t grp0 = myCurrentGRP0, grp1 = myCurrentGRP1;
        // A disabled ball or missile contributes nothing, whatever its mask says.
        const uint8_t ball = myEnabledObjects & myBLBit;
        const uint8_t missile0 = myEnabledObjects & myM0Bit, missile1 = myEnabledObjects & myM1Bit;
        const uint32_t* pfMask = myCurrentPFMask;
        const uint8_t *blMask = myCurrentBLMask, *p0Mask = myCurrentP0Mask, *p1Mask = myCurrentP1Mask;
        const uint8_t *m0Mask = myCurrentM0Mask, *m1Mask = myCurrentM1Mask;
        const uint8_t* encoderLeft = &myPriorityEncoder[0][myPlayfieldPriorityAndScore];
        const uint8_t* encoderRight = &myPriorityEncoder[1][myPlayfieldPriorityAndScore];
        // The frame holds the low byte of each colour register.
        const uint8_t colors[4] = {uint8_t(myColor[0]), uint8_t(myColor[1]), uint8_t(myColor[2]), uint8_t(myColor[3])};
#if defined(__SSE2__)
        // 16 pixels at a time: each pixel's object bits from the masks with byte compares, then
        // the collisions and colours by table, pixel by pixel. Reads no mask entry past the span.
        const __m128i zero = _mm_setzero_si128();
        const __m128i pfBits = _mm_set1_epi32(int(pf));
        const __m128i grp0Bits = _mm_set1_epi8(char(grp0)), grp1Bits = _mm_set1_epi8(char(grp1));
        for(; ending - pixel >= 16; pixel += 16, hpos += 16)
        {
          __m128i pfOff[4];
          for(int i = 0; i < 4; ++i)
            pfOff[i] = _mm_cmpeq_epi32(_mm_and_si128(_mm_loadu_si128((const __m128i*)(pfMask + hpos + 4 * i)), pfBits), zero);
          const __m128i pfOffBytes = _mm_packs_epi16(_mm_packs_epi32(pfOff[0], pfOff[1]), _mm_packs_epi32(pfOff[2], pfOff[3]));
          __m128i objects = _mm_andnot_si128(pfOffBytes, _mm_set1_epi8(myPFBit));
          // `bit` where the mask byte, ANDed with `select`, is nonzero.
          auto objectBits = [&](const uint8_t* mask, __m128i select, uint8_t bit) {
            const __m128i hit = _mm_and_si128(_mm_loadu_si128((const __m128i*)(mask + hpos)), select);
            return _mm_andnot_si128(_mm_cmpeq_epi8(hit, zero), _mm_set1_epi8(char(bit)));
          };
          const __m128i all = _mm_set1_epi8(char(0xff));
          objects = _mm_or_si128(objects, objectBits(blMask, all, ball));
          objects = _mm_or_si128(objects, objectBits(p1Mask, grp1Bits, myP1Bit));
          objects = _mm_or_si128(objects, objectBits(m1Mask, all, missile1));
          objects = _mm_or_si128(objects, objectBits(p0Mask, grp0Bits, myP0Bit));
          objects = _mm_or_si128(objects, objectBits(m0Mask, all, missile0));
          alignas(16) uint8_t enabled[16];
          _mm_store_si128((__m128i*)enabled, objects);
          // Runs of one object combination, on one side of the screen, are the common case.
          const bool uniform = _mm_movemask_epi8(_mm_cmpeq_epi8(objects, _mm_set1_epi8(char(enabled[0])))) == 0xffff;
          if(uniform && (hpos >= 80 || hpos + 16 <= 80))
          {
            collision |= ourCollisionTable[enabled[0]];
            std::memset(pixel, colors[(hpos < 80 ? encoderLeft : encoderRight)[enabled[0]]], 16);
            continue;
          }
          for(int i = 0; i < 16; ++i)
          {
            collision |= ourCollisionTable[enabled[i]];
            pixel[i] = colors[(hpos + i < 80 ? encoderLeft : encoderRight)[enabled[i]]];
          }
        }
#endif
        for(; pixel < ending; ++pixel, ++hpos)
        {
          uint8_t enabled = (pf & pfMask[hpos]) ? myPFBit : 0;
          enabled |= blMask[hpos] ? ball : 0;
          enabled |= (grp1 & p1Mask[hpos]) ? myP1Bit : 0;
          enabled |= m1Mask[hpos] ? missile1 : 0;
          enabled |= (grp0 & p0Mask[hpos]) ? myP0Bit : 0;
          enabled |= m0Mask[hpos] ? missile0 : 0;
          collision |= ourCollisionTable[enabled];
          *pixel = colors[(hpos < 80 ? encoderLeft : encoderRight)[enabled]];
        }
        myCollision = collision;
        myFramePointer = pixel;
"#;
