#include "jobs/run_figures.hpp"

#include <cstdio>
#include <string_view>

namespace readyport {
namespace {

std::uint64_t coverage_row(const SeedReport& report, std::string_view name) {
  for (const auto& [row, count] : report.coverage) {
    if (row == name) {
      return count;
    }
  }
  return 0;
}

}  // namespace

void stress_figures_add(StressFigures& figures, const SeedReport& report) {
  figures.notifications += report.engine.notifications;
  figures.port_calls += report.engine.port_calls;
  const std::uint64_t ored = coverage_row(report, "remove_ored_with_in");
  figures.remove_ored_with_in += ored;
  // Every REMOVE packet the oracle saw; the OR-ed ones are among them.
  figures.remove_separate +=
      report.oracle.removes_seen >= ored ? report.oracle.removes_seen - ored : 0;
  figures.stale_packets += coverage_row(report, "stale_packet_dequeued");
}

double stress_figures_per_notification(const StressFigures& figures) {
  return figures.notifications == 0
             ? 0.0
             : static_cast<double>(figures.port_calls) / static_cast<double>(figures.notifications);
}

void stress_figures_print(const StressOptions& options, const StressFigures& figures) {
  using ull = unsigned long long;
  std::printf("\nfigures (os %s; the engine's counts, and the oracle's reading of the trace)\n",
              stress_os_name(options.os));
  std::printf("  notifications          %llu\n", static_cast<ull>(figures.notifications));
  std::printf("  port calls             %llu (%.3f per notification)\n",
              static_cast<ull>(figures.port_calls), stress_figures_per_notification(figures));
  std::printf("  REMOVE or-ed with IN   %llu\n", static_cast<ull>(figures.remove_ored_with_in));
  std::printf("  REMOVE separate        %llu\n", static_cast<ull>(figures.remove_separate));
  std::printf("  stale packets          %llu\n", static_cast<ull>(figures.stale_packets));
}

}  // namespace readyport
