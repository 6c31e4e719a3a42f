#include "jobs/sweep_supervisor.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <set>
#include <utility>

#include "readyport/assert.hpp"

#ifndef _WIN32
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

namespace readyport {

#ifdef _WIN32

bool stress_sweep_supervisor_available() { return false; }

void stress_sweep_write(int fd, const Json& record) {
  (void)fd;
  (void)record;
}

Result<SweepOutcome> stress_sweep_supervise(std::vector<std::size_t>, std::uint32_t, std::uint32_t,
                                            const SweepCallbacks&) {
  return Status(StatusCode::kUnavailable, "the sweep supervisor needs fork (POSIX)");
}

#else

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kAssertionPrefix = "readyport: assertion failed: ";
// A channel line longer than this is not a record: the child is broken.
constexpr std::size_t kChannelLineMax = 1 << 20;

// What the parent learnt from one child.
struct ChildRun {
  std::set<std::size_t> done;  // tasks whose record arrived
  bool ended = false;          // the "end" line arrived
  int end_exit = 0;
  bool stopped = false;  // a "stopped" record arrived
  bool hung = false;     // killed for sending nothing for hang_seconds
  Json named;            // the abort handler's record, if any
  std::string assertion;
  int wait_status = 0;
  Status error;  // a broken channel
};

// Reads complete lines out of `buffer`; `line` gets each in turn.
template <typename OnLine>
void take_lines(std::string& buffer, OnLine&& on_line) {
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = buffer.find('\n', start);
    if (end == std::string::npos) {
      break;
    }
    on_line(std::string_view(buffer).substr(start, end - start));
    start = end + 1;
  }
  buffer.erase(0, start);
}

// Reads what `fd` has; false at the end of the stream (or an error).
bool read_some(int fd, std::string& buffer) {
  char chunk[4096];
  const ssize_t got = ::read(fd, chunk, sizeof(chunk));
  if (got <= 0) {
    return false;
  }
  buffer.append(chunk, static_cast<std::size_t>(got));
  return true;
}

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t wrote = ::write(fd, text.data(), text.size());
    if (wrote <= 0) {
      return;
    }
    text.remove_prefix(static_cast<std::size_t>(wrote));
  }
}

// One channel line: remembered in `run`, and passed on (task and stopped records).
void on_channel_line(std::string_view line, ChildRun& run, const SweepCallbacks& callbacks) {
  if (!run.error.ok()) {
    return;
  }
  Json record = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (record.is_discarded() || !record.is_object() || !record.contains("type") ||
      !record["type"].is_string()) {
    run.error =
        Status(StatusCode::kInternal, "sweep: the child wrote a line that is not a record: " +
                                          std::string(line.substr(0, 200)));
    return;
  }
  const std::string type = record["type"].get<std::string>();
  if (type == "aborted") {
    run.named = std::move(record);
    return;
  }
  if (type == "end") {
    run.ended = true;
    run.end_exit = record.value("exit", 1);
    return;
  }
  if (type == "task") {
    if (!record.contains("task") || !record["task"].is_number_unsigned()) {
      run.error = Status(StatusCode::kInternal, "sweep: a task record without its task");
      return;
    }
    run.done.insert(record["task"].get<std::size_t>());
  } else if (type == "stopped") {
    run.stopped = true;
  } else {
    run.error = Status(StatusCode::kInternal, "sweep: unknown record type '" + type + "'");
    return;
  }
  if (Status s = callbacks.on_record(record); !s.ok()) {
    run.error = s;
  }
}

// The parent's side of one child: relays its stderr, reads its channel, kills it when it hangs.
ChildRun watch_child(pid_t child, int channel_fd, int stderr_fd, std::uint32_t hang_seconds,
                     const SweepCallbacks& callbacks) {
  ChildRun run;
  std::string channel_buffer;
  std::string stderr_buffer;
  bool channel_open = true;
  bool stderr_open = true;
  Clock::time_point last_task = Clock::now();
  while (channel_open || stderr_open) {
    pollfd fds[2] = {{channel_open ? channel_fd : -1, POLLIN, 0},
                     {stderr_open ? stderr_fd : -1, POLLIN, 0}};
    const int ready = ::poll(fds, 2, 1000);
    if (ready < 0 && errno != EINTR) {
      break;
    }
    if (ready > 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      stderr_open = read_some(stderr_fd, stderr_buffer);
      take_lines(stderr_buffer, [&run](std::string_view line) {
        write_all(2, std::string(line) + "\n");
        if (line.substr(0, std::strlen(kAssertionPrefix)) == kAssertionPrefix) {
          run.assertion = std::string(line);
        }
      });
      if (!stderr_open && !stderr_buffer.empty()) {
        write_all(2, stderr_buffer);
      }
    }
    if (ready > 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      const std::size_t done_before = run.done.size();
      channel_open = read_some(channel_fd, channel_buffer);
      take_lines(channel_buffer,
                 [&](std::string_view line) { on_channel_line(line, run, callbacks); });
      if (run.done.size() != done_before) {
        last_task = Clock::now();
      }
      if (channel_buffer.size() > kChannelLineMax) {
        run.error = Status(StatusCode::kInternal, "sweep: a channel line past 1 MiB");
      }
    }
    if (!run.error.ok() && !run.hung) {
      ::kill(child, SIGKILL);
      run.hung = true;  // killed; not a hang, but it must not be killed twice
    }
    const auto quiet = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - last_task);
    if (!run.hung && !run.ended && quiet.count() >= static_cast<long long>(hang_seconds)) {
      ::kill(child, SIGKILL);
      run.hung = true;
    }
  }
  while (::waitpid(child, &run.wait_status, 0) < 0 && errno == EINTR) {
  }
  return run;
}

// Why the child ended without its end line.
void describe_death(const ChildRun& run, std::uint32_t hang_seconds, SweepDeath& death) {
  death.assertion = run.assertion;
  if (run.hung) {
    death.status = "hung";
    death.how = "no task finished in " + std::to_string(hang_seconds) +
                " s (wall clock; --hang-seconds): the process was killed";
  } else if (WIFSIGNALED(run.wait_status)) {
    const int signal_number = WTERMSIG(run.wait_status);
    death.status = signal_number == SIGABRT ? "aborted" : "crashed";
    death.how = "the process was killed by signal " + std::to_string(signal_number) + " (" +
                strsignal(signal_number) + ")";
  } else {
    death.status = "exited";
    death.how = "the process exited with status " +
                std::to_string(WIFEXITED(run.wait_status) ? WEXITSTATUS(run.wait_status) : -1) +
                " before its task finished (a sanitizer's report, or an exit in the engine)";
  }
}

struct Pipes {
  int channel[2] = {-1, -1};
  int stderr_pipe[2] = {-1, -1};
};

[[noreturn]] void child_main(const Pipes& pipes, const std::vector<std::size_t>& tasks,
                             std::uint32_t jobs, const SweepCallbacks& callbacks) {
  ::close(pipes.channel[0]);
  ::close(pipes.stderr_pipe[0]);
  ::dup2(pipes.stderr_pipe[1], 2);
  ::close(pipes.stderr_pipe[1]);
  const int status = callbacks.run(tasks, jobs, pipes.channel[1]);
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(status);
}

// A part of the sweep: its tasks, ascending, and the jobs its children run them on.
struct SweepSegment {
  std::vector<std::size_t> tasks;
  std::uint32_t jobs = 1;
};

// Forks a child for `segment` and watches it to its end.
Result<ChildRun> run_child(const SweepSegment& segment, std::uint32_t hang_seconds,
                           const SweepCallbacks& callbacks) {
  Pipes pipes;
  if (::pipe(pipes.channel) != 0 || ::pipe(pipes.stderr_pipe) != 0) {
    return Status(StatusCode::kInternal, std::string("sweep: pipe: ") + std::strerror(errno));
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t child = ::fork();
  if (child < 0) {
    return Status(StatusCode::kInternal, std::string("sweep: fork: ") + std::strerror(errno));
  }
  if (child == 0) {
    child_main(pipes, segment.tasks, segment.jobs, callbacks);
  }
  ::close(pipes.channel[1]);
  ::close(pipes.stderr_pipe[1]);
  ChildRun run =
      watch_child(child, pipes.channel[0], pipes.stderr_pipe[0], hang_seconds, callbacks);
  ::close(pipes.channel[0]);
  ::close(pipes.stderr_pipe[0]);
  if (!run.error.ok()) {
    return run.error;
  }
  return run;
}

// A child of the first segment died before its end line, with `left` of its tasks unfinished.
// Either the segment is split so that the death comes in task order (the tasks before a named
// one first, with one job; or, none named with several jobs, all of them with one job) and the
// result is false, or `death` names the task that died and the result is true.
bool name_death(const ChildRun& run, std::uint32_t hang_seconds, std::deque<SweepSegment>& segments,
                std::vector<std::size_t>& left, SweepDeath& death) {
  SweepSegment& segment = segments.front();
  describe_death(run, hang_seconds, death);
  death.task = left.front();
  const bool named = run.named.is_object() && run.named.contains("task") &&
                     run.named["task"].is_number_unsigned() &&
                     std::count(left.begin(), left.end(), run.named["task"].get<std::size_t>());
  const std::size_t named_task = named ? run.named["task"].get<std::size_t>() : 0;
  if (named && named_task != left.front() && segment.jobs > 1) {
    // Tasks before the named one were still running: they go first, one at a time, up to it.
    const auto after = std::upper_bound(left.begin(), left.end(), named_task);
    SweepSegment rest{std::vector<std::size_t>(after, left.end()), segment.jobs};
    segment = SweepSegment{std::vector<std::size_t>(left.begin(), after), 1};
    if (!rest.tasks.empty()) {
      segments.insert(segments.begin() + 1, std::move(rest));
    }
    return false;
  }
  if (named) {
    death.task = named_task;
    death.named = run.named;
  } else if (segment.jobs > 1 && !run.hung) {
    // Several tasks were running and none was named: run them again one at a time, so that
    // the one that crashes is the first one not finished.
    std::printf(
        "sweep: the process died (%s) with %u jobs and named no task; the %zu tasks "
        "left run again with one job\n",
        death.how.c_str(), segment.jobs, left.size());
    segment = SweepSegment{std::move(left), 1};
    return false;
  }
  return true;
}

}  // namespace

bool stress_sweep_supervisor_available() { return true; }

void stress_sweep_write(int fd, const Json& record) { write_all(fd, record.dump() + "\n"); }

Result<SweepOutcome> stress_sweep_supervise(std::vector<std::size_t> tasks, std::uint32_t jobs,
                                            std::uint32_t hang_seconds,
                                            const SweepCallbacks& callbacks) {
  READYPORT_ASSERT(jobs >= 1 && hang_seconds >= 1);
  READYPORT_ASSERT(std::is_sorted(tasks.begin(), tasks.end()));
  SweepOutcome outcome;
  // The tasks left, in segments each run by its own children with its own jobs: a task named
  // behind others still running goes first with one job, so that deaths come in task order.
  std::deque<SweepSegment> segments;
  if (!tasks.empty()) {
    segments.push_back(SweepSegment{std::move(tasks), jobs});
  }
  // Each child finishes a task, reports a death, or splits a segment: a bound on children.
  std::size_t children_max = 4;
  for (const SweepSegment& segment : segments) {
    children_max += 3 * segment.tasks.size();
  }
  while (!segments.empty()) {
    if (outcome.children >= children_max) {
      return Status(StatusCode::kInternal, "sweep: more child processes than tasks allow");
    }
    SweepSegment& segment = segments.front();
    Result<ChildRun> ran = run_child(segment, hang_seconds, callbacks);
    if (!ran.ok()) {
      return ran.status();
    }
    outcome.children++;
    const ChildRun& run = ran.value();
    if (run.stopped) {
      outcome.exit_status = run.end_exit;
      return outcome;
    }
    if (run.ended) {
      outcome.exit_status = run.end_exit;
      if (run.end_exit != 0) {
        return outcome;
      }
      segments.pop_front();
      continue;
    }
    std::vector<std::size_t> left;
    for (const std::size_t task : segment.tasks) {
      if (run.done.count(task) == 0) {
        left.push_back(task);
      }
    }
    if (left.empty()) {
      return Status(StatusCode::kInternal,
                    "sweep: the child finished every task but died before its end line");
    }
    SweepDeath death;
    if (!name_death(run, hang_seconds, segments, left, death)) {
      continue;
    }
    outcome.deaths++;
    left.erase(std::find(left.begin(), left.end(), death.task));
    if (!callbacks.on_death(death)) {
      outcome.stopped = true;
      return outcome;
    }
    segment.tasks = std::move(left);
    if (segment.tasks.empty()) {
      segments.pop_front();
    }
  }
  return outcome;
}

#endif

}  // namespace readyport
