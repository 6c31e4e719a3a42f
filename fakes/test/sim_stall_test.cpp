// Stalls (sim_stall.hpp, SimOptions::stalls): the thread that took a stall's step is not picked
// while another thread can run, under every strategy and mechanism; it runs again once it alone
// can (no deadlock of its own making); the stalls are part of parameters() and of the trace; the
// text form parses, sorts and refuses what is not a stall.
#include "readyport/fake/sim_stall.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "readyport/fake/sim_scheduler.hpp"
#include "readyport/fake/trace.hpp"
#include "sim_harness.hpp"

namespace readyport {
namespace {

using test::ParkHarness;

constexpr int kPoints = 12;

struct StalledRun {
  std::vector<std::uint32_t> order;  // the thread of each point of threads 2 and 3, in order
  std::uint32_t stalled = 0;         // the thread the trace's sched.stall names (0: none)
  std::string parameters;
  bool ok = false;
};

// Threads 2 and 3 take kPoints points each; main joins them. A stall at `step` for `steps`.
StalledRun run_stalled(SimStrategy strategy, SimMechanism mechanism, std::uint64_t step,
                       std::uint64_t steps) {
  Trace trace;
  SimOptions options;
  options.seed = 7;
  options.strategy = strategy;
  options.mechanism = mechanism;
  options.trace = &trace;
  options.stalls = {SimStall{step, steps}};
  SimScheduler sim(options);
  ParkHarness harness(sim);
  StalledRun run;
  auto body = [&] {
    for (int i = 0; i < kPoints; ++i) {
      run.order.push_back(sim.thread_current());
      harness.point();
    }
  };
  run.ok = sim.run([&] {
                Result<std::unique_ptr<Thread>> a = sim.thread_start("a", body);
                Result<std::unique_ptr<Thread>> b = sim.thread_start("b", body);
                READYPORT_ASSERT(a.ok() && b.ok());
                a.value()->join();
                b.value()->join();
              })
               .ok();
  run.parameters = sim.parameters();
  const std::string text = trace.text();
  const std::size_t at = text.find("sched.stall T");
  if (at != std::string::npos) {
    run.stalled = static_cast<std::uint32_t>(std::stoul(text.substr(at + 13)));
  }
  return run;
}

class SimStallTest : public ::testing::TestWithParam<SimMechanism> {};

// A stall longer than the run: once the stalled thread stopped, the other one takes every point
// left to it before the stalled one takes another; then the stalled one finishes alone.
TEST_P(SimStallTest, AStalledThreadWaitsWhileAnotherCanRunThenRunsAlone) {
  for (const SimStrategy strategy :
       {SimStrategy::kRandom, SimStrategy::kPct, SimStrategy::kRoundRobin,
        SimStrategy::kDelayBounded, SimStrategy::kFair}) {
    SCOPED_TRACE(sim_strategy_name(strategy));
    // Step 9: both workers are past their start and main is parked in its join.
    const StalledRun run = run_stalled(strategy, GetParam(), 9, 100'000);
    ASSERT_TRUE(run.ok);
    ASSERT_TRUE(run.stalled == 2 || run.stalled == 3) << "stalled T" << run.stalled;
    ASSERT_EQ(run.order.size(), 2u * kPoints);
    const std::uint32_t other = run.stalled == 2 ? 3 : 2;
    // The stalled thread's last point before the stall: from then on the other runs to its end.
    std::size_t last_other = 0;
    for (std::size_t i = 0; i < run.order.size(); ++i) {
      if (run.order[i] == other) {
        last_other = i;
      }
    }
    std::size_t stalled_before = 0;
    for (std::size_t i = 0; i < last_other; ++i) {
      stalled_before += run.order[i] == run.stalled ? 1 : 0;
    }
    // It took at most a few points before step 9, and every other one after the other's last.
    EXPECT_LT(stalled_before, static_cast<std::size_t>(kPoints));
    for (std::size_t i = last_other + 1; i < run.order.size(); ++i) {
      EXPECT_EQ(run.order[i], run.stalled) << "point " << i;
    }
    EXPECT_EQ(run.order.size() - 1 - last_other, kPoints - stalled_before);
    EXPECT_NE(run.parameters.find(" stalls=9:100000 "), std::string::npos) << run.parameters;
  }
}

// Round robin alternates 2, 3, 2, 3, ...; a stall of 4 steps at step 9 (thread 3's) holds it back
// for those steps only: thread 2 takes 4 points in a row, then they alternate again until thread 2
// is done, and thread 3 takes the points it lost alone.
TEST_P(SimStallTest, AShortStallEndsAfterItsSteps) {
  const auto text = [](const StalledRun& run) {
    std::string s;
    for (const std::uint32_t id : run.order) {
      s += std::to_string(id);
    }
    return s;
  };
  const StalledRun plain = run_stalled(SimStrategy::kRoundRobin, GetParam(), 1'000'000, 1);
  const StalledRun stalled = run_stalled(SimStrategy::kRoundRobin, GetParam(), 9, 4);
  ASSERT_TRUE(plain.ok && stalled.ok);
  EXPECT_EQ(plain.stalled, 0u);  // its step never came
  EXPECT_EQ(text(plain), "232323232323232323232323");
  EXPECT_EQ(stalled.stalled, 3u);
  EXPECT_EQ(text(stalled), "232323232222323232323333");
}

INSTANTIATE_TEST_SUITE_P(Mechanisms, SimStallTest,
                         ::testing::Values(SimMechanism::kThreads, SimMechanism::kFibers),
                         [](const ::testing::TestParamInfo<SimMechanism>& param) {
                           return std::string(sim_mechanism_name(param.param));
                         });

TEST(SimStallText, ParsesSortsAndPrintsBack) {
  Result<std::vector<SimStall>> none = sim_stalls_parse("");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none.value().empty());
  ASSERT_TRUE(sim_stalls_parse("none").ok());
  EXPECT_TRUE(sim_stalls_parse("none").value().empty());
  Result<std::vector<SimStall>> two = sim_stalls_parse("6761:2000,6752:300");
  ASSERT_TRUE(two.ok()) << two.status().to_string();
  EXPECT_EQ(two.value(), (std::vector<SimStall>{{6752, 300}, {6761, 2000}}));
  EXPECT_EQ(sim_stalls_text(two.value()), "6752:300,6761:2000");
  EXPECT_EQ(sim_stalls_text({}), "");
}

TEST(SimStallText, RefusesWhatIsNotAStallNamingTheToken) {
  const std::pair<const char*, const char*> bad[] = {
      {"5", "'5': not step:steps"},
      {"0:3", "'0:3': the step is not"},
      {"5:0", "'5:0': the steps are not a decimal from 1 to 1000000"},
      {"5:1000001", "'5:1000001': the steps are not"},
      {"5:3,5:4", "'5:4': step 5 is given twice"},
      {"a:3", "'a:3': the step is not"},
      {"-1:3", "'-1:3': the step is not"},
      {"5:3,", "'': not step:steps"},
      {"5:+3", "'5:+3': the steps are not"},
      {"99999999999999999999:1", "the step is not a decimal from 1 to 2^64-1"},
  };
  for (const auto& [text, why] : bad) {
    const Result<std::vector<SimStall>> parsed = sim_stalls_parse(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(parsed.status().message().find(why), std::string::npos)
        << text << ": " << parsed.status().message();
  }
  std::string many;
  for (std::size_t i = 1; i <= kSimStallsMax + 1; ++i) {
    many += (i > 1 ? "," : "") + std::to_string(i) + ":1";
  }
  const Result<std::vector<SimStall>> parsed = sim_stalls_parse(many);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("more than 16 stalls"), std::string::npos)
      << parsed.status().message();
}

}  // namespace
}  // namespace readyport
