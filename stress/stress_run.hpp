// stress/stress_run.hpp: one seed of readyport-stress.
//
// A seed names one whole run: the workload's parameters (drawn from SeedStream::kWorkload), the
// fake's buffer sizes, and the schedule (SimScheduler, SeedStream::kSchedule). A run builds
//   Engine(RecordingOs(FakeOs(SimScheduler)))  with a LifetimeOracle as the engine's observer,
// runs the echo workload (examples/echo_server.hpp) on worker threads, stops the engine and
// checks: every byte echoed, every connection closed, the oracle found nothing, and the fake is
// empty afterwards (no socket, registration, packet, port or waiter left).
//
//   readyport::SeedReport report = readyport::stress_run_seed(options, 42);
//   if (!report.status.ok()) puts(report.status.to_string().c_str());
//
// Ownership: the report owns its strings. A run that ends in a deadlock or at the step limit
// abandons its logical threads (sim_scheduler.hpp); their world (fake, engine) is then kept
// alive, unreachable from the report, until the process exits.
// Threading: call from one thread that no runtime started. Errors: in the report's status.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "echo_server.hpp"
#include "lifetime_oracle.hpp"
#include "readyport/fake/sim_scheduler.hpp"
#include "readyport/status.hpp"
#include "stress_options.hpp"

namespace readyport {

// What a seed draws, besides its schedule.
struct SeedParameters {
  std::uint64_t seed = 0;
  SimStrategy strategy = SimStrategy::kRandom;
  EchoWorkload workload;
  std::uint32_t batch_count = 64;           // EngineOptions::batch_count
  std::uint32_t receive_buffer_bytes = 0;   // FakeOptions::receive_buffer_bytes
};

// Draws a seed's parameters; a pure function of (options, seed).
SeedParameters stress_parameters(const StressOptions& options, std::uint64_t seed);
// One line, "seed=.. strategy=.. clients=.. ...", printed with every failure.
std::string stress_parameters_line(const SeedParameters& parameters);

struct SeedReport {
  SeedParameters parameters;
  Status status;             // ok, or the first thing that went wrong
  EchoCounts counts;         // the workload's and the engine's counters
  OracleCounts oracle;
  SimStats sim;              // zero in the free runtime
  std::string trace_hash;    // 16 hex digits ("" in the free runtime)
  std::uint64_t trace_lines = 0;
  std::vector<std::string> trace_tail;  // the last lines, kept for failure reports
  std::string trace_text;    // the full trace, only with StressOptions::trace
};

// Runs one seed as described above.
SeedReport stress_run_seed(const StressOptions& options, std::uint64_t seed);

// The one command that replays `report`'s seed, printed with each failure.
std::string stress_replay_command(const StressOptions& options, const SeedReport& report);

}  // namespace readyport
