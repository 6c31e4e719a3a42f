// stress/jobs/summary_markdown.hpp: the main job's summary as Markdown, appended to a file by
// `readyport-stress --markdown FILE` (in CI: $GITHUB_STEP_SUMMARY, the job's summary page). Each
// run appends one heading and one table row set, so shards that share a file add up:
//
//   ### readyport-stress shard 2/4: 1 failure
//   | shard | first seed | seeds run | failures | failing seeds (bundle) |
//   |---|---|---|---|---|
//   | 2/4 | 1 | 2000 | 1 | 1234 (`seed-1234.json`) |
//
// then a line on the corpus, the commit, and the seconds. At most kStressMarkdownFailuresMax
// failing seeds are listed (then "and N more: see the JSON summary"): a job summary is small.
//
// Ownership: values. Threading: reentrant. Errors: none.
#pragma once

#include <cstddef>
#include <string>

#include "cli/stress_options.hpp"
#include "jobs/run_summary.hpp"

namespace readyport {

inline constexpr std::size_t kStressMarkdownFailuresMax = 100;

std::string stress_summary_markdown(const StressOptions& options, const StressRunSummary& summary);

}  // namespace readyport
