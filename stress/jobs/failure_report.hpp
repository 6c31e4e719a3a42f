// stress/jobs/failure_report.hpp: what the driver prints and writes for one seed: the failure block
// (status, parameters, trace hash and tail, replay commands), the --verbose line, and the bundle.
//
//   if (!report.status.ok()) {
//     std::string bundle = stress_bundle_write(options, report, context);  // "" if not written
//     stress_failure_print(options, report, bundle);
//   }
//
// Ownership: values. Threading: the driver's thread. Errors: a bundle that cannot be written is
// reported on stderr and gives "" (the run fails anyway: it has a failing seed).
#pragma once

#include <string>

#include "cli/stress_options.hpp"
#include "files/bundle.hpp"
#include "jobs/run_summary.hpp"
#include "runs/stress_run.hpp"

namespace readyport {

// Prints "FAIL seed S: <status>" (ci/canaries.sh reads it), the parameters, the trace hash, the
// trace tail, the replay command, and the bundle with its --replay command.
void stress_failure_print(const StressOptions& options, const SeedReport& report,
                          const std::string& bundle_path, const std::string& program);
// The --verbose line of a seed.
void stress_verbose_print(const SeedReport& report);
// Writes the bundle of `report` at context.path; returns the path, or "" when it failed.
std::string stress_bundle_write(const StressOptions& options, const SeedReport& report,
                                const StressBundleContext& context);
// The summary's record of a failure.
StressFailure stress_failure_record(const SeedReport& report, const std::string& entry,
                                    const std::string& bundle_path);

}  // namespace readyport
