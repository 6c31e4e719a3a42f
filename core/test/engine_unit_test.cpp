// Unit tests: the exact call sequence of each lifetime path, against a strict GoogleMock Os.
// Each test pins the Os calls in order (InSequence); any other call fails the test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <thread>

#include "engine_test_util.hpp"
#include "mock_os.hpp"
#include "readyport/engine.hpp"
#include "readyport/internal/engine_tuning.hpp"
#include "readyport/internal/slot_table.hpp"

namespace readyport::test {
namespace {

using testing::_;
using testing::InSequence;
using testing::Return;
using testing::StrictMock;

constexpr Port kPort{0x77};
constexpr Socket kSockA = 0x100;
constexpr Socket kSockB = 0x104;
constexpr std::uint32_t kCapacity = 4;
constexpr std::uint32_t kWait = 100;  // poll timeout used by the tests
constexpr std::uint32_t kBatch = 64;

std::uintptr_t key(std::uint32_t slot, std::uint32_t generation = 1) {
  return internal::completion_key_for(ConnId{slot, generation}, kCapacity);
}

class EngineUnitTest : public testing::Test {
 protected:
  EngineUnitTest() {
    allow_mutexes(os_);
    options_.connections_max = kCapacity;
    options_.batch_count = kBatch;
  }

  void start() {
    EXPECT_CALL(os_, create_io_completion_port(0)).WillOnce(Return(kPort));
    engine_ = std::make_unique<Engine>(os_, options_);
    ASSERT_TRUE(engine_->start().ok());
  }

  // Expects the registrations-only call of add() (spec A4) and returns `result` in it.
  void expect_add_call(Socket socket, std::uintptr_t k, std::uint16_t filter, std::uint8_t flags,
                       std::uint32_t result = 0) {
    EXPECT_CALL(os_, process_socket_notifications(kPort, 1, _, 0, 0, nullptr, nullptr))
        .With(RegsAre(std::vector{enable(socket, k, filter, flags)}))
        .WillOnce(Psn({result}, {}, kErrorSuccess));
  }
  // Expects one driver call (registrations + dequeue of up to kBatch entries, waiting kWait).
  void expect_driver_call(std::vector<SockNotifyRegistration> regs,
                          std::vector<std::uint32_t> results, std::vector<OverlappedEntry> entries,
                          std::uint32_t code = kErrorSuccess, std::uint32_t timeout = kWait) {
    EXPECT_CALL(os_, process_socket_notifications(kPort, static_cast<std::uint32_t>(regs.size()), _,
                                                  timeout, kBatch, _, _))
        .With(RegsAre(regs))
        .WillOnce(Psn(std::move(results), std::move(entries), code));
  }
  void expect_direct_remove(Socket socket, std::uint32_t result = 0) {
    EXPECT_CALL(os_, process_socket_notifications(kPort, 1, _, 0, 0, nullptr, nullptr))
        .With(RegsAre(std::vector{remove(socket)}))
        .WillOnce(Psn({result}, {}, kErrorSuccess));
  }
  void expect_stop_empty() {
    EXPECT_CALL(os_, post_queued_completion_status(kPort, 0, internal::kExitKey, 0))
        .WillOnce(Return(true));
    EXPECT_CALL(os_, close_port(kPort)).WillOnce(Return(true));
  }
  // The common end of a test, pinned call by call: close() of an idle connection (key 0) issues
  // its REMOVE directly; the REMOVE packet comes out of the next call; only then is the socket
  // closed (spec E1, E2); stop() with nothing left posts the exit packet and closes the port.
  // Call it inside the test's InSequence.
  void close_idle_and_stop(ConnId id, Socket socket) {
    expect_direct_remove(socket);
    ASSERT_TRUE(engine_->close(id).ok());
    expect_driver_call({}, {}, {packet(key(0), kSockNotifyEventRemove)});
    EXPECT_CALL(os_, closesocket(socket)).WillOnce(Return(0));
    ASSERT_EQ(engine_->poll(kWait).value(), 1u);
    expect_stop_empty();
    ASSERT_TRUE(engine_->stop().ok());
  }

  StrictMock<MockOs> os_;
  EngineOptions options_;
  std::unique_ptr<Engine> engine_;
  RecordingHandler handler_;
};

TEST_F(EngineUnitTest, AddIssuesOneEnableCallAndStopRemovesIt) {
  InSequence in_order;
  start();
  expect_add_call(kSockA, key(0), kInterestIn, kOneshotLevelFlags);
  Result<ConnId> id = engine_->add(kSockA, kInterestIn, Mode::kOneshotLevel, handler_);
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(id.value(), (ConnId{0, 1}));
  EXPECT_EQ(engine_->stats().connections_live, 1u);
  EXPECT_EQ(engine_->stats().port_calls, 1u);

  EXPECT_CALL(os_, process_socket_notifications(kPort, 1, _, 0, 0, nullptr, nullptr))
      .With(RegsAre(std::vector{remove(kSockA)}))
      .WillOnce(Psn({0}, {}, kErrorSuccess));
  expect_driver_call({}, {}, {packet(key(0), kSockNotifyEventRemove)}, kErrorSuccess,
                     internal::kStopPollMs);
  EXPECT_CALL(os_, closesocket(kSockA)).WillOnce(Return(0));
  expect_stop_empty();
  ASSERT_TRUE(engine_->stop().ok());
  EXPECT_EQ(handler_.closed(), std::vector<ConnId>{id.value()});
  EXPECT_TRUE(handler_.calls().empty());
}

TEST_F(EngineUnitTest, RearmIsBatchedIntoTheNextDequeueCall) {
  InSequence in_order;
  start();
  expect_add_call(kSockA, key(0), kInterestIn, kOneshotLevelFlags);
  const ConnId a = engine_->add(kSockA, kInterestIn, Mode::kOneshotLevel, handler_).value();

  expect_driver_call({}, {}, {packet(key(0), kSockNotifyEventIn)});
  ASSERT_EQ(engine_->poll(kWait).value(), 1u);
  // The handler's IN is not issued on its own: it rides the next call, which also dequeues.
  expect_driver_call({enable(kSockA, key(0), kInterestIn, kOneshotLevelFlags)}, {0},
                     {packet(key(0), kSockNotifyEventIn)});
  ASSERT_EQ(engine_->poll(kWait).value(), 1u);
  expect_driver_call({enable(kSockA, key(0), kInterestIn, kOneshotLevelFlags)}, {0}, {},
                     kWaitTimeout);
  ASSERT_EQ(engine_->poll(kWait).value(), 0u);
  const EngineStats stats = engine_->stats();
  EXPECT_EQ(stats.port_calls, 4u);  // add + 3 batches, no call of its own per re-arm
  EXPECT_EQ(stats.notifications, 2u);
  EXPECT_EQ(stats.timeouts, 1u);
  EXPECT_EQ(handler_.calls().size(), 2u);
  EXPECT_EQ(handler_.calls()[0].first, a);

  close_idle_and_stop(a, kSockA);
}

TEST_F(EngineUnitTest, CloseWhileIdleIssuesRemoveAndClosesAfterThePacket) {
  InSequence in_order;
  start();
  expect_add_call(kSockA, key(0), kInterestIn, kOneshotLevelFlags);
  const ConnId a = engine_->add(kSockA, kInterestIn, Mode::kOneshotLevel, handler_).value();
  expect_direct_remove(kSockA);
  ASSERT_TRUE(engine_->close(a).ok());
  ASSERT_TRUE(engine_->close(a).ok());     // idempotent: no second REMOVE (spec B7)
  EXPECT_TRUE(handler_.closed().empty());  // not before the REMOVE packet (spec E1)
  expect_driver_call({}, {}, {packet(key(0), kSockNotifyEventRemove)});
  EXPECT_CALL(os_, closesocket(kSockA)).WillOnce(Return(0));
  ASSERT_EQ(engine_->poll(kWait).value(), 1u);
  EXPECT_EQ(handler_.closed(), std::vector<ConnId>{a});
  EXPECT_EQ(engine_->close(a).code(), StatusCode::kNotFound);
  EXPECT_EQ(engine_->stats().connections_live, 0u);
  expect_stop_empty();
  ASSERT_TRUE(engine_->stop().ok());
}

// A handler whose on_closed calls close() and notify() of its own id (what another thread may do
// at the same moment): the connection has ended, so both answer kNotFound, make no OS call (the
// mock is strict), and on_closed still comes once.
class ClosingAgainHandler final : public Handler {
 public:
  Engine* engine = nullptr;
  std::vector<StatusCode> answers;
  std::uint32_t closed = 0;
  Interest on_events(ConnId, Socket, std::uint32_t) noexcept override { return kInterestIn; }
  void on_closed(ConnId id) noexcept override {
    ++closed;
    answers.push_back(engine->close(id).code());
    answers.push_back(engine->notify(id, kSockNotifyEventIn).code());
  }
};

TEST_F(EngineUnitTest, CloseAndNotifyOnceOnClosedIsCalledAnswerNotFound) {
  InSequence in_order;
  start();
  ClosingAgainHandler handler;
  handler.engine = engine_.get();
  expect_add_call(kSockA, key(0), kInterestIn, kOneshotLevelFlags);
  const ConnId a = engine_->add(kSockA, kInterestIn, Mode::kOneshotLevel, handler).value();
  expect_direct_remove(kSockA);
  ASSERT_TRUE(engine_->close(a).ok());
  expect_driver_call({}, {}, {packet(key(0), kSockNotifyEventRemove)});
  EXPECT_CALL(os_, closesocket(kSockA)).WillOnce(Return(0));
  ASSERT_EQ(engine_->poll(kWait).value(), 1u);
  EXPECT_EQ(handler.closed, 1u);
  EXPECT_EQ(handler.answers, (std::vector{StatusCode::kNotFound, StatusCode::kNotFound}));
  EXPECT_EQ(engine_->close(a).code(), StatusCode::kNotFound);
  expect_stop_empty();
  ASSERT_TRUE(engine_->stop().ok());
}

TEST_F(EngineUnitTest, CloseWhileTheHandlerRunsOnAnotherThread) {
  InSequence in_order;
  start();
  expect_add_call(kSockA, key(0), kInterestIn, kOneshotLevelFlags);
  const ConnId a = engine_->add(kSockA, kInterestIn, Mode::kOneshotLevel, handler_).value();
  Gate entered;
  Gate release;
  handler_.on_event = [&](ConnId, Socket, std::uint32_t) {
    entered.open();
    release.wait();
    return kInterestIn;
  };
  expect_driver_call({}, {}, {packet(key(0), kSockNotifyEventIn)});
  std::thread driver([&] { EXPECT_EQ(engine_->poll(kWait).value(), 1u); });
  entered.wait();
  // No Os call here: the dispatching driver issues the REMOVE when the handler returns.
  ASSERT_TRUE(engine_->close(a).ok());
  release.open();
  driver.join();
  // The REMOVE replaces the re-arm and rides the driver's next call.
  expect_driver_call({remove(kSockA)}, {0}, {packet(key(0), kSockNotifyEventRemove)});
  EXPECT_CALL(os_, closesocket(kSockA)).WillOnce(Return(0));
  ASSERT_EQ(engine_->poll(kWait).value(), 1u);
  EXPECT_EQ(handler_.calls().size(), 1u);
  EXPECT_EQ(handler_.closed(), std::vector<ConnId>{a});
  expect_stop_empty();
  ASSERT_TRUE(engine_->stop().ok());
}

TEST_F(EngineUnitTest, RemoveOredWithInClosesWithoutEnteringTheHandler) {
  InSequence in_order;
  start();
  expect_add_call(kSockA, key(0), kInterestIn, kOneshotLevelFlags);
  const ConnId a = engine_->add(kSockA, kInterestIn, Mode::kOneshotLevel, handler_).value();
  expect_direct_remove(kSockA);
  ASSERT_TRUE(engine_->close(a).ok());
  // Spec D4: the REMOVE is OR-ed into the queued IN packet.
  expect_driver_call({}, {}, {packet(key(0), kSockNotifyEventIn | kSockNotifyEventRemove)});
  EXPECT_CALL(os_, closesocket(kSockA)).WillOnce(Return(0));
  ASSERT_EQ(engine_->poll(kWait).value(), 1u);
  EXPECT_TRUE(handler_.calls().empty());
  EXPECT_EQ(handler_.closed(), std::vector<ConnId>{a});
  expect_stop_empty();
  ASSERT_TRUE(engine_->stop().ok());
}

TEST_F(EngineUnitTest, CallLevelFailureIsRetriedAfterABackoff) {
  InSequence in_order;
  start();
  // add(): the whole call fails (spec A3), then succeeds.
  EXPECT_CALL(os_, process_socket_notifications(kPort, 1, _, 0, 0, nullptr, nullptr))
      .WillOnce(Psn({0}, {}, kErrorNotEnoughMemory));
  EXPECT_CALL(os_, sleep_ms(1));
  expect_add_call(kSockA, key(0), kInterestIn, kOneshotLevelFlags);
  const ConnId a = engine_->add(kSockA, kInterestIn, Mode::kOneshotLevel, handler_).value();
  // A driver call fails, nothing was dequeued; the same call is made again.
  expect_driver_call({}, {}, {}, kErrorNoSystemResources);
  EXPECT_CALL(os_, sleep_ms(1));
  expect_driver_call({}, {}, {packet(key(0), kSockNotifyEventIn)});
  ASSERT_EQ(engine_->poll(kWait).value(), 1u);
  // With a re-arm in it: the registration is still live while the call is retried.
  expect_driver_call({enable(kSockA, key(0), kInterestIn, kOneshotLevelFlags)}, {0}, {},
                     kErrorNotEnoughMemory);
  EXPECT_CALL(os_, sleep_ms(1));
  expect_driver_call({enable(kSockA, key(0), kInterestIn, kOneshotLevelFlags)}, {0}, {},
                     kWaitTimeout);
  ASSERT_EQ(engine_->poll(kWait).value(), 0u);
  EXPECT_EQ(engine_->stats().call_failures, 3u);
  EXPECT_EQ(engine_->stats().connections_live, 1u);
  EXPECT_TRUE(handler_.closed().empty());
  close_idle_and_stop(a, kSockA);
}

TEST_F(EngineUnitTest, CallLevelFailureExhaustedFailsTheRegistrationsOneByOne) {
  options_.call_retry_max = 2;
  InSequence in_order;
  start();
  expect_add_call(kSockA, key(0), kInterestIn, kOneshotLevelFlags);
  const ConnId a = engine_->add(kSockA, kInterestIn, Mode::kOneshotLevel, handler_).value();
  expect_driver_call({}, {}, {packet(key(0), kSockNotifyEventIn)});
  ASSERT_EQ(engine_->poll(kWait).value(), 1u);
  const auto rearm = enable(kSockA, key(0), kInterestIn, kOneshotLevelFlags);
  expect_driver_call({rearm}, {0}, {}, kErrorNotEnoughMemory);
  EXPECT_CALL(os_, sleep_ms(1));
  expect_driver_call({rearm}, {0}, {}, kErrorNotEnoughMemory);
  EXPECT_CALL(os_, sleep_ms(2));
  Result<std::uint32_t> failed = engine_->poll(kWait);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kOsError);
  // The re-arm counts as failed: the connection is closed through the REMOVE handshake.
  expect_driver_call({remove(kSockA)}, {0}, {packet(key(0), kSockNotifyEventRemove)});
  EXPECT_CALL(os_, closesocket(kSockA)).WillOnce(Return(0));
  ASSERT_EQ(engine_->poll(kWait).value(), 1u);
  EXPECT_EQ(handler_.closed(), std::vector<ConnId>{a});
  EXPECT_EQ(engine_->stats().registration_failures, 1u);
  expect_stop_empty();
  ASSERT_TRUE(engine_->stop().ok());
}

TEST_F(EngineUnitTest, PerRegistrationFailureClosesOnlyThatConnection) {
  InSequence in_order;
  start();
  expect_add_call(kSockA, key(0), kInterestIn, kOneshotLevelFlags);
  const ConnId a = engine_->add(kSockA, kInterestIn, Mode::kOneshotLevel, handler_).value();
  expect_add_call(kSockB, key(1), kInterestIn, kOneshotLevelFlags);
  const ConnId b = engine_->add(kSockB, kInterestIn, Mode::kOneshotLevel, handler_).value();
  expect_driver_call({}, {},
                     {packet(key(0), kSockNotifyEventIn), packet(key(1), kSockNotifyEventIn)});
  ASSERT_EQ(engine_->poll(kWait).value(), 2u);
  // Both re-arms in one call; b's fails (spec A8) and the call times out (spec A2): the
  // registrations were applied, so the results are read.
  expect_driver_call({enable(kSockA, key(0), kInterestIn, kOneshotLevelFlags),
                      enable(kSockB, key(1), kInterestIn, kOneshotLevelFlags)},
                     {0, kWsaEnobufs}, {}, kWaitTimeout);
  ASSERT_EQ(engine_->poll(kWait).value(), 0u);
  expect_driver_call({remove(kSockB)}, {0}, {packet(key(1), kSockNotifyEventRemove)});
  EXPECT_CALL(os_, closesocket(kSockB)).WillOnce(Return(0));
  ASSERT_EQ(engine_->poll(kWait).value(), 1u);
  EXPECT_EQ(handler_.closed(), std::vector<ConnId>{b});
  EXPECT_EQ(engine_->stats().registration_failures, 1u);
  EXPECT_EQ(engine_->stats().connections_live, 1u);
  close_idle_and_stop(a, kSockA);
}

TEST_F(EngineUnitTest, RemoveFailureWithAPacketStillQueuedIsQuarantinedUntilTheMarker) {
  InSequence in_order;
  start();
  expect_add_call(kSockA, key(0), kInterestIn, kOneshotLevelFlags);
  const ConnId a = engine_->add(kSockA, kInterestIn, Mode::kOneshotLevel, handler_).value();
  // REMOVE fails (spec B6): the port may still hold a packet for the key (spec E4). The socket
  // is closed (no new packet can be queued), then a drain marker is posted behind the queue.
  expect_direct_remove(kSockA, kWsaEinval);
  EXPECT_CALL(os_, closesocket(kSockA)).WillOnce(Return(0));
  EXPECT_CALL(os_, post_queued_completion_status(kPort, 0, internal::kDrainKey, key(0)))
      .WillOnce(Return(true));
  ASSERT_TRUE(engine_->close(a).ok());
  EXPECT_TRUE(handler_.closed().empty());  // not freed on a guess
  EXPECT_EQ(engine_->stats().quarantined, 1u);
  // The queued IN comes out first and is dropped; the marker ends the quarantine.
  expect_driver_call({}, {},
                     {packet(key(0), kSockNotifyEventIn), posted(internal::kDrainKey, key(0))});
  ASSERT_EQ(engine_->poll(kWait).value(), 2u);
  EXPECT_TRUE(handler_.calls().empty());
  EXPECT_EQ(handler_.closed(), std::vector<ConnId>{a});
  EXPECT_EQ(engine_->stats().closing_dropped, 1u);
  EXPECT_EQ(engine_->stats().connections_live, 0u);
  expect_stop_empty();
  ASSERT_TRUE(engine_->stop().ok());
}

TEST_F(EngineUnitTest, QuarantineWaitsForADriverWhoseCallBeganBeforeTheMarker) {
  InSequence in_order;
  start();
  expect_add_call(kSockA, key(0), kInterestIn, kOneshotLevelFlags);
  const ConnId a = engine_->add(kSockA, kInterestIn, Mode::kOneshotLevel, handler_).value();
  // Driver 1 is inside its call (it could hold a packet for the key).
  Gate in_call;
  Gate release_call;
  EXPECT_CALL(os_, process_socket_notifications(kPort, 0, _, kWait, kBatch, _, _))
      .WillOnce([&](Port, std::uint32_t, SockNotifyRegistration*, std::uint32_t, std::uint32_t,
                    OverlappedEntry*, std::uint32_t* received) {
        in_call.open();
        release_call.wait();
        *received = 0;
        return kWaitTimeout;
      });
  std::thread slow([&] { EXPECT_EQ(engine_->poll(kWait).value(), 0u); });
  in_call.wait();
  expect_direct_remove(kSockA, kWsaEinval);
  EXPECT_CALL(os_, closesocket(kSockA)).WillOnce(Return(0));
  EXPECT_CALL(os_, post_queued_completion_status(kPort, 0, internal::kDrainKey, key(0)))
      .WillOnce(Return(true));
  ASSERT_TRUE(engine_->close(a).ok());
  // Driver 2 dequeues the marker; driver 1 lags, so it is woken and the slot waits for it.
  expect_driver_call({}, {}, {posted(internal::kDrainKey, key(0))});
  EXPECT_CALL(os_, post_queued_completion_status(kPort, 0, internal::kWakeKey, 0))
      .WillOnce(Return(true));
  ASSERT_EQ(engine_->poll(kWait).value(), 1u);
  EXPECT_TRUE(handler_.closed().empty());
  release_call.open();
  slow.join();  // driver 1's quiescent point ends the grace period: it disposes the slot
  EXPECT_EQ(handler_.closed(), std::vector<ConnId>{a});
  expect_stop_empty();
  ASSERT_TRUE(engine_->stop().ok());
}

// A lost REMOVE probed (engine.hpp): after two idle calls with an applied REMOVE awaited, a drain
// marker is posted for its slot, the socket left open (its REMOVE was applied, spec E1). Here the
// REMOVE was on its way after all: it comes before the marker (FIFO) and answers the probe, and
// the slot ends with the drain: closed once, nothing counted lost. (The fake's tests cover the
// REMOVE that never comes.)
TEST_F(EngineUnitTest, AProbedRemoveThatComesAfterAllEndsWithTheDrain) {
  InSequence in_order;
  start();
  expect_add_call(kSockA, key(0), kInterestIn, kOneshotLevelFlags);
  const ConnId a = engine_->add(kSockA, kInterestIn, Mode::kOneshotLevel, handler_).value();
  expect_direct_remove(kSockA);
  ASSERT_TRUE(engine_->close(a).ok());
  expect_driver_call({}, {}, {}, kWaitTimeout);
  ASSERT_EQ(engine_->poll(kWait).value(), 0u);
  EXPECT_EQ(engine_->stats().removes_probed, 0u);  // one idle call proves little
  expect_driver_call({}, {}, {}, kWaitTimeout);
  EXPECT_CALL(os_, post_queued_completion_status(kPort, 0, internal::kDrainKey, key(0)))
      .WillOnce(Return(true));
  ASSERT_EQ(engine_->poll(kWait).value(), 0u);
  EXPECT_EQ(engine_->stats().removes_probed, 1u);
  EXPECT_TRUE(handler_.closed().empty());
  expect_driver_call({}, {},
                     {packet(key(0), kSockNotifyEventRemove), posted(internal::kDrainKey, key(0))});
  EXPECT_CALL(os_, closesocket(kSockA)).WillOnce(Return(0));
  ASSERT_EQ(engine_->poll(kWait).value(), 2u);
  EXPECT_EQ(handler_.closed(), std::vector<ConnId>{a});
  EXPECT_EQ(engine_->stats().removes_lost, 0u);
  EXPECT_EQ(engine_->stats().connections_live, 0u);
  expect_stop_empty();
  ASSERT_TRUE(engine_->stop().ok());
}

TEST_F(EngineUnitTest, StopWithConnectionsOpenRemovesAllThenReleasesWorkers) {
  InSequence in_order;
  start();
  expect_add_call(kSockA, key(0), kInterestIn, kOneshotLevelFlags);
  const ConnId a = engine_->add(kSockA, kInterestIn, Mode::kOneshotLevel, handler_).value();
  expect_add_call(kSockB, key(1), kInterestIn | kInterestOut, kOneshotLevelFlags);
  const ConnId b =
      engine_->add(kSockB, kInterestIn | kInterestOut, Mode::kOneshotLevel, handler_).value();
  // One call removes every connection; stop() drives the port until both REMOVEs are seen.
  EXPECT_CALL(os_, process_socket_notifications(kPort, 2, _, 0, 0, nullptr, nullptr))
      .With(RegsAre(std::vector{remove(kSockA), remove(kSockB)}))
      .WillOnce(Psn({0, 0}, {}, kErrorSuccess));
  expect_driver_call({}, {}, {packet(key(0), kSockNotifyEventRemove | kSockNotifyEventOut)},
                     kErrorSuccess, internal::kStopPollMs);
  EXPECT_CALL(os_, closesocket(kSockA)).WillOnce(Return(0));
  expect_driver_call({}, {}, {}, kWaitTimeout, internal::kStopPollMs);
  expect_driver_call({}, {}, {packet(key(1), kSockNotifyEventRemove)}, kErrorSuccess,
                     internal::kStopPollMs);
  EXPECT_CALL(os_, closesocket(kSockB)).WillOnce(Return(0));
  // Then the exit packet, then the port is closed.
  expect_stop_empty();
  ASSERT_TRUE(engine_->stop().ok());
  EXPECT_EQ(handler_.closed(), (std::vector<ConnId>{a, b}));
  EXPECT_TRUE(handler_.calls().empty());
  EXPECT_EQ(engine_->add(kSockA, kInterestIn, Mode::kOneshotLevel, handler_).status().code(),
            StatusCode::kFailedPrecondition);
}

TEST_F(EngineUnitTest, OneshotRearmCoversEveryDirection) {
  InSequence in_order;
  start();
  const Interest both = kInterestIn | kInterestOut;
  expect_add_call(kSockA, key(0), both, kOneshotLevelFlags);
  const ConnId a = engine_->add(kSockA, both, Mode::kOneshotLevel, handler_).value();
  handler_.on_event = [&](ConnId, Socket, std::uint32_t) { return both; };
  // OUT fired: the one-shot packet disarmed IN too (spec C2); the re-arm carries both.
  expect_driver_call({}, {}, {packet(key(0), kSockNotifyEventOut)});
  ASSERT_EQ(engine_->poll(kWait).value(), 1u);
  expect_driver_call({enable(kSockA, key(0), both, kOneshotLevelFlags)}, {0}, {}, kWaitTimeout);
  ASSERT_EQ(engine_->poll(kWait).value(), 0u);
  close_idle_and_stop(a, kSockA);
}

TEST_F(EngineUnitTest, PersistentModeIssuesAnEnableOnlyWhenTheInterestChanges) {
  InSequence in_order;
  start();
  expect_add_call(kSockA, key(0), kInterestIn, kPersistentLevelFlags);
  const ConnId a = engine_->add(kSockA, kInterestIn, Mode::kPersistentLevel, handler_).value();
  expect_driver_call({}, {}, {packet(key(0), kSockNotifyEventIn)});
  ASSERT_EQ(engine_->poll(kWait).value(), 1u);
  handler_.on_event = [&](ConnId, Socket, std::uint32_t) { return kInterestIn | kInterestOut; };
  expect_driver_call({}, {}, {packet(key(0), kSockNotifyEventIn)});  // same interest: no ENABLE
  ASSERT_EQ(engine_->poll(kWait).value(), 1u);
  expect_driver_call({enable(kSockA, key(0), kInterestIn | kInterestOut, kPersistentLevelFlags)},
                     {0}, {}, kWaitTimeout);
  ASSERT_EQ(engine_->poll(kWait).value(), 0u);
  close_idle_and_stop(a, kSockA);
}

TEST_F(EngineUnitTest, PersistentPacketOutsideTheNarrowedInterestIsNotDelivered) {
  InSequence in_order;
  start();
  const Interest both = kInterestIn | kInterestOut;
  expect_add_call(kSockA, key(0), both, kPersistentLevelFlags);
  const ConnId a = engine_->add(kSockA, both, Mode::kPersistentLevel, handler_).value();
  handler_.on_event = [](ConnId, Socket, std::uint32_t) { return kInterestIn; };
  expect_driver_call({}, {}, {packet(key(0), kSockNotifyEventOut)});
  ASSERT_EQ(engine_->poll(kWait).value(), 1u);
  // The narrowing ENABLE rides this call; an OUT from the old filter comes back with it and is
  // dropped: the handler no longer asks for OUT.
  expect_driver_call({enable(kSockA, key(0), kInterestIn, kPersistentLevelFlags)}, {0},
                     {packet(key(0), kSockNotifyEventOut)});
  ASSERT_EQ(engine_->poll(kWait).value(), 1u);
  EXPECT_EQ(handler_.calls().size(), 1u);
  EXPECT_EQ(engine_->stats().unwanted_dropped, 1u);
  close_idle_and_stop(a, kSockA);
}

TEST_F(EngineUnitTest, PacketForADispatchingSlotRunsOnTheDispatchingThread) {
  InSequence in_order;
  start();
  expect_add_call(kSockA, key(0), kInterestIn, kPersistentLevelFlags);
  const ConnId a = engine_->add(kSockA, kInterestIn, Mode::kPersistentLevel, handler_).value();
  Gate entered;
  Gate release;
  int calls = 0;
  handler_.on_event = [&](ConnId, Socket, std::uint32_t) {
    if (++calls == 1) {
      entered.open();
      release.wait();
    }
    return kInterestIn;
  };
  expect_driver_call({}, {}, {packet(key(0), kSockNotifyEventIn)});
  std::thread first([&] { EXPECT_EQ(engine_->poll(kWait).value(), 1u); });
  entered.wait();
  // Persistent: another packet comes while the handler runs; this driver must not enter it.
  expect_driver_call({}, {}, {packet(key(0), kSockNotifyEventIn | kSockNotifyEventHangup)});
  ASSERT_EQ(engine_->poll(kWait).value(), 1u);
  EXPECT_EQ(handler_.calls().size(), 1u);
  release.open();
  first.join();  // the first driver ran the handler again with the merged events
  ASSERT_EQ(handler_.calls().size(), 2u);
  EXPECT_EQ(handler_.calls()[1].second, kSockNotifyEventIn | kSockNotifyEventHangup);
  EXPECT_EQ(handler_.inside_max(), 1);
  EXPECT_EQ(engine_->stats().pending_merged, 1u);
  // Persistent level re-queues its packet while the condition holds (spec C4): the merging
  // driver paused the registration (DISABLE in its next call) so as not to spin; once that is
  // applied, the dispatcher's re-arm follows.
  expect_driver_call({disable(kSockA)}, {0}, {}, kWaitTimeout);
  ASSERT_EQ(engine_->poll(kWait).value(), 0u);
  expect_driver_call({enable(kSockA, key(0), kInterestIn, kPersistentLevelFlags)}, {0}, {},
                     kWaitTimeout);
  ASSERT_EQ(engine_->poll(kWait).value(), 0u);
  close_idle_and_stop(a, kSockA);
}

TEST_F(EngineUnitTest, StalePacketIsDroppedAndCounted) {
  InSequence in_order;
  start();
  expect_add_call(kSockA, key(0), kInterestIn, kOneshotLevelFlags);
  const ConnId a = engine_->add(kSockA, kInterestIn, Mode::kOneshotLevel, handler_).value();
  expect_direct_remove(kSockA);
  ASSERT_TRUE(engine_->close(a).ok());
  expect_driver_call({}, {}, {packet(key(0), kSockNotifyEventRemove)});
  EXPECT_CALL(os_, closesocket(kSockA)).WillOnce(Return(0));
  ASSERT_EQ(engine_->poll(kWait).value(), 1u);
  // The slot is reused with the next generation; a packet with the old key is stale.
  expect_add_call(kSockA, key(0, 2), kInterestIn, kOneshotLevelFlags);
  const ConnId again = engine_->add(kSockA, kInterestIn, Mode::kOneshotLevel, handler_).value();
  EXPECT_EQ(again, (ConnId{0, 2}));
  expect_driver_call({}, {}, {packet(key(0, 1), kSockNotifyEventIn), packet(12345, 1)});
  ASSERT_EQ(engine_->poll(kWait).value(), 2u);
  EXPECT_TRUE(handler_.calls().empty());
  EXPECT_EQ(engine_->stats().stale_dropped, 2u);
  EXPECT_CALL(os_, process_socket_notifications(kPort, 1, _, 0, 0, nullptr, nullptr))
      .With(RegsAre(std::vector{remove(kSockA)}))
      .WillOnce(Psn({0}, {}, kErrorSuccess));
  expect_driver_call({}, {}, {packet(key(0, 2), kSockNotifyEventRemove)}, kErrorSuccess,
                     internal::kStopPollMs);
  EXPECT_CALL(os_, closesocket(kSockA)).WillOnce(Return(0));
  expect_stop_empty();
  ASSERT_TRUE(engine_->stop().ok());
}

TEST_F(EngineUnitTest, CloseFromAHandlerRidesTheNextCallAndFullBatchesDefer) {
  options_.batch_count = 1;
  InSequence in_order;
  start();
  auto call = [&](std::vector<SockNotifyRegistration> regs, std::vector<std::uint32_t> results,
                  std::vector<OverlappedEntry> entries, std::uint32_t code) {
    EXPECT_CALL(os_, process_socket_notifications(kPort, static_cast<std::uint32_t>(regs.size()), _,
                                                  kWait, 1, _, _))
        .With(RegsAre(regs))
        .WillOnce(Psn(std::move(results), std::move(entries), code));
  };
  expect_add_call(kSockA, key(0), kInterestIn, kOneshotLevelFlags);
  const ConnId a = engine_->add(kSockA, kInterestIn, Mode::kOneshotLevel, handler_).value();
  expect_add_call(kSockB, key(1), kInterestIn, kOneshotLevelFlags);
  const ConnId b = engine_->add(kSockB, kInterestIn, Mode::kOneshotLevel, handler_).value();
  handler_.on_event = [&](ConnId id, Socket, std::uint32_t) {
    if (id == a) {
      EXPECT_TRUE(engine_->close(b).ok());  // no Os call from the handler
    }
    return kInterestIn;
  };
  call({}, {}, {packet(key(0), kSockNotifyEventIn)}, kErrorSuccess);
  ASSERT_EQ(engine_->poll(kWait).value(), 1u);
  // The next call has room for one registration: b's REMOVE; a's re-arm waits its turn.
  call({remove(kSockB)}, {0}, {packet(key(1), kSockNotifyEventRemove)}, kErrorSuccess);
  EXPECT_CALL(os_, closesocket(kSockB)).WillOnce(Return(0));
  ASSERT_EQ(engine_->poll(kWait).value(), 1u);
  call({enable(kSockA, key(0), kInterestIn, kOneshotLevelFlags)}, {0}, {}, kWaitTimeout);
  ASSERT_EQ(engine_->poll(kWait).value(), 0u);
  EXPECT_EQ(handler_.closed(), std::vector<ConnId>{b});
  expect_direct_remove(kSockA);
  ASSERT_TRUE(engine_->close(a).ok());
  call({}, {}, {packet(key(0), kSockNotifyEventRemove)}, kErrorSuccess);
  EXPECT_CALL(os_, closesocket(kSockA)).WillOnce(Return(0));
  ASSERT_EQ(engine_->poll(kWait).value(), 1u);
  expect_stop_empty();
  ASSERT_TRUE(engine_->stop().ok());
}

TEST_F(EngineUnitTest, PostedTaskRunsOnTheDriver) {
  InSequence in_order;
  start();
  CountingTask task;
  EXPECT_CALL(os_, post_queued_completion_status(kPort, 0, internal::kTaskKey,
                                                 reinterpret_cast<std::uintptr_t>(&task)))
      .WillOnce(Return(true));
  ASSERT_TRUE(engine_->post(task).ok());
  expect_driver_call({}, {}, {posted(internal::kTaskKey, reinterpret_cast<std::uintptr_t>(&task))});
  ASSERT_EQ(engine_->poll(kWait).value(), 1u);
  EXPECT_EQ(task.runs, 1);
  EXPECT_EQ(engine_->stats().tasks_run, 1u);
  expect_stop_empty();
  ASSERT_TRUE(engine_->stop().ok());
}

// Records the observer's lifetime events as text.
class TextObserver final : public EngineObserver {
 public:
  void on_slot_acquired(ConnId id, Socket) override { log("acquired", id); }
  void on_slot_freed(ConnId id) override { log("freed", id); }
  void on_handler_enter(ConnId id, std::uint32_t) override { log("enter", id); }
  void on_handler_leave(ConnId id, Interest) override { log("leave", id); }
  void on_remove_seen(ConnId id) override { log("remove", id); }
  void on_socket_closed(ConnId id, Socket) override { log("closesocket", id); }
  std::string text;

 private:
  void log(const char* what, ConnId id) {
    text += std::string(what) + " " + std::to_string(id.slot) + "." +
            std::to_string(id.generation) + "; ";
  }
};

TEST_F(EngineUnitTest, ObserverSeesTheLifetimeInOrder) {
  TextObserver observer;
  options_.observer = &observer;
  InSequence in_order;
  start();
  expect_add_call(kSockA, key(0), kInterestIn, kOneshotLevelFlags);
  (void)engine_->add(kSockA, kInterestIn, Mode::kOneshotLevel, handler_).value();
  handler_.on_event = [](ConnId, Socket, std::uint32_t) { return kInterestClose; };
  expect_driver_call({}, {}, {packet(key(0), kSockNotifyEventHangup)});
  ASSERT_EQ(engine_->poll(kWait).value(), 1u);
  expect_driver_call({remove(kSockA)}, {0}, {packet(key(0), kSockNotifyEventRemove)});
  EXPECT_CALL(os_, closesocket(kSockA)).WillOnce(Return(0));
  ASSERT_EQ(engine_->poll(kWait).value(), 1u);
  EXPECT_EQ(observer.text,
            "acquired 0.1; enter 0.1; leave 0.1; remove 0.1; closesocket 0.1; freed 0.1; ");
  expect_stop_empty();
  ASSERT_TRUE(engine_->stop().ok());
}

}  // namespace
}  // namespace readyport::test
