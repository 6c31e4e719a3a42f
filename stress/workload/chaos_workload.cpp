// The chaos workload's director and its two phases. See chaos_workload.hpp.
#include "workload/chaos_workload.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "workload/chaos_world.hpp"

namespace readyport {
namespace {

using chaos::Guard;
using chaos::Known;
using chaos::WorkloadState;

// A poller's wait in the last poll() of each burst (virtual ms), its burst, its bound on polls.
constexpr std::uint32_t kPollerWaitMs = 20;
constexpr std::uint32_t kPollerBurst = 4;
constexpr std::uint32_t kPollerPollsMax = 1'000'000;
// The streamer's steps and bytes at most (it normally ends when stop() returned).
constexpr std::uint32_t kStreamerStepsMax = 100'000;
constexpr std::uint32_t kStreamerBytesMax = 1u << 24;
// Streamers in a crowd at stop() (ChaosWorkload::crowd_at_stop), and how long stop() waits for
// their first echoes at most (virtual ms).
constexpr std::uint32_t kCrowdStreamers = 3;
constexpr std::uint32_t kCrowdReadyMsMax = 100;
// run_worker() tries at most (refused only while the other threads hold every driver).
constexpr std::uint32_t kWorkerAttemptsMax = 1'000'000;

// ---- Raw peers: plain sockets the director drives -----------------------------------------------

struct Peer {
  enum class State : std::uint8_t { kIdle, kOpen, kShut, kSilent, kClosed };
  State state = State::kIdle;
  Socket socket = kInvalidSocket;
  std::uint32_t stream = 0;  // payload stream (after the clients')
  std::uint32_t bytes = 0;   // it sends this many at most
  std::uint32_t sent = 0;
  std::uint32_t received = 0;
};

void peer_close(WorkloadState& world, Peer& peer) {
  if (peer.socket != kInvalidSocket) {
    (void)world.os.closesocket(peer.socket);
  }
  peer.socket = kInvalidSocket;
  peer.state = Peer::State::kClosed;
}

// Sends one chunk (when open) and reads what is there, checking it.
void peer_pump(WorkloadState& world, Peer& peer) {
  const ChaosWorkload& w = world.workload;
  if (peer.state == Peer::State::kOpen && peer.sent < peer.bytes) {
    char chunk[256];
    const std::uint32_t size = std::min<std::uint32_t>(
        {peer.bytes - peer.sent, w.chunk_bytes_max, static_cast<std::uint32_t>(sizeof chunk)});
    chaos::payload_fill(w.seed, peer.stream, peer.sent, chunk, size);
    const int n = world.os.send(peer.socket, chunk, static_cast<int>(size), 0);
    if (n > 0) {
      peer.sent += static_cast<std::uint32_t>(n);
    } else if (world.os.last_error() != kWsaEwouldblock) {
      peer_close(world, peer);
      return;
    }
  }
  char chunk[512];
  for (std::uint32_t reads = 0; reads < 16; ++reads) {
    const int n = world.os.recv(peer.socket, chunk, static_cast<int>(sizeof chunk), 0);
    if (n > 0) {
      const std::uint64_t mismatched = chaos::payload_mismatches(
          w.seed, peer.stream, peer.received, peer.sent, chunk, static_cast<std::size_t>(n));
      peer.received += static_cast<std::uint32_t>(n);
      Guard guard(*world.mutex);
      world.counts.bytes_received += static_cast<std::uint64_t>(n);
      world.counts.bytes_mismatched += mismatched;
      if (mismatched != 0) {
        world.fail("peer " + std::to_string(peer.stream) + " received " +
                   std::to_string(mismatched) + " bytes that differ from what it sent");
      }
      continue;
    }
    // End of stream (the server closed), or an error: this peer is done.
    if (n == 0 || world.os.last_error() != kWsaEwouldblock) {
      peer_close(world, peer);
    }
    return;
  }
}

void peer_connect(WorkloadState& world, Peer& peer) {
  peer.socket = world.os.socket(kAfInet, kSockStream, kIpprotoTcp);
  if (peer.socket == kInvalidSocket) {
    peer.state = Peer::State::kClosed;
    return;
  }
  bool ok = world.os.set_nonblocking(peer.socket, true) == 0;
  if (ok && world.os.connect(peer.socket, world.server_address()) != 0) {
    ok = world.os.last_error() == kWsaEwouldblock;
  }
  if (!ok) {
    peer_close(world, peer);
    return;
  }
  peer.state = Peer::State::kOpen;
  Guard guard(*world.mutex);
  ++world.counts.peers_started;
}

// One step of a peer, drawn: connect, pump, shut down, reset, close, or go silent.
void peer_step(WorkloadState& world, Peer& peer) {
  switch (peer.state) {
    case Peer::State::kIdle:
      peer_connect(world, peer);
      return;
    case Peer::State::kOpen: {
      const std::uint64_t pick = world.draw_below(100);
      if (pick < 55) {
        peer_pump(world, peer);
      } else if (pick < 70) {
        (void)world.os.shutdown(peer.socket, kSdSend);
        peer.state = Peer::State::kShut;
      } else if (pick < 80) {
        (void)world.os.set_linger(peer.socket, true, 0);  // an abortive reset (spec D2)
        peer_close(world, peer);
      } else if (pick < 90) {
        peer.state = Peer::State::kSilent;
      } else {
        peer_close(world, peer);
      }
      return;
    }
    case Peer::State::kShut:
      peer_pump(world, peer);
      return;
    case Peer::State::kSilent:
    case Peer::State::kClosed:
      return;
  }
}

// ---- The director's actions ---------------------------------------------------------------------

// Closes a server socket behind the engine's back, then tells the engine (spec E4: its REMOVE
// fails, and it must not free the slot on a guess). Half the time right after the engine's own
// close(), whose REMOVE is then applied and may still be queued: the close may drop it (the
// fake's remove_dropped_on_close), a REMOVE the engine must find lost (engine.hpp). Drawn only
// where an engine can keep its contract despite it (chaos_workload.hpp).
void close_behind(WorkloadState& world) {
  Known known;
  if (!world.pick_known(&known) || known.server == nullptr) {
    return;
  }
  const bool engine_close_first = world.draw_below(2) == 0;
  world.close_behind(known, engine_close_first);
}

void director_action(WorkloadState& world, std::vector<Peer>& peers) {
  const ChaosWorkload& w = world.workload;
  std::uint64_t pick = world.draw_below(100);
  Known known;
  if (pick < w.weight_close) {
    if (world.pick_known(&known)) {
      world.close_known(known, false);
    }
    return;
  }
  pick -= w.weight_close;
  if (pick < w.weight_notify) {
    if (world.pick_known(&known)) {
      world.notify(known, kSockNotifyEventIn);
    }
    return;
  }
  pick -= w.weight_notify;
  if (pick < w.weight_post) {
    return world.post_task();
  }
  pick -= w.weight_post;
  if (pick < w.weight_peer) {
    if (!peers.empty()) {
      peer_step(world, peers[world.draw_below(peers.size())]);
    }
    return;
  }
  pick -= w.weight_peer;
  if (pick < w.weight_client) {
    (void)world.launch_client(false);
    return;
  }
  pick -= w.weight_client;
  if (pick < w.weight_behind) {
    return close_behind(world);
  }
  world.os.sleep_ms(1 + static_cast<std::uint32_t>(world.draw_below(w.action_gap_ms_max)));
}

// ---- Start, phases, stop ------------------------------------------------------------------------

// engine.start(), retried while the port cannot be created (an injected fault).
Status start_engine(WorkloadState& world) {
  Status status;
  for (std::uint32_t attempt = 0; attempt < WorkloadState::kRetryAttempts; ++attempt) {
    if (attempt > 0) {
      world.retry_pause(attempt - 1);
    }
    status = world.engine.start();
    if (status.ok() || status.code() != StatusCode::kOsError) {
      return status;
    }
    Guard guard(*world.mutex);
    ++world.counts.start_retries;
  }
  return status;
}

// A poller: the driver of an embedder without workers, beside them. Bursts of polls that do not
// wait (so it can enter as stop() ends, or between a worker's batches), then one that waits (so
// virtual time moves). It ends when poll() says the engine stopped (kFailedPrecondition); a port
// call that kept failing (faults) is polled again.
void poll_until_stopped(WorkloadState& world) {
  for (std::uint32_t i = 0; i < kPollerPollsMax; ++i) {
    world.record(workload_line_begin(ApiCall::kPoll));
    Result<std::uint32_t> got =
        world.engine.poll(i % kPollerBurst == kPollerBurst - 1 ? kPollerWaitMs : 0);
    world.record(workload_line_end(ApiCall::kPoll, got.status()));
    if (!got.ok() && got.status().code() == StatusCode::kFailedPrecondition) {
      return;
    }
    // Every driver taken (ChaosWorkload::drivers_tight): another thread drives meanwhile; try
    // again a virtual millisecond later, not at once (that would spend the polls in a moment).
    if (!got.ok() && got.status().code() == StatusCode::kResourceExhausted) {
      world.os.sleep_ms(1);
    }
  }
}

// A run_worker() thread's body. Refused while every driver is taken (drivers_tight), it tries
// again a virtual millisecond later, as an embedder would.
void run_worker(WorkloadState& world) {
  for (std::uint32_t attempt = 0; attempt < kWorkerAttemptsMax; ++attempt) {
    world.record(workload_line_begin(ApiCall::kRunWorker));
    const Status status = world.engine.run_worker();
    world.record(workload_line_end(ApiCall::kRunWorker, status));
    if (status.code() != StatusCode::kResourceExhausted) {
      return;
    }
    world.os.sleep_ms(1);
  }
}

// The run_worker() threads, then the pollers, then the racers.
Status start_workers(WorkloadState& world, std::vector<std::unique_ptr<Thread>>& threads) {
  const ChaosWorkload& w = world.workload;
  const std::uint32_t wanted = w.workers + w.pollers + w.racers;
  std::uint32_t failures = 0;
  for (std::uint32_t attempt = 0; attempt < 64 && threads.size() < wanted; ++attempt) {
    if (failures > 0) {
      world.retry_pause(failures - 1);
    }
    const auto index = static_cast<std::uint32_t>(threads.size());
    Result<std::unique_ptr<Thread>> thread =
        index < w.workers ? world.os.thread_start(
                                "worker", [&world] { run_worker(world); })
        : index < w.workers + w.pollers
            ? world.os.thread_start(
                  "poller", [&world] { poll_until_stopped(world); })
            : world.os.thread_start(
                  "racer", [&world, racer = index - w.workers -
                                            w.pollers] { chaos::racer_main(world, racer); });
    if (thread.ok()) {
      threads.push_back(std::move(thread).value());
      failures = 0;
      continue;
    }
    ++failures;
    Guard guard(*world.mutex);
    ++world.counts.start_retries;
  }
  if (threads.empty()) {
    return Status(StatusCode::kOsError, "no worker thread could be started");
  }
  return Status();
}

// engine.start() unless `engine_started`, then the threads unless some run already. Errors: the
// first that stopped it (kOsError: a drawn outage outlasted the retries).
Status start_all(WorkloadState& world, std::vector<std::unique_ptr<Thread>>& threads,
                 bool& engine_started) {
  if (!engine_started) {
    if (Status status = start_engine(world); !status.ok()) {
      return status;
    }
    engine_started = true;
  }
  return threads.empty() ? start_workers(world, threads) : Status();
}

// Waits (virtual time) until every client and server connection closed; the stuck ones, or ok.
Status wait_closed(WorkloadState& world, std::uint32_t limit_ms, const char* phase) {
  const std::uint64_t deadline_ns = world.os.now_ns() + std::uint64_t{limit_ms} * 1'000'000;
  for (;;) {
    {
      Guard guard(*world.mutex);
      if (world.clients_open == 0 && world.server_open == 0) {
        return Status();
      }
    }
    if (world.os.now_ns() >= deadline_ns) {
      break;
    }
    world.os.sleep_ms(5);
  }
  Guard guard(*world.mutex);
  std::string stuck;
  std::uint32_t listed = 0;
  for (const auto& client : world.clients) {
    const bool started = client->socket != kInvalidSocket;
    if (!started || listed >= 8) {
      continue;
    }
    stuck += " client " + std::to_string(client->index()) +
             " (s=" + std::to_string(client->socket) + " sent " + std::to_string(client->sent()) +
             " received " + std::to_string(client->received()) + ")";
    ++listed;
  }
  const EngineStats stats = world.engine.stats();
  return Status(
      StatusCode::kInternal,
      std::string("liveness: ") + phase + ": not converged after " + std::to_string(limit_ms) +
          " ms (virtual) with faults off: " + std::to_string(world.clients_open) +
          " client(s) and " + std::to_string(world.server_open) +
          " server connection(s) still open; engine holds " +
          std::to_string(stats.connections_live) + " connection(s) (listener included), " +
          std::to_string(stats.quarantined) + " quarantined in all; clients:" + stuck);
}

// Opens the listener again if the engine closed it while the table was full.
void revive_listener(WorkloadState& world) {
  bool down = false;
  {
    Guard guard(*world.mutex);
    down = world.listener_down && !world.stopping;
  }
  if (down) {
    world.reopen_listener();
  }
}

void chaos_phase(WorkloadState& world, std::vector<Peer>& peers) {
  for (std::uint32_t i = 0; i < world.workload.clients_concurrent; ++i) {
    if (!world.launch_client(false)) {
      break;
    }
  }
  if (world.workload.hold_clients) {
    world.release_held();
  }
  for (std::uint32_t action = 0; action < world.workload.actions; ++action) {
    revive_listener(world);
    director_action(world, peers);
    // Keep the peers' data flowing between actions.
    for (Peer& peer : peers) {
      if (peer.state == Peer::State::kOpen || peer.state == Peer::State::kShut) {
        peer_pump(world, peer);
      }
    }
  }
}

// The liveness phase begins: its line, then faults off from now on; with `launching_ends`, no
// chaos client is launched from now on either (one section under the mutex).
void faults_off(WorkloadState& world, bool launching_ends) {
  world.record(phase_line("liveness"));
  if (world.hooks.set_faults_enabled) {
    world.hooks.set_faults_enabled(false);
  }
  Guard guard(*world.mutex);
  world.faults_off = true;
  if (launching_ends) {
    world.launching = false;
  }
}

// After the quiet period: until no retry pause of the workload is under way (each ends within
// kRetryPauseMaxMs once faults are off) and the listener's handler is not running, a virtual
// millisecond at a time, for a bounded time.
Status wait_settled(WorkloadState& world) {
  const std::uint32_t limit = WorkloadState::kRetryPauseMaxMs + world.workload.quiet_ms;
  for (std::uint32_t waited = 0; world.pausing.load() != 0 || world.accepting.load() != 0;
       ++waited) {
    if (waited >= limit) {
      return Status(StatusCode::kInternal,
                    "liveness: " + std::to_string(world.pausing.load()) +
                        " retry pause(s) under way and the listener's handler running " +
                        std::to_string(world.accepting.load()) + " time(s), " +
                        std::to_string(waited) + " ms after the quiet period with faults off");
    }
    world.os.sleep_ms(1);
  }
  return Status();
}

// `began`: faults_off() was called already (the chaos phase was skipped).
Status liveness_phase(WorkloadState& world, std::vector<Peer>& peers, bool began) {
  if (!began) {
    faults_off(world, true);
  } else {
    Guard guard(*world.mutex);
    world.launching = false;
  }
  // A quiet period first: a fault of the chaos phase can still be acting (a refused re-arm whose
  // close rides a driver's next call, a call in its retry backoff). Virtual time passes only when
  // every thread is parked, so after it every such follow-up has been issued and has landed;
  // but a backoff begun just before faults went off may end only as the period does (both last
  // up to a second). A listener's handler in its backoff (an edge connection's first notify)
  // holds its driver, so grace periods wait for it, and the backlog grows meanwhile: the phase
  // waits until no pause is under way and the listener's handler has accepted what is left.
  world.os.sleep_ms(world.workload.quiet_ms);
  if (Status status = wait_settled(world); !status.ok()) {
    return status;
  }
  for (Peer& peer : peers) {
    peer_close(world, peer);  // silent ones too: their server ends
  }
  if (Status status = wait_closed(world, world.workload.settle_limit_ms, "settle"); !status.ok()) {
    return status;
  }
  revive_listener(world);  // every connection is closed: its slot is free
  {
    Guard guard(*world.mutex);
    if (world.listener_down) {
      return Status(StatusCode::kInternal, "liveness: the listener could not be opened again");
    }
  }
  for (std::uint32_t i = 0; i < world.workload.liveness_clients; ++i) {
    (void)world.launch_client(true);
  }
  return wait_closed(world, world.workload.liveness_limit_ms, "fresh clients");
}

// The director's stop() beside the racers': exactly one stop() returned ok (the others
// kFailedPrecondition, "already stopped or stopping"). After every thread was joined.
Status stop_outcome(WorkloadState& world, const Status& stopped) {
  Guard guard(*world.mutex);
  const std::uint32_t ok = world.racer_stops_ok + (stopped.ok() ? 1 : 0);
  if (ok == 1 && (stopped.ok() || stopped.code() == StatusCode::kFailedPrecondition)) {
    return Status();
  }
  return Status(StatusCode::kInternal, "stop(): " + std::to_string(ok) +
                                           " of the director's and the racers' calls "
                                           "returned ok, not 1 (the director's: " +
                                           stopped.to_string() + ")");
}

// After stop(): what must hold of the counts.
Status check_end(WorkloadState& world) {
  Guard guard(*world.mutex);
  const ChaosCounts& c = world.counts;
  if (!world.failure.empty()) {
    return Status(StatusCode::kInternal, world.failure);
  }
  if (c.bytes_mismatched != 0) {
    return Status(StatusCode::kInternal,
                  "chaos workload: " + std::to_string(c.bytes_mismatched) + " bytes differ");
  }
  if (world.clients_open != 0 || world.server_open != 0) {
    return Status(StatusCode::kInternal, "chaos workload: after stop() " +
                                             std::to_string(world.clients_open) +
                                             " client(s) and " + std::to_string(world.server_open) +
                                             " server connection(s) never got on_closed");
  }
  if (c.tasks_run != c.posts) {
    return Status(StatusCode::kInternal, "chaos workload: " + std::to_string(c.posts) +
                                             " tasks posted but " + std::to_string(c.tasks_run) +
                                             " ran");
  }
  std::uint32_t liveness_done = 0;
  for (const auto& client : world.clients) {
    if (client->liveness() && client->received() >= world.workload.bytes_per_client) {
      ++liveness_done;
    }
  }
  if (liveness_done != world.workload.liveness_clients) {
    return Status(StatusCode::kInternal, "liveness: " + std::to_string(liveness_done) + " of " +
                                             std::to_string(world.workload.liveness_clients) +
                                             " fresh clients were echoed in full with faults off");
  }
  return Status();
}

// The streamer (ChaosWorkload::traffic_at_stop): connects, then sends and reads its echo once
// every virtual millisecond until stop() returned, it ends, or kStreamerStepsMax. Started beside
// the workers (joined with them); not started if its thread cannot be.
void streamer_main(WorkloadState& world, Peer& peer) {
  peer_connect(world, peer);
  bool ready = false;  // counted in world.streamers_ready once: its first echo came, or it ended
  for (std::uint32_t step = 0; step < kStreamerStepsMax && peer.state == Peer::State::kOpen;
       ++step) {
    {
      Guard guard(*world.mutex);
      if (world.stop_returned) {
        break;
      }
    }
    peer_pump(world, peer);
    if (!ready && (peer.received > 0 || peer.state != Peer::State::kOpen)) {
      ready = true;
      world.streamers_ready.fetch_add(1);
    }
    world.os.sleep_ms(1);
  }
  if (!ready) {
    world.streamers_ready.fetch_add(1);
  }
  peer_close(world, peer);
}

// A crowd at stop(): until `started` streamers were echoed once (or ended), kCrowdReadyMsMax
// virtual ms at most, so that stop() meets connections with traffic (a streamer started just
// before stop() finds the listener removed by its sweep, or is accepted as it begins).
void wait_streamers(WorkloadState& world, std::uint32_t started) {
  for (std::uint32_t waited = 0;
       world.streamers_ready.load() < started && waited < kCrowdReadyMsMax; ++waited) {
    world.os.sleep_ms(1);
  }
}

// A crowd at stop(): notify() the newest connections, kCrowdWakeNotifies times each, just before
// stop() (ChaosWorkload::crowd_wakes), so that their packets, handlers and re-arms are under way
// as its sweep begins.
void wake_newest(WorkloadState& world) {
  for (std::uint32_t back = 0; back < WorkloadState::kCrowdNewest; ++back) {
    Known known;
    if (!world.recent_known(back, &known)) {
      return;
    }
    for (std::uint32_t i = 0; i < WorkloadState::kCrowdWakeNotifies; ++i) {
      world.notify(known, kSockNotifyEventIn);
    }
  }
}

bool streamer_start(WorkloadState& world, Peer& peer,
                    std::vector<std::unique_ptr<Thread>>& threads) {
  Result<std::unique_ptr<Thread>> thread =
      world.os.thread_start("streamer", [&world, &peer] { streamer_main(world, peer); });
  if (!thread.ok()) {
    return false;
  }
  threads.push_back(std::move(thread).value());
  return true;
}

// The director's stop() (faults on again for it in half the seeds), then every thread joined
// (the racers end once a stop() returned); the stop() calls' outcome (stop_outcome).
Status stop_and_join(WorkloadState& world, std::vector<std::unique_ptr<Thread>>& threads) {
  {
    Guard guard(*world.mutex);
    world.stopping = true;
  }
  if (world.workload.faults_at_stop && world.hooks.set_faults_enabled) {
    world.record(phase_line("stop", /*faults_on=*/true));
    world.hooks.set_faults_enabled(true);
  } else {
    world.record(phase_line("stop"));
  }
  world.record(workload_line_begin(ApiCall::kStop));
  const Status stopped = world.engine.stop();
  world.record(workload_line_end(ApiCall::kStop, stopped));
  {
    Guard guard(*world.mutex);
    world.stop_returned = world.stop_returned || stopped.ok();
  }
  for (std::unique_ptr<Thread>& thread : threads) {
    thread->join();
  }
  world.record(phase_line("end"));
  return stop_outcome(world, stopped);
}

// The raw peers closed, the streamer started (traffic_at_stop), then stop_and_join. The streamer
// is joined with the workers, before this returns.
Status close_peers_and_stop(WorkloadState& world, std::vector<Peer>& peers,
                            std::vector<std::unique_ptr<Thread>>& threads) {
  for (Peer& peer : peers) {
    peer_close(world, peer);
  }
  const ChaosWorkload& w = world.workload;
  const std::uint32_t streamers = !w.traffic_at_stop ? 0 : (w.crowd_at_stop ? kCrowdStreamers : 1);
  std::vector<Peer> streamer(streamers);  // never resized: the threads hold references
  std::uint32_t started = 0;
  for (std::uint32_t i = 0; i < streamers; ++i) {
    streamer[i].stream = w.clients + w.liveness_clients + w.peers + i;
    streamer[i].bytes = kStreamerBytesMax;
    // In a crowd, the last one starts after the others were echoed: its connection is accepted
    // and added as stop() begins (an add() whose result meets the sweep or the drain).
    if (w.crowd_at_stop && i + 1 == streamers) {
      wait_streamers(world, started);
    }
    started += streamer_start(world, streamer[i], threads) ? 1 : 0;
  }
  if (w.crowd_wakes) {
    wake_newest(world);
  }
  return stop_and_join(world, threads);
}

}  // namespace

Status chaos_workload_check(const ChaosWorkload& w) {
  if (w.clients_concurrent < 1 || w.bytes_per_client < 1 || w.chunk_bytes_max < 1 ||
      w.buffer_bytes < 1 || w.workers + w.pollers < 1 || w.action_gap_ms_max < 1) {
    return Status(StatusCode::kInvalidArgument,
                  "ChaosWorkload: clients_concurrent, bytes_per_client, chunk_bytes_max, "
                  "buffer_bytes, workers + pollers and action_gap_ms_max must be >= 1");
  }
  if (w.connections_max < 2 + w.clients_concurrent) {
    return Status(StatusCode::kInvalidArgument,
                  "ChaosWorkload: connections_max must hold the listener and clients_concurrent "
                  "clients with their server ends");
  }
  if (w.hold_clients && w.clients_concurrent != w.clients) {
    return Status(StatusCode::kInvalidArgument,
                  "ChaosWorkload: hold_clients needs every client started at once "
                  "(clients_concurrent == clients)");
  }
  if (w.crowd_at_stop && !w.traffic_at_stop) {
    return Status(StatusCode::kInvalidArgument,
                  "ChaosWorkload: crowd_at_stop needs traffic_at_stop (its streamers)");
  }
  if (w.crowd_wakes && !w.crowd_at_stop) {
    return Status(StatusCode::kInvalidArgument,
                  "ChaosWorkload: crowd_wakes needs crowd_at_stop (the connections it wakes)");
  }
  if (w.mode == Mode::kOneshotEdge) {
    return Status(StatusCode::kInvalidArgument,
                  "ChaosWorkload: oneshot_edge can miss data that arrives before the re-arm "
                  "(spec C5, C6)");
  }
  const std::uint32_t weights = w.weight_close + w.weight_notify + w.weight_post + w.weight_peer +
                                w.weight_client + w.weight_behind;
  if (weights > 100) {
    return Status(StatusCode::kInvalidArgument, "ChaosWorkload: action weights exceed 100");
  }
  return Status();
}

EngineOptions chaos_engine_options(const ChaosWorkload& workload) {
  EngineOptions options;
  options.connections_max = workload.connections_max;
  // Racers poll too, and hold their own connections beside the table the workload uses.
  options.connections_max =
      workload.connections_max + workload.racers * chaos::WorkloadState::kRacerConnsMax;
  // Every thread that drives, and one to spare; with drivers_tight one short of them all (there
  // is always a racer beside a worker or a poller), so that one of them is refused now and then.
  const std::uint32_t drivers = workload.workers + workload.pollers + workload.racers;
  options.workers_max = workload.drivers_tight && drivers > 1 ? drivers - 1 : drivers + 1;
  if (workload.tasks_tight) {
    options.tasks_max = 2;
  }
  options.wait_timeout_ms = 200;
  return options;
}

ChaosResult run_chaos_workload(Os& os, Engine& engine, const ChaosWorkload& workload,
                               const ChaosHooks& hooks) {
  ChaosResult result;
  result.status = chaos_workload_check(workload);
  if (!result.status.ok()) {
    return result;
  }
  WorkloadState world(os, engine, workload, hooks);
  world.record(phase_line("chaos"));
  std::vector<std::unique_ptr<Thread>> workers;
  bool engine_started = false;
  result.status = start_all(world, workers, engine_started);
  // A drawn outage (port or thread creation) that outlasted every retry while faults fired, by
  // starting again each time it ended: the run gets through it as an embedder would, starting
  // once the system recovered. The chaos phase is skipped; faults are off from here on.
  const bool chaos_skipped = result.status.code() == StatusCode::kOsError;
  if (chaos_skipped) {
    faults_off(world, false);
    {
      Guard guard(*world.mutex);
      ++world.counts.start_outlasted;
    }
    result.status = start_all(world, workers, engine_started);
  }
  if (!engine_started) {
    return result;
  }
  if (result.status.ok()) {
    // A port that refuses every registration for longer than the retries (a drawn outage) is a
    // state to wait out in the chaos phase: the director opens the listener once it can. With
    // faults off, a refusal is a failure.
    const Status opened = world.open_listener();
    Guard guard(*world.mutex);
    world.listener_down = !opened.ok();
    if (!opened.ok() && (opened.code() != StatusCode::kOsError || world.faults_off)) {
      result.status = opened;
    }
    if (!opened.ok()) {
      ++world.counts.listener_retries_exhausted;
    }
  }
  std::vector<Peer> peers(workload.peers);
  for (std::uint32_t i = 0; i < workload.peers; ++i) {
    peers[i].stream = workload.clients + workload.liveness_clients + i;
    peers[i].bytes = workload.bytes_per_client;
  }
  if (result.status.ok()) {
    if (!chaos_skipped) {
      chaos_phase(world, peers);
    }
    result.status = liveness_phase(world, peers, chaos_skipped);
  }
  const Status stopped = close_peers_and_stop(world, peers, workers);
  if (result.status.ok() && !stopped.ok()) {
    result.status = stopped;
  }
  if (result.status.ok()) {
    result.status = check_end(world);
  }
  {
    Guard guard(*world.mutex);
    result.counts = world.counts;
  }
  result.engine = engine.stats();
  return result;
}

}  // namespace readyport
