// readyport/internal/force_inline.hpp: READYPORT_FORCE_INLINE, for the few functions on a hot
// path that run once per packet or per trace event and have one or two callers (the engine is
// measured against a raw loop: core/test/engine_bench.cpp; the simulation by
// ci/bench_main_job.sh), and READYPORT_NOINLINE, for the rare branch split out of such a
// function so that its common path stays small. Internal. Ownership, threading, lifetime,
// errors: none (macros).
#pragma once

#if defined(__GNUC__)  // GCC, Clang, MinGW
#define READYPORT_FORCE_INLINE [[gnu::always_inline]] inline
#define READYPORT_NOINLINE [[gnu::noinline]]
#elif defined(_MSC_VER)
#define READYPORT_FORCE_INLINE __forceinline
#define READYPORT_NOINLINE __declspec(noinline)
#else
#define READYPORT_FORCE_INLINE inline
#define READYPORT_NOINLINE
#endif
