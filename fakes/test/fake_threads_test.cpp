// FakeOs with several threads, on SimScheduler (deterministic) under several seeds and
// strategies: the waiting paths the inline runtime cannot reach. Waiters released most recent
// first (spec F1), close_port releasing waiters (F3, F6), FakeMutex hand-off order, blocking
// socket calls woken by another thread and interrupted by closesocket.
//
// Each scenario orders its threads with sleep_ms: the virtual clock moves only when every thread
// is parked, so after a sleep every other thread has run until it parks.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "readyport/fake/fake_os.hpp"
#include "readyport/fake/free_runtime.hpp"
#include "readyport/fake/sim_scheduler.hpp"

namespace readyport {
namespace {

struct Schedule {
  std::uint64_t seed;
  SimStrategy strategy;
};

std::vector<Schedule> schedules() {
  std::vector<Schedule> out;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    out.push_back({seed, SimStrategy::kRandom});
    out.push_back({seed, SimStrategy::kPct});
  }
  out.push_back({0, SimStrategy::kRoundRobin});
  return out;
}

// Runs `body` as the main logical thread of a fresh scheduler and FakeOs, once per schedule.
void for_each_schedule(const std::function<void(FakeOs&)>& body) {
  for (const Schedule& schedule : schedules()) {
    SimOptions sim_options;
    sim_options.seed = schedule.seed;
    sim_options.strategy = schedule.strategy;
    SimScheduler sim(sim_options);
    FakeOs os(FakeOptions{}, sim);
    const Status status = sim.run([&] { body(os); });
    ASSERT_TRUE(status.ok()) << status.to_string() << " " << sim.parameters();
    EXPECT_EQ(os.stats().waiters, 0u);
  }
}

std::unique_ptr<Thread> start(FakeOs& os, std::string_view name, std::function<void()> body) {
  Result<std::unique_ptr<Thread>> thread = os.thread_start(name, std::move(body));
  READYPORT_ASSERT(thread.ok());
  return std::move(thread).value();
}

// One PSN dequeue of one entry with no timeout; the key, or 0 with the code in *code_out.
std::uintptr_t wait_one(FakeOs& os, Port port, std::uint32_t* code_out) {
  OverlappedEntry entry{};
  std::uint32_t received = 0;
  *code_out = os.process_socket_notifications(port, 0, nullptr, kInfinite, 1, &entry, &received);
  return *code_out == kErrorSuccess ? entry.completion_key : 0;
}

TEST(FakeThreads, MostRecentWaiterIsReleasedFirst) {
  for_each_schedule([](FakeOs& os) {
    const Port port = os.create_io_completion_port(0);
    std::uintptr_t first_got = 0;
    std::uintptr_t second_got = 0;
    std::uint32_t first_code = 0;
    std::uint32_t second_code = 0;
    auto first = start(os, "first", [&] { first_got = wait_one(os, port, &first_code); });
    os.sleep_ms(1);  // `first` is parked now
    auto second = start(os, "second", [&] { second_got = wait_one(os, port, &second_code); });
    os.sleep_ms(1);  // `second` is parked now, above `first`
    EXPECT_EQ(os.stats().waiters, 2u);
    EXPECT_TRUE(os.post_queued_completion_status(port, 0, 1, 0));
    os.sleep_ms(1);             // the released waiter took it
    EXPECT_EQ(second_got, 1u);  // spec F1: the most recent waiter
    EXPECT_EQ(first_got, 0u);
    EXPECT_TRUE(os.post_queued_completion_status(port, 0, 2, 0));
    first->join();
    second->join();
    EXPECT_EQ(first_got, 2u);
    EXPECT_EQ(first_code, kErrorSuccess);
    EXPECT_EQ(second_code, kErrorSuccess);
    EXPECT_TRUE(os.close_port(port));
  });
}

TEST(FakeThreads, ClosingThePortReleasesWaitersAbandoned) {
  for_each_schedule([](FakeOs& os) {
    const Port port = os.create_io_completion_port(0);
    std::uint32_t psn_code = 0;
    bool gqcs_result = true;
    std::uint32_t gqcs_error = 0;
    auto psn = start(os, "psn", [&] { (void)wait_one(os, port, &psn_code); });
    auto gqcs = start(os, "gqcs", [&] {
      OverlappedEntry entry{};
      std::uint32_t removed = 7;
      gqcs_result = os.get_queued_completion_status_ex(port, &entry, 1, &removed, 1000, false);
      gqcs_error = os.last_error();  // thread-local: this thread's own
      EXPECT_EQ(removed, 0u);
    });
    os.sleep_ms(1);
    EXPECT_TRUE(os.close_port(port));
    psn->join();
    gqcs->join();
    EXPECT_EQ(psn_code, kErrorAbandonedWait0);  // spec F6
    EXPECT_FALSE(gqcs_result);                  // spec F3
    EXPECT_EQ(gqcs_error, kErrorAbandonedWait0);
  });
}

TEST(FakeThreads, MutexIsHandedOverInArrivalOrder) {
  for_each_schedule([](FakeOs& os) {
    std::unique_ptr<Mutex> mutex = os.mutex_create();
    std::string order;
    mutex->lock();
    auto one = start(os, "one", [&] {
      mutex->lock();
      order += '1';
      mutex->unlock();
    });
    os.sleep_ms(1);
    auto two = start(os, "two", [&] {
      mutex->lock();
      order += '2';
      mutex->unlock();
    });
    os.sleep_ms(1);
    EXPECT_FALSE(mutex->try_lock());
    order += '0';
    mutex->unlock();
    one->join();
    two->join();
    EXPECT_EQ(order, "012");
  });
}

TEST(FakeThreads, BlockingCallsWaitForTheOtherThread) {
  for_each_schedule([](FakeOs& os) {
    const Socket listener = os.socket(kAfInet, kSockStream, kIpprotoTcp);
    EXPECT_EQ(os.bind(listener, Ipv4Address{kLoopbackHost, 0}), 0);
    EXPECT_EQ(os.listen(listener, 4), 0);
    Ipv4Address address{};
    EXPECT_EQ(os.getsockname(listener, &address), 0);
    Socket server = kInvalidSocket;
    std::string received;
    auto acceptor = start(os, "acceptor", [&] {
      server = os.accept(listener, nullptr);  // blocks until the connect
      char buffer[16] = {};
      const int got = os.recv(server, buffer, 16, 0);  // blocks until the send
      if (got > 0) {
        received.assign(buffer, static_cast<std::size_t>(got));
      }
    });
    os.sleep_ms(1);
    const Socket client = os.socket(kAfInet, kSockStream, kIpprotoTcp);
    EXPECT_EQ(os.connect(client, address), 0);
    os.sleep_ms(1);
    EXPECT_EQ(os.send(client, "ping", 4, 0), 4);
    acceptor->join();
    EXPECT_EQ(received, "ping");
    EXPECT_EQ(os.closesocket(server), 0);
    EXPECT_EQ(os.closesocket(client), 0);
    EXPECT_EQ(os.closesocket(listener), 0);
  });
}

TEST(FakeThreads, BlockingSendWaitsForRoomThenMovesEverything) {
  for_each_schedule([](FakeOs& os) {
    const Socket listener = os.socket(kAfInet, kSockStream, kIpprotoTcp);
    EXPECT_EQ(os.bind(listener, Ipv4Address{kLoopbackHost, 0}), 0);
    EXPECT_EQ(os.listen(listener, 4), 0);
    Ipv4Address address{};
    EXPECT_EQ(os.getsockname(listener, &address), 0);
    const Socket client = os.socket(kAfInet, kSockStream, kIpprotoTcp);
    EXPECT_EQ(os.connect(client, address), 0);
    const Socket server = os.accept(listener, nullptr);
    const std::string big(os.options().receive_buffer_bytes + 100, 'z');
    int sent = 0;
    auto sender = start(
        os, "sender", [&] { sent = os.send(client, big.data(), static_cast<int>(big.size()), 0); });
    os.sleep_ms(1);  // the sender filled the buffer and waits
    std::string buffer(big.size(), '\0');
    int total = 0;
    for (int i = 0; i < 8 && total < static_cast<int>(big.size()); ++i) {
      const int got =
          os.recv(server, buffer.data() + total, static_cast<int>(big.size()) - total, 0);
      ASSERT_GT(got, 0);
      total += got;
    }
    sender->join();
    EXPECT_EQ(sent, static_cast<int>(big.size()));
    EXPECT_EQ(total, static_cast<int>(big.size()));
  });
}

TEST(FakeThreads, ClosesocketInterruptsABlockedRecv) {
  for_each_schedule([](FakeOs& os) {
    Ipv4Address address{};
    const Socket udp = os.socket(kAfInet, kSockDgram, kIpprotoUdp);
    EXPECT_EQ(os.bind(udp, Ipv4Address{kLoopbackHost, 0}), 0);
    EXPECT_EQ(os.getsockname(udp, &address), 0);
    int result = 0;
    std::uint32_t error = 0;
    auto reader = start(os, "reader", [&] {
      char byte = 0;
      result = os.recvfrom(udp, &byte, 1, 0, nullptr);
      error = os.last_error();
    });
    os.sleep_ms(1);
    EXPECT_EQ(os.closesocket(udp), 0);
    reader->join();
    EXPECT_EQ(result, kSocketError);
    EXPECT_EQ(error, 10004u);  // WSAEINTR
  });
}

// Real, unscheduled threads (FreeRuntime; run it under ThreadSanitizer): three dequeuers share one
// port while the main thread posts packets and sends datagrams to a ONESHOT|LEVEL registered UDP
// socket that the dequeuers drain and re-arm. Every posted packet comes out exactly once.
TEST(FakeThreads, FreeThreadsShareOnePort) {
  FreeRuntime runtime;
  FakeOs os(FakeOptions{}, runtime);
  // The driving thread takes part: virtual time moves only when it waits too.
  runtime.run([&] {
    const Port port = os.create_io_completion_port(0);
    Ipv4Address address{};
    const Socket sink = os.socket(kAfInet, kSockDgram, kIpprotoUdp);
    const Socket source = os.socket(kAfInet, kSockDgram, kIpprotoUdp);
    EXPECT_EQ(os.set_nonblocking(sink, true), 0);
    EXPECT_EQ(os.bind(sink, Ipv4Address{kLoopbackHost, 0}), 0);
    EXPECT_EQ(os.getsockname(sink, &address), 0);
    constexpr std::uintptr_t kSinkKey = 1;
    constexpr std::uintptr_t kStopKey = 2;
    constexpr std::uintptr_t kDataKey = 3;
    constexpr int kPosts = 200;
    constexpr int kDequeuers = 3;
    std::unique_ptr<Mutex> counts_mutex = os.mutex_create();
    int posted_seen = 0;
    int datagrams_read = 0;
    SockNotifyRegistration arm{sink,
                               kSinkKey,
                               kSockNotifyRegisterEventIn,
                               kSockNotifyOpEnable,
                               kSockNotifyTriggerOneshot | kSockNotifyTriggerLevel,
                               0};
    EXPECT_EQ(os.process_socket_notifications(port, 1, &arm, 0, 0, nullptr, nullptr), 0u);
    auto dequeuer = [&] {
      bool rearm = false;
      for (int call = 0; call < 100'000; ++call) {
        SockNotifyRegistration rearm_reg = arm;
        OverlappedEntry entries[2] = {};
        std::uint32_t received = 0;
        const std::uint32_t code = os.process_socket_notifications(
            port, rearm ? 1 : 0, rearm ? &rearm_reg : nullptr, 50, 2, entries, &received);
        rearm = false;
        if (code == kWaitTimeout) {
          continue;
        }
        ASSERT_EQ(code, kErrorSuccess);
        int stops = 0;
        for (std::uint32_t i = 0; i < received; ++i) {
          if (entries[i].completion_key == kStopKey) {
            ++stops;
            continue;
          }
          counts_mutex->lock();
          if (entries[i].completion_key == kDataKey) {
            ++posted_seen;
          }
          if (entries[i].completion_key == kSinkKey) {
            char buffer[8];
            while (os.recvfrom(sink, buffer, 8, 0, nullptr) > 0) {
              ++datagrams_read;
            }
            rearm = true;
          }
          counts_mutex->unlock();
        }
        if (stops > 0) {
          // One stop is ours; a batch may have taken another thread's too: hand it back.
          for (int extra = 1; extra < stops; ++extra) {
            EXPECT_TRUE(os.post_queued_completion_status(port, 0, kStopKey, 0));
          }
          if (rearm) {
            SockNotifyRegistration last = arm;
            EXPECT_EQ(os.process_socket_notifications(port, 1, &last, 0, 0, nullptr, nullptr), 0u);
          }
          return;
        }
      }
      ADD_FAILURE() << "dequeuer never saw its stop packet";
    };
    std::vector<std::unique_ptr<Thread>> threads;
    for (int i = 0; i < kDequeuers; ++i) {
      threads.push_back(start(os, "dequeuer", dequeuer));
    }
    for (int i = 0; i < kPosts; ++i) {
      EXPECT_TRUE(os.post_queued_completion_status(port, 0, kDataKey, 0));
      if (i % 10 == 0) {
        EXPECT_EQ(os.sendto(source, "x", 1, 0, address), 1);
      }
    }
    for (int i = 0; i < kDequeuers; ++i) {
      EXPECT_TRUE(os.post_queued_completion_status(port, 0, kStopKey, 0));
    }
    for (auto& thread : threads) {
      thread->join();
    }
    EXPECT_EQ(posted_seen, kPosts);
    EXPECT_LE(datagrams_read, kPosts / 10);
    EXPECT_TRUE(os.close_port(port));
  });
}

}  // namespace
}  // namespace readyport
