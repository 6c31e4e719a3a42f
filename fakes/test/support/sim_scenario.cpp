// The standard multi-threaded scenario. See sim_scenario.hpp.
#include "sim_scenario.hpp"

#include <memory>
#include <mutex>
#include <utility>

#include "readyport/assert.hpp"
#include "readyport/fake/fake_os.hpp"
#include "readyport/fake/recording_os.hpp"

namespace readyport {

namespace {

// Keys: a socket's packets carry 1 + its index; posted data packets kPostedKeyFirst + their
// index; stop packets kStopKey.
constexpr std::uintptr_t kPostedKeyFirst = 0x1000;
constexpr std::uintptr_t kStopKey = 0xFFFF;
constexpr int kDatagramBytes = 16;
constexpr std::uint32_t kDrainMax = 64;  // recvfrom calls per socket packet at most

struct Shared {
  std::unique_ptr<Mutex> mutex;  // guards everything below
  ScenarioCounts counts;
  std::vector<std::uint32_t> posted_seen;  // per posted packet: how many times dequeued
  Status broken;                           // the first broken invariant
};

struct Endpoints {
  Port port;
  std::vector<Socket> sockets;
  std::vector<Ipv4Address> addresses;
  Socket sender = kInvalidSocket;
};

void note_broken(Shared& shared, std::string what) {
  shared.mutex->lock();
  if (shared.broken.ok()) {
    shared.broken = Status(StatusCode::kFailedPrecondition, std::move(what));
  }
  shared.mutex->unlock();
}

SockNotifyRegistration enable_in(Socket s, std::uint32_t index) {
  SockNotifyRegistration registration;
  registration.socket = s;
  registration.completion_key = 1 + index;
  registration.event_filter = kSockNotifyRegisterEventIn;
  registration.operation = kSockNotifyOpEnable;
  registration.trigger_flags = kSockNotifyTriggerOneshot | kSockNotifyTriggerLevel;
  return registration;
}

// Reads every datagram queued on `s`; returns how many.
std::uint32_t drain(Os& os, Shared& shared, Socket s) {
  char buffer[kDatagramBytes * 2];
  std::uint32_t received = 0;
  for (std::uint32_t i = 0; i < kDrainMax; ++i) {
    Ipv4Address from;
    const int result = os.recvfrom(s, buffer, static_cast<int>(sizeof(buffer)), 0, &from);
    if (result >= 0) {
      received += 1;
      continue;
    }
    const std::uint32_t error = os.last_error();
    if (error != kWsaEwouldblock) {
      note_broken(shared, "recvfrom failed with " + std::string(os_error_name(error)));
    }
    return received;
  }
  note_broken(shared, "a socket never drained");
  return received;
}

// One dequeuer: waits on the port, drains the sockets it is told about and re-arms them in its
// next call, counts posted packets, stops at a stop packet (re-posting any extra it took).
void dequeuer(Os& os, const Endpoints& endpoints, const ScenarioShape& shape, Shared& shared) {
  std::vector<SockNotifyRegistration> rearm;
  std::vector<OverlappedEntry> entries(shape.batch);
  bool stopped = false;
  for (std::uint32_t loop = 0; loop < shape.loops_max && !stopped; ++loop) {
    std::uint32_t received = 0;
    const std::uint32_t result =
        os.process_socket_notifications(endpoints.port, static_cast<std::uint32_t>(rearm.size()),
                                        rearm.empty() ? nullptr : rearm.data(), shape.timeout_ms,
                                        shape.batch, entries.data(), &received);
    for (const SockNotifyRegistration& registration : rearm) {
      if (registration.registration_result != 0) {
        note_broken(shared, "a re-arm failed");
      }
    }
    rearm.clear();
    if (result != kErrorSuccess && result != kWaitTimeout) {
      note_broken(shared, std::string("psn failed with ") + os_error_name(result));
      return;
    }
    ScenarioCounts seen;
    std::vector<std::uint32_t> posted;
    if (result == kWaitTimeout) {
      seen.timeouts = 1;
    }
    for (std::uint32_t i = 0; i < received; ++i) {
      const std::uintptr_t key = entries[i].completion_key;
      if (key == kStopKey) {
        seen.stops_seen += 1;
      } else if (key >= kPostedKeyFirst) {
        posted.push_back(static_cast<std::uint32_t>(key - kPostedKeyFirst));
      } else if (key >= 1 && key <= endpoints.sockets.size()) {
        const auto index = static_cast<std::uint32_t>(key - 1);
        seen.socket_packets += 1;
        seen.datagrams_received += drain(os, shared, endpoints.sockets[index]);
        rearm.push_back(enable_in(endpoints.sockets[index], index));
      } else {
        note_broken(shared, "a packet with an unknown key " + std::to_string(key));
      }
    }
    if (seen.stops_seen > 0) {
      stopped = true;
      // One stop per dequeuer: give back the extra ones this batch took.
      for (std::uint32_t extra = 1; extra < seen.stops_seen; ++extra) {
        if (!os.post_queued_completion_status(endpoints.port, 0, kStopKey, 0)) {
          note_broken(shared, "re-posting a stop failed");
        }
      }
    }
    shared.mutex->lock();
    shared.counts.timeouts += seen.timeouts;
    shared.counts.socket_packets += seen.socket_packets;
    shared.counts.datagrams_received += seen.datagrams_received;
    shared.counts.stops_seen += seen.stops_seen > 0 ? 1 : 0;
    for (const std::uint32_t index : posted) {
      if (index >= shared.posted_seen.size()) {
        if (shared.broken.ok()) {
          shared.broken = Status(StatusCode::kFailedPrecondition, "bad key");
        }
        continue;
      }
      shared.posted_seen[index] += 1;
      shared.counts.posted_dequeued += 1;
    }
    shared.mutex->unlock();
  }
  if (!stopped) {
    note_broken(shared, "a dequeuer saw no stop packet in loops_max calls");
  }
}

// The producer: posts, sends and re-registers in an order drawn from `workload`, then stops
// every dequeuer.
void producer(Os& os, const Endpoints& endpoints, const ScenarioShape& shape, Rng& workload,
              Shared& shared) {
  const char payload[kDatagramBytes] = {'r', 'e', 'a', 'd', 'y', 'p', 'o', 'r', 't'};
  std::uint32_t posted = 0;
  std::uint32_t sent = 0;
  for (std::uint32_t action = 0; action < shape.producer_actions; ++action) {
    const std::uint64_t kind = workload.below(3);
    const auto index = static_cast<std::uint32_t>(workload.below(endpoints.sockets.size()));
    if (kind == 0) {
      if (!os.post_queued_completion_status(endpoints.port, 0, kPostedKeyFirst + posted, 0)) {
        note_broken(shared, "post failed");
      }
      posted += 1;
    } else if (kind == 1) {
      const int result =
          os.sendto(endpoints.sender, payload, kDatagramBytes, 0, endpoints.addresses[index]);
      if (result == kDatagramBytes) {
        sent += 1;
      }
    } else {
      SockNotifyRegistration registration = enable_in(endpoints.sockets[index], index);
      const std::uint32_t result =
          os.process_socket_notifications(endpoints.port, 1, &registration, 0, 0, nullptr, nullptr);
      if (result != kErrorSuccess || registration.registration_result != 0) {
        note_broken(shared, "a registration failed");
      }
    }
  }
  shared.mutex->lock();
  shared.counts.posted += posted;
  shared.counts.datagrams_sent += sent;
  shared.mutex->unlock();
  for (std::uint32_t stop = 0; stop < shape.dequeuers; ++stop) {
    if (!os.post_queued_completion_status(endpoints.port, 0, kStopKey, 0)) {
      note_broken(shared, "posting a stop failed");
    }
  }
}

Status open_endpoints(Os& os, const ScenarioShape& shape, Endpoints* endpoints) {
  endpoints->port = os.create_io_completion_port(0);
  if (endpoints->port == kInvalidPort) {
    return Status(StatusCode::kOsError, "create port failed");
  }
  for (std::uint32_t i = 0; i <= shape.sockets; ++i) {
    const Socket s = os.socket(kAfInet, kSockDgram, kIpprotoUdp);
    if (s == kInvalidSocket) {
      return Status(StatusCode::kOsError, "socket failed");
    }
    Ipv4Address address{kLoopbackHost, 0};
    if (os.bind(s, address) != 0 || os.getsockname(s, &address) != 0 ||
        os.set_nonblocking(s, true) != 0) {
      return Status(StatusCode::kOsError, "bind, getsockname or set_nonblocking failed");
    }
    if (i == shape.sockets) {
      endpoints->sender = s;
      break;
    }
    endpoints->sockets.push_back(s);
    endpoints->addresses.push_back(address);
  }
  std::vector<SockNotifyRegistration> registrations;
  for (std::uint32_t i = 0; i < shape.sockets; ++i) {
    registrations.push_back(enable_in(endpoints->sockets[i], i));
  }
  const std::uint32_t result = os.process_socket_notifications(
      endpoints->port, shape.sockets, registrations.data(), 0, 0, nullptr, nullptr);
  if (result != kErrorSuccess) {
    return Status(StatusCode::kOsError, "registering failed", result);
  }
  return Status();
}

Status check_counts(const ScenarioShape& shape, const Shared& shared) {
  if (!shared.broken.ok()) {
    return shared.broken;
  }
  const ScenarioCounts& counts = shared.counts;
  for (std::uint32_t i = 0; i < counts.posted; ++i) {
    if (shared.posted_seen[i] != 1) {
      return Status(StatusCode::kFailedPrecondition,
                    "posted packet " + std::to_string(i) + " dequeued " +
                        std::to_string(shared.posted_seen[i]) + " times");
    }
  }
  if (counts.posted_dequeued != counts.posted) {
    return Status(StatusCode::kFailedPrecondition, "a packet was dequeued that was not posted");
  }
  if (counts.datagrams_received > counts.datagrams_sent) {
    return Status(StatusCode::kFailedPrecondition, "more datagrams received than sent");
  }
  if (counts.stops_seen != shape.dequeuers) {
    return Status(StatusCode::kFailedPrecondition, "not every dequeuer saw one stop");
  }
  return Status();
}

// Objects that threads of an abandoned run may still point into (FakeOs asserts when destroyed
// with threads parked in it): kept for the life of the process, reachable from here.
void keep_forever(std::unique_ptr<Os> os) {
  static std::mutex* mutex = new std::mutex;
  static auto* kept = new std::vector<std::unique_ptr<Os>>;
  std::lock_guard<std::mutex> guard(*mutex);
  kept->push_back(std::move(os));
}

}  // namespace

Status standard_scenario_body(Os& os, Rng& workload, const ScenarioShape& shape,
                              ScenarioCounts* counts_out) {
  READYPORT_ASSERT(shape.dequeuers >= 1 && shape.dequeuers <= 16);
  READYPORT_ASSERT(shape.sockets >= 1 && shape.sockets <= 64);
  READYPORT_ASSERT(shape.batch >= 1 && shape.batch <= 16);
  Endpoints endpoints;
  Status opened = open_endpoints(os, shape, &endpoints);
  if (!opened.ok()) {
    return opened;
  }
  Shared shared;
  shared.mutex = os.mutex_create();
  shared.posted_seen.assign(shape.producer_actions, 0);
  std::vector<std::unique_ptr<Thread>> threads;
  Status started_all;
  for (std::uint32_t i = 0; i < shape.dequeuers && started_all.ok(); ++i) {
    Result<std::unique_ptr<Thread>> started = os.thread_start(
        "dequeuer-" + std::to_string(i + 1), [&] { dequeuer(os, endpoints, shape, shared); });
    if (!started.ok()) {
      started_all = started.status();
    } else {
      threads.push_back(std::move(started).value());
    }
  }
  if (started_all.ok()) {
    Result<std::unique_ptr<Thread>> started =
        os.thread_start("producer", [&] { producer(os, endpoints, shape, workload, shared); });
    if (started.ok()) {
      threads.push_back(std::move(started).value());
    } else {
      started_all = started.status();
    }
  }
  if (!started_all.ok()) {
    // No producer: stop the dequeuers that did start, so they can be joined.
    for (std::size_t i = 0; i < threads.size(); ++i) {
      os.post_queued_completion_status(endpoints.port, 0, kStopKey, 0);
    }
  }
  for (auto& thread : threads) {
    thread->join();
  }
  threads.clear();
  if (!started_all.ok()) {
    return started_all;
  }
  if (counts_out != nullptr) {
    *counts_out = shared.counts;
  }
  Status checked = check_counts(shape, shared);
  for (const Socket s : endpoints.sockets) {
    os.closesocket(s);
  }
  os.closesocket(endpoints.sender);
  os.close_port(endpoints.port);
  return checked;
}

ScenarioRunResult run_standard_scenario(const ScenarioRunOptions& options) {
  ScenarioRunResult result;
  Trace trace(options.trace);
  SimOptions sim_options;
  sim_options.seed = options.seed;
  sim_options.strategy = options.strategy;
  sim_options.pct_depth = options.pct_depth;
  sim_options.pct_steps_estimate = options.pct_steps_estimate;
  sim_options.steps_max = options.steps_max;
  sim_options.delay_bound = options.delay_bound;
  sim_options.fair_window = options.fair_window;
  sim_options.mechanism = options.mechanism;
  sim_options.threads_max = options.shape.dequeuers + 2;
  sim_options.trace = &trace;
  SimScheduler sim(sim_options);
  FakeOptions fake_options;
  fake_options.seed = options.seed;
  auto fake = std::make_unique<FakeOs>(fake_options, sim);
  RuntimeTraceContext context(sim);
  auto os = std::make_unique<RecordingOs>(*fake, trace, context);
  Rng workload =
      SeedStreams(options.workload_seed.value_or(options.seed)).stream(SeedStream::kWorkload);
  Status body_status;
  ScenarioCounts counts;
  result.status = sim.run([&, recording = os.get()] {
    body_status = standard_scenario_body(*recording, workload, options.shape, &counts);
  });
  result.outcome = sim.outcome();
  result.stats = sim.stats();
  result.parameters = sim.parameters();
  if (result.status.ok()) {
    result.status = body_status;
    result.counts = counts;
  } else {
    // Abandoned threads may be parked in the fake: it must never be destroyed.
    keep_forever(std::move(os));
    keep_forever(std::move(fake));
  }
  result.hash = trace.hash();
  result.lines = trace.line_count();
  if (trace.keeps_full()) {
    result.text = trace.text();
  }
  result.tail = trace.tail();
  return result;
}

}  // namespace readyport
