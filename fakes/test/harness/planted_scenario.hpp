// The harness's scenario over the echo server under test (echo_under_test.hpp): the server with
// one planted bug (or none), `clients` echo clients per phase (echo_clients.hpp; two by default),
// and its stop.
//
// Ownership: the scenario owns the server. Threading and errors: as Scenario (harness.hpp).
#pragma once

#include <cstdint>
#include <memory>

#include "echo_under_test.hpp"
#include "readyport/fake/echo_clients.hpp"
#include "readyport/fake/harness.hpp"

namespace readyport::harness_test {

class PlantedScenario : public Scenario {
 public:
  explicit PlantedScenario(PlantedBug bug, std::uint32_t clients = 2)
      : bug_(bug), clients_(clients) {}
  Status start(ScenarioContext& ctx) override {
    server_ = std::make_unique<EchoUnderTest>(ctx.os(), bug_);
    return server_->start();
  }
  Status drive(ScenarioContext& ctx) override {
    EchoClientsOptions clients;
    clients.clients = clients_;
    clients.bytes = 2000;
    return echo_clients(ctx, server_->address(), clients);
  }
  Status stop(ScenarioContext& /*ctx*/) override { return server_->stop(); }

 private:
  const PlantedBug bug_;
  const std::uint32_t clients_;
  std::unique_ptr<EchoUnderTest> server_;
};

// A factory of the scenario with `bug` planted.
inline ScenarioFactory planted_scenario(PlantedBug bug) {
  return [bug] { return std::make_unique<PlantedScenario>(bug); };
}

}  // namespace readyport::harness_test
