// stress/jobs/sweep_policy.hpp: the sweep supervisor's policy (sweep_supervisor.hpp), apart from
// processes and clocks: which tasks the next child process runs and on how many jobs, and which
// task a child's death is blamed on. It is a pure function of the events the parent saw (the
// records and the ways each child ended), so its tests are scripted sequences of events, not
// real processes racing.
//
//   SweepPolicy policy(tasks, jobs, in_flight_max);
//   for (SweepStep step = policy.next(); step.kind != SweepStep::Kind::kDone;
//        step = policy.next()) {
//     if (step.kind == SweepStep::Kind::kChild) {
//       ... fork a child for step.segment; for each task record: policy.on_record(task) ...
//       std::string note = policy.child_ended(end).value();   // how the child ended
//     } else {
//       report(step.death);   // kDeath: a task's death, in task order; kUnblamed: no task's
//     }
//   }
//
// The rules. A child runs a segment: tasks left, ascending, up to the next task already known to
// have died; it writes one record per finished task, in task order (the seed pool hands reports
// back in order), so the tasks finished are a prefix of its segment. When it dies:
// - Every task the abort handler named is dead: several threads may abort at once, and each
//   names its own task. Named tasks are never run again (a run on real threads would not repeat).
//   The unfinished tasks before the last named one were in flight (or not yet started): they run
//   again first, with one job, and each death is reported when every task before it has been
//   reported, so that deaths come in task order, as in a serial run.
// - Nobody named (a crash, a sanitizer's exit, the memory limit) with several jobs: the culprit
//   is one of the tasks that may have been running, at most `in_flight_max` from the first
//   unfinished one (the pool's window). Those run again with one job, where the first task not
//   finished is the one that died. If they all pass that time, the death is reported unblamed
//   (kUnblamed), never dropped.
// - Nobody named with one job, or a hang: the first task not finished is blamed (its record is
//   the one every later record waits for).
// - A child that finished every task of its segment and died before its end line: an unblamed
//   death. A "stopped" record (--stop-on-failure) or an end line with a non-zero exit ends the
//   sweep; the tasks left are not run.
// Every task ends in exactly one way: finished (its record), died (reported through kDeath), or
// not run (the sweep ended first); account() counts them.
//
// Ownership: values. Threading: one thread. Errors: on_record and child_ended return
// kInternal for events no child can produce (a record out of task order, a name outside the
// segment, an end line before every record); the sweep cannot go on then. Misuse (next() while a
// child runs, child_ended() without one) is asserted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "files/json_fields.hpp"
#include "readyport/status.hpp"

namespace readyport {

// A part of the sweep: its tasks, ascending, and the jobs the child runs them on.
struct SweepSegment {
  std::vector<std::size_t> tasks;
  std::uint32_t jobs = 1;
};

// How a child process ended without its end line.
enum class SweepDeathKind : std::uint8_t {
  kAborted,  // SIGABRT: an assertion (the abort handler names the task)
  kCrashed,  // another signal
  kExited,   // an exit before the end line (a sanitizer's report, an exit in the engine)
  kHung,     // no record for hang_seconds of wall time: killed
  kMemory,   // past the child's memory limit (killed, or out of memory in an allocation)
};
// "aborted", "crashed", "exited", "hung", "memory": a failure's status.
const char* sweep_death_kind_name(SweepDeathKind kind);

// A task whose child process died or hung (or, unblamed, a death no task is blamed for).
struct SweepDeath {
  std::size_t task = 0;   // unused when unblamed
  std::string status;     // sweep_death_kind_name
  std::string how;        // "the process was killed by signal 11 (...)", "no task finished in ..."
  std::string assertion;  // the child's "readyport: assertion failed: ..." line(s), or ""
  Json named;             // the abort handler's record when it named this task, else null
};

// What the parent saw of one child besides its task records (SweepPolicy::on_record).
struct SweepChildEnd {
  bool ended = false;                              // its end line arrived
  int end_exit = 0;                                // the end line's exit status
  bool stopped = false;                            // a "stopped" record arrived (--stop-on-failure)
  SweepDeathKind kind = SweepDeathKind::kCrashed;  // when it did not end
  std::string how;                                 // when it did not end: how the process ended
  std::vector<std::string> assertions;             // its "readyport: assertion failed: ..." lines
  std::vector<Json> named;                         // the abort handler's records, as they came
};

struct SweepStep {
  enum class Kind : std::uint8_t {
    kChild,     // fork a child for `segment`
    kDeath,     // report `death` (a task's)
    kUnblamed,  // report `death`, blamed on no task
    kDone,      // every task finished, died, or will not run
  };
  Kind kind = Kind::kDone;
  SweepSegment segment;
  SweepDeath death;
};

// How the tasks ended so far: finished + died + not_run == tasks once next() returned kDone.
struct SweepAccount {
  std::size_t tasks = 0;
  std::size_t finished = 0;  // their record arrived
  std::size_t died = 0;      // reported through kDeath
  std::size_t not_run = 0;   // left when the sweep ended early (stop, a failing end line)
  std::size_t unblamed = 0;  // deaths reported through kUnblamed
  std::uint32_t children = 0;
};

class SweepPolicy {
 public:
  // `tasks` ascending; `jobs` >= 1; `in_flight_max` >= 1: how far past its first unfinished task
  // a child with several jobs may have started tasks.
  SweepPolicy(std::vector<std::size_t> tasks, std::uint32_t jobs, std::size_t in_flight_max);

  // The next thing to do. kChild: until child_ended(), nothing else may be called but on_record.
  SweepStep next();
  // A task record of the running child arrived: it must be its segment's next task.
  Status on_record(std::size_t task);
  // The running child ended as `end` says. Returns a note for the log (empty when there is
  // nothing to say), e.g. that the tasks left run again with one job.
  Result<std::string> child_ended(const SweepChildEnd& end);
  // Ends the sweep here (on_death said stop): the tasks left are not run.
  void stop();

  const SweepAccount& account() const { return account_; }

 private:
  SweepDeath death_of(const SweepChildEnd& end, std::size_t task, const Json& named) const;
  Status take_names(const SweepChildEnd& end, const std::vector<std::size_t>& left);
  std::string unnamed_death(const SweepChildEnd& end, const std::vector<std::size_t>& left,
                            std::uint32_t jobs);

  const std::uint32_t jobs_;
  const std::size_t in_flight_max_;
  std::deque<std::size_t> left_;                // not finished, not reported, ascending
  std::map<std::size_t, SweepDeath> dead_;      // known dead, reported once first in left_
  std::optional<std::size_t> one_job_through_;  // tasks up to it run with one job
  std::optional<SweepDeath> unreproduced_;      // an unnamed death looked for with one job
  std::vector<SweepDeath> unblamed_;            // to report, before anything else
  std::optional<SweepSegment> running_;         // the child between next() and child_ended()
  std::size_t running_finished_ = 0;            // its records so far
  SweepAccount account_;
};

}  // namespace readyport
