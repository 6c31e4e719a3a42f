// FreeRuntime: real threads, real waits, a virtual clock. The FakeOs tests here run several real
// threads through posts, dequeues and locks at once, for ThreadSanitizer to watch.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

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
  for (auto& thread : threads) thread->join();
  EXPECT_EQ(counter, kThreads * kRounds);
  EXPECT_EQ(dequeued.load() + static_cast<int>(os.queued_packet_count(port)), kThreads * kRounds);
  EXPECT_TRUE(os.close_port(port));
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
