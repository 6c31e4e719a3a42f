// SimScheduler driving FakeOs: virtual deadlines of port waits, deadlocks on the fake's mutexes
// and ports, and the scheduler's decisions in the same trace as the calls.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "readyport/fake/fake_os.hpp"
#include "readyport/fake/recording_os.hpp"
#include "readyport/fake/sim_scheduler.hpp"
#include "readyport/fake/trace.hpp"
#include "seed_env.hpp"

namespace readyport {
namespace {

constexpr std::uint64_t kMs = 1'000'000;

std::unique_ptr<Thread> start(Os& os, std::string_view name, std::function<void()> body) {
  Result<std::unique_ptr<Thread>> thread = os.thread_start(name, std::move(body));
  READYPORT_ASSERT(thread.ok());
  return std::move(thread).value();
}

// After a deadlock the abandoned threads stay parked in the fake, and ~FakeOs asserts that no
// thread is parked in it: such a FakeOs is kept for the life of the process (reachable from
// here, so LeakSanitizer stays quiet).
void keep_forever(std::unique_ptr<FakeOs> os) {
  static auto* kept = new std::vector<std::unique_ptr<FakeOs>>;
  kept->push_back(std::move(os));
}

TEST(SimFake, PortWaitsEndAtTheirExactVirtualDeadlineOrWhenAPacketArrives) {
  const test::SeedLoop seeds = test::seed_loop(0, 20);  // or READYPORT_SEED's (seed_env.hpp)
  ASSERT_TRUE(seeds.ok()) << seeds.error();
  for (const std::uint64_t seed : seeds.seeds()) {
    SCOPED_TRACE(test::seed_replay(seed));
    SimOptions options;
    options.seed = seed;
    SimScheduler sim(options);
    FakeOs os(FakeOptions{}, sim);
    const Port port = os.create_io_completion_port(0);
    std::uint64_t timed_out_at = 0;
    std::uint64_t woken_at = 0;
    bool timed_out_ok = true;
    bool woken_ok = false;
    ASSERT_TRUE(sim.run([&] {
                     // Waits 30 ms for a packet that comes at 10 ms (it may also be taken by
                     // the other waiter: then this one times out at 30 ms).
                     auto a = start(os, "waiter-a", [&] {
                       OverlappedEntry entry;
                       std::uint32_t removed = 0;
                       woken_ok =
                           os.get_queued_completion_status_ex(port, &entry, 1, &removed, 30, false);
                       woken_at = os.now_ns();
                     });
                     // Waits 50 ms with a second packet never coming after the first.
                     auto b = start(os, "waiter-b", [&] {
                       OverlappedEntry entry;
                       std::uint32_t removed = 0;
                       timed_out_ok =
                           os.get_queued_completion_status_ex(port, &entry, 1, &removed, 50, false);
                       timed_out_at = os.now_ns();
                     });
                     os.sleep_ms(10);
                     EXPECT_EQ(os.now_ns(), 10 * kMs);
                     os.post_queued_completion_status(port, 0, 1, 0);
                     a->join();
                     b->join();
                   })
                    .ok());
    // Exactly one waiter got the packet at 10 ms; the other timed out at its own deadline.
    ASSERT_NE(woken_ok, timed_out_ok) << "seed " << seed;
    if (woken_ok) {
      EXPECT_EQ(woken_at, 10 * kMs);
      EXPECT_EQ(timed_out_at, 50 * kMs);
    } else {
      EXPECT_EQ(timed_out_at, 10 * kMs);
      EXPECT_EQ(woken_at, 30 * kMs);
    }
    EXPECT_TRUE(os.close_port(port));
  }
}

// Runs two threads taking two FakeOs mutexes in opposite order under `seed`. Returns the run's
// status; `trace_text_out` gets its trace.
Status run_opposite_locks(std::uint64_t seed, SimOutcome* outcome_out,
                          std::string* trace_text_out) {
  SimOptions options;
  options.seed = seed;
  Trace trace;
  options.trace = &trace;
  SimScheduler sim(options);
  FakeOs os(FakeOptions{}, sim);
  const Status status = sim.run([&] {
    std::unique_ptr<Mutex> first = os.mutex_create();
    std::unique_ptr<Mutex> second = os.mutex_create();
    auto ab = start(os, "takes-first-then-second", [&] {
      first->lock();
      second->lock();
      second->unlock();
      first->unlock();
    });
    auto ba = start(os, "takes-second-then-first", [&] {
      second->lock();
      first->lock();
      first->unlock();
      second->unlock();
    });
    ab->join();
    ba->join();
  });
  *outcome_out = sim.outcome();
  *trace_text_out = trace.text();
  // When deadlocked, the FakeMutexes stay on the abandoned main thread's stack; no thread is
  // parked in a port or a socket, so this FakeOs may be destroyed.
  return status;
}

TEST(SimFake, DeadlockOnTwoFakeMutexesTakenInOppositeOrderIsFoundAndReported) {
  // Most schedules let one thread take both mutexes first; the search finds one that does not
  // (the first such seed is fixed: the search itself is deterministic).
  std::uint64_t completed = 0;
  const test::SeedLoop seeds = test::seed_loop(0, 200);  // or READYPORT_SEED's (seed_env.hpp)
  ASSERT_TRUE(seeds.ok()) << seeds.error();
  for (const std::uint64_t seed : seeds.seeds()) {
    SCOPED_TRACE(test::seed_replay(seed));
    SimOutcome outcome = SimOutcome::kNotRun;
    std::string text;
    const Status status = run_opposite_locks(seed, &outcome, &text);
    if (outcome == SimOutcome::kCompleted) {
      ASSERT_TRUE(status.ok());
      completed += 1;
      continue;
    }
    ASSERT_EQ(outcome, SimOutcome::kDeadlock) << status.to_string();
    std::printf("deadlock found at seed %llu after %llu completed runs\n",
                static_cast<unsigned long long>(seed), static_cast<unsigned long long>(completed));
    EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
    const std::string& report = status.message();
    EXPECT_NE(report.find("T1 'main' parked in Thread::join (joins T2)"), std::string::npos)
        << report;
    EXPECT_NE(report.find("T2 'takes-first-then-second' parked in lock (no deadline)"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("T3 'takes-second-then-first' parked in lock (no deadline)"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("seed=" + std::to_string(seed) + " strategy=random"), std::string::npos)
        << report;
    EXPECT_NE(text.find(" sched.deadlock [T1:Thread::join,T2:lock,T3:lock]\n"), std::string::npos)
        << text;
    // The same seed deadlocks again, with the same trace.
    SimOutcome again = SimOutcome::kNotRun;
    std::string again_text;
    EXPECT_EQ(run_opposite_locks(seed, &again, &again_text).message(), report);
    EXPECT_EQ(again, SimOutcome::kDeadlock);
    EXPECT_EQ(again_text, text);
    return;
  }
  if (!seeds.whole_loop()) {
    seeds.note_skipped("a deadlock is found within 200 seeds");
    return;
  }
  FAIL() << "no deadlock in 200 seeds";
}

TEST(SimFake, DeadlockOnAnInfinitePortWaitNamesTheCall) {
  SimOptions options;
  options.seed = 3;
  SimScheduler sim(options);
  auto os = std::make_unique<FakeOs>(FakeOptions{}, sim);
  const Port port = os->create_io_completion_port(0);
  const Status status = sim.run([&, fake = os.get()] {
    auto waiter = start(*fake, "waits-forever", [fake, port] {
      OverlappedEntry entry;
      std::uint32_t received = 0;
      fake->process_socket_notifications(port, 0, nullptr, kInfinite, 1, &entry, &received);
    });
    waiter->join();
  });
  ASSERT_EQ(sim.outcome(), SimOutcome::kDeadlock) << status.to_string();
  EXPECT_NE(status.message().find(
                "T2 'waits-forever' parked in process_socket_notifications (no deadline)"),
            std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("seed=3 strategy=random"), std::string::npos) << status.message();
  keep_forever(std::move(os));  // a thread stays parked in its port
}

TEST(SimFake, SchedulerDecisionsAndCallsShareOneTrace) {
  Trace trace;
  SimOptions options;
  options.seed = 5;
  options.trace = &trace;
  SimScheduler sim(options);
  FakeOs fake(FakeOptions{}, sim);
  RuntimeTraceContext context(sim);
  RecordingOs os(fake, trace, context);
  const Port port = fake.create_io_completion_port(0);  // thread 0, before run: not recorded
  ASSERT_TRUE(sim.run([&] {
                   auto poster = start(os, "poster", [&] {
                     os.sleep_ms(3);
                     os.post_queued_completion_status(port, 0, 42, 0);
                   });
                   OverlappedEntry entry;
                   std::uint32_t removed = 0;
                   EXPECT_TRUE(os.get_queued_completion_status_ex(port, &entry, 1, &removed,
                                                                  kInfinite, false));
                   poster->join();
                 })
                  .ok());
  const std::string text = trace.text();
  EXPECT_NE(text.find(" T1 thread_start name=poster -> th1\n"), std::string::npos) << text;
  EXPECT_NE(text.find(" sched.park call=get_queued_completion_status_ex deadline=none\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(" sched.park call=sleep_ms deadline=3000000\n"), std::string::npos) << text;
  EXPECT_NE(text.find(" sched.time to=3000000 ready=[T2]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("3000000 T2 sched.wake T1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("3000000 T2 post port=2 bytes=0x0 key=42 -> 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("3000000 T1 gqcs port=2 count=1 timeout=4294967295 alertable=0 -> 1 n=1 "
                      "entries=[key=42/mask=0x0]\n"),
            std::string::npos)
      << text;
  EXPECT_TRUE(fake.close_port(port));
}

}  // namespace
}  // namespace readyport
