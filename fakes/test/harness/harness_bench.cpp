// readyport-harness-bench: the harness's cost per seed, in seeds per CPU-second, of a
// two-connection echo scenario: the server under test (echo_under_test.hpp, no bug) with one echo
// client in the chaos phase and one in the liveness phase, faults drawn per seed, both oracles
// judging every line. A figure for README, not a test (it asserts nothing about time).
//
//   readyport-harness-bench [--seeds N]     (default 2000)
//
// Prints the CPU time (user + system, this process) and the seeds per CPU-second; exit 1 when a
// seed failed (the figure would not be of passing seeds).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#if !defined(_WIN32)
#include <sys/resource.h>
#endif

#include "planted_scenario.hpp"
#include "readyport/fake/harness.hpp"

namespace readyport::harness_test {
namespace {

// CPU seconds this process used so far (user + system); 0 where it cannot be told.
double cpu_seconds() {
#if !defined(_WIN32)
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
#else
  return 0;
#endif
}

int run(int argc, char** argv) {
  HarnessOptions options;
  options.seeds = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--seeds") == 0) {
      options.seeds = static_cast<std::uint32_t>(std::strtoul(argv[i + 1], nullptr, 10));
    }
  }
  options.test_name = "bench";
  const double cpu_before = cpu_seconds();
  const auto wall_before = std::chrono::steady_clock::now();
  const HarnessResult result = harness_run(options, [] {
    // Two connections: one echo client in the chaos phase, one in the liveness phase.
    return std::make_unique<PlantedScenario>(PlantedBug::kNone, 1);
  });
  const double cpu = cpu_seconds() - cpu_before;
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_before).count();
  std::printf(
      "readyport-harness-bench: %u seeds of a two-connection echo scenario (faults drawn, both "
      "oracles), %u passed\n  CPU %.2f s: %.0f seeds per CPU-second (%.0f us per seed); wall "
      "%.2f s\n",
      result.seeds_run, result.passed, cpu, cpu > 0 ? result.seeds_run / cpu : 0.0,
      result.seeds_run > 0 ? cpu * 1e6 / result.seeds_run : 0.0, wall);
  return result.ok() ? 0 : 1;
}

}  // namespace
}  // namespace readyport::harness_test

int main(int argc, char** argv) { return readyport::harness_test::run(argc, argv); }
