// readyport/fake/lifetime_oracle.hpp: judges the engine's lifetime promise from a trace alone.
//
// Input: trace lines (trace.hpp) from any backend: the seam calls RecordingOs writes, as points or
// as intervals (a begin line, then the call's line), FaultyOs's `fault` lines, the workload's
// `wl.*`/`hnd.*` lines and the engine's `obs.*` reports (only cross-checked, rule O12). A rule
// that orders two calls is a violation when every order their intervals allow breaks it, and is
// counted ambiguous when some orders do and some do not. The rules O1-O12, the model and each
// bound are in docs/oracle.md.
// Ownership: a plain object; as a trace's sink it must outlive that use. Threading: all methods
// are safe from any thread (one internal mutex, never held across a call out), but after
// set_serialized() on_trace_event takes no lock and must not overlap any call. Errors: a
// violation or an unreadable line becomes status(); nothing is asserted on input.
#pragma once

#include <array>
#include <atomic>
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
inline constexpr std::uint32_t kOracleRules = 13;

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

// How each rule fared, index N for rule ON (index 0 unused); summed over seeds by add().
struct OracleJudgement {
  std::array<std::uint64_t, kOracleRules + 1> judged{};     // events the rule judged
  std::array<std::uint64_t, kOracleRules + 1> violated{};   // violations (every one, not the 1st)
  std::array<std::uint64_t, kOracleRules + 1> ambiguous{};  // the intervals allow both verdicts
  std::array<std::uint64_t, kOracleRules + 1> unjudged{};   // could not be judged (a bound hit,
                                                            // no obs lines for O12)
  std::array<std::uint64_t, kOracleBounds> bounds_hit{};    // times each bound made it forget
  void add(const OracleJudgement& other);
  // Bound hits plus unjudged events: 0 when every rule judged everything it met.
  std::uint64_t not_judged() const;
};

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
  OracleJudgement judgement;
};

// One line per rule: "O1  judged 120, violated 0, ambiguous 0, unjudged 0" (no final newline).
std::string oracle_rules_text(const OracleJudgement& judgement);
// "O1 2, O9 1" for the rules with a non-zero count (index N for rule ON), or "none".
std::string oracle_rule_list_text(const std::array<std::uint64_t, kOracleRules + 1>& by_rule);
// "closed_unremoved 0, ended_keys 0, orphans 0, tombstones 0": each bound's hits, for a report.
std::string oracle_bounds_text(const std::array<std::uint64_t, kOracleBounds>& bounds_hit);

class LifetimeOracle final : public TraceSink {
 public:
  LifetimeOracle();
  ~LifetimeOracle();
  LifetimeOracle(const LifetimeOracle&) = delete;
  LifetimeOracle& operator=(const LifetimeOracle&) = delete;

  // One line, with or without its '\n'. Lines must come in seq order.
  void on_trace_line(std::string_view line) override;
  // One event as values (Trace's sink), read as its line would be, without text.
  void on_trace_event(const TraceEvent& event) override;
  // From now on on_trace_event takes no lock: the owner promises that events never overlap one
  // another nor any other call (the sink of a TraceOptions::serialized trace). Before the first
  // event.
  void set_serialized() { serialized_ = true; }
  // Many lines (a trace file): split at '\n'; empty lines are skipped.
  void observe_text(std::string_view text);
  // The end-of-run checks (O11 and what could only be judged at the end), once; later calls only
  // return status(). Returns status().
  Status finish();
  // The same for a trace that stops where its run was cut (an abort): the end-of-run checks (O11,
  // O5's unpaid entries, calls still open) are counted unjudged instead of judged.
  Status finish_cut();
  // ok, or the first violation (kInternal, a sentence naming the rule, the socket, key or
  // connection, and the line's seq).
  Status status() const;
  // Whether status() is a violation, without the lock (an atomic flag): for a sink that asks after
  // every line.
  bool violated() const { return violated_.load(std::memory_order_acquire); }
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
  // The race rows among them: `race.<a>/<b>` per unordered pair of public calls whose intervals
  // (wl.begin to their end lines) overlapped on two threads, then `race.same.close/close`,
  // `race.same.close/notify` and `race.same.close/handler` on one connection.
  static std::vector<std::string> race_coverage_names();
  OracleCounts counts() const;

 private:
  struct State;

  // Sets violated_ once the state holds a violation. mutex_ held.
  void note_violation_locked();

  mutable std::mutex mutex_;
  std::unique_ptr<State> state_;  // guarded by mutex_
  std::atomic<bool> violated_{false};
  bool serialized_ = false;  // set before the first event
};

}  // namespace readyport
