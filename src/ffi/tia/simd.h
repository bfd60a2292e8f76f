// Intrinsics for tia/mixed_objects.inc, included at the top of ALE's TIA.cxx (see build/ale_edits.rs).
#ifndef TORCHWM_TIA_SIMD_H
#define TORCHWM_TIA_SIMD_H
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#endif
