// LifetimeOracle: the OS-side lifetime oracle over trace lines (lifetime_oracle.hpp).
//
// Layout of this file: helpers and the model's records; State (everything the oracle knows, one
// method per kind of line); then the public class, which only locks and forwards.
#include "readyport/fake/lifetime_oracle.hpp"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "readyport/fake/trace_parse.hpp"
#include "readyport/os.hpp"

namespace readyport {
namespace lifetime_oracle_internal {

// Bounds (see the header's "Memory").
constexpr std::size_t kTombstonesMax = 65536;
constexpr std::size_t kTombstonesPerSocketMax = 1024;
constexpr std::size_t kEndedKeysMax = 65536;
constexpr std::size_t kOrphansMax = 65536;
constexpr std::size_t kClosedUnremovedMax = 65536;
constexpr std::size_t kQuotedCharsMax = 160;
// Handler::on_events's kInterestClose (engine.hpp), as the workload writes it in hnd.leave.
constexpr std::uint64_t kReturnClose = 0x8000;

// The rules, as violations name them.
constexpr const char* kO1 = "O1 close before REMOVE (spec E1/E2)";
constexpr const char* kO2 = "O2 handler after the end";
constexpr const char* kO3 = "O3 two handlers at once";
constexpr const char* kO4 = "O4 wrong connection";
constexpr const char* kO5 = "O5 handler without a cause";
constexpr const char* kO6 = "O6 second port (spec B8)";
constexpr const char* kO7 = "O7 second REMOVE (spec B5/B7)";
constexpr const char* kO8 = "O8 key reuse";
constexpr const char* kO9 = "O9 on_closed";
constexpr const char* kO10 = "O10 closed under a running handler";
constexpr const char* kO11 = "O11 end of run";
constexpr const char* kO12 = "O12 engine misreports";
constexpr const char* kInconsistent = "inconsistent trace";

using IdKey = std::pair<std::uint32_t, std::uint32_t>;  // (slot, generation)

std::string id_text(IdKey id) { return std::to_string(id.first) + "/" + std::to_string(id.second); }

std::string hex_text(std::uint64_t value) {
  char text[24];
  const int size =
      std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
  return std::string(text, static_cast<std::size_t>(size > 0 ? size : 0));
}

std::string num(std::uint64_t value) { return std::to_string(value); }

// The N of a rule's name "ON ...".
std::uint32_t rule_number(const char* rule) {
  READYPORT_ASSERT(rule[0] == 'O');
  std::uint32_t number = 0;
  for (const char* c = rule + 1; *c >= '0' && *c <= '9'; ++c)
    number = number * 10 + static_cast<std::uint32_t>(*c - '0');
  READYPORT_ASSERT(number >= 1 && number <= kOracleRules);
  return number;
}

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
  static constexpr std::string_view kNames[] = {
      "closesocket", "closesocket.begin", "psn.begin", "dequeue.begin", "post.begin",
      "psn",         "gqcs",        "post",       "socket",
      "accept",      "connect",     "send",       "recv", "sendto", "recvfrom",
      "shutdown",    "create_port", "close_port", "bind", "listen"};
  for (const std::string_view candidate : kNames) {
    if (name == candidate) return true;
  }
  return starts_with(name, "wl.") || starts_with(name, "hnd.");
}

// Events whose fields the oracle reads: a malformed one is a violation, other lines are skipped.
bool reads_event(std::string_view name) {
  static constexpr std::string_view kNames[] = {
      "psn.begin",   "psn",         "gqcs",          "post",       "socket",     "accept",
      "closesocket", "create_port", "close_port",    "fault",      "post.begin", "dequeue.begin",
      "closesocket.begin"};
  for (const std::string_view candidate : kNames) {
    if (name == candidate) return true;
  }
  return starts_with(name, "wl.") || starts_with(name, "hnd.") || starts_with(name, "obs.");
}

// A registration at the OS.
enum class RegState : std::uint8_t {
  kTentative,        // created by an ENABLE of a psn.begin whose psn line has not come
  kLive,             // applied; no REMOVE applied
  kRemovePending,    // REMOVE applied; its packet not dequeued
  kClosedUnremoved,  // the socket was closed before a REMOVE packet: packets may still come
};

const char* reg_state_name(RegState state) {
  switch (state) {
    case RegState::kTentative:
      return "being created";
    case RegState::kLive:
      return "live";
    case RegState::kRemovePending:
      return "remove-pending";
    case RegState::kClosedUnremoved:
      return "closed-unremoved";
  }
  return "?";
}

struct Reg {
  std::uint64_t number = 0;
  Socket socket = kInvalidSocket;
  std::uint64_t life = 0;  // the socket life it was created on
  std::uintptr_t port = 0;
  std::uintptr_t key = 0;
  std::uint16_t filter = 0;
  std::uint8_t trigger = 0;
  RegState state = RegState::kLive;
  bool remove_tentative = false;  // a REMOVE in a psn.begin whose psn line has not come
  bool remove_applied = false;
  bool remove_refused = false;
  bool out_since_enable = false;  // a packet with OUT since the last ENABLE (coverage)
  std::uint64_t conn = 0;         // the workload connection it belongs to (0: none)
  std::uint64_t close_seq = 0;    // closed-unremoved: the closesocket line
  std::uint64_t close_post = 0;   // closed-unremoved: posts made before the closesocket
  bool drain_post_seen = false;   // a packet posted after the close was dequeued (its port)
  std::map<std::uint32_t, std::uint64_t> dequeuers;  // thread -> line of its latest dequeue
  // Threads whose dequeue was open when the drain's packet was dequeued: each may hold a packet
  // of the key until its dequeue's line shows what it took.
  std::set<std::uint32_t> waiting;
};

// One life of a socket value: from socket/accept to a successful closesocket (spec E5).
struct Life {
  std::uint64_t number = 0;
  std::uint64_t reg = 0;  // its registration that is not closed-unremoved (0: none)
  // The key of its latest registration that ended by a dequeued REMOVE packet, while no other
  // registration followed it (a REMOVE for that key again is a second REMOVE, B7).
  bool removed = false;
  std::uintptr_t removed_key = 0;
};

enum class AddState : std::uint8_t { kAdding, kAdded, kFailed };

// A workload connection: wl.adding s=S to hnd.closed (then a tombstone).
struct Conn {
  std::uint64_t number = 0;
  Socket socket = kInvalidSocket;
  AddState add = AddState::kAdding;
  bool id_known = false;
  IdKey id;
  std::uint64_t reg = 0;  // its registration while one is tentative, live, pending or unremoved
  std::uint64_t entries = 0;
  std::uint64_t paid = 0;  // packets dequeued with its key + notifies that returned ok
  bool in_handler = false;
  std::uint32_t handler_thread = 0;
  bool remove_dequeued = false;
  bool remove_refused = false;
  bool refused_live = false;  // a REMOVE was refused while the registration was live
  bool drained = false;       // its closed-unremoved registration was drained
  bool engine_closed = false;
  bool behind_announced = false;
  bool behind_closed = false;
  bool close_returned = false;  // a wl.close -> ok for it
  std::uint64_t close_seq = 0;  // that wl.close line
  bool closed = false;          // hnd.closed
  std::uint64_t closed_seq = 0;
  std::uint64_t debt_seq = 0;  // O5: the entry not yet paid for
  std::uint64_t handler_runs = 0;     // hnd.enter lines: the number of the current or last run
  std::uint32_t leave_thread = 0;     // the thread of the last hnd.leave (0: none yet)
  std::uint64_t after_leave_seq = 0;  // that thread's next line (0: none yet), see O3
};

// One element of a psn.begin (or of a psn line without one), until the psn line settles it.
struct Element {
  TraceReg reg;
  std::uint64_t created = 0;  // ENABLE: the registration it creates
  std::uint64_t target = 0;   // ENABLE of a registered socket, REMOVE: the registration
  std::string key_reuse;      // ENABLE: the O8 sentence, reported if it is applied
};

struct ThreadState {
  std::uint32_t id = 0;
  bool has_line = false;
  std::uint64_t last_seq = 0;  // its latest line
  bool has_moved = false;
  std::uint64_t moved_seq = 0;  // its latest line that moves on (see moves_on)
  std::uint64_t call_seq = 0;   // its latest psn or gqcs line
  std::uint64_t adding = 0;     // the connection of its wl.adding whose wl.add has not come
  // Its latest psn or gqcs line that dequeued entries: the batch whose handlers it runs (a
  // handler may make registration-only calls, count=0, before the batch's later handlers run).
  std::uint64_t dequeue_seq = 0;
  bool begin_open = false;
  std::uint64_t begin_seq = 0;
  std::uintptr_t begin_port = 0;
  std::vector<Element> begin;
  std::vector<std::uint64_t> handlers;  // connections whose handler runs here (innermost last)
  std::vector<std::uint64_t> removed;   // connections whose REMOVE its latest port call dequeued
  bool call_failed = false;             // a `fault psn.call_fails` since its latest psn
  bool behind_pending = false;
  Socket behind_socket = kInvalidSocket;
  bool open_post = false;  // a post whose engine call has not ended (see ends_post_call)
  bool expect_close = false;
  Socket expect_socket = kInvalidSocket;
  std::uint64_t expect_seq = 0;
  bool obs_enter = false;
  IdKey obs_enter_id;
  bool left = false;  // a hnd.leave waiting for its obs.handler_leave
  bool left_id_known = false;
  IdKey left_id;
  std::uint64_t left_ret = 0;
  std::uint64_t left_seq = 0;
  std::uint64_t bound_seq = 0;         // its latest line that bounds a handler (bounds_handler)
  std::uint64_t after_leave_conn = 0;  // its last hnd.leave's connection, until its next line
  // Intervals (recording_os.hpp): a closesocket, a dequeue and a post between begin and end line.
  bool close_open = false;
  bool close_applied = false;  // taken as done before its line (its socket value came back)
  Socket close_socket = kInvalidSocket;
  std::uint64_t close_conn = 0;         // the socket's connection at closesocket.begin
  std::uint64_t close_handler_run = 0;  // that connection's handler run then (0: none running)
  bool dequeue_open = false;
  std::uintptr_t dequeue_port = 0;
  bool post_open = false;  // post.begin without its post line; its packet is in `posts`
  std::tuple<std::uintptr_t, std::uintptr_t, std::uint32_t> post_packet;
  std::uint64_t post_number = 0;
};

// An O1 or O9 that holds unless a dequeue open at its line took the REMOVE packet first.
struct PendingClose {
  const char* rule = nullptr;
  std::uint64_t reg = 0;
  Socket socket = kInvalidSocket;
  std::uint64_t close_seq = 0;
  std::string text;
  std::set<std::uint32_t> waiting;  // threads whose open dequeue may hold the REMOVE packet
  bool settle = false;  // its REMOVE's call was open: refused, it is ambiguous; applied, judged
};

struct Orphan {  // a socket packet no known registration explains (yet)
  std::uintptr_t key = 0;
  std::uintptr_t port = 0;
  std::uint64_t seq = 0;
  std::uint32_t thread = 0;
};

struct EndedKey {
  std::uint64_t seq = 0;
  bool by_remove = false;
};

struct TaskCount {
  std::uint64_t posted = 0;
  std::uint64_t ran = 0;
};

struct Coverage {
  std::uint64_t remove_ored_with_in = 0;
  std::uint64_t stale_packet_dequeued = 0;
  std::uint64_t call_retry = 0;
  std::uint64_t remove_refused_quarantined = 0;
  std::uint64_t oneshot_rearmed_all_after_out = 0;
  std::uint64_t full_batch = 0;
  std::uint64_t socket_reused_while_stale = 0;
  std::uint64_t close_in_handler = 0;
  std::uint64_t handler_entered = 0;
};

}  // namespace lifetime_oracle_internal

using namespace lifetime_oracle_internal;  // NOLINT(google-build-using-namespace): this file's

struct LifetimeOracle::State {
  // ---- Reading ----------------------------------------------------------------------------------
  void read(std::string_view text);
  void dispatch(ThreadState& t);
  void finish();

  // ---- Verdicts ---------------------------------------------------------------------------------
  void fail(const char* rule, const std::string& what);
  void judge(const char* rule) { ++counts.judgement.judged[rule_number(rule)]; }
  void ambiguous(const char* rule) { ++counts.judgement.ambiguous[rule_number(rule)]; }
  void unjudged(const char* rule) { ++counts.judgement.unjudged[rule_number(rule)]; }
  void bound_hit(OracleBound bound);
  void unparsable(const std::string& why);
  bool need_u64(std::string_view key, std::uint64_t* value_out);
  bool need_socket(std::string_view key, Socket* socket_out);
  bool need_id(std::string_view key, IdKey* id_out);
  bool need_result();

  // ---- Port lines -------------------------------------------------------------------------------
  void on_psn_begin(ThreadState& t);
  void on_psn(ThreadState& t);
  void on_gqcs(ThreadState& t);
  void on_post(ThreadState& t);
  void on_post_begin(ThreadState& t);
  void on_dequeue_begin(ThreadState& t);
  void end_dequeue(ThreadState& t);
  Element begin_element(std::uintptr_t port, const TraceReg& reg);
  void settle_element(ThreadState& t, std::uintptr_t port, const Element& element,
                      const TraceReg& reg, bool call_ok, bool had_begin);
  void abandon_begin(ThreadState& t);
  void take_entries(ThreadState& t, std::uintptr_t port);
  void socket_packet(ThreadState& t, Reg& reg, const TraceEntry& entry);
  void stray_packet(ThreadState& t, std::uintptr_t port, const TraceEntry& entry);
  void post_dequeued(std::uintptr_t port, std::uint64_t post);
  void count_batch(std::uint64_t received, std::uint64_t count);

  // ---- Socket lines -----------------------------------------------------------------------------
  void on_new_socket();
  void on_closesocket(ThreadState& t);
  void on_closesocket_begin(ThreadState& t);
  void apply_close(ThreadState& t, Socket socket, bool closed);
  void close_judged(ThreadState& t, Socket socket, Conn* conn, Reg* reg);
  void on_close_port();
  void on_fault(ThreadState& t);

  // ---- Workload and handler lines ---------------------------------------------------------------
  void on_workload(ThreadState& t);
  void on_wl_add(ThreadState& t);
  void on_hnd_enter(ThreadState& t);
  void on_hnd_leave(ThreadState& t);
  void on_hnd_closed();
  void on_observer(ThreadState& t);
  void check_expected_close(ThreadState& t);

  // ---- The model --------------------------------------------------------------------------------
  Life& life_of(Socket socket);
  Life* find_life(Socket socket);
  Reg* find_reg(std::uint64_t number);
  Reg* active_reg(Socket socket);
  std::uint64_t create_reg(Socket socket, Life& life, std::uintptr_t port, const TraceReg& reg);
  void destroy_reg(Reg& reg);
  void end_by_remove(ThreadState& t, Reg& reg);
  void close_unremoved(Reg& reg);
  void finish_drained(Reg& reg);
  void prune_drained();
  bool drained(const Reg& reg) const;
  bool thread_moved(std::uint32_t thread, std::uint64_t seq) const;
  std::string key_reuse(std::uintptr_t port, std::uintptr_t key);
  Reg* deliverable(std::uintptr_t port, std::uintptr_t key);
  void adopt_orphans(ThreadState& t, Reg& reg);
  void remember_ended_key(std::uintptr_t key, bool by_remove);
  void refuse_remove(Socket socket, Reg* reg);

  Conn* find_conn(std::uint64_t number);
  Conn* conn_by_id(IdKey id);
  Conn* open_conn(Socket socket);
  Conn* linkable_conn(Socket socket);
  Conn* adding_conn(Socket socket);
  Conn* handler_conn(Socket socket, IdKey id);
  void claim_id(Conn& conn, IdKey id);
  void drop_conn(Conn& conn);
  void bury(Conn& conn);
  bool drained_for(const Conn& conn) const;
  bool closing(Socket socket) const;
  void pend_or_fail(const ThreadState& t, const Reg& reg, PendingClose pending);
  void settle_pending(std::uint64_t reg, bool applied);
  void pay(std::uint64_t conn_number);
  void recheck_debts();
  std::string conn_text(const Conn& conn) const;
  std::string reg_text(const Reg& reg) const;

  // ---- Data (all guarded by LifetimeOracle::mutex_) ---------------------------------------------
  TraceLine line;
  std::string_view raw;  // the current line's text
  bool has_seq = false;
  std::uint64_t last_seq = 0;
  bool at_end = false;  // finish() is judging
  bool finished = false;
  std::string violation;
  OracleCounts counts;
  Coverage coverage;
  std::map<std::string, std::uint64_t> fault_sites;

  std::map<std::uint32_t, ThreadState> threads;
  std::map<Socket, Life> lives;
  std::uint64_t lives_made = 0;
  std::map<std::uint64_t, Reg> regs;
  std::uint64_t regs_made = 0;
  std::map<std::uintptr_t, std::vector<std::uint64_t>> regs_by_key;  // every reg not ended
  std::set<std::uint64_t> closed_unremoved;
  std::map<std::uintptr_t, EndedKey> ended_keys;
  std::deque<std::uintptr_t> ended_key_order;
  std::deque<Orphan> orphans;
  // Posts not dequeued yet, by (port, key, bytes): their numbers in post order.
  std::map<std::tuple<std::uintptr_t, std::uintptr_t, std::uint32_t>, std::deque<std::uint64_t>>
      posts;
  std::uint64_t posts_made = 0;
  std::uint32_t open_posts = 0;  // threads with open_post
  std::map<std::uint64_t, Conn> conns;
  std::uint64_t conns_made = 0;
  std::map<Socket, std::vector<std::uint64_t>> conns_by_socket;  // oldest first
  std::map<IdKey, std::uint64_t> conns_by_id;
  std::deque<std::uint64_t> tombstones;
  std::set<std::uint64_t> debts;  // O5: connections with more entries than causes so far
  std::vector<PendingClose> pending_closes;  // O1 waiting on open dequeues
  std::set<std::uintptr_t> ports_open;
  std::map<std::uint64_t, TaskCount> tasks;
  bool observer_seen = false;
};

// ==== Reading ====================================================================================

void LifetimeOracle::State::read(std::string_view text) {
  ++counts.lines;
  raw = text;
  const Status parsed = parse_trace_line(text, &line);
  if (!parsed.ok()) {
    // Lines the oracle does not read may use any syntax; a broken prefix is never acceptable.
    if (line.name.empty() || reads_event(line.name)) unparsable(parsed.message());
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
  if (starts_with(name, "sched.")) return;  // the scheduler's own lines: nothing to judge
  if (moves_on(name)) {
    t.has_moved = true;
    t.moved_seq = line.seq;
  }
  if (t.expect_close && is_socket_or_port_call(name)) check_expected_close(t);
  if (t.after_leave_conn != 0 && bounds_handler(name)) {
    Conn* left = find_conn(t.after_leave_conn);
    if (left != nullptr && left->leave_thread == t.id) left->after_leave_seq = line.seq;
    t.after_leave_conn = 0;
  }
  bool post_call_ended = false;
  if (t.open_post && ends_post_call(name)) {
    t.open_post = false;
    --open_posts;
    post_call_ended = true;
  }
  dispatch(t);
  if (post_call_ended) recheck_debts();
  if (!closed_unremoved.empty()) prune_drained();
  t.has_line = true;
  t.last_seq = line.seq;
  if (bounds_handler(name)) t.bound_seq = line.seq;
}

void LifetimeOracle::State::dispatch(ThreadState& t) {
  const std::string_view name = line.name;
  if (name == "psn.begin") return on_psn_begin(t);
  if (name == "psn") return on_psn(t);
  if (name == "gqcs") return on_gqcs(t);
  if (name == "post") return on_post(t);
  if (name == "dequeue.begin") return on_dequeue_begin(t);
  if (name == "post.begin") return on_post_begin(t);
  if (name == "socket" || name == "accept") return on_new_socket();
  if (name == "closesocket.begin") return on_closesocket_begin(t);
  if (name == "closesocket") return on_closesocket(t);
  if (name == "create_port") {
    std::uint64_t port = 0;
    if (need_result() && parse_trace_u64(line.result, &port) && port != 0) {
      ports_open.insert(static_cast<std::uintptr_t>(port));
    }
    return;
  }
  if (name == "close_port") return on_close_port();
  if (name == "fault") return on_fault(t);
  if (starts_with(name, "wl.")) return on_workload(t);
  if (name == "hnd.enter") return on_hnd_enter(t);
  if (name == "hnd.leave") return on_hnd_leave(t);
  if (name == "hnd.closed") return on_hnd_closed();
  if (starts_with(name, "obs.")) return on_observer(t);
  // Everything else (send, recv, locks, phase, ...) only moves its thread on.
}

// ==== Verdicts ===================================================================================

void LifetimeOracle::State::fail(const char* rule, const std::string& what) {
  if (rule != kInconsistent) ++counts.judgement.violated[rule_number(rule)];
  if (!violation.empty()) return;
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
  if (!violation.empty()) return;
  std::string_view quoted = raw.substr(0, kQuotedCharsMax);
  while (!quoted.empty() && (quoted.back() == '\n' || quoted.back() == '\r')) {
    quoted.remove_suffix(1);
  }
  const std::string which =
      line.name.empty() ? "(the " + num(counts.lines) + "th line read)" : num(line.seq);
  violation = "unparsable trace line " + which + ": " + why + ": '" + std::string(quoted) + "'";
}

bool LifetimeOracle::State::need_u64(std::string_view key, std::uint64_t* value_out) {
  if (line.find_u64(key, value_out)) return true;
  unparsable("no numeric " + std::string(key) + "= in " + std::string(line.name));
  return false;
}

bool LifetimeOracle::State::need_socket(std::string_view key, Socket* socket_out) {
  std::uint64_t value = 0;
  if (!need_u64(key, &value)) return false;
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
  if (line.has_result) return true;
  unparsable("no '-> <result>' in " + std::string(line.name));
  return false;
}

// ==== Port lines =================================================================================

void LifetimeOracle::State::on_psn_begin(ThreadState& t) {
  std::uint64_t port = 0;
  if (!need_u64("port", &port)) return;
  if (!line.has_regs) return unparsable("psn.begin without regs=");
  if (t.begin_open) {
    fail(kInconsistent, "psn.begin on T" + num(t.id) + " while its psn.begin at line " +
                            num(t.begin_seq) + " has no psn line");
    abandon_begin(t);
  }
  t.begin_open = true;
  t.begin_seq = line.seq;
  t.begin_port = static_cast<std::uintptr_t>(port);
  t.begin.clear();
  for (const TraceReg& reg : line.regs) {
    t.begin.push_back(begin_element(t.begin_port, reg));
  }
}

// Makes `reg` possibly applied from now on (A7: what it causes may be dequeued by another thread
// before this call's own psn line), and judges the attempt itself (O6, O7).
Element LifetimeOracle::State::begin_element(std::uintptr_t port, const TraceReg& reg) {
  Element element;
  element.reg = reg;
  if (reg.operation == kSockNotifyOpEnable) {
    judge(kO6);
    Life& life = life_of(reg.socket);
    if (life.reg != 0) {
      // An ENABLE of a registered socket modifies it (B2)... on its own port only (B8).
      Reg* existing = find_reg(life.reg);
      if (existing != nullptr && existing->port != port) {
        fail(kO6, "ENABLE of socket " + num(reg.socket) + " on port " + num(port) +
                      " while its registration " + reg_text(*existing) + " lives on port " +
                      num(existing->port));
      }
      element.target = life.reg;
      return element;
    }
    // An ENABLE of an unregistered socket life creates a registration (B2).
    judge(kO8);
    element.key_reuse = key_reuse(port, reg.key);
    element.created = create_reg(reg.socket, life, port, reg);
    return element;
  }
  if (reg.operation == kSockNotifyOpRemove) {
    judge(kO7);
    Reg* existing = active_reg(reg.socket);
    if (existing == nullptr) {
      // Nothing to remove: the OS refuses it (B6). Harmless to the OS, but a REMOVE for the key
      // whose REMOVE packet was already dequeued is the engine removing twice (B7).
      const Life* life = find_life(reg.socket);
      if (life != nullptr && life->removed && life->removed_key == reg.key) {
        fail(kO7, "REMOVE of socket " + num(reg.socket) + " key " + num(reg.key) +
                      " after that registration's REMOVE packet was dequeued");
      }
      return element;
    }
    if (existing->key != reg.key) {
      // The OS ignores the key of a REMOVE (B5): this would remove another registration.
      fail(kO7, "REMOVE of socket " + num(reg.socket) + " carries key " + num(reg.key) +
                    " but its registration " + reg_text(*existing) +
                    " has another: a REMOVE meant for an earlier registration");
    }
    if (existing->state == RegState::kRemovePending || existing->remove_tentative) {
      // B5/B7: one REMOVE per registration. (A retry after a failed call or a refused REMOVE
      // finds neither flag set.)
      fail(kO7, "REMOVE of socket " + num(reg.socket) + " for registration " + reg_text(*existing) +
                    ", whose earlier REMOVE packet has not been dequeued");
    }
    existing->remove_tentative = true;
    element.target = existing->number;
  }
  return element;
}

void LifetimeOracle::State::abandon_begin(ThreadState& t) {
  for (const Element& element : t.begin) {
    TraceReg failed = element.reg;
    failed.has_result = true;
    failed.applied = false;
    settle_element(t, t.begin_port, element, failed, false, true);
  }
  t.begin.clear();
  t.begin_open = false;
}

void LifetimeOracle::State::on_psn(ThreadState& t) {
  std::uint64_t port64 = 0;
  if (!need_u64("port", &port64) || !need_result()) return;
  const std::uintptr_t port = static_cast<std::uintptr_t>(port64);
  ++counts.port_calls;
  t.removed.clear();
  t.call_seq = line.seq;
  if (line.has_entries) t.dequeue_seq = line.seq;
  if (t.call_failed) {
    ++coverage.call_retry;
    t.call_failed = false;
  }
  // Spec A1-A3: only these two returns mean the registrations were processed.
  const bool call_ok = line.result == "ERROR_SUCCESS" || line.result == "WAIT_TIMEOUT";
  const bool had_begin = t.begin_open;
  std::vector<Element> elements;
  if (had_begin) {
    elements.swap(t.begin);
    t.begin_open = false;
    bool same = t.begin_port == port && elements.size() == line.regs.size();
    for (std::size_t i = 0; same && i < elements.size(); ++i) {
      same = elements[i].reg.socket == line.regs[i].socket &&
             elements[i].reg.operation == line.regs[i].operation;
    }
    if (!same) {
      fail(kInconsistent, "the psn line on T" + num(t.id) + " differs from its psn.begin at line " +
                              num(t.begin_seq));
      t.begin.swap(elements);
      t.begin_open = true;
      abandon_begin(t);
      return;
    }
  } else {
    for (const TraceReg& reg : line.regs) elements.push_back(begin_element(port, reg));
  }
  for (std::size_t i = 0; i < elements.size(); ++i) {
    settle_element(t, port, elements[i], line.regs[i], call_ok, had_begin);
  }
  if (call_ok && line.has_entries) take_entries(t, port);
  end_dequeue(t);
  std::uint64_t received = 0;
  std::uint64_t count = 0;
  if (line.find_u64("n", &received) && line.find_u64("count", &count)) {
    count_batch(received, count);
  }
}

// The psn line's result for one element: applied or not (A3, A8).
void LifetimeOracle::State::settle_element(ThreadState& t, std::uintptr_t port,
                                           const Element& element, const TraceReg& reg,
                                           bool call_ok, bool had_begin) {
  const bool applied = call_ok && reg.has_result && reg.applied;
  if (element.reg.operation == kSockNotifyOpEnable) {
    if (element.created != 0) {
      Reg* created = find_reg(element.created);
      if (created == nullptr) return;  // ended meanwhile (closed by another thread)
      if (!applied) {
        // Not applied: no registration ever existed.
        if (created->state == RegState::kTentative) destroy_reg(*created);
        return;
      }
      if (created->state == RegState::kTentative) created->state = RegState::kLive;
      ++counts.registrations;
      if (!element.key_reuse.empty()) fail(kO8, element.key_reuse);
      if (!had_begin) adopt_orphans(t, *created);
      return;
    }
    Reg* existing = find_reg(element.target);
    if (existing == nullptr || !applied) return;
    if (existing->port != port) {
      fail(kO6, "ENABLE of socket " + num(reg.socket) + " applied on port " + num(port) +
                    " while its registration " + reg_text(*existing) + " lives on port " +
                    num(existing->port));
    }
    if ((existing->trigger & kSockNotifyTriggerOneshot) != 0 && existing->out_since_enable &&
        (reg.filter & kSockNotifyRegisterEventIn) != 0 &&
        (reg.filter & kSockNotifyRegisterEventOut) != 0) {
      ++coverage.oneshot_rearmed_all_after_out;
    }
    existing->filter = reg.filter;
    existing->trigger = reg.trigger;
    existing->out_since_enable = false;
    return;
  }
  if (element.reg.operation != kSockNotifyOpRemove) return;  // DISABLE, NONE: no lifetime change
  if (element.target == 0) {
    if (!applied) refuse_remove(reg.socket, nullptr);
    return;
  }
  Reg* target = find_reg(element.target);
  if (target == nullptr) return;  // its REMOVE packet was dequeued before this line (A7)
  target->remove_tentative = false;
  settle_pending(target->number, applied);
  if (applied) {
    target->remove_applied = true;
    if (target->state == RegState::kLive || target->state == RegState::kTentative) {
      target->state = RegState::kRemovePending;
    }
    return;
  }
  refuse_remove(reg.socket, target);
}

void LifetimeOracle::State::on_gqcs(ThreadState& t) {
  std::uint64_t port = 0;
  if (!need_u64("port", &port) || !need_result()) return;
  ++counts.port_calls;
  t.removed.clear();
  t.call_seq = line.seq;
  if (line.has_entries) t.dequeue_seq = line.seq;
  if (line.result == "1" && line.has_entries) take_entries(t, static_cast<std::uintptr_t>(port));
  end_dequeue(t);
  std::uint64_t received = 0;
  std::uint64_t count = 0;
  if (line.find_u64("n", &received) && line.find_u64("count", &count)) {
    count_batch(received, count);
  }
}

void LifetimeOracle::State::count_batch(std::uint64_t received, std::uint64_t count) {
  if (count > 1 && received == count) ++coverage.full_batch;
}

void LifetimeOracle::State::on_post_begin(ThreadState& t) {
  std::uint64_t port = 0;
  std::uint64_t bytes = 0;
  std::uint64_t key = 0;
  if (!need_u64("port", &port) || !need_u64("bytes", &bytes) || !need_u64("key", &key)) return;
  if (t.post_open || t.dequeue_open) {
    fail(kInconsistent, "post.begin on T" + num(t.id) + " while its earlier " +
                            (t.post_open ? "post" : "dequeue") + " has no line");
  }
  // The packet may be queued, and dequeued by another thread, from here on: it is numbered now
  // (a drain counts posts that began after a close ended).
  t.post_open = true;
  t.post_packet = {static_cast<std::uintptr_t>(port), static_cast<std::uintptr_t>(key),
                   static_cast<std::uint32_t>(bytes)};
  t.post_number = ++posts_made;
  posts[t.post_packet].push_back(t.post_number);
  if (!t.open_post) {
    t.open_post = true;
    ++open_posts;
  }
}

void LifetimeOracle::State::on_post(ThreadState& t) {
  std::uint64_t port = 0;
  std::uint64_t bytes = 0;
  std::uint64_t key = 0;
  if (!need_u64("port", &port) || !need_u64("bytes", &bytes) || !need_u64("key", &key) ||
      !need_result()) {
    return;
  }
  const std::tuple<std::uintptr_t, std::uintptr_t, std::uint32_t> packet{
      static_cast<std::uintptr_t>(port), static_cast<std::uintptr_t>(key),
      static_cast<std::uint32_t>(bytes)};
  const bool posted = line.result == "1";
  if (t.post_open) {
    t.post_open = false;
    if (t.post_packet != packet) {
      return fail(kInconsistent,
                  "the post line on T" + num(t.id) + " differs from its post.begin");
    }
    if (posted) return;
    // Not queued: forget it, unless a dequeue already took it, which a failed post cannot cause.
    auto list = posts.find(packet);
    auto number = list == posts.end()
                      ? std::deque<std::uint64_t>::iterator()
                      : std::find(list->second.begin(), list->second.end(), t.post_number);
    if (list == posts.end() || number == list->second.end()) {
      return fail(kInconsistent, "a packet of the post on T" + num(t.id) +
                                     " was dequeued, but the post failed");
    }
    list->second.erase(number);
    if (list->second.empty()) posts.erase(list);
    if (t.open_post) {  // no packet: nothing for a handler entry to wait on
      t.open_post = false;
      --open_posts;
    }
    return;
  }
  if (!posted) return;
  posts[packet].push_back(++posts_made);
  if (!t.open_post) {
    t.open_post = true;
    ++open_posts;
  }
}

void LifetimeOracle::State::on_dequeue_begin(ThreadState& t) {
  std::uint64_t port = 0;
  if (!need_u64("port", &port)) return;
  if (t.dequeue_open) {
    fail(kInconsistent,
         "dequeue.begin on T" + num(t.id) + " while its earlier dequeue has no psn or gqcs line");
  }
  t.dequeue_open = true;
  t.dequeue_port = static_cast<std::uintptr_t>(port);
}

// The psn or gqcs line of a dequeue: what it took is known now (take_entries ran). Drains and
// closes that waited on this thread's open dequeue are settled.
void LifetimeOracle::State::end_dequeue(ThreadState& t) {
  if (!t.dequeue_open) return;
  t.dequeue_open = false;
  for (const std::uint64_t number : closed_unremoved) {
    Reg* reg = find_reg(number);
    if (reg != nullptr) reg->waiting.erase(t.id);  // a packet it took is in reg->dequeuers
  }
  for (auto it = pending_closes.begin(); it != pending_closes.end();) {
    it->waiting.erase(t.id);
    if (!it->waiting.empty() || it->settle) {
      ++it;
      continue;
    }
    // No open dequeue took the REMOVE packet: the close came first in every order.
    fail(it->rule, it->text + " (at line " + num(it->close_seq) + ")");
    it = pending_closes.erase(it);
  }
}

// The entries of a successful port call: posted packets (matched to post lines), else socket
// packets of the registration with that key on that port, else stray packets.
void LifetimeOracle::State::take_entries(ThreadState& t, std::uintptr_t port) {
  for (const TraceEntry& entry : line.entries) {
    auto post = posts.find({port, entry.key, entry.mask});
    if (post != posts.end()) {
      const std::uint64_t number = post->second.front();
      post->second.pop_front();
      if (post->second.empty()) posts.erase(post);
      ++counts.posted_packets;
      post_dequeued(port, number);
      continue;
    }
    Reg* reg = deliverable(port, entry.key);
    if (reg == nullptr) {
      stray_packet(t, port, entry);
    } else {
      socket_packet(t, *reg, entry);
    }
  }
}

void LifetimeOracle::State::socket_packet(ThreadState& t, Reg& reg, const TraceEntry& entry) {
  ++counts.packets;
  reg.dequeuers[t.id] = line.seq;
  const bool remove = (entry.mask & kSockNotifyEventRemove) != 0;
  if (reg.state == RegState::kClosedUnremoved && !remove) {
    ++counts.stale_packets;
    ++coverage.stale_packet_dequeued;
  }
  if ((entry.mask & kSockNotifyEventOut) != 0 && (reg.trigger & kSockNotifyTriggerOneshot) != 0) {
    reg.out_since_enable = true;
  }
  pay(reg.conn);
  if (!remove) return;
  ++counts.removes_seen;
  judge(kO7);
  for (auto it = pending_closes.begin(); it != pending_closes.end();) {
    if (it->reg != reg.number || it->waiting.count(t.id) == 0) {
      ++it;
      continue;
    }
    // This dequeue was open at the close (or on_closed): either may have come first.
    ambiguous(it->rule);
    it = pending_closes.erase(it);
  }
  if ((entry.mask & kSockNotifyEventIn) != 0) ++coverage.remove_ored_with_in;
  // The REMOVE packet is the last for its key (E3). (One whose REMOVE element this trace has not
  // shown yet, a psn line recorded after another thread's dequeue, is taken the same way.)
  end_by_remove(t, reg);
}

void LifetimeOracle::State::stray_packet(ThreadState& t, std::uintptr_t port,
                                         const TraceEntry& entry) {
  ++counts.packets;
  ++counts.stale_packets;
  auto ended = ended_keys.find(entry.key);
  if (ended != ended_keys.end()) {
    ++coverage.stale_packet_dequeued;
    if ((entry.mask & kSockNotifyEventRemove) != 0 && ended->second.by_remove) {
      fail(kO7, "a second REMOVE packet for key " + num(entry.key) +
                    " (its registration's REMOVE packet was dequeued at line " +
                    num(ended->second.seq) + ")");
    }
  }
  orphans.push_back(Orphan{entry.key, port, line.seq, t.id});
  if (orphans.size() > kOrphansMax) {
    bound_hit(OracleBound::kOrphans);
    orphans.pop_front();
  }
}

void LifetimeOracle::State::post_dequeued(std::uintptr_t port, std::uint64_t post) {
  for (const std::uint64_t number : closed_unremoved) {
    Reg* reg = find_reg(number);
    if (reg == nullptr || reg->port != port || post <= reg->close_post || reg->drain_post_seen) {
      continue;
    }
    reg->drain_post_seen = true;
    // A dequeue open now may have taken a packet of the key before this one (FIFO): wait for it.
    for (const auto& [id, other] : threads) {
      if (id != line.thread && other.dequeue_open && other.dequeue_port == port) {
        reg->waiting.insert(id);
      }
    }
  }
}

// ==== Socket lines ===============================================================================

void LifetimeOracle::State::on_new_socket() {
  if (!need_result() || line.result == "INVALID_SOCKET") return;
  std::uint64_t value = 0;
  if (!parse_trace_u64(line.result, &value)) return unparsable("the result is not a socket");
  const Socket socket = static_cast<Socket>(value);
  // The value came back, so a closesocket of it that has not returned yet has taken effect.
  for (auto& [id, other] : threads) {
    if (other.close_open && !other.close_applied && other.close_socket == socket) {
      other.close_applied = true;
      apply_close(other, socket, true);
    }
  }
  auto old = lives.find(socket);
  if (old != lives.end()) {
    // The trace never showed this value's close: its registration can only be unremoved.
    Reg* reg = find_reg(old->second.reg);
    if (reg != nullptr) close_unremoved(*reg);
    lives.erase(old);
  }
  for (const std::uint64_t number : closed_unremoved) {
    const Reg* reg = find_reg(number);
    if (reg != nullptr && reg->socket == socket && !drained(*reg)) {
      ++coverage.socket_reused_while_stale;
      break;
    }
  }
  lives[socket] = Life{++lives_made, 0};
}

void LifetimeOracle::State::on_closesocket_begin(ThreadState& t) {
  Socket socket = kInvalidSocket;
  if (!need_socket("s", &socket)) return;
  if (t.close_open || t.dequeue_open) {
    fail(kInconsistent, "closesocket.begin on T" + num(t.id) + " while its earlier " +
                            (t.close_open ? "closesocket" : "dequeue") + " has no line");
  }
  t.close_open = true;
  t.close_applied = false;
  t.close_socket = socket;
  const Conn* conn = open_conn(socket);
  t.close_conn = conn == nullptr ? 0 : conn->number;
  t.close_handler_run = conn != nullptr && conn->in_handler ? conn->handler_runs : 0;
}

void LifetimeOracle::State::on_closesocket(ThreadState& t) {
  Socket socket = kInvalidSocket;
  if (!need_socket("s", &socket) || !need_result()) return;
  const bool had_begin = t.close_open;
  if (had_begin && t.close_socket != socket) {
    t.close_open = false;
    return fail(kInconsistent, "the closesocket line on T" + num(t.id) + " names socket " +
                                   num(socket) + ", its closesocket.begin socket " +
                                   num(t.close_socket));
  }
  if (!had_begin) {  // a point: the interval is this line
    t.close_socket = socket;
    const Conn* conn = open_conn(socket);
    t.close_conn = conn == nullptr ? 0 : conn->number;
    t.close_handler_run = conn != nullptr && conn->in_handler ? conn->handler_runs : 0;
  }
  t.close_open = false;
  if (t.close_applied) {
    t.close_applied = false;
    if (line.result != "0") {
      fail(kInconsistent, "closesocket(" + num(socket) + ") on T" + num(t.id) +
                              " failed, but its socket value was handed out again before it");
    }
    return;
  }
  apply_close(t, socket, line.result == "0");
}

// The effect of t's closesocket(socket), here: at its line, or earlier, at the line that showed
// it had taken effect (the value handed out again).
void LifetimeOracle::State::apply_close(ThreadState& t, Socket socket, bool closed) {
  const bool behind = t.behind_pending && t.behind_socket == socket;
  if (behind) t.behind_pending = false;
  Conn* conn = open_conn(socket);
  Life* life = find_life(socket);
  Reg* reg = life == nullptr ? nullptr : find_reg(life->reg);
  if (!behind) close_judged(t, socket, conn, reg);
  if (conn != nullptr) (behind ? conn->behind_closed : conn->engine_closed) = true;
  if (!closed || life == nullptr) return;
  ++counts.sockets_closed;
  if (reg != nullptr) close_unremoved(*reg);
  lives.erase(socket);
}

// O1 and O10 for the engine's closesocket(socket), whose effect lies between t's
// closesocket.begin and now.
void LifetimeOracle::State::close_judged(ThreadState& t, Socket socket, Conn* conn, Reg* reg) {
  // O1 (E1/E2): the registration must be gone (its REMOVE packet dequeued) before the close,
  // unless its REMOVE was refused (E4: the quarantine path, judged by O9's drain).
  judge(kO1);
  const bool refused = reg != nullptr && (reg->remove_refused || (conn && conn->remove_refused));
  if (reg != nullptr && reg->state != RegState::kTentative && !refused) {
    if (reg->remove_tentative) {
      // Its REMOVE is in a call still open: refused there, the close may have come after the
      // refusal (ambiguous); applied, its packet must still come out of a dequeue open now.
      PendingClose pending;
      pending.rule = kO1;
      pending.reg = reg->number;
      pending.socket = socket;
      pending.close_seq = line.seq;
      pending.settle = true;
      pending.text = "closesocket(" + num(socket) + ") before the REMOVE packet of its " +
                     "registration " + reg_text(*reg) + " was dequeued";
      for (const auto& [id, other] : threads) {
        if (id != t.id && other.dequeue_open && other.dequeue_port == reg->port) {
          pending.waiting.insert(id);
        }
      }
      pending_closes.push_back(std::move(pending));
    } else if (reg->state == RegState::kLive) {
      fail(kO1, "closesocket(" + num(socket) + ") while its registration " + reg_text(*reg) +
                    " is live: no REMOVE was applied and none was refused");
    } else {
      PendingClose pending;
      pending.rule = kO1;
      pending.reg = reg->number;
      pending.socket = socket;
      pending.close_seq = line.seq;
      pending.text = "closesocket(" + num(socket) + ") while the REMOVE packet of its " +
                     "registration " + reg_text(*reg) + " has not been dequeued";
      pend_or_fail(t, *reg, std::move(pending));
    }
  }
  // O10: the engine closes a connection's socket only when no handler of it runs: a violation
  // when one handler run spans the whole closesocket, ambiguous when one overlaps only part.
  if (conn == nullptr) return;
  judge(kO10);
  const bool same_conn = t.close_conn == conn->number;
  const bool ran_at_begin = same_conn && t.close_handler_run != 0;
  if (conn->in_handler && ran_at_begin && t.close_handler_run == conn->handler_runs) {
    fail(kO10, "closesocket(" + num(socket) + ") of " + conn_text(*conn) +
                   " while its handler runs on T" + num(conn->handler_thread));
  } else if (conn->in_handler || ran_at_begin) {
    ambiguous(kO10);
  }
}

void LifetimeOracle::State::on_close_port() {
  std::uint64_t port64 = 0;
  if (!need_u64("port", &port64) || !need_result() || line.result != "1") return;
  const std::uintptr_t port = static_cast<std::uintptr_t>(port64);
  ports_open.erase(port);
  // F6: nothing more comes out of this port: its posts and unremoved keys are done.
  for (auto it = posts.begin(); it != posts.end();) {
    it = std::get<0>(it->first) == port ? posts.erase(it) : std::next(it);
  }
  std::vector<std::uint64_t> done;
  for (const std::uint64_t number : closed_unremoved) {
    const Reg* reg = find_reg(number);
    if (reg != nullptr && reg->port == port) done.push_back(number);
  }
  for (const std::uint64_t number : done) finish_drained(*find_reg(number));
  orphans.erase(std::remove_if(orphans.begin(), orphans.end(),
                               [port](const Orphan& orphan) { return orphan.port == port; }),
                orphans.end());
}

void LifetimeOracle::State::on_fault(ThreadState& t) {
  if (line.words.empty()) return unparsable("fault without a site");
  const std::string_view site = line.words.front();
  ++fault_sites[std::string(site)];
  ++counts.faults;
  if (site == "psn.remove_fails") {
    // That REMOVE did not reach the OS; the engine sees it refused (E4).
    Socket socket = kInvalidSocket;
    if (!need_socket("s", &socket)) return;
    refuse_remove(socket, active_reg(socket));
  } else if (site == "psn.call_fails") {
    t.call_failed = true;
  }
  // A fault line may list the registrations of the call it failed: their REMOVEs did not apply.
  for (const TraceReg& reg : line.regs) {
    if (reg.operation == kSockNotifyOpRemove) refuse_remove(reg.socket, active_reg(reg.socket));
  }
}

// ==== Workload and handler lines =================================================================

void LifetimeOracle::State::on_workload(ThreadState& t) {
  const std::string_view name = line.name;
  if (name == "wl.add") return on_wl_add(t);
  Socket socket = kInvalidSocket;
  if (name == "wl.adding") {
    if (!need_socket("s", &socket)) return;
    Conn conn;
    conn.number = ++conns_made;
    conn.socket = socket;
    conns.emplace(conn.number, conn);
    conns_by_socket[socket].push_back(conn.number);
    // add() returns on this thread: its wl.add line names this connection, even when the socket
    // value was closed and reused by others before it returned (a starved thread).
    t.adding = conn.number;
    return;
  }
  if (name == "wl.close") {
    if (!t.handlers.empty()) ++coverage.close_in_handler;
    IdKey id;
    if (!need_id("id", &id) || !need_result()) return;
    Conn* conn = conn_by_id(id);
    if (line.result == "ok" && conn != nullptr && !conn->close_returned) {
      conn->close_returned = true;
      conn->close_seq = line.seq;
    }
    return;
  }
  if (name == "wl.notify") {
    IdKey id;
    if (!need_id("id", &id) || !need_result()) return;
    if (line.result != "ok") return;
    ++counts.notifies;
    Conn* conn = conn_by_id(id);
    if (conn != nullptr) pay(conn->number);
    return;
  }
  if (name == "wl.post" || name == "wl.task_run") {
    std::uint64_t task = 0;
    if (!need_u64("task", &task)) return;
    if (name == "wl.post") {
      if (!need_result() || line.result != "ok") return;
      ++tasks[task].posted;
    } else {
      ++tasks[task].ran;
      ++counts.tasks_run;
    }
    return;
  }
  if (name == "wl.close_behind") {
    if (!need_socket("s", &socket)) return;
    t.behind_pending = true;
    t.behind_socket = socket;
    Conn* conn = open_conn(socket);
    if (conn != nullptr) conn->behind_announced = true;
  }
}

void LifetimeOracle::State::on_wl_add(ThreadState& t) {
  Socket socket = kInvalidSocket;
  if (!need_socket("s", &socket) || !need_result()) return;
  Conn* conn = nullptr;
  if (t.adding != 0) {
    auto it = conns.find(t.adding);
    if (it != conns.end() && it->second.socket == socket && it->second.add == AddState::kAdding)
      conn = &it->second;
    t.adding = 0;
  }
  if (conn == nullptr) conn = adding_conn(socket);
  if (conn == nullptr) {
    return fail(kInconsistent, "wl.add s=" + num(socket) + " without wl.adding");
  }
  judge(kO4);
  if (line.result == "ok") {
    IdKey id;
    if (!need_id("id", &id)) return;
    if (conn->id_known && conn->id != id) {
      fail(kO4, "the handler of socket " + num(socket) + " was given id " + id_text(conn->id) +
                    " before add() returned id " + id_text(id));
    }
    claim_id(*conn, id);
    conn->add = AddState::kAdded;
    ++counts.connections;
    return;
  }
  // Failed: no connection, no on_closed; the socket stays the workload's.
  if (conn->closed) {
    fail(kO9, "on_closed was called for socket " + num(socket) + ", whose add() failed (" +
                  std::string(line.result) + ")");
  } else if (conn->entries > 0) {
    fail(kO4, "a handler ran for socket " + num(socket) + ", whose add() failed (" +
                  std::string(line.result) + ")");
  }
  conn->add = AddState::kFailed;
  drop_conn(*conn);
}

void LifetimeOracle::State::on_hnd_enter(ThreadState& t) {
  Socket socket = kInvalidSocket;
  Socket argument = kInvalidSocket;
  IdKey id;
  if (!need_socket("s", &socket) || !need_id("id", &id) || !need_socket("arg_s", &argument)) {
    return;
  }
  ++counts.handler_entries;
  ++coverage.handler_entered;
  // O12: the engine reported this entry just before it (same thread, same id).
  if (observer_seen) {
    judge(kO12);
    if (!t.obs_enter) {
      fail(kO12, "hnd.enter s=" + num(socket) + " id=" + id_text(id) + " on T" + num(t.id) +
                     " without obs.handler_enter before it");
    } else if (t.obs_enter_id != id) {
      fail(kO12, "obs.handler_enter id=" + id_text(t.obs_enter_id) + " on T" + num(t.id) +
                     " but the handler was entered with id " + id_text(id));
    }
    t.obs_enter = false;
  }
  Conn* conn = handler_conn(socket, id);
  if (conn == nullptr) {
    return fail(
        kO4, "hnd.enter for socket " + num(socket) + ", for which the workload has no connection");
  }
  judge(kO2);
  judge(kO3);
  judge(kO4);
  judge(kO5);
  // O4: the engine passes the connection's own socket and id.
  if (argument != socket) {
    fail(kO4, "the handler of " + conn_text(*conn) + " was called with socket " + num(argument));
  }
  if (conn->id_known && conn->id != id) {
    fail(kO4, "the handler of " + conn_text(*conn) + " was called with id " + id_text(id));
  }
  if (!conn->id_known) claim_id(*conn, id);
  // O2: nothing runs once the connection ended (the engine cannot know of a close behind it).
  if (!conn->behind_announced) {
    if (conn->closed) {
      fail(kO2, "handler of " + conn_text(*conn) + " entered after its on_closed (line " +
                    num(conn->closed_seq) + ")");
    } else if (conn->engine_closed) {
      fail(kO2, "handler of " + conn_text(*conn) + " entered after the engine closed its socket");
    } else if (conn->remove_dequeued) {
      fail(kO2, "handler of " + conn_text(*conn) + " entered after its REMOVE packet was dequeued");
    } else if (conn->close_returned && t.dequeue_seq > conn->close_seq) {
      // close() returned before this thread dequeued what it runs the handler for: only a call
      // already taken up may still enter (engine.hpp, close()).
      fail(kO2, "handler of " + conn_text(*conn) + " entered on T" + num(t.id) +
                    " for a packet dequeued at line " + num(t.dequeue_seq) +
                    ", after close() returned (line " + num(conn->close_seq) + ")");
    } else if (closing(conn->socket)) {
      ambiguous(kO2);  // a closesocket of its socket is under way: before or after, unknown
    }
  }
  // O3: never two threads in one connection's handler. A handler ran at least from its hnd.enter
  // to its hnd.leave and at most from its thread's line before to its line after: overlap of the
  // former is forced; of the latter only, ambiguous.
  if (conn->in_handler) {
    fail(kO3, "handler of " + conn_text(*conn) + " entered on T" + num(t.id) +
                  " while it runs on T" + num(conn->handler_thread));
  } else if (conn->leave_thread != 0 && conn->leave_thread != t.id &&
             (conn->after_leave_seq == 0 || t.bound_seq < conn->after_leave_seq)) {
    ambiguous(kO3);
  }
  // O5: each entry is paid for by a packet of its own key or by a notify.
  ++conn->entries;
  if (conn->entries > conn->paid) {
    if (open_posts > 0) {
      // A notify's wl.notify is written after its post: judged when that thread's call ends.
      if (debts.insert(conn->number).second) conn->debt_seq = line.seq;
    } else {
      fail(kO5, "handler of " + conn_text(*conn) + " entered " + num(conn->entries) +
                    " time(s), but only " + num(conn->paid) +
                    " packet(s) of its key or notifies could cause that");
    }
  }
  conn->in_handler = true;
  conn->handler_thread = t.id;
  ++conn->handler_runs;
  t.handlers.push_back(conn->number);
}

void LifetimeOracle::State::on_hnd_leave(ThreadState& t) {
  Socket socket = kInvalidSocket;
  std::uint64_t result = 0;
  if (!need_socket("s", &socket) || !need_u64("ret", &result)) return;
  if (result == kReturnClose) ++coverage.close_in_handler;
  if (t.handlers.empty()) {
    return fail(kInconsistent,
                "hnd.leave s=" + num(socket) + " on T" + num(t.id) + " without hnd.enter");
  }
  Conn* conn = find_conn(t.handlers.back());
  t.handlers.pop_back();
  if (conn != nullptr && conn->socket != socket) {
    fail(kInconsistent, "hnd.leave s=" + num(socket) + " on T" + num(t.id) +
                            " inside the handler of socket " + num(conn->socket));
  }
  if (conn != nullptr) {
    conn->in_handler = false;
    conn->leave_thread = t.id;
    conn->after_leave_seq = 0;
    t.after_leave_conn = conn->number;
  }
  if (!observer_seen) return;
  if (t.left) {
    fail(kO12, "hnd.leave at line " + num(t.left_seq) + " on T" + num(t.id) +
                   " was not followed by obs.handler_leave");
  }
  t.left = true;
  t.left_id_known = conn != nullptr && conn->id_known;
  t.left_id = t.left_id_known ? conn->id : IdKey();
  t.left_ret = result;
  t.left_seq = line.seq;
}

void LifetimeOracle::State::on_hnd_closed() {
  Socket socket = kInvalidSocket;
  IdKey id;
  if (!need_socket("s", &socket) || !need_id("id", &id)) return;
  Conn* conn = nullptr;
  Conn* twice = nullptr;
  Conn* oldest_open = nullptr;
  auto list = conns_by_socket.find(socket);
  if (list != conns_by_socket.end()) {
    for (const std::uint64_t number : list->second) {  // oldest first
      Conn& candidate = conns.at(number);
      if (candidate.add == AddState::kFailed) continue;
      if (candidate.closed) {
        if (candidate.id_known && candidate.id == id) twice = &candidate;
        continue;
      }
      if (oldest_open == nullptr) oldest_open = &candidate;
      if (conn == nullptr && candidate.id_known && candidate.id == id) conn = &candidate;
    }
  }
  if (conn == nullptr && oldest_open != nullptr && !oldest_open->id_known) {
    conn = oldest_open;  // never entered, add() not returned yet
    claim_id(*conn, id);
  }
  if (conn == nullptr) {
    if (twice != nullptr) {
      return fail(kO9, "on_closed called twice for " + conn_text(*twice) + " (first at line " +
                           num(twice->closed_seq) + ")");
    }
    if (oldest_open == nullptr) {
      return fail(kO9, "on_closed for socket " + num(socket) + " id=" + id_text(id) +
                           ", which has no connection");
    }
    fail(kO4, "on_closed for socket " + num(socket) + " with id " + id_text(id) + " but " +
                  conn_text(*oldest_open) + " is the connection of that socket");
    conn = oldest_open;
  }
  judge(kO9);
  if (conn->in_handler) {
    fail(kO9, "on_closed for " + conn_text(*conn) + " while its handler runs on T" +
                  num(conn->handler_thread));
  }
  if (!conn->engine_closed && !conn->behind_closed) {
    if (closing(conn->socket)) {
      ambiguous(kO9);  // its closesocket is under way
    } else {
      fail(kO9, "on_closed for " + conn_text(*conn) + " before its socket was closed");
    }
  } else if (!conn->remove_dequeued) {
    if (!conn->remove_refused && !conn->behind_closed) {
      PendingClose pending;
      pending.rule = kO9;
      pending.close_seq = line.seq;
      pending.text = "on_closed for " + conn_text(*conn) +
                     " before its REMOVE packet was dequeued (and no REMOVE of it was refused)";
      Reg* reg = find_reg(conn->reg);
      if (reg == nullptr) {
        fail(kO9, pending.text);
      } else {
        pending.reg = reg->number;
        pend_or_fail(threads[line.thread], *reg, std::move(pending));
      }
    } else if (!drained_for(*conn)) {
      fail(kO9, "on_closed for " + conn_text(*conn) +
                    " before its key was drained (REMOVE refused: no packet posted after the "
                    "closesocket was dequeued yet, or a thread that dequeued its key has not "
                    "moved on)");
    }
  }
  conn->closed = true;
  conn->closed_seq = line.seq;
  ++counts.connections_closed;
  if (conn->refused_live) ++coverage.remove_refused_quarantined;
  bury(*conn);
}

// O12: obs.socket_closed(s) comes just before the engine's closesocket(s) on the same thread.
void LifetimeOracle::State::check_expected_close(ThreadState& t) {
  t.expect_close = false;
  std::uint64_t value = 0;
  const bool closes = (line.name == "closesocket" || line.name == "closesocket.begin") &&
                      line.find_u64("s", &value) &&
                      static_cast<Socket>(value) == t.expect_socket;
  if (closes) return;
  fail(kO12, "obs.socket_closed s=" + num(t.expect_socket) + " on T" + num(t.id) + " at line " +
                 num(t.expect_seq) + " was not followed by T" + num(t.id) + "'s closesocket(" +
                 num(t.expect_socket) + "): its next call is " + std::string(line.name));
}

void LifetimeOracle::State::on_observer(ThreadState& t) {
  observer_seen = true;
  ++counts.observer_lines;
  const std::string_view name = line.name;
  if (name == "obs.stale" || name == "obs.dropped" || name == "obs.acquired") return;
  IdKey id;
  if (!need_id("id", &id)) return;
  Conn* conn = conn_by_id(id);
  if (name == "obs.handler_enter") {
    if (t.obs_enter) {
      fail(kO12, "two obs.handler_enter on T" + num(t.id) + " without hnd.enter between them");
    }
    t.obs_enter = true;
    t.obs_enter_id = id;
  } else if (name == "obs.handler_leave") {
    std::uint64_t result = 0;
    if (!need_u64("ret", &result)) return;
    if (!t.left) {
      fail(kO12, "obs.handler_leave id=" + id_text(id) + " on T" + num(t.id) +
                     " without hnd.leave just before it");
    } else if ((t.left_id_known && t.left_id != id) || t.left_ret != result) {
      fail(kO12, "obs.handler_leave id=" + id_text(id) + " ret=" + hex_text(result) + " on T" +
                     num(t.id) + " but the handler that left was " +
                     (t.left_id_known ? id_text(t.left_id) : std::string("unknown")) +
                     " returning " + hex_text(t.left_ret));
    }
    t.left = false;
  } else if (name == "obs.remove_seen") {
    judge(kO12);
    if (conn != nullptr &&
        std::find(t.removed.begin(), t.removed.end(), conn->number) == t.removed.end()) {
      fail(kO12, "obs.remove_seen for " + conn_text(*conn) + " on T" + num(t.id) + ", but T" +
                     num(t.id) + "'s latest port call dequeued no REMOVE packet of it");
    }
  } else if (name == "obs.socket_closed") {
    Socket socket = kInvalidSocket;
    if (!need_socket("s", &socket)) return;
    if (conn != nullptr && conn->socket != socket) {
      fail(kO12, "obs.socket_closed for " + conn_text(*conn) + " names socket " + num(socket));
    }
    t.expect_close = true;
    t.expect_socket = socket;
    t.expect_seq = line.seq;
  } else if (name == "obs.quarantined") {
    if (conn != nullptr && !conn->remove_refused && !conn->behind_closed) {
      fail(kO12, "obs.quarantined for " + conn_text(*conn) + ", but no REMOVE of it was refused");
    }
  } else if (name == "obs.freed") {
    if (conn == nullptr || conn->add == AddState::kFailed) return;
    judge(kO12);
    if (conn->in_handler) {
      fail(kO12, "obs.freed for " + conn_text(*conn) + " while its handler runs on T" +
                     num(conn->handler_thread));
    } else if (!conn->engine_closed && !conn->behind_closed) {
      fail(kO12, "obs.freed for " + conn_text(*conn) + " before its socket was closed");
    } else if (!conn->remove_dequeued &&
               !((conn->remove_refused || conn->behind_closed) && drained_for(*conn))) {
      fail(kO12, "obs.freed for " + conn_text(*conn) +
                     " before its REMOVE packet was dequeued or its key drained");
    }
  }
}

// ==== The model ==================================================================================

Life& LifetimeOracle::State::life_of(Socket socket) {
  auto it = lives.find(socket);
  if (it != lives.end()) return it->second;
  // A socket the trace did not show being made (made before the trace began): a life from here.
  return lives.emplace(socket, Life{++lives_made, 0}).first->second;
}

Life* LifetimeOracle::State::find_life(Socket socket) {
  auto it = lives.find(socket);
  return it == lives.end() ? nullptr : &it->second;
}

Reg* LifetimeOracle::State::find_reg(std::uint64_t number) {
  if (number == 0) return nullptr;
  auto it = regs.find(number);
  return it == regs.end() ? nullptr : &it->second;
}

// The registration of the socket's current life that is not closed-unremoved, if any.
Reg* LifetimeOracle::State::active_reg(Socket socket) {
  Life* life = find_life(socket);
  return life == nullptr ? nullptr : find_reg(life->reg);
}

std::uint64_t LifetimeOracle::State::create_reg(Socket socket, Life& life, std::uintptr_t port,
                                                const TraceReg& element) {
  Reg reg;
  reg.number = ++regs_made;
  reg.socket = socket;
  reg.life = life.number;
  life.removed = false;
  reg.port = port;
  reg.key = element.key;
  reg.filter = element.filter;
  reg.trigger = element.trigger;
  reg.state = RegState::kTentative;
  // From wl.adding on, the ENABLE of that socket creates the connection's registration.
  Conn* conn = linkable_conn(socket);
  if (conn != nullptr) {
    conn->reg = reg.number;
    reg.conn = conn->number;
  }
  regs_by_key[reg.key].push_back(reg.number);
  life.reg = reg.number;
  regs.emplace(reg.number, std::move(reg));
  return life.reg;
}

void LifetimeOracle::State::destroy_reg(Reg& reg) {
  const std::uint64_t number = reg.number;
  auto keyed = regs_by_key.find(reg.key);
  if (keyed != regs_by_key.end()) {
    std::vector<std::uint64_t>& list = keyed->second;
    list.erase(std::remove(list.begin(), list.end(), number), list.end());
    if (list.empty()) regs_by_key.erase(keyed);
  }
  Life* life = find_life(reg.socket);
  if (life != nullptr && life->reg == number) life->reg = 0;
  Conn* conn = find_conn(reg.conn);
  if (conn != nullptr && conn->reg == number) conn->reg = 0;
  closed_unremoved.erase(number);
  regs.erase(number);
}

void LifetimeOracle::State::end_by_remove(ThreadState& t, Reg& reg) {
  Life* life = find_life(reg.socket);
  if (life != nullptr && life->reg == reg.number) {
    life->removed = true;
    life->removed_key = reg.key;
  }
  Conn* conn = find_conn(reg.conn);
  if (conn != nullptr) {
    conn->remove_dequeued = true;
    t.removed.push_back(conn->number);
  }
  remember_ended_key(reg.key, true);
  destroy_reg(reg);
}

void LifetimeOracle::State::close_unremoved(Reg& reg) {
  Life* life = find_life(reg.socket);
  if (life != nullptr && life->reg == reg.number) life->reg = 0;
  reg.state = RegState::kClosedUnremoved;
  reg.close_seq = line.seq;
  reg.close_post = posts_made;
  reg.drain_post_seen = false;
  closed_unremoved.insert(reg.number);
  ++counts.closed_unremoved;
  if (closed_unremoved.size() > kClosedUnremovedMax) {
    // Bounded memory: the oldest counts as drained, a guess, so counted as a bound hit.
    bound_hit(OracleBound::kClosedUnremoved);
    finish_drained(*find_reg(*closed_unremoved.begin()));
  }
}

void LifetimeOracle::State::finish_drained(Reg& reg) {
  Conn* conn = find_conn(reg.conn);
  if (conn != nullptr) conn->drained = true;
  remember_ended_key(reg.key, false);
  destroy_reg(reg);
}

void LifetimeOracle::State::prune_drained() {
  std::vector<std::uint64_t> done;
  for (const std::uint64_t number : closed_unremoved) {
    const Reg* reg = find_reg(number);
    if (reg != nullptr && drained(*reg)) done.push_back(number);
  }
  for (const std::uint64_t number : done) finish_drained(*find_reg(number));
}

// Closed-unremoved and drained: a packet posted after the close came out of its port (FIFO, F1)
// and every thread that dequeued a packet of its key has moved on since.
bool LifetimeOracle::State::drained(const Reg& reg) const {
  if (reg.state != RegState::kClosedUnremoved || !reg.drain_post_seen || !reg.waiting.empty()) {
    return false;
  }
  for (const auto& [thread, seq] : reg.dequeuers) {
    if (!thread_moved(thread, seq)) return false;
  }
  return true;
}

bool LifetimeOracle::State::thread_moved(std::uint32_t thread, std::uint64_t seq) const {
  auto it = threads.find(thread);
  return it != threads.end() && it->second.has_moved && it->second.moved_seq > seq;
}

// O8: the sentence when a registration with `key` on `port` may still deliver, else empty.
std::string LifetimeOracle::State::key_reuse(std::uintptr_t port, std::uintptr_t key) {
  auto keyed = regs_by_key.find(key);
  if (keyed == regs_by_key.end()) return std::string();
  for (const std::uint64_t number : keyed->second) {
    const Reg* other = find_reg(number);
    if (other == nullptr || other->port != port) continue;
    if (other->state == RegState::kClosedUnremoved && drained(*other)) continue;
    return "an ENABLE creates a registration with key " + num(key) + " on port " + num(port) +
           " while the registration of socket " + num(other->socket) + " with that key is " +
           reg_state_name(other->state) + " and may still deliver";
  }
  return std::string();
}

// The registration a socket packet with `key` dequeued from `port` belongs to: one not closed
// first (there is at most one unless O8 was broken), else the newest closed-unremoved one.
Reg* LifetimeOracle::State::deliverable(std::uintptr_t port, std::uintptr_t key) {
  auto keyed = regs_by_key.find(key);
  if (keyed == regs_by_key.end()) return nullptr;
  Reg* unremoved = nullptr;
  for (const std::uint64_t number : keyed->second) {
    Reg* reg = find_reg(number);
    if (reg == nullptr || reg->port != port) continue;
    if (reg->state != RegState::kClosedUnremoved) return reg;
    unremoved = reg;
  }
  return unremoved;
}

// A psn line without psn.begin applies its ENABLE there; another thread's dequeue of the packet
// it caused may have been recorded first, after this thread's previous line: adopt those.
void LifetimeOracle::State::adopt_orphans(ThreadState& t, Reg& reg) {
  for (auto it = orphans.begin(); it != orphans.end();) {
    const bool after = !t.has_line || it->seq > t.last_seq;
    if (it->key != reg.key || it->port != reg.port || !after) {
      ++it;
      continue;
    }
    reg.dequeuers[it->thread] = std::max(reg.dequeuers[it->thread], it->seq);
    --counts.stale_packets;
    pay(reg.conn);
    it = orphans.erase(it);
  }
}

void LifetimeOracle::State::remember_ended_key(std::uintptr_t key, bool by_remove) {
  auto [it, inserted] = ended_keys.insert_or_assign(key, EndedKey{line.seq, by_remove});
  (void)it;
  if (inserted) ended_key_order.push_back(key);
  while (ended_key_order.size() > kEndedKeysMax) {
    bound_hit(OracleBound::kEndedKeys);
    ended_keys.erase(ended_key_order.front());
    ended_key_order.pop_front();
  }
}

// A REMOVE of `socket` that was not applied (res != 0, a failed call, or a fault): the engine
// must take the E4 path. `reg` is the socket's registration, if it has one.
void LifetimeOracle::State::refuse_remove(Socket socket, Reg* reg) {
  ++counts.removes_refused;
  // A REMOVE refused because one is already pending proves nothing (B7): no E4 path then.
  if (reg != nullptr && (reg->state == RegState::kRemovePending || reg->remove_applied)) return;
  const bool live = reg != nullptr && reg->state == RegState::kLive;
  if (reg != nullptr) reg->remove_refused = true;
  Conn* conn = reg != nullptr && reg->conn != 0 ? find_conn(reg->conn) : open_conn(socket);
  if (conn == nullptr) return;
  conn->remove_refused = true;
  if (live) conn->refused_live = true;
}

Conn* LifetimeOracle::State::find_conn(std::uint64_t number) {
  if (number == 0) return nullptr;
  auto it = conns.find(number);
  return it == conns.end() ? nullptr : &it->second;
}

Conn* LifetimeOracle::State::conn_by_id(IdKey id) {
  auto it = conns_by_id.find(id);
  return it == conns_by_id.end() ? nullptr : find_conn(it->second);
}

// The socket's newest connection that has not ended.
Conn* LifetimeOracle::State::open_conn(Socket socket) {
  auto list = conns_by_socket.find(socket);
  if (list == conns_by_socket.end()) return nullptr;
  for (auto it = list->second.rbegin(); it != list->second.rend(); ++it) {
    Conn& conn = conns.at(*it);
    if (conn.add != AddState::kFailed && !conn.closed) return &conn;
  }
  return nullptr;
}

// The connection an ENABLE creating a registration of `socket` belongs to.
Conn* LifetimeOracle::State::linkable_conn(Socket socket) {
  Conn* conn = open_conn(socket);
  if (conn == nullptr || conn->reg != 0 || conn->remove_dequeued || conn->engine_closed ||
      conn->behind_closed) {
    return nullptr;
  }
  return conn;
}

Conn* LifetimeOracle::State::adding_conn(Socket socket) {
  auto list = conns_by_socket.find(socket);
  if (list == conns_by_socket.end()) return nullptr;
  for (auto it = list->second.rbegin(); it != list->second.rend(); ++it) {
    Conn& conn = conns.at(*it);
    if (conn.add == AddState::kAdding) return &conn;
  }
  return nullptr;
}

// The connection a hnd.enter s=S id=X is for: the one of S with id X, else S's newest one whose
// id is not known yet (add() not returned), else S's newest (then O4 names the mismatch).
Conn* LifetimeOracle::State::handler_conn(Socket socket, IdKey id) {
  auto list = conns_by_socket.find(socket);
  if (list == conns_by_socket.end() || list->second.empty()) return nullptr;
  for (auto it = list->second.rbegin(); it != list->second.rend(); ++it) {
    Conn& conn = conns.at(*it);
    if (conn.id_known && conn.id == id) return &conn;
  }
  for (auto it = list->second.rbegin(); it != list->second.rend(); ++it) {
    Conn& conn = conns.at(*it);
    if (!conn.id_known && conn.add != AddState::kFailed) return &conn;
  }
  return &conns.at(list->second.back());
}

void LifetimeOracle::State::claim_id(Conn& conn, IdKey id) {
  auto it = conns_by_id.find(id);
  if (it != conns_by_id.end() && it->second != conn.number) {
    const Conn* other = find_conn(it->second);
    if (other != nullptr) {
      fail(kO4, "id " + id_text(id) + " names " + conn_text(*other) + " and now socket " +
                    num(conn.socket) + " as well");
    }
  }
  conns_by_id[id] = conn.number;
  conn.id = id;
  conn.id_known = true;
}

// Forgets a connection (a failed add, or a tombstone past the bound).
void LifetimeOracle::State::drop_conn(Conn& conn) {
  const std::uint64_t number = conn.number;
  auto list = conns_by_socket.find(conn.socket);
  if (list != conns_by_socket.end()) {
    std::vector<std::uint64_t>& numbers = list->second;
    numbers.erase(std::remove(numbers.begin(), numbers.end(), number), numbers.end());
    if (numbers.empty()) conns_by_socket.erase(list);
  }
  if (conn.id_known) {
    auto id = conns_by_id.find(conn.id);
    if (id != conns_by_id.end() && id->second == number) conns_by_id.erase(id);
  }
  Reg* reg = find_reg(conn.reg);
  if (reg != nullptr && reg->conn == number) reg->conn = 0;
  debts.erase(number);
  conns.erase(number);
}

// An ended connection stays as a tombstone (for O2, O9, O12) within the bounds.
void LifetimeOracle::State::bury(Conn& conn) {
  const Socket socket = conn.socket;
  tombstones.push_back(conn.number);
  std::vector<std::uint64_t> dropped;
  while (tombstones.size() > kTombstonesMax) {
    dropped.push_back(tombstones.front());
    tombstones.pop_front();
  }
  auto list = conns_by_socket.find(socket);
  if (list != conns_by_socket.end()) {
    std::size_t kept = 0;
    for (auto it = list->second.rbegin(); it != list->second.rend(); ++it) {
      const Conn& candidate = conns.at(*it);
      // Kept while it matters: open, in a handler, owing (O5), or its add() has not returned.
      if (!candidate.closed || candidate.in_handler || debts.count(*it) != 0 ||
          candidate.add == AddState::kAdding)
        continue;
      if (++kept > kTombstonesPerSocketMax) dropped.push_back(*it);
    }
  }
  for (const std::uint64_t number : dropped) {
    Conn* old = find_conn(number);
    if (old == nullptr) continue;
    bound_hit(OracleBound::kTombstones);
    tombstones.erase(std::remove(tombstones.begin(), tombstones.end(), number), tombstones.end());
    drop_conn(*old);
  }
}

bool LifetimeOracle::State::drained_for(const Conn& conn) const {
  if (conn.drained || conn.reg == 0) return true;
  auto it = regs.find(conn.reg);
  return it == regs.end() || drained(it->second);
}

// A violation unless a dequeue open now on `reg`'s port (another thread's) holds its REMOVE
// packet: failed now when none is open, else judged when they end (end_dequeue, socket_packet).
void LifetimeOracle::State::pend_or_fail(const ThreadState& t, const Reg& reg,
                                         PendingClose pending) {
  for (const auto& [id, other] : threads) {
    if (id != t.id && other.dequeue_open && other.dequeue_port == reg.port) {
      pending.waiting.insert(id);
    }
  }
  if (pending.waiting.empty()) return fail(pending.rule, pending.text);
  pending_closes.push_back(std::move(pending));
}

// The REMOVE of registration `reg` was settled by its psn line: pending closes that waited on it.
void LifetimeOracle::State::settle_pending(std::uint64_t reg, bool applied) {
  for (auto it = pending_closes.begin(); it != pending_closes.end();) {
    if (it->reg != reg || !it->settle) {
      ++it;
      continue;
    }
    it->settle = false;
    if (!applied) {
      ambiguous(it->rule);
    } else if (it->waiting.empty()) {
      fail(it->rule, it->text + " (at line " + num(it->close_seq) + ")");
    } else {
      ++it;
      continue;
    }
    it = pending_closes.erase(it);
  }
}

// Whether a closesocket of `socket` has begun and not yet taken effect as far as the trace shows.
bool LifetimeOracle::State::closing(Socket socket) const {
  for (const auto& [id, t] : threads) {
    if (t.close_open && !t.close_applied && t.close_socket == socket) return true;
  }
  return false;
}

void LifetimeOracle::State::pay(std::uint64_t conn_number) {
  Conn* conn = find_conn(conn_number);
  if (conn == nullptr) return;
  ++conn->paid;
  if (conn->paid >= conn->entries) debts.erase(conn_number);
}

// O5 debts: cleared once paid; a violation once no thread is inside a post's engine call.
void LifetimeOracle::State::recheck_debts() {
  for (auto it = debts.begin(); it != debts.end();) {
    Conn* conn = find_conn(*it);
    if (conn == nullptr || conn->paid >= conn->entries) {
      it = debts.erase(it);
      continue;
    }
    if (open_posts == 0) {
      fail(kO5, "handler of " + conn_text(*conn) + " was entered at line " + num(conn->debt_seq) +
                    " (entry " + num(conn->entries) + "), but only " + num(conn->paid) +
                    " packet(s) of its key or notifies could cause that");
      it = debts.erase(it);
      continue;
    }
    ++it;
  }
}

std::string LifetimeOracle::State::conn_text(const Conn& conn) const {
  return "connection s=" + num(conn.socket) +
         (conn.id_known ? " id=" + id_text(conn.id) : std::string(" (id not known yet)"));
}

std::string LifetimeOracle::State::reg_text(const Reg& reg) const {
  return "(socket " + num(reg.socket) + ", key " + num(reg.key) + ", port " + num(reg.port) + ", " +
         reg_state_name(reg.state) + ")";
}

// ==== The end ====================================================================================

void LifetimeOracle::State::finish() {
  if (finished) return;
  finished = true;
  at_end = true;
  judge(kO11);
  // An O1 still waiting on a dequeue that never ended (the trace stops inside it): either order.
  for (const PendingClose& pending : pending_closes) ambiguous(pending.rule);
  pending_closes.clear();
  for (const auto& [number, conn] : conns) {
    if (conn.add == AddState::kAdded && !conn.closed) {
      fail(kO11, conn_text(conn) + " never got on_closed");
    }
    if (conn.in_handler) {
      fail(kO11, "the handler of " + conn_text(conn) + " is still running on T" +
                     num(conn.handler_thread));
    }
    if (conn.add == AddState::kAdded && !conn.engine_closed && !conn.behind_closed) {
      fail(kO11, "the socket of " + conn_text(conn) + " was never closed");
    }
  }
  for (const auto& [number, reg] : regs) {
    if (reg.state != RegState::kClosedUnremoved) {
      fail(kO11, "registration " + reg_text(reg) +
                     " never ended: no REMOVE packet dequeued and no closesocket");
    }
  }
  for (const std::uintptr_t port : ports_open) {
    fail(kO11, "port " + num(port) + " was never closed");
  }
  for (const auto& [task, count] : tasks) {
    if (count.posted == count.ran) continue;
    fail(kO11, "task " + num(task) + " was posted " + num(count.posted) +
                   " time(s) (-> ok) but ran " + num(count.ran) + " time(s)");
  }
  for (const std::uint64_t number : debts) {
    const Conn* conn = find_conn(number);
    if (conn != nullptr && conn->paid < conn->entries) {
      fail(kO5, "handler of " + conn_text(*conn) + " was entered " + num(conn->entries) +
                    " time(s), but only " + num(conn->paid) +
                    " packet(s) of its key or notifies could cause that");
    }
  }
  if (!observer_seen) {
    // No engine reports in the trace (stripped, or an engine without an observer): O12 has
    // nothing to compare the handlers' own lines with.
    if (counts.handler_entries > 0) counts.judgement.unjudged[12] += counts.handler_entries;
    return;
  }
  for (const auto& [id, t] : threads) {
    if (t.left) {
      fail(kO12, "hnd.leave at line " + num(t.left_seq) + " on T" + num(id) +
                     " was not followed by obs.handler_leave");
    }
    if (t.obs_enter) {
      fail(kO12, "obs.handler_enter id=" + id_text(t.obs_enter_id) + " on T" + num(id) +
                     " was not followed by hnd.enter");
    }
  }
}

// ==== The public class ===========================================================================

LifetimeOracle::LifetimeOracle() : state_(std::make_unique<State>()) {}

LifetimeOracle::~LifetimeOracle() = default;

void LifetimeOracle::on_trace_line(std::string_view line) {
  std::lock_guard<std::mutex> guard(mutex_);
  state_->read(line);
}

void LifetimeOracle::observe_text(std::string_view text) {
  std::lock_guard<std::mutex> guard(mutex_);
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view one = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (one.empty() || one == "\r") continue;
    state_->read(one);
  }
}

Status LifetimeOracle::finish() {
  std::lock_guard<std::mutex> guard(mutex_);
  state_->finish();
  if (state_->violation.empty()) return Status();
  return Status(StatusCode::kInternal, state_->violation);
}

Status LifetimeOracle::status() const {
  std::lock_guard<std::mutex> guard(mutex_);
  if (state_->violation.empty()) return Status();
  return Status(StatusCode::kInternal, state_->violation);
}

bool LifetimeOracle::try_violation(std::string* violation_out) const {
  std::unique_lock<std::mutex> guard(mutex_, std::try_to_lock);
  if (!guard.owns_lock() || state_->violation.empty()) return false;
  *violation_out = state_->violation;
  return true;
}

bool LifetimeOracle::try_describe_open(std::string* text_out) const {
  std::unique_lock<std::mutex> guard(mutex_, std::try_to_lock);
  if (!guard.owns_lock()) return false;
  constexpr std::uint32_t kListedMax = 16;
  std::uint32_t open = 0;
  std::string listed;
  for (const auto& [number, conn] : state_->conns) {
    if (conn.closed || conn.add == AddState::kFailed) continue;
    if (++open > kListedMax) continue;
    listed += "\n  " + state_->conn_text(conn);
    if (conn.in_handler) listed += ": its handler runs on T" + std::to_string(conn.handler_thread);
    if (conn.close_returned) listed += ", close() returned ok";
    if (conn.remove_dequeued) listed += ", REMOVE dequeued";
    if (conn.remove_refused) listed += ", a REMOVE refused";
    if (conn.engine_closed) listed += ", socket closed";
  }
  std::uint32_t registrations = 0;
  for (const auto& [number, reg] : state_->regs) {
    if (reg.state == RegState::kLive) ++registrations;
  }
  *text_out = "the trace shows " + std::to_string(open) + " connection(s) without on_closed and " +
              std::to_string(registrations) + " live registration(s)" + listed;
  if (open > kListedMax) *text_out += "\n  (" + std::to_string(open - kListedMax) + " more)";
  return true;
}

std::vector<std::string> LifetimeOracle::coverage_names() {
  return {"remove_ored_with_in",
          "stale_packet_dequeued",
          "call_retry",
          "remove_refused_quarantined",
          "oneshot_rearmed_all_after_out",
          "full_batch",
          "socket_reused_while_stale",
          "close_in_handler",
          "handler_entered"};
}

std::vector<std::pair<std::string, std::uint64_t>> LifetimeOracle::coverage() const {
  std::lock_guard<std::mutex> guard(mutex_);
  const Coverage& c = state_->coverage;
  // In the order of coverage_names().
  const std::uint64_t values[] = {c.remove_ored_with_in,
                                  c.stale_packet_dequeued,
                                  c.call_retry,
                                  c.remove_refused_quarantined,
                                  c.oneshot_rearmed_all_after_out,
                                  c.full_batch,
                                  c.socket_reused_while_stale,
                                  c.close_in_handler,
                                  c.handler_entered};
  const std::vector<std::string> names = coverage_names();
  std::vector<std::pair<std::string, std::uint64_t>> rows;
  for (std::size_t i = 0; i < names.size() && i < std::size(values); ++i) {
    rows.emplace_back(names[i], values[i]);
  }
  for (const auto& [site, count] : state_->fault_sites) rows.emplace_back("fault." + site, count);
  return rows;
}

const char* oracle_bound_name(OracleBound bound) {
  switch (bound) {
    case OracleBound::kClosedUnremoved:
      return "closed_unremoved";
    case OracleBound::kEndedKeys:
      return "ended_keys";
    case OracleBound::kOrphans:
      return "orphans";
    case OracleBound::kTombstones:
      return "tombstones";
    case OracleBound::kCount:
      break;
  }
  READYPORT_UNREACHABLE();
}

void OracleJudgement::add(const OracleJudgement& other) {
  for (std::uint32_t rule = 1; rule <= kOracleRules; ++rule) {
    judged[rule] += other.judged[rule];
    violated[rule] += other.violated[rule];
    ambiguous[rule] += other.ambiguous[rule];
    unjudged[rule] += other.unjudged[rule];
  }
  for (std::size_t i = 0; i < kOracleBounds; ++i) bounds_hit[i] += other.bounds_hit[i];
}

std::string oracle_rules_text(const OracleJudgement& judgement) {
  std::string text;
  for (std::uint32_t rule = 1; rule <= kOracleRules; ++rule) {
    if (!text.empty()) text += "\n";
    text += "O" + std::to_string(rule) + (rule < 10 ? "  " : " ") + "judged " +
            std::to_string(judgement.judged[rule]) + ", violated " +
            std::to_string(judgement.violated[rule]) + ", ambiguous " +
            std::to_string(judgement.ambiguous[rule]) + ", unjudged " +
            std::to_string(judgement.unjudged[rule]);
  }
  return text;
}

std::string oracle_rule_list_text(const std::array<std::uint64_t, kOracleRules + 1>& by_rule) {
  std::string text;
  for (std::uint32_t rule = 1; rule <= kOracleRules; ++rule) {
    if (by_rule[rule] == 0) continue;
    if (!text.empty()) text += ", ";
    text += "O" + std::to_string(rule) + " " + std::to_string(by_rule[rule]);
  }
  return text.empty() ? "none" : text;
}

std::string oracle_bounds_text(const std::array<std::uint64_t, kOracleBounds>& bounds_hit) {
  std::string text;
  for (std::size_t i = 0; i < kOracleBounds; ++i) {
    if (!text.empty()) text += ", ";
    text += std::string(oracle_bound_name(static_cast<OracleBound>(i))) + " " +
            std::to_string(bounds_hit[i]);
  }
  return text;
}

OracleCounts LifetimeOracle::counts() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return state_->counts;
}

}  // namespace readyport
