// fakes/test/support/sim_scenario.hpp: the standard multi-threaded scenario of the sim tests.
//
// Three dequeuer threads wait on one completion port (ProcessSocketNotifications, batches of 2,
// re-arming the sockets they drained in their next call, as the engine does) while a producer
// thread posts packets, sends datagrams to four registered UDP sockets and (re-)registers them,
// in an order drawn from the workload stream; at the end it posts one stop packet per dequeuer.
// Dequeuers count what they see under an Os mutex. Every choice of the workload comes from
// SeedStreams(seed).stream(kWorkload), every choice of the schedule from kSchedule: the same
// workload runs under every strategy.
//
// It checks its own invariants (every posted packet is dequeued exactly once, no datagram is
// received twice, every dequeuer sees a stop) and returns a Status naming the first broken one.
//
//   readyport::ScenarioRunOptions options;
//   options.seed = 42;
//   readyport::ScenarioRunResult result = readyport::run_standard_scenario(options);
//   std::printf("%s\n", readyport::hash_hex(result.hash).c_str());
//
// The tests, readyport-sim-trace and readyport-sim-bench use it; ci/compare_traces.sh compares
// its traces between builds.
//
// Ownership: plain values. Threading: run_standard_scenario() may be called from any thread that
// is not a logical thread; each call builds its own scheduler, FakeOs and trace.
// Errors: in the result's Status (the scheduler's deadlock or step limit, or a broken invariant).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "readyport/fake/rng.hpp"
#include "readyport/fake/sim_scheduler.hpp"
#include "readyport/fake/trace.hpp"
#include "readyport/os.hpp"
#include "readyport/status.hpp"

namespace readyport {

// The shape of the workload (not random: the seed decides only the order of things).
struct ScenarioShape {
  std::uint32_t dequeuers = 3;          // threads waiting on the port, 1..16
  std::uint32_t sockets = 4;            // UDP sockets registered with the port, 1..64
  std::uint32_t producer_actions = 12;  // posts, sends and registrations, in a seeded order
  std::uint32_t batch = 2;              // completion_count of each dequeuer call, 1..16
  std::uint32_t timeout_ms = 5;         // each dequeuer call's timeout
  std::uint32_t loops_max = 400;        // calls per dequeuer at most (then: an invariant breaks)
};

// What the threads saw.
struct ScenarioCounts {
  std::uint32_t posted = 0;           // data packets posted by the producer
  std::uint32_t posted_dequeued = 0;  // of those, dequeued
  std::uint32_t datagrams_sent = 0;
  std::uint32_t datagrams_received = 0;
  std::uint32_t socket_packets = 0;  // socket notification packets dequeued
  std::uint32_t stops_seen = 0;      // stop packets consumed (one per dequeuer)
  std::uint32_t timeouts = 0;        // dequeuer calls that returned WAIT_TIMEOUT
};

// Runs the scenario's main body on the calling thread, which must be a thread of `os`'s runtime
// that may start threads (SimScheduler::run's body, or any thread with a FreeRuntime).
// `workload` supplies every workload choice. Returns the first broken invariant, if any.
Status standard_scenario_body(Os& os, Rng& workload, const ScenarioShape& shape,
                              ScenarioCounts* counts_out);

struct ScenarioRunOptions {
  std::uint64_t seed = 0;  // the master seed: schedule and workload streams
  // Draw the workload from this master seed's stream instead (same workload, other schedules).
  std::optional<std::uint64_t> workload_seed;
  SimStrategy strategy = SimStrategy::kRandom;
  std::uint32_t pct_depth = 3;
  std::uint64_t pct_steps_estimate = 120;  // about the steps of one run of the default shape
  std::uint64_t steps_max = 200'000;
  // kDelayBounded's delays and kFair's window (SimOptions), for the strategies that use them.
  std::uint32_t delay_bound = 2;
  std::uint64_t fair_window = 64;
  // How the logical threads run: the trace and schedule are the same under either.
  SimMechanism mechanism = sim_mechanism_default();
  TraceOptions trace;  // keep_full for the text, or only the hash and a tail
  ScenarioShape shape;
};

struct ScenarioRunResult {
  Status status;  // ok, the scheduler's report, or a broken invariant
  SimOutcome outcome = SimOutcome::kNotRun;
  SimStats stats;
  ScenarioCounts counts;
  std::string parameters;         // SimScheduler::parameters()
  std::uint64_t hash = 0;         // the trace's FNV-1a 64
  std::uint64_t lines = 0;        // the trace's line count
  std::string text;               // the full trace (only with trace.keep_full)
  std::vector<std::string> tail;  // the last trace.tail_lines_max lines
};

// Runs the scenario once under a SimScheduler: SimScheduler -> FakeOs -> RecordingOs, with the
// scheduler's and the calls' events in one Trace.
ScenarioRunResult run_standard_scenario(const ScenarioRunOptions& options);

}  // namespace readyport
