// The chaos workload's handlers and shared state (chaos_world.hpp).
#include <algorithm>
#include <string>

#include "workload/chaos_world.hpp"

namespace readyport::chaos {
namespace {

bool is_edge(Mode mode) { return mode == Mode::kPersistentEdge || mode == Mode::kOneshotEdge; }

// Edge modes keep one constant interest (changing it re-enables a condition that may already
// hold, which an edge registration never reports, spec C5); level modes ask for what they need.
Interest interest_for(Mode mode, bool want_out) {
  if (is_edge(mode)) {
    return kInterestIn | kInterestOut | kInterestHangup;
  }
  return want_out ? kInterestIn | kInterestOut : kInterestIn;
}

}  // namespace

// ---- TracedHandler ----------------------------------------------------------------------------

Interest TracedHandler::on_events(ConnId id, Socket arg_socket, std::uint32_t events) noexcept {
  world_.record(handler_line_enter(socket, id, arg_socket, events));
  const Interest result = handle(id, events);
  world_.record(handler_line_leave(socket, result));
  return result;
}

void TracedHandler::on_closed(ConnId id) noexcept {
  const Socket s = socket;  // closed() may hand this handler to another connection
  world_.record(handler_line_closed(s, id));
  closed(id);
  world_.record(handler_line_closed_end(s, id));
}

// ---- The server ---------------------------------------------------------------------------------

Interest ServerConn::handle(ConnId id, std::uint32_t events) {
  if ((events & kSockNotifyEventErr) != 0) {
    return kInterestClose;
  }
  bool chaos = false;
  bool crowd = false;
  {
    Guard guard(*world_.mutex);
    chaos = world_.launching;  // the chaos phase; the liveness phase closes nothing at random
    crowd = world_.stopping && world_.workload.crowd_at_stop;
  }
  if (crowd && world_.draw_percent(WorkloadState::kCrowdHandlerClosePercent)) {
    // A crowd at stop(): close() of this connection (dispatching: it closes when this returns) or
    // of one of the newest others, while stop() sweeps and drains.
    Known target{id, socket, this};
    if (world_.draw_below(2) == 0 ||
        world_.pick_recent_known(WorkloadState::kCrowdNewest, &target)) {
      world_.close_known(target, true);
    }
  }
  if (chaos && world_.draw_percent(world_.workload.handler_close_percent)) {
    return kInterestClose;
  }
  if (chaos && world_.draw_percent(world_.workload.handler_close_other_percent)) {
    Known other;
    if (world_.pick_known(&other)) {
      world_.close_known(other, true);
    }
  }
  Os& os = world_.os;
  // Until the socket would block: send what is held, then read more (reads only with nothing
  // held, so a slow peer holds the sender back).
  for (;;) {
    while (length_ > 0) {
      const int sent = os.send(socket, buffer_.data() + offset_, static_cast<int>(length_), 0);
      if (sent > 0) {
        offset_ += static_cast<std::uint32_t>(sent);
        length_ -= static_cast<std::uint32_t>(sent);
        continue;
      }
      // Holding data: wait for OUT alone (a level IN would come back at once, unread: a spin).
      if (os.last_error() == kWsaEwouldblock) {
        return is_edge(world_.workload.mode) ? interest_for(world_.workload.mode, true)
                                             : kInterestOut;
      }
      return kInterestClose;  // reset, no buffers, not a socket (closed behind our back)
    }
    const int got = os.recv(socket, buffer_.data(), static_cast<int>(buffer_.size()), 0);
    if (got > 0) {
      offset_ = 0;
      length_ = static_cast<std::uint32_t>(got);
      continue;
    }
    if (got == 0) {
      return kInterestClose;  // the peer finished: so do we
    }
    if (os.last_error() == kWsaEwouldblock) {
      return interest_for(world_.workload.mode, false);
    }
    return kInterestClose;
  }
}

void ServerConn::closed(ConnId id) {
  (void)id;
  world_.server_closed(*this);
}

Interest Listener::handle(ConnId id, std::uint32_t events) {
  (void)id;
  (void)events;
  world_.accepting.fetch_add(1);
  for (std::uint32_t i = 0; i < 64; ++i) {  // bounded: the rest comes with the next packet
    const Socket accepted = world_.os.accept(socket, nullptr);
    if (accepted == kInvalidSocket) {
      break;  // WSAEWOULDBLOCK, or an accept failure
    }
    world_.adopt(accepted);
  }
  world_.accepting.fetch_sub(1);
  return kInterestIn;
}

void Listener::closed(ConnId id) {
  (void)id;
  // The engine closes a connection whose re-arm the port refused (spec A8): a listener lost that
  // way outside stop() is opened again, as a server would.
  bool reopen = false;
  {
    Guard guard(*world_.mutex);
    reopen = !world_.stopping;
    if (reopen) {
      ++world_.counts.listener_reopens;
    }
  }
  if (reopen) {
    world_.reopen_listener();
  }
}

// ---- Clients ------------------------------------------------------------------------------------

Interest ClientConn::handle(ConnId id, std::uint32_t events) {
  (void)id;
  const bool done = received_ >= world_.workload.bytes_per_client;
  // A merged packet after the decision to close, or the release of a held client.
  if (ended_) {
    return ended_interest(id, done);
  }
  const bool ok = (events & kSockNotifyEventErr) == 0 && send_some() && receive_some();
  const bool done_now = received_ >= world_.workload.bytes_per_client;
  if (!ok || done_now) {
    ended_ = true;
    {
      Guard guard(*world_.mutex);
      if (done_now) {
        ++world_.counts.clients_done;
      } else {
        ++world_.counts.clients_cut;
      }
    }
    return ended_interest(id, done_now);
  }
  return interest_for(world_.workload.mode, sent_ < world_.workload.bytes_per_client);
}

Interest ClientConn::ended_interest(ConnId id, bool done) {
  if (!done || liveness_ || !world_.workload.hold_clients) {
    return kInterestClose;
  }
  Guard guard(*world_.mutex);
  if (world_.held_released) {
    return kInterestClose;
  }
  if (!held_) {
    held_ = true;
    world_.held.push_back(Known{id, socket, nullptr});
  }
  // Waiting for input that will not come (every byte came back): only release_held()'s notify
  // calls the handler again. Not kInterestNone: a persistent registration drops a notify outside
  // its interest (EngineStats::unwanted_dropped), so the client would never hear of the release.
  return interest_for(world_.workload.mode, false);
}

bool ClientConn::send_some() {
  const ChaosWorkload& w = world_.workload;
  char chunk[512];
  while (sent_ < w.bytes_per_client) {
    chunk_state_ = Rng(chunk_state_ ^ index_).next();  // splitmix64 of the value
    const std::uint32_t chunk_max = std::min<std::uint32_t>(w.chunk_bytes_max, sizeof chunk);
    const std::uint32_t size = std::min<std::uint32_t>(
        w.bytes_per_client - sent_, 1 + static_cast<std::uint32_t>(chunk_state_ % chunk_max));
    payload_fill(w.seed, index_, sent_, chunk, size);
    const int n = world_.os.send(socket, chunk, static_cast<int>(size), 0);
    if (n > 0) {
      sent_ += static_cast<std::uint32_t>(n);
      Guard guard(*world_.mutex);
      world_.counts.bytes_sent += static_cast<std::uint64_t>(n);
      continue;
    }
    return world_.os.last_error() == kWsaEwouldblock;
  }
  return true;
}

bool ClientConn::receive_some() {
  const ChaosWorkload& w = world_.workload;
  char chunk[512];
  while (received_ < w.bytes_per_client) {
    const int n = world_.os.recv(socket, chunk, static_cast<int>(sizeof chunk), 0);
    if (n > 0) {
      const std::uint64_t mismatched =
          payload_mismatches(w.seed, index_, received_, sent_, chunk, static_cast<std::size_t>(n));
      received_ += static_cast<std::uint32_t>(n);
      Guard guard(*world_.mutex);
      world_.counts.bytes_received += static_cast<std::uint64_t>(n);
      world_.counts.bytes_mismatched += mismatched;
      if (mismatched != 0) {
        world_.fail("client " + std::to_string(index_) + " received " + std::to_string(mismatched) +
                    " bytes that differ from what it sent");
        return false;
      }
      continue;
    }
    if (n == 0) {
      return false;  // the server ended early (closed by chaos)
    }
    return world_.os.last_error() == kWsaEwouldblock;
  }
  return true;
}

void ClientConn::closed(ConnId id) {
  (void)id;
  world_.client_finished(*this, received_ >= world_.workload.bytes_per_client);
}

void ChaosTask::run() noexcept {
  world_.record(workload_line_task_run(index_));
  Guard guard(*world_.mutex);
  ++world_.counts.tasks_run;
}

// ---- WorkloadState ------------------------------------------------------------------------------

WorkloadState::WorkloadState(Os& os_in, Engine& engine_in, const ChaosWorkload& workload_in,
                             const ChaosHooks& hooks_in)
    : os(os_in),
      engine(engine_in),
      workload(workload_in),
      hooks(hooks_in),
      mutex(os_in.mutex_create()),
      rng(workload_in.seed),
      listener(*this) {
  server_pool.reserve(workload.connections_max);
  server_free.reserve(workload.connections_max);
  for (std::uint32_t i = 0; i < workload.connections_max; ++i) {
    server_pool.push_back(std::make_unique<ServerConn>(*this, workload.buffer_bytes));
    server_free.push_back(server_pool.back().get());
  }
  const std::uint32_t total = workload.clients + workload.liveness_clients;
  clients.reserve(total);
  for (std::uint32_t i = 0; i < total; ++i) {
    clients.push_back(std::make_unique<ClientConn>(*this, i, i >= workload.clients));
  }
  racer_conns.reserve(std::size_t{workload.racers} * kRacerConnsMax);
  for (std::uint32_t i = 0; i < workload.racers * kRacerConnsMax; ++i) {
    racer_conns.push_back(std::make_unique<RacerConn>(*this));
  }
  tasks.reserve(kTasksMax);
  for (std::uint32_t i = 0; i < kTasksMax; ++i) {
    tasks.push_back(std::make_unique<ChaosTask>(*this, i));
  }
  known.reserve(kKnownMax);
}

void WorkloadState::fail(const std::string& sentence) {
  if (failure.empty()) {
    failure = "chaos workload: " + sentence;
  }
}

std::uint64_t WorkloadState::draw_below(std::uint64_t bound) {
  std::lock_guard<std::mutex> guard(rng_mutex);
  return rng.below(bound);
}

bool WorkloadState::draw_percent(std::uint32_t percent) {
  if (percent == 0) {
    return false;
  }
  return draw_below(100) < percent;
}

Result<ConnId> WorkloadState::add(Socket s, Interest interest, Mode mode, TracedHandler& handler) {
  handler.socket = s;  // before add(): the handler may be entered before it returns
  record(workload_line_adding(s));
  Result<ConnId> id = engine.add(s, interest, mode, handler);
  record(workload_line_add(s, id));
  return id;
}

void WorkloadState::remember(ConnId id, Socket s, ServerConn* server) {
  Guard guard(*mutex);
  const Known entry{id, s, server};
  if (known.size() < kKnownMax) {
    known.push_back(entry);
  } else {
    known[known_next] = entry;
    known_next = (known_next + 1) % kKnownMax;
  }
}

bool WorkloadState::pick_recent_known(std::uint32_t newest, Known* known_out) {
  READYPORT_ASSERT(newest >= 1 && newest <= kKnownMax);
  const std::uint64_t back = draw_below(newest);  // 0: the newest
  Guard guard(*mutex);
  const std::size_t size = known.size();
  if (size == 0) {
    return false;
  }
  *known_out = known_back_locked(static_cast<std::size_t>(back) % size);
  return true;
}

bool WorkloadState::recent_known(std::uint32_t back, Known* known_out) {
  Guard guard(*mutex);
  if (back >= known.size()) {
    return false;
  }
  *known_out = known_back_locked(back);
  return true;
}

const Known& WorkloadState::known_back_locked(std::size_t back) const {
  const std::size_t size = known.size();
  READYPORT_ASSERT(back < size);
  // The ring's newest entry is just before known_next once it is full, else the last one.
  const std::size_t newest_at =
      size < kKnownMax ? size - 1 : (known_next + kKnownMax - 1) % kKnownMax;
  return known[(newest_at + size - back) % size];
}

bool WorkloadState::pick_known(Known* known_out) {
  std::size_t size = 0;
  {
    Guard guard(*mutex);
    size = known.size();
  }
  if (size == 0) {
    return false;
  }
  const std::uint64_t index = draw_below(size);
  Guard guard(*mutex);
  *known_out = known[index];
  return true;
}

bool WorkloadState::stopped_answer(const Status& status) {
  return stopping && status.code() == StatusCode::kFailedPrecondition;
}

void WorkloadState::close_known(const Known& k, bool in_handler) {
  record(workload_line_begin(ApiCall::kClose, k.socket, k.id));
  const Status status = engine.close(k.id);
  record(workload_line_close(k.socket, k.id, status));
  Guard guard(*mutex);
  ++counts.closes;
  if (in_handler) {
    ++counts.closes_in_handler;
  }
  // NotFound is the answer for a connection that is gone, FailedPrecondition once stop() was
  // called; anything else is a broken contract.
  if (!status.ok() && status.code() != StatusCode::kNotFound && !stopped_answer(status)) {
    fail("close(" + trace_id_text(k.id) + ") failed: " + status.to_string());
  }
}

void WorkloadState::post_task() {
  std::uint32_t index = 0;
  {
    Guard guard(*mutex);
    if (tasks_posted >= kTasksMax) {
      return;
    }
    index = tasks_posted++;
  }
  record(workload_line_begin(ApiCall::kPost));
  const Status status = engine.post(*tasks[index]);
  record(workload_line_post(index, status));
  Guard guard(*mutex);
  if (status.ok()) {
    ++counts.posts;
  } else if (status.code() != StatusCode::kOsError && !stopped_answer(status) &&
             !(workload.tasks_tight && status.code() == StatusCode::kResourceExhausted)) {
    fail("post() failed: " + status.to_string());
  }
}

void WorkloadState::close_behind(const Known& k, bool engine_close_first) {
  if (engine_close_first) {
    close_known(k, false);
  }
  record(workload_line_close_behind(k.socket));
  (void)os.closesocket(k.socket);
  {
    Guard guard(*mutex);
    ++counts.behind_closes;
  }
  close_known(k, false);
}

void WorkloadState::notify(const Known& k, std::uint32_t events) {
  record(workload_line_begin(ApiCall::kNotify, k.socket, k.id));
  const Status status = engine.notify(k.id, events);
  record(workload_line_notify(k.socket, k.id, events, status));
  Guard guard(*mutex);
  ++counts.notifies;
  // NotFound: gone; OsError: the post failed (an injected fault), and nothing was queued;
  // FailedPrecondition: stop() was called.
  if (!status.ok() && status.code() != StatusCode::kNotFound &&
      status.code() != StatusCode::kOsError && !stopped_answer(status)) {
    fail("notify(" + trace_id_text(k.id) + ") failed: " + status.to_string());
  }
}

void WorkloadState::release_held() {
  std::vector<Known> released;
  {
    Guard guard(*mutex);
    held_released = true;
    released.swap(held);
  }
  for (const Known& k : released) {
    notify(k, kSockNotifyEventIn);
  }
}

void WorkloadState::reopen_listener() {
  const Status status = open_listener();
  Guard guard(*mutex);
  // A full table (every slot in use by connections) is a state to wait out, not a failure: the
  // director opens it again once slots are free. So is a port that kept refusing the
  // registration through every retry while faults fire (an outage); with faults off it is not.
  listener_down = !status.ok();
  const bool outlasted = status.code() == StatusCode::kOsError && !faults_off;
  if (outlasted) {
    ++counts.listener_retries_exhausted;
  }
  if (!status.ok() && status.code() != StatusCode::kResourceExhausted && !outlasted) {
    fail("the listener could not be opened again: " + status.to_string());
  }
}

Ipv4Address WorkloadState::server_address() {
  Guard guard(*mutex);
  return address;
}

Status WorkloadState::open_listener() {
  Ipv4Address wanted;
  {
    Guard guard(*mutex);
    wanted = address.port == 0 ? Ipv4Address{kLoopbackHost, 0} : address;
  }
  Status status;
  for (std::uint32_t attempt = 0; attempt < kRetryAttempts; ++attempt) {
    if (attempt > 0) {
      retry_pause(attempt - 1);
    }
    const Socket s = os.socket(kAfInet, kSockStream, kIpprotoTcp);
    if (s == kInvalidSocket) {
      return Status(StatusCode::kOsError, "listener: socket() failed");
    }
    Ipv4Address bound = wanted;
    // The old port may still be in use by its accepted connections: then any port will do.
    bool ok = os.set_nonblocking(s, true) == 0;
    if (ok && os.bind(s, bound) != 0) {
      ok = os.bind(s, Ipv4Address{kLoopbackHost, 0}) == 0;
    }
    if (!ok || os.listen(s, kSomaxconn) != 0 || os.getsockname(s, &bound) != 0) {
      (void)os.closesocket(s);
      return Status(StatusCode::kOsError, "listener: setup failed");
    }
    Result<ConnId> id = add(s, kInterestIn, Mode::kOneshotLevel, listener);
    if (id.ok()) {
      Guard guard(*mutex);
      address = bound;
      listener_id = id.value();
      return Status();
    }
    (void)os.closesocket(s);
    status = id.status();
    if (status.code() != StatusCode::kOsError) {
      return status;
    }
  }
  return Status(StatusCode::kOsError, "listener: add() kept failing: " + status.to_string());
}

void WorkloadState::retry_pause(std::uint32_t attempt) {
  const std::uint32_t shift = std::min<std::uint32_t>(attempt, 10);
  pausing.fetch_add(1);
  os.sleep_ms(std::min<std::uint32_t>(1u << shift, kRetryPauseMaxMs));
  pausing.fetch_sub(1);
}

void WorkloadState::notify_start(const Known& k, std::uint32_t events) {
  // An edge registration reports nothing for a condition that held before it (spec C5): the
  // handler must be run once, so a failed post (an injected fault) is retried, as an embedder
  // would. NotFound: the connection is already gone, nothing to start.
  for (std::uint32_t attempt = 0; attempt < kRetryAttempts; ++attempt) {
    if (attempt > 0) {
      retry_pause(attempt - 1);
    }
    record(workload_line_begin(ApiCall::kNotify, k.socket, k.id));
    const Status status = engine.notify(k.id, events);
    record(workload_line_notify(k.socket, k.id, events, status));
    if (status.code() != StatusCode::kOsError) {
      return;
    }
  }
  // Every try refused while faults fire (posts down for longer than the retries: an outage that
  // keeps starting again): the connection can never start, so it is closed, as an embedder
  // would give it up. With faults off a refused post is a failure.
  bool off = false;
  {
    Guard guard(*mutex);
    off = faults_off;
    if (!off) {
      ++counts.notify_retries_exhausted;
    }
  }
  if (off) {
    fail("notify(" + trace_id_text(k.id) +
         ") kept failing with faults off: an edge connection never "
         "started");
    return;
  }
  close_known(k, false);
}

void WorkloadState::adopt(Socket s) {
  ServerConn* conn = nullptr;
  {
    Guard guard(*mutex);
    if (!server_free.empty()) {
      conn = server_free.back();
      server_free.pop_back();
      ++server_open;  // before add(): its handler may run, and close, at once
      counts.connections_open_peak =
          std::max(counts.connections_open_peak, clients_open + server_open);
    }
  }
  if (conn != nullptr && os.set_nonblocking(s, true) == 0) {
    conn->reset();
    Result<ConnId> id = add(s, interest_for(workload.mode, false), workload.mode, *conn);
    if (id.ok()) {
      {
        Guard guard(*mutex);
        ++counts.server_accepted;
      }
      remember(id.value(), s, conn);
      // Edge modes: data that came before the registration raised no edge (spec C5).
      if (is_edge(workload.mode)) {
        notify_start(Known{id.value(), s, conn}, kSockNotifyEventIn);
      }
      return;
    }
  }
  // No room, or not added: the socket is still ours.
  (void)os.closesocket(s);
  Guard guard(*mutex);
  ++counts.server_refused;
  if (conn != nullptr) {
    --server_open;
    server_free.push_back(conn);
  }
}

void WorkloadState::server_closed(ServerConn& conn) {
  Guard guard(*mutex);
  ++counts.server_closed;
  --server_open;
  server_free.push_back(&conn);
}

bool WorkloadState::launch_client(bool liveness) {
  ClientConn* client = nullptr;
  {
    Guard guard(*mutex);
    if (liveness) {
      if (liveness_launched >= workload.liveness_clients) {
        return false;
      }
      client = clients[workload.clients + liveness_launched++].get();
    } else {
      if (!launching || chaos_launched >= workload.clients ||
          clients_open >= workload.clients_concurrent) {
        return false;
      }
      client = clients[chaos_launched++].get();
    }
    ++clients_open;
    counts.connections_open_peak =
        std::max(counts.connections_open_peak, clients_open + server_open);
  }
  const Socket s = os.socket(kAfInet, kSockStream, kIpprotoTcp);
  bool ok = s != kInvalidSocket && os.set_nonblocking(s, true) == 0;
  if (ok && os.connect(s, server_address()) != 0) {
    ok = os.last_error() == kWsaEwouldblock;
  }
  if (ok) {
    // The connect completes as OUT (or fails as ERR, spec D3).
    Result<ConnId> id = add(s, interest_for(workload.mode, true), workload.mode, *client);
    if (id.ok()) {
      {
        Guard guard(*mutex);
        ++counts.clients_started;
      }
      remember(id.value(), s, nullptr);
      if (is_edge(workload.mode)) {
        notify_start(Known{id.value(), s, nullptr}, kSockNotifyEventIn | kSockNotifyEventOut);
      }
      return true;
    }
  }
  if (s != kInvalidSocket) {
    (void)os.closesocket(s);
  }
  Guard guard(*mutex);
  --clients_open;
  ++counts.clients_refused;
  if (liveness) {
    fail("liveness client " + std::to_string(client->index()) + " could not start");
  }
  return true;
}

void WorkloadState::client_finished(ClientConn& client, bool done) {
  {
    Guard guard(*mutex);
    --clients_open;
    if (client.liveness() && !done) {
      fail("liveness client " + std::to_string(client.index()) + " ended after " +
           std::to_string(client.received()) + " of " + std::to_string(workload.bytes_per_client) +
           " bytes with faults off");
    }
  }
  if (!client.liveness()) {
    (void)launch_client(false);  // keep clients_concurrent going
  }
}

}  // namespace readyport::chaos
