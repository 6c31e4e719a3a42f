// fakes/test/seed_env.hpp: READYPORT_SEED, one seed instead of a simulation test's loop.
//
// The GoogleTest simulation tests (fakes/test/sim_*_test.cpp, determinism_sim_test.cpp,
// stress/runs/stress_run_test.cpp) each loop over many seeds. A failure inside a loop names its
// seed and the one command that runs that seed alone:
//
//   seed=17; replay alone: READYPORT_SEED=17 build/default/fakes/test/readyport_sim_test
//       --gtest_filter=SimFake.PortWaitsEndAtTheirExactVirtualDeadlineOrWhenAPacketArrives
//
// READYPORT_SEED (environment variable):
// - unset: every loop runs as it always did;
// - a decimal unsigned 64-bit number (digits only, at most 18446744073709551615): every
//   seed-looping test runs exactly that seed, with the same per-seed assertions. Checks made over
//   the whole loop (how many distinct traces the seeds gave, "a deadlock is found within 200
//   seeds", a statistical comparison of strategies, counts summed over 40 seeds) mean nothing for
//   one seed: they are not made, and the test prints a line saying which check was left out;
// - anything else ("-5", "12x", "0x10", " 7", empty, a number past 2^64-1): every seed-looping
//   test fails with a message quoting the value. Never a silent default.
// Tests that use fixed seeds, not loops, ignore it.
//
//   const test::SeedLoop seeds = test::seed_loop(0, 20);  // seeds 0..19, or READYPORT_SEED
//   ASSERT_TRUE(seeds.ok()) << seeds.error();
//   for (const std::uint64_t seed : seeds.seeds()) {
//     SCOPED_TRACE(test::seed_replay(seed));  // on every failure inside the loop
//     ...per-seed assertions...
//   }
//   if (seeds.whole_loop()) EXPECT_GE(distinct, 19u); else seeds.note_skipped("distinct >= 19");
//
// Ownership: plain values. Threading: call from the test's own thread (the replay line reads the
// running test's name). Errors: a bad READYPORT_SEED is reported through ok()/error(), for the
// caller's ASSERT; nothing asserts or aborts.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace readyport::test {

inline constexpr const char* kSeedEnvName = "READYPORT_SEED";

// Decimal digits only, no sign or spaces, fitting in 64 bits. False for anything else.
inline bool parse_seed_decimal(std::string_view text, std::uint64_t* seed_out) {
  if (text.empty()) {
    return false;
  }
  std::uint64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') {
      return false;
    }
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
      return false;
    }
    value = value * 10 + digit;
  }
  *seed_out = value;
  return true;
}

// READYPORT_SEED's text, or nullopt when it is not set.
inline std::optional<std::string> seed_env_text() {
#ifdef _MSC_VER  // MSVC and clang-cl: std::getenv is "unsafe" (C4996, an error with /WX)
  char* value = nullptr;
  std::size_t size = 0;
  if (_dupenv_s(&value, &size, kSeedEnvName) != 0 || value == nullptr) {
    return std::nullopt;
  }
  std::string text(value);
  std::free(value);
  return text;
#else
  const char* value = std::getenv(kSeedEnvName);
  if (value == nullptr) {
    return std::nullopt;
  }
  return std::string(value);
#endif
}

// The seeds a test loops over: its own, or READYPORT_SEED's one.
class SeedLoop {
 public:
  SeedLoop(std::vector<std::uint64_t> seeds, bool whole_loop, std::string error)
      : seeds_(std::move(seeds)), whole_loop_(whole_loop), error_(std::move(error)) {}

  // False when READYPORT_SEED is malformed; error() says why, seeds() is empty.
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  const std::vector<std::uint64_t>& seeds() const { return seeds_; }
  // True when the test's own seeds run (READYPORT_SEED unset): checks over the loop apply.
  bool whole_loop() const { return whole_loop_; }
  // Prints that the loop-wide check `what` was not made (READYPORT_SEED chose one seed).
  void note_skipped(std::string_view what) const {
    std::printf("[ seed     ] %s=%llu: not checked (needs the whole loop of seeds): %.*s\n",
                kSeedEnvName, static_cast<unsigned long long>(seeds_.empty() ? 0 : seeds_.front()),
                static_cast<int>(what.size()), what.data());
  }

 private:
  std::vector<std::uint64_t> seeds_;
  bool whole_loop_;
  std::string error_;
};

// `seeds` (the test's own list), or READYPORT_SEED's one seed when it is set.
inline SeedLoop seed_loop(std::vector<std::uint64_t> seeds) {
  const std::optional<std::string> text = seed_env_text();
  if (!text.has_value()) {
    return SeedLoop(std::move(seeds), true, "");
  }
  std::uint64_t seed = 0;
  if (!parse_seed_decimal(*text, &seed)) {
    // Appended, not a chain of operator+: g++ 12 reports a false -Warray-bounds inside
    // libstdc++'s operator+ of a temporary string when the headers come precompiled.
    std::string error(kSeedEnvName);
    error += "='";
    error += *text;
    error +=
        "' is not a decimal unsigned 64-bit number (digits only, at most "
        "18446744073709551615); unset it to run every seed";
    return SeedLoop({}, false, std::move(error));
  }
  return SeedLoop({seed}, false, "");
}

inline SeedLoop seed_loop(std::initializer_list<std::uint64_t> seeds) {
  return seed_loop(std::vector<std::uint64_t>(seeds));
}

// Seeds first, first + 1, ..., first + count - 1 (count <= 1,000,000), or READYPORT_SEED's.
inline SeedLoop seed_loop(std::uint64_t first, std::uint64_t count) {
  constexpr std::uint64_t kCountMax = 1'000'000;  // a loop's seeds are held in a vector
  if (count > kCountMax) {
    return SeedLoop({}, false, "seed_loop: more than " + std::to_string(kCountMax) + " seeds");
  }
  std::vector<std::uint64_t> seeds;
  seeds.reserve(static_cast<std::size_t>(count));
  for (std::uint64_t k = 0; k < count; ++k) {
    seeds.push_back(first + k);
  }
  return seed_loop(std::move(seeds));
}

// "seed=<s>; replay alone: READYPORT_SEED=<s> <this binary> --gtest_filter=<running test>", for
// SCOPED_TRACE. The binary is argv[0] as the test was started (GoogleTest keeps it; its accessor
// is in testing::internal, stable since GoogleTest 1.8).
inline std::string seed_replay(std::uint64_t seed) {
  const std::vector<std::string> argv = ::testing::internal::GetArgvs();
  const std::string binary = argv.empty() ? "<test binary>" : argv.front();
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string filter =
      info == nullptr ? "<test>" : std::string(info->test_suite_name()) + "." + info->name();
  const std::string text = std::to_string(seed);
  return "seed=" + text + "; replay alone: " + kSeedEnvName + "=" + text + " " + binary +
         " --gtest_filter=" + filter;
}

}  // namespace readyport::test
