#include "jobs/failure_report.hpp"

#include <cstdio>

#include "files/file_io.hpp"
#include "jobs/stress_shrink.hpp"

namespace readyport {

void stress_failure_print(const StressOptions& options, const SeedReport& report,
                          const std::string& bundle_path, const std::string& program) {
  using ull = unsigned long long;
  std::printf("FAIL seed %llu: %s\n", static_cast<ull>(report.parameters.seed),
              report.status.to_string().c_str());
  std::printf("  parameters: %s\n", stress_parameters_line(report.parameters).c_str());
  std::printf("  trace hash: %s (%llu lines)\n", report.trace_hash.c_str(),
              static_cast<ull>(report.trace_lines));
  if (!report.trace_tail.empty()) {
    std::printf("  last %zu of %llu trace lines:\n", report.trace_tail.size(),
                static_cast<ull>(report.trace_lines));
    for (const std::string& line : report.trace_tail) {
      std::printf("    %s", line.c_str());
    }
  }
  std::printf("  replay: %s\n", stress_replay_command(options, report, program).c_str());
  if (!bundle_path.empty()) {
    std::printf("  bundle: %s\n  replay the bundle: %s --replay %s\n", bundle_path.c_str(),
                program.c_str(), bundle_path.c_str());
  }
}

void stress_verbose_print(const SeedReport& report) {
  using ull = unsigned long long;
  std::printf(
      "seed %llu %s: %s | clients done %u cut %u refused %u, server %u, notifications "
      "%llu port_calls %llu quarantined %llu steps %llu trace %s (%llu lines)\n",
      static_cast<ull>(report.parameters.seed), report.status.ok() ? "ok" : "FAIL",
      stress_parameters_line(report.parameters).c_str(), report.counts.clients_done,
      report.counts.clients_cut, report.counts.clients_refused, report.counts.server_accepted,
      static_cast<ull>(report.engine.notifications), static_cast<ull>(report.engine.port_calls),
      static_cast<ull>(report.engine.quarantined), static_cast<ull>(report.sim.steps),
      report.trace_hash.c_str(), static_cast<ull>(report.trace_lines));
  if (report.counts.start_outlasted != 0) {
    std::printf(
        "  seed %llu: engine.start() or its threads were refused through every retry while faults "
        "fired: the chaos phase was skipped, the run went on with faults off\n",
        static_cast<ull>(report.parameters.seed));
  }
}

std::string stress_bundle_write(const StressOptions& options, const SeedReport& report,
                                const StressBundleContext& context) {
  const Json bundle = stress_bundle_json(options, report, context);
  const Status written =
      stress_file_write(context.path, bundle.dump(2) + "\n", StressWriteMode::kReplace);
  if (!written.ok()) {
    std::fprintf(stderr, "readyport-stress: bundle of seed %llu not written: %s\n",
                 static_cast<unsigned long long>(report.parameters.seed),
                 written.message().c_str());
    return "";
  }
  return context.path;
}

StressFailure stress_failure_record(const SeedReport& report, const std::string& entry,
                                    const std::string& bundle_path) {
  StressFailure failure;
  failure.from_corpus = !entry.empty();
  failure.entry = entry;
  failure.seed = report.parameters.seed;
  failure.status = status_code_name(report.status.code());
  failure.message = report.status.message();
  failure.signature = stress_failure_signature(report.status);
  failure.bundle = bundle_path;
  return failure;
}

}  // namespace readyport
