// readyport/internal/thread_annotations.hpp: Clang thread-safety annotations. Internal.
//
// The macros of Abseil's thread_annotations.h under READYPORT_ names: with clang they let
// -Wthread-safety check at compile time that state marked READYPORT_GUARDED_BY(mu) is touched
// only with `mu` held and that a function marked READYPORT_REQUIRES(mu) is called only with it
// held; with other compilers they expand to nothing. Threading, lifetime, errors: none (macros).
#pragma once

#if defined(__clang__)
#define READYPORT_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define READYPORT_THREAD_ANNOTATION(x)
#endif

#define READYPORT_CAPABILITY(name) READYPORT_THREAD_ANNOTATION(capability(name))
#define READYPORT_SCOPED_CAPABILITY READYPORT_THREAD_ANNOTATION(scoped_lockable)
#define READYPORT_GUARDED_BY(x) READYPORT_THREAD_ANNOTATION(guarded_by(x))
#define READYPORT_PT_GUARDED_BY(x) READYPORT_THREAD_ANNOTATION(pt_guarded_by(x))
#define READYPORT_REQUIRES(...) READYPORT_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define READYPORT_EXCLUDES(...) READYPORT_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define READYPORT_ACQUIRE(...) READYPORT_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define READYPORT_RELEASE(...) READYPORT_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define READYPORT_NO_THREAD_SAFETY_ANALYSIS READYPORT_THREAD_ANNOTATION(no_thread_safety_analysis)
