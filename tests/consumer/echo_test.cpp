// tests/consumer/echo_test.cpp: the consumer's echo server under readyport's harness: 200 seeds
// with faults, both oracles, replay and shrinking (docs/testing-your-server.md walks through it).
#include "echo_server.hpp"
#include "readyport/fake/echo_clients.hpp"
#include "readyport/fake/harness_gtest.hpp"

// doc-snippet: docs/testing-your-server.md scenario begin
class EchoScenario final : public readyport::Scenario {
 public:
  readyport::Status start(readyport::ScenarioContext& ctx) override {
    server_ = std::make_unique<consumer::EchoServer>(ctx.os());
    return server_->start();
  }
  readyport::Status drive(readyport::ScenarioContext& ctx) override {
    return readyport::echo_clients(ctx, server_->address());
  }
  readyport::Status stop(readyport::ScenarioContext&) override { return server_->stop(); }

 private:
  std::unique_ptr<consumer::EchoServer> server_;
};

READYPORT_HARNESS_TEST(EchoServer, EchoesEveryByteUnderFaults, EchoScenario)
// doc-snippet: scenario end
