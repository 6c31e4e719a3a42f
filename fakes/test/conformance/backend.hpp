// conformance/backend.hpp: the backend-agnostic conformance fixture.
//
// Every scenario of the conformance suite is written against `Os&` only and runs once per backend:
// FakeOs here (conformance_fake_main.cpp), WindowsOs on Windows
// (core/test/windows_conformance_test.cpp).
//
//   TEST_P(PsnConformance, C2_OneShotDisarmsAllDirections) {
//     SCOPED_TRACE("rule C2"); Os& os = this->os(); ...
//   }
//   INSTANTIATE_TEST_SUITE_P(Fake, PsnConformance, ::testing::Values(fake_backend()),
//                            conformance_backend_name);
//
// A backend that cannot run here (WindowsOs under Wine: no ProcessSocketNotifications) returns a
// Status from make(); every scenario then skips with that message. Scenarios name their rule ID in
// the test name and in a SCOPED_TRACE, so a disagreement between the fake and Windows names it.
// Timeouts in scenarios stay short (tens of ms): on Windows they are real time.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include <gtest/gtest.h>

#include "readyport/os.hpp"
#include "readyport/status.hpp"

namespace readyport::conformance {

struct Backend {
  std::string name;  // a C identifier: "Fake", "Windows"
  bool is_fake = false;
  // A fresh Os for one test, or why this backend cannot run on this machine.
  std::function<Result<std::unique_ptr<Os>>()> make;
};

inline std::string conformance_backend_name(const ::testing::TestParamInfo<Backend>& info) {
  return info.param.name;
}

// GoogleTest prints a failing test's parameter with this ("where GetParam() = Fake") instead of
// the bytes of the struct.
inline void PrintTo(const Backend& backend, std::ostream* out) { *out << backend.name; }

class PsnConformance : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<Os>> made = GetParam().make();
    if (!made.ok()) {
      GTEST_SKIP() << GetParam().name << " backend unavailable: " << made.status().to_string();
    }
    os_ = std::move(made).value();
  }
  Os& os() { return *os_; }
  bool is_fake() const { return GetParam().is_fake; }

 private:
  std::unique_ptr<Os> os_;
};

}  // namespace readyport::conformance
