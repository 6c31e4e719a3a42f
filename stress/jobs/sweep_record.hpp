// stress/jobs/sweep_record.hpp: what one task of the main job's sweep (a corpus entry, or a seed of
// the range) adds to the run's summary, as a value and as one line of JSON.
//
// The driver applies every task's record to its summary the same way whether the task ran in the
// driver's own process or in a child of the sweep supervisor (sweep_supervisor.hpp), which sends
// the records to the parent one line each: both give the same summary, figures and failures.
//
//   StressTaskRecord record = stress_task_record(index, report, failure, printed);
//   stress_task_record_apply(record, summary, figures);      // the same in parent and child
//   StressRecordNames sent, seen;                            // one per end of the channel
//   std::string line = stress_task_record_json(record, &sent).dump();
//   Result<StressTaskRecord> back = stress_task_record_from_json(Json::parse(line), &seen);
//
// A record carries its seed's coverage counts, and the rows' names only when they differ from the
// names the channel's previous record carried (every seed has the same rows: the names go once,
// not with each of a million seeds). So the records of one channel are read in the order they
// were written, by one reader that saw the first one.
//
// Ownership: values; the caller owns each end's StressRecordNames. Threading: none kept;
// reentrant. Errors: from_json returns kInvalidArgument naming the field (a child that writes
// something else is a broken child, reported as such), and for counts without names before them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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
  // A corpus entry's tuples (the range's are in share): coverage of states in context counts the
  // corpus too, where the guided search's finds are kept (docs/coverage.md).
  SlotTuples entry_tuples;
};

// The record of task `task` from its report; `failure` when it failed.
StressTaskRecord stress_task_record(std::size_t task, bool entry, const SeedReport& report,
                                    std::optional<StressFailure> failure, bool printed);

// Adds the record to the summary and the figures: the share of a range seed, the corpus entry's
// count, the failure, the steps.
void stress_task_record_apply(const StressTaskRecord& record, StressRunSummary& summary,
                              StressFigures& figures);

// The coverage rows' names one end of a channel last sent or read; empty at first.
struct StressRecordNames {
  std::vector<std::string> coverage;
};

// The record as JSON; names its coverage rows when `sent` holds other names (and updates it).
Json stress_task_record_json(const StressTaskRecord& record, StressRecordNames* sent);
// The record read back; takes the rows' names from the record, or from `seen` when it has none
// (and keeps the record's in `seen`).
Result<StressTaskRecord> stress_task_record_from_json(const Json& object, StressRecordNames* seen);

}  // namespace readyport
