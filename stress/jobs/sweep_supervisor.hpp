// stress/jobs/sweep_supervisor.hpp: the main job's sweep in child processes, so that nothing one
// task does ends the sweep: an engine assertion, a crash, a sanitizer that reports and exits, a
// hang, or memory past the child's limit is that task's failure, and the tasks after it still run.
// POSIX only (fork); elsewhere stress_sweep_supervisor_available() is false and the driver runs
// the sweep in its own process.
//
//   SweepCallbacks callbacks{run_in_child, on_record, on_death, on_unblamed};
//   SweepLimits limits{hang_seconds, memory_bytes, in_flight_max};
//   Result<SweepOutcome> outcome = stress_sweep_supervise(tasks, jobs, limits, callbacks);
//
// The parent forks a child that runs a segment of the tasks (callbacks.run, in the child) and
// writes one JSON line per finished task on the channel, in task order ({"type":"task","task":i,
// ...}: sweep_record.hpp), then {"type":"end","exit":N}. The child's stdout is the parent's; its
// stderr is relayed line by line, and its `readyport: assertion failed: ...` lines are kept. A
// child that ends without its "end" line died; one that writes no task line for `hang_seconds`
// (wall clock) is killed as hung; one whose resident memory passes `memory_bytes` is killed (the
// parent reads it every 100 ms), and in a build without a sanitizer the child also sets its own
// data limit there (RLIMIT_DATA), where an allocation that fails ends it with
// kSweepExitMemory. Which task a death is blamed on, and which tasks run again and how, is
// sweep_policy.hpp's: every task ends in exactly one way, its record, its death (on_death), or
// not run when the sweep ended early; a death no task can be blamed for goes to on_unblamed.
//
// Ownership: the callbacks are borrowed for the call. Threading: call from a process with one
// thread (fork); the callbacks but `run` run on the calling thread. Errors: a channel line that
// is not a record, records out of task order, or fork/pipe failing, is kInternal (the child, if
// any, is killed); the run's own failures are in the records and deaths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "files/json_fields.hpp"
#include "jobs/sweep_policy.hpp"
#include "readyport/status.hpp"

namespace readyport {

// The exit status of a child whose allocation failed at its memory limit.
inline constexpr int kSweepExitMemory = 85;

struct SweepCallbacks {
  // In the child: runs `tasks` (ascending) on `jobs` runners, writing each finished task's
  // record and the end line to `channel_fd`; returns the child's exit status.
  std::function<int(const std::vector<std::size_t>& tasks, std::uint32_t jobs, int channel_fd)> run;
  // In the parent: one {"type":"task"} or {"type":"stopped"} record, in order.
  std::function<Status(const Json& record)> on_record;
  // In the parent: a task died. Returns false to end the sweep there (--stop-on-failure).
  std::function<bool(const SweepDeath& death)> on_death;
  // In the parent: a child died and no task can be blamed (sweep_policy.hpp). May be empty.
  std::function<void(const SweepDeath& death)> on_unblamed;
};

struct SweepLimits {
  std::uint32_t hang_seconds = 300;  // wall clock without a task record
  std::uint64_t memory_bytes = 0;    // a child's memory (resident; data in builds without a
                                     // sanitizer); 0: none
  std::size_t in_flight_max = 1;     // tasks a child may start past its first unfinished one
};

struct SweepOutcome {
  int exit_status = 0;               // a child's non-zero "end" exit status, which ended the sweep
  std::uint32_t children = 0;        // processes forked
  std::uint32_t deaths = 0;          // tasks reported through on_death
  std::vector<SweepDeath> unblamed;  // deaths reported through on_unblamed
  bool stopped = false;              // on_death ended the sweep
  SweepAccount account;              // finished + died + not_run == tasks
};

bool stress_sweep_supervisor_available();
// Writes `record` and a newline to `fd` in one write (a pipe keeps lines of up to PIPE_BUF whole;
// longer ones are written in a loop by the only writer at that moment). Errors are ignored: a
// parent that went away ends the child by SIGPIPE.
void stress_sweep_write(int fd, const Json& record);
// Whether a child limits its own data segment (RLIMIT_DATA): not under a sanitizer, whose shadow
// memory counts there; the parent's watch of its resident memory applies everywhere.
bool stress_sweep_data_limit_available();
Result<SweepOutcome> stress_sweep_supervise(std::vector<std::size_t> tasks, std::uint32_t jobs,
                                            const SweepLimits& limits,
                                            const SweepCallbacks& callbacks);

}  // namespace readyport
