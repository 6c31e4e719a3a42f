// FreeRuntime: real threads, real waits, a virtual clock. The FakeOs tests here run several real
// threads through posts, dequeues and locks at once, for ThreadSanitizer to watch.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "readyport/engine.hpp"
#include "readyport/fake/fake_os.hpp"
#include "readyport/fake/free_runtime.hpp"
#include "readyport/fake/recording_os.hpp"
#include "seed_env.hpp"
#include "sim_harness.hpp"
#include "sim_scenario.hpp"

namespace readyport {
namespace {

using test::ParkHarness;

constexpr std::uint64_t kMs = 1'000'000;

std::unique_ptr<Thread> start(Os& os, std::string_view name, std::function<void()> body) {
  Result<std::unique_ptr<Thread>> thread = os.thread_start(name, std::move(body));
  READYPORT_ASSERT(thread.ok());
  return std::move(thread).value();
}

TEST(FreeRuntime, AnUnwokenTimedWaitEndsAtItsVirtualDeadline) {
  FreeRuntime runtime;
  ParkHarness harness(runtime);
  ParkHarness::Event never;
  EXPECT_EQ(harness.wait(never, 5'000 * kMs), ParkEnd::kDeadline);  // 5 s virtual, ~1 ms real
  EXPECT_EQ(runtime.now_ns(), 5'000 * kMs);
  runtime.advance_to(1 * kMs);  // never backwards
  EXPECT_EQ(runtime.now_ns(), 5'000 * kMs);
}

TEST(FreeRuntime, WakeFromAnotherThreadEndsAWaitWithNoDeadline) {
  FreeRuntime runtime;
  ParkHarness harness(runtime);
  ParkHarness::Event event;
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    harness.set(event);
  });
  EXPECT_EQ(harness.wait(event, kDeadlineNone), ParkEnd::kWoken);
  setter.join();
  EXPECT_EQ(runtime.now_ns(), 0u);  // nothing timed out
}

// The cause of the main job's failures on a loaded machine: a thread the OS descheduled between
// two seam calls (here it sleeps in real time, holding nothing) must hold virtual time still, as
// in simulation, where time passes only when every thread waits. Before, a timed wait that no one
// woke within a real slice (1 ms) took its deadline: the other thread's 20 ms waits moved the
// clock, and the director's one-second quiet period ended while a worker had not yet made the
// call that closed the listener (seed 156; docs/faults.md, "Real threads").
TEST(FreeRuntime, ADescheduledThreadHoldsVirtualTime) {
  FreeRuntime runtime;
  FakeOs os(FakeOptions{}, runtime);
  std::atomic<bool> acted{false};
  std::uint64_t now_seen_ns = ~std::uint64_t{0};
  bool acted_before_the_quiet_period_ended = false;
  auto slow = start(os, "slow", [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // descheduled
    now_seen_ns = os.now_ns();
    acted.store(true);
  });
  auto ticker = start(os, "ticker", [&] {
    for (int i = 0; i < 10; ++i) {
      os.sleep_ms(20);  // a poller's timed waits
    }
  });
  auto director = start(os, "director", [&] {
    os.sleep_ms(1000);  // the quiet period
    acted_before_the_quiet_period_ended = acted.load();
  });
  slow->join();
  ticker->join();
  director->join();
  EXPECT_EQ(now_seen_ns, 0u);  // no wait ended while the slow thread ran
  EXPECT_TRUE(acted_before_the_quiet_period_ended);
  EXPECT_EQ(runtime.now_ns(), 1000 * kMs);
}

// run() makes the calling thread a participant: its own work holds time still too.
TEST(FreeRuntime, RunMakesTheCallerAParticipant) {
  FreeRuntime runtime;
  FakeOs os(FakeOptions{}, runtime);
  std::uint64_t now_seen_ns = ~std::uint64_t{0};
  runtime.run([&] {
    EXPECT_EQ(runtime.thread_current(), 0u);
    auto ticker = start(os, "ticker", [&] { os.sleep_ms(20); });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // descheduled
    now_seen_ns = os.now_ns();
    ticker->join();  // joining waits: the ticker's wait may end now
  });
  EXPECT_EQ(now_seen_ns, 0u);
  EXPECT_EQ(runtime.now_ns(), 20 * kMs);
  // run() again on the same runtime: the caller takes part again.
  runtime.run([&] { os.sleep_ms(5); });
  EXPECT_EQ(runtime.now_ns(), 25 * kMs);
}

// The README's "Embedding the engine" snippet for testing handlers on real threads, run as
// written (docs.snippets checks that the README shows exactly the marked lines).
TEST(FreeRuntime, TheReadmeEmbeddingSnippetRuns) {
  // doc-snippet: README.md embedding-free-runtime begin
  readyport::FreeRuntime runtime;  // outlives the FakeOs and every thread
  readyport::FakeOs os(readyport::FakeOptions{}, runtime);
  runtime.run([&] {  // virtual time moves when all threads wait
    readyport::Engine engine(os, readyport::EngineOptions{});
    if (!engine.start().ok()) {
      return;
    }
    auto worker = os.thread_start("worker", [&] { (void)engine.run_worker(); });
    // ... add sockets of os, as above ...
    (void)engine.stop();
    worker.value()->join();
  });
  // doc-snippet: embedding-free-runtime end
  EXPECT_EQ(runtime.threads_started(), 1u);  // the worker ran, and stop() released it
  EXPECT_EQ(os.stats().ports_open, 0u);
}

#if GTEST_HAS_DEATH_TEST
// A hang on real threads is a report, never a silent wait: each thread, where it waits. Each line
// of the report is matched by its own death test (gtest's regex on Windows stops at a newline).
void deadlock_on_a_port() {
  FreeRuntime runtime;
  FakeOs os(FakeOptions{}, runtime);
  runtime.run([&] {
    const Port port = os.create_io_completion_port(0);
    auto waiter = start(os, "waiter", [&] {
      OverlappedEntry entries[1];
      std::uint32_t removed = 0;
      (void)os.get_queued_completion_status_ex(port, entries, 1, &removed, kInfinite, false);
    });
    waiter->join();
  });
}

TEST(FreeRuntimeDeathTest, ADeadlockIsReportedWithEachThreadsWait) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(deadlock_on_a_port(), "hang: deadlock: every thread waits with no deadline");
  EXPECT_DEATH(deadlock_on_a_port(), "T0 'run' joining T1");
  EXPECT_DEATH(deadlock_on_a_port(),
               "T1 'waiter' parked in get_queued_completion_status_ex \\(no deadline\\)");
}

void sleep_for_ever() {
  FreeOptions options;
  options.virtual_ms_max = 10'000;
  options.hang_detail = [] { return std::string("detail from the embedder"); };
  FreeRuntime runtime(options);
  FakeOs os(FakeOptions{}, runtime);
  runtime.run([&] {
    for (;;) {
      os.sleep_ms(1'000);
    }
  });
}

TEST(FreeRuntimeDeathTest, WaitsThatTimeOutForEverAreReported) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(sleep_for_ever(), "virtual time would pass 10000 ms");
  EXPECT_DEATH(sleep_for_ever(), "T0 'run' parked in sleep_ms");
  EXPECT_DEATH(sleep_for_ever(), "detail from the embedder");
}

void spin_without_waiting() {
  FreeOptions options;
  options.stall_ms_max = 50;
  FreeRuntime runtime(options);
  FakeOs os(FakeOptions{}, runtime);
  runtime.run([&] {
    auto spinner = start(os, "spinner", [&] {
      (void)os.now_ns();
      for (;;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
    os.sleep_ms(5);
    spinner->join();
  });
}

TEST(FreeRuntimeDeathTest, AThreadThatNeverWaitsIsReportedAfterTheStallBound) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(spin_without_waiting(), "a wait in sleep_ms lasted 50 ms of real time");
  EXPECT_DEATH(spin_without_waiting(), "T1 'spinner' running, last call now_ns");
}

// A thread that posts its own packet and takes it back for ever: it never waits, so virtual time
// never moves and no wait stalls; only the bound on seam calls ends the run.
// The reposter is always running (its packet is always there); where the other thread is by then
// (starting it, or joining it) is the OS's choice, so the report's line for it is not checked.
void repost_for_ever(const FreeOptions& options) {
  FreeRuntime runtime(options);
  FakeOs os(FakeOptions{}, runtime);
  runtime.run([&] {
    const Port port = os.create_io_completion_port(0);
    auto reposter = start(os, "reposter", [&] {
      for (;;) {
        (void)os.post_queued_completion_status(port, 0, 1, 0);
        OverlappedEntry entries[1];
        std::uint32_t removed = 0;
        (void)os.get_queued_completion_status_ex(port, entries, 1, &removed, kInfinite, false);
      }
    });
    reposter->join();
  });
}

TEST(FreeRuntimeDeathTest, ALivelockIsReportedPastStepsMaxWithWhatEachThreadDoes) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  FreeOptions options;
  options.steps_max = 10'000;
  EXPECT_DEATH(repost_for_ever(options),
               "livelock: 10000 seam calls \\(FreeOptions::steps_max\\) passed");
  // No brackets, no \\d: the same pattern must hold as a POSIX regular expression (Linux) and as
  // GoogleTest's simple one (its Windows builds).
  EXPECT_DEATH(repost_for_ever(options), "T1 'reposter' running, last call .+; .+ seam");
  EXPECT_DEATH(repost_for_ever(options), "assertion failed: FreeRuntime: no livelock");
}

#endif

TEST(FreeRuntime, StepsCountEverySeamCall) {
  FreeOptions options;
  options.steps_max = 1'000'000;
  FreeRuntime runtime(options);
  FakeOs os(FakeOptions{}, runtime);
  std::uint64_t before = 0;
  std::uint64_t after = 0;
  runtime.run([&] {
    before = runtime.steps();
    for (int i = 0; i < 5000; ++i) {
      (void)os.now_ns();  // one seam call
    }
    after = runtime.steps();
  });
  EXPECT_EQ(after - before, 5000u);
}

TEST(FreeRuntime, ThreadsGetIdsInStartOrder) {
  FreeRuntime runtime;
  FakeOs os(FakeOptions{}, runtime);
  std::uint32_t first = 0;
  std::uint32_t second = 0;
  auto a = start(os, "a", [&] { first = runtime.thread_current(); });
  a->join();
  auto b = start(os, "b", [&] { second = runtime.thread_current(); });
  b->join();
  EXPECT_EQ(first, 1u);
  EXPECT_EQ(second, 2u);
  EXPECT_EQ(runtime.thread_current(), 0u);
  EXPECT_EQ(runtime.threads_started(), 2u);
}

TEST(FreeRuntime, ThreadsMaxIsALimit) {
  FreeOptions options;
  options.threads_max = 1;
  FreeRuntime runtime(options);
  auto a = runtime.thread_start("a", [] {});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(runtime.thread_start("b", [] {}).status().code(), StatusCode::kResourceExhausted);
  a.value()->join();
}

// Four real threads contend on one FakeOs mutex around a plain counter while posting to and
// dequeuing from one port: any missing happens-before in the fake is a TSan report.
TEST(FreeRuntime, FakeOsLocksPostsAndDequeuesUnderTrueConcurrency) {
  FreeOptions options;
  options.point_yields = true;
  FreeRuntime runtime(options);
  FakeOs os(FakeOptions{}, runtime);
  // The driving thread takes part: virtual time moves only when it waits too.
  runtime.run([&] {
    const Port port = os.create_io_completion_port(0);
    std::unique_ptr<Mutex> mutex = os.mutex_create();
    constexpr int kThreads = 4;
    constexpr int kRounds = 200;
    int counter = 0;  // guarded by `mutex` (a FakeMutex): no atomics on purpose
    std::atomic<int> dequeued{0};
    std::vector<std::unique_ptr<Thread>> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.push_back(start(os, "worker-" + std::to_string(t), [&, t] {
        for (int i = 0; i < kRounds; ++i) {
          mutex->lock();
          counter += 1;
          mutex->unlock();
          ASSERT_TRUE(os.post_queued_completion_status(port, 0, static_cast<std::uintptr_t>(t), 0));
          OverlappedEntry entries[2];
          std::uint32_t removed = 0;
          if (os.get_queued_completion_status_ex(port, entries, 2, &removed, 1, false)) {
            dequeued.fetch_add(static_cast<int>(removed));
          }
        }
      }));
    }
    for (auto& thread : threads) {
      thread->join();
    }
    EXPECT_EQ(counter, kThreads * kRounds);
    EXPECT_EQ(dequeued.load() + static_cast<int>(os.queued_packet_count(port)), kThreads * kRounds);
    EXPECT_TRUE(os.close_port(port));
  });
}

// The standard scenario (three dequeuers, a producer, an Os mutex, datagrams, re-arms) on real
// threads, recorded: its invariants hold under any real interleaving.
TEST(FreeRuntime, StandardScenarioOnRealThreads) {
  // The seed draws the fake and the workload; real threads choose the interleaving.
  const test::SeedLoop seeds = test::seed_loop(0, 5);  // or READYPORT_SEED's (seed_env.hpp)
  ASSERT_TRUE(seeds.ok()) << seeds.error();
  for (const std::uint64_t seed : seeds.seeds()) {
    SCOPED_TRACE(test::seed_replay(seed));
    FreeRuntime runtime;
    FakeOptions fake_options;
    fake_options.seed = seed;
    FakeOs fake(fake_options, runtime);
    TraceOptions trace_options;
    trace_options.keep_full = false;
    Trace trace(trace_options);
    RuntimeTraceContext context(runtime);
    RecordingOs os(fake, trace, context);
    Rng workload = SeedStreams(seed).stream(SeedStream::kWorkload);
    ScenarioShape shape;
    shape.producer_actions = 40;
    // Real threads: an idle dequeuer's timed-out call costs about a real slice (1 ms), and a
    // starved producer (TSan, a loaded machine) may take long to post the stops.
    shape.loops_max = 20'000;
    ScenarioCounts counts;
    std::unique_ptr<Thread> main = start(os, "main", [&] {
      const Status status = standard_scenario_body(os, workload, shape, &counts);
      EXPECT_TRUE(status.ok()) << status.to_string();
    });
    main->join();
    EXPECT_EQ(counts.stops_seen, shape.dequeuers);
    EXPECT_EQ(counts.posted_dequeued, counts.posted);
    EXPECT_GT(trace.line_count(), 50u);
  }
}

}  // namespace
}  // namespace readyport
