// The conformance suite instantiated for FakeOs with its default options (the spec's "Fake
// defaults") and the inline runtime: one thread, virtual time. Scenarios that need several
// threads skip here with a message; the scheduler's tests cover parked waiters in the fake.
#include <memory>

#include "conformance/backend.hpp"
#include "readyport/fake/fake_os.hpp"

namespace readyport::conformance {
namespace {

Backend fake_backend() {
  return Backend{"Fake", true, []() -> Result<std::unique_ptr<Os>> {
                   return std::unique_ptr<Os>(std::make_unique<FakeOs>(FakeOptions{}));
                 }};
}

INSTANTIATE_TEST_SUITE_P(Fake, PsnConformance, ::testing::Values(fake_backend()),
                         conformance_backend_name);

}  // namespace
}  // namespace readyport::conformance
