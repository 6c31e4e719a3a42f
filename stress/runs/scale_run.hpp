// stress/runs/scale_run.hpp: readyport-stress --scale, the engine at scale.
//
// One seed's world (stress_run.hpp: Engine(FaultyOs(RecordingOs(FakeOs))) under the runtime of
// --runtime, the oracle judging every trace line) with a workload of its own size instead of a
// drawn one: --connections N (client and server ends together: N / 2 echo clients, all open at
// once at the peak) on --workers W engine workers, a short chaos phase of closes, notifies and
// posts racing the echo traffic, then the liveness phase (fresh clients echoed in full, stop()).
// Faults are off: every client must be echoed in full. What a seed still draws: the mode, the
// batch size, the fake's reading of the spec's open questions (the swarm), the schedule.
// The limits the main job keeps small are raised to fit N, each explicit:
//   EngineOptions::connections_max   N + kScaleTableSpare (the listener, the liveness clients)
//   FakeOptions::sockets_max         N + kScaleSocketsSpare
//   FakeOptions::backlog_max         N / 2 (every client's connect queued before one accept)
//   StressOptions::steps_max         at least kScaleStepsPerConnection * N
// --connections stops at kStressScaleConnectionsMax (20,000): each client binds one of the fake's
// 16,384 ephemeral ports (fake_socket.hpp; the fake finds the lowest free one in a bitmap, so
// the time per connection stays flat as N grows: README's --scale table).
// Under --runtime free the engine's threads are real (the ThreadSanitizer build checks them).
//
//   int exit_status = stress_scale_main(options);   // prints the figures of each seed
//
// Ownership: none kept. Threading: the process's main thread. Errors: the exit status, 0 when
// every seed passed, 1 otherwise (the failure printed as the main job prints it).
#pragma once

#include <cstdint>

#include "cli/stress_options.hpp"
#include "runs/stress_run.hpp"

namespace readyport {

// The scale world's parameters for `seed`: a pure function of (options, seed).
SeedParameters stress_scale_parameters(const StressOptions& options, std::uint64_t seed);
// The run options of a scale seed: `options` with the step budget raised to fit.
StressOptions stress_scale_run_options(const StressOptions& options);

int stress_scale_main(const StressOptions& options);

}  // namespace readyport
