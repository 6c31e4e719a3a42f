// stress/jobs/sweep_supervisor.hpp: the main job's sweep in child processes, so that nothing one
// task does ends the sweep: an engine assertion, a crash, a sanitizer that reports and exits, or a
// hang is that task's failure, and the tasks after it still run. POSIX only (fork); elsewhere
// stress_sweep_supervisor_available() is false and the driver runs the sweep in its own process.
//
//   SweepCallbacks callbacks{run_in_child, on_record, on_death};
//   Result<SweepOutcome> outcome = stress_sweep_supervise(tasks, jobs, hang_seconds, callbacks);
//
// The parent forks a child that runs the tasks left (callbacks.run, in the child) and writes one
// JSON line per finished task on the channel, in task order ({"type":"task","task":i,...}:
// sweep_record.hpp), then {"type":"end","exit":N}. The child's stdout is the parent's; its stderr
// is relayed line by line, and the last `readyport: assertion failed: ...` line is kept. A child
// that ends without its "end" line died; one that writes no task line for `hang_seconds` (wall
// clock) is killed as hung. The task that died is the one the abort handler named on the channel
// ({"type":"aborted","task":i,...}: abort_report.hpp), else the first task not finished. With
// several jobs, tasks before the named one may still have been running: they run again first, one
// job, up to the named one, so that deaths are reported in task order as in a serial run; with
// nobody named (a crash), the tasks left run again with one job, so that no task is blamed for
// another's crash. The parent reports the death (callbacks.on_death) and forks a new child for the
// tasks after it, until every task finished or on_death says stop.
//
// Ownership: the callbacks are borrowed for the call. Threading: call from a process with one
// thread (fork); callbacks.on_record and on_death run on the calling thread. Errors: a channel
// line that is not a record, or fork/pipe failing, is kInternal (the child, if any, is killed);
// the run's own failures are in the records.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "files/json_fields.hpp"
#include "readyport/status.hpp"

namespace readyport {

// A task whose child process died or hung.
struct SweepDeath {
  std::size_t task = 0;
  std::string status;     // "aborted" (SIGABRT), "crashed" (another signal), "exited", "hung"
  std::string how;        // "killed by signal 11", "exited with status 66", "no task ... in 300 s"
  std::string assertion;  // the child's last "readyport: assertion failed: ..." line, or ""
  Json named;             // the abort handler's record when it named this task, else null
};

struct SweepCallbacks {
  // In the child: runs `tasks` (ascending) on `jobs` runners, writing each finished task's
  // record and the end line to `channel_fd`; returns the child's exit status.
  std::function<int(const std::vector<std::size_t>& tasks, std::uint32_t jobs, int channel_fd)> run;
  // In the parent: one {"type":"task"} or {"type":"stopped"} record, in order.
  std::function<Status(const Json& record)> on_record;
  // In the parent: a task died. Returns false to end the sweep there (--stop-on-failure).
  std::function<bool(const SweepDeath& death)> on_death;
};

struct SweepOutcome {
  int exit_status = 0;         // the last child's "end" line (0 when a death ended the sweep)
  std::uint32_t children = 0;  // processes forked
  std::uint32_t deaths = 0;    // tasks reported through on_death
  bool stopped = false;        // on_death ended the sweep
};

bool stress_sweep_supervisor_available();
// Writes `record` and a newline to `fd` in one write (a pipe keeps lines of up to PIPE_BUF whole;
// longer ones are written in a loop by the only writer at that moment). Errors are ignored: a
// parent that went away ends the child by SIGPIPE.
void stress_sweep_write(int fd, const Json& record);
Result<SweepOutcome> stress_sweep_supervise(std::vector<std::size_t> tasks, std::uint32_t jobs,
                                            std::uint32_t hang_seconds,
                                            const SweepCallbacks& callbacks);

}  // namespace readyport
