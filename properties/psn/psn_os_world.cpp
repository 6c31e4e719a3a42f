// PsnOsWorld: the generic PsnWorld over a borrowed Os, judged by the set of models.
#include "psn_os_world.hpp"

namespace readyport::properties {

PsnOsWorld::PsnOsWorld(Os& os, const FakeOptions& model_options, int sockets_count, int ports_count,
                       std::uint32_t settle_ms)
    // The rule checkers are unused here (no rule): their disarm setting does not matter.
    : PsnWorld(OneshotDisarm::kAtDequeue, std::nullopt, false),
      os_(os),
      models_(model_options, sockets_count, ports_count),
      settle_ms_(settle_ms) {
  populate(sockets_count, ports_count);
}

PsnOsWorld::~PsnOsWorld() { release(); }

void PsnOsWorld::settle() {
  if (settle_ms_ > 0) {
    os_.sleep_ms(settle_ms_);
  }
}

}  // namespace readyport::properties
