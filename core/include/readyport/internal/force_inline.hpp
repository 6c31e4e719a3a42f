// readyport/internal/force_inline.hpp: READYPORT_FORCE_INLINE, for the few engine functions on
// the batch loop's path that run once per packet and have one or two callers (the engine is
// measured against a raw loop: core/test/engine_bench.cpp). Internal. Ownership, threading,
// lifetime, errors: none (a macro).
#pragma once

#if defined(__GNUC__)  // GCC, Clang, MinGW
#define READYPORT_FORCE_INLINE [[gnu::always_inline]] inline
#elif defined(_MSC_VER)
#define READYPORT_FORCE_INLINE __forceinline
#else
#define READYPORT_FORCE_INLINE inline
#endif
