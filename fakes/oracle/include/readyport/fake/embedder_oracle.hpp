// readyport/fake/embedder_oracle.hpp: judges the code that embeds the engine, from a trace alone.
//
// The LifetimeOracle (lifetime_oracle.hpp) judges the engine's promise to its embedder; this oracle
// judges the embedder's side of the contract (engine.hpp, docs/contract.md): what its handlers,
// tasks and threads did at the seam. It needs the boundary lines a BoundaryRecorder writes
// (boundary_recorder.hpp): between a callback's lines (hnd.enter .. hnd.leave, hnd.closed ..
// hnd.closed_end, wl.task_run .. wl.task_end) a thread runs the embedder's code; between a public
// call's lines (wl.adding / wl.begin .. its end line) and outside any callback, the engine's;
// outside both, the embedder's again. So each seam call (RecordingOs's lines, and FaultyOs's
// `fault` lines, which stand for the call they failed) has an author, and the rules U1-U9 judge
// the embedder's calls:
//
//   U1 use after close        a call on a socket value with no open socket behind it: closed (by
//                             the engine or by the embedder) and not handed out again, or never one
//   U2 foreign close          closesocket of a socket the engine owns (from add() to the engine's
//                             own closesocket): the REMOVE handshake is lost (E1, E2)
//   U3 blocking callback      a call that can block made inside a handler, on_closed or task: a
//                             blocking socket's I/O, a sleep, a join, a port wait, poll(),
//                             run_worker() or stop()
//   U4 outlives stop          code running after the server's stop returned (`phase end`), or a
//                             thread started and never joined
//   U5 unsent data dropped    a handler whose last send on its socket was short or would block
//                             returns without OUT in its interest and without closing
//   U6 edge not drained       an edge-triggered handler told IN returns without reading until
//                             WSAEWOULDBLOCK (or the end), without closing and without notify()
//   U7 socket leaked          a socket the embedder opened is still open at the end (a failed
//                             add() leaves the socket to the caller)
//   U8 end of stream ignored  a handler told the end (recv 0, HANGUP, ERR) neither closes nor makes
//                             progress, and is told again; or the connection stays open until
//                             stop() closes it
//   U9 callback never returned  the run ended (a step limit) inside a handler, on_closed or task
//
// Like the LifetimeOracle, it reports the first violation (kInternal, "U<n> at line <seq>: ...")
// and counts, per rule, what it judged, violated, found ambiguous and could not judge (a send whose
// error nobody read; on real threads, a call that may have begun before a close another thread
// made). A trace with no boundary lines gives it nothing to judge, and its judgement says so.
//
//   readyport::EmbedderOracle oracle(/*exact=*/true);   // a simulated trace
//   oracle.observe_text(text);                          // or as a trace's sink
//   readyport::Status verdict = oracle.finish(/*run_completed=*/true);
//
// Ownership: a plain object; as a sink it must outlive that use. Threading: every method is safe
// from any thread (one mutex), except that after set_serialized() on_trace_event takes no lock.
// Errors: a violation or an unreadable line becomes status(); nothing is asserted on input.
#pragma once

#include <array>
#include <atomic>
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

// The rules U1..U9.
inline constexpr std::uint32_t kEmbedderRules = 9;
// "use after close", ... (rule 1..kEmbedderRules); "" otherwise.
const char* embedder_rule_name(std::uint32_t rule);

// How each rule fared, index N for rule UN (index 0 unused); summed over seeds by add().
struct EmbedderJudgement {
  std::array<std::uint64_t, kEmbedderRules + 1> judged{};
  std::array<std::uint64_t, kEmbedderRules + 1> violated{};
  std::array<std::uint64_t, kEmbedderRules + 1> ambiguous{};
  std::array<std::uint64_t, kEmbedderRules + 1> unjudged{};
  void add(const EmbedderJudgement& other);
  std::uint64_t not_judged() const;  // the unjudged events, all rules
};

// What the oracle saw, counted.
struct EmbedderCounts {
  std::uint64_t lines = 0;
  std::uint64_t boundary_lines = 0;      // wl.* and hnd.* lines
  std::uint64_t embedder_calls = 0;      // seam calls whose author is the embedder's code
  std::uint64_t callback_calls = 0;      // of those, made inside a handler, on_closed or task
  std::uint64_t engine_calls = 0;        // seam calls made inside the engine's public calls
  std::uint64_t sockets_opened = 0;      // socket/accept by the embedder's code
  std::uint64_t reused_value_calls = 0;  // embedder calls on a value in its second or later life
  EmbedderJudgement judgement;
};

// One line per rule: "U1  judged 120, violated 0, ambiguous 0, unjudged 0  (use after close)".
std::string embedder_rules_text(const EmbedderJudgement& judgement);
// The headline: "every rule judged; ambiguous: none; unjudged: none; nothing to judge: U6, U9".
std::string embedder_judgement_headline(const EmbedderJudgement& judgement);
// What no rule can see, printed with every judgement (a check that cannot see says so).
std::string embedder_blind_spots_text();

// The earlier of an EmbedderOracle's and a LifetimeOracle's verdicts ("<rule> at line <seq>: ..."),
// for a run both judged: at one line the embedder's (its call broke the engine's rule too); ok
// when neither found anything.
Status embedder_first_violation(const Status& embedder, const Status& lifetime);

class EmbedderOracle final : public TraceSink {
 public:
  // `exact`: each call's line stands where the call took effect (a simulated trace); false on
  // real threads, where a call's line is written when it returns.
  explicit EmbedderOracle(bool exact = true);
  ~EmbedderOracle();
  EmbedderOracle(const EmbedderOracle&) = delete;
  EmbedderOracle& operator=(const EmbedderOracle&) = delete;

  void on_trace_line(std::string_view line) override;
  void on_trace_event(const TraceEvent& event) override;
  // As LifetimeOracle::set_serialized: events never overlap one another or any other call.
  void set_serialized() { serialized_ = true; }
  // Many lines (a trace file): split at '\n'; empty lines and '#' header lines are skipped.
  void observe_text(std::string_view text);
  // The end-of-run checks (U4's joins, U7, U8's open connections; U9 when `run_completed` is false:
  // the run was cut), once; later calls only return status().
  Status finish(bool run_completed = true);
  Status status() const;
  bool violated() const { return violated_.load(std::memory_order_acquire); }
  EmbedderCounts counts() const;

 private:
  struct State;
  void note_violation_locked();

  mutable std::mutex mutex_;
  std::unique_ptr<State> state_;
  std::atomic<bool> violated_{false};
  bool serialized_ = false;
};

}  // namespace readyport
