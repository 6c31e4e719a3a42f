// stop() against poll() or run_worker() entered on another thread, under SimScheduler over many
// seeds: once stop() has closed the port, no call may use it (a closed handle's value may name
// another object on Windows). A driver that begins while stop() waits for the drivers, or after,
// must fail with kFailedPrecondition instead. The checks are the OS's view, whatever the engine
// says about itself: a decorator counts the port calls made after close_port(), and each run is
// a World (readyport/fake/world.hpp) whose oracle judges the trace and whose fake must hold
// nothing at the end.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "readyport/engine.hpp"
#include "readyport/fake/forwarding_os.hpp"
#include "readyport/fake/world.hpp"

namespace readyport {
namespace {

// Counts the calls on a port after it was closed.
class PortAfterCloseOs final : public ForwardingOs {
 public:
  using ForwardingOs::ForwardingOs;

  bool close_port(Port port) override {
    closed_ = port;
    return ForwardingOs::close_port(port);
  }
  std::uint32_t process_socket_notifications(Port port, std::uint32_t registration_count,
                                             SockNotifyRegistration* registrations,
                                             std::uint32_t timeout_ms,
                                             std::uint32_t completion_count,
                                             OverlappedEntry* entries,
                                             std::uint32_t* received_out) override {
    count(port);
    return ForwardingOs::process_socket_notifications(port, registration_count, registrations,
                                                      timeout_ms, completion_count, entries,
                                                      received_out);
  }
  bool post_queued_completion_status(Port port, std::uint32_t bytes_transferred,
                                     std::uintptr_t completion_key,
                                     std::uintptr_t overlapped) override {
    count(port);
    return ForwardingOs::post_queued_completion_status(port, bytes_transferred, completion_key,
                                                       overlapped);
  }
  std::uint32_t calls_after_close() const { return calls_after_close_; }

 private:
  void count(Port port) {
    if (port == closed_) {
      ++calls_after_close_;
    }
  }

  Port closed_ = kInvalidPort;
  std::uint32_t calls_after_close_ = 0;
};

// One driver entry by the racer: a poll() that does not wait, or a run_worker() (which returns ok
// once it passed the exit packet on, and is entered again). Fails once the engine stopped.
using Enter = Status (*)(Engine&);
Status enter_poll(Engine& engine) {
  Result<std::uint32_t> got = engine.poll(0);
  return got.ok() ? Status() : got.status();
}
Status enter_worker(Engine& engine) { return engine.run_worker(); }

// Over 300 schedules: stop() on the main thread, the racer entering again and again until the
// engine refuses it. No port call after close_port(), and the racer ends by the refusal.
void expect_no_port_use_after_close(Enter enter) {
  constexpr std::uint32_t kEntriesMax = 10000;  // a bound: the racer ends on its first error
  std::uint32_t schedules = 0;
  for (std::uint64_t seed = 1; seed <= 150; ++seed) {
    for (SimStrategy strategy : {SimStrategy::kRandom, SimStrategy::kPct}) {
      WorldOptions world_options;
      world_options.sim.seed = seed;
      world_options.sim.strategy = strategy;
      World world(world_options);
      // The engine under test sits above the counting decorator, so it is built here
      // (world.engine() stays unstarted: it never calls the Os).
      PortAfterCloseOs os(world.os());
      std::uint32_t entries = 0;
      Status last = Status();
      const Status run = world.run([&] {
        Engine engine(os, EngineOptions{});
        ASSERT_TRUE(engine.start().ok());
        Result<std::unique_ptr<Thread>> racer = os.thread_start("racer", [&] {
          for (; entries < kEntriesMax; ++entries) {
            last = enter(engine);
            if (!last.ok()) {
              return;
            }
            // In bursts: a strategy that keeps picking the racer (PCT) still lets stop() on.
            if (entries % 8 == 7) {
              os.sleep_ms(1);
            }
          }
        });
        ASSERT_TRUE(racer.ok());
        EXPECT_TRUE(engine.stop().ok());
        racer.value()->join();
      });
      const std::string where = world.sim()->parameters();
      ASSERT_TRUE(run.ok()) << run.to_string() << " " << where;
      EXPECT_EQ(os.calls_after_close(), 0u) << where;
      EXPECT_LT(entries, kEntriesMax) << where;
      EXPECT_EQ(last.code(), StatusCode::kFailedPrecondition) << last.to_string() << " " << where;
      EXPECT_TRUE(world.oracle().finish().ok())
          << world.oracle().status().to_string() << " " << where;
      EXPECT_TRUE(world.leak_verdict().ok()) << world.leak_verdict().to_string() << " " << where;
      ++schedules;
    }
  }
  EXPECT_EQ(schedules, 300u);
}

TEST(EngineStopRace, PollOnAnotherThreadNeverUsesThePortStopClosed) {
  expect_no_port_use_after_close(enter_poll);
}

TEST(EngineStopRace, WorkerEnteringAgainNeverUsesThePortStopClosed) {
  expect_no_port_use_after_close(enter_worker);
}

}  // namespace
}  // namespace readyport
