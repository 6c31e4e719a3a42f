#include "jobs/sweep_supervisor.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <new>
#include <utility>

#include "readyport/assert.hpp"

#ifndef _WIN32
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

// A sanitizer's shadow memory counts in the data segment: no RLIMIT_DATA under one.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define READYPORT_SWEEP_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define READYPORT_SWEEP_SANITIZED 1
#endif
#endif

namespace readyport {

#ifdef _WIN32

bool stress_sweep_supervisor_available() { return false; }

bool stress_sweep_data_limit_available() { return false; }

void stress_sweep_write(int fd, const Json& record) {
  (void)fd;
  (void)record;
}

Result<SweepOutcome> stress_sweep_supervise(std::vector<std::size_t>, std::uint32_t,
                                            const SweepLimits&, const SweepCallbacks&) {
  return Status(StatusCode::kUnavailable, "the sweep supervisor needs fork (POSIX)");
}

#else

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kAssertionPrefix = "readyport: assertion failed: ";
// A channel line longer than this is not a record: the child is broken.
constexpr std::size_t kChannelLineMax = 1 << 20;
// How often the parent looks at a child's resident memory when it has a limit.
constexpr int kMemoryWatchMs = 100;

// The child's memory limit in MiB, for its out-of-memory message.
std::uint64_t g_memory_limit_mib = 0;

// What the parent learnt from one child.
struct ChildRun {
  SweepChildEnd end;
  bool killed = false;            // the parent killed it (a hang, memory, a broken channel)
  bool hung = false;              // killed for sending no record for hang_seconds
  std::uint64_t memory_seen = 0;  // killed with this resident memory (bytes), else 0
  int wait_status = 0;
  Status error;  // a broken channel, or an event the policy refused
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

// The resident memory of process `pid` in bytes (Linux's /proc; 0 where it cannot be read).
std::uint64_t resident_bytes(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/statm";
  std::FILE* file = std::fopen(path.c_str(), "r");
  if (file == nullptr) {
    return 0;
  }
  unsigned long long size_pages = 0;
  unsigned long long resident_pages = 0;
  const int read = std::fscanf(file, "%llu %llu", &size_pages, &resident_pages);
  std::fclose(file);
  const long page = ::sysconf(_SC_PAGESIZE);
  return read == 2 && page > 0 ? resident_pages * static_cast<std::uint64_t>(page) : 0;
}

// One channel line: remembered in `run`, checked by the policy, and passed on (task and stopped
// records).
void on_channel_line(std::string_view line, ChildRun& run, SweepPolicy& policy,
                     const SweepCallbacks& callbacks) {
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
    run.end.named.push_back(std::move(record));
    return;
  }
  if (type == "end") {
    run.end.ended = true;
    run.end.end_exit = record.value("exit", 1);
    return;
  }
  if (type == "task") {
    if (!record.contains("task") || !record["task"].is_number_unsigned()) {
      run.error = Status(StatusCode::kInternal, "sweep: a task record without its task");
      return;
    }
    run.error = policy.on_record(record["task"].get<std::size_t>());
    if (!run.error.ok()) {
      return;
    }
  } else if (type == "stopped") {
    run.end.stopped = true;
  } else {
    run.error = Status(StatusCode::kInternal, "sweep: unknown record type '" + type + "'");
    return;
  }
  run.error = callbacks.on_record(record);
}

// Relays what the child wrote on stderr, keeping its assertion lines.
void relay_stderr(std::string& buffer, bool open, ChildRun& run) {
  take_lines(buffer, [&run](std::string_view line) {
    write_all(2, std::string(line) + "\n");
    if (line.substr(0, std::strlen(kAssertionPrefix)) == kAssertionPrefix) {
      run.end.assertions.emplace_back(line);
    }
  });
  if (!open && !buffer.empty()) {
    write_all(2, buffer);
    buffer.clear();
  }
}

// Kills the child once for `run` (the parent's own reasons: a hang, memory, a broken channel).
void kill_once(pid_t child, ChildRun& run) {
  if (!run.killed) {
    ::kill(child, SIGKILL);
    run.killed = true;
  }
}

// The parent's side of one child: relays its stderr, reads its channel, kills it when it hangs
// or passes its memory limit.
ChildRun watch_child(pid_t child, int channel_fd, int stderr_fd, const SweepLimits& limits,
                     SweepPolicy& policy, const SweepCallbacks& callbacks) {
  ChildRun run;
  std::string channel_buffer;
  std::string stderr_buffer;
  bool channel_open = true;
  bool stderr_open = true;
  Clock::time_point last_task = Clock::now();
  const int poll_ms = limits.memory_bytes != 0 ? kMemoryWatchMs : 1000;
  while (channel_open || stderr_open) {
    pollfd fds[2] = {{channel_open ? channel_fd : -1, POLLIN, 0},
                     {stderr_open ? stderr_fd : -1, POLLIN, 0}};
    const int ready = ::poll(fds, 2, poll_ms);
    if (ready < 0 && errno != EINTR) {
      break;
    }
    if (ready > 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      stderr_open = read_some(stderr_fd, stderr_buffer);
      relay_stderr(stderr_buffer, stderr_open, run);
    }
    if (ready > 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      const std::size_t finished_before = policy.account().finished;
      channel_open = read_some(channel_fd, channel_buffer);
      take_lines(channel_buffer,
                 [&](std::string_view line) { on_channel_line(line, run, policy, callbacks); });
      if (policy.account().finished != finished_before) {
        last_task = Clock::now();
      }
      if (channel_buffer.size() > kChannelLineMax) {
        run.error = Status(StatusCode::kInternal, "sweep: a channel line past 1 MiB");
      }
    }
    if (!run.error.ok()) {
      kill_once(child, run);
    }
    if (!run.killed && limits.memory_bytes != 0) {
      const std::uint64_t resident = resident_bytes(child);
      if (resident > limits.memory_bytes) {
        run.memory_seen = resident;
        kill_once(child, run);
      }
    }
    const auto quiet = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - last_task);
    if (!run.killed && !run.end.ended &&
        quiet.count() >= static_cast<long long>(limits.hang_seconds)) {
      run.hung = true;
      kill_once(child, run);
    }
  }
  // A partial line left at the end (a child killed while it wrote a record) is no record.
  while (::waitpid(child, &run.wait_status, 0) < 0 && errno == EINTR) {
  }
  return run;
}

std::string mib_text(std::uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

// Why the child ended without its end line.
void describe_death(ChildRun& run, const SweepLimits& limits) {
  SweepChildEnd& end = run.end;
  if (run.memory_seen != 0) {
    end.kind = SweepDeathKind::kMemory;
    end.how = "its resident memory reached " + mib_text(run.memory_seen) + ", past the limit of " +
              mib_text(limits.memory_bytes) + " (--memory-mb-max): the process was killed";
  } else if (run.hung) {
    end.kind = SweepDeathKind::kHung;
    end.how = "no task finished in " + std::to_string(limits.hang_seconds) +
              " s (wall clock; --hang-seconds): the process was killed";
  } else if (WIFSIGNALED(run.wait_status)) {
    const int signal_number = WTERMSIG(run.wait_status);
    end.kind = signal_number == SIGABRT ? SweepDeathKind::kAborted : SweepDeathKind::kCrashed;
    end.how = "the process was killed by signal " + std::to_string(signal_number) + " (" +
              strsignal(signal_number) + ")";
  } else if (WIFEXITED(run.wait_status) && WEXITSTATUS(run.wait_status) == kSweepExitMemory) {
    end.kind = SweepDeathKind::kMemory;
    end.how = "an allocation failed at the process's memory limit of " +
              mib_text(limits.memory_bytes) + " (--memory-mb-max; RLIMIT_DATA)";
  } else {
    end.kind = SweepDeathKind::kExited;
    end.how = "the process exited with status " +
              std::to_string(WIFEXITED(run.wait_status) ? WEXITSTATUS(run.wait_status) : -1) +
              " before its task finished (a sanitizer's report, or an exit in the engine)";
  }
}

// In the child, an allocation failed at its memory limit: said, and the process ends at once
// (no unwinding, no abort handler: the parent blames the task by the sweep's policy).
void on_out_of_memory() {
  char text[200];
  const int size = std::snprintf(text, sizeof(text),
                                 "readyport: memory limit: an allocation failed at the child "
                                 "process's limit of %llu MiB (--memory-mb-max)\n",
                                 static_cast<unsigned long long>(g_memory_limit_mib));
  if (size > 0) {
    (void)!::write(2, text, static_cast<std::size_t>(std::min(size, 199)));
  }
  ::_exit(kSweepExitMemory);
}

// In the child: its own data limit, where no sanitizer's shadow memory counts there.
void limit_child_memory(std::uint64_t bytes) {
  if (bytes == 0) {
    return;
  }
  g_memory_limit_mib = bytes >> 20;
  std::set_new_handler(on_out_of_memory);
  if (stress_sweep_data_limit_available()) {
    const rlimit limit{static_cast<rlim_t>(bytes), static_cast<rlim_t>(bytes)};
    (void)::setrlimit(RLIMIT_DATA, &limit);
  }
}

struct Pipes {
  int channel[2] = {-1, -1};
  int stderr_pipe[2] = {-1, -1};
};

[[noreturn]] void child_main(const Pipes& pipes, const SweepSegment& segment,
                             const SweepLimits& limits, const SweepCallbacks& callbacks) {
  ::close(pipes.channel[0]);
  ::close(pipes.stderr_pipe[0]);
  ::dup2(pipes.stderr_pipe[1], 2);
  ::close(pipes.stderr_pipe[1]);
  limit_child_memory(limits.memory_bytes);
  const int status = callbacks.run(segment.tasks, segment.jobs, pipes.channel[1]);
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(status);
}

// Forks a child for `segment` and watches it to its end.
Result<ChildRun> run_child(const SweepSegment& segment, const SweepLimits& limits,
                           SweepPolicy& policy, const SweepCallbacks& callbacks) {
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
    child_main(pipes, segment, limits, callbacks);
  }
  ::close(pipes.channel[1]);
  ::close(pipes.stderr_pipe[1]);
  ChildRun run =
      watch_child(child, pipes.channel[0], pipes.stderr_pipe[0], limits, policy, callbacks);
  ::close(pipes.channel[0]);
  ::close(pipes.stderr_pipe[0]);
  if (!run.error.ok()) {
    return run.error;
  }
  if (!run.end.ended) {
    describe_death(run, limits);
  }
  return run;
}

}  // namespace

bool stress_sweep_supervisor_available() { return true; }

bool stress_sweep_data_limit_available() {
#ifdef READYPORT_SWEEP_SANITIZED
  return false;
#else
  return true;
#endif
}

void stress_sweep_write(int fd, const Json& record) { write_all(fd, record.dump() + "\n"); }

Result<SweepOutcome> stress_sweep_supervise(std::vector<std::size_t> tasks, std::uint32_t jobs,
                                            const SweepLimits& limits,
                                            const SweepCallbacks& callbacks) {
  READYPORT_ASSERT(jobs >= 1 && limits.hang_seconds >= 1 && limits.in_flight_max >= 1);
  SweepPolicy policy(std::move(tasks), jobs, limits.in_flight_max);
  SweepOutcome outcome;
  for (SweepStep step = policy.next(); step.kind != SweepStep::Kind::kDone; step = policy.next()) {
    if (step.kind == SweepStep::Kind::kUnblamed) {
      if (callbacks.on_unblamed) {
        callbacks.on_unblamed(step.death);
      }
      outcome.unblamed.push_back(std::move(step.death));
      continue;
    }
    if (step.kind == SweepStep::Kind::kDeath) {
      outcome.deaths++;
      if (!callbacks.on_death(step.death)) {
        outcome.stopped = true;
        policy.stop();
      }
      continue;
    }
    Result<ChildRun> ran = run_child(step.segment, limits, policy, callbacks);
    if (!ran.ok()) {
      return ran.status();
    }
    outcome.children++;
    const SweepChildEnd& end = ran.value().end;
    Result<std::string> note = policy.child_ended(end);
    if (!note.ok()) {
      return note.status();
    }
    if (!note.value().empty()) {
      std::printf("%s\n", note.value().c_str());
      std::fflush(stdout);
    }
    if (end.ended && end.end_exit != 0) {
      outcome.exit_status = end.end_exit;
    }
  }
  outcome.account = policy.account();
  const SweepAccount& a = outcome.account;
  READYPORT_ASSERT(a.finished + a.died + a.not_run == a.tasks);
  return outcome;
}

#endif

}  // namespace readyport
