// EmbedderOracle: the public class, reading a line, dispatching it by name, the end of the run and
// the judgement's texts. The rules: embedder_frames.cpp (the boundary lines: U4 U5 U6 U8) and
// embedder_sockets.cpp (the seam lines: U1 U2 U3 U7). See embedder_oracle.hpp.
#include "readyport/fake/embedder_oracle.hpp"

#include <string>
#include <utility>

#include "embedder_state.hpp"
#include "readyport/fake/trace_parse.hpp"

namespace readyport {
namespace embedder_oracle_internal {

std::string conn_text(std::uint64_t key) {
  return std::to_string(key >> 32) + "/" + std::to_string(key & 0xffffffffULL);
}

}  // namespace embedder_oracle_internal

namespace {

using embedder_oracle_internal::FrameKind;

constexpr const char* kRuleNames[] = {"",
                                      "use after close",
                                      "foreign close",
                                      "blocking callback",
                                      "outlives stop",
                                      "unsent data dropped",
                                      "edge not drained",
                                      "socket leaked",
                                      "end of stream ignored",
                                      "callback never returned"};
static_assert(std::size(kRuleNames) == kEmbedderRules + 1);

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

}  // namespace

const char* embedder_rule_name(std::uint32_t rule) {
  return rule >= 1 && rule <= kEmbedderRules ? kRuleNames[rule] : "";
}

void EmbedderJudgement::add(const EmbedderJudgement& other) {
  for (std::uint32_t rule = 1; rule <= kEmbedderRules; ++rule) {
    judged[rule] += other.judged[rule];
    violated[rule] += other.violated[rule];
    ambiguous[rule] += other.ambiguous[rule];
    unjudged[rule] += other.unjudged[rule];
  }
}

std::uint64_t EmbedderJudgement::not_judged() const {
  std::uint64_t sum = 0;
  for (const std::uint64_t count : unjudged) {
    sum += count;
  }
  return sum;
}

std::string embedder_rules_text(const EmbedderJudgement& judgement) {
  std::string text;
  for (std::uint32_t rule = 1; rule <= kEmbedderRules; ++rule) {
    if (!text.empty()) {
      text += "\n";
    }
    text += 'U';
    text += std::to_string(rule) + "  judged " + std::to_string(judgement.judged[rule]) +
            ", violated " + std::to_string(judgement.violated[rule]) + ", ambiguous " +
            std::to_string(judgement.ambiguous[rule]) + ", unjudged " +
            std::to_string(judgement.unjudged[rule]) + "  (" + kRuleNames[rule] + ")";
  }
  return text;
}

std::string embedder_judgement_headline(const EmbedderJudgement& judgement) {
  std::string ambiguous;
  std::string unjudged;
  std::string nothing;
  bool every = true;
  for (std::uint32_t rule = 1; rule <= kEmbedderRules; ++rule) {
    std::string name = "U";  // appended: GCC bug 105651, as in fail()
    name += std::to_string(rule);
    const auto append = [&name](std::string& list) { list += (list.empty() ? "" : ", ") + name; };
    if (judgement.ambiguous[rule] != 0) {
      append(ambiguous);
    }
    if (judgement.unjudged[rule] != 0) {
      append(unjudged);
      every = false;
    }
    if (judgement.judged[rule] == 0 && judgement.unjudged[rule] == 0) {
      append(nothing);
    }
  }
  return std::string(every ? "every rule judged" : "NOT every rule judged") +
         "; ambiguous: " + (ambiguous.empty() ? "none" : ambiguous) +
         "; unjudged: " + (unjudged.empty() ? "none" : unjudged) +
         "; nothing to judge: " + (nothing.empty() ? "none" : nothing);
}

std::string embedder_blind_spots_text() {
  return "not seen by any rule: a stale socket value the fake has already handed to another "
         "socket (the call lands on the new life and looks deliberate; seeds that draw "
         "socket_reuse=0 see every stale use as U1); memory the embedder's code frees too early "
         "(run the ASan build)";
}

namespace {

// The seq of a violation "<rule> at line <seq>: ..." (at the end of the trace: the largest).
std::uint64_t violation_seq(const Status& status) {
  const std::string& message = status.message();
  const std::size_t at = message.find(" at line ");
  if (at == std::string::npos || at > 8) {
    return ~std::uint64_t{0};
  }
  std::uint64_t seq = 0;
  for (std::size_t i = at + 9; i < message.size() && message[i] >= '0' && message[i] <= '9'; ++i) {
    seq = seq * 10 + static_cast<std::uint64_t>(message[i] - '0');
  }
  return seq;
}

}  // namespace

Status embedder_first_violation(const Status& embedder, const Status& lifetime) {
  if (embedder.ok()) {
    return lifetime;
  }
  return lifetime.ok() || violation_seq(embedder) <= violation_seq(lifetime) ? embedder : lifetime;
}

// ==== The class
// ===================================================================================

EmbedderOracle::EmbedderOracle(bool exact) : state_(std::make_unique<State>(exact)) {}
EmbedderOracle::~EmbedderOracle() = default;

void EmbedderOracle::on_trace_event(const TraceEvent& event) {
  if (serialized_) {
    state_->read(event);
    note_violation_locked();
    return;
  }
  std::lock_guard<std::mutex> guard(mutex_);
  state_->read(event);
  note_violation_locked();
}

void EmbedderOracle::on_trace_line(std::string_view line) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (line.empty() || line.front() == '#') {
    return;
  }
  TraceEvent event;
  if (Status parsed = parse_trace_line(line, &event); !parsed.ok()) {
    ++state_->counts.lines;
    if (state_->violation.empty()) {
      state_->violation = "unparsable trace line: " + parsed.message();
    }
    note_violation_locked();
    return;
  }
  state_->read(event);
  note_violation_locked();
}

void EmbedderOracle::observe_text(std::string_view text) {
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view one = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (!one.empty() && one != "\r") {
      on_trace_line(one);
    }
  }
}

Status EmbedderOracle::finish(bool run_completed) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (!state_->finished) {
    state_->finished = true;
    state_->at_end = true;
    state_->finish(run_completed);
  }
  note_violation_locked();
  return state_->violation.empty() ? Status() : Status(StatusCode::kInternal, state_->violation);
}

Status EmbedderOracle::status() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return state_->violation.empty() ? Status() : Status(StatusCode::kInternal, state_->violation);
}

EmbedderCounts EmbedderOracle::counts() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return state_->counts;
}

void EmbedderOracle::note_violation_locked() {
  if (!state_->violation.empty()) {
    violated_.store(true, std::memory_order_release);
  }
}

// ==== Reading
// =====================================================================================

void EmbedderOracle::State::read(const TraceEvent& event) {
  ++counts.lines;
  line = &event;
  last_seq = event.seq;
  ThreadState* thread = thread_of(event.thread);
  if (thread == nullptr) {
    if (violation.empty()) {
      violation = "inconsistent trace at line " + std::to_string(event.seq) + ": thread T" +
                  std::to_string(event.thread) + " is past the oracle's bound of threads";
    }
    line = nullptr;
    return;
  }
  ThreadState& t = *thread;
  // U4: after the server's stop returned, only the thread that said so may still run.
  if (stopped && event.thread != stop_thread && event.name.substr(0, 6) != "sched.") {
    judge(embedder_oracle_internal::kU4);
    if (!outlived) {
      outlived = true;
      std::string text = "T";  // appended: GCC bug 105651, as in fail()
      text += std::to_string(event.thread) + " ran on after the server's stop ";
      text += "returned (phase end, line " + std::to_string(stop_seq) + "): its line " +
              std::string(event.name);
      fail(embedder_oracle_internal::kU4,
           text + "; a server's stop must join every thread it started");
    }
  }
  dispatch(t);
  t.prev_seq = event.seq;
  line = nullptr;
}

void EmbedderOracle::State::dispatch(ThreadState& t) {
  const std::string_view name = line->name;
  switch (line->name_word) {
    case trace_text_word("wl.adding"):
      return on_adding(t);
    case trace_text_word("wl.add"):
      return on_add(t);
    case trace_text_word("wl.begin"):
      return on_api_begin(t);
    case trace_text_word("wl.close"):
    case trace_text_word("wl.notify"):
    case trace_text_word("wl.post"):
    case trace_text_word("wl.end"):
      return on_api_end(t);
    case trace_text_word("hnd.enter"):
      return on_handler_enter(t);
    case trace_text_word("hnd.leave"):
      return on_handler_leave(t);
    case trace_text_word("hnd.closed"):
      return on_closed_begin(t);
    case trace_text_word("hnd.closed_end"):
      return on_closed_end(t);
    case trace_text_word("wl.task_run"):
      return on_task(t, true);
    case trace_text_word("wl.task_end"):
      return on_task(t, false);
    case trace_text_word("phase"):
      return on_phase(t);
    case trace_text_word("socket"):
      return on_new_socket(t, false);
    case trace_text_word("accept"):
      return on_new_socket(t, true);
    case trace_text_word("bind"):
    case trace_text_word("getsockname"):
    case trace_text_word("listen"):
    case trace_text_word("connect"):
    case trace_text_word("send"):
    case trace_text_word("recv"):
    case trace_text_word("sendto"):
    case trace_text_word("recvfrom"):
    case trace_text_word("shutdown"):
    case trace_text_word("set_nonblocking"):
    case trace_text_word("set_linger"):
    case trace_text_word("get_socket_error"):
      return on_socket_call(t, name);
    case trace_text_word("closesocket.begin"):
      return on_close_begin(t);
    case trace_text_word("closesocket"):
      return on_close_end(t);
    case trace_text_word("fault"):
      return on_fault(t);
    case trace_text_word("last_error"):
      return on_last_error(t);
    case trace_text_word("sleep_ms"):
      return on_wait(t, "sleep_ms");
    case trace_text_word("psn"):
    case trace_text_word("gqcs"):
      return on_port_wait(t);
    case trace_text_word("thread_start"):
      return on_thread_start();
    default:
      if (ends_with(name, ".join") && name.substr(0, 2) == "th") {
        on_join();
        on_wait(t, std::string(name));
      }
      return;
  }
}

void EmbedderOracle::State::fail(std::uint32_t rule, const std::string& what) {
  ++counts.judgement.violated[rule];
  if (!violation.empty()) {
    return;
  }
  // Built by appending into a reserved string: g++ 12 at -O3 warns -Wrestrict about its own
  // inlined memcpy in `"U" + std::to_string(...)` chains (a false positive, GCC bug 105651).
  std::string text;
  text.reserve(64 + what.size());
  text.append("U").append(std::to_string(rule));
  if (at_end) {
    text.append(" at the end of the trace (after line ").append(std::to_string(last_seq));
    text.append(")");
  } else {
    text.append(" at line ").append(std::to_string(line->seq));
  }
  text.append(": ").append(what).append(" [").append(kRuleNames[rule]).append("]");
  violation = std::move(text);
}

bool EmbedderOracle::State::field_socket(std::string_view key, Socket* out) const {
  std::uint64_t value = 0;
  if (!line->find_u64(key, &value)) {
    return false;
  }
  *out = static_cast<Socket>(value);
  return true;
}

bool EmbedderOracle::State::result_number(std::int64_t* out) const {
  if (!line->has_result) {
    return false;
  }
  std::uint64_t value = 0;
  if (line->result.kind == TraceValueKind::kText) {
    if (line->result.text == "INVALID_SOCKET") {
      *out = -1;
      return true;
    }
    if (!line->result.text.empty() && line->result.text.front() == '-') {
      if (!parse_trace_u64(line->result.text.substr(1), &value)) {
        return false;
      }
      *out = -static_cast<std::int64_t>(value);
      return true;
    }
  }
  if (!trace_value_u64(line->result, &value)) {
    return false;
  }
  *out = static_cast<std::int64_t>(value);
  return true;
}

std::string EmbedderOracle::State::where(const ThreadState& t) const {
  std::string text = "on T" + std::to_string(line->thread);
  for (auto it = t.frames.rbegin(); it != t.frames.rend(); ++it) {
    if (it->kind == FrameKind::kHandler) {
      return text + " in the handler of " + embedder_oracle_internal::conn_text(it->conn);
    }
    if (it->kind == FrameKind::kClosed) {
      return text + " in on_closed of " + embedder_oracle_internal::conn_text(it->conn);
    }
    if (it->kind == FrameKind::kTask) {
      return text + " in a task";
    }
  }
  return text + " outside any callback";
}

void EmbedderOracle::State::finish(bool run_completed) {
  using namespace embedder_oracle_internal;
  for (std::uint32_t id = 0; id < threads.size(); ++id) {
    for (const Frame& frame : threads[id].frames) {
      if (frame.kind == FrameKind::kEngine) {
        continue;
      }
      judge(kU9);
      if (run_completed) {
        unjudged(kU9);  // a trace cut short: not a run that ended inside the callback
        continue;
      }
      const char* what = frame.kind == FrameKind::kHandler  ? "the handler of "
                         : frame.kind == FrameKind::kClosed ? "on_closed of "
                                                            : "a task";
      fail(kU9, std::string(what) + (frame.kind == FrameKind::kTask ? "" : conn_text(frame.conn)) +
                    " on T" + std::to_string(id) + ", entered at line " +
                    std::to_string(frame.begin_seq) +
                    ", never returned: the run ended inside it (a callback that waits for "
                    "another, or spins)");
    }
  }
  for (const std::string& started : threads_started) {
    judge(kU4);
    bool joined = false;
    for (const std::string& name : threads_joined) {
      joined = joined || name == started;
    }
    if (!joined && run_completed) {
      fail(kU4, "thread " + started + " was started and never joined");
    }
  }
  for (const auto& [s, value] : values) {
    if (!value.by_embedder) {
      continue;
    }
    judge(kU7);
    if (value.engine_owned || value.life != Value::Life::kOpen) {
      continue;
    }
    if (!run_completed) {
      unjudged(kU7);
      continue;
    }
    std::string text = "socket " + std::to_string(s) + ", opened at line " +
                       std::to_string(value.opened_seq) + " on T" +
                       std::to_string(value.opened_thread) + ", is still open at the end";
    if (!value.add_failed.empty()) {
      text += "; add() of it failed (" + value.add_failed +
              "), which leaves the socket to the caller: close it";
    }
    fail(kU7, text);
  }
}

}  // namespace readyport
