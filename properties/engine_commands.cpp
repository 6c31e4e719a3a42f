// The engine property's generators. See engine_commands.hpp.
#include "engine_commands.hpp"

#include <tuple>
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

rc::Gen<EngineCase> gen_engine_case() {
  return rc::gen::map(
      rc::gen::tuple(rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>()),
                     rc::gen::inRange<std::uint32_t>(2, 4), rc::gen::element(64u, 1u, 4u),
                     rc::gen::container<std::vector<EngineCommand>>(gen_engine_command())),
      [](const std::tuple<std::uint64_t, std::uint32_t, std::uint32_t, std::vector<EngineCommand>>&
             t) {
        EngineCase c;
        c.seed = std::get<0>(t);
        c.workers = std::get<1>(t);
        c.batch_count = std::get<2>(t);
        c.commands = std::get<3>(t);
        return c;
      });
}

}  // namespace readyport::properties
