// run_engine_case_isolated: the case in a forked child, so that an engine assertion (abort) is a
// failed case. See engine_world.hpp "Isolation". The child writes its result as text lines on a
// pipe, and its stderr (the assertion message) goes to the same pipe.
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "engine_world.hpp"

#if defined(__unix__)
#include <sys/wait.h>
#include <unistd.h>
#endif

namespace readyport::properties {

#if defined(__unix__)
namespace {

constexpr const char* kPrefix = "@rp ";

std::string encode(const EngineRunResult& r) {
  std::ostringstream out;
  out << kPrefix << "code " << static_cast<int>(r.status.code()) << "\n";
  out << kPrefix << "step " << r.failed_step << "\n";
  out << kPrefix << "rule " << r.rule << "\n";
  out << kPrefix << "quarantined " << r.quarantined << "\n";
  out << kPrefix << "refused " << r.removes_refused << "\n";
  out << kPrefix << "modes " << r.modes_added << "\n";
  out << kPrefix << "adds " << r.adds_ok << "\n";
  out << kPrefix << "inside " << r.closes_inside << "\n";
  out << kPrefix << "echoed " << r.echoed_connections << "\n";
  out << kPrefix << "steps " << r.steps << "\n";
  out << kPrefix << "branches " << r.branches_run << " " << r.branch_steps << " "
      << r.branch_not_found << "\n";
  for (std::size_t i = 0; i < r.fired.size(); ++i) {
    out << kPrefix << "fired " << i << " " << r.fired[i] << "\n";
  }
  const OracleJudgement& j = r.judgement;
  for (std::uint32_t rule = 1; rule <= kOracleRules; ++rule) {
    out << kPrefix << "rule_counts " << rule << " " << j.judged[rule] << " " << j.violated[rule]
        << " " << j.ambiguous[rule] << " " << j.unjudged[rule] << "\n";
  }
  for (std::size_t i = 0; i < j.bounds_hit.size(); ++i) {
    out << kPrefix << "bound " << i << " " << j.bounds_hit[i] << "\n";
  }
  // The message last: it may span lines.
  out << kPrefix << "message\n" << r.status.message() << "\n";
  return out.str();
}

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) {
      return;
    }
    done += static_cast<std::size_t>(n);
  }
}

// One `@rp <key> ...` line of the case's process into `r` (code, message and early aside).
void decode_field(const std::string& key, std::istringstream& fields, EngineRunResult& r) {
  if (key == "step") {
    fields >> r.failed_step;
  }
  if (key == "rule") {
    fields >> r.rule;
  }
  if (key == "quarantined") {
    fields >> r.quarantined;
  }
  if (key == "refused") {
    fields >> r.removes_refused;
  }
  if (key == "modes") {
    fields >> r.modes_added;
  }
  if (key == "adds") {
    fields >> r.adds_ok;
  }
  if (key == "inside") {
    fields >> r.closes_inside;
  }
  if (key == "echoed") {
    fields >> r.echoed_connections;
  }
  if (key == "steps") {
    fields >> r.steps;
  }
  if (key == "branches") {
    fields >> r.branches_run >> r.branch_steps >> r.branch_not_found;
  }
  if (key == "fired") {
    std::size_t index = 0;
    std::uint64_t count = 0;
    fields >> index >> count;
    if (index < r.fired.size()) {
      r.fired[index] = count;
    }
  }
  if (key == "rule_counts") {
    std::uint32_t rule = 0;
    std::uint64_t counts[4] = {};
    fields >> rule >> counts[0] >> counts[1] >> counts[2] >> counts[3];
    if (rule >= 1 && rule <= kOracleRules) {
      r.judgement.judged[rule] = counts[0];
      r.judgement.violated[rule] = counts[1];
      r.judgement.ambiguous[rule] = counts[2];
      r.judgement.unjudged[rule] = counts[3];
    }
  }
  if (key == "bound") {
    std::size_t index = 0;
    std::uint64_t count = 0;
    fields >> index >> count;
    if (index < r.judgement.bounds_hit.size()) {
      r.judgement.bounds_hit[index] = count;
    }
  }
}

EngineRunResult decode(const std::string& text, int wait_status) {
  EngineRunResult r;
  std::istringstream in(text);
  std::string line;
  std::string other;  // lines that are not ours: stderr (an assertion message)
  std::string message;
  std::string early;  // the oracle's first violation, written as it was found
  int code = -1;
  bool in_message = false;
  while (std::getline(in, line)) {
    if (in_message) {
      message += (message.empty() ? "" : "\n") + line;
      continue;
    }
    if (line.rfind(kPrefix, 0) != 0) {
      other += line + "\n";
      continue;
    }
    std::istringstream fields(line.substr(4));
    std::string key;
    fields >> key;
    if (key == "code") {
      fields >> code;
    }
    decode_field(key, fields, r);
    if (key == "message") {
      in_message = true;
    }
    if (key == "early") {
      early = line.substr(4 + 6);
    }
  }
  const bool exited_ok = WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
  if (code < 0 || !exited_ok) {
    r.status =
        Status(StatusCode::kInternal,
               "aborted: the case's process ended (" +
                   (WIFSIGNALED(wait_status) ? "signal " + std::to_string(WTERMSIG(wait_status))
                                             : "exit " + std::to_string(WEXITSTATUS(wait_status))) +
                   "): " + (other.empty() ? std::string("no output") : other));
    r.rule = "abort";
    r.failed_step = -1;
    if (!early.empty()) {  // the oracle saw it first: its rule is the verdict
      r.status = Status(StatusCode::kInternal, early + " (then " + r.status.message() + ")");
      r.rule = rule_of(r.status, "abort");
    }
    return r;
  }
  if (code != 0) {
    r.status = Status(static_cast<StatusCode>(code), message);
  }
  // A sanitizer's report (ThreadSanitizer goes on after one; _exit skips its exit code).
  if (r.status.ok() && other.find("Sanitizer") != std::string::npos) {
    r.status = Status(StatusCode::kInternal, "sanitizer report in the case's process: " + other);
    r.rule = "sanitizer";
  }
  return r;
}

}  // namespace

EngineRunResult run_engine_case_isolated(const EngineCase& engine_case) {
  std::fflush(stdout);
  std::fflush(stderr);
  int fds[2];
  if (::pipe(fds) != 0) {
    return run_engine_case(engine_case);
  }
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return run_engine_case(engine_case);
  }
  if (child == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], 2);  // the assertion's message comes to the parent too
    const int fd = fds[1];
    const EngineRunResult result = run_engine_case(engine_case, [fd](const Status& violation) {
      // One line: the message's newlines would end it early.
      std::string message = violation.message();
      for (char& c : message) {
        if (c == '\n') {
          c = ' ';
        }
      }
      write_all(fd, std::string(kPrefix) + "early " + message + "\n");
    });
    write_all(fds[1], encode(result));
    ::_exit(0);  // no destructors, no atexit: the parent's state is the parent's
  }
  ::close(fds[1]);
  std::string text;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n <= 0) {
      break;
    }
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int wait_status = 0;
  while (::waitpid(child, &wait_status, 0) < 0) {
  }
  return decode(text, wait_status);
}

#else

EngineRunResult run_engine_case_isolated(const EngineCase& engine_case) {
  return run_engine_case(engine_case);
}

#endif

}  // namespace readyport::properties
