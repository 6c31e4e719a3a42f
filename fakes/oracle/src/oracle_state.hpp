// oracle_state.hpp: LifetimeOracle internals: the model's records, the helpers its source files
// share, and State (everything the oracle knows, one method per kind of line). Not a public API.
//
// State's methods are defined by rule family: oracle_read.cpp (reading, dispatch, verdicts),
// oracle_port.cpp (port lines), oracle_sockets.cpp (socket lines), oracle_connections.cpp
// (workload, handler and observer lines), oracle_model.cpp (the model), oracle_end.cpp (the end);
// lifetime_oracle.cpp holds the public class, which only locks and forwards.
// Ownership: the LifetimeOracle owns its State. Threading: State is used only under
// LifetimeOracle's mutex. Errors: violations and unreadable lines become `violation` (fail()).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "readyport/assert.hpp"
#include "readyport/fake/lifetime_oracle.hpp"
#include "readyport/fake/trace_lines.hpp"
#include "readyport/fake/trace_parse.hpp"
#include "readyport/os.hpp"

namespace readyport {
namespace lifetime_oracle_internal {

// Bounds (docs/oracle.md, "Bounds").
inline constexpr std::size_t kTombstonesMax = 65536;
inline constexpr std::size_t kTombstonesPerSocketMax = 1024;
inline constexpr std::size_t kEndedKeysMax = 65536;
inline constexpr std::size_t kOrphansMax = 65536;
inline constexpr std::size_t kClosedUnremovedMax = 65536;
// The lowest key a connection can have: the engine keeps 0..7 for its own packets (a boundary
// coverage row counts packets for it).
inline constexpr std::uintptr_t kKeyLowest = 8;
inline constexpr std::size_t kQuotedCharsMax = 160;
inline constexpr std::size_t kNameClassesMax = 2048;  // a power of two; half of it remembered
inline constexpr std::size_t kThreadIndexMax = 4096;
// Public calls open on one thread at once at most (a handler's calls nest in its driver's).
inline constexpr std::size_t kApiCallsNestedMax = 16;
// Race coverage: one row per unordered pair of public calls (engine.hpp), same call included.
inline constexpr std::size_t kRacePairs = kApiCallCount * (kApiCallCount + 1) / 2;
// Handler::on_events's kInterestClose (engine.hpp), as the workload writes it in hnd.leave.
inline constexpr std::uint64_t kReturnClose = 0x8000;

// The rules, as violations name them.
// (Arrays: each is one object in the whole program, so the pointers compare equal in every
// source file; fail() compares a rule with kInconsistent.)
inline constexpr char kO1[] = "O1 close before REMOVE (spec E1/E2)";
inline constexpr char kO2[] = "O2 handler after the end";
inline constexpr char kO3[] = "O3 two handlers at once";
inline constexpr char kO4[] = "O4 wrong connection";
inline constexpr char kO5[] = "O5 handler without a cause";
inline constexpr char kO6[] = "O6 second port (spec B8)";
inline constexpr char kO7[] = "O7 second REMOVE (spec B5/B7)";
inline constexpr char kO8[] = "O8 key reuse";
inline constexpr char kO9[] = "O9 on_closed";
inline constexpr char kO10[] = "O10 closed under a running handler";
inline constexpr char kO11[] = "O11 end of run";
inline constexpr char kO12[] = "O12 engine misreports";
inline constexpr char kO13[] = "O13 API results";
inline constexpr char kInconsistent[] = "inconsistent trace";

using IdKey = std::pair<std::uint32_t, std::uint32_t>;  // (slot, generation)
// A posted packet as the oracle matches it: (port, key, bytes).
using PostPacket = std::tuple<std::uintptr_t, std::uintptr_t, std::uint32_t>;

inline std::string id_text(IdKey id) { return trace_id_text(ConnId{id.first, id.second}); }

inline std::string num(std::uint64_t value) { return std::to_string(value); }

// The N of a rule's name "ON ...".
inline std::uint32_t rule_number(const char* rule) {
  READYPORT_ASSERT(rule[0] == 'O');
  std::uint32_t number = 0;
  for (const char* c = rule + 1; *c >= '0' && *c <= '9'; ++c) {
    number = number * 10 + static_cast<std::uint32_t>(*c - '0');
  }
  READYPORT_ASSERT(number >= 1 && number <= kOracleRules);
  return number;
}

// A registration at the OS.
enum class RegState : std::uint8_t {
  kTentative,        // created by an ENABLE of a psn.begin whose psn line has not come
  kLive,             // applied; no REMOVE applied
  kRemovePending,    // REMOVE applied; its packet not dequeued
  kClosedUnremoved,  // the socket was closed before a REMOVE packet: packets may still come
};

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
  // Closed-unremoved: posts that began before the point from which a dequeued post shows the key
  // drained: the closesocket, or, when its REMOVE was applied first, the REMOVE's call.
  std::uint64_t close_post = 0;
  std::uint64_t remove_post = 0;  // REMOVE applied: posts that began before its psn line
  bool drain_post_seen = false;   // a packet posted after the close was dequeued (its port)
  std::map<std::uint32_t, std::uint64_t> dequeuers;  // thread -> line of its latest dequeue
  // Threads whose dequeue was open when the drain's packet was dequeued: each may hold a packet
  // of the key until its dequeue's line shows what it took.
  std::set<std::uint32_t> waiting;
  // Another order of the posts allowed the drain earlier: a dequeued packet matched (in the order
  // the posts began) a post made before the close while a post made after it, alike, was also
  // queued and an alike post's call was open, so either packet may have been the one dequeued.
  // alt_waiting as `waiting`, for that order. O9 counts such a case ambiguous.
  bool alt_drain = false;
  std::set<std::uint32_t> alt_waiting;
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
  // The engine's closesocket of it failed while another thread's (behind its back) was under way:
  // that one had taken effect, somewhere before its line, and may have dropped the REMOVE packet.
  bool close_beside = false;
  bool close_returned = false;   // a wl.close -> ok for it
  std::uint64_t close_seq = 0;   // that wl.close line
  bool closed = false;           // hnd.closed
  bool closed_returned = false;  // hnd.closed_end: on_closed returned
  std::uint64_t closed_seq = 0;
  std::uint64_t debt_seq = 0;         // O5: the entry not yet paid for
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

// A public call of the engine between its begin line (wl.begin, wl.adding) and its end line.
struct ApiInterval {
  ApiCall call = ApiCall::kAdd;
  std::uint64_t conn = 0;  // close(), notify(): the connection its id named at the begin (0: none)
  std::uint64_t begin_seq = 0;
  bool closed_before = false;  // that connection's on_closed had been called before the begin
  bool open_before = false;    // it was added (add() returned ok) and open at the begin
  bool after_stop = false;     // begun after stop() returned
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
  std::uint64_t dequeue_begin_seq = 0;  // the open dequeue's dequeue.begin line
  bool post_open = false;  // post.begin without its post line; its packet is in `posts`
  PostPacket post_packet;
  std::uint64_t post_number = 0;
  std::vector<ApiInterval> calls;  // its public calls begun and not ended (innermost last)
};

// An O1 or O9 that holds unless a dequeue open at its line took the REMOVE packet first.
struct PendingClose {
  const char* rule = nullptr;
  std::uint64_t reg = 0;
  std::uint64_t close_seq = 0;  // the line it was found at
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
  std::uint64_t remove_refused_in_stop = 0;  // a REMOVE refused after the `phase stop` line
  // Pairs of public calls whose intervals overlapped on different threads (race_pair_index).
  std::array<std::uint64_t, kRacePairs> race_pairs{};
  // ... on the same connection: two close(); a close() and a notify(); a close() and a handler.
  std::uint64_t race_same_close_close = 0;
  std::uint64_t race_same_close_notify = 0;
  std::uint64_t race_same_close_handler = 0;
  // Boundary values: a socket value handed out again by the first socket()/accept() after its
  // close; a packet for key 8, next to the keys 0..7 the engine keeps for its own packets; add()
  // refused with a full table, post() with tasks_max outstanding, poll() or run_worker() with
  // workers_max drivers (resource_exhausted).
  std::uint64_t boundary_socket_reused_at_once = 0;
  std::uint64_t boundary_key_lowest = 0;
  std::uint64_t boundary_table_full = 0;
  std::uint64_t boundary_tasks_full = 0;
  std::uint64_t boundary_drivers_full = 0;
};

// The row of a pair of calls in Coverage::race_pairs, either order; its coverage row's name
// ("race.add/close").
std::size_t race_pair_index(ApiCall a, ApiCall b);
std::string race_pair_name(std::size_t index);

// What the oracle does with a line of one name: its handler, and the intervals it bounds
// (oracle_read.cpp's classify() is the one place names are compared).
enum class EventHandler : std::uint8_t {
  kNone,  // only moves its thread on (send, recv, locks, ...)
  kScheduler,
  kPsnBegin,
  kPsn,
  kGqcs,
  kPost,
  kDequeueBegin,
  kPostBegin,
  kNewSocket,
  kClosesocketBegin,
  kClosesocket,
  kCreatePort,
  kClosePort,
  kFault,
  kWorkload,
  kHandlerEnter,
  kHandlerLeave,
  kHandlerClosed,
  kHandlerClosedEnd,
  kObserver,
  kPhase,
};
struct EventClass {
  EventHandler handler = EventHandler::kNone;
  bool moves_on = false;             // its thread no longer holds a packet it dequeued
  bool ends_post_call = false;       // ends the engine call a `post` line was made in
  bool bounds_handler = false;       // bounds when its thread's handler started or ended (O3)
  bool socket_or_port_call = false;  // "the thread's next seam line" for obs.socket_closed
  bool read = false;                 // its fields are read: malformed is a violation
};
EventClass classify(std::string_view name);

}  // namespace lifetime_oracle_internal

using namespace lifetime_oracle_internal;  // NOLINT(google-build-using-namespace): this file's

struct LifetimeOracle::State {
  // ---- Reading ----------------------------------------------------------------------------------
  // A line given as text (parsed into `parsed`), or an event recorded as values; then judge().
  void read(std::string_view text);
  void read_event(const TraceEvent& event);
  void judge(const EventClass& event_class);
  // threads[id], through thread_index (inline: every line asks; a thread's first line adds it).
  ThreadState& thread_state(std::uint32_t id) {
    if (id < thread_index.size() && thread_index[id] != nullptr) {
      return *thread_index[id];
    }
    return thread_state_added(id);
  }
  ThreadState& thread_state_added(std::uint32_t id);
  void dispatch(ThreadState& t, EventHandler handler);
  // The current event's result is (reads as) `text`; the result as text, for a message.
  bool result_is(std::string_view text) const { return trace_value_is(*line, line->result, text); }
  std::string result_text() const {
    std::string text;
    trace_value_append(*line, line->result, &text);
    return text;
  }
  void finish(bool run_ended);
  void finish_cut();
  void finish_connections();

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
  bool need_post_packet(PostPacket* packet_out);
  void open_post_call(ThreadState& t, const PostPacket& packet);
  void on_dequeue_begin(ThreadState& t);
  void end_dequeue(ThreadState& t);
  Element begin_element(std::uintptr_t port, const TraceReg& reg);
  void settle_enable(ThreadState& t, std::uintptr_t port, const Element& element,
                     const TraceReg& reg, bool applied, bool had_begin);
  void settle_element(ThreadState& t, std::uintptr_t port, const Element& element,
                      const TraceReg& reg, bool call_ok, bool had_begin);
  void abandon_begin(ThreadState& t);
  void take_entries(ThreadState& t, std::uintptr_t port);
  void socket_packet(ThreadState& t, Reg& reg, const TraceEntry& entry);
  void stray_packet(ThreadState& t, std::uintptr_t port, const TraceEntry& entry);
  void post_dequeued(std::uintptr_t port, std::uint64_t post);
  // A post after a close, alike to one dequeued first, may have been the one dequeued.
  void note_alt_drain(std::uintptr_t port, std::uint64_t post);
  void count_batch(std::uint64_t received, std::uint64_t count);

  // ---- Socket lines -----------------------------------------------------------------------------
  void on_new_socket();
  void on_closesocket(ThreadState& t);
  void on_closesocket_begin(ThreadState& t);
  void apply_close(ThreadState& t, Socket socket, bool closed);
  void note_close_start(ThreadState& t, Socket socket);
  void close_judged(ThreadState& t, Socket socket, bool closed, Conn* conn, Reg* reg);
  void on_close_port();
  void on_fault(ThreadState& t);

  // ---- Workload and handler lines ---------------------------------------------------------------
  void on_workload(ThreadState& t);
  void on_wl_add(ThreadState& t);
  void on_wl_adding(ThreadState& t);
  void on_wl_close(ThreadState& t);
  void on_wl_notify(ThreadState& t);
  void on_wl_task(ThreadState& t, bool posted);  // wl.post (true) or wl.task_run
  void on_wl_close_behind(ThreadState& t);
  // ---- Public calls (oracle_api.cpp) ------------------------------------------------------------
  bool need_api_call(ApiCall* call_out);
  void begin_api_call(ThreadState& t, ApiCall call, std::uint64_t conn);
  bool end_api_call(ThreadState& t, ApiCall call, ApiInterval* interval_out);
  void note_handler_race(const ThreadState& t, std::uint64_t conn);
  void on_api_begin(ThreadState& t);
  void on_api_end(ThreadState& t);
  void judge_after_stop(const ApiInterval& interval, std::string_view call);
  void on_stop_returned();
  // O13: nothing of the engine's runs after stop() returned. `describe()` names the call for the
  // message; it runs only when there is one to write (the lines it is asked on are many).
  template <typename Describe>
  void judge_no_call_after_stop(const Describe& describe) {
    if (stop_returned) {
      report_call_after_stop(describe());
    }
  }
  void report_call_after_stop(std::string_view what);
  void judge_unknown_id(const ApiInterval& interval, std::string_view call);
  void judge_close_result(const ApiInterval& interval);
  void judge_notify_result(const ApiInterval& interval);
  void on_hnd_closed_end();
  void on_hnd_enter(ThreadState& t);
  void judge_entry_after_end(const ThreadState& t, const Conn& conn);
  void judge_entry_overlap_and_cause(const ThreadState& t, Conn& conn);
  void on_hnd_leave(ThreadState& t);
  void on_hnd_closed();
  void judge_on_closed(const Conn& conn);
  void on_observer(ThreadState& t);
  void on_obs_handler_leave(ThreadState& t, const IdKey& id);
  void on_obs_freed(Conn* conn);
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
  // Whether the other order of alike posts (Reg::alt_drain) drains `conn`'s registration.
  bool drained_in_another_order(const Conn& conn) const;
  // Whether a post of `packet` has its call still open (its post line not yet read).
  bool alike_post_open(const PostPacket& packet) const;
  // Another thread's dequeue on `port` began before t's and has not ended: it may hold the oldest
  // alike packet (FIFO), so that t's is a later one.
  bool earlier_dequeue_open(std::uintptr_t port, const ThreadState& t) const;
  bool closing(Socket socket) const;
  std::set<std::uint32_t> open_dequeuers(std::uintptr_t port, std::uint32_t except) const;
  void pend_or_fail(const char* rule, std::string text, const ThreadState& t, const Reg& reg,
                    bool settle);
  void settle_pending(std::uint64_t reg, bool applied);
  void pay(std::uint64_t conn_number);
  void recheck_debts();
  std::string conn_text(const Conn& conn) const;
  std::string reg_text(const Reg& reg) const;

  // ---- Data (all guarded by LifetimeOracle::mutex_) ---------------------------------------------
  TraceEvent parsed;                 // the current line, when it came as text
  const TraceEvent* line = &parsed;  // the current event: `parsed`, or a recorded event
  // threads' entries by thread id, for ids below kThreadIndexMax (std::map's nodes do not move).
  std::vector<ThreadState*> thread_index;
  std::string_view raw;  // the current line's text (empty for a recorded event)
  bool has_seq = false;
  std::uint64_t last_seq = 0;
  bool at_end = false;  // finish() is judging
  bool finished = false;
  std::string violation;
  OracleCounts counts;
  Coverage coverage;
  bool stopping = false;       // a `phase stop` line was read (the workload called stop())
  bool stop_returned = false;  // a `wl.end stop -> ok` line was read
  std::uint64_t stop_returned_seq = 0;
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
  std::map<PostPacket, std::deque<std::uint64_t>> posts;
  std::uint64_t posts_made = 0;
  Socket last_closed = kInvalidSocket;  // the latest closed socket value, until the next socket
  std::uint32_t open_posts = 0;         // threads with open_post
  std::map<std::uint64_t, Conn> conns;
  std::uint64_t conns_made = 0;
  std::map<Socket, std::vector<std::uint64_t>> conns_by_socket;  // oldest first
  std::map<IdKey, std::uint64_t> conns_by_id;
  std::deque<std::uint64_t> tombstones;
  std::set<std::uint64_t> debts;             // O5: connections with more entries than causes so far
  std::vector<PendingClose> pending_closes;  // O1 waiting on open dequeues
  std::set<std::uintptr_t> ports_open;
  std::map<std::uint64_t, TaskCount> tasks;
  bool observer_seen = false;
};

}  // namespace readyport
