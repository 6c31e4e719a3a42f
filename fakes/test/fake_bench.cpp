// readyport-fake-bench: how fast FakeOs models ProcessSocketNotifications (Google Benchmark; not a
// ctest test). Single thread, the inline runtime, default options.
//
//   build/<preset>/fakes/test/readyport-fake-bench
//
// - BM_RegisterDequeueCycle: one ProcessSocketNotifications call per cycle that ENABLEs a
//   ONESHOT|LEVEL registration on a readable socket and dequeues the packet that ENABLE queued
//   (spec A7): the engine's steady state for one busy connection. Counter cycles/s.
// - BM_Batch64RearmAndDequeue: one call carrying 64 re-arming ENABLEs (64 readable sockets) and
//   dequeueing the 64 packets they queue: the engine's batched steady state. The Time column is
//   the cost of one such call; counters calls/s and packets/s.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "readyport/fake/fake_os.hpp"

namespace readyport {
namespace {

constexpr int kBatch = 64;

// A connected loopback pair on `os` whose server end has 16 unread bytes. Returns the server end.
Socket readable_server(FakeOs& os) {
  const Socket listener = os.socket(kAfInet, kSockStream, kIpprotoTcp);
  READYPORT_ASSERT(listener != kInvalidSocket);
  READYPORT_ASSERT(os.bind(listener, Ipv4Address{kLoopbackHost, 0}) == 0);
  READYPORT_ASSERT(os.listen(listener, 4) == 0);
  Ipv4Address address;
  READYPORT_ASSERT(os.getsockname(listener, &address) == 0);
  const Socket client = os.socket(kAfInet, kSockStream, kIpprotoTcp);
  READYPORT_ASSERT(client != kInvalidSocket);
  READYPORT_ASSERT(os.connect(client, address) == 0);  // blocking; the fake's loopback is instant
  const Socket server = os.accept(listener, nullptr);
  READYPORT_ASSERT(server != kInvalidSocket);
  READYPORT_ASSERT(os.closesocket(listener) == 0);
  const char data[16] = {};
  READYPORT_ASSERT(os.send(client, data, 16, 0) == 16);
  return server;
}

SockNotifyRegistration rearm(Socket sock, std::uintptr_t key) {
  return SockNotifyRegistration{sock,
                                key,
                                kSockNotifyRegisterEventIn,
                                kSockNotifyOpEnable,
                                kSockNotifyTriggerOneshot | kSockNotifyTriggerLevel,
                                0};
}

void BM_RegisterDequeueCycle(benchmark::State& state) {
  FakeOs os;
  const Port port = os.create_io_completion_port(0);
  const Socket server = readable_server(os);
  SockNotifyRegistration reg = rearm(server, 1);
  OverlappedEntry entry{};
  std::uint32_t received = 0;
  for (auto _ : state) {
    reg.operation = kSockNotifyOpEnable;
    const std::uint32_t rc =
        os.process_socket_notifications(port, 1, &reg, 0, 1, &entry, &received);
    if (rc != kErrorSuccess || received != 1 || reg.registration_result != 0) {
      state.SkipWithError("the ENABLE's packet did not come back in the same call");
      break;
    }
    benchmark::DoNotOptimize(entry);
  }
  state.counters["cycles/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_RegisterDequeueCycle);

void BM_Batch64RearmAndDequeue(benchmark::State& state) {
  FakeOs os;
  const Port port = os.create_io_completion_port(0);
  std::vector<SockNotifyRegistration> regs;
  for (int i = 0; i < kBatch; ++i) {
    regs.push_back(rearm(readable_server(os), static_cast<std::uintptr_t>(i + 1)));
  }
  std::vector<OverlappedEntry> entries(kBatch);
  std::uint32_t received = 0;
  for (auto _ : state) {
    const std::uint32_t rc = os.process_socket_notifications(port, kBatch, regs.data(), 0, kBatch,
                                                             entries.data(), &received);
    if (rc != kErrorSuccess || received != kBatch) {
      state.SkipWithError("expected 64 packets from 64 re-armed readable sockets");
      break;
    }
    benchmark::DoNotOptimize(entries.data());
  }
  const double calls = static_cast<double>(state.iterations());
  state.counters["calls/s"] = benchmark::Counter(calls, benchmark::Counter::kIsRate);
  state.counters["packets/s"] = benchmark::Counter(calls * kBatch, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Batch64RearmAndDequeue);

}  // namespace
}  // namespace readyport

BENCHMARK_MAIN();
