// Bad input: each misuse returns a Status with a clear message and changes nothing (no Os call
// beyond the one that reports the refusal, no counter moved, no slot taken).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <utility>

#include "engine_test_util.hpp"
#include "mock_os.hpp"
#include "readyport/engine.hpp"
#include "readyport/internal/slot_table.hpp"

namespace readyport::test {
namespace {

using testing::_;
using testing::HasSubstr;
using testing::InSequence;
using testing::Return;
using testing::StrictMock;

constexpr Port kPort{0x55};
constexpr Socket kSock = 0x200;
constexpr std::uint32_t kCapacity = 2;

std::uintptr_t key(std::uint32_t slot, std::uint32_t generation = 1) {
  return internal::completion_key_for(ConnId{slot, generation}, kCapacity);
}

class EngineBadInputTest : public testing::Test {
 protected:
  EngineBadInputTest() {
    allow_mutexes(os_);
    options_.connections_max = kCapacity;
  }
  void start() {
    EXPECT_CALL(os_, create_io_completion_port(0)).WillOnce(Return(kPort));
    engine_ = std::make_unique<Engine>(os_, options_);
    ASSERT_TRUE(engine_->start().ok());
  }
  void expect_add_call(Socket socket, std::uintptr_t k, std::uint32_t result) {
    EXPECT_CALL(os_, process_socket_notifications(kPort, 1, _, 0, 0, nullptr, nullptr))
        .With(RegsAre(std::vector{enable(socket, k, kInterestIn, kOneshotLevelFlags)}))
        .WillOnce(Psn({result}, {}, kErrorSuccess));
  }
  void expect_stop_empty() {
    EXPECT_CALL(os_, post_queued_completion_status(kPort, 0, internal::kExitKey, 0))
        .WillOnce(Return(true));
    EXPECT_CALL(os_, close_port(kPort)).WillOnce(Return(true));
  }
  // Nothing changed: no slot taken, no counter moved but the calls made.
  void expect_unchanged(std::uint64_t port_calls) {
    const EngineStats stats = engine_->stats();
    EXPECT_EQ(stats.connections_live, 0u);
    EXPECT_EQ(stats.connections_added, 0u);
    EXPECT_EQ(stats.port_calls, port_calls);
  }

  StrictMock<MockOs> os_;
  EngineOptions options_;
  std::unique_ptr<Engine> engine_;
  RecordingHandler handler_;
};

TEST_F(EngineBadInputTest, InvalidSocketIsRefusedWithoutACall) {
  InSequence in_order;
  start();
  const Status status =
      engine_->add(kInvalidSocket, kInterestIn, Mode::kOneshotLevel, handler_).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("INVALID_SOCKET"));
  expect_unchanged(0);
  expect_stop_empty();
  ASSERT_TRUE(engine_->stop().ok());
}

TEST_F(EngineBadInputTest, NonSocketHandleIsRefusedByThePort) {
  InSequence in_order;
  start();
  expect_add_call(kSock, key(0), kWsaEnotsock);  // spec B9
  const Status status = engine_->add(kSock, kInterestIn, Mode::kOneshotLevel, handler_).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.os_error(), kWsaEnotsock);
  EXPECT_THAT(status.message(), HasSubstr("not a socket"));
  expect_unchanged(1);
  // The slot went back: a later add takes slot 0 again, with a new generation.
  expect_add_call(kSock + 4, key(0, 2), 0);
  EXPECT_EQ(engine_->add(kSock + 4, kInterestIn, Mode::kOneshotLevel, handler_).value(),
            (ConnId{0, 2}));
  EXPECT_CALL(os_, process_socket_notifications(kPort, 1, _, 0, 0, nullptr, nullptr))
      .WillOnce(Psn({0}, {}, kErrorSuccess));
  EXPECT_CALL(os_, process_socket_notifications(kPort, 0, nullptr, _, _, _, _))
      .WillOnce(Psn({}, {packet(key(0, 2), kSockNotifyEventRemove)}, kErrorSuccess));
  EXPECT_CALL(os_, closesocket(kSock + 4)).WillOnce(Return(0));
  expect_stop_empty();
  ASSERT_TRUE(engine_->stop().ok());
  EXPECT_TRUE(handler_.calls().empty());
}

TEST_F(EngineBadInputTest, SameSocketAddedTwiceIsRefusedWithoutACall) {
  InSequence in_order;
  start();
  expect_add_call(kSock, key(0), 0);
  const ConnId first = engine_->add(kSock, kInterestIn, Mode::kOneshotLevel, handler_).value();
  const Status status =
      engine_->add(kSock, kInterestOut, Mode::kPersistentLevel, handler_).status();
  EXPECT_EQ(status.code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(status.message(), HasSubstr("already added"));
  EXPECT_EQ(engine_->stats().connections_live, 1u);
  EXPECT_EQ(engine_->stats().port_calls, 1u);
  EXPECT_CALL(os_, process_socket_notifications(kPort, 1, _, 0, 0, nullptr, nullptr))
      .With(RegsAre(std::vector{remove(kSock)}))
      .WillOnce(Psn({0}, {}, kErrorSuccess));
  ASSERT_TRUE(engine_->close(first).ok());
  EXPECT_CALL(os_, process_socket_notifications(kPort, 0, nullptr, _, _, _, _))
      .WillOnce(Psn({}, {packet(key(0), kSockNotifyEventRemove)}, kErrorSuccess));
  EXPECT_CALL(os_, closesocket(kSock)).WillOnce(Return(0));
  ASSERT_EQ(engine_->poll(5).value(), 1u);
  expect_stop_empty();
  ASSERT_TRUE(engine_->stop().ok());
}

TEST_F(EngineBadInputTest, SocketRegisteredWithAnotherPortIsRefused) {
  InSequence in_order;
  start();
  expect_add_call(kSock, key(0), kWsaEinval);  // spec B8: the fake's code, the record's guess
  const Status status = engine_->add(kSock, kInterestIn, Mode::kOneshotLevel, handler_).status();
  EXPECT_EQ(status.code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(status.message(), HasSubstr("another completion port"));
  expect_unchanged(1);
  expect_stop_empty();
  ASSERT_TRUE(engine_->stop().ok());
}

TEST_F(EngineBadInputTest, UnknownConnIdIsNotFound) {
  InSequence in_order;
  start();
  for (const ConnId id : {ConnId{0, 1}, ConnId{1, 7}, ConnId{99, 1}, ConnId{}}) {
    const Status status = engine_->close(id);
    EXPECT_EQ(status.code(), StatusCode::kNotFound);
    EXPECT_THAT(status.message(), HasSubstr("no connection"));
  }
  expect_unchanged(0);
  expect_stop_empty();
  ASSERT_TRUE(engine_->stop().ok());
}

TEST_F(EngineBadInputTest, AlreadyClosedConnIdIsNotFound) {
  InSequence in_order;
  start();
  expect_add_call(kSock, key(0), 0);
  const ConnId id = engine_->add(kSock, kInterestIn, Mode::kOneshotLevel, handler_).value();
  EXPECT_CALL(os_, process_socket_notifications(kPort, 1, _, 0, 0, nullptr, nullptr))
      .WillOnce(Psn({0}, {}, kErrorSuccess));
  ASSERT_TRUE(engine_->close(id).ok());
  EXPECT_CALL(os_, process_socket_notifications(kPort, 0, nullptr, _, _, _, _))
      .WillOnce(Psn({}, {packet(key(0), kSockNotifyEventRemove)}, kErrorSuccess));
  EXPECT_CALL(os_, closesocket(kSock)).WillOnce(Return(0));
  ASSERT_EQ(engine_->poll(5).value(), 1u);
  ASSERT_EQ(handler_.closed().size(), 1u);
  const std::uint64_t calls = engine_->stats().port_calls;
  const Status status = engine_->close(id);
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("already closed"));
  EXPECT_EQ(engine_->stats().port_calls, calls);
  EXPECT_EQ(handler_.closed().size(), 1u);
  expect_stop_empty();
  ASSERT_TRUE(engine_->stop().ok());
}

TEST_F(EngineBadInputTest, CapacityExhaustedIsRefusedWithoutACall) {
  InSequence in_order;
  start();
  expect_add_call(kSock, key(0), 0);
  expect_add_call(kSock + 4, key(1), 0);
  ASSERT_TRUE(engine_->add(kSock, kInterestIn, Mode::kOneshotLevel, handler_).ok());
  ASSERT_TRUE(engine_->add(kSock + 4, kInterestIn, Mode::kOneshotLevel, handler_).ok());
  const Status status =
      engine_->add(kSock + 8, kInterestIn, Mode::kOneshotLevel, handler_).status();
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(status.message(), HasSubstr("connections_max"));
  EXPECT_EQ(engine_->stats().connections_live, 2u);
  EXPECT_EQ(engine_->stats().port_calls, 2u);
  EXPECT_CALL(os_, process_socket_notifications(kPort, 2, _, 0, 0, nullptr, nullptr))
      .WillOnce(Psn({0, 0}, {}, kErrorSuccess));
  EXPECT_CALL(os_, process_socket_notifications(kPort, 0, nullptr, _, _, _, _))
      .WillOnce(
          Psn({}, {packet(key(0), kSockNotifyEventRemove), packet(key(1), kSockNotifyEventRemove)},
              kErrorSuccess));
  EXPECT_CALL(os_, closesocket(kSock)).WillOnce(Return(0));
  EXPECT_CALL(os_, closesocket(kSock + 4)).WillOnce(Return(0));
  expect_stop_empty();
  ASSERT_TRUE(engine_->stop().ok());
}

TEST_F(EngineBadInputTest, InterestBitsOutsideInOutHangupAreRefused) {
  InSequence in_order;
  start();
  for (const Interest interest : {Interest{0x08}, Interest{0x40}, Interest{0x80}, kInterestClose}) {
    const Status status = engine_->add(kSock, interest, Mode::kOneshotLevel, handler_).status();
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(), HasSubstr("outside IN|OUT|HANGUP"));
  }
  const Status mode = engine_->add(kSock, kInterestIn, static_cast<Mode>(9), handler_).status();
  EXPECT_EQ(mode.code(), StatusCode::kInvalidArgument);
  expect_unchanged(0);
  expect_stop_empty();
  ASSERT_TRUE(engine_->stop().ok());
}

// notify() checks its events first: bits outside IN|OUT|HANGUP|ERR are refused whatever the id,
// with no post and nothing changed.
TEST_F(EngineBadInputTest, NotifyEventsOutsideTheHandlersBitsAreRefused) {
  InSequence in_order;
  start();
  for (const std::uint32_t events : {0x08u, 0x80u, 0x100u, 0x47u | 0x10u}) {
    const Status status = engine_->notify(ConnId{0, 1}, events);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << events;
    EXPECT_THAT(status.message(), HasSubstr("outside IN|OUT|HANGUP|ERR"));
  }
  expect_unchanged(0);
  EXPECT_EQ(engine_->stats().posts, 0u);
  expect_stop_empty();
  ASSERT_TRUE(engine_->stop().ok());
}

TEST_F(EngineBadInputTest, CallsAfterStopFail) {
  InSequence in_order;
  start();
  expect_stop_empty();
  ASSERT_TRUE(engine_->stop().ok());
  CountingTask task;
  const Status add = engine_->add(kSock, kInterestIn, Mode::kOneshotLevel, handler_).status();
  EXPECT_EQ(add.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(add.message(), HasSubstr("stopped"));
  EXPECT_EQ(engine_->close(ConnId{0, 1}).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(engine_->post(task).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(engine_->poll(0).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(engine_->run_worker().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(engine_->stop().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(engine_->start().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(task.runs, 0);
}

TEST_F(EngineBadInputTest, CallsBeforeStartFail) {
  engine_ = std::make_unique<Engine>(os_, options_);
  CountingTask task;
  const Status add = engine_->add(kSock, kInterestIn, Mode::kOneshotLevel, handler_).status();
  EXPECT_EQ(add.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(add.message(), HasSubstr("not started"));
  EXPECT_EQ(engine_->close(ConnId{0, 1}).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(engine_->post(task).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(engine_->poll(0).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(engine_->run_worker().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(engine_->stop().code(), StatusCode::kFailedPrecondition);
}

TEST_F(EngineBadInputTest, InvalidOptionsAreReportedByStart) {
  for (auto change : {+[](EngineOptions& o) { o.connections_max = 0; },
                      +[](EngineOptions& o) { o.batch_count = 0; },
                      +[](EngineOptions& o) { o.batch_count = 5000; },
                      +[](EngineOptions& o) { o.workers_max = 0; },
                      +[](EngineOptions& o) { o.call_retry_max = 0; }}) {
    EngineOptions options;
    change(options);
    Engine engine(os_, options);
    const Status status = engine.start();
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  }
}

TEST_F(EngineBadInputTest, PortCreationFailureIsAnOsError) {
  EXPECT_CALL(os_, create_io_completion_port(0)).WillOnce(Return(kInvalidPort));
  EXPECT_CALL(os_, last_error()).WillOnce(Return(kErrorNotEnoughMemory));
  Engine engine(os_, options_);
  const Status status = engine.start();
  EXPECT_EQ(status.code(), StatusCode::kOsError);
  EXPECT_EQ(status.os_error(), kErrorNotEnoughMemory);
}

TEST_F(EngineBadInputTest, TooManyTasksOutstandingIsRefused) {
  options_.tasks_max = 1;
  InSequence in_order;
  start();
  CountingTask first;
  CountingTask second;
  EXPECT_CALL(os_, post_queued_completion_status(kPort, 0, internal::kTaskKey, _))
      .WillOnce(Return(true));
  ASSERT_TRUE(engine_->post(first).ok());
  const Status status = engine_->post(second);
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(status.message(), HasSubstr("tasks_max"));
  // stop() runs the posted task before it returns.
  EXPECT_CALL(os_, process_socket_notifications(kPort, 0, nullptr, _, _, _, _))
      .WillOnce(Psn({}, {posted(internal::kTaskKey, reinterpret_cast<std::uintptr_t>(&first))},
                    kErrorSuccess));
  expect_stop_empty();
  ASSERT_TRUE(engine_->stop().ok());
  EXPECT_EQ(first.runs, 1);
  EXPECT_EQ(second.runs, 0);
}

TEST_F(EngineBadInputTest, FailedPostChangesNothing) {
  InSequence in_order;
  start();
  CountingTask task;
  EXPECT_CALL(os_, post_queued_completion_status(kPort, 0, internal::kTaskKey, _))
      .WillOnce(Return(false));
  EXPECT_CALL(os_, last_error()).WillOnce(Return(kErrorInvalidHandle));
  const Status status = engine_->post(task);
  EXPECT_EQ(status.code(), StatusCode::kOsError);
  EXPECT_EQ(status.os_error(), kErrorInvalidHandle);
  expect_stop_empty();  // nothing outstanding: stop() does not wait for the task
  ASSERT_TRUE(engine_->stop().ok());
}

class StoppingHandler final : public Handler {
 public:
  explicit StoppingHandler(Engine*& engine) : engine_(engine) {}
  Interest on_events(ConnId, Socket, std::uint32_t) noexcept override {
    stop_status = engine_->stop();
    poll_status = engine_->poll(0).status();
    return kInterestClose;
  }
  void on_closed(ConnId) noexcept override {}
  Status stop_status;
  Status poll_status;

 private:
  Engine*& engine_;
};

TEST_F(EngineBadInputTest, StopAndPollFromAHandlerAreRefused) {
  InSequence in_order;
  start();
  Engine* raw = engine_.get();
  StoppingHandler handler(raw);
  expect_add_call(kSock, key(0), 0);
  ASSERT_TRUE(engine_->add(kSock, kInterestIn, Mode::kOneshotLevel, handler).ok());
  EXPECT_CALL(os_, process_socket_notifications(kPort, 0, nullptr, _, _, _, _))
      .WillOnce(Psn({}, {packet(key(0), kSockNotifyEventIn)}, kErrorSuccess));
  ASSERT_EQ(engine_->poll(5).value(), 1u);
  EXPECT_EQ(handler.stop_status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(handler.stop_status.message(), HasSubstr("from a handler"));
  EXPECT_EQ(handler.poll_status.code(), StatusCode::kFailedPrecondition);
  EXPECT_CALL(os_, process_socket_notifications(kPort, 1, _, _, _, _, _))
      .With(RegsAre(std::vector{remove(kSock)}))
      .WillOnce(Psn({0}, {packet(key(0), kSockNotifyEventRemove)}, kErrorSuccess));
  EXPECT_CALL(os_, closesocket(kSock)).WillOnce(Return(0));
  ASSERT_EQ(engine_->poll(5).value(), 1u);
  expect_stop_empty();
  ASSERT_TRUE(engine_->stop().ok());
}

// The callbacks' error contract is checked by the compiler (engine.hpp): an override that may
// throw does not compile, and a call through the base is noexcept.
static_assert(noexcept(std::declval<Handler&>().on_events(ConnId{}, kInvalidSocket, 0u)));
static_assert(noexcept(std::declval<Handler&>().on_closed(ConnId{})));
static_assert(noexcept(std::declval<Task&>().run()));

// Throws from a function the handler calls (a throw written in the noexcept body itself is a
// compile-time warning, -Wterminate).
[[noreturn]] void fail_deep_inside() { throw std::runtime_error("the handler's own failure"); }

class ThrowingHandler final : public Handler {
 public:
  Interest on_events(ConnId, Socket, std::uint32_t) noexcept override { fail_deep_inside(); }
  void on_closed(ConnId) noexcept override {}
};

#if GTEST_HAS_DEATH_TEST
// What the C++ runtime prints as std::terminate ends the process (MSVC's prints nothing to match).
#if defined(_MSC_VER)
constexpr const char* kTerminateMessage = "";
#else
constexpr const char* kTerminateMessage = "terminate";
#endif

// An exception that escapes a handler ends the process at once (std::terminate), never unwinds
// through the engine with a driver claimed and a slot dispatching.
TEST_F(EngineBadInputTest, AThrowingHandlerTerminatesTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        start();
        ThrowingHandler handler;
        expect_add_call(kSock, key(0), 0);
        if (!engine_->add(kSock, kInterestIn, Mode::kOneshotLevel, handler).ok()) {
          std::abort();
        }
        EXPECT_CALL(os_, process_socket_notifications(kPort, 0, nullptr, _, _, _, _))
            .WillOnce(Psn({}, {packet(key(0), kSockNotifyEventIn)}, kErrorSuccess));
        (void)engine_->poll(5);
        std::fputs("the handler's exception came back through poll()\n", stderr);
        std::exit(0);
      },
      kTerminateMessage);
}
#endif

}  // namespace
}  // namespace readyport::test
