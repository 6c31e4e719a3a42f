// One engine property case in the stress world. See engine_world.hpp.
#include "engine_world.hpp"

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "engine_parallel.hpp"
#include "readyport/engine.hpp"
#include "readyport/fake/trace_lines.hpp"
#include "readyport/fake/world.hpp"

namespace readyport::properties {
namespace {

constexpr std::uint32_t kConnectionsMax = 6;  // the engine's table: small, so slots are reused
constexpr std::uint32_t kTasksMax = 32;
constexpr std::uint32_t kBufferBytes = 512;     // the handler's echo buffer
constexpr std::uint32_t kLivenessRounds = 100;  // of kLivenessRoundMs virtual ms each
constexpr std::uint32_t kLivenessRoundMs = 20;
constexpr std::uint64_t kStepsMax = 3'000'000;

bool is_edge(Mode mode) { return mode == Mode::kPersistentEdge || mode == Mode::kOneshotEdge; }

std::uint8_t payload(std::uint64_t offset) { return static_cast<std::uint8_t>(offset % 251); }

struct CaseWorld;

// The echo handler of one connection: writes hnd.* lines naming the socket it was added for.
class EchoHandler final : public Handler {
 public:
  EchoHandler(CaseWorld& world, Socket socket, Mode mode, Interest interest)
      : world_(world), socket_(socket), mode_(mode), interest_(interest), buffer_(kBufferBytes) {}
  Interest on_events(ConnId id, Socket socket, std::uint32_t events) noexcept override;
  void on_closed(ConnId id) noexcept override;

  void request_close_inside(bool by_call) {
    std::lock_guard<std::mutex> lock(mutex_);
    close_inside_ = by_call ? 2 : 1;
  }
  // At its next call the handler calls engine.stop(), which must refuse (a handler may not stop
  // the engine), then goes on as usual.
  void request_stop_inside() {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_inside_ = true;
  }
  bool ended() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return ended_;
  }
  std::uint32_t closed_count() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return closed_count_;
  }

 private:
  Interest body(ConnId id, std::uint32_t events);
  Interest rearm(bool want_out) const {
    if (is_edge(mode_)) {
      return kInterestIn | kInterestOut | kInterestHangup;
    }
    const Interest base = static_cast<Interest>(interest_ & ~kInterestOut);
    return want_out ? static_cast<Interest>(base | kInterestOut) : base;
  }

  CaseWorld& world_;
  const Socket socket_;
  const Mode mode_;
  const Interest interest_;
  std::vector<char> buffer_;  // handler threads only (never two at once for one connection)
  std::uint32_t offset_ = 0;
  std::uint32_t length_ = 0;
  mutable std::mutex mutex_;        // never held across a seam call
  std::uint32_t close_inside_ = 0;  // 1: return kInterestClose; 2: call engine.close
  bool stop_inside_ = false;        // call engine.stop() (refused) at the next call
  std::uint32_t closed_count_ = 0;
  bool ended_ = false;  // on_closed ran
};

class RecordTask final : public Task {
 public:
  RecordTask(CaseWorld& world, std::uint32_t index) : world_(world), index_(index) {}
  void run() noexcept override;

 private:
  CaseWorld& world_;
  const std::uint32_t index_;
};

// A connection the case added: the engine's socket, the director's peer, the echo model.
struct Conn {
  ConnId id;
  Socket socket = kInvalidSocket;
  Socket peer = kInvalidSocket;
  std::unique_ptr<EchoHandler> handler;
  std::uint64_t sent = 0;      // bytes the peer sent
  std::uint64_t received = 0;  // bytes the peer read back
  bool close_requested = false;
  bool peer_ended = false;  // shut down or reset: the echo is not required
  bool peer_reading = true;
  // ONESHOT|EDGE misses data that arrives between the handler's last read and the re-arm (spec
  // C5, C6: discouraged, and refused by the chaos workload): its lifetimes are judged, its echo
  // is not.
  bool echo_required = true;
  // For the API model of the branches (engine_parallel.hpp): its number (the order of adds),
  // whether something may end it by itself (its peer shut down or reset, an ERR notified, its
  // handler asked to close), and whether a close or notify returned not_found (its slot freed).
  std::uint32_t number = 0;
  bool may_end = false;
  bool gone_seen = false;
};

// The logical thread a command runs on: the director's sequential prefix, or one parallel
// branch. A command's `c<n>` indexes `visible`: the prefix's connections, then the ones this lane
// added itself (docs/properties.md "Parallel commands"). A branch also records its API calls and
// their results for the interleaving check. Owned by the world; used by its lane's thread only.
struct Lane {
  std::int32_t branch = -1;  // -1: the prefix
  std::vector<Conn*> visible;
  std::vector<ApiStep> steps;
};

// Holds the world's peers lock (an Os mutex: a scheduling point, so held across seam calls) while
// branches run; a no-op for the sequential prefix, where it is null.
class PeersGuard {
 public:
  explicit PeersGuard(Mutex* lock) : lock_(lock) {
    if (lock_ != nullptr) {
      lock_->lock();
    }
  }
  ~PeersGuard() {
    if (lock_ != nullptr) {
      lock_->unlock();
    }
  }
  PeersGuard(const PeersGuard&) = delete;
  PeersGuard& operator=(const PeersGuard&) = delete;

 private:
  Mutex* const lock_;
};

// The handler of an add() that must be refused: the engine never calls it (asserted).
class RefusedHandler final : public Handler {
 public:
  Interest on_events(ConnId, Socket, std::uint32_t) noexcept override { READYPORT_UNREACHABLE(); }
  void on_closed(ConnId) noexcept override { READYPORT_UNREACHABLE(); }
};

WorldOptions world_options(const EngineCase& c, const std::function<void(const Status&)>& hook) {
  WorldOptions options;
  options.sim.seed = c.seed;
  options.sim.strategy = SimStrategy::kRandom;
  options.sim.steps_max = kStepsMax;
  options.trace = TraceOptions{false, 40};
  options.seed = c.seed;
  options.engine.connections_max = kConnectionsMax;
  options.engine.workers_max = c.workers + 1;
  options.engine.batch_count = c.batch_count;
  options.engine.wait_timeout_ms = 200;
  options.engine.tasks_max = kTasksMax;
  options.on_violation = hook;
  return options;
}

struct CaseWorld {
  CaseWorld(const EngineCase& engine_case_in, const std::function<void(const Status&)>& hook)
      : engine_case(engine_case_in),
        kit(world_options(engine_case_in, hook)),
        edge_in_case(case_has_edge(engine_case_in)) {
    for (std::uint32_t i = 0; i < kTasksMax; ++i) {
      tasks.push_back(std::make_unique<RecordTask>(*this, i));
    }
  }

  void record(TraceEvent&& event) { kit.record(event); }
  void record_text(std::string_view line) { kit.record_text(line); }
  void fail(const std::string& rule, const std::string& sentence) {
    std::lock_guard<std::mutex> lock(mutex);
    if (failure.empty()) {
      failure = sentence;
      failure_rule = rule;
    }
  }
  bool failed() {
    std::lock_guard<std::mutex> lock(mutex);
    return !failure.empty();
  }

  void main();
  void start_workers();
  void stop_engine();
  void execute(const EngineCommand& command, Lane& lane);
  void add(const EngineCommand& command, Lane& lane);
  Conn* add_locked(const EngineCommand& command, Lane& lane);  // null: refused
  void close(Conn& conn, Lane& lane);
  // API misuse (engine_case.hpp): each checks its Status and that nothing else changed.
  void add_again(Conn& conn);
  // Its handler is asked to close it (by close(), or by returning kInterestClose), or to call
  // stop() (which it must refuse), at its next run.
  void close_inside(Conn& conn, bool by_call, Lane& lane);
  void stop_inside(Conn& conn, Lane& lane);
  // The peer of `conn` shuts down its sending side, or resets (an abortive close).
  void peer_shutdown(Conn& conn, Lane& lane);
  void peer_reset(Conn& conn, Lane& lane);
  // Posts the next task, while fewer than kTasksMax were posted.
  void post_task(Lane& lane);
  void close_foreign(std::uint32_t slot, Lane& lane);
  Status notify(Conn& conn, std::uint32_t events, Lane& lane);
  void peer_send(Conn& conn, std::uint32_t bytes);
  std::uint64_t read_peers();  // bytes read back
  // The branches (docs/properties.md "Parallel commands"): each on a logical thread of its own,
  // joined, then judged by the interleaving check (engine_parallel.hpp).
  void run_branches();
  void run_branch(std::size_t branch);
  ApiModelStart model_start() const;
  // Records a branch's step (the prefix records none).
  void note(Lane& lane, ApiStepKind kind, const Conn* conn, StatusCode code, bool ended_before,
            std::string text) {
    if (lane.branch < 0) {
      return;
    }
    ApiStep step;
    step.kind = kind;
    step.conn = conn != nullptr ? conn->number : 0;
    step.code = code;
    step.ended_before = ended_before;
    step.text = std::move(text);
    lane.steps.push_back(std::move(step));
  }
  // `conn` may now end by itself (see Conn::may_end).
  void mark_may_end(Conn& conn, Lane& lane, const char* why) {
    conn.may_end = true;
    note(lane, ApiStepKind::kMayEnd, &conn, StatusCode::kOk, false,
         std::string(why) + "(" + conn_text(conn) + ")");
  }
  static std::string conn_text(const Conn& conn) {
    return "c#" + std::to_string(conn.number) + " s=" + std::to_string(conn.socket) +
           " id=" + trace_id_text(conn.id);
  }
  void liveness();
  void finish();
  Conn* pick(const Lane& lane, std::uint32_t index) {
    if (lane.visible.empty()) {
      return nullptr;
    }
    return lane.visible[index % lane.visible.size()];
  }

  const EngineCase engine_case;
  // The handler of the misuse add() calls, which must be refused: declared before the world (and
  // its engine), so that an add() that wrongly succeeds fails the case without a dangling handler.
  RefusedHandler refused;
  World kit;  // the engine, the fake under the scheduler, the trace and its oracle
  const bool edge_in_case;

  std::vector<std::unique_ptr<Thread>> workers;
  Socket listener = kInvalidSocket;
  Ipv4Address listener_address;
  std::vector<std::unique_ptr<Conn>> conns;  // director only (handlers use their own state)
  std::vector<std::unique_ptr<RecordTask>> tasks;
  std::uint32_t tasks_posted = 0;
  Lane prefix;                     // the director's lane
  std::vector<Lane> branch_lanes;  // one per branch, while they run
  // Serialises the peers' state (Conn::sent, received, peer) and `conns` between branches; made
  // when the case has branches, null before (PeersGuard).
  std::unique_ptr<Mutex> peers_lock;

  std::mutex mutex;  // guards failure; never held across a seam call
  std::string failure;
  std::string failure_rule;
  std::int32_t failed_step = -1;
  EngineRunResult result;
};

Interest EchoHandler::on_events(ConnId id, Socket socket, std::uint32_t events) noexcept {
  world_.record(handler_line_enter(socket_, id, socket, events));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (ended_) {
      world_.fail("closed", "handler of s=" + std::to_string(socket_) + " id=" + trace_id_text(id) +
                                " entered after its on_closed");
    }
  }
  const Interest result = body(id, events);
  world_.record(handler_line_leave(socket_, result));
  return result;
}

Interest EchoHandler::body(ConnId id, std::uint32_t events) {
  std::uint32_t close_inside = 0;
  bool stop_inside = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    close_inside = close_inside_;
    close_inside_ = 0;
    stop_inside = stop_inside_;
    stop_inside_ = false;
  }
  if (stop_inside) {
    world_.record(workload_line_begin(ApiCall::kStop));
    const Status status = world_.kit.engine().stop();
    world_.record(workload_line_end(ApiCall::kStop, status));
    world_.record_text("prop.stop_inside s=" + std::to_string(socket_) +
                       " id=" + trace_id_text(id) + " -> " + trace_status_text(status));
    if (status.code() != StatusCode::kFailedPrecondition) {
      world_.fail("misuse", "stop() from the handler of " + trace_id_text(id) + " returned " +
                                status.to_string() + ", not failed_precondition");
    }
  }
  if (close_inside == 1) {
    return kInterestClose;
  }
  if (close_inside == 2) {
    world_.record(workload_line_begin(ApiCall::kClose, socket_, id));
    const Status status = world_.kit.engine().close(id);
    world_.record(workload_line_close(socket_, id, status));
    if (!status.ok()) {
      world_.fail("close",
                  "close(" + trace_id_text(id) + ") from its handler: " + status.to_string());
    }
    return rearm(false);
  }
  if ((events & kSockNotifyEventErr) != 0) {
    return kInterestClose;
  }
  Os& os = world_.kit.os();
  for (;;) {
    while (length_ > 0) {
      const int sent = os.send(socket_, buffer_.data() + offset_, static_cast<int>(length_), 0);
      if (sent > 0) {
        offset_ += static_cast<std::uint32_t>(sent);
        length_ -= static_cast<std::uint32_t>(sent);
        continue;
      }
      if (os.last_error() == kWsaEwouldblock) {
        return rearm(true);
      }
      return kInterestClose;
    }
    const int got = os.recv(socket_, buffer_.data(), static_cast<int>(buffer_.size()), 0);
    if (got > 0) {
      offset_ = 0;
      length_ = static_cast<std::uint32_t>(got);
      continue;
    }
    if (got == 0) {
      return kInterestClose;
    }
    if (os.last_error() == kWsaEwouldblock) {
      return rearm(false);
    }
    return kInterestClose;
  }
}

void EchoHandler::on_closed(ConnId id) noexcept {
  world_.record(handler_line_closed(socket_, id));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ended_ = true;
    ++closed_count_;
  }
  world_.record(handler_line_closed_end(socket_, id));  // O13: from now on close() says not_found
}

void RecordTask::run() noexcept { world_.record(workload_line_task_run(index_)); }

void CaseWorld::add(const EngineCommand& command, Lane& lane) {
  Conn* added = add_locked(command, lane);
  // An edge that happened before the registration is never reported (spec C5): the handler
  // tries its I/O once (retried while the post fails: an armed post fault).
  if (added != nullptr && is_edge(command.mode)) {
    for (int attempt = 0; attempt < 4; ++attempt) {
      if (notify(*added, kSockNotifyEventIn | kSockNotifyEventOut, lane).code() !=
          StatusCode::kOsError) {
        break;
      }
    }
  }
}

Conn* CaseWorld::add_locked(const EngineCommand& command, Lane& lane) {
  // Under the peers lock: another branch's connect() would otherwise queue its socket between this
  // connect() and accept(), and the peers would be crossed.
  PeersGuard guard(peers_lock.get());
  // A loopback pair through the recording layer (no faults: the setup is not under test).
  const Socket local = kit.recording().socket(kAfInet, kSockStream, kIpprotoTcp);
  READYPORT_ASSERT(local != kInvalidSocket);
  READYPORT_ASSERT(kit.os().connect(local, listener_address) == 0);  // close.abortive knows it
  READYPORT_ASSERT(kit.recording().set_nonblocking(local, true) == 0);
  const Socket peer = kit.recording().accept(listener, nullptr);
  READYPORT_ASSERT(peer != kInvalidSocket);
  auto conn = std::make_unique<Conn>();
  conn->socket = local;
  conn->peer = peer;
  conn->handler = std::make_unique<EchoHandler>(*this, local, command.mode, command.interest);
  conn->echo_required = command.mode != Mode::kOneshotEdge;
  record(workload_line_adding(local));
  const Result<ConnId> id = kit.engine().add(local, command.interest, command.mode, *conn->handler);
  const std::string text = command_text(command);
  if (!id.ok()) {
    record(workload_line_add(local, id));
    note(lane, ApiStepKind::kAdd, nullptr, id.status().code(), false, text);
    if (id.status().code() != StatusCode::kResourceExhausted &&
        id.status().code() != StatusCode::kOsError) {
      fail("add", "add failed: " + id.status().to_string());
    }
    READYPORT_ASSERT(kit.recording().closesocket(local) == 0);
    READYPORT_ASSERT(kit.recording().closesocket(peer) == 0);
    return nullptr;
  }
  record(workload_line_add(local, id));
  conn->id = id.value();
  if (conn->id.slot >= kConnectionsMax || conn->id.generation == 0) {
    fail("add", "add() returned " + trace_id_text(conn->id) + ", not an id of a table of " +
                    std::to_string(kConnectionsMax) + " slots");
  }
  Conn& added = *conn;
  result.modes_added |= 1u << static_cast<std::uint32_t>(command.mode);
  ++result.adds_ok;
  conn->number = static_cast<std::uint32_t>(conns.size());
  conns.push_back(std::move(conn));
  lane.visible.push_back(&added);
  note(lane, ApiStepKind::kAdd, &added, StatusCode::kOk, false, text + " as " + conn_text(added));
  return &added;
}

void CaseWorld::close(Conn& conn, Lane& lane) {
  const ConnId id = conn.id;
  const bool ended_before = conn.handler->ended();
  record(workload_line_begin(ApiCall::kClose, conn.socket, id));
  const Status status = kit.engine().close(id);
  record(workload_line_close(conn.socket, id, status));
  note(lane, ApiStepKind::kClose, &conn, status.code(), ended_before,
       "close(" + conn_text(conn) + ")");
  if (!status.ok() && status.code() != StatusCode::kNotFound) {
    fail("close", "close(" + trace_id_text(id) + ") failed: " + status.to_string());
  }
  conn.close_requested = true;
  conn.gone_seen = conn.gone_seen || status.code() == StatusCode::kNotFound;
}

Status CaseWorld::notify(Conn& conn, std::uint32_t events, Lane& lane) {
  const bool ended_before = conn.handler->ended();
  record(workload_line_begin(ApiCall::kNotify, conn.socket, conn.id));
  const Status status = kit.engine().notify(conn.id, events);
  record(workload_line_notify(conn.socket, conn.id, events, status));
  note(lane, ApiStepKind::kNotify, &conn, status.code(), ended_before,
       "notify(" + conn_text(conn) + ", " + trace_hex_text(events) + ")");
  if (!status.ok() && status.code() != StatusCode::kNotFound &&
      status.code() != StatusCode::kOsError) {
    fail("notify", "notify(" + trace_id_text(conn.id) + ") failed: " + status.to_string());
  }
  conn.gone_seen = conn.gone_seen || status.code() == StatusCode::kNotFound;
  if ((events & kSockNotifyEventErr) != 0) {
    mark_may_end(conn, lane, "ERR notified ");  // the handler closes on ERR
  }
  return status;
}

void CaseWorld::peer_send(Conn& conn, std::uint32_t bytes) {
  PeersGuard guard(peers_lock.get());
  if (conn.peer_ended) {
    return;
  }
  char chunk[512];
  while (bytes > 0) {
    const std::uint32_t size =
        bytes < sizeof chunk ? bytes : static_cast<std::uint32_t>(sizeof chunk);
    for (std::uint32_t i = 0; i < size; ++i) {
      chunk[i] = static_cast<char>(payload(conn.sent + i));
    }
    const int n = kit.recording().send(conn.peer, chunk, static_cast<int>(size), 0);
    if (n <= 0) {
      return;  // the buffer is full (WSAEWOULDBLOCK) or the connection is gone
    }
    conn.sent += static_cast<std::uint64_t>(n);
    bytes -= static_cast<std::uint32_t>(n);
  }
}

std::uint64_t CaseWorld::read_peers() {
  PeersGuard guard(peers_lock.get());
  std::uint64_t moved = 0;
  char chunk[512];
  for (auto& conn_ptr : conns) {
    Conn& conn = *conn_ptr;
    while (conn.peer_reading && !conn.peer_ended) {
      const int n = kit.recording().recv(conn.peer, chunk, static_cast<int>(sizeof chunk), 0);
      if (n <= 0) {
        if (n == 0 || kit.recording().last_error() != kWsaEwouldblock) {
          conn.peer_reading = false;
        }
        break;
      }
      for (int i = 0; i < n; ++i) {
        if (static_cast<std::uint8_t>(chunk[i]) !=
            payload(conn.received + static_cast<std::uint64_t>(i))) {
          fail("echo", "echo of s=" + std::to_string(conn.socket) + ": byte " +
                           std::to_string(conn.received + static_cast<std::uint64_t>(i)) +
                           " differs from what the peer sent");
          break;
        }
      }
      conn.received += static_cast<std::uint64_t>(n);
      moved += static_cast<std::uint64_t>(n);
      if (conn.received > conn.sent) {
        fail("echo", "echo of s=" + std::to_string(conn.socket) + ": more bytes back than sent");
      }
    }
  }
  return moved;
}

void CaseWorld::execute(const EngineCommand& c, Lane& lane) {
  using K = EngineCommandKind;
  Conn* conn = c.kind == K::kAdd || c.kind == K::kPost || c.kind == K::kArm || c.kind == K::kRun
                   ? nullptr
                   : pick(lane, c.conn);
  switch (c.kind) {
    case K::kAdd:
      add(c, lane);
      return;
    case K::kPeerSend:
      if (conn != nullptr) {
        peer_send(*conn, c.value);
      }
      return;
    case K::kPeerShutdown:
      if (conn != nullptr) {
        peer_shutdown(*conn, lane);
      }
      return;
    case K::kPeerReset:
      if (conn != nullptr) {
        peer_reset(*conn, lane);
      }
      return;
    case K::kClose:
      if (conn != nullptr) {
        close(*conn, lane);
      }
      return;
    case K::kCloseInside:
      if (conn != nullptr) {
        close_inside(*conn, c.value % 2 != 0, lane);
      }
      return;
    case K::kNotify:
      if (conn != nullptr) {
        (void)notify(*conn, c.value, lane);
      }
      return;
    case K::kPost:
      post_task(lane);
      return;
    case K::kArm:
      if (edge_in_case &&
          (c.site == FaultSite::kRecvWouldblock || c.site == FaultSite::kSendWouldblock)) {
        return;  // see case_has_edge
      }
      kit.os().arm_next(c.site);
      return;
    case K::kRun:
      kit.os().sleep_ms(c.value);
      (void)read_peers();
      return;
    case K::kAddAgain:
      if (conn != nullptr) {
        add_again(*conn);
      }
      return;
    case K::kCloseForeign:
      close_foreign(c.value, lane);
      return;
    case K::kStopInside:
      if (conn != nullptr) {
        stop_inside(*conn, lane);
      }
      return;
  }
}

void CaseWorld::close_inside(Conn& conn, bool by_call, Lane& lane) {
  conn.handler->request_close_inside(by_call);
  conn.close_requested = true;
  mark_may_end(conn, lane, "close_inside");  // the handler may run at once, from a queued packet
  {
    PeersGuard guard(peers_lock.get());
    ++result.closes_inside;
  }
  (void)notify(conn, kSockNotifyEventIn, lane);
}

void CaseWorld::stop_inside(Conn& conn, Lane& lane) {
  if (conn.close_requested) {
    return;
  }
  conn.handler->request_stop_inside();
  (void)notify(conn, kSockNotifyEventIn, lane);
}

void CaseWorld::peer_shutdown(Conn& conn, Lane& lane) {
  {
    PeersGuard guard(peers_lock.get());
    if (conn.peer_ended) {
      return;
    }
    (void)kit.recording().shutdown(conn.peer, kSdSend);
    conn.peer_ended = true;
  }
  mark_may_end(conn, lane, "peer_shutdown");  // the handler reads the end of stream and closes
}

void CaseWorld::peer_reset(Conn& conn, Lane& lane) {
  {
    PeersGuard guard(peers_lock.get());
    if (conn.peer == kInvalidSocket) {
      return;
    }
    (void)kit.recording().set_linger(conn.peer, true, 0);
    READYPORT_ASSERT(kit.recording().closesocket(conn.peer) == 0);
    conn.peer = kInvalidSocket;
    conn.peer_ended = true;
    conn.peer_reading = false;
  }
  mark_may_end(conn, lane, "peer_reset");  // ERR at the engine's side: the handler closes
}

void CaseWorld::post_task(Lane& lane) {
  // The index is taken before the call (another branch may post meanwhile) and given back after
  // a failure when no one took the next since (always in the prefix: the old numbering).
  std::uint32_t index = 0;
  {
    PeersGuard guard(peers_lock.get());
    if (tasks_posted >= kTasksMax) {
      return;
    }
    index = tasks_posted++;
  }
  record(workload_line_begin(ApiCall::kPost));
  const Status status = kit.engine().post(*tasks[index]);
  record(workload_line_post(index, status));
  note(lane, ApiStepKind::kPost, nullptr, status.code(), false,
       "post(task " + std::to_string(index) + ")");
  if (!status.ok()) {
    PeersGuard guard(peers_lock.get());
    if (tasks_posted == index + 1) {
      --tasks_posted;
    }
  }
  if (!status.ok() && status.code() != StatusCode::kOsError) {
    fail("post", "post() failed: " + status.to_string());
  }
}

void CaseWorld::add_again(Conn& conn) {
  // Only while the handler has not ended, and while no other socket of the world has the value:
  // the engine may have closed the socket before on_closed (a quarantine drains after the close),
  // and the fake may have handed the value to a new socket since, whose add() would rightly
  // succeed.
  // Under the peers lock: no branch makes a socket meanwhile (which could take the value).
  PeersGuard guard(peers_lock.get());
  if (conn.handler->ended() || conn.socket == listener) {
    return;
  }
  for (const auto& other : conns) {
    if (other.get() != &conn && (other->socket == conn.socket || other->peer == conn.socket)) {
      return;
    }
  }
  const EngineStats before = kit.engine().stats();
  const Result<ConnId> id =
      kit.engine().add(conn.socket, kInterestIn, Mode::kOneshotLevel, refused);
  record_text("prop.add_again s=" + std::to_string(conn.socket) + " -> " +
              (id.ok() ? std::string("ok") : status_code_name(id.status().code())));
  if (id.ok()) {
    fail("misuse", "add() of socket " + std::to_string(conn.socket) + " already added as " +
                       trace_id_text(conn.id) + " succeeded as " + trace_id_text(id.value()));
    (void)kit.engine().close(
        id.value());  // `refused` lives as long as the world: no dangling handler
    return;
  }
  // kAlreadyExists while the engine holds the socket; once it closed it (before on_closed, which
  // the director may not have seen yet) add() treats it as any socket: the table is full
  // (kResourceExhausted), the port says it is not a socket (kInvalidArgument), or an armed fault
  // refuses the element first (kOsError).
  const StatusCode code = id.status().code();
  if (code != StatusCode::kAlreadyExists && code != StatusCode::kInvalidArgument &&
      code != StatusCode::kOsError && code != StatusCode::kResourceExhausted) {
    fail("misuse", "add() of socket " + std::to_string(conn.socket) +
                       " already added: " + id.status().to_string() +
                       ", not already_exists, resource_exhausted, invalid_argument or os_error");
  }
  if (kit.engine().stats().connections_added != before.connections_added) {
    fail("misuse", "a refused add() counted a connection");
  }
}

void CaseWorld::close_foreign(std::uint32_t slot, Lane& lane) {
  const ConnId foreign{slot, 0};  // generation 0: never handed out (generations start at 1)
  const Status status = kit.engine().close(foreign);
  note(lane, ApiStepKind::kCloseForeign, nullptr, status.code(), false,
       "close_foreign(" + trace_id_text(foreign) + ")");
  record_text("prop.close_foreign id=" + trace_id_text(foreign) + " -> " +
              trace_status_text(status));
  if (status.code() != StatusCode::kNotFound) {
    fail("misuse", "close() of " + trace_id_text(foreign) + ", an id never handed out, returned " +
                       status.to_string() + ", not not_found");
  }
}

void CaseWorld::liveness() {
  record(phase_line("liveness"));
  for (std::uint32_t round = 0; round < kLivenessRounds && !failed() && kit.oracle().status().ok();
       ++round) {
    kit.os().sleep_ms(kLivenessRoundMs);
    (void)read_peers();
    bool settled = true;
    for (auto& conn : conns) {
      const bool survivor = conn->echo_required && !conn->close_requested && !conn->peer_ended &&
                            conn->handler->closed_count() == 0;
      if (survivor && conn->received != conn->sent) {
        settled = false;
      }
    }
    if (settled) {
      break;
    }
  }
  for (auto& conn : conns) {
    if (!conn->echo_required || conn->close_requested || conn->peer_ended ||
        conn->handler->closed_count() != 0) {
      continue;
    }
    ++result.echoed_connections;
    if (conn->received != conn->sent) {
      fail("echo", "liveness: connection s=" + std::to_string(conn->socket) +
                       " id=" + trace_id_text(conn->id) + " open, its peer sent " +
                       std::to_string(conn->sent) + " bytes and read back " +
                       std::to_string(conn->received) + " after " +
                       std::to_string(kLivenessRounds * kLivenessRoundMs) + " virtual ms");
    }
  }
}

void CaseWorld::start_workers() {
  for (std::uint32_t i = 0; i < engine_case.workers; ++i) {
    Result<std::unique_ptr<Thread>> thread = kit.os().thread_start("worker", [this] {
      record(workload_line_begin(ApiCall::kRunWorker));
      const Status status = kit.engine().run_worker();
      record(workload_line_end(ApiCall::kRunWorker, status));
    });
    READYPORT_ASSERT(thread.ok());
    workers.push_back(std::move(thread).value());
  }
}

ApiModelStart CaseWorld::model_start() const {
  ApiModelStart start;
  start.connections_max = kConnectionsMax;
  auto has_arm = [](const std::vector<EngineCommand>& commands) {
    for (const EngineCommand& c : commands) {
      if (c.kind == EngineCommandKind::kArm) {
        return true;
      }
    }
    return false;
  };
  start.faults = has_arm(engine_case.commands);
  for (const std::vector<EngineCommand>& branch : engine_case.branches) {
    start.faults = start.faults || has_arm(branch);
  }
  for (const auto& conn : conns) {
    if (conn->gone_seen) {
      start.conns.push_back(ApiConnState::kGone);
    } else if (start.faults || conn->may_end || conn->close_requested || conn->handler->ended()) {
      start.conns.push_back(ApiConnState::kMayEnd);
    } else {
      start.conns.push_back(ApiConnState::kOpen);
    }
  }
  return start;
}

void CaseWorld::run_branches() {
  peers_lock = kit.os().mutex_create();
  const ApiModelStart start = model_start();
  branch_lanes.resize(engine_case.branches.size());
  std::vector<std::unique_ptr<Thread>> threads;
  for (std::size_t b = 0; b < branch_lanes.size(); ++b) {
    branch_lanes[b].branch = static_cast<std::int32_t>(b);
    branch_lanes[b].visible = prefix.visible;
    Result<std::unique_ptr<Thread>> thread =
        kit.os().thread_start("branch", [this, b] { run_branch(b); });
    READYPORT_ASSERT(thread.ok());
    threads.push_back(std::move(thread).value());
  }
  for (auto& thread : threads) {
    thread->join();
  }
  record(phase_line("branches_joined"));
  if (failed() || !kit.oracle().status().ok()) {
    return;
  }
  std::vector<std::vector<ApiStep>> steps;
  for (Lane& lane : branch_lanes) {
    steps.push_back(lane.steps);
  }
  result.branches_run = static_cast<std::uint32_t>(steps.size());
  for (const std::vector<ApiStep>& branch : steps) {
    for (const ApiStep& step : branch) {
      result.branch_steps += step.kind == ApiStepKind::kMayEnd ? 0u : 1u;
      result.branch_not_found += step.code == StatusCode::kNotFound ? 1u : 0u;
    }
  }
  const Status explained = branches_explained(start, steps);
  if (!explained.ok()) {
    fail("parallel", explained.message());
    failed_step = static_cast<std::int32_t>(case_command_count(engine_case)) - 1;
  }
}

void CaseWorld::run_branch(std::size_t b) {
  const std::vector<EngineCommand>& commands = engine_case.branches[b];
  READYPORT_ASSERT(commands.size() <= kEngineBranchCommandsMax);
  for (std::size_t i = 0; i < commands.size(); ++i) {
    if (failed() || !kit.oracle().status().ok()) {
      return;  // another branch's failure ends this one too
    }
    execute(commands[i], branch_lanes[b]);
    READYPORT_ASSERT(branch_lanes[b].steps.size() <= (i + 1) * kApiStepsPerCommandMax);
    if (!kit.oracle().status().ok() || failed()) {
      std::lock_guard<std::mutex> lock(mutex);
      if (failed_step < 0) {
        failed_step = static_cast<std::int32_t>(case_step_number(engine_case, b, i));
      }
      return;
    }
  }
}

void CaseWorld::stop_engine() {
  record(workload_line_begin(ApiCall::kStop));
  const Status stopped = kit.engine().stop();
  record(workload_line_end(ApiCall::kStop, stopped));
  for (auto& worker : workers) {
    worker->join();
  }
  record(phase_line("end"));
  if (!stopped.ok()) {
    fail("stop", "stop() failed: " + stopped.to_string());
  }
}

void CaseWorld::main() {
  record(phase_line("start"));
  const Status started = kit.engine().start();
  READYPORT_ASSERT(started.ok());
  start_workers();
  listener = kit.recording().socket(kAfInet, kSockStream, kIpprotoTcp);
  READYPORT_ASSERT(kit.recording().bind(listener, Ipv4Address{kLoopbackHost, 0}) == 0);
  READYPORT_ASSERT(kit.recording().getsockname(listener, &listener_address) == 0);
  READYPORT_ASSERT(kit.recording().listen(listener, kSomaxconn) == 0);
  READYPORT_ASSERT(kit.recording().set_nonblocking(listener, true) == 0);
  record(phase_line("commands"));
  for (std::size_t i = 0; i < engine_case.commands.size(); ++i) {
    execute(engine_case.commands[i], prefix);
    if (!kit.oracle().status().ok() || failed()) {
      failed_step = static_cast<std::int32_t>(i);
      break;
    }
  }
  if (!engine_case.branches.empty() && !failed() && kit.oracle().status().ok()) {
    record(phase_line("branches"));
    run_branches();
  }
  if (!failed() && kit.oracle().status().ok()) {
    liveness();
  }
  record(phase_line("stop"));
  stop_engine();
  // API misuse after the end: add() after stop() is refused, and stop() again.
  {
    const Socket late = kit.recording().socket(kAfInet, kSockStream, kIpprotoTcp);
    READYPORT_ASSERT(late != kInvalidSocket);
    const Status added = kit.engine().add(late, kInterestIn, Mode::kOneshotLevel, refused).status();
    if (added.code() != StatusCode::kFailedPrecondition) {
      fail("misuse",
           "add() after stop() returned " + added.to_string() + ", not failed_precondition");
    }
    record(workload_line_begin(ApiCall::kStop));
    const Status again = kit.engine().stop();
    record(workload_line_end(ApiCall::kStop, again));
    if (again.code() != StatusCode::kFailedPrecondition) {
      fail("misuse", "stop() twice returned " + again.to_string() + ", not failed_precondition");
    }
    READYPORT_ASSERT(kit.recording().closesocket(late) == 0);
  }
  for (auto& conn : conns) {
    if (conn->peer != kInvalidSocket) {
      READYPORT_ASSERT(kit.recording().closesocket(conn->peer) == 0);
    }
    conn->peer = kInvalidSocket;
  }
  READYPORT_ASSERT(kit.recording().closesocket(listener) == 0);
}

void CaseWorld::finish() {
  Status status = kit.oracle().status();
  std::string rule;
  if (status.ok() && failed()) {
    std::lock_guard<std::mutex> lock(mutex);
    status = Status(StatusCode::kInternal, failure);
    rule = failure_rule;
  }
  if (status.ok() && kit.sim()->outcome() != SimOutcome::kCompleted) {
    status = Status(StatusCode::kInternal, std::string("the run did not complete: ") +
                                               sim_outcome_name(kit.sim()->outcome()) + "\n" +
                                               kit.sim()->describe_threads());
    rule = "run";
  }
  if (status.ok()) {
    status = kit.oracle().finish();
  }
  if (status.ok() && kit.oracle().counts().judgement.not_judged() != 0) {
    // What the oracle could not judge is no pass (a bound hit, or the engine's reports missing).
    const OracleJudgement judged = kit.oracle().counts().judgement;
    status =
        Status(StatusCode::kInternal, "the oracle did not judge everything: unjudged " +
                                          oracle_rule_list_text(judged.unjudged) + "; bounds hit " +
                                          oracle_bounds_text(judged.bounds_hit));
    rule = "unjudged";
  }
  if (status.ok()) {
    for (auto& conn : conns) {
      const std::uint32_t closed = conn->handler->closed_count();
      if (closed != 1) {
        status = Status(StatusCode::kInternal, "connection s=" + std::to_string(conn->socket) +
                                                   " id=" + trace_id_text(conn->id) +
                                                   ": on_closed called " + std::to_string(closed) +
                                                   " times (once per successful add)");
        rule = "closed";
        break;
      }
    }
  }
  // The engine's counts against the fake's, and the fake holding nothing (World's end checks).
  const EngineStats stats = kit.engine().stats();
  if (status.ok()) {
    status = kit.engine_verdict(stats);
    if (status.ok()) {
      status = kit.leak_verdict();
    }
    rule = "leak";
  }
  result.status = status;
  result.rule = rule_of(status, rule);
  result.failed_step = status.ok() ? -1 : failed_step;
  const FaultCounts faults = kit.os().counts();
  result.fired = faults.fired;
  result.quarantined = stats.quarantined;
  result.removes_refused = kit.oracle().counts().removes_refused;
  result.judgement = kit.oracle().counts().judgement;
  result.steps = kit.sim()->stats().steps;
}

}  // namespace

std::string rule_of(const Status& status, const std::string& fallback) {
  const std::string& message = status.message();
  if (message.size() >= 2 && message[0] == 'O' && message[1] >= '0' && message[1] <= '9') {
    return message.substr(0, message.find(' '));
  }
  return fallback;
}

EngineRunResult run_engine_case(const EngineCase& engine_case,
                                const std::function<void(const Status&)>& on_violation) {
  auto world = std::make_unique<CaseWorld>(engine_case, on_violation);
  CaseWorld* w = world.get();
  const Status run_status = w->kit.sim()->run([w] { w->main(); });
  if (!run_status.ok() && w->kit.sim()->outcome() == SimOutcome::kCompleted) {
    w->fail("run", run_status.to_string());
  }
  w->finish();
  EngineRunResult result = w->result;
  if (w->kit.sim()->outcome() != SimOutcome::kCompleted) {
    (void)world.release();  // its threads are parked for good and point into it
  }
  return result;
}

}  // namespace readyport::properties
