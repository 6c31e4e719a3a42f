// stress/jobs/sweep_record.hpp: what one task of the main job's sweep (a corpus entry, or a seed of
// the range) adds to the run's summary, as a value and as one line of JSON.
//
// The driver applies every task's record to its summary the same way whether the task ran in the
// driver's own process or in a child of the sweep supervisor (sweep_supervisor.hpp), which sends
// the records to the parent one line each: both give the same summary, figures and failures.
//
//   StressTaskRecord record = stress_task_record(index, report, failure, printed);
//   stress_task_record_apply(record, summary, figures);      // the same in parent and child
//   std::string line = stress_task_record_json(record).dump();
//   Result<StressTaskRecord> back = stress_task_record_from_json(Json::parse(line));
//
// Ownership: values. Threading: none kept; reentrant. Errors: from_json returns kInvalidArgument
// naming the field (a child that writes something else is a broken child, reported as such).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "files/json_fields.hpp"
#include "jobs/run_figures.hpp"
#include "jobs/run_summary.hpp"
#include "runs/stress_run.hpp"

namespace readyport {

// One finished task of the sweep.
struct StressTaskRecord {
  std::size_t task = 0;  // index in the sweep's task list: the corpus entries, then the range
  bool entry = false;    // a corpus entry (not counted in the range's totals)
  bool passed = true;
  std::uint64_t steps = 0;  // scheduler steps (the run's speed counts the corpus's too)
  bool printed = false;     // its failure was printed in full (at most kFailuresPrintedMax are)
  std::optional<StressSeedShare> share;  // seeds of the range only
  StressFigures figures{};               // seeds of the range only (zero otherwise)
  std::optional<StressFailure> failure;  // when it failed
};

// The record of task `task` from its report; `failure` when it failed.
StressTaskRecord stress_task_record(std::size_t task, bool entry, const SeedReport& report,
                                    std::optional<StressFailure> failure, bool printed);

// Adds the record to the summary and the figures: the share of a range seed, the corpus entry's
// count, the failure, the steps.
void stress_task_record_apply(const StressTaskRecord& record, StressRunSummary& summary,
                              StressFigures& figures);

Json stress_task_record_json(const StressTaskRecord& record);
Result<StressTaskRecord> stress_task_record_from_json(const Json& object);

}  // namespace readyport
