// The echo server on the engine over FakeOs: every byte echoed, every connection closed.
// Single-threaded on the inline runtime (poll), then worker threads under SimScheduler seeds and
// under FreeRuntime (real threads, for ThreadSanitizer).
#include "echo_server.hpp"

#include <gtest/gtest.h>

#include <string>

#include "readyport/fake/fake_os.hpp"
#include "readyport/fake/free_runtime.hpp"
#include "readyport/fake/sim_scheduler.hpp"

namespace readyport {
namespace {

void expect_all_echoed(const EchoWorkload& w, const EchoResult& r) {
  ASSERT_TRUE(r.status.ok()) << r.status.to_string();
  const EchoCounts& c = r.counts;
  EXPECT_EQ(c.clients_started, w.clients);
  EXPECT_EQ(c.clients_done, w.clients);
  EXPECT_EQ(c.clients_closed, w.clients);
  EXPECT_EQ(c.clients_failed, 0u);
  EXPECT_EQ(c.bytes_sent, std::uint64_t{w.clients} * w.bytes_per_client);
  EXPECT_EQ(c.bytes_received, std::uint64_t{w.clients} * w.bytes_per_client);
  EXPECT_EQ(c.bytes_mismatched, 0u);
  EXPECT_EQ(c.server.accepted, w.clients);
  EXPECT_EQ(c.server.closed, w.clients);
  EXPECT_EQ(c.server.bytes_echoed, std::uint64_t{w.clients} * w.bytes_per_client);
  EXPECT_TRUE(c.server.listener_closed);
  EXPECT_EQ(c.engine.connections_live, 0u);
  EXPECT_EQ(c.engine.connections_closed, c.engine.connections_added);
}

EchoResult run_inline(const EchoWorkload& w, FakeOptions fake_options = {}) {
  FakeOs os(fake_options);
  Engine engine(os, echo_engine_options(w));
  EXPECT_TRUE(engine.start().ok());
  EchoResult result = run_echo_workload(os, engine, w);
  // Nothing left in the fake: every socket closed, every registration removed.
  EXPECT_EQ(os.stats().sockets_open, 0u);
  EXPECT_EQ(os.stats().registrations_live, 0u);
  return result;
}

class EchoInlineTest : public testing::TestWithParam<Mode> {};

TEST_P(EchoInlineTest, SeveralClientsEveryByteEchoedEveryConnectionClosed) {
  EchoWorkload w;
  w.clients = 8;
  w.bytes_per_client = 6000;
  w.mode = GetParam();
  w.seed = 7;
  expect_all_echoed(w, run_inline(w));
}

TEST_P(EchoInlineTest, SmallBuffersForceWouldBlockAndOut) {
  EchoWorkload w;
  w.clients = 12;
  w.clients_concurrent = 5;  // finished clients start the next ones
  w.bytes_per_client = 20000;
  w.chunk_bytes_max = 3000;
  w.buffer_bytes = 97;
  w.mode = GetParam();
  w.seed = 11;
  FakeOptions fake;
  fake.receive_buffer_bytes = 700;  // sends block: the server waits for OUT
  expect_all_echoed(w, run_inline(w, fake));
}

INSTANTIATE_TEST_SUITE_P(Modes, EchoInlineTest,
                         testing::Values(Mode::kOneshotLevel, Mode::kPersistentLevel,
                                         Mode::kPersistentEdge),
                         [](const testing::TestParamInfo<Mode>& param_info) {
                           return std::string(mode_name(param_info.param));
                         });

TEST(EchoWorkloadTest, OneshotEdgeIsRefusedAndTheEngineStopped) {
  FakeOs os;
  EchoWorkload w;
  w.mode = Mode::kOneshotEdge;
  Engine engine(os, echo_engine_options(w));
  ASSERT_TRUE(engine.start().ok());
  const EchoResult r = run_echo_workload(os, engine, w);
  EXPECT_EQ(r.status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(engine.stop().code(), StatusCode::kFailedPrecondition);  // already stopped
}

TEST(EchoWorkloadTest, WorkersOnTheInlineRuntimeFailCleanly) {
  FakeOs os;
  EchoWorkload w;
  w.workers = 2;  // the inline runtime cannot start threads
  Engine engine(os, echo_engine_options(w));
  ASSERT_TRUE(engine.start().ok());
  const EchoResult r = run_echo_workload(os, engine, w);
  EXPECT_FALSE(r.status.ok());
  EXPECT_EQ(r.counts.engine.connections_live, 0u);
  EXPECT_EQ(os.stats().sockets_open, 0u);
}

// ---- Worker threads ---------------------------------------------------------------------------

struct SimCase {
  Mode mode;
  SimStrategy strategy;
};

class EchoSimTest : public testing::TestWithParam<SimCase> {};

TEST_P(EchoSimTest, WorkersUnderTheSchedulerEveryByteEchoed) {
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    SimOptions sim_options;
    sim_options.seed = seed;
    sim_options.strategy = GetParam().strategy;
    sim_options.pct_steps_estimate = 20000;
    sim_options.steps_max = 5'000'000;
    SimScheduler sim(sim_options);
    FakeOptions fake_options;
    fake_options.seed = seed;
    fake_options.receive_buffer_bytes = 1500;
    FakeOs os(fake_options, sim);
    EchoWorkload w;
    w.clients = 6;
    w.clients_concurrent = 4;
    w.bytes_per_client = 5000;
    w.chunk_bytes_max = 1200;
    w.buffer_bytes = 512;
    w.workers = 3;
    w.mode = GetParam().mode;
    w.seed = seed;
    EchoResult result;
    const Status run = sim.run([&] {
      EngineOptions options = echo_engine_options(w);
      options.batch_count = 4;  // small batches: more interleavings per run
      Engine engine(os, options);
      ASSERT_TRUE(engine.start().ok());
      result = run_echo_workload(os, engine, w);
    });
    ASSERT_TRUE(run.ok()) << "seed " << seed << " " << sim.parameters() << ": " << run.to_string()
                          << "\n"
                          << sim.describe_threads();
    SCOPED_TRACE("seed " + std::to_string(seed) + " " + sim.parameters());
    expect_all_echoed(w, result);
    EXPECT_EQ(os.stats().sockets_open, 0u);
    EXPECT_EQ(os.stats().registrations_live, 0u);
    if (HasFatalFailure() || HasNonfatalFailure()) {
      return;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(ModesAndStrategies, EchoSimTest,
                         testing::Values(SimCase{Mode::kOneshotLevel, SimStrategy::kRandom},
                                         SimCase{Mode::kOneshotLevel, SimStrategy::kPct},
                                         SimCase{Mode::kPersistentLevel, SimStrategy::kRandom},
                                         SimCase{Mode::kPersistentLevel, SimStrategy::kPct},
                                         SimCase{Mode::kPersistentEdge, SimStrategy::kRandom},
                                         SimCase{Mode::kPersistentEdge, SimStrategy::kPct}),
                         [](const testing::TestParamInfo<SimCase>& param_info) {
                           return std::string(mode_name(param_info.param.mode)) + "_" +
                                  sim_strategy_name(param_info.param.strategy);
                         });

TEST(EchoFreeRuntimeTest, RealThreadsEveryByteEchoed) {
  for (const Mode mode : {Mode::kOneshotLevel, Mode::kPersistentLevel, Mode::kPersistentEdge}) {
    SCOPED_TRACE(mode_name(mode));
    FreeRuntime runtime;
    FakeOptions fake_options;
    fake_options.receive_buffer_bytes = 2000;
    FakeOs os(fake_options, runtime);
    EchoWorkload w;
    w.clients = 16;
    w.clients_concurrent = 8;
    w.bytes_per_client = 8000;
    w.workers = 4;
    w.mode = mode;
    Engine engine(os, echo_engine_options(w));
    ASSERT_TRUE(engine.start().ok());
    runtime.run([&] { expect_all_echoed(w, run_echo_workload(os, engine, w)); });
    EXPECT_EQ(os.stats().sockets_open, 0u);
  }
}

}  // namespace
}  // namespace readyport
