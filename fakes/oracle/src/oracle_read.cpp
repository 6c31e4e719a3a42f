// LifetimeOracle: reading a line (its prefix, its thread, the intervals it ends), dispatching it
// by kind, and the verdicts (violations, ambiguous and unjudged rules, bounds hit). See
// oracle_state.hpp.
#include "oracle_state.hpp"

#include <array>
#include <mutex>
#include <string>
#include <string_view>

#include "readyport/internal/force_inline.hpp"

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

namespace {

EventHandler handler_of(std::string_view name) {
  struct Named {
    std::string_view name;
    EventHandler handler;
  };
  static constexpr Named kHandlers[] = {
      {"psn.begin", EventHandler::kPsnBegin},
      {"psn", EventHandler::kPsn},
      {"gqcs", EventHandler::kGqcs},
      {"post", EventHandler::kPost},
      {"dequeue.begin", EventHandler::kDequeueBegin},
      {"post.begin", EventHandler::kPostBegin},
      {"socket", EventHandler::kNewSocket},
      {"accept", EventHandler::kNewSocket},
      {"closesocket.begin", EventHandler::kClosesocketBegin},
      {"closesocket", EventHandler::kClosesocket},
      {"create_port", EventHandler::kCreatePort},
      {"close_port", EventHandler::kClosePort},
      {"fault", EventHandler::kFault},
      {"hnd.enter", EventHandler::kHandlerEnter},
      {"hnd.leave", EventHandler::kHandlerLeave},
      {"hnd.closed", EventHandler::kHandlerClosed},
      {"hnd.closed_end", EventHandler::kHandlerClosedEnd},
      {"phase", EventHandler::kPhase},
  };
  for (const Named& named : kHandlers) {
    if (name == named.name) {
      return named.handler;
    }
  }
  if (starts_with(name, "sched.")) {
    return EventHandler::kScheduler;
  }
  if (starts_with(name, "wl.")) {
    return EventHandler::kWorkload;
  }
  if (starts_with(name, "obs.")) {
    return EventHandler::kObserver;
  }
  return EventHandler::kNone;
}

}  // namespace

EventClass classify(std::string_view name) {
  EventClass event_class;
  event_class.handler = handler_of(name);
  event_class.moves_on = moves_on(name);
  event_class.ends_post_call = ends_post_call(name);
  event_class.bounds_handler = bounds_handler(name);
  event_class.socket_or_port_call = is_socket_or_port_call(name);
  event_class.read = reads_event(name);
  return event_class;
}

}  // namespace lifetime_oracle_internal

// ==== Reading ====================================================================================

void LifetimeOracle::State::read(std::string_view text) {
  ++counts.lines;
  raw = text;
  line = &parsed;
  const Status status = parse_trace_line(text, &parsed);
  if (!status.ok()) {
    // Lines the oracle does not read may use any syntax; a broken prefix is never acceptable.
    if (line->name.empty() || reads_event(line->name)) {
      unparsable(status.message());
    }
    return;
  }
  judge(classify(parsed.name));
}

namespace {

// classify() of recorded events' names, one memo per OS thread shared by the oracles it runs one
// after another: a recorded event's name is a literal or interned (trace_event.hpp), so one
// address holds the same text for the whole process. Found by the name's word (its FNV-1a hash,
// which the event carries), told apart by address and size; open addressing with linear
// probing, never evicted: two names whose words hash alike both stay (a direct-mapped memo let
// two such names, socket and last_error, evict each other on every line). Half full, a new name
// is classified without being remembered. Only a memo of a pure function, never iterated: no
// verdict depends on it.
struct NameClass {
  const char* data = nullptr;
  std::size_t size = 0;
  EventClass event_class;
};
thread_local std::array<NameClass, kNameClassesMax> name_classes{};
thread_local std::size_t names_remembered = 0;
static_assert((kNameClassesMax & (kNameClassesMax - 1)) == 0, "a power of two");

// classify_recorded()'s rare path: a name not remembered yet, from `slot` on.
READYPORT_NOINLINE EventClass classify_new(std::string_view name, std::size_t slot) {
  for (;; slot = (slot + 1) & (kNameClassesMax - 1)) {
    NameClass& known = name_classes[slot];
    if (known.data == name.data() && known.size == name.size()) {
      return known.event_class;
    }
    if (known.data == nullptr) {
      if (names_remembered >= kNameClassesMax / 2) {
        return classify(name);
      }
      ++names_remembered;
      known = NameClass{name.data(), name.size(), classify(name)};
      return known.event_class;
    }
  }
}

EventClass classify_recorded(std::string_view name, std::uint64_t name_word) {
  const std::size_t slot = static_cast<std::size_t>(name_word >> 40) & (kNameClassesMax - 1);
  const NameClass& known = name_classes[slot];
  if (known.data == name.data() && known.size == name.size()) {
    return known.event_class;
  }
  return classify_new(name, slot);
}

}  // namespace

READYPORT_FORCE_INLINE void LifetimeOracle::State::read_event(const TraceEvent& event) {
  ++counts.lines;
  raw = std::string_view();
  line = &event;
  judge(classify_recorded(event.name, event.name_word));
  line = &parsed;  // `event` is the recorder's: not kept past this call
}

// LifetimeOracle's entry for a recorded event (lifetime_oracle.cpp has the rest of the public
// class): here, so that reading an event is one call, read_event() and judge() inlined.
void LifetimeOracle::on_trace_event(const TraceEvent& event) {
  if (serialized_) {
    state_->read_event(event);
    note_violation_locked();
    return;
  }
  std::lock_guard<std::mutex> guard(mutex_);
  state_->read_event(event);
  note_violation_locked();
}

ThreadState& LifetimeOracle::State::thread_state_added(std::uint32_t id) {
  if (id >= kThreadIndexMax) {
    return threads[id];
  }
  if (thread_index.size() <= id) {
    thread_index.resize(std::size_t{id} + 1, nullptr);
  }
  if (thread_index[id] == nullptr) {
    thread_index[id] = &threads[id];
  }
  return *thread_index[id];
}

// Every line passes here: inlined into its two readers, read() and read_event() (and used by
// no other file).
READYPORT_FORCE_INLINE void LifetimeOracle::State::judge(const EventClass& event_class) {
  if (has_seq && line->seq <= last_seq) {
    fail(kInconsistent, "line seq " + num(line->seq) + " after line " + num(last_seq));
  }
  has_seq = true;
  last_seq = line->seq;
  ThreadState& t = thread_state(line->thread);
  t.id = line->thread;
  if (event_class.handler == EventHandler::kScheduler) {
    return;  // the scheduler's own lines: nothing to judge
  }
  if (event_class.moves_on) {
    t.has_moved = true;
    t.moved_seq = line->seq;
  }
  if (t.expect_close && event_class.socket_or_port_call) {
    check_expected_close(t);
  }
  if (t.after_leave_conn != 0 && event_class.bounds_handler) {
    Conn* left = find_conn(t.after_leave_conn);
    if (left != nullptr && left->leave_thread == t.id) {
      left->after_leave_seq = line->seq;
    }
    t.after_leave_conn = 0;
  }
  bool post_call_ended = false;
  if (t.open_post && event_class.ends_post_call) {
    t.open_post = false;
    --open_posts;
    post_call_ended = true;
  }
  if (event_class.handler != EventHandler::kNone) {  // kNone (send, recv, locks...): no reading
    dispatch(t, event_class.handler);
  }
  if (post_call_ended) {
    recheck_debts();
  }
  if (!closed_unremoved.empty()) {
    prune_drained();
  }
  t.has_line = true;
  t.last_seq = line->seq;
  if (event_class.bounds_handler) {
    t.bound_seq = line->seq;
  }
}

void LifetimeOracle::State::dispatch(ThreadState& t, EventHandler handler) {
  switch (handler) {
    case EventHandler::kNone:  // send, recv, locks, ...: only moves its thread on
    case EventHandler::kScheduler:
      return;
    case EventHandler::kPsnBegin:
      return on_psn_begin(t);
    case EventHandler::kPsn:
      return on_psn(t);
    case EventHandler::kGqcs:
      return on_gqcs(t);
    case EventHandler::kPost:
      return on_post(t);
    case EventHandler::kDequeueBegin:
      return on_dequeue_begin(t);
    case EventHandler::kPostBegin:
      return on_post_begin(t);
    case EventHandler::kNewSocket:
      return on_new_socket();
    case EventHandler::kClosesocketBegin:
      return on_closesocket_begin(t);
    case EventHandler::kClosesocket:
      return on_closesocket(t);
    case EventHandler::kCreatePort: {
      std::uint64_t port = 0;
      if (need_result() && trace_value_u64(line->result, &port) && port != 0) {
        ports_open.insert(static_cast<std::uintptr_t>(port));
      }
      return;
    }
    case EventHandler::kClosePort:
      return on_close_port();
    case EventHandler::kFault:
      return on_fault(t);
    case EventHandler::kWorkload:
      return on_workload(t);
    case EventHandler::kHandlerEnter:
      return on_hnd_enter(t);
    case EventHandler::kHandlerLeave:
      return on_hnd_leave(t);
    case EventHandler::kHandlerClosedEnd:
      return on_hnd_closed_end();
    case EventHandler::kHandlerClosed:
      return on_hnd_closed();
    case EventHandler::kObserver:
      return on_observer(t);
    case EventHandler::kPhase:
      // Coverage only: a `phase stop` line marks stop() (the workload writes it before the call).
      if (!line->words.empty() && trace_value_is(*line, line->words.front(), "stop")) {
        stopping = true;
      }
      return;
  }
  READYPORT_UNREACHABLE();
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
                                   : "at line " + num(line->seq);
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
  std::string rendered;
  if (raw.empty()) {  // a recorded event: its text as it would be written
    trace_event_render(*line, &rendered);
  }
  std::string_view quoted =
      (raw.empty() ? std::string_view(rendered) : raw).substr(0, kQuotedCharsMax);
  while (!quoted.empty() && (quoted.back() == '\n' || quoted.back() == '\r')) {
    quoted.remove_suffix(1);
  }
  const std::string which =
      line->name.empty() ? "(the " + num(counts.lines) + "th line read)" : num(line->seq);
  violation = "unparsable trace line " + which + ": " + why + ": '" + std::string(quoted) + "'";
}

bool LifetimeOracle::State::need_u64(std::string_view key, std::uint64_t* value_out) {
  if (line->find_u64(key, value_out)) {
    return true;
  }
  unparsable("no numeric " + std::string(key) + "= in " + std::string(line->name));
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
  if (line->find_id(key, &id_out->first, &id_out->second)) {
    return true;
  }
  unparsable("no " + std::string(key) + "=<slot>/<generation> in " + std::string(line->name));
  return false;
}

bool LifetimeOracle::State::need_result() {
  if (line->has_result) {
    return true;
  }
  unparsable("no '-> <result>' in " + std::string(line->name));
  return false;
}

}  // namespace readyport
