// EmbedderOracle: the seam lines (RecordingOs's calls, FaultyOs's faults): the socket values'
// lives, and the rules judged at a call: U1 (use after close), U2 (foreign close), U3 (blocking
// callback),
// and the handler's own recv and send for U5, U6 and U8. See embedder_state.hpp.
#include <string>

#include "embedder_state.hpp"

namespace readyport {

using namespace embedder_oracle_internal;  // NOLINT(google-build-using-namespace): this oracle's

namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// The calls that wait on a blocking socket (connect included: on Windows it waits for the
// handshake; the fake's loopback does not, which is why a rule must say so).
bool waits_when_blocking(std::string_view call) {
  return call == "accept" || call == "connect" || call == "send" || call == "recv" ||
         call == "sendto" || call == "recvfrom";
}

}  // namespace

// U1. Counts the call as the embedder's.
bool EmbedderOracle::State::judge_value(ThreadState& t, Socket s, std::string_view call) {
  judge(kU1);
  const auto it = values.find(s);
  if (it == values.end()) {
    fail(kU1, std::string(call) + " on " + std::to_string(s) + " " + where(t) +
                  ": no socket() or accept() ever returned that value");
    return false;
  }
  const Value& value = it->second;
  if (value.lives > 1) {
    ++counts.reused_value_calls;
  }
  if (value.life == Value::Life::kOpen) {
    return true;
  }
  if (value.life == Value::Life::kClosing) {
    ambiguous(kU1);  // another thread's closesocket of it is under way
    return false;
  }
  // Dead. On real threads the call may have begun before the close returned, unless the thread's
  // previous line came after it.
  if (!exact && t.prev_seq < value.closed_seq) {
    ambiguous(kU1);
    return false;
  }
  fail(kU1, std::string(call) + " on " + std::to_string(s) + " " + where(t) + ", closed by " +
                (value.closed_by_engine ? "the engine" : "the embedder's code") + " at line " +
                std::to_string(value.closed_seq) +
                (value.closed_by_engine ? " (its connection ended: on_closed was called)" : "") +
                ": a socket value must not be used after it was closed (on Windows it may "
                "already name another socket)");
  return false;
}

void EmbedderOracle::State::judge_blocking(ThreadState& t, const std::string& what) {
  if (!in_callback(t)) {
    return;
  }
  fail(kU3, what + " " + where(t) +
                ": a handler, on_closed or task must never wait (it holds a worker, and the "
                "connection's other events, meanwhile)");
}

void EmbedderOracle::State::on_new_socket(ThreadState& t, bool accepted) {
  const bool embedder = embedder_runs(t);
  Socket listener = kInvalidSocket;
  bool listener_nonblocking = false;
  if (accepted && field_socket("s", &listener)) {
    if (embedder && judge_value(t, listener, "accept")) {
      const Value& value = values[listener];
      listener_nonblocking = value.nonblocking;
      if (!value.nonblocking) {
        judge_blocking(t, "accept on blocking socket " + std::to_string(listener));
      }
    }
    if (auto it = values.find(listener); it != values.end()) {
      listener_nonblocking = it->second.nonblocking;
    }
  }
  if (embedder) {
    count_embedder_call(t);
  } else {
    ++counts.engine_calls;
  }
  std::int64_t result = -1;
  if (!result_number(&result) || result < 0) {
    return;
  }
  Value& value = values[static_cast<Socket>(result)];
  const std::uint32_t lives = value.lives;
  value = Value();
  value.lives = lives + 1;
  value.opened_seq = line->seq;
  value.opened_thread = line->thread;
  value.by_embedder = embedder;
  value.nonblocking = accepted && listener_nonblocking;  // an accepted socket inherits the mode
  counts.sockets_opened += embedder ? 1 : 0;
}

void EmbedderOracle::State::on_socket_call(ThreadState& t, std::string_view call) {
  Socket s = kInvalidSocket;
  if (!field_socket("s", &s)) {
    return;
  }
  std::int64_t result = 0;
  const bool has_result = result_number(&result);
  if (!embedder_runs(t)) {
    ++counts.engine_calls;
    return;
  }
  count_embedder_call(t);
  if (!judge_value(t, s, call)) {
    return;
  }
  Value& value = values[s];
  if (call == "listen" && has_result && result == 0) {
    value.listener = true;
  }
  if (call == "set_nonblocking" && has_result && result == 0) {
    std::uint64_t on = 0;
    value.nonblocking = line->find_u64("on", &on) && on != 0;
    return;
  }
  if (waits_when_blocking(call) && !value.nonblocking) {
    judge_blocking(t, std::string(call) + " on blocking socket " + std::to_string(s));
  }
  if (!has_result) {
    return;
  }
  if (call == "recv" || call == "recvfrom") {
    note_recv(t, s, result, 0);
  } else if (call == "send" || call == "sendto") {
    std::int64_t length = 0;
    std::uint64_t length_field = 0;
    if (line->find_u64("len", &length_field)) {
      length = static_cast<std::int64_t>(length_field);
    }
    note_send(t, s, length, result, 0);
  }
}

void EmbedderOracle::State::on_close_begin(ThreadState& t) {
  Socket s = kInvalidSocket;
  if (!field_socket("s", &s)) {
    return;
  }
  auto it = values.find(s);
  if (!embedder_runs(t)) {
    ++counts.engine_calls;
    if (it != values.end()) {
      it->second.engine_owned = false;  // the engine ends its ownership with its close
      it->second.life = Value::Life::kClosing;
      it->second.closed_by_engine = true;
    }
    return;
  }
  count_embedder_call(t);
  if (!judge_value(t, s, "closesocket")) {
    return;
  }
  Value& value = it->second;
  judge(kU2);
  if (value.engine_owned || value.adding) {
    fail(kU2, "closesocket of " + std::to_string(s) + " " + where(t) +
                  ", but the engine owns it (" +
                  (value.adding ? std::string("add() of it is running")
                                : "added as " + conn_text(value.owner_conn) + " at line " +
                                      std::to_string(value.added_seq)) +
                  "): return kInterestClose or call close(id); the engine closes it after its "
                  "REMOVE (spec E1, E2)");
  }
  value.life = Value::Life::kClosing;
  value.closed_by_engine = false;
}

void EmbedderOracle::State::on_close_end(ThreadState& t) {
  Socket s = kInvalidSocket;
  if (!field_socket("s", &s)) {
    return;
  }
  auto it = values.find(s);
  if (it == values.end() || it->second.life != Value::Life::kClosing) {
    // No begin line (a close that failed before its effect): judged here as a call.
    if (embedder_runs(t)) {
      count_embedder_call(t);
      (void)judge_value(t, s, "closesocket");
    }
    return;
  }
  std::int64_t result = -1;
  if (result_number(&result) && result == 0) {
    it->second.life = Value::Life::kDead;
    it->second.closed_seq = line->seq;
    it->second.engine_owned = false;
  } else {
    it->second.life = Value::Life::kOpen;
  }
}

// A `fault <site> s=..` line stands for the socket call it failed (send, recv, accept).
void EmbedderOracle::State::on_fault(ThreadState& t) {
  if (line->words.empty()) {
    return;
  }
  const std::string_view site = line->words[0].text;
  Socket s = kInvalidSocket;
  const bool send = starts_with(site, "send.");
  const bool recv = starts_with(site, "recv.");
  if ((!send && !recv && !starts_with(site, "accept.")) || !field_socket("s", &s)) {
    return;
  }
  if (!embedder_runs(t)) {
    ++counts.engine_calls;
    return;
  }
  count_embedder_call(t);
  if (!judge_value(t, s, std::string(site.substr(0, site.find('.'))))) {
    return;
  }
  const bool would_block = site == "send.wouldblock" || site == "recv.wouldblock";
  const std::uint32_t error = would_block ? kWsaEwouldblock : 1;  // 1: some other error
  if (!values[s].nonblocking) {
    judge_blocking(t, std::string(site.substr(0, site.find('.'))) + " on blocking socket " +
                          std::to_string(s));
  }
  if (recv) {
    note_recv(t, s, -1, error);
  } else if (send) {
    note_send(t, s, 1, -1, error);
  }
}

void EmbedderOracle::State::on_last_error(ThreadState& t) {
  if (!t.awaiting_error) {
    return;
  }
  t.awaiting_error = false;
  std::uint32_t error = 1;
  if (line->has_result && trace_value_is(*line, line->result, "WSAEWOULDBLOCK")) {
    error = kWsaEwouldblock;
  } else if (line->has_result && line->result.kind == TraceValueKind::kError &&
             line->result.number == kWsaEwouldblock) {
    error = kWsaEwouldblock;
  }
  for (auto it = t.frames.rbegin(); it != t.frames.rend(); ++it) {
    if (it->kind != FrameKind::kHandler) {
      continue;
    }
    if (t.awaiting_recv) {
      it->saw_end = it->saw_end || error != kWsaEwouldblock;
    } else if (it->send == SendState::kUnknown) {
      it->send = error == kWsaEwouldblock ? SendState::kWouldblock : SendState::kError;
    }
    return;
  }
}

void EmbedderOracle::State::on_wait(ThreadState& t, std::string_view what) {
  if (!embedder_runs(t)) {
    ++counts.engine_calls;
    return;
  }
  count_embedder_call(t);
  judge_blocking(t, std::string(what));
}

void EmbedderOracle::State::on_port_wait(ThreadState& t) {
  if (!embedder_runs(t)) {
    ++counts.engine_calls;
    return;
  }
  count_embedder_call(t);
  std::uint64_t timeout = 0;
  if (line->find_u64("timeout", &timeout) && timeout > 0) {
    judge_blocking(
        t, std::string(line->name) + " with a timeout of " + std::to_string(timeout) + " ms");
  }
}

void EmbedderOracle::State::on_thread_start() {
  if (!line->has_result || line->result.kind != TraceValueKind::kText) {
    return;
  }
  threads_started.emplace_back(line->result.text);
}

void EmbedderOracle::State::on_join() {
  const std::string_view name = line->name;
  threads_joined.emplace_back(name.substr(0, name.size() - 5));  // without ".join"
}

EmbedderOracle::State::Frame* EmbedderOracle::State::handler_frame(ThreadState& t, Socket s) {
  for (auto it = t.frames.rbegin(); it != t.frames.rend(); ++it) {
    if (it->kind == FrameKind::kEngine) {
      return nullptr;
    }
    if (it->kind == FrameKind::kHandler) {
      return it->socket == s ? &*it : nullptr;
    }
  }
  return nullptr;
}

void EmbedderOracle::State::note_recv(ThreadState& t, Socket s, std::int64_t result,
                                      std::uint32_t error) {
  Frame* frame = handler_frame(t, s);
  if (frame == nullptr) {
    return;
  }
  frame->recv_any = true;
  frame->drained = result <= 0;
  if (result == 0) {
    frame->saw_end = true;
  } else if (result < 0 && error == 0) {
    t.awaiting_error = true;  // the thread's next last_error line says which
    t.awaiting_recv = true;
  } else if (result < 0) {
    frame->saw_end = frame->saw_end || error != kWsaEwouldblock;
  }
}

void EmbedderOracle::State::note_send(ThreadState& t, Socket s, std::int64_t length,
                                      std::int64_t result, std::uint32_t error) {
  Frame* frame = handler_frame(t, s);
  if (frame == nullptr) {
    return;
  }
  if (result > 0) {
    frame->progress = true;
  }
  if (result >= length) {
    frame->send = SendState::kFull;
  } else if (result >= 0) {
    frame->send = SendState::kShort;
  } else if (error == kWsaEwouldblock) {
    frame->send = SendState::kWouldblock;
  } else if (error != 0) {
    frame->send = SendState::kError;
  } else {
    frame->send = SendState::kUnknown;
    t.awaiting_error = true;
    t.awaiting_recv = false;
  }
}

}  // namespace readyport
