// readyport/fake/lifetime_oracle.hpp: judges the engine's lifetime promise from a trace alone.
//
// The engine promises (DESIGN.md "The engine"; spec E1-E5, B5-B8): a connection's state is never
// freed while the port may still hand out its key; its socket is closed only after its REMOVE
// packet was dequeued (or, when REMOVE failed, spec E4, after the port was drained); REMOVE is
// issued at most once per registration; a socket is registered on one port; handlers never run
// twice at once for a connection nor after it ended; nothing leaks. LifetimeOracle checks that
// from what the OS saw: the seam calls and results RecordingOs writes, the faults FaultyOs writes
// (`fault <site> ...`), and the lines the workload's own handlers write (`wl.*`, `hnd.*`). The
// engine's observer events (`obs.*`, TraceObserver) are only a cross-check (rule O12), so an
// engine that misreports its own events is still caught. Its only input is trace text: it judges
// a run online (as the trace's sink) or a recorded file (observe_text), from any backend.
//
//   readyport::LifetimeOracle oracle;
//   trace.set_sink(&oracle);                       // before the run
//   ... run: Engine(RecordingOs(FakeOs)), with a TraceObserver and a workload writing wl./hnd.
//   if (readyport::Status s = oracle.finish(); !s.ok()) report(s);   // after the run
//
//   readyport::LifetimeOracle offline;             // or: a trace file
//   offline.observe_text(text);
//   readyport::Status verdict = offline.finish();
//
// ---- The model ----------------------------------------------------------------------------------
// Registrations at the OS: an applied ENABLE on a socket life with no registration creates one
// (port, key); an applied REMOVE makes it remove-pending; the dequeue of an entry with its key and
// mask bit 0x80 ends it; a closesocket ends it without REMOVE (closed-unremoved: packets may still
// arrive, spec E2). A socket value begins a new life at `socket`/`accept` (spec E5). A psn.begin
// line makes its elements possibly applied (another thread may dequeue what they caused before
// the call's own psn line); the psn line settles them; a psn line without a psn.begin applies its
// elements there. Posted packets are told from socket packets by matching the `post` lines (port,
// key, bytes); the oracle does not know the engine's key encoding.
//
// A closed-unremoved registration is drained once a packet posted (on its port) after the
// closesocket has been dequeued (FIFO, spec F1) and every thread that dequeued a packet of its key
// has since moved on. "Moved on" is read from the thread's own later lines: any line but a lock
// acquisition (`m<n>.lock`, `m<n>.try_lock`), `sched.*`, `obs.*`, `fault` and `phase`; a port call
// qualifies, and so does leaving the critical section in which the packet was classified (a
// thread's next port call can be a wait that is recorded only when it returns).
//
// ---- The rules (violations name them; the first one is kept) ------------------------------------
//   O1 close before REMOVE    O2 handler after the end        O3 two handlers at once
//   O4 wrong connection       O5 handler without a cause      O6 second port
//   O7 second REMOVE          O8 key reuse                    O9 on_closed
//   O10 closed under a running handler   O11 end of run (finish())   O12 engine misreports
// O2 also covers the engine's promise for close(): a handler is not entered for a packet that a
// thread dequeued after the workload's `wl.close ... -> ok` line for that connection.
// A line the oracle needs but cannot read is "unparsable trace line <seq>"; lines that contradict
// each other (a psn line unlike its psn.begin) are "inconsistent trace". The exact conditions are
// in lifetime_oracle.cpp beside each check.
//
// Known limits: a whole port call that FaultyOs fails before it reaches the OS (`fault
// psn.call_fails`) leaves no psn line; if the engine then gives up on a REMOVE in it, the oracle
// sees no refusal unless the fault line carries `regs=[...]` (then its REMOVE elements count as
// refused). O5 accepts a handler entry not yet paid for while some thread is between a `post` and
// its next non-lock line (a notify's `wl.notify` is written after the post); the debt is judged
// once no thread is in that state, or at finish().
//
// Memory: state per live socket, registration and connection; ended connections are kept as
// tombstones (at most 65,536, and 1,024 per socket value, for O2/O9), ended keys at most 65,536
// (for O7), closed-unremoved registrations until drained (at most 4096; beyond that the oldest
// counts as drained), 65,536 orphan packets (stale ones among them). Each bound hit is counted
// (OracleBound): sized so that the main job, its sweeps and --scale up to 20,000 connections hit
// none.
//
// Ownership: a plain object; as a sink it must outlive the trace's use of it (or be unset).
// Threading: on_trace_line, observe_text and finish are serialised by an internal mutex (the
// trace calls the sink under its own mutex, one line at a time); status(), coverage() and
// counts() may be called from any thread at any time. The mutex is never held across a call into
// anything else. Errors: violations and bad input are recorded as the status, never asserted.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "readyport/fake/trace.hpp"
#include "readyport/status.hpp"

namespace readyport {

// The rules O1..O12.
inline constexpr std::uint32_t kOracleRules = 12;

// The oracle's fixed bounds on what it remembers. Past one it forgets the oldest, and what it
// forgot is not judged: each time is counted (OracleCounts::bounds_hit), never a pass.
enum class OracleBound : std::uint8_t {
  kClosedUnremoved,  // registrations closed before their REMOVE, waiting to drain: the oldest is
                     // then taken as drained
  kEndedKeys,        // keys whose registration ended: a second REMOVE packet for a forgotten
                     // one is not seen
  kOrphans,          // packets dequeued before their ENABLE's line: a forgotten one is not
                     // adopted
  kTombstones,       // ended connections, in all and per socket value: a late line about a
                     // forgotten one is not tied to it
  kCount,
};
inline constexpr std::size_t kOracleBounds = static_cast<std::size_t>(OracleBound::kCount);
// "closed_unremoved", "ended_keys", "orphans", "tombstones".
const char* oracle_bound_name(OracleBound bound);

// What the oracle saw, counted (never judged).
struct OracleCounts {
  std::uint64_t lines = 0;               // trace lines read
  std::uint64_t port_calls = 0;          // psn and gqcs lines
  std::uint64_t packets = 0;             // socket packets dequeued (entries not matching a post)
  std::uint64_t posted_packets = 0;      // entries matching a post line
  std::uint64_t stale_packets = 0;       // socket packets of a closed-unremoved or no registration
  std::uint64_t registrations = 0;       // registrations created at the OS
  std::uint64_t removes_seen = 0;        // REMOVE packets dequeued
  std::uint64_t removes_refused = 0;     // REMOVEs not applied (res != 0, failed call, fault)
  std::uint64_t closed_unremoved = 0;    // registrations ended by closesocket
  std::uint64_t sockets_closed = 0;      // successful closesocket calls
  std::uint64_t connections = 0;         // wl.add -> ok
  std::uint64_t connections_closed = 0;  // hnd.closed
  std::uint64_t handler_entries = 0;     // hnd.enter
  std::uint64_t notifies = 0;            // wl.notify -> ok
  std::uint64_t tasks_run = 0;           // wl.task_run
  std::uint64_t faults = 0;              // fault lines
  std::uint64_t observer_lines = 0;      // obs.* lines
  std::uint64_t unjudged = 0;            // violations not judged on real threads (OracleOptions)
  // The same, per rule: index N for rule ON (index 0 unused).
  std::array<std::uint64_t, kOracleRules + 1> unjudged_by_rule{};
  // Times each bound made it forget something (OracleBound order).
  std::array<std::uint64_t, kOracleBounds> bounds_hit{};
};

// Which rules a trace of this kind is judged by: every one in simulation; with calls_may_lag, a
// list per kind (full, part, none), each rule "ON" separated by spaces.
struct OracleJudgement {
  std::string full;  // judged whatever the lag
  std::string part;  // judged only in the parts that hold whatever the lag
  std::string none;  // not judged: a would-be violation is counted (OracleCounts::unjudged)
};
OracleJudgement oracle_judgement(bool calls_may_lag);
// Whether rule ON (1..kOracleRules) is left unjudged when calls may lag: its would-be violations
// are counted in OracleCounts::unjudged_by_rule instead. The one list fail() and the text use.
bool oracle_rule_unjudged_with_lag(std::uint32_t rule);
// "closed_unremoved 0, ended_keys 0, orphans 0, tombstones 0": each bound's hits, for a report.
std::string oracle_bounds_text(const std::array<std::uint64_t, kOracleBounds>& bounds_hit);

struct OracleOptions {
  // The trace comes from real threads (FreeRuntime, a real backend): a call's line is written
  // when it returns, so a line that depends on its effect can come first (a closesocket can be
  // recorded after the socket value's next life began). Then O1, O5, O6, O7, O8 and O10, and the
  // parts of O2, O9, O11 and O12 that tie a close, a REMOVE's dequeue or a drain on another
  // thread to a connection, are not judged (O1/O5/O6/O7/O8/O10 are counted as
  // OracleCounts::unjudged). What stays judged holds whatever the lag: two handlers at once
  // (O3), a handler given another connection's socket or id (O4), a handler after its REMOVE
  // packet or its on_closed (O2), on_closed twice, for a failed add or under a running handler
  // (O9), ports, tasks and handlers left at the end (O11), the engine's handler events against
  // the handlers' own (O12). Simulation (every rule judged): false.
  bool calls_may_lag = false;
};

class LifetimeOracle final : public TraceSink {
 public:
  explicit LifetimeOracle(OracleOptions options = {});
  ~LifetimeOracle();
  LifetimeOracle(const LifetimeOracle&) = delete;
  LifetimeOracle& operator=(const LifetimeOracle&) = delete;

  // One line, with or without its '\n'. Lines must come in seq order.
  void on_trace_line(std::string_view line) override;
  // Many lines (a trace file): split at '\n'; empty lines are skipped.
  void observe_text(std::string_view text);
  // The end-of-run checks (O11 and what could only be judged at the end), once; later calls only
  // return status(). Returns status().
  Status finish();
  // ok, or the first violation (kInternal, a sentence naming the rule, the socket, key or
  // connection, and the line's seq).
  Status status() const;
  // The first violation, if one was found and the oracle is not busy (never blocks): for a last
  // report when the process is about to abort on a broken engine assertion.
  bool try_violation(std::string* violation_out) const;
  // What the trace shows still held (connections without on_closed, with their handler, close
  // and REMOVE state; live registrations), if the oracle is not busy (never blocks): for a hang
  // report.
  bool try_describe_open(std::string* text_out) const;

  // Fixed rows in a fixed order: remove_ored_with_in, stale_packet_dequeued, call_retry,
  // remove_refused_quarantined, oneshot_rearmed_all_after_out, full_batch,
  // socket_reused_while_stale, close_in_handler, handler_entered; then `fault.<site>` per fault
  // site seen, sorted by name.
  std::vector<std::pair<std::string, std::uint64_t>> coverage() const;
  // The names of the fixed rows of coverage(), in order (no fault rows). Never fails.
  static std::vector<std::string> coverage_names();
  OracleCounts counts() const;

 private:
  struct State;

  mutable std::mutex mutex_;
  std::unique_ptr<State> state_;  // guarded by mutex_
};

}  // namespace readyport
