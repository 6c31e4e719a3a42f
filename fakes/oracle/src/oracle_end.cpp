// LifetimeOracle: the judgement at the end of the trace (rule O11, and what was left open for
// O5 and O12). See oracle_state.hpp.
#include "oracle_state.hpp"

#include <string>

namespace readyport {

// ==== The end ====================================================================================

// finish() of a trace cut short.
void LifetimeOracle::State::finish_cut() {
  // The trace stops where the run was cut (an abort): what only the end could decide is not
  // judged, never taken as a violation or a pass.
  unjudged(kO11);
  for (const PendingClose& pending : pending_closes) {
    unjudged(pending.rule);
  }
  pending_closes.clear();
  for (const std::uint64_t number : debts) {
    const Conn* conn = find_conn(number);
    if (conn != nullptr && conn->paid < conn->entries) {
      unjudged(kO5);
    }
  }
  if (!observer_seen && counts.handler_entries > 0) {
    counts.judgement.unjudged[12] += counts.handler_entries;
  }
}

// O11 for each connection: on_closed called, its handler returned, its socket closed.
void LifetimeOracle::State::finish_connections() {
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
}

void LifetimeOracle::State::finish(bool run_ended) {
  if (finished) {
    return;
  }
  finished = true;
  at_end = true;
  if (!run_ended) {
    return finish_cut();
  }
  judge(kO11);
  // An O1 still waiting on a dequeue that never ended (the trace stops inside it): either order.
  for (const PendingClose& pending : pending_closes) {
    ambiguous(pending.rule);
  }
  pending_closes.clear();
  finish_connections();
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
    if (count.posted == count.ran) {
      continue;
    }
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
    if (counts.handler_entries > 0) {
      counts.judgement.unjudged[12] += counts.handler_entries;
    }
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

}  // namespace readyport
