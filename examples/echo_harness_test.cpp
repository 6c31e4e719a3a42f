// The example echo server (echo_server.hpp, Microsoft's sample shape) as an embedder's server under
// the harness (readyport/fake/harness.hpp, as a GoogleTest test: harness_gtest.hpp): its default
// seeds with faults, judged by both oracles and the end checks; the same on real threads.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "echo_server.hpp"
#include "readyport/fake/echo_clients.hpp"
#include "readyport/fake/harness.hpp"
#include "readyport/fake/harness_gtest.hpp"

namespace readyport {
namespace {

// The engine, the example's server on it, and two workers.
class ExampleScenario final : public Scenario {
 public:
  ~ExampleScenario() override { (void)stop_all(); }

  Status start(ScenarioContext& ctx) override {
    engine_ = std::make_unique<Engine>(ctx.os(), EngineOptions{});
    if (Status s = engine_->start(); !s.ok()) {
      return s;
    }
    server_ = std::make_unique<EchoServer>(ctx.os(), *engine_, EchoServerOptions{});
    Result<Ipv4Address> address = server_->start();
    if (!address.ok()) {
      return address.status();
    }
    address_ = address.value();
    for (int i = 0; i < 2; ++i) {
      Result<std::unique_ptr<Thread>> worker =
          ctx.os().thread_start("worker", [this] { (void)engine_->run_worker(); });
      if (!worker.ok()) {
        return worker.status();
      }
      workers_.push_back(std::move(worker.value()));
    }
    return Status();
  }
  Status drive(ScenarioContext& ctx) override { return echo_clients(ctx, address_); }
  Status stop(ScenarioContext& /*ctx*/) override { return stop_all(); }

 private:
  // Stops the engine (it closes the listener and every connection), joins the workers.
  Status stop_all() {
    Status stopped = engine_ ? engine_->stop() : Status();
    for (std::unique_ptr<Thread>& worker : workers_) {
      worker->join();
    }
    workers_.clear();
    return stopped;
  }

  std::unique_ptr<Engine> engine_;
  std::unique_ptr<EchoServer> server_;  // destroyed before the engine, after it stopped
  std::vector<std::unique_ptr<Thread>> workers_;
  Ipv4Address address_;
};

// Its default seeds with faults. The options come from the environment (READYPORT_TEST_SEED,
// READYPORT_TEST_SEEDS, ...), so the replay command a failure prints runs that seed again.
READYPORT_HARNESS_TEST(EchoServerUnderTheHarness, PassesItsDefaultSeeds, ExampleScenario)

// The same on real threads (under ThreadSanitizer in its leg): 20 seeds.
HarnessOptions on_real_threads() {
  HarnessOptions options;
  options.seeds = 20;
  options.runtime = HarnessRuntime::kFree;
  return options;
}
READYPORT_HARNESS_TEST_WITH(EchoServerUnderTheHarness, PassesOnRealThreads, ExampleScenario,
                            on_real_threads())

}  // namespace
}  // namespace readyport
