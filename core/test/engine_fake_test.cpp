// The engine over FakeOs on one thread (the inline runtime; poll() drives it): each behaviour
// against the fake's model of the spec, rule by rule.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "engine_test_util.hpp"
#include "readyport/engine.hpp"
#include "readyport/fake/fake_os.hpp"

namespace readyport::test {
namespace {

struct Pair {
  Socket engine_end = kInvalidSocket;
  Socket peer_end = kInvalidSocket;
};

// A connected TCP pair over the fake's loopback, both ends non-blocking.
Pair make_pair(FakeOs& os) {
  const Socket listener = os.socket(kAfInet, kSockStream, kIpprotoTcp);
  Ipv4Address address{kLoopbackHost, 0};
  EXPECT_EQ(os.bind(listener, address), 0);
  EXPECT_EQ(os.listen(listener, 4), 0);
  EXPECT_EQ(os.getsockname(listener, &address), 0);
  Pair pair;
  pair.peer_end = os.socket(kAfInet, kSockStream, kIpprotoTcp);
  EXPECT_EQ(os.connect(pair.peer_end, address), 0);
  pair.engine_end = os.accept(listener, nullptr);
  EXPECT_NE(pair.engine_end, kInvalidSocket);
  EXPECT_EQ(os.set_nonblocking(pair.engine_end, true), 0);
  EXPECT_EQ(os.set_nonblocking(pair.peer_end, true), 0);
  EXPECT_EQ(os.closesocket(listener), 0);
  return pair;
}

void send_bytes(FakeOs& os, Socket s, int count) {
  std::vector<char> bytes(static_cast<std::size_t>(count), 'x');
  ASSERT_EQ(os.send(s, bytes.data(), count, 0), count);
}

// Reads until WSAEWOULDBLOCK; returns the bytes read (and -1 on end of stream).
int drain(Os& os, Socket s) {
  char buffer[256];
  int total = 0;
  for (;;) {
    const int n = os.recv(s, buffer, sizeof buffer, 0);
    if (n > 0) {
      total += n;
      continue;
    }
    return n == 0 ? -1 : total;
  }
}

class EngineFakeTest : public testing::Test {
 protected:
  EngineFakeTest() : engine_(os_, options()) { EXPECT_TRUE(engine_.start().ok()); }
  ~EngineFakeTest() override {
    (void)engine_.stop();
    // Nothing left registered in the fake once the engine stopped (spec E1-E3 handshakes).
    EXPECT_EQ(os_.stats().registrations_live, 0u);
  }
  static EngineOptions options() {
    EngineOptions o;
    o.connections_max = 8;
    return o;
  }
  // Polls until nothing happens for one call.
  void settle() {
    for (int i = 0; i < 50; ++i) {
      if (engine_.poll(0).value() == 0) {
        return;
      }
    }
    FAIL() << "the engine kept busy";
  }

  FakeOs os_;
  Engine engine_;
  RecordingHandler handler_;
};

TEST_F(EngineFakeTest, EveryModeDeliversAndRearmsUntilClosed) {
  for (const Mode mode :
       {Mode::kOneshotLevel, Mode::kPersistentLevel, Mode::kPersistentEdge, Mode::kOneshotEdge}) {
    SCOPED_TRACE(mode_name(mode));
    RecordingHandler handler;
    const Pair pair = make_pair(os_);
    int bytes = 0;
    handler.on_event = [&](ConnId, Socket s, std::uint32_t) {
      const int n = drain(os_, s);
      if (n < 0) {
        return kInterestClose;
      }
      bytes += n;
      return kInterestIn;
    };
    const ConnId id = engine_.add(pair.engine_end, kInterestIn, mode, handler).value();
    for (int round = 1; round <= 3; ++round) {
      send_bytes(os_, pair.peer_end, 10 * round);
      settle();
      EXPECT_EQ(bytes, 10 * (round * (round + 1) / 2)) << "round " << round;
    }
    // The peer's FIN: IN with end of stream (spec D2); the handler closes.
    ASSERT_EQ(os_.shutdown(pair.peer_end, kSdSend), 0);
    settle();
    EXPECT_EQ(handler.closed(), std::vector<ConnId>{id});
    EXPECT_FALSE(os_.socket_registered(pair.engine_end));
    EXPECT_EQ(os_.closesocket(pair.peer_end), 0);
  }
  EXPECT_EQ(engine_.stats().connections_live, 0u);
}

TEST_F(EngineFakeTest, OneshotPacketForOutDisarmsInTooAndTheReturnedInterestRearmsIt) {
  const Pair pair = make_pair(os_);
  std::vector<std::uint32_t> seen;
  handler_.on_event = [&](ConnId, Socket s, std::uint32_t events) {
    seen.push_back(events);
    if ((events & kSockNotifyEventIn) != 0 && drain(os_, s) < 0) {
      return kInterestClose;
    }
    return kInterestIn;  // OUT was served: keep IN (the packet disarmed every direction, C2)
  };
  (void)engine_.add(pair.engine_end, kInterestIn | kInterestOut, Mode::kOneshotLevel, handler_)
      .value();
  settle();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], kSockNotifyEventOut);  // writable, nothing to read yet
  send_bytes(os_, pair.peer_end, 5);
  settle();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_NE(seen[1] & kSockNotifyEventIn, 0u);
  EXPECT_EQ(os_.closesocket(pair.peer_end), 0);
}

TEST_F(EngineFakeTest, NotifyMakesAnEdgeHandlerTryItsIo) {
  const Pair pair = make_pair(os_);
  send_bytes(os_, pair.peer_end, 7);  // readable before the registration: no edge (spec C5)
  int bytes = 0;
  handler_.on_event = [&](ConnId, Socket s, std::uint32_t) {
    bytes += std::max(drain(os_, s), 0);
    return kInterestIn;
  };
  const ConnId id =
      engine_.add(pair.engine_end, kInterestIn, Mode::kPersistentEdge, handler_).value();
  settle();
  EXPECT_EQ(bytes, 0);
  ASSERT_TRUE(engine_.notify(id, kSockNotifyEventIn).ok());
  settle();
  EXPECT_EQ(bytes, 7);
  EXPECT_EQ(engine_.stats().notifies, 1u);
  EXPECT_EQ(engine_.notify(id, kSockNotifyEventRemove).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(engine_.close(id).ok());
  // A notify that is already queued when the connection closes is dropped, never delivered.
  settle();
  EXPECT_EQ(engine_.notify(id, kSockNotifyEventIn).code(), StatusCode::kNotFound);
  EXPECT_EQ(handler_.calls().size(), 1u);
  EXPECT_EQ(os_.closesocket(pair.peer_end), 0);
}

TEST_F(EngineFakeTest, SocketRegisteredWithAnotherPortIsRefusedAndLeftAlone) {
  const Pair pair = make_pair(os_);
  const Port other = os_.create_io_completion_port(0);
  SockNotifyRegistration reg{pair.engine_end,
                             77,
                             kSockNotifyRegisterEventIn,
                             kSockNotifyOpEnable,
                             kSockNotifyTriggerOneshot | kSockNotifyTriggerLevel,
                             0};
  ASSERT_EQ(os_.process_socket_notifications(other, 1, &reg, 0, 0, nullptr, nullptr),
            kErrorSuccess);
  ASSERT_EQ(reg.registration_result, 0u);
  const Status status =
      engine_.add(pair.engine_end, kInterestIn, Mode::kOneshotLevel, handler_).status();
  EXPECT_EQ(status.code(), StatusCode::kAlreadyExists);  // spec B8
  EXPECT_EQ(engine_.stats().connections_live, 0u);
  EXPECT_TRUE(os_.socket_registered(pair.engine_end));  // the first registration is unchanged
  EXPECT_EQ(os_.closesocket(pair.engine_end), 0);       // still the caller's socket
  EXPECT_EQ(os_.closesocket(pair.peer_end), 0);
  EXPECT_TRUE(os_.close_port(other));
}

TEST_F(EngineFakeTest, NonSocketValueIsRefused) {
  const Status status = engine_.add(0x7777, kInterestIn, Mode::kOneshotLevel, handler_).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);  // spec B9: WSAENOTSOCK
  EXPECT_EQ(status.os_error(), kWsaEnotsock);
  EXPECT_EQ(engine_.stats().connections_live, 0u);
}

TEST_F(EngineFakeTest, SocketClosedBehindTheEngineIsQuarantinedUntilDrained) {
  const Pair pair = make_pair(os_);
  const ConnId id =
      engine_.add(pair.engine_end, kInterestIn, Mode::kOneshotLevel, handler_).value();
  send_bytes(os_, pair.peer_end, 3);  // an IN packet is queued
  // Misuse: the socket is closed behind the engine. It is deregistered without a REMOVE packet
  // and its queued packet is still delivered (spec E2), so REMOVE fails (B6) and proves nothing
  // about the queue (E4).
  ASSERT_EQ(os_.closesocket(pair.engine_end), 0);
  ASSERT_TRUE(engine_.close(id).ok());
  EXPECT_EQ(engine_.stats().quarantined, 1u);
  EXPECT_TRUE(handler_.closed().empty());
  settle();
  EXPECT_TRUE(handler_.calls().empty());  // the queued IN was dropped
  EXPECT_EQ(handler_.closed(), std::vector<ConnId>{id});
  EXPECT_EQ(engine_.stats().closing_dropped, 1u);
  EXPECT_EQ(engine_.stats().connections_live, 0u);
  EXPECT_EQ(os_.closesocket(pair.peer_end), 0);
}

// A REMOVE applied, then the socket closed behind the engine's back: under the reading where the
// close drops the REMOVE packet, no packet will ever tell the engine. After two idle port calls
// it asks the port (a drain marker: the probe); the marker comes back, the REMOVE never does:
// lost. The slot is disposed of once and stop() has nothing left to wait for. Under the other
// reading the REMOVE is still delivered and nothing is probed.
class EngineLostRemoveTest : public testing::TestWithParam<bool> {
 protected:
  static FakeOptions fake_options() {
    FakeOptions o;
    o.remove_dropped_on_close = GetParam();
    return o;
  }
  FakeOs os_{fake_options()};
  Engine engine_{os_, EngineOptions{}};
  RecordingHandler handler_;
};

TEST_P(EngineLostRemoveTest, IdleCallsProbeAndTheSlotIsDisposedOfOnce) {
  const bool dropped = GetParam();
  ASSERT_TRUE(engine_.start().ok());
  const Pair pair = make_pair(os_);
  const ConnId id =
      engine_.add(pair.engine_end, kInterestIn, Mode::kOneshotLevel, handler_).value();
  ASSERT_TRUE(engine_.close(id).ok());  // the REMOVE is applied at once (no driver: direct)
  ASSERT_EQ(os_.closesocket(pair.engine_end), 0);  // misuse: dropped with it, or still queued
  ASSERT_TRUE(engine_.close(id).ok());             // closing: idempotent, nothing issued
  EXPECT_EQ(engine_.stats().removes_probed, 0u);
  if (dropped) {
    EXPECT_EQ(engine_.poll(0).value(), 0u);  // idle once: not yet
    EXPECT_EQ(engine_.stats().removes_probed, 0u);
    EXPECT_EQ(engine_.poll(0).value(), 0u);  // idle twice: the probe's marker is posted
    EXPECT_EQ(engine_.stats().removes_probed, 1u);
    EXPECT_TRUE(handler_.closed().empty());
    EXPECT_EQ(engine_.poll(0).value(), 1u);  // the marker, and no REMOVE before it
  } else {
    EXPECT_EQ(engine_.poll(0).value(), 1u);  // the REMOVE, still delivered
  }
  EXPECT_EQ(handler_.closed(), std::vector<ConnId>{id});
  EXPECT_TRUE(handler_.calls().empty());
  EXPECT_EQ(engine_.stats().removes_probed, dropped ? 1u : 0u);
  EXPECT_EQ(engine_.stats().removes_lost, dropped ? 1u : 0u);
  EXPECT_EQ(engine_.stats().connections_live, 0u);
  EXPECT_EQ(engine_.close(id).code(), StatusCode::kNotFound);
  ASSERT_TRUE(engine_.stop().ok());
  EXPECT_EQ(handler_.closed().size(), 1u);
  EXPECT_EQ(os_.stats().registrations_live, 0u);
  EXPECT_EQ(os_.closesocket(pair.peer_end), 0);
}

TEST_P(EngineLostRemoveTest, StopProbesWhenItsPortIsIdleAndReturns) {
  const bool dropped = GetParam();
  ASSERT_TRUE(engine_.start().ok());
  const Pair pair = make_pair(os_);
  const ConnId id =
      engine_.add(pair.engine_end, kInterestIn, Mode::kPersistentEdge, handler_).value();
  ASSERT_TRUE(engine_.close(id).ok());
  ASSERT_EQ(os_.closesocket(pair.engine_end), 0);
  ASSERT_TRUE(engine_.stop().ok());  // would wait for ever without the probe, when dropped
  EXPECT_EQ(handler_.closed(), std::vector<ConnId>{id});
  EXPECT_EQ(engine_.stats().removes_lost, dropped ? 1u : 0u);
  // A REMOVE still delivered is seen by stop()'s first poll: no probe then.
  EXPECT_EQ(engine_.stats().removes_probed, dropped ? 1u : 0u);
  EXPECT_EQ(os_.stats().registrations_live, 0u);
  EXPECT_EQ(os_.stats().ports_open, 0u);
  EXPECT_EQ(os_.closesocket(pair.peer_end), 0);
}

INSTANTIATE_TEST_SUITE_P(RemoveOnClose, EngineLostRemoveTest, testing::Values(true, false),
                         [](const testing::TestParamInfo<bool>& param_info) {
                           return std::string(param_info.param ? "Dropped" : "Delivered");
                         });

TEST_F(EngineFakeTest, StaleKeysAfterSlotReuseAreDroppedNotDelivered) {
  // The queued IN and the REMOVE come out OR-ed together (spec D4, the fake's default): the IN
  // of a removing slot is dropped, and the slot's next generation never sees anything of it.
  const Pair a = make_pair(os_);
  const ConnId first =
      engine_.add(a.engine_end, kInterestIn, Mode::kPersistentLevel, handler_).value();
  send_bytes(os_, a.peer_end, 1);
  ASSERT_TRUE(engine_.close(first).ok());
  settle();
  const Pair b = make_pair(os_);
  const ConnId second =
      engine_.add(b.engine_end, kInterestIn, Mode::kOneshotLevel, handler_).value();
  EXPECT_EQ(second.slot, first.slot);
  EXPECT_NE(second.generation, first.generation);
  EXPECT_EQ(engine_.close(first).code(), StatusCode::kNotFound);
  settle();
  EXPECT_TRUE(handler_.calls().empty());
  EXPECT_EQ(os_.closesocket(a.peer_end), 0);
  EXPECT_EQ(os_.closesocket(b.peer_end), 0);
}

TEST_F(EngineFakeTest, StopClosesEveryConnectionAndRunsPostedTasks) {
  std::vector<Pair> pairs;
  std::vector<ConnId> ids;
  const Mode modes[] = {Mode::kOneshotLevel, Mode::kPersistentLevel, Mode::kPersistentEdge,
                        Mode::kOneshotEdge};
  for (int i = 0; i < 6; ++i) {
    pairs.push_back(make_pair(os_));
    ids.push_back(
        engine_.add(pairs.back().engine_end, kInterestIn | kInterestOut, modes[i % 4], handler_)
            .value());
    if (i % 2 == 0) {
      send_bytes(os_, pairs.back().peer_end, 4);
    }
  }
  CountingTask task;
  ASSERT_TRUE(engine_.post(task).ok());
  const std::uint32_t sockets_before = os_.stats().sockets_open;
  ASSERT_TRUE(engine_.stop().ok());
  EXPECT_EQ(task.runs, 1);
  EXPECT_EQ(handler_.closed().size(), ids.size());
  EXPECT_EQ(os_.stats().sockets_open, sockets_before - ids.size());  // the engine's ends
  EXPECT_EQ(os_.stats().registrations_live, 0u);
  EXPECT_EQ(os_.stats().ports_open, 0u);
  for (const Pair& pair : pairs) {
    EXPECT_EQ(os_.closesocket(pair.peer_end), 0);
  }
}

TEST_F(EngineFakeTest, TimeoutWithRegistrationsAppliedReadsTheirResults) {
  const Pair pair = make_pair(os_);
  int calls = 0;
  handler_.on_event = [&](ConnId, Socket s, std::uint32_t) {
    ++calls;
    (void)drain(os_, s);
    return kInterestIn;
  };
  (void)engine_.add(pair.engine_end, kInterestIn, Mode::kOneshotLevel, handler_).value();
  send_bytes(os_, pair.peer_end, 1);
  ASSERT_EQ(engine_.poll(0).value(), 1u);
  // The re-arm rides a call that times out (spec A2): it was applied, so the next byte fires.
  ASSERT_EQ(engine_.poll(5).value(), 0u);
  EXPECT_EQ(engine_.stats().timeouts, 1u);
  send_bytes(os_, pair.peer_end, 1);
  ASSERT_EQ(engine_.poll(0).value(), 1u);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(os_.closesocket(pair.peer_end), 0);
}

}  // namespace
}  // namespace readyport::test
