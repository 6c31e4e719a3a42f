// The chaos workload's racers: every public call of the engine from threads of their own, in
// every phase and while stop() runs. See chaos_world.hpp (racer_main) and chaos_workload.hpp.
#include <string>

#include "workload/chaos_world.hpp"

namespace readyport::chaos {
namespace {

// Actions per racer at most (a bound; a racer normally ends when stop() returned).
constexpr std::uint32_t kRacerActionsMax = 100'000;
// A racer's pause between actions: 1 .. this many virtual ms (the phases last seconds).
constexpr std::uint32_t kRacerGapMsMax = 20;

// The racer's own connection slots: racer_conns[racer * kRacerConnsMax + i].
RacerConn& racer_conn(WorkloadState& world, std::uint32_t racer, std::uint32_t i) {
  return *world.racer_conns[racer * WorkloadState::kRacerConnsMax + i];
}

// add() of a fresh unconnected socket with one of the racer's free handlers. The answers the
// contract allows: ok; kFailedPrecondition once stop() was called; kResourceExhausted (the table
// is full); kOsError (an injected fault). The socket stays the racer's when it failed.
void racer_add(WorkloadState& world, std::uint32_t racer) {
  RacerConn* conn = nullptr;
  {
    Guard guard(*world.mutex);
    for (std::uint32_t i = 0; i < WorkloadState::kRacerConnsMax && conn == nullptr; ++i) {
      RacerConn& candidate = racer_conn(world, racer, i);
      if (!candidate.in_use) {
        candidate.in_use = true;
        candidate.added = false;
        candidate.ended = false;
        conn = &candidate;
      }
    }
  }
  if (conn == nullptr) {
    return;
  }
  const Socket s = world.os.socket(kAfInet, kSockStream, kIpprotoTcp);
  Result<ConnId> id = Status(StatusCode::kOsError, "no socket");
  if (s != kInvalidSocket) {
    id = world.add(s, kInterestIn, Mode::kOneshotLevel, *conn);
  }
  Guard guard(*world.mutex);
  if (id.ok()) {
    conn->added_id = id.value();
    conn->added_socket = s;
    conn->added = !conn->ended;  // its on_closed may have run before add() returned
    return;
  }
  conn->in_use = false;
  const StatusCode code = id.status().code();
  if (code != StatusCode::kResourceExhausted && code != StatusCode::kOsError &&
      !world.stopped_answer(id.status())) {
    world.fail("racer " + std::to_string(racer) + ": add() failed: " + id.status().to_string());
  }
  if (s != kInvalidSocket) {
    (void)world.os.closesocket(s);
  }
}

// One of the racers' connections (any racer's: two racers may close or notify one at once), open
// or just ended (its id then names nothing: close() and notify() of it must report kNotFound).
bool racer_pick(WorkloadState& world, Known* known_out) {
  const std::uint64_t i = world.draw_below(world.racer_conns.size());
  Guard guard(*world.mutex);
  const RacerConn& conn = *world.racer_conns[i];
  if (!conn.added && !conn.ended) {
    return false;  // never added, or being added
  }
  *known_out = Known{conn.added_id, conn.added_socket, nullptr};
  return true;
}

void racer_poll(WorkloadState& world) {
  world.record(workload_line_begin(ApiCall::kPoll));
  const Result<std::uint32_t> got = world.engine.poll(0);
  world.record(workload_line_end(ApiCall::kPoll, got.status()));
  // kFailedPrecondition: not running (before start(), after stop()); kResourceExhausted:
  // workers_max drivers already; kOsError: the port call kept failing (faults).
}

// stop() beside the director's while it runs: one of the two returns ok, the other
// kFailedPrecondition ("already stopped or stopping"), unless both were refused.
void racer_stop(WorkloadState& world, std::uint32_t racer) {
  world.record(workload_line_begin(ApiCall::kStop));
  const Status status = world.engine.stop();
  world.record(workload_line_end(ApiCall::kStop, status));
  Guard guard(*world.mutex);
  if (status.ok()) {
    ++world.racer_stops_ok;
    world.stop_returned = true;
  } else if (status.code() != StatusCode::kFailedPrecondition) {
    world.fail("racer " + std::to_string(racer) + ": stop() failed: " + status.to_string());
  }
}

// close() of an open racer connection, then its socket closed behind the engine's back, then
// close() again (as the director's close_behind: drawn only where socket values are never reused,
// ChaosWorkload::weight_behind > 0). The REMOVE that close() applied may still be queued: the
// fake's remove_dropped_on_close drops it, a REMOVE the engine must find lost (engine.hpp).
void racer_close_behind(WorkloadState& world) {
  Known known;
  if (!racer_pick(world, &known)) {
    return;
  }
  {
    Guard guard(*world.mutex);
    for (const auto& conn : world.racer_conns) {
      if (conn->added_id == known.id && !conn->added) {
        return;  // ended (or ending): its socket value is the engine's no more
      }
    }
  }
  world.close_behind(known, true);
}

// One drawn action; `stopping`: stop() was called (a racer may call it too, once).
void racer_action(WorkloadState& world, std::uint32_t racer, bool chaos, bool stopping,
                  bool* stop_called) {
  const std::uint64_t pick = world.draw_below(100);
  Known known;
  if (pick < 25) {
    racer_add(world, racer);
  } else if (pick < 45) {
    if (racer_pick(world, &known)) {
      world.close_known(known, false);
      if (pick < 30) {
        world.close_known(known, false);  // the same id twice in a row
      }
    }
  } else if (pick < 60) {
    if (racer_pick(world, &known)) {
      world.notify(known, kSockNotifyEventIn);
    }
  } else if (pick < 70) {
    world.post_task();
  } else if (pick < 80) {
    racer_poll(world);
  } else if (pick < 90 && (chaos || (stopping && world.workload.crowd_at_stop))) {
    // The workload's own connections: in the chaos phase, and while stop() runs in a crowd
    // (ChaosWorkload::crowd_at_stop), where the newest ones are those stop() still meets.
    const bool picked = chaos ? world.pick_known(&known)
                              : world.pick_recent_known(WorkloadState::kCrowdNewest, &known);
    if (picked) {
      if (pick < 85) {
        world.close_known(known, false);
      } else {
        world.notify(known, kSockNotifyEventIn);
      }
    }
  } else if (pick < 93 && stopping && !*stop_called) {
    *stop_called = true;
    racer_stop(world, racer);
  } else if (pick >= 93 && pick < 97 && world.workload.weight_behind > 0) {
    racer_close_behind(world);
  }
}

// After stop() returned: one call of each kind (the oracle's O13 judges that each fails).
void racer_last_calls(WorkloadState& world, std::uint32_t racer) {
  racer_add(world, racer);
  Known known;
  if (racer_pick(world, &known)) {
    world.close_known(known, false);
    world.notify(known, kSockNotifyEventIn);
  }
  world.post_task();
  racer_poll(world);
}

}  // namespace

Interest RacerConn::handle(ConnId id, std::uint32_t events) {
  (void)id;
  (void)events;
  return kInterestClose;
}

void RacerConn::closed(ConnId id) {
  (void)id;
  Guard guard(*world_.mutex);
  ended = true;
  added = false;
  in_use = false;
}

void racer_main(WorkloadState& world, std::uint32_t racer) {
  bool stop_called = false;
  for (std::uint32_t action = 0; action < kRacerActionsMax; ++action) {
    bool chaos = false;
    bool stopping = false;
    {
      Guard guard(*world.mutex);
      if (world.stop_returned) {
        break;
      }
      chaos = world.launching;
      stopping = world.stopping;
    }
    racer_action(world, racer, chaos, stopping, &stop_called);
    world.os.sleep_ms(1 + static_cast<std::uint32_t>(world.draw_below(kRacerGapMsMax)));
  }
  racer_last_calls(world, racer);
}

}  // namespace readyport::chaos
