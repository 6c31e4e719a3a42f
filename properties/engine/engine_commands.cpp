// The engine property's generators. See engine_commands.hpp.
#include "engine_commands.hpp"

#include <cstddef>
#include <tuple>
#include <utility>
#include <vector>

namespace readyport::properties {

rc::Gen<EngineCommand> gen_engine_command() {
  using K = EngineCommandKind;
  // Weights: adds and peer traffic often, closes and faults regularly.
  const auto kind = rc::gen::weightedElement<K>({{14, K::kAdd},
                                                 {14, K::kPeerSend},
                                                 {4, K::kPeerShutdown},
                                                 {4, K::kPeerReset},
                                                 {10, K::kClose},
                                                 {6, K::kCloseInside},
                                                 {8, K::kNotify},
                                                 {6, K::kPost},
                                                 {12, K::kArm},
                                                 {14, K::kRun},
                                                 {2, K::kAddAgain},
                                                 {2, K::kCloseForeign},
                                                 {2, K::kStopInside}});
  const auto mode = rc::gen::element(Mode::kOneshotLevel, Mode::kPersistentLevel,
                                     Mode::kPersistentEdge, Mode::kOneshotEdge);
  const auto interest =
      rc::gen::element(kInterestIn, static_cast<Interest>(kInterestIn | kInterestHangup),
                       static_cast<Interest>(kInterestIn | kInterestOut), kInterestAll);
  // Sites a command can reach: the engine's port calls and posts, and the handler's socket
  // calls (the director's own peers and the setup do not go through FaultyOs).
  const auto site = rc::gen::element(
      FaultSite::kPsnRemoveFails, FaultSite::kPsnCallFails, FaultSite::kPsnEnableFails,
      FaultSite::kPsnWaitShort, FaultSite::kPsnDequeueFewer, FaultSite::kPostFails,
      FaultSite::kRecvWouldblock, FaultSite::kSendWouldblock, FaultSite::kRecvConnreset,
      FaultSite::kSendConnreset, FaultSite::kSendNobufs, FaultSite::kCloseAbortive);
  return rc::gen::map(
      rc::gen::tuple(kind, rc::gen::inRange<std::uint32_t>(0, 8),
                     rc::gen::inRange<std::uint32_t>(1, 3000), mode, interest, site),
      [](const std::tuple<K, std::uint32_t, std::uint32_t, Mode, Interest, FaultSite>& t) {
        EngineCommand c;
        c.kind = std::get<0>(t);
        c.conn = std::get<1>(t);
        c.value = std::get<2>(t);
        c.mode = std::get<3>(t);
        c.interest = std::get<4>(t);
        c.site = std::get<5>(t);
        if (c.kind == K::kRun) {
          c.value = 1 + c.value % 50;  // 1..50 ms
        }
        if (c.kind == K::kCloseForeign) {
          c.value %= 64;  // a slot of a small table
        }
        if (c.kind == K::kNotify) {
          c.value = kSockNotifyEventIn | ((c.value & 1) != 0 ? kSockNotifyEventOut : 0) |
                    ((c.value & 2) != 0 ? kSockNotifyEventHangup : 0) |
                    ((c.value & 4) != 0 ? kSockNotifyEventErr : 0);
        }
        return c;
      });
}

namespace {

// Half the cases: 2 or 3 branches of 1..kEngineBranchCommandsMax commands (shrinking towards no
// branches, then towards 2 branches and shorter ones).
rc::Gen<std::vector<std::vector<EngineCommand>>> gen_branches() {
  return rc::gen::exec([] {
    std::vector<std::vector<EngineCommand>> branches;
    if (!*rc::gen::arbitrary<bool>()) {
      return branches;
    }
    const std::size_t count = *rc::gen::inRange<std::size_t>(2, kEngineBranchesMax + 1);
    for (std::size_t b = 0; b < count; ++b) {
      const std::size_t size = *rc::gen::inRange<std::size_t>(1, kEngineBranchCommandsMax + 1);
      branches.push_back(
          *rc::gen::container<std::vector<EngineCommand>>(size, gen_engine_command()));
    }
    return branches;
  });
}

rc::Gen<EngineCase> gen_engine_case_plain() {
  return rc::gen::map(
      rc::gen::tuple(rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()),
                     rc::gen::inRange<std::uint32_t>(2, 4), rc::gen::element(64u, 1u, 4u),
                     rc::gen::container<std::vector<EngineCommand>>(gen_engine_command()),
                     gen_branches()),
      [](const std::tuple<std::uint64_t, std::uint32_t, std::uint32_t, std::vector<EngineCommand>,
                          std::vector<std::vector<EngineCommand>>>& t) {
        EngineCase c;
        c.seed = std::get<0>(t);
        c.workers = std::get<1>(t);
        c.batch_count = std::get<2>(t);
        c.commands = std::get<3>(t);
        c.branches = std::get<4>(t);
        return c;
      });
}

}  // namespace

std::vector<EngineCase> engine_case_branch_shrinks(const EngineCase& c) {
  std::vector<EngineCase> shrinks;
  for (std::size_t b = 0; b < c.branches.size(); ++b) {
    EngineCase without = c;  // the whole branch removed
    without.branches.erase(without.branches.begin() + static_cast<std::ptrdiff_t>(b));
    shrinks.push_back(std::move(without));
  }
  for (std::size_t b = 0; b < c.branches.size(); ++b) {
    EngineCase moved = c;  // its first command moved to the end of the prefix
    moved.commands.push_back(moved.branches[b].front());
    moved.branches[b].erase(moved.branches[b].begin());
    if (moved.branches[b].empty()) {
      moved.branches.erase(moved.branches.begin() + static_cast<std::ptrdiff_t>(b));
    }
    shrinks.push_back(std::move(moved));
  }
  for (std::size_t b = 0; b < c.branches.size(); ++b) {
    for (std::size_t i = 0; i < c.branches[b].size(); ++i) {
      EngineCase fewer = c;  // one command of a branch removed
      fewer.branches[b].erase(fewer.branches[b].begin() + static_cast<std::ptrdiff_t>(i));
      if (fewer.branches[b].empty()) {
        fewer.branches.erase(fewer.branches.begin() + static_cast<std::ptrdiff_t>(b));
      }
      shrinks.push_back(std::move(fewer));
    }
  }
  for (std::size_t i = 0; !c.branches.empty() && i < c.commands.size(); ++i) {
    EngineCase fewer = c;  // one command of the prefix removed (after a move, see the header)
    fewer.commands.erase(fewer.commands.begin() + static_cast<std::ptrdiff_t>(i));
    shrinks.push_back(std::move(fewer));
  }
  return shrinks;
}

rc::Gen<EngineCase> gen_engine_case() {
  const rc::Gen<EngineCase> plain = gen_engine_case_plain();
  return rc::Gen<EngineCase>([plain](const rc::Random& random, int size) {
    return rc::shrinkable::postShrink(plain(random, size), [](const EngineCase& c) {
      return rc::seq::fromContainer(engine_case_branch_shrinks(c));
    });
  });
}

}  // namespace readyport::properties
