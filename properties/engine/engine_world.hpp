// properties/engine/engine_world.hpp: runs one engine property case (engine_commands.hpp) in a
// World (readyport/fake/world.hpp, the main job's too): Engine(FaultyOs(RecordingOs(FakeOs))) under
// SimScheduler, with a LifetimeOracle as the trace's sink, and judges it.
//
//   readyport::properties::EngineRunResult r = readyport::properties::run_engine_case(c);
//   if (!r.status.ok()) std::cout << r.status.to_string() << " after step " << r.failed_step;
//
// The run: the engine is started with `workers` run_worker() threads; the main logical thread
// executes the commands in order, writing the `wl.*` lines the oracle reads (handlers write
// `hnd.*`; each public call as an interval: `wl.begin` before, its end line after), and after each
// command reads the oracle's status and the echo model; the first failure ends the commands.
// Then the parallel branches, if any (docs/properties.md "Parallel commands"): each on a logical
// thread of its own (Os::thread_start), interleaved with the workers by the scheduler, joined,
// and their API results judged by the interleaving check (engine_parallel.hpp, rule
// "parallel"); peer state and the connection list are shared under an Os mutex meanwhile.
// Then the liveness phase: the director reads its peers until every
// connection still open (not closed by the case, not shut down or reset by its peer) has echoed
// every byte, within bounded virtual time; stop(); the workers are joined; the peers closed;
// oracle.finish(); on_closed exactly once per successful add; then World's end checks: no live
// connection, as many REMOVEs found lost as the fake dropped, and the fake holds nothing.
//
// Isolation: the engine asserts its contracts (and a planted canary can trip them), which
// aborts. On POSIX the case runs in a forked child (run_engine_case_isolated), so an abort is a
// failed case ("aborted: <the assertion>") that RapidCheck can shrink. Elsewhere it runs in
// process.
// Ownership: returns values; nothing outlives the call (a run that did not complete leaks its
// world: its threads still point into it). Threading: call from a thread that is not a logical
// thread of a scheduler. Errors: in the result, never thrown.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include "engine_case.hpp"
#include "readyport/fake/fault_plan.hpp"
#include "readyport/fake/lifetime_oracle.hpp"
#include "readyport/status.hpp"

namespace readyport::properties {

struct EngineRunResult {
  Status status;                  // ok, or the first failure
  std::int32_t failed_step = -1;  // the command after which it failed; -1: none or the end
  std::string rule;  // "O2", ..., "echo", "closed", "liveness", "abort", "leak", "run", "parallel",
                     // "unjudged" (the oracle could not judge all it met)
  // What the case reached (for RC_CLASSIFY and the coverage table).
  std::array<std::uint64_t, kFaultSiteCount> fired{};
  std::uint64_t quarantined = 0;      // EngineStats::quarantined
  std::uint64_t removes_refused = 0;  // OracleCounts::removes_refused
  std::uint32_t modes_added = 0;      // bit (1 << mode) per mode successfully added
  std::uint32_t adds_ok = 0;
  std::uint32_t closes_inside = 0;
  std::uint32_t echoed_connections = 0;  // survivors whose echo was checked
  std::uint64_t steps = 0;               // scheduler steps
  // The parallel branches (docs/properties.md "Parallel commands"): how many ran, how many API
  // steps the interleaving check judged, and how many of them returned not_found.
  std::uint32_t branches_run = 0;
  std::uint32_t branch_steps = 0;
  std::uint32_t branch_not_found = 0;
  OracleJudgement judgement;  // the oracle's per-rule counts (OracleCounts)
};

// Runs `engine_case` in this process. `on_violation`, when set, is called once with the oracle's
// first violation as soon as it is found (from the thread that wrote the line, under the trace's
// mutex: it must not record), so that a caller can keep it even if the run then aborts.
EngineRunResult run_engine_case(const EngineCase& engine_case,
                                const std::function<void(const Status&)>& on_violation = {});
// Runs it in a forked child where fork exists (see "Isolation"), else as run_engine_case.
EngineRunResult run_engine_case_isolated(const EngineCase& engine_case);

// The rule a status names: "O<n>" when the oracle's sentence starts so, else `fallback`.
std::string rule_of(const Status& status, const std::string& fallback);

}  // namespace readyport::properties
