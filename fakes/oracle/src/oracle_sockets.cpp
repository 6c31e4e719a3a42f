// LifetimeOracle: the socket lines (socket, accept, closesocket.begin, closesocket, close_port,
// fault): rules O1 (close before REMOVE) and O10 (closed under a running handler). See
// oracle_state.hpp.
#include "oracle_state.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

namespace readyport {

// ==== Socket lines ===============================================================================

void LifetimeOracle::State::on_new_socket() {
  if (!need_result() || result_is("INVALID_SOCKET")) {
    return;
  }
  std::uint64_t value = 0;
  if (!trace_value_u64(line->result, &value)) {
    return unparsable("the result is not a socket");
  }
  const Socket socket = static_cast<Socket>(value);
  const Socket closed_before = last_closed;
  for (auto& [id, other] : threads) {
    if (other.close_open && !other.close_applied && other.close_socket == socket) {
      other.close_applied = true;
      apply_close(other, socket, true);
    }
  }
  // The first socket after a close has the closed one's value (spec E5's reuse, at once).
  if (socket == last_closed || socket == closed_before) {
    ++coverage.boundary_socket_reused_at_once;
  }
  last_closed = kInvalidSocket;
  auto old = lives.find(socket);
  if (old != lives.end()) {
    // The trace never showed this value's close: its registration can only be unremoved.
    Reg* reg = find_reg(old->second.reg);
    if (reg != nullptr) {
      close_unremoved(*reg);
    }
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
  if (!need_socket("s", &socket)) {
    return;
  }
  if (t.close_open || t.dequeue_open) {
    fail(kInconsistent, "closesocket.begin on T" + num(t.id) + " while its earlier " +
                            (t.close_open ? "closesocket" : "dequeue") + " has no line");
  }
  t.close_open = true;
  t.close_applied = false;
  note_close_start(t, socket);
}

// What O10 compares at the close's effect: the socket's connection and its handler run now.
void LifetimeOracle::State::note_close_start(ThreadState& t, Socket socket) {
  t.close_socket = socket;
  const Conn* conn = open_conn(socket);
  t.close_conn = conn == nullptr ? 0 : conn->number;
  t.close_handler_run = conn != nullptr && conn->in_handler ? conn->handler_runs : 0;
}

void LifetimeOracle::State::on_closesocket(ThreadState& t) {
  Socket socket = kInvalidSocket;
  if (!need_socket("s", &socket) || !need_result()) {
    return;
  }
  const bool had_begin = t.close_open;
  if (had_begin && t.close_socket != socket) {
    t.close_open = false;
    return fail(kInconsistent, "the closesocket line on T" + num(t.id) + " names socket " +
                                   num(socket) + ", its closesocket.begin socket " +
                                   num(t.close_socket));
  }
  if (!had_begin) {
    note_close_start(t, socket);  // a point: the interval is this line
  }
  t.close_open = false;
  if (t.close_applied) {
    t.close_applied = false;
    if (!result_is("0")) {
      fail(kInconsistent, "closesocket(" + num(socket) + ") on T" + num(t.id) +
                              " failed, but its socket value was handed out again before it");
    }
    return;
  }
  apply_close(t, socket, result_is("0"));
}

// The effect of t's closesocket(socket), here: at its line, or earlier, at the line that showed
// it had taken effect (the value handed out again).
void LifetimeOracle::State::apply_close(ThreadState& t, Socket socket, bool closed) {
  const bool behind = t.behind_pending && t.behind_socket == socket;
  if (behind) {
    t.behind_pending = false;
  }
  Conn* conn = open_conn(socket);
  Life* life = find_life(socket);
  Reg* reg = life == nullptr ? nullptr : find_reg(life->reg);
  if (closed) {
    last_closed = socket;
  }
  if (!behind) {
    close_judged(t, socket, closed, conn, reg);
  }
  if (conn != nullptr) {
    (behind ? conn->behind_closed : conn->engine_closed) = true;
  }
  if (!closed || life == nullptr) {
    return;
  }
  ++counts.sockets_closed;
  if (reg != nullptr) {
    close_unremoved(*reg);
  }
  lives.erase(socket);
}

// O1 and O10 for the engine's closesocket(socket), whose effect lies between t's
// closesocket.begin and now (`closed`: it returned 0).
void LifetimeOracle::State::close_judged(ThreadState& t, Socket socket, bool closed, Conn* conn,
                                         Reg* reg) {
  // Failed while another thread's closesocket of it is under way: that one took effect first,
  // somewhere before its line, and may have dropped the REMOVE packet (E2) before any dequeue.
  const bool beside = !closed && closing(socket);
  if (beside && conn != nullptr) {
    conn->close_beside = true;
  }
  // O1 (E1/E2): the registration must be gone (its REMOVE packet dequeued) before the close,
  // unless its REMOVE was refused (E4: the quarantine path, judged by O9's drain).
  judge(kO1);
  const bool refused = reg != nullptr && (reg->remove_refused || (conn && conn->remove_refused));
  if (reg != nullptr && reg->state != RegState::kTentative && !refused) {
    if (reg->state == RegState::kLive && !reg->remove_tentative) {
      fail(kO1, "closesocket(" + num(socket) + ") while its registration " + reg_text(*reg) +
                    " is live: no REMOVE was applied and none was refused");
    } else if (beside) {
      ambiguous(kO1);
    } else {
      // The REMOVE packet may be in a dequeue open now; and a REMOVE in a call still open
      // (settle) may yet be refused, which would allow the close (then ambiguous).
      pend_or_fail(kO1,
                   "closesocket(" + num(socket) +
                       ") before the REMOVE packet of its registration " + reg_text(*reg) +
                       " was dequeued",
                   t, *reg, /*settle=*/reg->remove_tentative);
    }
  }
  // O10: the engine closes a connection's socket only when no handler of it runs: a violation
  // when one handler run spans the whole closesocket, ambiguous when one overlaps only part.
  if (conn == nullptr) {
    return;
  }
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
  if (!need_u64("port", &port64) || !need_result() || !result_is("1")) {
    return;
  }
  const std::uintptr_t port = static_cast<std::uintptr_t>(port64);
  ports_open.erase(port);
  // F6: nothing more comes out of this port: its posts and unremoved keys are done.
  for (auto it = posts.begin(); it != posts.end();) {
    it = std::get<0>(it->first) == port ? posts.erase(it) : std::next(it);
  }
  std::vector<std::uint64_t> done;
  for (const std::uint64_t number : closed_unremoved) {
    const Reg* reg = find_reg(number);
    if (reg != nullptr && reg->port == port) {
      done.push_back(number);
    }
  }
  for (const std::uint64_t number : done) {
    finish_drained(*find_reg(number));
  }
  orphans.erase(std::remove_if(orphans.begin(), orphans.end(),
                               [port](const Orphan& orphan) { return orphan.port == port; }),
                orphans.end());
}

void LifetimeOracle::State::on_fault(ThreadState& t) {
  if (line->words.empty()) {
    return unparsable("fault without a site");
  }
  const std::string_view site = line->words.front().text;
  ++fault_sites[std::string(site)];
  ++counts.faults;
  if (site == "psn.remove_fails") {
    // That REMOVE did not reach the OS; the engine sees it refused (E4).
    Socket socket = kInvalidSocket;
    if (!need_socket("s", &socket)) {
      return;
    }
    refuse_remove(socket, active_reg(socket));
  } else if (site == "psn.call_fails") {
    t.call_failed = true;
  }
  // A fault line may list the registrations of the call it failed: their REMOVEs did not apply.
  for (const TraceReg& reg : line->regs) {
    if (reg.operation == kSockNotifyOpRemove) {
      refuse_remove(reg.socket, active_reg(reg.socket));
    }
  }
}

}  // namespace readyport
