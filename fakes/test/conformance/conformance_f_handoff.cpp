// Conformance, rule F1 of docs/rules.md from several threads: the hand-off. A packet queued while
// threads wait is passed to the most recent waiter when it is released, so packets posted back to
// back reach the waiters most-recent-first, and a thread that polls after the post cannot take
// the packet passed to a released waiter (handoff_scenarios.hpp says what each backend is held
// to). On FakeOs with its inline runtime these skip (one thread); the same scenarios run on the
// fake under SimScheduler in conformance_fake_threads_test.cpp, and on Windows here.
#include "conformance/backend.hpp"
#include "conformance/handoff_scenarios.hpp"

namespace readyport::conformance {
namespace {

TEST_P(PsnConformance, F1_BackToBackPacketsReachWaitersLifo) {
  SCOPED_TRACE("rule F1");
  scenario_f1_back_to_back_packets_go_lifo(os(), is_fake());
}

TEST_P(PsnConformance, F1_PollAfterPostDoesNotStealHandedPacket) {
  SCOPED_TRACE("rule F1");
  scenario_f1_poll_after_post_does_not_steal(os(), is_fake());
}

TEST_P(PsnConformance, F1_MorePacketsThanWaiters) {
  SCOPED_TRACE("rule F1");
  scenario_f1_more_packets_than_waiters(os(), is_fake());
}

TEST_P(PsnConformance, F1_SocketPacketHandedToWaiter) {
  SCOPED_TRACE("rule F1");
  scenario_f1_socket_packet_handed_to_waiter(os(), is_fake());
}

}  // namespace
}  // namespace readyport::conformance
