// What the harness prints and writes about a failing seed: the case as text, the replay command,
// the trace lines around a violation, the bundle and its trace file. Internal to the harness.
//
// Ownership: values. Threading: reentrant. Errors: a bundle that cannot be written is a Status.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "readyport/fake/case_shrinker.hpp"
#include "readyport/fake/harness.hpp"

namespace readyport::harness_internal {

// "seed=5 strategy=pct depth=3 faults=send.wouldblock@10 faults_at_stop=1".
std::string case_text(const HarnessCase& run_case);
// The one command that runs exactly `run_case` again (its seed alone, its strategy, depth and
// plan pinned) and checks `trace_hash` when it is not empty: environment variables, the test
// binary and, for a GoogleTest case, its --gtest_filter.
std::string replay_command(const HarnessOptions& options, const HarnessCase& run_case,
                           const std::string& trace_hash);
// The lines of `text` (a trace) from `before` lines before the line numbered `seq` to `after`
// lines after it; the last `before + after` lines when `seq` is 0 or not in the trace.
std::vector<std::string> trace_window(std::string_view text, std::uint64_t seq,
                                      std::uint32_t before = 24, std::uint32_t after = 6);
// The seq a violation names ("U2 at line 41: ..."), or 0.
std::uint64_t violation_line(const Status& status);
// The first line where two traces differ: its number (1-based) and each trace's line ("" past
// its end). 0 when they are equal.
std::uint64_t first_difference(std::string_view a, std::string_view b, std::string* line_a_out,
                               std::string* line_b_out);

// A shrunk failure, for the report and the bundle.
struct Shrunk {
  bool done = false;
  HarnessCase minimal;
  HarnessSeed minimal_seed;
  ShrinkOutcome outcome;
};

// Writes `<dir>/seed-<S>.json` and `<dir>/seed-<S>.trace` (with its header line: readyport-stress
// --check-trace judges it), `<dir>` the options' bundle_dir and the test's name; no .trace without
// `trace_text` (a text cut at trace_mb_max: the JSON says so). Returns the JSON file's path.
Result<std::string> write_bundle(const HarnessOptions& options, const HarnessSeed& seed,
                                 std::optional<std::string_view> trace_text,
                                 const std::vector<std::string>& window, const Shrunk& shrunk);

// Writes `trace_text` with its header line to `path` (readyport-stress --check-trace reads it).
Status write_trace_file(const HarnessOptions& options, const std::string& path,
                        std::string_view trace_text);

// This process's executable, for a replay command ("" when it cannot be told).
std::string executable_path();

}  // namespace readyport::harness_internal
