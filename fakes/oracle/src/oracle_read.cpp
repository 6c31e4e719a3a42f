// LifetimeOracle: reading a line (its prefix, its thread, the intervals it ends), dispatching it
// by kind, and the verdicts (violations, ambiguous and unjudged rules, bounds hit). See
// oracle_state.hpp.
#include "oracle_state.hpp"

#include <string>
#include <string_view>

namespace readyport {
namespace lifetime_oracle_internal {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// A line after which its thread no longer holds a packet it dequeued earlier (header, "drained").
bool moves_on(std::string_view name) {
  return !(ends_with(name, ".lock") || ends_with(name, ".try_lock") ||
           starts_with(name, "sched.") || starts_with(name, "obs.") || name == "fault" ||
           name == "phase");
}

// A line that ends the engine call a `post` line was made in (a notify's wl.notify comes after
// the engine's own lock and unlock).
bool ends_post_call(std::string_view name) {
  return moves_on(name) && !ends_with(name, ".unlock") && name != "post";
}

// A line that bounds when its thread's handler may have started or ended (rule O3's intervals):
// everything but the engine's own reports and the scheduler's lines.
bool bounds_handler(std::string_view name) {
  return !(starts_with(name, "obs.") || starts_with(name, "sched."));
}

// "The thread's next seam line" for obs.socket_closed: socket, port and workload lines (set_linger,
// which an abortive close may add, and bookkeeping calls such as last_error do not count).
bool is_socket_or_port_call(std::string_view name) {
  static constexpr std::string_view kNames[] = {"closesocket", "closesocket.begin",
                                                "psn.begin",   "dequeue.begin",
                                                "post.begin",  "psn",
                                                "gqcs",        "post",
                                                "socket",      "accept",
                                                "connect",     "send",
                                                "recv",        "sendto",
                                                "recvfrom",    "shutdown",
                                                "create_port", "close_port",
                                                "bind",        "listen"};
  for (const std::string_view candidate : kNames) {
    if (name == candidate) {
      return true;
    }
  }
  return starts_with(name, "wl.") || starts_with(name, "hnd.");
}

// Events whose fields the oracle reads: a malformed one is a violation, other lines are skipped.
bool reads_event(std::string_view name) {
  static constexpr std::string_view kNames[] = {
      "psn.begin",        "psn",         "gqcs",       "post",  "socket",     "accept",
      "closesocket",      "create_port", "close_port", "fault", "post.begin", "dequeue.begin",
      "closesocket.begin"};
  for (const std::string_view candidate : kNames) {
    if (name == candidate) {
      return true;
    }
  }
  return starts_with(name, "wl.") || starts_with(name, "hnd.") || starts_with(name, "obs.");
}

}  // namespace lifetime_oracle_internal

// ==== Reading ====================================================================================

void LifetimeOracle::State::read(std::string_view text) {
  ++counts.lines;
  raw = text;
  const Status parsed = parse_trace_line(text, &line);
  if (!parsed.ok()) {
    // Lines the oracle does not read may use any syntax; a broken prefix is never acceptable.
    if (line.name.empty() || reads_event(line.name)) {
      unparsable(parsed.message());
    }
    return;
  }
  if (has_seq && line.seq <= last_seq) {
    fail(kInconsistent, "line seq " + num(line.seq) + " after line " + num(last_seq));
  }
  has_seq = true;
  last_seq = line.seq;
  ThreadState& t = threads[line.thread];
  t.id = line.thread;
  const std::string_view name = line.name;
  if (starts_with(name, "sched.")) {
    return;  // the scheduler's own lines: nothing to judge
  }
  if (moves_on(name)) {
    t.has_moved = true;
    t.moved_seq = line.seq;
  }
  if (t.expect_close && is_socket_or_port_call(name)) {
    check_expected_close(t);
  }
  if (t.after_leave_conn != 0 && bounds_handler(name)) {
    Conn* left = find_conn(t.after_leave_conn);
    if (left != nullptr && left->leave_thread == t.id) {
      left->after_leave_seq = line.seq;
    }
    t.after_leave_conn = 0;
  }
  bool post_call_ended = false;
  if (t.open_post && ends_post_call(name)) {
    t.open_post = false;
    --open_posts;
    post_call_ended = true;
  }
  dispatch(t);
  if (post_call_ended) {
    recheck_debts();
  }
  if (!closed_unremoved.empty()) {
    prune_drained();
  }
  t.has_line = true;
  t.last_seq = line.seq;
  if (bounds_handler(name)) {
    t.bound_seq = line.seq;
  }
}

void LifetimeOracle::State::dispatch(ThreadState& t) {
  const std::string_view name = line.name;
  if (name == "psn.begin") {
    return on_psn_begin(t);
  }
  if (name == "psn") {
    return on_psn(t);
  }
  if (name == "gqcs") {
    return on_gqcs(t);
  }
  if (name == "post") {
    return on_post(t);
  }
  if (name == "dequeue.begin") {
    return on_dequeue_begin(t);
  }
  if (name == "post.begin") {
    return on_post_begin(t);
  }
  if (name == "socket" || name == "accept") {
    return on_new_socket();
  }
  if (name == "closesocket.begin") {
    return on_closesocket_begin(t);
  }
  if (name == "closesocket") {
    return on_closesocket(t);
  }
  if (name == "create_port") {
    std::uint64_t port = 0;
    if (need_result() && parse_trace_u64(line.result, &port) && port != 0) {
      ports_open.insert(static_cast<std::uintptr_t>(port));
    }
    return;
  }
  if (name == "close_port") {
    return on_close_port();
  }
  if (name == "fault") {
    return on_fault(t);
  }
  if (starts_with(name, "wl.")) {
    return on_workload(t);
  }
  if (name == "hnd.enter") {
    return on_hnd_enter(t);
  }
  if (name == "hnd.leave") {
    return on_hnd_leave(t);
  }
  if (name == "hnd.closed") {
    return on_hnd_closed();
  }
  if (starts_with(name, "obs.")) {
    return on_observer(t);
  }
  if (name == "phase") {
    // Coverage only: a `phase stop` line marks stop() (the workload writes it before the call).
    if (!line.words.empty() && line.words.front() == "stop") {
      stopping = true;
    }
    return;
  }
  // Everything else (send, recv, locks, ...) only moves its thread on.
}

// ==== Verdicts ===================================================================================

void LifetimeOracle::State::fail(const char* rule, const std::string& what) {
  if (rule != kInconsistent) {
    ++counts.judgement.violated[rule_number(rule)];
  }
  if (!violation.empty()) {
    return;
  }
  const std::string where = at_end ? "at the end of the trace (after line " + num(last_seq) + ")"
                                   : "at line " + num(line.seq);
  violation = std::string(rule) + " " + where + ": " + what;
}

// Past a bound the oracle forgets, and the rules that needed what it forgot are not judged there.
void LifetimeOracle::State::bound_hit(OracleBound bound) {
  ++counts.judgement.bounds_hit[static_cast<std::size_t>(bound)];
  switch (bound) {
    case OracleBound::kClosedUnremoved:  // the oldest taken as drained: O8 and O9 guess
      unjudged(kO8);
      unjudged(kO9);
      return;
    case OracleBound::kEndedKeys:  // a second REMOVE of a forgotten key is not seen
      unjudged(kO7);
      return;
    case OracleBound::kOrphans:  // a forgotten packet pays no handler entry
      unjudged(kO5);
      return;
    case OracleBound::kTombstones:  // a late line about a forgotten connection is not tied to it
      unjudged(kO2);
      unjudged(kO9);
      return;
    case OracleBound::kCount:
      break;
  }
  READYPORT_UNREACHABLE();
}

void LifetimeOracle::State::unparsable(const std::string& why) {
  if (!violation.empty()) {
    return;
  }
  std::string_view quoted = raw.substr(0, kQuotedCharsMax);
  while (!quoted.empty() && (quoted.back() == '\n' || quoted.back() == '\r')) {
    quoted.remove_suffix(1);
  }
  const std::string which =
      line.name.empty() ? "(the " + num(counts.lines) + "th line read)" : num(line.seq);
  violation = "unparsable trace line " + which + ": " + why + ": '" + std::string(quoted) + "'";
}

bool LifetimeOracle::State::need_u64(std::string_view key, std::uint64_t* value_out) {
  if (line.find_u64(key, value_out)) {
    return true;
  }
  unparsable("no numeric " + std::string(key) + "= in " + std::string(line.name));
  return false;
}

bool LifetimeOracle::State::need_socket(std::string_view key, Socket* socket_out) {
  std::uint64_t value = 0;
  if (!need_u64(key, &value)) {
    return false;
  }
  *socket_out = static_cast<Socket>(value);
  return true;
}

bool LifetimeOracle::State::need_id(std::string_view key, IdKey* id_out) {
  std::string_view text;
  if (line.find(key, &text) && parse_trace_conn_id(text, &id_out->first, &id_out->second)) {
    return true;
  }
  unparsable("no " + std::string(key) + "=<slot>/<generation> in " + std::string(line.name));
  return false;
}

bool LifetimeOracle::State::need_result() {
  if (line.has_result) {
    return true;
  }
  unparsable("no '-> <result>' in " + std::string(line.name));
  return false;
}

}  // namespace readyport
