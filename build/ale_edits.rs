//! Edits to ALE's pinned source: short insertions at exact anchors, applied to copies in the build's
//! `generated` directory (which comes first on the include path; the unity units include its copies
//! instead of the originals). Our C++ lives in `src/ffi/tia/` and is reached by `#include` lines
//! inserted here; ALE's own files are never stored in this repository.

/// Edits to one file under ALE's `src/`.
pub struct FilePatch {
    pub file: &'static str,
    /// Where the anchors are looked for: the whole file, or the text from the first marker up to the
    /// second (each must occur exactly once in the file, in that order).
    pub scope: Option<(&'static str, &'static str)>,
    pub edits: &'static [Edit],
}

/// One edit. Its anchor is ALE's exact text and must occur exactly once in the patch's scope, or the
/// build stops (the source is pinned by sha256, so it always does unless the pin changes).
pub enum Edit {
    /// Inserts `text` (whole lines) right after the anchor, which ends a line.
    InsertAfter { anchor: &'static str, text: &'static str },
    /// Inserts `text` (whole lines) right before the anchor, which starts a line.
    InsertBefore { anchor: &'static str, text: &'static str },
    /// Removes the anchor (whole lines).
    Remove { anchor: &'static str },
}

impl Edit {
    pub fn anchor(&self) -> &'static str {
        match self {
            Edit::InsertAfter { anchor, .. } | Edit::InsertBefore { anchor, .. } | Edit::Remove { anchor } => anchor,
        }
    }
}

/// The function `TIA_SCANLINE` edits: from its signature to the next function's.
const TIA_SCANLINE: (&str, &str) = (
    "inline void TIA::updateFrameScanline(uint32_t clocksToUpdate, uint32_t hpos)\n",
    "inline void TIA::updateFrame(int clock)\n",
);

/// The line inserted after each assignment to TIA's myClockStopDisplay (see the patches below).
const SET_SCANLINE_LIMIT: &str = "  torchwmSetScanlineLimit();\n";

/// The line inserted where the objects' masks can become others than HMOVE's (src/ffi/tia/hmove_still.inc).
const MASKS_ARE_OTHERS: &str = "  myTorchwmMasksFollowPositions = false;\n";
const RESET_MAY_SKIP_A_COPY: &str = "      if(when != -1)\n        myTorchwmMasksFollowPositions = false;\n";

pub const PATCHES: [FilePatch; 26] = [
    // NullDev.hxx closes its namespaces after its include guard's `#endif`, which breaks a second
    // inclusion in one translation unit (the unity build includes it twice).
    FilePatch {
        file: "ale/emucore/NullDev.hxx",
        scope: None,
        edits: &[Edit::InsertBefore { anchor: "#ifndef NULLDEVICE_HXX\n", text: "#pragma once\n" }],
    },
    // The colour-averaging tables (an RGB -> palette map of 64^3 nearest-colour searches over 128
    // colours) cost ~70 ms of every `loadROM`, that is of every env's construction and seeded reset,
    // and are used only with `color_averaging` on: build them on first use instead.
    FilePatch {
        file: "ale/environment/phosphor_blend.hpp",
        scope: None,
        edits: &[Edit::InsertAfter {
            anchor: "  uint8_t m_phosphor_blend_ratio;\n",
            text: "  bool m_average_palette_ready = false;\n",
        }],
    },
    FilePatch {
        file: "ale/environment/phosphor_blend.cpp",
        scope: None,
        edits: &[
            Edit::Remove { anchor: "  makeAveragePalette();\n" },
            Edit::InsertAfter {
                anchor: "void PhosphorBlend::process(ALEScreen& screen) {\n",
                text: "  if (!m_average_palette_ready) { makeAveragePalette(); m_average_palette_ready = true; }\n",
            },
        ],
    },
    // `updateFrameScanline`, which draws each span of a scanline, is the emulator's hottest code after
    // the CPU: its cases keep the frame pointer and the collisions in locals
    // (src/ffi/tia/scanline_begin.inc and scanline_end.inc), and its `default` case, the per-pixel
    // loop for spans with several objects, runs 16 pixels at a time (src/ffi/tia/mixed_objects.inc,
    // which replaces ALE's loop), as does the case of both missiles for whole 16-pixel blocks before
    // ALE's loop (src/ffi/tia/two_missiles.inc; the playfield alone never reaches it:
    // src/ffi/tia/playfield_span.inc), and so do the other cases of one or two objects
    // (src/ffi/tia/object_spans.inc), each through tia/object_span_call.inc.
    FilePatch {
        file: "ale/emucore/TIA.cxx",
        scope: None,
        edits: &[
            Edit::InsertAfter {
                anchor: "#include <cstring>\n",
                text: "#include \"tia/simd.h\"\n#include \"tia/object_spans.h\"\n",
            },
            Edit::InsertBefore {
                anchor: "inline void TIA::updateFrameScanline(uint32_t clocksToUpdate, uint32_t hpos)\n",
                text: "#include \"tia/object_spans.inc\"\n\n",
            },
        ],
    },
    FilePatch {
        file: "ale/emucore/TIA.cxx",
        scope: Some(TIA_SCANLINE),
        edits: &[
            Edit::InsertAfter {
                anchor: "  uint8_t* ending = myFramePointer + clocksToUpdate;\n",
                text: "#include \"tia/scanline_begin.inc\"\n",
            },
            Edit::InsertBefore {
                anchor: "        for(; myFramePointer < ending; ++myFramePointer, ++hpos)\n",
                text: "#if 0  // ALE's per-pixel loop, replaced by tia/mixed_objects.inc below\n",
            },
            Edit::InsertBefore {
                anchor: "        break;\n      }\n    }\n  }\n",
                text: "#endif\n#include \"tia/mixed_objects.inc\"\n",
            },
            Edit::InsertAfter {
                anchor: "      case myM0Bit | myM1Bit | ScoreBit | PriorityBit:\n      {\n        const uint8_t* mM0 = &myCurrentM0Mask[hpos];\n        const uint8_t* mM1 = &myCurrentM1Mask[hpos];\n",
                text: "#include \"tia/two_missiles.inc\"\n",
            },
            Edit::InsertAfter {
                anchor: "      case myP0Bit | ScoreBit | PriorityBit:\n      {\n",
                text: "#include \"tia/object_span_call.inc\"\n",
            },
            Edit::InsertAfter {
                anchor: "      case myP1Bit | ScoreBit | PriorityBit:\n      {\n",
                text: "#include \"tia/object_span_call.inc\"\n",
            },
            Edit::InsertAfter {
                anchor: "      case myP0Bit | myP1Bit | ScoreBit | PriorityBit:\n      {\n",
                text: "#include \"tia/object_span_call.inc\"\n",
            },
            Edit::InsertAfter {
                anchor: "      case myM0Bit | ScoreBit | PriorityBit:\n      {\n",
                text: "#include \"tia/object_span_call.inc\"\n",
            },
            Edit::InsertAfter {
                anchor: "      case myM1Bit | ScoreBit | PriorityBit:\n      {\n",
                text: "#include \"tia/object_span_call.inc\"\n",
            },
            Edit::InsertAfter {
                anchor: "      case myBLBit | ScoreBit | PriorityBit:\n      {\n",
                text: "#include \"tia/object_span_call.inc\"\n",
            },
            Edit::InsertAfter {
                anchor: "      case myBLBit | myM0Bit | ScoreBit:\n      {\n",
                text: "#include \"tia/object_span_call.inc\"\n",
            },
            Edit::InsertAfter {
                anchor: "      case myBLBit | myM0Bit | ScoreBit | PriorityBit:\n      {\n",
                text: "#include \"tia/object_span_call.inc\"\n",
            },
            Edit::InsertAfter {
                anchor: "      case myBLBit | myM1Bit | ScoreBit:\n      {\n",
                text: "#include \"tia/object_span_call.inc\"\n",
            },
            Edit::InsertAfter {
                anchor: "      case myBLBit | myM1Bit | ScoreBit | PriorityBit:\n      {\n",
                text: "#include \"tia/object_span_call.inc\"\n",
            },
            Edit::InsertAfter {
                anchor: "      case myBLBit | myP1Bit | ScoreBit:\n      {\n",
                text: "#include \"tia/object_span_call.inc\"\n",
            },
            Edit::InsertAfter {
                anchor: "      case myBLBit | myP1Bit | PriorityBit | ScoreBit:\n      {\n",
                text: "#include \"tia/object_span_call.inc\"\n",
            },
            Edit::InsertAfter {
                anchor: "      case myPFBit | myP0Bit:\n      {\n",
                text: "#include \"tia/object_span_call.inc\"\n",
            },
            Edit::InsertAfter {
                anchor: "      case myPFBit | myP0Bit | PriorityBit:\n      {\n",
                text: "#include \"tia/object_span_call.inc\"\n",
            },
            Edit::InsertAfter {
                anchor: "      case myPFBit | myP1Bit:\n      {\n",
                text: "#include \"tia/object_span_call.inc\"\n",
            },
            Edit::InsertAfter {
                anchor: "      case myPFBit | myP1Bit | PriorityBit:\n      {\n",
                text: "#include \"tia/object_span_call.inc\"\n",
            },
            Edit::InsertAfter {
                anchor: "      case myPFBit | myBLBit | PriorityBit:\n      {\n",
                text: "#include \"tia/object_span_call.inc\"\n",
            },
            Edit::InsertBefore {
                anchor: "  myFramePointer = ending;\n}\n",
                text: "#include \"tia/scanline_end.inc\"\n",
            },
        ],
    },
    // Spans of plain background or in VBLANK (ALE's two memset cases of updateFrameScanline, 69% of
    // its calls in Pong) are filled in updateFrame without the call, whose entry and exit cost 62
    // instructions a span (src/ffi/tia/background_span.inc). Measured (callgrind): 5.5% fewer
    // instructions in Pong, 2.6% in Seaquest, 1.6% in Space Invaders; CPU time 1.06x on Pong. The
    // HMOVE blanks' commonest count as one store (src/ffi/tia/hmove_blanks.inc).
    FilePatch {
        file: "ale/emucore/TIA.cxx",
        scope: None,
        edits: &[
            Edit::InsertAfter {
                anchor: "          clocksFromStartOfScanLine - HBLANK);\n",
                text: "#include \"tia/background_span.inc\"\n",
            },
            Edit::InsertBefore {
                anchor: "      std::memset(oldFramePointer, 0, blanks);\n",
                text: "#include \"tia/hmove_blanks.inc\"\n",
            },
            Edit::Remove { anchor: "      std::memset(oldFramePointer, 0, blanks);\n" },
        ],
    },
    // Writes to PF0-PF2, GRP0, GRP1, ENAM0, ENAM1 and ENABL that change nothing skip TIA::poke's
    // updateFrame and case; writes whose case leaves the frame alone (WSYNC, audio, motion) and reads
    // of the input ports skip the updateFrame: they leave the frame to be drawn by the next update
    // that comes first (src/ffi/tia/unchanged_writes.inc, peek_pending.inc, pending_clock.inc and
    // draw_pending.inc say how and why).
    FilePatch {
        file: "ale/emucore/TIA.hxx",
        scope: None,
        edits: &[Edit::InsertAfter {
            anchor: "    uint8_t myEnabledObjects;\n",
            text: "#include \"tia/pending_clock.inc\"\n#include \"tia/object_spans_member.inc\"\n",
        }],
    },
    FilePatch {
        file: "ale/emucore/TIA.cxx",
        scope: None,
        edits: &[
            Edit::InsertBefore {
                anchor: "void TIA::poke(uint16_t addr, uint8_t value)\n",
                text: "#include \"tia/unchanged_writes.inc\"\n",
            },
            Edit::Remove { anchor: "void TIA::poke(uint16_t addr, uint8_t value)\n" },
            Edit::InsertBefore {
                anchor: "  // Update frame to current CPU cycle before we make any changes!\n  updateFrame(clock + delay);\n",
                text: "#include \"tia/frame_alone_writes.inc\"\n",
            },
            Edit::Remove {
                anchor: "  // Update frame to current CPU cycle before we make any changes!\n  updateFrame(clock + delay);\n",
            },
            Edit::InsertBefore {
                anchor: "  updateFrame(mySystem->cycles() * 3);\n",
                text: "#include \"tia/peek_pending.inc\"\n",
            },
            Edit::Remove { anchor: "  updateFrame(mySystem->cycles() * 3);\n" },
            Edit::InsertAfter { anchor: "void TIA::update()\n{\n", text: "#include \"tia/draw_pending.inc\"\n" },
            Edit::InsertAfter {
                anchor: "  mySystem->m6502().execute(25000);\n",
                text: "#include \"tia/draw_pending.inc\"\n",
            },
            Edit::InsertAfter {
                anchor: "bool TIA::save(Serializer& out)\n{\n",
                text: "#include \"tia/draw_pending.inc\"\n",
            },
            Edit::InsertAfter {
                anchor: "bool TIA::load(Deserializer& in)\n{\n",
                text: "#include \"tia/draw_pending.inc\"\n",
            },
        ],
    },
    // updateFrame inlined into its callers by clang too, as GCC does (src/ffi/tia/update_frame_inline.inc).
    FilePatch {
        file: "ale/emucore/TIA.cxx",
        scope: None,
        edits: &[Edit::InsertBefore {
            anchor: "inline void TIA::updateFrame(int clock)\n",
            text: "#include \"tia/update_frame_inline.inc\"\n",
        }],
    },
    // The colour registers as ALE's myColor elements, which its references are bound to, between
    // the constructor and the copy constructor (src/ffi/tia/color_members.inc).
    FilePatch {
        file: "ale/emucore/TIA.cxx",
        scope: None,
        edits: &[
            Edit::InsertBefore { anchor: "TIA::~TIA()\n", text: "#include \"tia/color_members.inc\"\n" },
            Edit::InsertBefore {
                anchor: "TIA::TIA(const TIA& c)\n",
                text: "#include \"tia/color_members_end.inc\"\n",
            },
        ],
    },
    // Spans of the playfield alone drawn by a function of their own (src/ffi/tia/playfield_span.inc).
    FilePatch {
        file: "ale/emucore/TIA.cxx",
        scope: None,
        edits: &[
            Edit::InsertAfter {
                anchor: "#include \"tia/background_span.inc\"\n",
                text: "#include \"tia/playfield_span_call.inc\"\n",
            },
            Edit::InsertBefore {
                anchor: "#include \"tia/update_frame_inline.inc\"\n",
                text: "#include \"tia/playfield_span.inc\"\n",
            },
        ],
    },
    // updateFrame's loop with the frame's fixed start and width as constants
    // (src/ffi/tia/frame_geometry.inc).
    FilePatch {
        file: "ale/emucore/TIA.cxx",
        scope: None,
        edits: &[Edit::InsertAfter {
            anchor: "inline void TIA::updateFrame(int clock)\n{\n",
            text: "#include \"tia/frame_geometry.inc\"\n",
        }],
    },
    // TIA::poke's delay for PF0-PF2 with one division by 3 instead of ALE's `% 228` and `/ 3`
    // (torchwmPokeDelay, src/ffi/tia/pending_clock.inc, which the writes that wait use too).
    FilePatch {
        file: "ale/emucore/TIA.cxx",
        scope: None,
        edits: &[
            Edit::InsertBefore {
                anchor: "  int16_t delay = ourPokeDelayTable[addr];\n",
                text: "  const int delay = torchwmPokeDelay(addr, clock);\n#if 0  // ALE's delay, as torchwmPokeDelay above\n",
            },
            Edit::InsertAfter { anchor: "    delay = d[(x / 3) & 3];\n  }\n", text: "#endif\n" },
        ],
    },
    // TIA::poke's scanline limit test without a division (src/ffi/tia/scanline_limit.inc): 0.5-0.7% fewer
    // instructions (callgrind) on the five benchmark games.
    FilePatch {
        file: "ale/emucore/TIA.cxx",
        scope: None,
        edits: &[
            Edit::InsertBefore {
                anchor: "  if(((clock - myClockWhenFrameStarted) / 228) > myMaximumNumberOfScanlines)\n",
                text: "#include \"tia/scanline_limit.inc\"\n#if 0  // ALE's test, replaced by tia/scanline_limit.inc above\n",
            },
            Edit::InsertAfter {
                anchor: "  if(((clock - myClockWhenFrameStarted) / 228) > myMaximumNumberOfScanlines)\n",
                text: "#endif\n",
            },
        ],
    },
    // The clock of the scanline limit kept with the frame's clocks (src/ffi/tia/pending_clock.inc,
    // torchwmSetScanlineLimit): after each assignment to myClockStopDisplay, which follows
    // myClockWhenFrameStarted's in all four functions that set it.
    FilePatch {
        file: "ale/emucore/TIA.cxx",
        scope: Some(("void TIA::frameReset()\n", "void TIA::install(System& system)\n")),
        edits: &[
            Edit::InsertAfter {
                anchor: "  myClockStopDisplay = myClockWhenFrameStarted + myStopDisplayOffset;\n",
                text: SET_SCANLINE_LIMIT,
            },
            Edit::InsertAfter { anchor: "  myClockStopDisplay -= clocks;\n", text: SET_SCANLINE_LIMIT },
        ],
    },
    FilePatch {
        file: "ale/emucore/TIA.cxx",
        scope: Some(("bool TIA::load(Deserializer& in)\n", "inline void TIA::endFrame()\n")),
        edits: &[
            Edit::InsertAfter { anchor: "    myClockStopDisplay = (int) in.getInt();\n", text: SET_SCANLINE_LIMIT },
            Edit::InsertAfter {
                anchor: "  myClockStopDisplay = myClockWhenFrameStarted + myStopDisplayOffset;\n",
                text: SET_SCANLINE_LIMIT,
            },
        ],
    },
    // HMOVEs that move nothing leave the masks alone (src/ffi/tia/hmove_still.inc), with a member that
    // says when the masks are HMOVE's (tia/hmove_still_member.inc): set by HMOVE, cleared by the writes
    // that can make them others.
    FilePatch {
        file: "ale/emucore/TIA.hxx",
        scope: None,
        edits: &[Edit::InsertAfter {
            anchor: "    uint8_t myEnabledObjects;\n",
            text: "#include \"tia/hmove_still_member.inc\"\n",
        }],
    },
    FilePatch {
        file: "ale/emucore/TIA.cxx",
        scope: None,
        edits: &[
            Edit::InsertAfter {
                anchor: "  myLastHMOVEClock = 0;\n  myHMOVEBlankEnabled = false;\n",
                text: MASKS_ARE_OTHERS,
            },
            Edit::InsertAfter { anchor: "    myPOSBL = (int16_t) in.getInt();\n", text: MASKS_ARE_OTHERS },
            // RESP0/RESP1 set a mask that skips the first copy unless `when` is -1.
            Edit::InsertAfter {
                anchor: "      int8_t when = ourPlayerPositionResetWhenTable[myNUSIZ0 & 7][myPOSP0][newx];\n",
                text: RESET_MAY_SKIP_A_COPY,
            },
            Edit::InsertAfter {
                anchor: "      int8_t when = ourPlayerPositionResetWhenTable[myNUSIZ1 & 7][myPOSP1][newx];\n",
                text: RESET_MAY_SKIP_A_COPY,
            },
            Edit::InsertAfter {
                anchor: "        myM0CosmicArkCounter = (myM0CosmicArkCounter + 1) & 3;\n",
                text: MASKS_ARE_OTHERS,
            },
            Edit::InsertBefore {
                anchor: "      myPOSP0 += ourCompleteMotionTable[x][myHMP0];\n",
                text: "#include \"tia/hmove_still.inc\"\n",
            },
            Edit::InsertBefore {
                anchor: "      // Remember what clock HMOVE occured at\n",
                text: "      myTorchwmMasksFollowPositions = true;\n",
            },
        ],
    },
    // The 6502's instruction loop keeps the CPU's registers in locals (src/ffi/cpu/execute.inc, which
    // replaces ALE's `execute`): GCC kept them in memory across every memory access.
    FilePatch {
        file: "ale/emucore/M6502Low.cxx",
        scope: None,
        edits: &[
            Edit::InsertBefore {
                anchor: "bool M6502Low::execute(uint32_t number)\n",
                text: "#if 0  // ALE's execute, replaced by cpu/execute.inc below\n",
            },
            Edit::InsertBefore {
                anchor: "void M6502Low::interruptHandler()\n",
                text: "#endif\n#include \"cpu/execute.inc\"\n\n",
            },
        ],
    },
    // ALE's RNG streams its std::mt19937 into saved states, in the C++ library's own text format; the
    // portable wheels link libc++, whose format is not libstdc++'s (ale_py's): src/ffi/rng/mt19937.h is
    // the same engine with libstdc++'s representation, so saved states are ale_py's bytes in every build.
    FilePatch {
        file: "ale/emucore/Random.cxx",
        scope: None,
        edits: &[
            Edit::InsertAfter { anchor: "#include <sstream>\n", text: "#include \"rng/mt19937.h\"\n" },
            Edit::InsertBefore {
                anchor: "  typedef std::mt19937 randgen_t;\n",
                text: "  typedef torchwm::Mt19937 randgen_t;\n",
            },
            Edit::Remove { anchor: "  typedef std::mt19937 randgen_t;\n" },
        ],
    },
    // The instruction loop does System::peek's page lookup inline itself, its device path out of line
    // (src/ffi/cpu/execute.inc, which says what it measured); it needs System's private members.
    FilePatch {
        file: "ale/emucore/System.hxx",
        scope: None,
        edits: &[Edit::InsertAfter {
            anchor: "    bool myDataBusLocked;\n",
            text: "#include \"cpu/system_friend.inc\"\n",
        }],
    },
    // ...and keeps a table of each page's direct read base less the page's address, which
    // setPageAccess keeps in step (src/ffi/cpu/system_page.inc).
    FilePatch {
        file: "ale/emucore/System.cxx",
        scope: None,
        edits: &[Edit::InsertAfter {
            anchor: "  myPageAccessTable[page] = access;\n",
            text: "#include \"cpu/system_page.inc\"\n",
        }],
    },
    // The instruction loop skips the iterations of timer wait loops (`LDA INTIM; BNE *-3`) whose reads
    // return the still-running timer's nonzero value, by the RIOT's own arithmetic
    // (src/ffi/cpu/timer_reads.inc; cpu/execute.inc says what it measured).
    FilePatch {
        file: "ale/emucore/M6532.hxx",
        scope: None,
        edits: &[Edit::InsertAfter {
            anchor: "    bool myTimerReadAfterInterrupt;\n",
            text: "#include \"cpu/timer_reads.inc\"\n",
        }],
    },
    // ALE's cloneState leaves out the actions that sticky actions repeat (the last ones applied), so a
    // restored env could repeat another env's action: torchwm's env states save and restore them too.
    FilePatch {
        file: "ale/environment/stella_environment.hpp",
        scope: None,
        edits: &[Edit::InsertAfter {
            anchor: "  StellaEnvironment(stella::OSystem* system, RomSettings* settings);\n",
            text: "#include \"ale_env/sticky_actions.inc\"\n",
        }],
    },
    // Without colour averaging, ALE's processScreen copies the finished frame (33,600 bytes) into
    // `m_screen` after every frame; the copy is made when the screen is read instead
    // (src/ffi/ale_env/lazy_screen.inc says why it is the same copy). processRAM copies the RIOT's
    // RAM pages where they are read directly, instead of 128 calls of System::peek
    // (src/ffi/ale_env/process_ram.inc).
    FilePatch {
        file: "ale/environment/stella_environment.hpp",
        scope: None,
        edits: &[
            Edit::InsertBefore {
                anchor: "  const ALEScreen& getScreen() const { return m_screen; }\n",
                text: "#include \"ale_env/lazy_screen.inc\"\n",
            },
            Edit::Remove { anchor: "  const ALEScreen& getScreen() const { return m_screen; }\n" },
        ],
    },
    FilePatch {
        file: "ale/environment/stella_environment.cpp",
        scope: None,
        edits: &[
            Edit::InsertBefore {
                anchor: "    std::memcpy(m_screen.getArray(),\n           m_osystem->console().mediaSource().currentFrameBuffer(),\n           m_screen.arraySize());\n",
                text: "#include \"ale_env/process_screen.inc\"\n",
            },
            Edit::Remove {
                anchor: "    std::memcpy(m_screen.getArray(),\n           m_osystem->console().mediaSource().currentFrameBuffer(),\n           m_screen.arraySize());\n",
            },
            Edit::InsertAfter {
                anchor: "void StellaEnvironment::processRAM() {\n",
                text: "#include \"ale_env/process_ram.inc\"\n",
            },
            Edit::InsertBefore {
                anchor: "void StellaEnvironment::processAudio(size_t i_frame) {\n",
                text: "#include \"ale_env/catch_up_screen.inc\"\n\n",
            },
            Edit::InsertBefore {
                anchor: "      m_screen_exporter->saveNext(m_screen);\n",
                text: "#include \"ale_env/export_screen.inc\"\n",
            },
            Edit::Remove { anchor: "      m_screen_exporter->saveNext(m_screen);\n" },
        ],
    },
];

/// Applies `patch` to `text` (the file's current content). Errors name the anchor that did not match
/// exactly once.
pub fn apply(patch: &FilePatch, text: &str) -> Result<String, String> {
    let (start, end) = match patch.scope {
        None => (0, text.len()),
        Some((first, last)) => {
            let start = find_once(text, first, "scope start")?;
            let end = find_once(text, last, "scope end")?;
            if end <= start {
                return Err(format!("scope end {last:?} comes before scope start {first:?}"));
            }
            (start, end)
        }
    };
    let mut scoped = text[start..end].to_string();
    for edit in patch.edits {
        let at = find_once(&scoped, edit.anchor(), "anchor")?;
        let anchor_end = at + edit.anchor().len();
        match edit {
            Edit::InsertAfter { text, .. } => scoped.insert_str(anchor_end, text),
            Edit::InsertBefore { text, .. } => scoped.insert_str(at, text),
            Edit::Remove { .. } => scoped.replace_range(at..anchor_end, ""),
        }
    }
    Ok(format!("{}{scoped}{}", &text[..start], &text[end..]))
}

fn find_once(haystack: &str, needle: &str, what: &str) -> Result<usize, String> {
    let found: Vec<usize> = haystack.match_indices(needle).map(|(at, _)| at).collect();
    match found[..] {
        [at] => Ok(at),
        _ => Err(format!("{what} {needle:?} occurs {} times, expected exactly once", found.len())),
    }
}
