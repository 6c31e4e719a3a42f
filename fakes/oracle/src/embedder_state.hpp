// EmbedderOracle's state (embedder_oracle.hpp): the threads' frames (whose code runs), the socket
// values' lives, the connections, and the rules' bookkeeping. Internal to the oracle library.
//
// Ownership: EmbedderOracle owns one State. Threading: under the oracle's mutex (or serialized).
// Errors: violations become `violation`; nothing asserts on input.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "readyport/fake/embedder_oracle.hpp"
#include "readyport/fake/trace_event.hpp"
#include "readyport/fake/trace_lines.hpp"

namespace readyport::embedder_oracle_internal {

enum Rule : std::uint32_t {
  kU1 = 1,  // use after close
  kU2,      // foreign close
  kU3,      // blocking callback
  kU4,      // outlives stop
  kU5,      // unsent data dropped
  kU6,      // edge not drained
  kU7,      // socket leaked
  kU8,      // end of stream ignored
  kU9,      // callback never returned
};

// Frames nest per thread: an engine call inside a callback inside an engine call (a handler's
// close() inside its driver's run_worker()).
enum class FrameKind : std::uint8_t { kEngine, kHandler, kClosed, kTask };

// What a handler's last send on its own socket did.
enum class SendState : std::uint8_t { kNone, kFull, kShort, kWouldblock, kError, kUnknown };

struct Frame {
  FrameKind kind = FrameKind::kEngine;
  ApiCall call = ApiCall::kAdd;  // kEngine
  std::uint64_t conn = 0;        // kHandler, kClosed: the connection; kEngine close/notify: the id
  Socket socket =
      kInvalidSocket;        // kHandler: the socket the engine passed; kEngine add: its socket
  std::uint32_t events = 0;  // kHandler: the events; kEngine notify: its events
  bool edge = false;         // kEngine add: the mode is edge-triggered
  std::uint64_t begin_seq = 0;
  // A handler's own calls on `socket` (U5, U6, U8).
  SendState send = SendState::kNone;
  bool recv_any = false;
  bool drained = false;        // its last recv returned 0 or failed
  bool saw_end = false;        // recv 0, a failed recv with an error other than WSAEWOULDBLOCK, or
                               // HANGUP/ERR in its events
  bool progress = false;       // a send moved bytes
  bool closed_self = false;    // close(id) of its own connection returned ok inside it
  bool notified_self = false;  // notify(id, IN) inside it
};

struct ThreadState {
  std::vector<Frame> frames;
  std::uint64_t prev_seq = 0;  // the thread's line before this one
  // A failed send or recv whose error the thread's next `last_error` line says.
  bool awaiting_error = false;
  bool awaiting_recv = false;  // it was a recv (else a send)
};

// One socket value's current life.
struct Value {
  enum class Life : std::uint8_t { kOpen, kClosing, kDead };
  Life life = Life::kOpen;
  std::uint32_t lives = 0;
  bool nonblocking = false;
  bool listener = false;
  std::uint64_t opened_seq = 0;
  std::uint32_t opened_thread = 0;
  bool by_embedder = false;
  bool adding = false;        // an add() of it is running
  bool engine_owned = false;  // add() returned ok; until the engine's closesocket
  std::uint64_t owner_conn = 0;
  std::uint64_t added_seq = 0;
  std::string add_failed;        // "resource_exhausted at line 40": a failed add() of this life
  std::uint64_t closed_seq = 0;  // the closesocket line that ended the life
  bool closed_by_engine = false;
};

struct Conn {
  Socket socket = kInvalidSocket;
  bool edge = false;
  bool close_requested = false;  // close() returned ok, or a handler returned kInterestClose
  bool end_pending = false;      // a handler was told the end and neither closed nor progressed
  bool end_reasked = false;      // ... and asked for IN or HANGUP again (level-triggered)
  bool end_asks_more = false;    // ... and asked for IN or HANGUP again (any mode)
  std::uint64_t end_seq = 0;
};

inline std::uint64_t conn_key(std::uint32_t slot, std::uint32_t generation) {
  return (std::uint64_t{slot} << 32) | generation;
}
std::string conn_text(std::uint64_t key);  // "slot/generation"

}  // namespace readyport::embedder_oracle_internal

namespace readyport {

struct EmbedderOracle::State {
  using Frame = embedder_oracle_internal::Frame;
  using FrameKind = embedder_oracle_internal::FrameKind;
  using ThreadState = embedder_oracle_internal::ThreadState;
  using Value = embedder_oracle_internal::Value;
  using Conn = embedder_oracle_internal::Conn;

  explicit State(bool exact_in) : exact(exact_in) {}

  // ---- Reading (embedder_oracle.cpp) ----
  void read(const TraceEvent& event);
  void dispatch(ThreadState& t);
  void finish(bool run_completed);
  void fail(std::uint32_t rule, const std::string& what);
  void judge(std::uint32_t rule) { ++counts.judgement.judged[rule]; }
  void ambiguous(std::uint32_t rule) { ++counts.judgement.ambiguous[rule]; }
  void unjudged(std::uint32_t rule) { ++counts.judgement.unjudged[rule]; }
  // Whether the thread's current code is the embedder's (not inside an engine call).
  static bool embedder_runs(const ThreadState& t) {
    return t.frames.empty() || t.frames.back().kind != FrameKind::kEngine;
  }
  static bool in_callback(const ThreadState& t) {
    return !t.frames.empty() && t.frames.back().kind != FrameKind::kEngine;
  }
  bool field_socket(std::string_view key, Socket* out) const;
  bool result_number(std::int64_t* out) const;
  std::string where(const ThreadState& t) const;  // "on T3 in the handler of 0/1"

  // ---- Boundary lines (embedder_frames.cpp) ----
  void on_adding(ThreadState& t);
  void on_add(ThreadState& t);
  void on_api_begin(ThreadState& t);
  void on_api_end(ThreadState& t);
  void on_handler_enter(ThreadState& t);
  void on_handler_leave(ThreadState& t);
  void on_closed_begin(ThreadState& t);
  void on_closed_end(ThreadState& t);
  void on_task(ThreadState& t, bool begin);
  void on_phase(ThreadState& t);
  bool pop_frame(ThreadState& t, FrameKind kind, Frame* out);
  void judge_handler_return(const Frame& frame, std::uint32_t interest);
  void judge_end_of_stream(const Frame& frame, std::uint32_t interest, bool closing);

  // ---- Seam lines (embedder_sockets.cpp) ----
  void on_new_socket(ThreadState& t, bool accepted);
  void on_socket_call(ThreadState& t, std::string_view call);
  void on_close_begin(ThreadState& t);
  void on_close_end(ThreadState& t);
  void on_fault(ThreadState& t);
  void on_last_error(ThreadState& t);
  void on_wait(ThreadState& t, std::string_view what);
  void on_port_wait(ThreadState& t);
  void on_thread_start();
  void on_join();
  // Counts a seam call of the embedder's code; inside a callback, U3 judges it.
  void count_embedder_call(const ThreadState& t) {
    ++counts.embedder_calls;
    if (in_callback(t)) {
      ++counts.callback_calls;
      judge(embedder_oracle_internal::kU3);
    }
  }
  // U1: an embedder call on `s`. False when there is no open socket behind it.
  bool judge_value(ThreadState& t, Socket s, std::string_view call);
  // U3: `what` can block; a violation inside a callback.
  void judge_blocking(ThreadState& t, const std::string& what);
  // A handler's own recv or send on its socket (U5, U6, U8): `result` -1 with `error` (0 unknown).
  void note_recv(ThreadState& t, Socket s, std::int64_t result, std::uint32_t error);
  void note_send(ThreadState& t, Socket s, std::int64_t length, std::int64_t result,
                 std::uint32_t error);
  Frame* handler_frame(ThreadState& t, Socket s);  // the innermost handler frame on `s`, or null

  const bool exact;
  const TraceEvent* line = nullptr;  // the line being read
  // By trace thread number (small and dense: a runtime numbers its threads 0, 1, 2, ...); at most
  // kThreadsMax, a thread past it is "inconsistent trace".
  static constexpr std::uint32_t kThreadsMax = 1 << 16;
  std::vector<ThreadState> threads;
  ThreadState* thread_of(std::uint32_t id) {
    if (id >= kThreadsMax) {
      return nullptr;
    }
    if (id >= threads.size()) {
      threads.resize(id + 1);
    }
    return &threads[id];
  }
  std::map<Socket, Value> values;
  std::map<std::uint64_t, Conn> conns;
  std::vector<std::string> threads_started;  // "th3", in order
  std::vector<std::string> threads_joined;
  bool stopped = false;  // `phase end` seen
  std::uint32_t stop_thread = 0;
  std::uint64_t stop_seq = 0;
  bool outlived = false;  // U4 reported once per run
  std::uint64_t last_seq = 0;
  bool finished = false;
  bool at_end = false;
  std::string violation;
  EmbedderCounts counts;
};

}  // namespace readyport
