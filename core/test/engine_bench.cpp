// readyport-engine-bench: the engine's cost over FakeOs.
//
// Workload ("busy connections"): N connected TCP pairs in the fake; the engine owns one end of
// each (one-shot level, IN), the bench keeps the other. Every notification is handled the same
// way: recv the byte that made the socket readable, send one byte from the peer end, so the
// socket is readable again, and re-arm IN. Everything is single-threaded on the inline runtime.
//
// - BM_EngineVsRawLoop: the same workload driven by the engine (poll) and by a raw loop that
//   calls the fake directly (ProcessSocketNotifications with the previous batch's re-arms, then
//   recv/send per entry). Counters: CPU ns per notification for each, and overhead_ratio =
//   engine / raw (target <= 1.5). Both sides alternate in one benchmark, so load on the
//   machine affects them alike.
// - BM_PortCallsPerNotification: port calls (PSN calls plus posts) per handled notification at
//   1,000 busy connections and batch 64 (target <= 0.1), and the same figure for a naive loop
//   that dequeues one packet per call and re-arms with a call of its own (>= 2).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <ctime>
#include <memory>
#include <vector>

#include "readyport/engine.hpp"
#include "readyport/fake/fake_os.hpp"

namespace readyport {
namespace {

constexpr std::uint8_t kOneshotLevel = kSockNotifyTriggerOneshot | kSockNotifyTriggerLevel;

struct Pair {
  Socket engine_end = kInvalidSocket;
  Socket peer_end = kInvalidSocket;
};

FakeOptions bench_fake_options(std::uint32_t connections) {
  FakeOptions options;
  options.sockets_max = 2 * connections + 16;
  options.batch_max = 4096;
  return options;
}

// N connected pairs, both ends non-blocking; each engine end has one byte to read.
std::vector<Pair> make_pairs(FakeOs& os, std::uint32_t count) {
  std::vector<Pair> pairs(count);
  const Socket listener = os.socket(kAfInet, kSockStream, kIpprotoTcp);
  Ipv4Address address{kLoopbackHost, 0};
  READYPORT_ASSERT(os.bind(listener, address) == 0);
  READYPORT_ASSERT(os.listen(listener, kSomaxconn) == 0);
  READYPORT_ASSERT(os.getsockname(listener, &address) == 0);
  for (Pair& pair : pairs) {
    pair.peer_end = os.socket(kAfInet, kSockStream, kIpprotoTcp);
    READYPORT_ASSERT(os.connect(pair.peer_end, address) == 0);
    pair.engine_end = os.accept(listener, nullptr);
    READYPORT_ASSERT(pair.engine_end != kInvalidSocket);
    READYPORT_ASSERT(os.set_nonblocking(pair.engine_end, true) == 0);
    READYPORT_ASSERT(os.set_nonblocking(pair.peer_end, true) == 0);
    const char byte = 1;
    READYPORT_ASSERT(os.send(pair.peer_end, &byte, 1, 0) == 1);
  }
  (void)os.closesocket(listener);
  return pairs;
}

// The per-notification work, shared by the engine's handler and the raw loop. Both call the fake
// through its final type, so neither side pays a virtual call for the handler's own work (the
// engine's calls through its seam, EngineOs, are virtual and count as its overhead).
inline void handle_readable(FakeOs& os, Socket engine_end, Socket peer_end) {
  char buffer[64];
  (void)os.recv(engine_end, buffer, sizeof buffer, 0);
  const char byte = 1;
  (void)os.send(peer_end, &byte, 1, 0);
}

class BusyHandler final : public Handler {
 public:
  BusyHandler(FakeOs& os, Socket peer_end) : os_(os), peer_end_(peer_end) {}
  Interest on_events(ConnId, Socket socket, std::uint32_t) noexcept override {
    handle_readable(os_, socket, peer_end_);
    return kInterestIn;
  }
  void on_closed(ConnId) noexcept override {}

 private:
  FakeOs& os_;
  Socket peer_end_;
};

// The engine side of the workload.
class EngineWorld {
 public:
  EngineWorld(std::uint32_t connections, std::uint32_t batch)
      : os_(bench_fake_options(connections)) {
    EngineOptions options;
    options.connections_max = connections;
    options.batch_count = batch;
    engine_ = std::make_unique<Engine>(os_, options);
    READYPORT_ASSERT(engine_->start().ok());
    pairs_ = make_pairs(os_, connections);
    handlers_.reserve(connections);
    for (const Pair& pair : pairs_) {
      handlers_.push_back(std::make_unique<BusyHandler>(os_, pair.peer_end));
      READYPORT_ASSERT(
          engine_->add(pair.engine_end, kInterestIn, Mode::kOneshotLevel, *handlers_.back()).ok());
    }
  }
  ~EngineWorld() {
    (void)engine_->stop();
    for (const Pair& pair : pairs_) {
      (void)os_.closesocket(pair.peer_end);
    }
  }

  // Handles at least `count` notifications.
  void run(std::uint64_t count) {
    // Every entry is one notification in this workload (no tasks, no closes).
    for (std::uint64_t handled = 0; handled < count;) {
      handled += engine_->poll(0).value();
    }
  }
  EngineStats stats() const { return engine_->stats(); }

 private:
  FakeOs os_;
  std::unique_ptr<Engine> engine_;
  std::vector<Pair> pairs_;
  std::vector<std::unique_ptr<BusyHandler>> handlers_;
};

// The raw loop: the fake called directly, re-arms batched into the next call like the engine.
class RawWorld {
 public:
  RawWorld(std::uint32_t connections, std::uint32_t batch)
      : os_(bench_fake_options(connections)), batch_(batch), entries_(batch), regs_(batch) {
    port_ = os_.create_io_completion_port(0);
    pairs_ = make_pairs(os_, connections);
    std::vector<SockNotifyRegistration> initial(connections);
    for (std::uint32_t i = 0; i < connections; ++i) {
      initial[i] =
          SockNotifyRegistration{pairs_[i].engine_end, i + 1,         kSockNotifyRegisterEventIn,
                                 kSockNotifyOpEnable,  kOneshotLevel, 0};
    }
    READYPORT_ASSERT(os_.process_socket_notifications(port_, connections, initial.data(), 0, 0,
                                                      nullptr, nullptr) == kErrorSuccess);
  }
  ~RawWorld() {
    for (const Pair& pair : pairs_) {
      (void)os_.closesocket(pair.engine_end);
      (void)os_.closesocket(pair.peer_end);
    }
    (void)os_.close_port(port_);
  }

  void run(std::uint64_t count) {
    std::uint64_t handled = 0;
    while (handled < count) {
      std::uint32_t received = 0;
      const std::uint32_t error =
          os_.process_socket_notifications(port_, reg_count_, reg_count_ ? regs_.data() : nullptr,
                                           0, batch_, entries_.data(), &received);
      READYPORT_ASSERT(error == kErrorSuccess || error == kWaitTimeout);
      ++calls_;
      reg_count_ = 0;
      for (std::uint32_t i = 0; i < received; ++i) {
        const std::uintptr_t key = entries_[i].completion_key;
        const Pair& pair = pairs_[key - 1];
        handle_readable(os_, pair.engine_end, pair.peer_end);
        regs_[reg_count_++] =
            SockNotifyRegistration{pair.engine_end,     key,           kSockNotifyRegisterEventIn,
                                   kSockNotifyOpEnable, kOneshotLevel, 0};
      }
      handled += received;
      notifications_ += received;
    }
  }

  // The naive shape: one packet per call, and a call of its own for each re-arm.
  void run_naive(std::uint64_t count) {
    for (std::uint64_t handled = 0; handled < count;) {
      std::uint32_t received = 0;
      (void)os_.process_socket_notifications(port_, 0, nullptr, 0, 1, entries_.data(), &received);
      ++calls_;
      if (received == 0) {
        continue;
      }
      const std::uintptr_t key = entries_[0].completion_key;
      const Pair& pair = pairs_[key - 1];
      handle_readable(os_, pair.engine_end, pair.peer_end);
      SockNotifyRegistration rearm{pair.engine_end,     key,           kSockNotifyRegisterEventIn,
                                   kSockNotifyOpEnable, kOneshotLevel, 0};
      (void)os_.process_socket_notifications(port_, 1, &rearm, 0, 0, nullptr, nullptr);
      ++calls_;
      ++handled;
      ++notifications_;
    }
  }
  double calls_per_notification() const {
    return notifications_ ? static_cast<double>(calls_) / static_cast<double>(notifications_) : 0.0;
  }

 private:
  FakeOs os_;
  Port port_;
  std::uint32_t batch_;
  std::vector<Pair> pairs_;
  std::vector<OverlappedEntry> entries_;
  std::vector<SockNotifyRegistration> regs_;
  std::uint32_t reg_count_ = 0;
  std::uint64_t calls_ = 0;
  std::uint64_t notifications_ = 0;
};

// The calling thread's CPU time where the platform has it (the machines are shared: wall time
// counts other processes), else the steady clock.
double now_ns() {
#if defined(CLOCK_THREAD_CPUTIME_ID)
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
#else
  return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::steady_clock::now().time_since_epoch())
                                 .count());
#endif
}

void BM_EngineVsRawLoop(benchmark::State& state) {
  const auto connections = static_cast<std::uint32_t>(state.range(0));
  const auto batch = static_cast<std::uint32_t>(state.range(1));
  const std::uint64_t chunk = 16 * std::uint64_t{batch};
  EngineWorld engine(connections, batch);
  RawWorld raw(connections, batch);
  engine.run(chunk);  // warm up both
  raw.run(chunk);
  double engine_ns = 0;
  double raw_ns = 0;
  std::uint64_t notifications = 0;
  for (auto _ : state) {
    // Alternate the order so that neither side always runs with a warmer cache.
    const bool engine_first = (notifications / chunk) % 2 == 0;
    for (int side = 0; side < 2; ++side) {
      const double start = now_ns();
      if ((side == 0) == engine_first) {
        engine.run(chunk);
        engine_ns += now_ns() - start;
      } else {
        raw.run(chunk);
        raw_ns += now_ns() - start;
      }
    }
    notifications += chunk;
  }
  const double n = static_cast<double>(notifications);
  state.counters["engine_ns_per_notification"] = engine_ns / n;
  state.counters["raw_ns_per_notification"] = raw_ns / n;
  state.counters["overhead_ratio"] = engine_ns / raw_ns;
  state.counters["engine_notifications_per_s"] = n / (engine_ns * 1e-9);
  state.counters["raw_notifications_per_s"] = n / (raw_ns * 1e-9);
  state.SetItemsProcessed(static_cast<std::int64_t>(notifications));
}
BENCHMARK(BM_EngineVsRawLoop)->Args({1000, 64})->Args({64, 16})->Unit(benchmark::kMillisecond);

void BM_PortCallsPerNotification(benchmark::State& state) {
  const auto connections = static_cast<std::uint32_t>(state.range(0));
  const auto batch = static_cast<std::uint32_t>(state.range(1));
  EngineWorld engine(connections, batch);
  RawWorld naive(connections, batch);
  const EngineStats before = engine.stats();
  for (auto _ : state) {
    engine.run(std::uint64_t{connections} * 4);
    naive.run_naive(std::uint64_t{batch} * 4);
  }
  const EngineStats after = engine.stats();
  const double handled = static_cast<double>(after.notifications - before.notifications);
  const double calls =
      static_cast<double>((after.port_calls - before.port_calls) + (after.posts - before.posts));
  state.counters["port_calls_per_notification"] = calls / handled;
  state.counters["naive_port_calls_per_notification"] = naive.calls_per_notification();
  state.counters["notifications"] = handled;
}
BENCHMARK(BM_PortCallsPerNotification)->Args({1000, 64})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace readyport

BENCHMARK_MAIN();
