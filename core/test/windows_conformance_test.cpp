// windows_conformance_test.cpp: the backend-agnostic conformance scenarios against WindowsOs.
//
// The scenarios (fakes/test/conformance, linked in as an object library) are written against
// `Os&` only; here they run on real loopback sockets and the real ProcessSocketNotifications, so
// the fake is checked against Windows. Each scenario names its rule ID in its test name and in a
// SCOPED_TRACE: where the fake and Windows disagree, the failing test output names the rule.
//
// Where ProcessSocketNotifications is missing (Wine 8, Windows before build 20348), make() returns
// the factory's Status and every scenario skips with that message (spec G1, G2).

#include <gtest/gtest.h>

#include <memory>
#include <utility>

#include "conformance/backend.hpp"
#include "readyport/os.hpp"
#include "readyport/status.hpp"
#include "readyport/windows_os.hpp"

namespace readyport::conformance {
namespace {

Backend windows_backend() {
  Backend backend;
  backend.name = "Windows";
  backend.is_fake = false;
  backend.make = []() -> Result<std::unique_ptr<Os>> {
    Result<std::unique_ptr<WindowsOs>> made = WindowsOs::create();
    if (!made.ok()) {
      return made.status();
    }
    return std::unique_ptr<Os>(std::move(made).value());
  };
  return backend;
}

INSTANTIATE_TEST_SUITE_P(Windows, PsnConformance, ::testing::Values(windows_backend()),
                         conformance_backend_name);

}  // namespace
}  // namespace readyport::conformance
