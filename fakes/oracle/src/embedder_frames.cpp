// EmbedderOracle: the boundary lines (boundary_recorder.hpp): the frames that say whose code runs
// on each thread, the connections, and the rules judged when a handler returns or a connection
// ends:
// U5 (unsent data dropped), U6 (edge not drained), U8 (end of stream ignored), U4 (phase end).
// See embedder_state.hpp.
#include <string>

#include "embedder_state.hpp"

namespace readyport {

using namespace embedder_oracle_internal;  // NOLINT(google-build-using-namespace): this oracle's

namespace {

bool read_id(const TraceEvent& line, std::uint64_t* key_out) {
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
  if (!line.find_id("id", &slot, &generation)) {
    return false;
  }
  *key_out = conn_key(slot, generation);
  return true;
}

bool result_is(const TraceEvent& line, std::string_view text) {
  return line.has_result && trace_value_is(line, line.result, text);
}

std::string hex_text(std::uint64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  do {
    text.insert(text.begin(), kDigits[value & 0xf]);
    value >>= 4;
  } while (value != 0);
  return "0x" + text;
}

}  // namespace

bool EmbedderOracle::State::pop_frame(ThreadState& t, FrameKind kind, Frame* out) {
  if (t.frames.empty() || t.frames.back().kind != kind) {
    if (violation.empty()) {
      violation = "inconsistent trace at line " + std::to_string(line->seq) + ": " +
                  std::string(line->name) + " on T" + std::to_string(line->thread) +
                  " closes no open call or callback of that thread";
    }
    return false;
  }
  *out = t.frames.back();
  t.frames.pop_back();
  return true;
}

void EmbedderOracle::State::on_adding(ThreadState& t) {
  ++counts.boundary_lines;
  Socket s = kInvalidSocket;
  (void)field_socket("s", &s);
  // Adding a value is a call on it by whoever adds: the embedder, in practice.
  if (embedder_runs(t)) {
    (void)judge_value(t, s, "add()");
  }
  if (auto it = values.find(s); it != values.end()) {
    it->second.adding = true;
  }
  Frame frame;
  frame.kind = FrameKind::kEngine;
  frame.call = ApiCall::kAdd;
  frame.socket = s;
  const TraceValue* mode = line->find("mode");
  frame.edge = mode != nullptr && (trace_value_is(*line, *mode, "persistent_edge") ||
                                   trace_value_is(*line, *mode, "oneshot_edge"));
  frame.begin_seq = line->seq;
  t.frames.push_back(frame);
}

void EmbedderOracle::State::on_add(ThreadState& t) {
  ++counts.boundary_lines;
  Frame frame;
  if (!pop_frame(t, FrameKind::kEngine, &frame)) {
    return;
  }
  Value* value = nullptr;
  if (auto it = values.find(frame.socket); it != values.end()) {
    value = &it->second;
    value->adding = false;
  }
  std::uint64_t id = 0;
  if (!result_is(*line, "ok") || !read_id(*line, &id)) {
    if (value != nullptr && line->has_result) {
      std::string failed;
      trace_value_append(*line, line->result, &failed);
      value->add_failed = failed + " at line " + std::to_string(line->seq);
    }
    return;
  }
  Conn conn;
  conn.socket = frame.socket;
  conn.edge = frame.edge;
  conns[id] = conn;
  if (value != nullptr) {
    value->engine_owned = true;
    value->owner_conn = id;
    value->added_seq = line->seq;
  }
}

void EmbedderOracle::State::on_api_begin(ThreadState& t) {
  ++counts.boundary_lines;
  Frame frame;
  frame.kind = FrameKind::kEngine;
  frame.begin_seq = line->seq;
  const std::string_view call = line->words.empty() ? std::string_view() : line->words[0].text;
  static constexpr ApiCall kCalls[] = {ApiCall::kClose, ApiCall::kNotify,    ApiCall::kPost,
                                       ApiCall::kPoll,  ApiCall::kRunWorker, ApiCall::kStop};
  for (const ApiCall candidate : kCalls) {
    if (!line->words.empty() && trace_value_is(*line, line->words[0], api_call_name(candidate))) {
      frame.call = candidate;
    }
  }
  (void)read_id(*line, &frame.conn);
  // U3: a driver's call (poll, run_worker, stop) waits; never from inside a callback.
  if (in_callback(t)) {
    judge(kU3);
  }
  if (frame.call == ApiCall::kPoll || frame.call == ApiCall::kRunWorker ||
      frame.call == ApiCall::kStop) {
    judge_blocking(t, std::string(call) + "()");
  }
  t.frames.push_back(frame);
}

void EmbedderOracle::State::on_api_end(ThreadState& t) {
  ++counts.boundary_lines;
  Frame frame;
  if (!pop_frame(t, FrameKind::kEngine, &frame)) {
    return;
  }
  const bool ok = result_is(*line, "ok");
  if (frame.call == ApiCall::kClose && ok) {
    if (auto it = conns.find(frame.conn); it != conns.end()) {
      it->second.close_requested = true;
    }
  }
  // A handler that closes or wakes its own connection (the caller's frame, below this one).
  if (!t.frames.empty() && t.frames.back().kind == FrameKind::kHandler &&
      t.frames.back().conn == frame.conn && ok) {
    Frame& handler = t.frames.back();
    if (frame.call == ApiCall::kClose) {
      handler.closed_self = true;
    } else if (frame.call == ApiCall::kNotify) {
      std::uint64_t events = 0;
      handler.notified_self = handler.notified_self ||
                              (line->find_u64("ev", &events) && (events & kSockNotifyEventIn) != 0);
    }
  }
}

void EmbedderOracle::State::on_handler_enter(ThreadState& t) {
  ++counts.boundary_lines;
  Frame frame;
  frame.kind = FrameKind::kHandler;
  frame.begin_seq = line->seq;
  (void)read_id(*line, &frame.conn);
  (void)field_socket("arg_s", &frame.socket);
  std::uint64_t events = 0;
  (void)line->find_u64("ev", &events);
  frame.events = static_cast<std::uint32_t>(events);
  frame.saw_end = (frame.events & (kSockNotifyEventHangup | kSockNotifyEventErr)) != 0;
  t.frames.push_back(frame);
}

void EmbedderOracle::State::on_handler_leave(ThreadState& t) {
  ++counts.boundary_lines;
  Frame frame;
  if (!pop_frame(t, FrameKind::kHandler, &frame)) {
    return;
  }
  std::uint64_t interest = 0;
  (void)line->find_u64("ret", &interest);
  judge_handler_return(frame, static_cast<std::uint32_t>(interest));
}

// U5, U6 and U8 when a handler returns `interest`.
void EmbedderOracle::State::judge_handler_return(const Frame& frame, std::uint32_t interest) {
  const bool closing = interest == kInterestClose || frame.closed_self;
  auto conn = conns.find(frame.conn);
  if (interest == kInterestClose && conn != conns.end()) {
    conn->second.close_requested = true;
  }
  const std::string who = "the handler of " + conn_text(frame.conn) + " (entered at line " +
                          std::to_string(frame.begin_seq) + ")";
  if (frame.send != SendState::kNone) {
    judge(kU5);
    const bool pending = frame.send == SendState::kShort || frame.send == SendState::kWouldblock;
    if (frame.send == SendState::kUnknown) {
      unjudged(kU5);  // a send failed and nobody read its error
    } else if (pending && !closing && (interest & kInterestOut) == 0) {
      fail(kU5, who + " returned interest " + hex_text(interest) + " after its last send on " +
                    std::to_string(frame.socket) +
                    (frame.send == SendState::kShort ? " was short" : " would block") +
                    ": without OUT it is never told when it can send the rest");
    }
  }
  if (conn != conns.end() && conn->second.edge && (frame.events & kSockNotifyEventIn) != 0) {
    judge(kU6);
    if (!closing && !frame.drained && !frame.notified_self) {
      fail(kU6, who +
                    " was told IN on an edge-triggered registration and returned without "
                    "reading " +
                    std::to_string(frame.socket) + " until WSAEWOULDBLOCK" +
                    (frame.recv_any ? "" : " (no recv at all)") +
                    ": the next edge may never come (spec C5)");
    }
  }
  judge_end_of_stream(frame, interest, closing);
}

// U8: told the end of the stream, the handler closes (or makes progress: a half-close's flush, or
// leaves the close to another thread by asking for nothing more). A level-triggered handler that
// asks for IN or HANGUP again after the end is told it again at once: twice with no progress in
// between is a handler that will spin on it for ever.
void EmbedderOracle::State::judge_end_of_stream(const Frame& frame, std::uint32_t interest,
                                                bool closing) {
  auto it = conns.find(frame.conn);
  if (it == conns.end()) {
    return;
  }
  Conn& conn = it->second;
  if (frame.saw_end) {
    judge(kU8);
  }
  if (closing) {
    conn.end_pending = false;
    conn.end_reasked = false;
    return;
  }
  if (!frame.saw_end) {
    conn.end_pending = conn.end_pending && !frame.progress;
    conn.end_reasked = conn.end_reasked && !frame.progress;
    return;
  }
  const bool asks_more = (interest & (kInterestIn | kInterestHangup)) != 0;
  const bool reasks = !conn.edge && asks_more;
  if (conn.end_reasked && reasks && !frame.progress) {
    fail(kU8, "the handler of " + conn_text(frame.conn) +
                  " was told the end of the stream at line " + std::to_string(conn.end_seq) +
                  " and again at line " + std::to_string(frame.begin_seq) +
                  ", and asked for it again (interest " + hex_text(interest) +
                  ") without closing either time: it will be told for ever");
    return;
  }
  if (!frame.progress) {
    if (!conn.end_pending) {
      conn.end_seq = frame.begin_seq;
    }
    conn.end_pending = true;
    conn.end_reasked = reasks;
    conn.end_asks_more = asks_more;
  }
}

void EmbedderOracle::State::on_closed_begin(ThreadState& t) {
  ++counts.boundary_lines;
  Frame frame;
  frame.kind = FrameKind::kClosed;
  frame.begin_seq = line->seq;
  (void)read_id(*line, &frame.conn);
  if (auto it = conns.find(frame.conn); it != conns.end() && it->second.end_pending) {
    judge(kU8);
    if (!it->second.close_requested && !it->second.end_asks_more) {
      ambiguous(kU8);  // left to another thread (it asked for nothing more), which had not closed
                       // it yet when the engine did: a leak, or that thread's timing
    } else if (!it->second.close_requested) {
      fail(kU8, "the handler of " + conn_text(frame.conn) + " was told the end of the stream at " +
                    "line " + std::to_string(it->second.end_seq) +
                    " and never closed the connection: it stayed open until the engine closed "
                    "it (stop())");
    }
  }
  t.frames.push_back(frame);
}

void EmbedderOracle::State::on_closed_end(ThreadState& t) {
  ++counts.boundary_lines;
  Frame frame;
  if (pop_frame(t, FrameKind::kClosed, &frame)) {
    conns.erase(frame.conn);
  }
}

void EmbedderOracle::State::on_task(ThreadState& t, bool begin) {
  ++counts.boundary_lines;
  if (begin) {
    Frame frame;
    frame.kind = FrameKind::kTask;
    frame.begin_seq = line->seq;
    t.frames.push_back(frame);
    return;
  }
  Frame frame;
  (void)pop_frame(t, FrameKind::kTask, &frame);
}

void EmbedderOracle::State::on_phase(ThreadState& /*t*/) {
  if (line->words.empty() || !trace_value_is(*line, line->words[0], "end")) {
    return;
  }
  stopped = true;
  stop_thread = line->thread;
  stop_seq = line->seq;
}

}  // namespace readyport
