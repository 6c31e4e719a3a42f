// LifetimeOracle: the engine's public calls as intervals (wl.begin, wl.adding to their end lines):
// the race coverage (which calls' intervals overlapped) and rule O13 (each call's result against
// what overlapped it, engine.hpp's contract). See oracle_state.hpp and docs/oracle.md.
#include <string>
#include <string_view>

#include "oracle_state.hpp"

namespace readyport {
namespace lifetime_oracle_internal {

std::size_t race_pair_index(ApiCall a, ApiCall b) {
  auto low = static_cast<std::size_t>(a);
  auto high = static_cast<std::size_t>(b);
  if (low > high) {
    std::swap(low, high);
  }
  // Row-major over the upper triangle: (0,0) (0,1) .. (0,6) (1,1) ..
  const std::size_t index = low * kApiCallCount - low * (low - 1) / 2 + (high - low);
  READYPORT_ASSERT(index < kRacePairs);
  return index;
}

std::string race_pair_name(std::size_t index) {
  for (std::size_t low = 0; low < kApiCallCount; ++low) {
    for (std::size_t high = low; high < kApiCallCount; ++high) {
      if (race_pair_index(static_cast<ApiCall>(low), static_cast<ApiCall>(high)) == index) {
        return "race." + std::string(api_call_name(static_cast<ApiCall>(low))) + "/" +
               std::string(api_call_name(static_cast<ApiCall>(high)));
      }
    }
  }
  READYPORT_UNREACHABLE();
}

}  // namespace lifetime_oracle_internal

namespace {

bool is_failed_precondition(const TraceEvent& event) {
  return trace_value_is(event, event.result, "failed_precondition");
}

}  // namespace

// The call a wl.begin or wl.end names (its first word).
bool LifetimeOracle::State::need_api_call(ApiCall* call_out) {
  if (line->words.empty()) {
    unparsable(std::string(line->name) + " without the call's name");
    return false;
  }
  for (std::size_t i = 0; i < kApiCallCount; ++i) {
    const auto call = static_cast<ApiCall>(i);
    if (trace_value_is(*line, line->words[0], api_call_name(call))) {
      *call_out = call;
      return true;
    }
  }
  unparsable(std::string(line->name) + " names no public call of the engine");
  return false;
}

// A call begins on `t`: it overlaps every call open on another thread (counted once, here, at
// the later begin), and, for close(), every handler of its connection running on another thread.
void LifetimeOracle::State::begin_api_call(ThreadState& t, ApiCall call, std::uint64_t conn) {
  if (t.calls.size() >= kApiCallsNestedMax) {
    // Appended, not "T" + ...: g++ 12 at -O3 warns -Wrestrict about its own inlined memcpy there
    // (a false positive, GCC bug 105651).
    std::string text = "thread ";
    text += num(t.id) + " began more than " + num(kApiCallsNestedMax) + " nested engine calls";
    return fail(kInconsistent, text);
  }
  for (const auto& [id, other] : threads) {
    if (id == t.id) {
      continue;
    }
    for (const ApiInterval& open : other.calls) {
      ++coverage.race_pairs[race_pair_index(call, open.call)];
      if (conn == 0 || open.conn != conn) {
        continue;
      }
      if (call == ApiCall::kClose && open.call == ApiCall::kClose) {
        ++coverage.race_same_close_close;
      } else if ((call == ApiCall::kClose && open.call == ApiCall::kNotify) ||
                 (call == ApiCall::kNotify && open.call == ApiCall::kClose)) {
        ++coverage.race_same_close_notify;
      }
    }
  }
  const Conn* subject = find_conn(conn);
  if (call == ApiCall::kClose && subject != nullptr && subject->in_handler &&
      subject->handler_thread != t.id) {
    ++coverage.race_same_close_handler;
  }
  ApiInterval interval;
  interval.call = call;
  interval.conn = conn;
  interval.begin_seq = line->seq;
  // From the moment the engine calls on_closed, close() and notify() answer not_found (engine.hpp):
  // hnd.closed is written inside on_closed, so a call begun after it must not get ok.
  interval.closed_before = subject != nullptr && subject->closed;
  interval.open_before = subject != nullptr && subject->add == AddState::kAdded && !subject->closed;
  interval.after_stop = stop_returned;
  t.calls.push_back(interval);
}

// A handler of `conn` enters on `t` while a close() of it is open on another thread.
void LifetimeOracle::State::note_handler_race(const ThreadState& t, std::uint64_t conn) {
  for (const auto& [id, other] : threads) {
    if (id == t.id) {
      continue;
    }
    for (const ApiInterval& open : other.calls) {
      if (open.call == ApiCall::kClose && open.conn == conn) {
        ++coverage.race_same_close_handler;
      }
    }
  }
}

// The innermost open call `call` of `t`, removed; false when there is none (a world that writes
// no wl.begin: then neither coverage nor O13 for it).
bool LifetimeOracle::State::end_api_call(ThreadState& t, ApiCall call, ApiInterval* interval_out) {
  for (auto it = t.calls.rbegin(); it != t.calls.rend(); ++it) {
    if (it->call == call) {
      *interval_out = *it;
      t.calls.erase(std::next(it).base());
      return true;
    }
  }
  return false;
}

void LifetimeOracle::State::on_api_begin(ThreadState& t) {
  ApiCall call = ApiCall::kAdd;
  if (!need_api_call(&call)) {
    return;
  }
  std::uint64_t conn = 0;
  if (call == ApiCall::kClose || call == ApiCall::kNotify) {
    IdKey id;
    if (!need_id("id", &id)) {
      return;
    }
    const Conn* subject = conn_by_id(id);
    conn = subject == nullptr ? 0 : subject->number;
  }
  begin_api_call(t, call, conn);
}

// wl.end: a poll(), run_worker() or stop() returned.
void LifetimeOracle::State::on_api_end(ThreadState& t) {
  ApiCall call = ApiCall::kAdd;
  if (!need_api_call(&call) || !need_result()) {
    return;
  }
  ApiInterval interval;
  if (!end_api_call(t, call, &interval)) {
    return;
  }
  judge_after_stop(interval, api_call_name(call));
  if ((call == ApiCall::kPoll || call == ApiCall::kRunWorker) && result_is("resource_exhausted")) {
    ++coverage.boundary_drivers_full;
  }
  if (call == ApiCall::kStop && result_is("ok")) {
    on_stop_returned();
  }
}

// O13: a call begun after stop() returned fails with kFailedPrecondition (engine.hpp, stop()).
void LifetimeOracle::State::judge_after_stop(const ApiInterval& interval, std::string_view call) {
  if (!interval.after_stop) {
    return;
  }
  judge(kO13);
  if (!is_failed_precondition(*line)) {
    fail(kO13, std::string(call) + "() begun at line " + num(interval.begin_seq) +
                   ", after stop() returned (line " + num(stop_returned_seq) + "), returned " +
                   result_text() + ", not failed_precondition");
  }
}

// stop() returned: every connection whose add() returned ok has had its on_closed, and every task
// whose post() returned ok has run (engine.hpp, stop()).
void LifetimeOracle::State::on_stop_returned() {
  if (stop_returned) {
    return;
  }
  stop_returned = true;
  stop_returned_seq = line->seq;
  for (const auto& [number, conn] : conns) {
    if (conn.add != AddState::kAdded) {
      continue;
    }
    judge(kO13);
    if (!conn.closed) {
      return fail(kO13, "stop() returned (line " + num(line->seq) + ") before the on_closed of " +
                            conn_text(conn) + ", whose add() returned ok");
    }
  }
  for (const auto& [task, count] : tasks) {
    judge(kO13);
    if (count.ran < count.posted) {
      return fail(kO13, "stop() returned (line " + num(line->seq) + ") before task " + num(task) +
                            " ran, whose post() returned ok");
    }
  }
}

// O13: nothing of the engine's calls a handler or a task once stop() returned.
void LifetimeOracle::State::report_call_after_stop(std::string_view what) {
  READYPORT_ASSERT(stop_returned);
  judge(kO13);
  fail(kO13, std::string(what) + " at line " + num(line->seq) + ", after stop() returned (line " +
                 num(stop_returned_seq) + ")");
}

// O13 for close() and notify() of an id the oracle has no connection for: no add() handed it out
// (a failed add() hands none; the callers take ids from add()'s return), so it must not be ok; or
// its connection was forgotten past the tombstone bound (reported as a bound hit): not judged.
void LifetimeOracle::State::judge_unknown_id(const ApiInterval& interval, std::string_view call) {
  if (counts.judgement.bounds_hit[static_cast<std::size_t>(OracleBound::kTombstones)] > 0) {
    return unjudged(kO13);
  }
  judge(kO13);
  if (result_is("ok")) {
    fail(kO13, std::string(call) + "() begun at line " + num(interval.begin_seq) +
                   " returned ok for an id no add() handed out");
  }
}

// O13 for close(): a connection whose on_closed ran before the call began is reported
// (kNotFound, or kFailedPrecondition once stopped), and one open for the whole call is not
// reported as never added.
void LifetimeOracle::State::judge_close_result(const ApiInterval& interval) {
  judge_after_stop(interval, "close");
  if (interval.conn == 0) {
    return judge_unknown_id(interval, "close");
  }
  judge(kO13);
  const Conn* conn = find_conn(interval.conn);
  if (interval.closed_before && result_is("ok")) {
    return fail(kO13, "close() begun at line " + num(interval.begin_seq) +
                          " returned ok for a connection whose on_closed had been called before" +
                          (conn == nullptr ? std::string() : " (" + conn_text(*conn) + ")"));
  }
  // Once its REMOVE packet was dequeued or the engine closed its socket, on_closed may be under
  // way on a thread that has not written hnd.closed yet: not_found is allowed from then on.
  if (interval.open_before && result_is("not_found") && conn != nullptr && !conn->closed &&
      !conn->remove_dequeued && !conn->engine_closed) {
    fail(kO13, "close() begun at line " + num(interval.begin_seq) + " returned not_found for " +
                   conn_text(*conn) + ", which was added and open for the whole call");
  }
}

// O13 for notify(): a connection whose on_closed ran before the call began is reported.
void LifetimeOracle::State::judge_notify_result(const ApiInterval& interval) {
  judge_after_stop(interval, "notify");
  if (interval.conn == 0) {
    return judge_unknown_id(interval, "notify");
  }
  judge(kO13);
  if (interval.closed_before && result_is("ok")) {
    fail(kO13, "notify() begun at line " + num(interval.begin_seq) +
                   " returned ok for a connection whose on_closed had been called before");
  }
}

// hnd.closed_end: on_closed returned; from now on close() and notify() of its id report it.
void LifetimeOracle::State::on_hnd_closed_end() {
  IdKey id;
  if (!need_id("id", &id)) {
    return;
  }
  Conn* conn = conn_by_id(id);
  if (conn != nullptr && conn->closed) {
    conn->closed_returned = true;
  }
}

}  // namespace readyport
