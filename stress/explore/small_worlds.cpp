// The pinned small worlds. See small_worlds.hpp.
#include "explore/small_worlds.hpp"

#include <memory>
#include <mutex>
#include <utility>

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

// The engine started with one run_worker() thread; `body` runs beside it; then stop() and join.
template <typename Body>
void with_worker(World& world, Body body) {
  Engine& engine = world.engine();
  READYPORT_ASSERT(engine.start().ok());
  Result<std::unique_ptr<Thread>> worker =
      world.recording().thread_start("worker", [&engine] { (void)engine.run_worker(); });
  READYPORT_ASSERT(worker.ok());
  body();
  world.record("phase stop");
  READYPORT_ASSERT(engine.stop().ok());
  worker.value()->join();
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

// close() from outside while the worker dispatches the same connection's IN packets and re-arms.
void close_vs_dispatch(World& world) {
  const Pair pair = open_pair(world);
  DrainHandler handler(world, pair.server, false);
  bool added = false;
  with_worker(world, [&] {
    const Result<ConnId> id = add(world, pair.server, handler);
    added = id.ok();
    if (added) {
      // Two sends: the second may come after the handler drained the first, while its re-arm
      // is on the way, so that the re-arm's own IN packet can race the close.
      READYPORT_ASSERT(world.recording().send(pair.client, "x", 1, 0) == 1);
      READYPORT_ASSERT(world.recording().send(pair.client, "y", 1, 0) == 1);
      const ConnId conn = id.value();
      world.record(workload_line_close(pair.server, conn, world.engine().close(conn)));
    }
  });
  READYPORT_ASSERT(handler.closed() == (added ? 1u : 0u));
  close_pair(world, pair);
}

// A handler closes its own connection while a notify() from outside targets it.
void close_inside_vs_notify(World& world) {
  const Pair pair = open_pair(world);
  DrainHandler handler(world, pair.server, true);
  bool added = false;
  with_worker(world, [&] {
    const Result<ConnId> id = add(world, pair.server, handler);
    added = id.ok();
    if (added) {
      READYPORT_ASSERT(world.recording().send(pair.client, "x", 1, 0) == 1);
      const Status notified = world.engine().notify(id.value(), kSockNotifyEventIn);
      world.record(workload_line_notify(pair.server, id.value(), kSockNotifyEventIn, notified));
    }
  });
  // A handler that never ran (its packet refused or dropped by a fault) closed nothing: stop()
  // closes the connection, and on_closed still comes once.
  READYPORT_ASSERT(handler.closed() == (added ? 1u : 0u));
  close_pair(world, pair);
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
  options.trace = TraceOptions{false, 40};
  options.engine.connections_max = 4;
  options.engine.workers_max = 2;
  options.engine.wait_timeout_ms = 50;
  return options;
}

Status verdict(const Status& run_status, World& world) {
  if (Status status = world.oracle().status(); !status.ok()) {
    return status;
  }
  if (!run_status.ok()) {
    return run_status;
  }
  if (Status status = world.oracle().finish(); !status.ok()) {
    return status;
  }
  if (Status status = world.engine_verdict(world.engine().stats()); !status.ok()) {
    return status;
  }
  return world.leak_verdict();
}

}  // namespace

const std::vector<SmallWorld>& small_worlds() {
  static const std::vector<SmallWorld> worlds = {
      {"close_vs_dispatch", "close() from outside vs the worker dispatching the same connection",
       "psn.remove_fails@1,psn.enable_fails@1", close_vs_dispatch},
      {"close_inside_vs_notify", "a handler closing its connection vs notify() from outside",
       "psn.remove_fails@1,post.fails@1", close_inside_vs_notify},
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

SmallWorldRun small_world_run(const SmallWorld& small, SimChoices& choices, bool explore_faults) {
  auto world = std::make_unique<World>(small_world_options(small, choices, explore_faults));
  World* w = world.get();
  const Status run_status = w->run([&small, w] { small.body(*w); });
  SmallWorldRun result;
  result.run.verdict = verdict(run_status, *w);
  result.run.schedule_hash = w->sim()->stats().schedule_hash;
  result.trace_hash = w->trace().hash();
  if (!w->completed()) {
    (void)world.release();  // its threads are parked for good and point into it
  }
  return result;
}

}  // namespace readyport
