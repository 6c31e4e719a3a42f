// The pinned canary counterexamples. See engine_pinned.hpp.
#include "engine_pinned.hpp"

namespace readyport::properties {
namespace {

using K = EngineCommandKind;

EngineCommand cmd(K kind, std::uint32_t conn = 0, std::uint32_t value = 0,
                  Mode mode = Mode::kOneshotLevel, Interest interest = kInterestIn,
                  FaultSite site = FaultSite::kPsnRemoveFails) {
  EngineCommand c;
  c.kind = kind;
  c.conn = conn;
  c.value = value;
  c.mode = mode;
  c.interest = interest;
  c.site = site;
  return c;
}

std::vector<PinnedCase> make() {
  std::vector<PinnedCase> cases;
  // Each as the property printed it (docs/properties.md has the runs).
  cases.push_back({"free_before_remove", "O12",
                   EngineCase{195,
                              2,
                              1,
                              {cmd(K::kAdd, 0, 0, Mode::kPersistentLevel,
                                   static_cast<Interest>(kInterestIn | kInterestOut)),
                               cmd(K::kCloseInside, 0, 1)}}});
  cases.push_back(
      {"remove_failure_as_done", "O12",
       EngineCase{216224,
                  2,
                  4,
                  {cmd(K::kArm, 0, 0, Mode::kOneshotLevel, kInterestIn, FaultSite::kPsnRemoveFails),
                   cmd(K::kAdd, 0, 0, Mode::kOneshotLevel, kInterestAll)}}});
  cases.push_back(
      {"dispatch_after_close", "O2",
       EngineCase{1862,
                  2,
                  4,
                  {cmd(K::kAdd, 0, 0, Mode::kPersistentLevel, kInterestAll),
                   cmd(K::kNotify, 0, kSockNotifyEventIn | kSockNotifyEventOut), cmd(K::kClose, 0),
                   cmd(K::kNotify, 0, kSockNotifyEventIn | kSockNotifyEventOut)}}});
  cases.push_back({"double_remove", "O7",
                   EngineCase{269023,
                              2,
                              4,
                              {cmd(K::kAdd, 0, 0, Mode::kPersistentEdge, kInterestAll),
                               cmd(K::kPost), cmd(K::kClose, 0), cmd(K::kClose, 0)}}});
  // PINNED-END
  return cases;
}

}  // namespace

const std::vector<PinnedCase>& pinned_cases() {
  static const std::vector<PinnedCase> cases = make();
  return cases;
}

const PinnedCase* pinned_case(const std::string& canary) {
  for (const PinnedCase& p : pinned_cases()) {
    if (p.canary == canary) return &p;
  }
  return nullptr;
}

}  // namespace readyport::properties
