// stress/files/bundle.hpp: failure bundles. Each failing seed of readyport-stress writes one JSON
// file, `<bundle dir>/seed-<S>.json`, holding everything needed to see and to replay the failure;
// and `readyport-stress --replay FILE` reads it back (docs/replay.md has a whole example):
//
//   format, format_version        "readyport-stress-bundle", 3 (since trace format 3: the trace
//                                 hash is of events; a version 2 bundle's hash is of text)
//   readyport                     version, git commit, compiler, build (configuration and
//                                 sanitizer: "RelWithDebInfo", "Debug thread"), planted canary
//                                 ("" normally)
//   origin, command_line          what ran ("seed range", "corpus entry x.json", "shrink") and argv
//   seed, options                 the seed and run options (options_json.hpp): what --replay uses
//   invocation                    the rest of the command line, for the record
//   parameters                    every drawn parameter: the one-line form, and strategy, batch,
//                                 workload{...}, fake{...} (the swarm's switches), fault_plan
//   schedule                      strategy, pct_depth, steps_max
//   failure                       status (a status code name, or "aborted"), message, signature
//                                 (stress_failure_signature: the oracle's rule, e.g. "O2")
//   trace                         hash (16 hex digits; "" when the process aborted), lines, tail
//   faults_fired                  per fault site, in FaultSite order
//   fired_hits                    the plan of the faults that fired, when the run reports it
//   sim                           scheduler steps, decisions, switches, virtual end time
//   replay, replay_flags          "<argv0> --replay <bundle>", and the same as plain flags
//   explore                       an exploration's failure only (--explore, explore-<world>.json):
//                                 world, preemptions_max, faults_max (the bounds explored),
//                                 schedule (its choices, as --schedule takes them), preemptions
//                                 and faults (the failing schedule's own); seed 0 and default
//                                 options, no parameters
//
//   Json bundle = stress_bundle_json(options, report, context);
//   Status s = stress_file_write(context.path, bundle.dump(2) + "\n", StressWriteMode::kReplace);
//   Result<StressBundle> back = stress_bundle_parse(text, path);
//
// Ownership: values. Threading: reentrant. Errors: parse gives kInvalidArgument naming the field
// (missing, wrong type, out of range) or saying the text is not JSON or not a bundle.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cli/stress_options.hpp"
#include "files/json_fields.hpp"
#include "readyport/status.hpp"
#include "runs/stress_run.hpp"

namespace readyport {

inline constexpr const char* kStressBundleFormat = "readyport-stress-bundle";
inline constexpr std::uint64_t kStressBundleFormatVersion = 3;
// A bundle is a few tens of kB (the trace tail is bounded); refuse to read anything far larger.
inline constexpr std::uint64_t kStressBundleBytesMax = 16u << 20;

// Where and why a bundle is written.
struct StressBundleContext {
  std::vector<std::string> command_line;  // argv as given; [0] runs the replay
  std::string path;                       // the bundle's own path, as the replay command names it
  std::string origin;                     // "seed range", "corpus entry <file>", "shrink: ..."
};

// What --replay reads back.
struct StressBundle {
  std::uint64_t seed = 0;
  StressOptions options;  // the run options; everything else at its default
  std::string origin;
  std::string version;  // readyport version of the build that wrote it
  std::string commit;
  std::string compiler;
  std::string canary;
  std::string tree;    // "clean", "dirty" or "unknown" (bundles before it was recorded: "unknown")
  std::string status;  // status_code_name, or "aborted"
  std::string message;
  std::string signature;
  std::string trace_hash;  // "" when the run aborted the process
  // An exploration's failure (--explore): the world ("" for a seed's bundle), the faults it
  // allowed and the failing schedule's choices; --replay runs that one schedule.
  std::string explore_world;
  std::uint32_t explore_faults = 0;
  std::string explore_schedule;
};

// An exploration's failing schedule, for its bundle.
struct StressExploreFailure {
  std::string world;
  std::uint32_t preemptions_max = 0;  // the bounds explored
  std::uint32_t faults_max = 0;
  std::string schedule;           // the choices, "2,1,1,..."
  std::uint32_t preemptions = 0;  // the schedule's own
  std::uint32_t faults = 0;
  Status verdict;
  std::string trace_hash;
  std::uint64_t trace_lines = 0;
  std::vector<std::string> trace_tail;
};

// "<dir>/seed-<seed><suffix>.json" (suffix e.g. "-shrunk"; "" for none), or, when that file
// exists already, the first of "...<suffix>.run2.json" to ".run<kStressBundleRunsMax>.json" that
// does not: a rerun of a failure (its printed replay command) never overwrites the bundle it came
// from. Past the last, the last (it is replaced).
inline constexpr std::uint32_t kStressBundleRunsMax = 999;
std::string stress_bundle_path(const std::string& dir, std::uint64_t seed, std::string_view suffix);

// The bundle of a finished failing run. `options` are the options the seed ran under.
Json stress_bundle_json(const StressOptions& options, const SeedReport& report,
                        const StressBundleContext& context);
// The bundle of a seed whose run aborted the process (an engine assertion): no report, no trace
// hash; `violation` is what the oracle had found, if anything.
Json stress_abort_bundle_json(const StressOptions& options, const SeedParameters& parameters,
                              std::string_view violation, const StressBundleContext& context);

// "<dir>/explore-<world>.json", or the first free ".run<N>.json" as stress_bundle_path.
std::string stress_explore_bundle_path(const std::string& dir, std::string_view world);
// The bundle of an exploration's failure.
Json stress_explore_bundle_json(const StressExploreFailure& failure,
                                const StressBundleContext& context);

// Reads a bundle back. `name` (the file) is used in messages.
Result<StressBundle> stress_bundle_parse(std::string_view text, std::string_view name);
// The same, from an already parsed document.
Result<StressBundle> stress_bundle_from_json(const Json& document, std::string_view name);

}  // namespace readyport
