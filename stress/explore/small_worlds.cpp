// The pinned small worlds. See small_worlds.hpp.
#include "explore/small_worlds.hpp"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "readyport/assert.hpp"
#include "readyport/fake/trace_lines.hpp"

namespace readyport {
namespace {

// A handler that drains its socket and asks for IN again, writing the hnd.* lines the oracle
// reads; `close_inside` makes its first call close the connection (engine.close from inside).
class DrainHandler final : public Handler {
 public:
  DrainHandler(World& world, Socket socket, bool close_inside)
      : world_(world), socket_(socket), close_inside_(close_inside) {}
  Interest on_events(ConnId id, Socket socket, std::uint32_t events) noexcept override {
    world_.record(handler_line_enter(socket_, id, socket, events));
    char buffer[64];
    while (world_.os().recv(socket, buffer, sizeof(buffer), 0) > 0) {
    }
    if (close_inside_) {
      close_inside_ = false;
      world_.record(workload_line_close(socket_, id, world_.engine().close(id)));
    }
    world_.record(handler_line_leave(socket_, kInterestIn));
    return kInterestIn;
  }
  void on_closed(ConnId id) noexcept override {
    world_.record(handler_line_closed(socket_, id));
    closed_ += 1;
  }
  std::uint32_t closed() const { return closed_; }

 private:
  World& world_;
  const Socket socket_;
  bool close_inside_;  // the handler's own (the engine never runs one handler twice at once)
  std::uint32_t closed_ = 0;
};

// A loopback pair through the recorder (below the faults: the set-up is not under test).
struct Pair {
  Socket listener = kInvalidSocket;
  Socket client = kInvalidSocket;
  Socket server = kInvalidSocket;
};

Pair open_pair(World& world) {
  RecordingOs& os = world.recording();
  Pair pair;
  Ipv4Address address{kLoopbackHost, 0};
  pair.listener = os.socket(kAfInet, kSockStream, kIpprotoTcp);
  READYPORT_ASSERT(os.bind(pair.listener, address) == 0);
  READYPORT_ASSERT(os.getsockname(pair.listener, &address) == 0);
  READYPORT_ASSERT(os.listen(pair.listener, kSomaxconn) == 0);
  pair.client = os.socket(kAfInet, kSockStream, kIpprotoTcp);
  READYPORT_ASSERT(os.connect(pair.client, address) == 0);
  pair.server = os.accept(pair.listener, nullptr);
  READYPORT_ASSERT(pair.server != kInvalidSocket);
  READYPORT_ASSERT(os.set_nonblocking(pair.server, true) == 0);
  return pair;
}

void close_pair(World& world, const Pair& pair) {
  READYPORT_ASSERT(world.recording().closesocket(pair.client) == 0);
  READYPORT_ASSERT(world.recording().closesocket(pair.listener) == 0);
}

// What a workload saw break; the first one counts.
class Broken {
 public:
  void check(bool holds, const std::string& what) {
    if (!holds && status_.ok()) {
      status_ = Status(StatusCode::kInternal, what);
    }
  }
  const Status& status() const { return status_; }

 private:
  Status status_;
};

// The engine started with `workers` run_worker() threads; `body` runs beside them; then stop()
// (which must succeed, faults or not) and the joins.
template <typename Body>
void with_workers(World& world, std::uint32_t workers, Broken& broken, Body body) {
  Engine& engine = world.engine();
  READYPORT_ASSERT(engine.start().ok());
  std::vector<std::unique_ptr<Thread>> threads;
  for (std::uint32_t i = 0; i < workers; ++i) {
    Result<std::unique_ptr<Thread>> worker =
        world.recording().thread_start("worker", [&engine] { (void)engine.run_worker(); });
    READYPORT_ASSERT(worker.ok());
    threads.push_back(std::move(worker).value());
  }
  body();
  world.record(phase_line("stop"));
  const Status stopped = engine.stop();
  broken.check(stopped.ok(), "stop() failed: " + stopped.to_string());
  for (auto& thread : threads) {
    thread->join();
  }
}

// add() of `s`; a refusal (an injected fault) leaves the socket the caller's, closed here.
Result<ConnId> add(World& world, Socket s, Handler& handler) {
  world.record(workload_line_adding(s));
  const Result<ConnId> id = world.engine().add(s, kInterestIn, Mode::kOneshotLevel, handler);
  world.record(workload_line_add(s, id));
  if (!id.ok()) {
    READYPORT_ASSERT(id.status().code() == StatusCode::kOsError);
    READYPORT_ASSERT(world.recording().closesocket(s) == 0);
  }
  return id;
}

void close_id(World& world, Socket s, ConnId id, Broken& broken) {
  const Status closed = world.engine().close(id);
  world.record(workload_line_close(s, id, closed));
  // Closing already, or gone: kNotFound; nothing else.
  broken.check(closed.ok() || closed.code() == StatusCode::kNotFound,
               "close() returned " + closed.to_string());
}

void send_byte(World& world, const Pair& pair) {
  READYPORT_ASSERT(world.recording().send(pair.client, "x", 1, 0) == 1);
}

// One connection with a DrainHandler: on_closed exactly once when add() succeeded.
struct Conn {
  Conn(World& world, bool close_inside)
      : pair(open_pair(world)), handler(world, pair.server, close_inside) {}
  Pair pair;
  DrainHandler handler;
  Result<ConnId> id = Status(StatusCode::kUnavailable, "not added");
  void check_closed(World& world, Broken& broken) {
    broken.check(handler.closed() == (id.ok() ? 1u : 0u),
                 "s=" + std::to_string(pair.server) + ": on_closed ran " +
                     std::to_string(handler.closed()) + " times");
    close_pair(world, pair);
  }
};

// close() from outside while `workers` workers dispatch the same connection's IN packets and
// re-arm it. Two sends: the second may come after the handler drained the first, while its
// re-arm is on the way, so that the re-arm's own IN packet can race the close.
Status close_after_two_sends(World& world, std::uint32_t workers) {
  Broken broken;
  Conn conn(world, false);
  with_workers(world, workers, broken, [&] {
    conn.id = add(world, conn.pair.server, conn.handler);
    if (conn.id.ok()) {
      send_byte(world, conn.pair);
      send_byte(world, conn.pair);
      close_id(world, conn.pair.server, conn.id.value(), broken);
    }
  });
  conn.check_closed(world, broken);
  return broken.status();
}

// A handler closes its own connection while a notify() from outside targets it.
Status close_inside_vs_notify(World& world) {
  Broken broken;
  Conn conn(world, true);
  with_workers(world, 1, broken, [&] {
    conn.id = add(world, conn.pair.server, conn.handler);
    if (conn.id.ok()) {
      send_byte(world, conn.pair);
      const ConnId id = conn.id.value();
      const Status notified = world.engine().notify(id, kSockNotifyEventIn);
      world.record(workload_line_notify(conn.pair.server, id, kSockNotifyEventIn, notified));
    }
  });
  conn.check_closed(world, broken);
  return broken.status();
}

// stop() with a connection open: its REMOVE (which a fault may refuse: the slot is quarantined)
// races the worker's dispatch of the connection's packet.
Status remove_refused_in_stop(World& world) {
  Broken broken;
  Conn conn(world, false);
  with_workers(world, 1, broken, [&] {
    conn.id = add(world, conn.pair.server, conn.handler);
    if (conn.id.ok()) {
      send_byte(world, conn.pair);
    }
  });
  conn.check_closed(world, broken);
  return broken.status();
}

Status close_vs_dispatch(World& world) { return close_after_two_sends(world, 1); }

// Two workers: one re-arms the connection after its handler ran while the other dequeues.
Status rearm_vs_close(World& world) { return close_after_two_sends(world, 2); }

// poll() on a thread of its own, again and again until the engine refuses it, while stop() runs.
Status poll_vs_stop(World& world) {
  Broken broken;
  Conn conn(world, false);
  Engine& engine = world.engine();
  READYPORT_ASSERT(engine.start().ok());
  conn.id = add(world, conn.pair.server, conn.handler);
  if (conn.id.ok()) {
    send_byte(world, conn.pair);
  }
  Status last;
  Result<std::unique_ptr<Thread>> poller = world.recording().thread_start("poller", [&] {
    for (std::uint32_t i = 0; i < 64; ++i) {
      const Result<std::uint32_t> got = engine.poll(0);
      if (!got.ok()) {
        last = got.status();
        return;
      }
    }
  });
  READYPORT_ASSERT(poller.ok());
  world.record(phase_line("stop"));
  const Status stopped = engine.stop();
  broken.check(stopped.ok(), "stop() failed: " + stopped.to_string());
  poller.value()->join();
  broken.check(last.ok() || last.code() == StatusCode::kFailedPrecondition,
               "poll() beside stop() returned " + last.to_string());
  conn.check_closed(world, broken);
  return broken.status();
}

// Slot reuse: a connection closed with its IN packet still queued, then another added in the
// same slot (a table of one) while the worker may still dequeue the stale packet.
Status slot_reuse_stale(World& world) {
  Broken broken;
  Conn first(world, false);
  Conn second(world, false);
  with_workers(world, 1, broken, [&] {
    first.id = add(world, first.pair.server, first.handler);
    if (first.id.ok()) {
      send_byte(world, first.pair);
      close_id(world, first.pair.server, first.id.value(), broken);
    }
    // The slot is free once the first connection's REMOVE came: until then add() is refused.
    for (std::uint32_t i = 0; i < 8 && !second.id.ok(); ++i) {
      world.record(workload_line_adding(second.pair.server));
      second.id =
          world.engine().add(second.pair.server, kInterestIn, Mode::kOneshotLevel, second.handler);
      world.record(workload_line_add(second.pair.server, second.id));
      if (!second.id.ok()) {
        world.os().sleep_ms(10);
      }
    }
    if (second.id.ok()) {
      send_byte(world, second.pair);
    } else {
      READYPORT_ASSERT(world.recording().closesocket(second.pair.server) == 0);
    }
  });
  first.check_closed(world, broken);
  second.check_closed(world, broken);
  return broken.status();
}

// Two workers and batches of two: one PSN call may carry a REMOVE beside another connection's
// re-arm, while the other worker dequeues.
Status shared_batch_remove(World& world) {
  Broken broken;
  Conn a(world, false);
  Conn b(world, false);
  with_workers(world, 2, broken, [&] {
    a.id = add(world, a.pair.server, a.handler);
    b.id = add(world, b.pair.server, b.handler);
    if (a.id.ok()) {
      send_byte(world, a.pair);
    }
    if (b.id.ok()) {
      send_byte(world, b.pair);
    }
    if (a.id.ok()) {
      close_id(world, a.pair.server, a.id.value(), broken);
    }
  });
  a.check_closed(world, broken);
  b.check_closed(world, broken);
  return broken.status();
}

// Two threads close the same connection at once (close() is idempotent: one REMOVE).
Status close_twice(World& world) {
  Broken broken;
  Conn conn(world, false);
  with_workers(world, 1, broken, [&] {
    conn.id = add(world, conn.pair.server, conn.handler);
    if (!conn.id.ok()) {
      return;
    }
    send_byte(world, conn.pair);
    const ConnId id = conn.id.value();
    Result<std::unique_ptr<Thread>> closer = world.recording().thread_start(
        "closer", [&] { close_id(world, conn.pair.server, id, broken); });
    READYPORT_ASSERT(closer.ok());
    close_id(world, conn.pair.server, id, broken);
    closer.value()->join();
  });
  conn.check_closed(world, broken);
  return broken.status();
}

WorldOptions small_world_options(const SmallWorld& small, SimChoices& choices,
                                 bool explore_faults) {
  WorldOptions options;
  options.plan = FaultPlan::parse(small.fault_sites).value();
  options.explore_faults = explore_faults;
  options.sim.seed = 1;
  options.sim.strategy = SimStrategy::kExplore;
  options.sim.choices = &choices;
  options.sim.steps_max = 200'000;
  options.trace = TraceOptions{.keep_full = false, .tail_lines_max = 40, .projections = true};
  options.scheduler_lines = false;  // a schedule is named by its choices (--schedule)
  options.engine.connections_max = small.connections_max;
  options.engine.workers_max = 3;
  options.engine.batch_count = 2;
  options.engine.wait_timeout_ms = 50;
  return options;
}

}  // namespace

const std::vector<SmallWorld>& small_worlds() {
  // The cheap ones (one worker) first: `--explore all --stop-on-failure` reaches them soonest.
  static const std::vector<SmallWorld> worlds = {
      {"close_vs_dispatch", "close() from outside vs the worker dispatching the same connection",
       "psn.remove_fails@1,psn.enable_fails@1", 4, close_vs_dispatch},
      {"close_inside_vs_notify", "a handler closing its connection vs notify() from outside",
       "psn.remove_fails@1,post.fails@1", 4, close_inside_vs_notify},
      {"remove_refused_in_stop", "stop() closing a connection whose REMOVE a fault may refuse",
       "psn.remove_fails@1", 4, remove_refused_in_stop},
      {"close_twice", "two threads close() the same connection at once", "psn.remove_fails@1", 4,
       close_twice},
      {"slot_reuse_stale", "a table of one: a slot reused while the last owner's packet waits",
       "psn.remove_fails@1", 1, slot_reuse_stale},
      {"poll_vs_stop", "poll() on another thread vs stop()", "post.fails@1", 4, poll_vs_stop},
      {"rearm_vs_close", "two workers: a handler's re-arm vs close() from outside",
       "psn.enable_fails@1", 4, rearm_vs_close},
      {"shared_batch_remove", "two workers, batches of two: a REMOVE beside another's re-arm",
       "psn.remove_fails@1", 4, shared_batch_remove},
  };
  return worlds;
}

const SmallWorld* small_world_find(const std::string& name) {
  for (const SmallWorld& world : small_worlds()) {
    if (name == world.name) {
      return &world;
    }
  }
  return nullptr;
}

SmallWorldRun small_world_run(const SmallWorld& small, SimChoices& choices, bool explore_faults,
                              bool keep_tail) {
  auto world = std::make_unique<World>(small_world_options(small, choices, explore_faults));
  World* w = world.get();
  Status workload;
  const Status run_status = w->run([&small, w, &workload] { workload = small.body(*w); });
  SmallWorldRun result;
  result.run.verdict = w->verdict(run_status, workload, w->engine().stats());
  result.run.schedule_hash = w->sim()->stats().schedule_hash;
  result.trace_hash = w->trace().hash();
  result.projection_hash = w->trace().projection_hash();
  result.trace_lines = w->trace().line_count();
  if (keep_tail) {
    result.trace_tail = w->trace().tail();
  }
  if (!w->completed()) {
    (void)world.release();  // its threads are parked for good and point into it
  }
  return result;
}

}  // namespace readyport
