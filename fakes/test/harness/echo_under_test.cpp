// The echo server under test and its planted bugs. See echo_under_test.hpp.
#include "echo_under_test.hpp"

#include <algorithm>
#include <string>

namespace readyport::harness_test {
namespace {

constexpr std::uint32_t kBufferBytes = 512;
constexpr std::uint32_t kTickMs = 5;

struct BugInfo {
  const char* name;
  const char* rule;
};
constexpr BugInfo kBugs[] = {
    {"none", ""},
    {"close_in_handler", "U2"},
    {"stale_socket", "U1"},
    {"blocking_recv", "U3"},
    {"outlives_stop", "U4"},
    {"wouldblock_as_success", "U5"},
    {"edge_not_drained", "U6"},
    {"failed_add_leak", "U7"},
    {"eof_ignored", "U8"},
    {"busy_wait", "U9"},
    {"freed_too_early", "U1"},
};
static_assert(std::size(kBugs) == static_cast<std::size_t>(PlantedBug::kCount));

bool is_edge(PlantedBug bug) { return bug == PlantedBug::kEdgeNotDrained; }

}  // namespace

const char* planted_bug_name(PlantedBug bug) { return kBugs[static_cast<int>(bug)].name; }
const char* planted_bug_rule(PlantedBug bug) { return kBugs[static_cast<int>(bug)].rule; }

class Conn;
class Listener;

struct EchoUnderTest::State {
  State(Os& os_in, PlantedBug bug_in, std::uint32_t workers_in);
  ~State();

  // The interest a connection asks for: edge modes keep one constant interest (spec C5).
  Interest interest(bool want_out) const {
    if (is_edge(bug)) {
      return kInterestIn | kInterestOut | kInterestHangup;
    }
    return want_out ? kInterestOut : kInterestIn;
  }
  void ticker_loop();
  void adopt(Socket s);
  Status open_listener();
  Status start_threads();

  Os& os;
  const PlantedBug bug;
  const std::uint32_t workers_count;
  Engine engine;
  std::unique_ptr<Mutex> mutex;  // guards the lists below and `stopping`
  Socket listener = kInvalidSocket;
  Ipv4Address address{kLoopbackHost, 0};
  std::unique_ptr<Listener> listener_handler;
  std::vector<std::unique_ptr<Thread>> workers;
  // The housekeeping thread: re-opens the listener when the engine closed it (a refused re-arm,
  // spec A8, ends a connection: on_closed is the only word of it); and a planted bug's prober,
  // reaper or reporter.
  std::unique_ptr<Thread> ticker;
  bool stopping = false;       // stop() began: no more repairs
  bool ticker_done = false;    // the ticker returns
  bool listener_lost = false;  // the listener's on_closed came while running
  std::vector<Socket> seen;    // kStaleSocket: every socket served (the bug: never pruned)
  std::vector<Conn*> live;     // kFreedTooEarly: the connections the reaper watches
};

namespace {

class Locked {
 public:
  explicit Locked(Mutex& mutex) : mutex_(mutex) { mutex_.lock(); }
  ~Locked() { mutex_.unlock(); }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;

 private:
  Mutex& mutex_;
};

}  // namespace

// One connection: echoes what it reads, holding what the peer cannot take yet.
class Conn final : public Handler {
 public:
  Conn(EchoUnderTest::State& server, Socket socket) : server_(server), socket_(socket) {}

  Interest on_events(ConnId id, Socket socket, std::uint32_t events) noexcept override;
  void on_closed(ConnId /*id*/) noexcept override;

  ConnId id;             // set by adopt() once add() returned (under the server's mutex)
  bool hung_up = false;  // kFreedTooEarly: the reaper's to close (under the server's mutex)
  // kFreedTooEarly: the reaper's "free into the pool" when it closes the connection (the bug: the
  // state must live until on_closed). Under the server's mutex.
  void reset_state() { socket_ = kInvalidSocket; }

 private:
  Interest echo();
  // Sends what is held; false on an error (the connection is to close).
  bool flush();
  Interest close_for();
  // The socket each call uses: the one the engine passed (kFreedTooEarly's handler reads its own
  // state's copy at every call, as code that keeps the socket in its state does).
  Socket io() const { return server_.bug == PlantedBug::kFreedTooEarly ? socket_ : passed_; }

  EchoUnderTest::State& server_;
  Socket socket_;  // kFreedTooEarly's handler uses its own copy (and the reaper resets it)
  Socket passed_ = kInvalidSocket;  // the socket of the running on_events
  char buffer_[kBufferBytes];
  std::uint32_t offset_ = 0;
  std::uint32_t length_ = 0;
};

void Conn::on_closed(ConnId /*id*/) noexcept {
  {
    Locked lock(*server_.mutex);
    auto& live = server_.live;
    live.erase(std::remove(live.begin(), live.end(), this), live.end());
  }
  delete this;
}

bool Conn::flush() {
  while (length_ > 0) {
    const int sent = server_.os.send(io(), buffer_ + offset_, static_cast<int>(length_), 0);
    if (server_.bug == PlantedBug::kWouldblockAsSuccess) {
      length_ = 0;  // the bug: the result ignored, what did not fit is lost
      return true;
    }
    if (sent < 0) {
      return server_.os.last_error() == kWsaEwouldblock;
    }
    offset_ += static_cast<std::uint32_t>(sent);
    length_ -= static_cast<std::uint32_t>(sent);
  }
  return true;
}

Interest Conn::close_for() {
  if (server_.bug == PlantedBug::kCloseInHandler) {
    (void)server_.os.closesocket(io());  // the bug: the engine owns it (and will close it again)
    return kInterestNone;
  }
  return kInterestClose;
}

Interest Conn::echo() {
  for (std::uint32_t reads = 0;; ++reads) {
    if (server_.bug == PlantedBug::kEdgeNotDrained && reads == 1) {
      return server_.interest(false);  // the bug: one chunk per notification
    }
    int received = server_.os.recv(io(), buffer_, static_cast<int>(kBufferBytes), 0);
    if (received > 0 && server_.bug == PlantedBug::kBlockingRecv && reads == 0) {
      // The bug: "read the rest of the message in one go", blocking.
      (void)server_.os.set_nonblocking(io(), false);
      const int more =
          server_.os.recv(io(), buffer_ + received, static_cast<int>(kBufferBytes) - received, 0);
      (void)server_.os.set_nonblocking(io(), true);
      received += std::max(more, 0);
    }
    if (received == 0) {
      if (server_.bug == PlantedBug::kEofIgnored) {
        return server_.interest(false);  // the bug: the end of the stream read as "nothing yet"
      }
      if (server_.bug == PlantedBug::kFreedTooEarly) {
        Locked lock(*server_.mutex);
        hung_up = true;  // left to the reaper
        return kInterestNone;
      }
      return close_for();
    }
    if (received < 0) {
      return server_.os.last_error() == kWsaEwouldblock ? server_.interest(false) : close_for();
    }
    offset_ = 0;
    length_ = static_cast<std::uint32_t>(received);
    if (!flush()) {
      return close_for();
    }
    if (length_ > 0) {
      return server_.interest(true);  // wait for room before reading more
    }
  }
}

Interest Conn::on_events(ConnId /*id*/, Socket socket, std::uint32_t events) noexcept {
  if (server_.bug == PlantedBug::kBusyWait) {
    // The bug: pacing by spinning on the clock; in a simulation time stands still meanwhile.
    const std::uint64_t until = server_.os.now_ns() + 1'000'000;
    while (server_.os.now_ns() < until) {
    }
  }
  passed_ = socket;
  if (server_.bug == PlantedBug::kFreedTooEarly && (events & kSockNotifyEventOut) != 0) {
    std::uint32_t error = 0;
    (void)server_.os.get_socket_error(io(), &error);  // the reaper's tick: a health check
  }
  if ((events & kSockNotifyEventErr) != 0) {
    return close_for();
  }
  if (!flush()) {
    return close_for();
  }
  if (length_ > 0) {
    return server_.interest(true);
  }
  return echo();
}

// The listener: accepts until WSAEWOULDBLOCK and adopts each socket.
class Listener final : public Handler {
 public:
  explicit Listener(EchoUnderTest::State& server) : server_(server) {}
  Interest on_events(ConnId /*id*/, Socket socket, std::uint32_t /*events*/) noexcept override {
    for (;;) {
      const Socket accepted = server_.os.accept(socket, nullptr);
      if (accepted == kInvalidSocket) {
        return kInterestIn;  // WSAEWOULDBLOCK, or a failed accept: the next IN tries again
      }
      server_.adopt(accepted);
    }
  }
  void on_closed(ConnId /*id*/) noexcept override {
    Locked lock(*server_.mutex);
    server_.listener_lost = !server_.stopping;  // closed by the engine while running: re-open
  }

 private:
  EchoUnderTest::State& server_;
};

EchoUnderTest::State::State(Os& os_in, PlantedBug bug_in, std::uint32_t workers_in)
    : os(os_in),
      bug(bug_in),
      workers_count(workers_in),
      engine(os_in,
             [] {
               EngineOptions options;
               options.connections_max = 16;
               options.batch_count = 8;
               return options;
             }()),
      mutex(os_in.mutex_create()) {}

EchoUnderTest::State::~State() = default;

void EchoUnderTest::State::adopt(Socket s) {
  if (os.set_nonblocking(s, true) != 0) {
    (void)os.closesocket(s);
    return;
  }
  auto* conn = new Conn(*this, s);
  if (bug == PlantedBug::kFreedTooEarly) {
    Locked lock(*mutex);
    live.push_back(conn);  // before add(): its handler may run (and end) before add() returns
  }
  const Mode mode = is_edge(bug) ? Mode::kPersistentEdge : Mode::kOneshotLevel;
  const Result<ConnId> id = engine.add(s, interest(false), mode, *conn);
  if (!id.ok()) {
    {
      Locked lock(*mutex);
      live.erase(std::remove(live.begin(), live.end(), conn), live.end());
    }
    delete conn;
    if (bug != PlantedBug::kFailedAddLeak) {
      (void)os.closesocket(s);  // a failed add() leaves the socket to us
    }
    return;
  }
  if (is_edge(bug)) {
    (void)engine.notify(id.value(), kSockNotifyEventIn);  // data may have come before (spec C5)
  }
  Locked lock(*mutex);
  if (bug == PlantedBug::kStaleSocket) {
    seen.push_back(s);
  }
  for (Conn* watched : live) {
    if (watched == conn) {
      conn->id = id.value();  // still live: the reaper may close it from now on
    }
  }
}

// The planted bugs' own thread: kStaleSocket's prober (a health check of every socket it ever
// served), kFreedTooEarly's reaper (closes hung-up connections, ticks the others with notify),
// kOutlivesStop's reporter (reads the engine's counters). Until `stopping`.
void EchoUnderTest::State::ticker_loop() {
  for (;;) {
    {
      Locked lock(*mutex);
      if (ticker_done || (stopping && bug != PlantedBug::kOutlivesStop)) {
        return;
      }
      if (listener_lost && !stopping) {
        listener_lost = !open_listener().ok();  // the next tick tries again
      }
      if (bug == PlantedBug::kStaleSocket) {
        for (const Socket s : seen) {
          std::uint32_t error = 0;
          (void)os.get_socket_error(s, &error);
        }
      }
      // The reaper: ticks every connection (a broadcast), and closes those that hung up.
      for (std::size_t i = 0; bug == PlantedBug::kFreedTooEarly && i < live.size();) {
        Conn* conn = live[i];
        if (conn->id.generation == 0) {
          ++i;
          continue;
        }
        (void)engine.notify(conn->id, kSockNotifyEventOut);
        if (conn->hung_up) {
          (void)engine.close(conn->id);
          conn->reset_state();  // the bug: freed at close(), not at on_closed
          live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
          continue;
        }
        ++i;
      }
    }
    if (bug == PlantedBug::kOutlivesStop) {
      (void)engine.stats();
    }
    os.sleep_ms(kTickMs);
  }
}

EchoUnderTest::EchoUnderTest(Os& os, PlantedBug bug, std::uint32_t workers)
    : state_(std::make_unique<State>(os, bug, workers)) {}

EchoUnderTest::~EchoUnderTest() {
  State& st = *state_;
  if (st.ticker) {
    {
      Locked lock(*st.mutex);
      st.stopping = true;
      st.ticker_done = true;
    }
    st.ticker->join();  // kOutlivesStop: only here, after stop() returned (the bug)
  }
  (void)st.engine.stop();  // a failed start: the engine may be running, workers never started
  for (auto& worker : st.workers) {
    worker->join();
  }
}

Ipv4Address EchoUnderTest::address() const { return state_->address; }

// Opens the listener on `address` (port 0 the first time: an ephemeral port, kept for re-opens).
Status EchoUnderTest::State::open_listener() {
  listener = os.socket(kAfInet, kSockStream, kIpprotoTcp);
  if (listener == kInvalidSocket) {
    return Status(StatusCode::kOsError, "socket: " + std::string(os_error_name(os.last_error())));
  }
  if (os.bind(listener, address) != 0 || os.listen(listener, 16) != 0 ||
      os.getsockname(listener, &address) != 0 || os.set_nonblocking(listener, true) != 0) {
    const std::uint32_t error = os.last_error();
    (void)os.closesocket(listener);
    return Status(StatusCode::kOsError, "listener: " + std::string(os_error_name(error)));
  }
  listener_handler = std::make_unique<Listener>(*this);
  const Result<ConnId> added =
      engine.add(listener, kInterestIn, Mode::kOneshotLevel, *listener_handler);
  if (!added.ok()) {
    (void)os.closesocket(listener);  // a failed add() leaves it to us
    return added.status();
  }
  return Status();
}

Status EchoUnderTest::State::start_threads() {
  for (std::uint32_t i = 0; i < workers_count; ++i) {
    Result<std::unique_ptr<Thread>> worker =
        os.thread_start("worker", [this] { (void)engine.run_worker(); });
    if (!worker.ok()) {
      return worker.status();  // the destructor stops the engine and joins the others
    }
    workers.push_back(std::move(worker.value()));
  }
  Result<std::unique_ptr<Thread>> thread = os.thread_start("ticker", [this] { ticker_loop(); });
  if (!thread.ok()) {
    return thread.status();
  }
  ticker = std::move(thread.value());
  return Status();
}

Status EchoUnderTest::start() {
  State& st = *state_;
  if (Status s = st.engine.start(); !s.ok()) {
    return s;
  }
  if (Status s = st.open_listener(); !s.ok()) {
    return s;
  }
  return st.start_threads();
}

Status EchoUnderTest::stop() {
  State& st = *state_;
  {
    Locked lock(*st.mutex);
    st.stopping = true;
  }
  if (st.ticker && st.bug != PlantedBug::kOutlivesStop) {  // the bug: the reporter runs on
    st.ticker->join();
    st.ticker.reset();
  }
  const Status stopped = st.engine.stop();  // closes the listener and every connection
  for (auto& worker : st.workers) {
    worker->join();
  }
  st.workers.clear();
  return stopped;
}

}  // namespace readyport::harness_test
