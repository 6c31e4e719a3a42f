// stress/runs/real_os_run.hpp: one seed of `readyport-stress --os windows`: the chaos workload on
// the engine over a real Os (WindowsOs: real loopback TCP sockets, real threads from
// WindowsOs::thread_start, the OS's clock), judged by what a real OS lets one check.
//
// The world, in construction order:
//   Engine(FaultyOs(RecordingOs(SocketLedgerOs(real Os))))
// with a TraceObserver on the engine, every trace line read by the LifetimeOracle (every rule
// judged; RecordingOs writes begin lines before the real calls), threads numbered by
// CountingTraceContext and time 0 (the sequence orders events). The OS schedules the threads: a
// seed reproduces the workload and the fault plan, never the interleaving.
//
// What the seed draws (stress_parameters_real): the simulated run's parameters for the same seed
// (stress_parameters), adapted to a real OS:
//   - the fault plan keeps only kRealOsFaultSites (real_os_run.cpp says why for each site);
//   - behind-the-back closes are left out: Windows reuses socket values, and whether a REMOVE
//     already applied is delivered after closesocket is an open question (chaos_workload.hpp);
//   - the fake's switches (swarm over spec "Fake defaults") do not apply: Windows answers them;
//   - the liveness bounds are real milliseconds, capped by what is left of --seconds-max;
//   - clients and raw peers are capped by what is left of --connections-max.
// The end checks that need the fake's ground truth are replaced by: the oracle's verdict, the
// workload's checks, no live engine connection after stop(), and every socket and port opened
// through the world closed again (SocketLedgerOs).
//
//   auto os = stress_windows_os_create();                  // kUnavailable under Wine
//   RealOsBudget budget{connections_left, ms_left};
//   Result<SeedParameters> p = stress_parameters_real(options, seed, budget);
//   SeedReport report = stress_run_seed_real(options, p.value(), *os.value());
//
// Ownership: the report owns its strings; the Os is borrowed and must outlive the call.
// Threading: call from one thread; the run starts and joins its own threads. Errors: the
// report's status (as stress_run.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cli/stress_options.hpp"
#include "readyport/fake/fault_plan.hpp"
#include "readyport/os.hpp"
#include "readyport/status.hpp"
#include "runs/stress_run.hpp"

namespace readyport {

// What is left of the run's bounds when a seed starts.
struct RealOsBudget {
  std::uint32_t connections_left = 0;  // clients and raw peers this seed may open at most
  std::uint32_t ms_left = 0;           // wall-clock milliseconds left of --seconds-max
};

// The fault sites a run on a real OS draws from (all but what a real OS cannot honour).
std::vector<FaultSite> stress_real_os_fault_sites();

// The seed's parameters for a real OS (above). kResourceExhausted when the budget cannot hold
// the smallest run of this seed (the liveness clients and one chaos client, a few seconds).
Result<SeedParameters> stress_parameters_real(const StressOptions& options, std::uint64_t seed,
                                              const RealOsBudget& budget);

// Runs one seed as described above on `os`.
SeedReport stress_run_seed_real(const StressOptions& options, const SeedParameters& parameters,
                                Os& os);

// WindowsOs::create() (requiring ProcessSocketNotifications) as an Os. Where the call is missing
// (Wine, Windows before build 20348): WindowsOs's kUnavailable status. In a non-Windows build:
// kFailedPrecondition naming the build (the command line refuses --os windows there first).
Result<std::unique_ptr<Os>> stress_windows_os_create();

}  // namespace readyport
