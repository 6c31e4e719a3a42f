// The --os windows world (real_os_run.hpp) on this machine: its parameters within the budget,
// and whole seeds over a stand-in real Os (FakeOs on real threads, FreeRuntime), judged as on
// Windows (the oracle on intervals, workload checks, engine stats, the socket ledger).
#include "runs/real_os_run.hpp"

#include <gtest/gtest.h>

#include <string>

#include "readyport/fake/fake_os.hpp"
#include "readyport/fake/free_runtime.hpp"
#include "readyport/fake/socket_ledger_os.hpp"

namespace readyport {
namespace {

StressOptions windows_options() {
  StressOptions options;
  options.os = StressOs::kWindows;
  options.runtime = StressRuntime::kFree;
  return options;
}

TEST(RealOsRunTest, ParametersFitTheBudgetAndLeaveOutWhatNeedsTheFake) {
  const StressOptions options = windows_options();
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const SeedParameters simulated = stress_parameters(options, seed);
    Result<SeedParameters> real = stress_parameters_real(options, seed, RealOsBudget{300, 60'000});
    ASSERT_TRUE(real.ok()) << real.status().to_string();
    const ChaosWorkload& w = real.value().workload;
    EXPECT_EQ(w.weight_behind, 0u) << seed;
    EXPECT_EQ(w.clients, simulated.workload.clients) << seed;  // the budget is ample
    EXPECT_LE(w.settle_limit_ms, 30'000u);
    EXPECT_TRUE(chaos_workload_check(w).ok()) << seed;
    EXPECT_EQ(real.value().plan, simulated.plan.restricted_to(stress_real_os_fault_sites()));
    // A tight budget: the liveness clients and at least one chaos client, nothing more.
    const std::uint32_t tight = simulated.workload.liveness_clients + 1;
    Result<SeedParameters> capped =
        stress_parameters_real(options, seed, RealOsBudget{tight, 60'000});
    ASSERT_TRUE(capped.ok()) << capped.status().to_string();
    EXPECT_EQ(capped.value().workload.clients + capped.value().workload.peers +
                  capped.value().workload.liveness_clients,
              tight)
        << seed;
    EXPECT_TRUE(chaos_workload_check(capped.value().workload).ok()) << seed;
    Result<SeedParameters> none =
        stress_parameters_real(options, seed, RealOsBudget{tight - 1, 60'000});
    EXPECT_EQ(none.status().code(), StatusCode::kResourceExhausted) << seed;
    EXPECT_EQ(stress_parameters_real(options, seed, RealOsBudget{300, 10}).status().code(),
              StatusCode::kResourceExhausted);
  }
}

TEST(RealOsRunTest, SeedsPassOverAStandInRealOs) {
  const StressOptions options = windows_options();
  std::uint64_t faults_fired = 0;
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    // The stand-in's clock is virtual and moves only when every thread waits, so its short
    // liveness bounds (seconds, as on Windows, where they are real) hold however the machine
    // schedules the threads.
    FreeRuntime runtime;
    FakeOs os(FakeOptions{}, runtime);
    Result<SeedParameters> parameters =
        stress_parameters_real(options, seed, RealOsBudget{300, 60'000});
    ASSERT_TRUE(parameters.ok());
    SeedReport report;
    runtime.run([&] { report = stress_run_seed_real(options, parameters.value(), os); });
    ASSERT_TRUE(report.status.ok()) << "seed " << seed << ": " << report.status.to_string();
    EXPECT_GT(report.trace_lines, 0u);
    EXPECT_GT(report.engine.port_calls, 0u);
    EXPECT_GT(report.oracle.handler_entries, 0u);
    EXPECT_TRUE(report.trace_text.empty());  // kept for failures only
    EXPECT_EQ(os.stats().sockets_open, 0u);  // what the ledger checked, by the fake's own count
    EXPECT_EQ(os.stats().ports_open, 0u);
    for (const auto& [row, count] : report.coverage) {
      if (row.rfind("fault.", 0) == 0) {
        faults_fired += count;
      }
    }
  }
  EXPECT_GT(faults_fired, 0u);  // the plans drawn for a real OS do fire
}

TEST(RealOsRunTest, TheLedgerNamesWhatWasLeftOpen) {
  FreeRuntime runtime;
  FakeOs fake(FakeOptions{}, runtime);
  SocketLedgerOs ledger(fake);
  const Socket a = ledger.socket(kAfInet, kSockStream, kIpprotoTcp);
  const Socket b = ledger.socket(kAfInet, kSockStream, kIpprotoTcp);
  ASSERT_NE(a, kInvalidSocket);
  ASSERT_EQ(ledger.closesocket(a), 0);
  const Status leak = ledger.check_closed();
  EXPECT_EQ(leak.code(), StatusCode::kInternal);
  EXPECT_NE(leak.message().find("s=" + std::to_string(b)), std::string::npos) << leak.message();
  ASSERT_EQ(ledger.closesocket(b), 0);
  EXPECT_TRUE(ledger.check_closed().ok());
}

TEST(RealOsRunTest, WindowsOsIsCreatedOnlyInAWindowsBuild) {
  if (stress_windows_build()) {
    GTEST_SKIP() << "a Windows build: the driver's own test runs it";
  }
  EXPECT_EQ(stress_windows_os_create().status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace readyport
