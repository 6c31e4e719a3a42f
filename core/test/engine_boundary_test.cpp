// The engine's boundary (engine_boundary.hpp): with an Os that answers one, every public call is
// reported as it begins and as it returns, and every callback runs through it; with none, nothing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "readyport/engine.hpp"
#include "readyport/engine_boundary.hpp"
#include "readyport/fake/fake_os.hpp"
#include "readyport/fake/forwarding_os.hpp"

namespace readyport::test {
namespace {

const char* call_name(EngineCall call) {
  constexpr const char* kNames[] = {"add", "close", "notify", "post", "poll", "run_worker", "stop"};
  return kNames[static_cast<int>(call)];
}

std::string id_text(ConnId id) {
  return std::to_string(id.slot) + "/" + std::to_string(id.generation);
}

// Writes each crossing as a short line and runs the callbacks.
class LogBoundary final : public EngineBoundary {
 public:
  void call_begin(const EngineCrossing& call) override {
    std::string line = std::string("begin ") + call_name(call.call);
    if (call.call == EngineCall::kAdd) {
      line += " s=" + std::to_string(call.socket) + " interest=" + std::to_string(call.interest) +
              " mode=" + mode_name(call.mode) + (call.handler != nullptr ? " handler" : "");
    } else if (call.call == EngineCall::kClose || call.call == EngineCall::kNotify) {
      line += " id=" + id_text(call.id);
    } else if (call.call == EngineCall::kPost) {
      line += call.task != nullptr ? " task" : " no task";
    }
    log.push_back(line);
  }
  void call_end(const EngineCrossing& call, const Status& status, ConnId added) override {
    log.push_back(std::string("end ") + call_name(call.call) + " " +
                  (status.ok() ? "ok" : status_code_name(status.code())) +
                  (added.generation != 0 ? " id=" + id_text(added) : ""));
  }
  Interest handler_events(Handler& handler, ConnId id, Socket socket,
                          std::uint32_t events) noexcept override {
    log.push_back("enter id=" + id_text(id) + " s=" + std::to_string(socket) +
                  " ev=" + std::to_string(events));
    const Interest result = handler.on_events(id, socket, events);
    log.push_back("leave " + std::to_string(result));
    return result;
  }
  void handler_closed(Handler& handler, ConnId id) noexcept override {
    log.push_back("closed id=" + id_text(id));
    handler.on_closed(id);
    log.push_back("closed_end");
  }
  void task_run(Task& task) noexcept override {
    log.push_back("task");
    task.run();
    log.push_back("task_end");
  }
  void engine_stopped(const EngineStats& stats) override {
    log.push_back("stopped added=" + std::to_string(stats.connections_added) +
                  " closed=" + std::to_string(stats.connections_closed));
  }
  std::vector<std::string> log;
};

// The fake, answering the boundary.
class BoundaryOs final : public ForwardingOs {
 public:
  BoundaryOs(Os& inner, EngineBoundary* boundary) : ForwardingOs(inner), boundary_(boundary) {}
  EngineBoundary* engine_boundary() override { return boundary_; }

 private:
  EngineBoundary* boundary_;
};

class CloseOnIn final : public Handler {
 public:
  Interest on_events(ConnId, Socket, std::uint32_t) noexcept override { return kInterestClose; }
  void on_closed(ConnId) noexcept override { ++closed; }
  int closed = 0;
};

class CountTask final : public Task {
 public:
  void run() noexcept override { ++runs; }
  int runs = 0;
};

// A decorator that does not answer one itself.
class PlainOs final : public ForwardingOs {
 public:
  using ForwardingOs::ForwardingOs;
};

TEST(EngineBoundary, AnOsAnswersNoneUnlessAskedAndDecoratorsForwardIt) {
  FakeOs fake;
  EXPECT_EQ(fake.engine_boundary(), nullptr);
  PlainOs plain(fake);
  EXPECT_EQ(plain.engine_boundary(), nullptr);
  LogBoundary boundary;
  BoundaryOs answering(fake, &boundary);
  PlainOs above(answering);
  EXPECT_EQ(above.engine_boundary(), &boundary);
}

TEST(EngineBoundary, WithoutOneNothingIsReported) {
  FakeOs fake;
  Engine engine(fake, EngineOptions{});
  ASSERT_TRUE(engine.start().ok());
  CountTask task;
  ASSERT_TRUE(engine.post(task).ok());
  ASSERT_TRUE(engine.poll(0).ok());
  EXPECT_EQ(task.runs, 1);
  EXPECT_TRUE(engine.stop().ok());
}

TEST(EngineBoundary, EveryPublicCallAndCallbackCrossesIt) {
  FakeOs fake;
  LogBoundary boundary;
  BoundaryOs os(fake, &boundary);
  Engine engine(os, EngineOptions{});
  ASSERT_TRUE(engine.start().ok());
  const Socket s = fake.socket(kAfInet, kSockDgram, kIpprotoUdp);
  ASSERT_EQ(fake.set_nonblocking(s, true), 0);
  CloseOnIn handler;
  CountTask task;
  EXPECT_EQ(engine.add(kInvalidSocket, kInterestIn, Mode::kOneshotLevel, handler).status().code(),
            StatusCode::kInvalidArgument);
  const Result<ConnId> id = engine.add(s, kInterestOut, Mode::kPersistentLevel, handler);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(engine.post(task).ok());
  ASSERT_TRUE(engine.poll(0).ok());  // the OUT packet and the task
  EXPECT_TRUE(engine.poll(0).ok());  // the REMOVE: on_closed
  EXPECT_EQ(engine.close(id.value()).code(), StatusCode::kNotFound);
  EXPECT_EQ(engine.notify(id.value(), kSockNotifyEventIn).code(), StatusCode::kNotFound);
  ASSERT_TRUE(engine.stop().ok());
  EXPECT_EQ(handler.closed, 1);
  EXPECT_EQ(task.runs, 1);
  const std::string sid = id_text(id.value());
  const std::vector<std::string> expected = {
      "begin add s=" + std::to_string(kInvalidSocket) + " interest=1 mode=oneshot_level handler",
      "end add invalid_argument",
      "begin add s=" + std::to_string(s) + " interest=2 mode=persistent_level handler",
      "end add ok id=" + sid,
      "begin post task",
      "end post ok",
      "begin poll",
      "task",
      "task_end",
      "enter id=" + sid + " s=" + std::to_string(s) + " ev=2",
      "leave " + std::to_string(kInterestClose),
      "end poll ok",
      "begin poll",
      "closed id=" + sid,
      "closed_end",
      "end poll ok",
      "begin close id=" + sid,
      "end close not_found",
      "begin notify id=" + sid,
      "end notify not_found",
      "begin stop",
      "stopped added=1 closed=1",
      "end stop ok",
  };
  EXPECT_EQ(boundary.log, expected);
}

}  // namespace
}  // namespace readyport::test
