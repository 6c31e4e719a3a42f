// The engine with several worker threads over FakeOs: SimScheduler seeds (replayable) and
// FreeRuntime (real threads, for ThreadSanitizer). A chaos workload (data, closes from outside
// and from handlers, notify, tasks, peer shutdowns, slot and socket reuse, stop with connections
// open) runs while FlakyOs injects whole-call failures (spec A3) and per-registration failures
// of ENABLE, DISABLE and REMOVE (A8, B6 -> E4 quarantine). A lifetime checker (an
// EngineObserver) judges every event: never two threads in one connection's handler, REMOVE seen
// at most once, socket closed only after REMOVE (or quarantine), slot freed only after that and
// with no handler inside, on_closed exactly once per successful add.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "readyport/engine.hpp"
#include "readyport/fake/fake_os.hpp"
#include "readyport/fake/free_runtime.hpp"
#include "readyport/fake/rng.hpp"
#include "readyport/fake/sim_scheduler.hpp"

namespace readyport::test {
namespace {

// ---- FlakyOs: seeded failures in front of an Os ----------------------------------------------

struct FlakyRates {                  // percentages
  std::uint32_t call_failure = 0;    // whole PSN call fails, nothing changes (spec A3)
  std::uint32_t enable_failure = 0;  // one ENABLE/DISABLE is not applied (spec A8)
  std::uint32_t remove_failure = 0;  // one REMOVE is not applied (spec B6/E4)
};

class FlakyOs final : public Os {
 public:
  FlakyOs(Os& inner, std::uint64_t seed, FlakyRates rates)
      : inner_(inner), rng_(seed), rates_(rates) {}

  std::uint32_t process_socket_notifications(Port port, std::uint32_t count,
                                             SockNotifyRegistration* regs, std::uint32_t timeout_ms,
                                             std::uint32_t completion_count,
                                             OverlappedEntry* entries,
                                             std::uint32_t* received_out) override {
    std::vector<SockNotifyRegistration> kept;
    std::vector<std::uint32_t> kept_index;
    std::vector<std::uint32_t> failed(count, 0);
    {
      std::lock_guard<std::mutex> lock(mutex_);  // the Rng only; no seam call inside
      if (rng_.chance(rates_.call_failure, 100)) {
        if (received_out != nullptr) *received_out = 0;
        ++call_failures;
        return kErrorNotEnoughMemory;
      }
      for (std::uint32_t i = 0; i < count; ++i) {
        const bool remove = regs[i].operation == kSockNotifyOpRemove;
        if (rng_.chance(remove ? rates_.remove_failure : rates_.enable_failure, 100)) {
          failed[i] = remove ? kWsaEinval : kWsaEnobufs;
          ++registration_failures;
        } else {
          kept.push_back(regs[i]);
          kept_index.push_back(i);
        }
      }
    }
    if (kept.size() == count)
      return inner_.process_socket_notifications(port, count, regs, timeout_ms, completion_count,
                                                 entries, received_out);
    const std::uint32_t code = inner_.process_socket_notifications(
        port, static_cast<std::uint32_t>(kept.size()), kept.empty() ? nullptr : kept.data(),
        timeout_ms, completion_count, entries, received_out);
    for (std::size_t k = 0; k < kept.size(); ++k)
      regs[kept_index[k]].registration_result = kept[k].registration_result;
    for (std::uint32_t i = 0; i < count; ++i) {
      if (failed[i] != 0) regs[i].registration_result = failed[i];
    }
    return code;
  }

  // Everything else is forwarded unchanged.
  Port create_io_completion_port(std::uint32_t c) override {
    return inner_.create_io_completion_port(c);
  }
  bool close_port(Port p) override { return inner_.close_port(p); }
  bool get_queued_completion_status_ex(Port p, OverlappedEntry* e, std::uint32_t c,
                                       std::uint32_t* r, std::uint32_t t, bool a) override {
    return inner_.get_queued_completion_status_ex(p, e, c, r, t, a);
  }
  bool post_queued_completion_status(Port p, std::uint32_t b, std::uintptr_t k,
                                     std::uintptr_t o) override {
    return inner_.post_queued_completion_status(p, b, k, o);
  }
  Socket socket(int af, int type, int protocol) override {
    return inner_.socket(af, type, protocol);
  }
  int bind(Socket s, const Ipv4Address& a) override { return inner_.bind(s, a); }
  int getsockname(Socket s, Ipv4Address* a) override { return inner_.getsockname(s, a); }
  int listen(Socket s, int b) override { return inner_.listen(s, b); }
  Socket accept(Socket s, Ipv4Address* p) override { return inner_.accept(s, p); }
  int connect(Socket s, const Ipv4Address& a) override { return inner_.connect(s, a); }
  int send(Socket s, const void* d, int l, int f) override { return inner_.send(s, d, l, f); }
  int recv(Socket s, void* d, int l, int f) override { return inner_.recv(s, d, l, f); }
  int sendto(Socket s, const void* d, int l, int f, const Ipv4Address& t) override {
    return inner_.sendto(s, d, l, f, t);
  }
  int recvfrom(Socket s, void* d, int l, int f, Ipv4Address* a) override {
    return inner_.recvfrom(s, d, l, f, a);
  }
  int shutdown(Socket s, int h) override { return inner_.shutdown(s, h); }
  int closesocket(Socket s) override { return inner_.closesocket(s); }
  int set_nonblocking(Socket s, bool n) override { return inner_.set_nonblocking(s, n); }
  int set_linger(Socket s, bool e, std::uint16_t t) override { return inner_.set_linger(s, e, t); }
  int get_socket_error(Socket s, std::uint32_t* e) override {
    return inner_.get_socket_error(s, e);
  }
  std::uint32_t last_error() override { return inner_.last_error(); }
  std::unique_ptr<Mutex> mutex_create() override { return inner_.mutex_create(); }
  Result<std::unique_ptr<Thread>> thread_start(std::string_view n,
                                               std::function<void()> b) override {
    return inner_.thread_start(n, std::move(b));
  }
  std::uint64_t now_ns() override { return inner_.now_ns(); }
  void sleep_ms(std::uint32_t d) override { inner_.sleep_ms(d); }

  std::atomic<std::uint64_t> call_failures{0};
  std::atomic<std::uint64_t> registration_failures{0};

 private:
  Os& inner_;
  std::mutex mutex_;
  Rng rng_;
  const FlakyRates rates_;
};

// ---- The lifetime checker
// ------------------------------------------------------------------------

class LifetimeChecker final : public EngineObserver {
 public:
  void on_slot_acquired(ConnId id, Socket) override {
    std::lock_guard<std::mutex> lock(mutex_);
    Record& r = live_[id.slot];
    check(r.generation == 0, "acquired a slot that is live", id);
    r = Record{};
    r.generation = id.generation;
  }
  void on_handler_enter(ConnId id, std::uint32_t) override {
    std::lock_guard<std::mutex> lock(mutex_);
    Record* r = find(id, "handler entered");
    if (r == nullptr) return;
    check(!r->in_handler, "two threads in one connection's handler", id);
    check(!r->socket_closed, "handler entered after its socket was closed", id);
    r->in_handler = true;
    ++handler_calls;
  }
  void on_handler_leave(ConnId id, Interest) override {
    std::lock_guard<std::mutex> lock(mutex_);
    Record* r = find(id, "handler left");
    if (r == nullptr) return;
    check(r->in_handler, "handler left but was not entered", id);
    r->in_handler = false;
  }
  void on_remove_seen(ConnId id) override {
    std::lock_guard<std::mutex> lock(mutex_);
    Record* r = find(id, "REMOVE seen");
    if (r == nullptr) return;
    check(!r->remove_seen && !r->quarantined, "REMOVE seen twice, or after a quarantine", id);
    r->remove_seen = true;
    ++removes;
  }
  void on_quarantined(ConnId id) override {
    std::lock_guard<std::mutex> lock(mutex_);
    Record* r = find(id, "quarantined");
    if (r == nullptr) return;
    check(!r->remove_seen && !r->quarantined, "quarantined after REMOVE", id);
    r->quarantined = true;
    ++quarantines;
  }
  void on_socket_closed(ConnId id, Socket) override {
    std::lock_guard<std::mutex> lock(mutex_);
    Record* r = find(id, "socket closed");
    if (r == nullptr) return;
    check(r->remove_seen || r->quarantined, "socket closed before REMOVE or quarantine", id);
    check(!r->socket_closed, "socket closed twice", id);
    check(!r->in_handler, "socket closed while its handler runs", id);
    r->socket_closed = true;
  }
  void on_slot_freed(ConnId id) override {
    std::lock_guard<std::mutex> lock(mutex_);
    Record* r = find(id, "slot freed");
    if (r == nullptr) return;
    check(!r->in_handler, "slot freed while its handler runs", id);
    const bool registered_once = r->remove_seen || r->quarantined;
    check(!registered_once || r->socket_closed, "slot freed before its socket was closed", id);
    live_.erase(id.slot);
  }

  void finish() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!live_.empty() && violation_.empty())
      violation_ = "slot " + std::to_string(live_.begin()->first) + " never freed";
  }
  std::string violation() {
    std::lock_guard<std::mutex> lock(mutex_);
    return violation_;
  }
  std::uint64_t handler_calls = 0;
  std::uint64_t removes = 0;
  std::uint64_t quarantines = 0;

 private:
  struct Record {
    std::uint32_t generation = 0;
    bool in_handler = false;
    bool remove_seen = false;
    bool quarantined = false;
    bool socket_closed = false;
  };
  Record* find(ConnId id, const char* what) {
    auto it = live_.find(id.slot);
    if (it == live_.end() || it->second.generation != id.generation) {
      check(false, std::string(what) + " for a connection that is not live", id);
      return nullptr;
    }
    return &it->second;
  }
  void check(bool ok, const std::string& what, ConnId id) {
    if (ok || !violation_.empty()) return;
    violation_ = what + " (slot " + std::to_string(id.slot) + ", generation " +
                 std::to_string(id.generation) + ")";
  }

  std::mutex mutex_;
  std::map<std::uint32_t, Record> live_;
  std::string violation_;
};

// ---- The chaos workload
// --------------------------------------------------------------------------

struct ChaosShape {
  std::uint32_t pairs = 6;
  std::uint32_t workers = 3;
  std::uint32_t actions = 50;
  FlakyRates rates;
};

struct ChaosOutcome {
  std::string failure;  // empty: every check held
  std::uint64_t handler_calls = 0;
  std::uint64_t quarantines = 0;
  std::uint64_t adds = 0;
  EngineStats stats;
};

class ChaosTask final : public Task {
 public:
  void run() override { runs.fetch_add(1); }
  std::atomic<int> runs{0};
};

class ChaosConnection final : public Handler {
 public:
  ChaosConnection(Os& os, std::uint32_t close_every) : os_(os), close_every_(close_every) {}

  Interest on_events(ConnId, Socket socket, std::uint32_t events) override {
    ++calls_;  // never concurrent for one connection (the checker verifies it)
    if ((events & kSockNotifyEventErr) != 0) return kInterestClose;
    char buffer[64];
    for (;;) {
      const int n = os_.recv(socket, buffer, sizeof buffer, 0);
      if (n > 0) continue;
      if (n == 0) return kInterestClose;  // the peer shut down
      if (os_.last_error() != kWsaEwouldblock) return kInterestClose;
      break;
    }
    if (close_every_ != 0 && calls_ % close_every_ == 0) return kInterestClose;
    return kInterestIn;
  }
  void on_closed(ConnId) override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++closed_;
  }
  int closed() {
    std::lock_guard<std::mutex> lock(mutex_);
    return closed_;
  }

 private:
  Os& os_;
  const std::uint32_t close_every_;
  std::uint32_t calls_ = 0;
  std::mutex mutex_;
  int closed_ = 0;
};

struct ChaosPair {
  Socket engine_end = kInvalidSocket;
  Socket peer_end = kInvalidSocket;
  ConnId id;
  bool added = false;
  std::unique_ptr<ChaosConnection> handler;
};

bool make_pair(Os& os, Socket listener, const Ipv4Address& address, ChaosPair* pair) {
  pair->peer_end = os.socket(kAfInet, kSockStream, kIpprotoTcp);
  if (pair->peer_end == kInvalidSocket) return false;
  if (os.connect(pair->peer_end, address) != 0) return false;
  pair->engine_end = os.accept(listener, nullptr);
  if (pair->engine_end == kInvalidSocket) return false;
  return os.set_nonblocking(pair->engine_end, true) == 0 &&
         os.set_nonblocking(pair->peer_end, true) == 0;
}

// The body: runs on a thread of `fake`'s runtime that may start threads.
ChaosOutcome chaos_body(FakeOs& fake, std::uint64_t seed, const ChaosShape& shape) {
  ChaosOutcome outcome;
  FlakyOs os(fake, SeedStreams(seed).seed(SeedStream::kFaults), shape.rates);
  Rng rng = SeedStreams(seed).stream(SeedStream::kWorkload);
  LifetimeChecker checker;
  EngineOptions options;
  options.connections_max = shape.pairs + 2;
  options.batch_count = 1 + static_cast<std::uint32_t>(rng.below(4));
  options.workers_max = shape.workers + 1;
  options.wait_timeout_ms = 50;
  options.call_retry_max = 3;
  options.observer = &checker;
  Engine engine(os, options);
  if (!engine.start().ok()) {
    outcome.failure = "start failed";
    return outcome;
  }
  std::vector<std::unique_ptr<Thread>> workers;
  for (std::uint32_t i = 0; i < shape.workers; ++i)
    workers.push_back(os.thread_start("worker", [&] { (void)engine.run_worker(); }).value());

  const Socket listener = os.socket(kAfInet, kSockStream, kIpprotoTcp);
  Ipv4Address address{kLoopbackHost, 0};
  (void)os.bind(listener, address);
  (void)os.listen(listener, 64);
  (void)os.getsockname(listener, &address);
  std::vector<ChaosPair> pairs;  // grows on re-adds; reserved so handlers never move
  pairs.reserve(shape.pairs + shape.actions);
  const Mode modes[] = {Mode::kOneshotLevel, Mode::kPersistentLevel, Mode::kPersistentEdge,
                        Mode::kOneshotEdge};
  auto add_pair = [&] {
    pairs.emplace_back();
    ChaosPair& p = pairs.back();
    if (!make_pair(os, listener, address, &p)) {
      if (p.engine_end != kInvalidSocket) (void)os.closesocket(p.engine_end);
      return;
    }
    p.handler = std::make_unique<ChaosConnection>(os, static_cast<std::uint32_t>(rng.below(6)));
    const Mode mode = modes[rng.below(4)];
    Result<ConnId> id = engine.add(p.engine_end, kInterestIn, mode, *p.handler);
    if (id.ok()) {
      p.id = id.value();
      p.added = true;
      ++outcome.adds;
      if (mode == Mode::kPersistentEdge || mode == Mode::kOneshotEdge)
        (void)engine.notify(p.id, kSockNotifyEventIn);
    } else {
      (void)os.closesocket(p.engine_end);  // refused (injected failure): still ours
    }
  };
  for (std::uint32_t i = 0; i < shape.pairs; ++i) add_pair();

  std::vector<std::unique_ptr<ChaosTask>> tasks;
  int posted = 0;
  for (std::uint32_t a = 0; a < shape.actions; ++a) {
    ChaosPair& p = pairs[rng.below(pairs.size())];
    const std::uint64_t pick = rng.below(100);
    if (pick < 40) {
      const char bytes[3] = {1, 2, 3};
      (void)os.send(p.peer_end, bytes, 1 + static_cast<int>(rng.below(3)), 0);
    } else if (pick < 55) {
      if (p.added) (void)engine.close(p.id);
    } else if (pick < 65) {
      if (p.added) (void)engine.notify(p.id, kSockNotifyEventIn);
    } else if (pick < 72) {
      tasks.push_back(std::make_unique<ChaosTask>());
      if (engine.post(*tasks.back()).ok()) ++posted;
    } else if (pick < 77) {
      (void)os.shutdown(p.peer_end, kSdSend);
    } else if (pick < 82) {
      if (pairs.size() < pairs.capacity() && engine.stats().connections_live < shape.pairs)
        add_pair();  // slot and SOCKET value reuse (spec E5)
    } else {
      os.sleep_ms(1 + static_cast<std::uint32_t>(rng.below(3)));
    }
  }
  const Status stopped = engine.stop();  // with connections open
  for (auto& worker : workers) worker->join();
  checker.finish();
  outcome.failure = checker.violation();
  if (!stopped.ok() && outcome.failure.empty()) outcome.failure = stopped.to_string();
  int runs = 0;
  for (auto& task : tasks) runs += task->runs.load();
  if (outcome.failure.empty() && runs != posted)
    outcome.failure = "tasks run " + std::to_string(runs) + " of " + std::to_string(posted);
  for (ChaosPair& p : pairs) {
    if (outcome.failure.empty() && p.added && p.handler->closed() != 1)
      outcome.failure = "on_closed called " + std::to_string(p.handler->closed()) +
                        " times for slot " + std::to_string(p.id.slot);
    if (p.peer_end != kInvalidSocket) (void)os.closesocket(p.peer_end);
  }
  (void)os.closesocket(listener);
  if (outcome.failure.empty() && fake.stats().registrations_live != 0)
    outcome.failure = "registrations left in the fake";
  if (outcome.failure.empty() && fake.stats().sockets_open != 0)
    outcome.failure = std::to_string(fake.stats().sockets_open) + " sockets left open";
  outcome.handler_calls = checker.handler_calls;
  outcome.quarantines = checker.quarantines;
  outcome.stats = engine.stats();
  return outcome;
}

struct SimCase {
  SimStrategy strategy;
  FlakyRates rates;
  const char* name;
};

class EngineSimTest : public testing::TestWithParam<SimCase> {};

TEST_P(EngineSimTest, ChaosUnderTheSchedulerKeepsEveryLifetimePromise) {
  std::uint64_t handler_calls = 0;
  std::uint64_t quarantines = 0;
  std::uint64_t failures_injected = 0;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    SimOptions sim_options;
    sim_options.seed = seed;
    sim_options.strategy = GetParam().strategy;
    sim_options.pct_steps_estimate = 4000;
    sim_options.steps_max = 2'000'000;
    SimScheduler sim(sim_options);
    FakeOptions fake_options;
    fake_options.seed = seed;
    fake_options.remove_separate_packet = seed % 2 == 0;  // both readings of spec D4
    fake_options.oneshot_disarm =
        seed % 3 == 0 ? OneshotDisarm::kAtQueue : OneshotDisarm::kAtDequeue;
    FakeOs fake(fake_options, sim);
    ChaosShape shape;
    shape.rates = GetParam().rates;
    ChaosOutcome outcome;
    const Status run = sim.run([&] { outcome = chaos_body(fake, seed, shape); });
    ASSERT_TRUE(run.ok()) << "seed " << seed << " " << sim.parameters() << ": " << run.to_string();
    ASSERT_TRUE(outcome.failure.empty())
        << "seed " << seed << " " << sim.parameters() << ": " << outcome.failure;
    handler_calls += outcome.handler_calls;
    quarantines += outcome.quarantines;
    failures_injected += outcome.stats.call_failures + outcome.stats.registration_failures;
  }
  std::printf("[ chaos    ] 60 seeds: %llu handler calls, %llu quarantines, %llu failures\n",
              static_cast<unsigned long long>(handler_calls),
              static_cast<unsigned long long>(quarantines),
              static_cast<unsigned long long>(failures_injected));
  EXPECT_GT(handler_calls, 0u);
  if (GetParam().rates.remove_failure > 0) {
    EXPECT_GT(quarantines, 0u);
  }
  if (GetParam().rates.call_failure > 0) {
    EXPECT_GT(failures_injected, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Strategies, EngineSimTest,
                         testing::Values(SimCase{SimStrategy::kRandom, {}, "random"},
                                         SimCase{SimStrategy::kPct, {}, "pct"},
                                         SimCase{
                                             SimStrategy::kRandom, {10, 10, 25}, "random_faults"},
                                         SimCase{SimStrategy::kPct, {10, 10, 25}, "pct_faults"}),
                         [](const testing::TestParamInfo<SimCase>& param_info) {
                           return std::string(param_info.param.name);
                         });

TEST(EngineSimDeterminism, SameSeedSameCounters) {
  auto once = [](std::uint64_t seed) {
    SimOptions sim_options;
    sim_options.seed = seed;
    sim_options.strategy = SimStrategy::kPct;
    SimScheduler sim(sim_options);
    FakeOptions fake_options;
    fake_options.seed = seed;
    FakeOs fake(fake_options, sim);
    ChaosShape shape;
    shape.rates = {5, 5, 20};
    ChaosOutcome outcome;
    EXPECT_TRUE(sim.run([&] { outcome = chaos_body(fake, seed, shape); }).ok());
    return std::vector<std::uint64_t>{sim.stats().schedule_hash, sim.stats().steps,
                                      outcome.handler_calls,     outcome.stats.port_calls,
                                      outcome.stats.packets,     outcome.quarantines};
  };
  EXPECT_EQ(once(42), once(42));
  EXPECT_EQ(once(7), once(7));
}

TEST(EngineFreeRuntimeTest, ChaosOnRealThreads) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    FreeRuntime runtime;
    FakeOptions fake_options;
    fake_options.seed = seed;
    FakeOs fake(fake_options, runtime);
    ChaosShape shape;
    shape.workers = 4;
    shape.actions = 200;
    shape.rates = {5, 5, 20};
    const ChaosOutcome outcome = chaos_body(fake, seed, shape);
    ASSERT_TRUE(outcome.failure.empty()) << "seed " << seed << ": " << outcome.failure;
  }
}

}  // namespace
}  // namespace readyport::test
