// stress/jobs/run_figures.hpp: the figures of a run, the same for
// --os fake and --os windows: how many notifications the engine handled, how many port calls
// (PSN and GQCS) it made for them, and, from the LifetimeOracle's reading of the recorded trace,
// how REMOVE packets arrived and how many stale packets were dequeued.
//   notifications                 EngineStats::notifications
//   port_calls                    EngineStats::port_calls
//   remove_ored_with_in           REMOVE packets whose mask also held IN (the oracle's coverage
//                                 row remove_ored_with_in)
//   remove_separate               the other REMOVE packets (OracleCounts::removes_seen minus
//                                 the above): a REMOVE on its own, or OR-ed with OUT/HANGUP only
//   stale_packets                 socket packets dequeued for a registration its socket's close
//                                 had ended (the coverage row stale_packet_dequeued)
//
//   StressFigures figures;
//   stress_figures_add(figures, report);            // every seed of the range
//   stress_figures_print(options, figures);         // the text block after the summary
//
// Ownership: values. Threading: one thread. Errors: none.
#pragma once

#include <cstdint>

#include "cli/stress_options.hpp"
#include "runs/stress_run.hpp"

namespace readyport {

struct StressFigures {
  std::uint64_t notifications = 0;
  std::uint64_t port_calls = 0;
  std::uint64_t remove_ored_with_in = 0;
  std::uint64_t remove_separate = 0;
  std::uint64_t stale_packets = 0;
};

void stress_figures_add(StressFigures& figures, const SeedReport& report);
// port_calls / notifications; 0 when there were no notifications.
double stress_figures_per_notification(const StressFigures& figures);
// "figures (os fake): ..." and one line per figure on stdout.
void stress_figures_print(const StressOptions& options, const StressFigures& figures);

}  // namespace readyport
