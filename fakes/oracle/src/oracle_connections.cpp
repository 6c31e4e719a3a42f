// LifetimeOracle: the workload, handler and observer lines (wl.*, hnd.*, obs.*): rules O2 to O5,
// O9 and O12. See oracle_state.hpp.
#include "oracle_state.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

namespace readyport {
// ==== Workload and handler lines =================================================================

void LifetimeOracle::State::on_workload(ThreadState& t) {
  const std::string_view name = line->name;
  if (name == "wl.add") {
    on_wl_add(t);
  } else if (name == "wl.adding") {
    on_wl_adding(t);
  } else if (name == "wl.close") {
    on_wl_close(t);
  } else if (name == "wl.notify") {
    on_wl_notify(t);
  } else if (name == "wl.post" || name == "wl.task_run") {
    on_wl_task(t, name == "wl.post");
  } else if (name == "wl.close_behind") {
    on_wl_close_behind(t);
  } else if (name == "wl.begin") {
    on_api_begin(t);
  } else if (name == "wl.end") {
    on_api_end(t);
  }
}

void LifetimeOracle::State::on_wl_adding(ThreadState& t) {
  Socket socket = kInvalidSocket;
  if (!need_socket("s", &socket)) {
    return;
  }
  Conn conn;
  conn.number = ++conns_made;
  conn.socket = socket;
  conns.emplace(conn.number, conn);
  conns_by_socket[socket].push_back(conn.number);
  // add() returns on this thread: its wl.add line names this connection, even when the socket
  // value was closed and reused by others before it returned (a starved thread).
  t.adding = conn.number;
  begin_api_call(t, ApiCall::kAdd, conn.number);
}

void LifetimeOracle::State::on_wl_close(ThreadState& t) {
  if (!t.handlers.empty()) {
    ++coverage.close_in_handler;
  }
  IdKey id;
  if (!need_id("id", &id) || !need_result()) {
    return;
  }
  if (ApiInterval interval; end_api_call(t, ApiCall::kClose, &interval)) {
    judge_close_result(interval);
  }
  Conn* conn = conn_by_id(id);
  if (result_is("ok") && conn != nullptr && !conn->close_returned) {
    conn->close_returned = true;
    conn->close_seq = line->seq;
  }
}

void LifetimeOracle::State::on_wl_notify(ThreadState& t) {
  IdKey id;
  if (!need_id("id", &id) || !need_result()) {
    return;
  }
  if (ApiInterval interval; end_api_call(t, ApiCall::kNotify, &interval)) {
    judge_notify_result(interval);
  }
  if (!result_is("ok")) {
    return;
  }
  ++counts.notifies;
  Conn* conn = conn_by_id(id);
  if (conn != nullptr) {
    pay(conn->number);
  }
}

void LifetimeOracle::State::on_wl_task(ThreadState& t, bool posted) {
  std::uint64_t task = 0;
  if (!need_u64("task", &task)) {
    return;
  }
  if (!posted) {
    judge_no_call_after_stop([&] { return "task " + num(task) + " ran"; });
    ++tasks[task].ran;
    ++counts.tasks_run;
    return;
  }
  if (!need_result()) {
    return;
  }
  if (ApiInterval interval; end_api_call(t, ApiCall::kPost, &interval)) {
    judge_after_stop(interval, "post");
  }
  if (result_is("resource_exhausted")) {
    ++coverage.boundary_tasks_full;
  }
  if (!result_is("ok")) {
    return;
  }
  ++tasks[task].posted;
}

void LifetimeOracle::State::on_wl_close_behind(ThreadState& t) {
  Socket socket = kInvalidSocket;
  if (!need_socket("s", &socket)) {
    return;
  }
  t.behind_pending = true;
  t.behind_socket = socket;
  Conn* conn = open_conn(socket);
  if (conn != nullptr) {
    conn->behind_announced = true;
  }
}

void LifetimeOracle::State::on_wl_add(ThreadState& t) {
  Socket socket = kInvalidSocket;
  if (!need_socket("s", &socket) || !need_result()) {
    return;
  }
  if (result_is("resource_exhausted")) {
    ++coverage.boundary_table_full;
  }
  Conn* conn = nullptr;
  if (t.adding != 0) {
    auto it = conns.find(t.adding);
    if (it != conns.end() && it->second.socket == socket && it->second.add == AddState::kAdding) {
      conn = &it->second;
    }
    t.adding = 0;
  }
  if (conn == nullptr) {
    conn = adding_conn(socket);
  }
  if (conn == nullptr) {
    return fail(kInconsistent, "wl.add s=" + num(socket) + " without wl.adding");
  }
  if (ApiInterval interval; end_api_call(t, ApiCall::kAdd, &interval)) {
    judge_after_stop(interval, "add");
  }
  judge(kO4);
  if (result_is("ok")) {
    IdKey id;
    if (!need_id("id", &id)) {
      return;
    }
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
                  result_text() + ")");
  } else if (conn->entries > 0) {
    fail(kO4, "a handler ran for socket " + num(socket) + ", whose add() failed (" + result_text() +
                  ")");
  }
  conn->add = AddState::kFailed;
  drop_conn(*conn);
}

// O2: a handler entry after its connection ended.
void LifetimeOracle::State::judge_entry_after_end(const ThreadState& t, const Conn& conn) {
  // Nothing runs once the connection ended (the engine cannot know of a close behind it).
  if (!conn.behind_announced) {
    if (conn.closed) {
      fail(kO2, "handler of " + conn_text(conn) + " entered after its on_closed (line " +
                    num(conn.closed_seq) + ")");
    } else if (conn.engine_closed) {
      fail(kO2, "handler of " + conn_text(conn) + " entered after the engine closed its socket");
    } else if (conn.remove_dequeued) {
      fail(kO2, "handler of " + conn_text(conn) + " entered after its REMOVE packet was dequeued");
    } else if (conn.close_returned && t.dequeue_seq > conn.close_seq) {
      // close() returned before this thread dequeued what it runs the handler for: only a call
      // already taken up may still enter (engine.hpp, close()).
      fail(kO2, "handler of " + conn_text(conn) + " entered on T" + num(t.id) +
                    " for a packet dequeued at line " + num(t.dequeue_seq) +
                    ", after close() returned (line " + num(conn.close_seq) + ")");
    } else if (closing(conn.socket)) {
      ambiguous(kO2);  // a closesocket of its socket is under way: before or after, unknown
    }
  }
}

// O3 and O5 for a handler entry: no second thread inside, and a packet or notify paid for it.
void LifetimeOracle::State::judge_entry_overlap_and_cause(const ThreadState& t, Conn& conn) {
  // O3: never two threads in one connection's handler. A handler ran at least from its hnd.enter
  // to its hnd.leave and at most from its thread's line before to its line after: overlap of the
  // former is forced; of the latter only, ambiguous.
  if (conn.in_handler) {
    fail(kO3, "handler of " + conn_text(conn) + " entered on T" + num(t.id) +
                  " while it runs on T" + num(conn.handler_thread));
  } else if (conn.leave_thread != 0 && conn.leave_thread != t.id &&
             (conn.after_leave_seq == 0 || t.bound_seq < conn.after_leave_seq)) {
    ambiguous(kO3);
  }
  // O5: each entry is paid for by a packet of its own key or by a notify.
  ++conn.entries;
  if (conn.entries > conn.paid) {
    if (open_posts > 0) {
      // A notify's wl.notify is written after its post: judged when that thread's call ends.
      if (debts.insert(conn.number).second) {
        conn.debt_seq = line->seq;
      }
    } else {
      fail(kO5, "handler of " + conn_text(conn) + " entered " + num(conn.entries) +
                    " time(s), but only " + num(conn.paid) +
                    " packet(s) of its key or notifies could cause that");
    }
  }
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
  note_handler_race(t, conn->number);
  judge_no_call_after_stop([&] { return "the handler of " + conn_text(*conn) + " entered"; });
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
  if (!conn->id_known) {
    claim_id(*conn, id);
  }
  judge_entry_after_end(t, *conn);
  judge_entry_overlap_and_cause(t, *conn);
  conn->in_handler = true;
  conn->handler_thread = t.id;
  ++conn->handler_runs;
  t.handlers.push_back(conn->number);
}

void LifetimeOracle::State::on_hnd_leave(ThreadState& t) {
  Socket socket = kInvalidSocket;
  std::uint64_t result = 0;
  if (!need_socket("s", &socket) || !need_u64("ret", &result)) {
    return;
  }
  if (result == kReturnClose) {
    ++coverage.close_in_handler;
  }
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
  if (!observer_seen) {
    return;
  }
  if (t.left) {
    fail(kO12, "hnd.leave at line " + num(t.left_seq) + " on T" + num(t.id) +
                   " was not followed by obs.handler_leave");
  }
  t.left = true;
  t.left_id_known = conn != nullptr && conn->id_known;
  t.left_id = t.left_id_known ? conn->id : IdKey();
  t.left_ret = result;
  t.left_seq = line->seq;
}

// O9: on_closed comes after the socket was closed and the REMOVE packet was dequeued (or, the
// REMOVE refused or the socket closed behind the engine's back, after its key was drained).
void LifetimeOracle::State::judge_on_closed(const Conn& conn) {
  judge(kO9);
  if (conn.in_handler) {
    fail(kO9, "on_closed for " + conn_text(conn) + " while its handler runs on T" +
                  num(conn.handler_thread));
  }
  if (!conn.engine_closed && !conn.behind_closed) {
    if (closing(conn.socket)) {
      ambiguous(kO9);  // its closesocket is under way
    } else {
      fail(kO9, "on_closed for " + conn_text(conn) + " before its socket was closed");
    }
  } else if (!conn.remove_dequeued) {
    if (!conn.remove_refused && !conn.behind_closed) {
      std::string text = "on_closed for " + conn_text(conn) +
                         " before its REMOVE packet was dequeued (and no REMOVE of it was refused)";
      const Reg* reg = find_reg(conn.reg);
      if (conn.close_beside) {
        ambiguous(kO9);  // the close under way beside the engine's may have dropped the REMOVE
      } else if (reg == nullptr) {
        fail(kO9, text);
      } else {
        pend_or_fail(kO9, std::move(text), threads[line->thread], *reg, /*settle=*/false);
      }
    } else if (!drained_for(conn)) {
      // Drained in another order of alike posts: not forced, so not a violation. Nor when a
      // closesocket of the socket (behind the engine's back) is still under way: its effect, which
      // the drain must follow, lies somewhere before its line, and may precede the drain's post.
      if (drained_in_another_order(conn) || closing(conn.socket)) {
        ambiguous(kO9);
      } else {
        fail(kO9, "on_closed for " + conn_text(conn) +
                      " before its key was drained (REMOVE refused: no packet posted after the "
                      "closesocket was dequeued yet, or a thread that dequeued its key has not "
                      "moved on)");
      }
    }
  }
}

void LifetimeOracle::State::on_hnd_closed() {
  Socket socket = kInvalidSocket;
  IdKey id;
  if (!need_socket("s", &socket) || !need_id("id", &id)) {
    return;
  }
  judge_no_call_after_stop(
      [&] { return "on_closed of socket " + num(socket) + " id " + id_text(id); });
  Conn* conn = nullptr;
  Conn* twice = nullptr;
  Conn* oldest_open = nullptr;
  auto list = conns_by_socket.find(socket);
  if (list != conns_by_socket.end()) {
    for (const std::uint64_t number : list->second) {  // oldest first
      Conn& candidate = conns.at(number);
      if (candidate.add == AddState::kFailed) {
        continue;
      }
      if (candidate.closed) {
        if (candidate.id_known && candidate.id == id) {
          twice = &candidate;
        }
        continue;
      }
      if (oldest_open == nullptr) {
        oldest_open = &candidate;
      }
      if (conn == nullptr && candidate.id_known && candidate.id == id) {
        conn = &candidate;
      }
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
  judge_on_closed(*conn);
  conn->closed = true;
  conn->closed_seq = line->seq;
  ++counts.connections_closed;
  if (conn->refused_live) {
    ++coverage.remove_refused_quarantined;
  }
  bury(*conn);
}

// O12: obs.socket_closed(s) comes just before the engine's closesocket(s) on the same thread.
void LifetimeOracle::State::check_expected_close(ThreadState& t) {
  t.expect_close = false;
  std::uint64_t value = 0;
  const bool closes = (line->name == "closesocket" || line->name == "closesocket.begin") &&
                      line->find_u64("s", &value) && static_cast<Socket>(value) == t.expect_socket;
  if (closes) {
    return;
  }
  fail(kO12, "obs.socket_closed s=" + num(t.expect_socket) + " on T" + num(t.id) + " at line " +
                 num(t.expect_seq) + " was not followed by T" + num(t.id) + "'s closesocket(" +
                 num(t.expect_socket) + "): its next call is " + std::string(line->name));
}

// O12: obs.handler_leave repeats, just after it, the hnd.leave of the handler that returned.
void LifetimeOracle::State::on_obs_handler_leave(ThreadState& t, const IdKey& id) {
  std::uint64_t result = 0;
  if (!need_u64("ret", &result)) {
    return;
  }
  if (!t.left) {
    fail(kO12, "obs.handler_leave id=" + id_text(id) + " on T" + num(t.id) +
                   " without hnd.leave just before it");
  } else if ((t.left_id_known && t.left_id != id) || t.left_ret != result) {
    fail(kO12, "obs.handler_leave id=" + id_text(id) + " ret=" + trace_hex_text(result) + " on T" +
                   num(t.id) + " but the handler that left was " +
                   (t.left_id_known ? id_text(t.left_id) : std::string("unknown")) + " returning " +
                   trace_hex_text(t.left_ret));
  }
  t.left = false;
}

// O12: the engine frees a slot only after its socket was closed and its REMOVE dequeued (or
// its key drained, the REMOVE refused or the socket closed behind the engine's back).
void LifetimeOracle::State::on_obs_freed(Conn* conn) {
  if (conn == nullptr || conn->add == AddState::kFailed) {
    return;
  }
  judge(kO12);
  if (conn->in_handler) {
    fail(kO12, "obs.freed for " + conn_text(*conn) + " while its handler runs on T" +
                   num(conn->handler_thread));
  } else if (!conn->engine_closed && !conn->behind_closed) {
    fail(kO12, "obs.freed for " + conn_text(*conn) + " before its socket was closed");
  } else if (!conn->remove_dequeued &&
             !((conn->remove_refused || conn->behind_closed) && drained_for(*conn))) {
    // Drained in another order of alike posts, or a closesocket of it still under way (as for
    // O9): not forced, so not a misreport.
    if (((conn->remove_refused || conn->behind_closed) &&
         (drained_in_another_order(*conn) || closing(conn->socket))) ||
        (conn->close_beside && !conn->behind_closed)) {
      ambiguous(kO12);
    } else {
      fail(kO12, "obs.freed for " + conn_text(*conn) +
                     " before its REMOVE packet was dequeued or its key drained");
    }
  }
}

void LifetimeOracle::State::on_observer(ThreadState& t) {
  observer_seen = true;
  ++counts.observer_lines;
  const std::string_view name = line->name;
  if (name == "obs.stale" || name == "obs.dropped" || name == "obs.acquired") {
    return;
  }
  IdKey id;
  if (!need_id("id", &id)) {
    return;
  }
  Conn* conn = conn_by_id(id);
  if (name == "obs.handler_enter") {
    if (t.obs_enter) {
      fail(kO12, "two obs.handler_enter on T" + num(t.id) + " without hnd.enter between them");
    }
    t.obs_enter = true;
    t.obs_enter_id = id;
  } else if (name == "obs.handler_leave") {
    on_obs_handler_leave(t, id);
  } else if (name == "obs.remove_seen") {
    judge(kO12);
    if (conn != nullptr &&
        std::find(t.removed.begin(), t.removed.end(), conn->number) == t.removed.end()) {
      fail(kO12, "obs.remove_seen for " + conn_text(*conn) + " on T" + num(t.id) + ", but T" +
                     num(t.id) + "'s latest port call dequeued no REMOVE packet of it");
    }
  } else if (name == "obs.socket_closed") {
    Socket socket = kInvalidSocket;
    if (!need_socket("s", &socket)) {
      return;
    }
    if (conn != nullptr && conn->socket != socket) {
      fail(kO12, "obs.socket_closed for " + conn_text(*conn) + " names socket " + num(socket));
    }
    t.expect_close = true;
    t.expect_socket = socket;
    t.expect_seq = line->seq;
  } else if (name == "obs.quarantined") {
    if (conn != nullptr && !conn->remove_refused && !conn->behind_closed) {
      fail(kO12, "obs.quarantined for " + conn_text(*conn) + ", but no REMOVE of it was refused");
    }
  } else if (name == "obs.freed") {
    on_obs_freed(conn);
  }
}

}  // namespace readyport
