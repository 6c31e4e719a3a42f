// readyport/assert.hpp: contracts that hold in every build.
//
// READYPORT_ASSERT(cond) checks a broken invariant or a misused contract, in every build type
// (NDEBUG does not remove it). On failure it prints the file, line and condition to stderr and
// aborts. OS failures are never asserted: they are returned as Status (see status.hpp).
// Threading: callable from any thread. Cost: one predictable branch.
#pragma once

namespace readyport::internal {
[[noreturn]] void assert_fail(const char* condition, const char* file, int line);
}  // namespace readyport::internal

#define READYPORT_ASSERT(condition)                                       \
  do {                                                                    \
    if (!(condition)) [[unlikely]] {                                      \
      ::readyport::internal::assert_fail(#condition, __FILE__, __LINE__); \
    }                                                                     \
  } while (false)

// Marks a branch that the surrounding state machine makes impossible.
#define READYPORT_UNREACHABLE() \
  ::readyport::internal::assert_fail("unreachable", __FILE__, __LINE__)
