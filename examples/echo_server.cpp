// The echo server's handlers and the echo workload's clients. See echo_server.hpp.
#include "echo_server.hpp"

#include <algorithm>
#include <string>

namespace readyport {

namespace {

// A reopen of the listener that fails is tried again from a posted task; a failed post is tried
// again at once, this many times at most (a post fails only while the port is short of memory).
constexpr int kRepostsMax = 8;

class Guard {
 public:
  explicit Guard(Mutex& mutex) : mutex_(mutex) { mutex_.lock(); }
  ~Guard() { mutex_.unlock(); }
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;

 private:
  Mutex& mutex_;
};

bool is_edge(Mode mode) { return mode == Mode::kPersistentEdge || mode == Mode::kOneshotEdge; }

// Edge modes keep one constant interest: changing the filter would re-enable a condition that
// may already hold, and an edge registration reports nothing for it (spec C5). Level modes ask
// for exactly what they wait for, so a full peer buffer does not spin on IN.
Interest interest_waiting_for_in(Mode mode) {
  return is_edge(mode) ? kInterestIn | kInterestOut | kInterestHangup : kInterestIn;
}
Interest interest_waiting_for_out(Mode mode) {
  return is_edge(mode) ? kInterestIn | kInterestOut | kInterestHangup : kInterestOut;
}

Status socket_error(Os& os, const char* what) {
  const std::uint32_t error = os.last_error();
  return Status(StatusCode::kOsError, std::string(what) + " failed: " + os_error_name(error),
                error);
}

// SplitMix64: the payload and chunk sizes are a function of the seed (no other randomness).
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

std::uint8_t payload_byte(std::uint64_t seed, std::uint32_t client, std::uint64_t offset) {
  const std::uint64_t word = mix(seed ^ (std::uint64_t{client} << 40) ^ (offset >> 3));
  return static_cast<std::uint8_t>(word >> ((offset & 7) * 8));
}

}  // namespace

// ---- The server ---------------------------------------------------------------------------------

struct EchoServer::Impl {
  // One accepted connection: reads until WSAEWOULDBLOCK and sends it back; holds what the peer
  // could not take and waits for OUT.
  class Connection final : public Handler {
   public:
    Connection(Impl& server, std::uint32_t buffer_bytes)
        : server_(server), buffer_(std::max<std::uint32_t>(buffer_bytes, 1)) {}

    void reset() {
      offset_ = 0;
      length_ = 0;
    }

    Interest on_events(ConnId, Socket socket, std::uint32_t events) noexcept override {
      if ((events & kSockNotifyEventErr) != 0) {
        server_.count_error();
        return kInterestClose;
      }
      std::uint64_t echoed = 0;
      const Step step = pump(socket, &echoed);
      server_.count_echoed(echoed);
      switch (step) {
        case Step::kNeedIn:
          return interest_waiting_for_in(server_.options.mode);
        case Step::kNeedOut:
          return interest_waiting_for_out(server_.options.mode);
        case Step::kEnd:
          return kInterestClose;
        case Step::kError:
          server_.count_error();
          return kInterestClose;
      }
      return kInterestClose;
    }

    void on_closed(ConnId) noexcept override { server_.release(*this); }

   private:
    enum class Step { kNeedIn, kNeedOut, kEnd, kError };

    // Until the socket would block: send what is held, then read more. Reads only with nothing
    // held, so a slow peer holds the sender back (no unbounded buffering).
    Step pump(Socket socket, std::uint64_t* echoed) {
      Os& sockets = server_.os;
      for (;;) {
        while (length_ > 0) {
          const int sent =
              sockets.send(socket, buffer_.data() + offset_, static_cast<int>(length_), 0);
          if (sent > 0) {
            offset_ += static_cast<std::uint32_t>(sent);
            length_ -= static_cast<std::uint32_t>(sent);
            *echoed += static_cast<std::uint64_t>(sent);
            continue;
          }
          return sockets.last_error() == kWsaEwouldblock ? Step::kNeedOut : Step::kError;
        }
        const int got = sockets.recv(socket, buffer_.data(), static_cast<int>(buffer_.size()), 0);
        if (got > 0) {
          offset_ = 0;
          length_ = static_cast<std::uint32_t>(got);
          continue;
        }
        if (got == 0) {
          return Step::kEnd;  // the peer finished sending: we are done too
        }
        return sockets.last_error() == kWsaEwouldblock ? Step::kNeedIn : Step::kError;
      }
    }

    Impl& server_;
    std::vector<char> buffer_;
    std::uint32_t offset_ = 0;
    std::uint32_t length_ = 0;
  };

  // The listening socket: accepts until WSAEWOULDBLOCK, hands each socket to a Connection.
  class Listener final : public Handler {
   public:
    explicit Listener(Impl& server) : server_(server) {}
    Interest on_events(ConnId, Socket socket, std::uint32_t) noexcept override {
      for (;;) {
        const Socket accepted = server_.os.accept(socket, nullptr);
        if (accepted == kInvalidSocket) {
          if (server_.os.last_error() != kWsaEwouldblock) {
            server_.count_error();
          }
          break;
        }
        server_.adopt(accepted);
      }
      return kInterestIn;
    }
    void on_closed(ConnId) noexcept override {
      bool asked = false;
      {
        Guard guard(*server_.mutex);
        server_.counts.listener_closed = true;
        asked = server_.close_asked;
      }
      if (!asked) {
        server_.reopen_listener();  // the engine closed it on its own (a refused re-arm)
      }
    }

   private:
    Impl& server_;
  };

  // Runs reopen_listener() on a driver: a reopen that failed tries again there.
  class ReopenTask final : public Task {
   public:
    explicit ReopenTask(Impl& server) : server_(server) {}
    void run() noexcept override { server_.reopen_listener(); }

   private:
    Impl& server_;
  };

  Impl(Os& os_in, Engine& engine_in, EchoServerOptions options_in)
      : os(os_in),
        engine(engine_in),
        options(options_in),
        mutex(os_in.mutex_create()),
        listener(*this),
        reopen_task(*this) {
    pool.reserve(options.connections_max);
    free.reserve(options.connections_max);
    for (std::uint32_t i = 0; i < options.connections_max; ++i) {
      pool.push_back(std::make_unique<Connection>(*this, options.buffer_bytes));
      free.push_back(pool.back().get());
    }
  }

  void adopt(Socket socket) {
    Connection* connection = nullptr;
    {
      Guard guard(*mutex);
      if (!free.empty()) {
        connection = free.back();
        free.pop_back();
        ++counts.accepted;  // before add(): its handler may run (and close) at once
      }
    }
    if (connection != nullptr && os.set_nonblocking(socket, true) == 0) {
      connection->reset();
      Result<ConnId> id =
          engine.add(socket, interest_waiting_for_in(options.mode), options.mode, *connection);
      if (id.ok()) {
        // Edge modes: data that came before the registration raised no edge (spec C5); make
        // the handler read once. (It may already be closed: then there is nothing to do.)
        if (is_edge(options.mode)) {
          (void)engine.notify(id.value(), kSockNotifyEventIn);
        }
        return;
      }
    }
    // No room, or the socket could not be set up: close it at once (the engine never owned it).
    (void)os.closesocket(socket);
    Guard guard(*mutex);
    ++counts.refused;
    if (connection != nullptr) {
      --counts.accepted;
      free.push_back(connection);
    }
  }

  // Opens a non-blocking listener on `where` (port 0: an ephemeral one, written back) and adds it
  // to the engine. On failure nothing is left open.
  Status open_listener(Ipv4Address& where) {
    const Socket listen_socket = os.socket(kAfInet, kSockStream, kIpprotoTcp);
    if (listen_socket == kInvalidSocket) {
      return socket_error(os, "socket()");
    }
    Status status;
    if (os.set_nonblocking(listen_socket, true) != 0) {
      status = socket_error(os, "ioctlsocket(FIONBIO)");
    } else if (os.bind(listen_socket, where) != 0) {
      status = socket_error(os, "bind()");
    } else if (os.listen(listen_socket, kSomaxconn) != 0) {
      status = socket_error(os, "listen()");
    } else if (os.getsockname(listen_socket, &where) != 0) {
      status = socket_error(os, "getsockname()");
    }
    if (status.ok()) {
      Result<ConnId> id = engine.add(listen_socket, kInterestIn, Mode::kOneshotLevel, listener);
      if (id.ok()) {
        Guard guard(*mutex);
        listener_id = id.value();
        counts.listener_closed = false;
        return Status();
      }
      status = id.status();
    }
    (void)os.closesocket(listen_socket);  // a failed add() leaves the socket to its caller
    return status;
  }

  // The engine closed the listener without being asked: a port that refuses a re-arm ends that
  // connection (engine.hpp, on_closed). Opens it again on its port, or tries again from a posted
  // task (on a driver: a handler must not wait); nothing to do once the engine is stopping.
  void reopen_listener() {
    Ipv4Address again = address;
    const Status status = open_listener(again);
    if (status.ok()) {
      Guard guard(*mutex);
      ++counts.listener_reopened;
      return;
    }
    if (status.code() == StatusCode::kFailedPrecondition) {
      return;  // stopping
    }
    for (int attempt = 0; attempt < kRepostsMax; ++attempt) {
      if (engine.post(reopen_task).ok()) {
        return;
      }
    }
  }

  void release(Connection& connection) {
    Guard guard(*mutex);
    ++counts.closed;
    free.push_back(&connection);
  }
  void count_error() {
    Guard guard(*mutex);
    ++counts.errors;
  }
  void count_echoed(std::uint64_t bytes) {
    if (bytes == 0) {
      return;
    }
    Guard guard(*mutex);
    counts.bytes_echoed += bytes;
  }

  Os& os;
  Engine& engine;
  const EchoServerOptions options;
  std::unique_ptr<Mutex> mutex;
  std::vector<std::unique_ptr<Connection>> pool;
  std::vector<Connection*> free;  // guarded by mutex
  Listener listener;
  ReopenTask reopen_task;
  EchoServerCounts counts;  // guarded by mutex
  ConnId listener_id;       // guarded by mutex
  Ipv4Address address;      // the listener's, set by start()
  bool listening = false;
  bool close_asked = false;  // guarded by mutex: close_listener() was called
};

EchoServer::EchoServer(Os& os, Engine& engine, EchoServerOptions options)
    : impl_(std::make_unique<Impl>(os, engine, options)) {}

EchoServer::~EchoServer() = default;

Result<Ipv4Address> EchoServer::start() {
  Impl& s = *impl_;
  if (s.options.mode == Mode::kOneshotEdge) {
    return Status(StatusCode::kInvalidArgument,
                  "EchoServer: oneshot_edge can miss data that arrives before the re-arm "
                  "(spec C5, C6); use oneshot_level, persistent_level or persistent_edge");
  }
  if (s.listening) {
    return Status(StatusCode::kFailedPrecondition, "EchoServer::start(): already started");
  }
  Ipv4Address address{kLoopbackHost, 0};
  if (Status status = s.open_listener(address); !status.ok()) {
    return status;
  }
  s.address = address;
  s.listening = true;
  return address;
}

Status EchoServer::close_listener() {
  if (!impl_->listening) {
    return Status();
  }
  ConnId id;
  {
    Guard guard(*impl_->mutex);
    impl_->close_asked = true;
    id = impl_->listener_id;
  }
  const Status status = impl_->engine.close(id);
  // Already closed (by stop()): that is what was asked.
  if (status.code() == StatusCode::kNotFound) {
    return Status();
  }
  return status;
}

EchoServerCounts EchoServer::counts() const {
  Guard guard(*impl_->mutex);
  return impl_->counts;
}

// ---- The workload's clients
// ----------------------------------------------------------------------

namespace {

class EchoClients {
 public:
  EchoClients(Os& os, Engine& engine, const EchoWorkload& workload, Ipv4Address server,
              Mutex& mutex)
      : os_(os), engine_(engine), workload_(workload), server_(server), mutex_(mutex) {
    clients_.reserve(workload.clients);
    for (std::uint32_t i = 0; i < workload.clients; ++i) {
      clients_.push_back(std::make_unique<Client>(*this, i));
    }
  }

  // Starts the next client; false when none is left (or stopping). Any thread.
  bool launch_next() {
    std::uint32_t index = 0;
    {
      Guard guard(mutex_);
      if (stopping_ || next_ >= workload_.clients) {
        return false;
      }
      index = next_++;
    }
    if (!connect_and_add(*clients_[index])) {
      Guard guard(mutex_);
      ++counts_.clients_failed;
      ++finished_;
    }
    return true;
  }

  void stop_launching() {
    Guard guard(mutex_);
    stopping_ = true;
  }
  bool finished() {
    Guard guard(mutex_);
    return finished_ >= workload_.clients;
  }
  EchoCounts counts() {
    Guard guard(mutex_);
    return counts_;
  }

 private:
  class Client final : public Handler {
   public:
    Client(EchoClients& owner, std::uint32_t index)
        : owner_(owner),
          index_(index),
          total_(owner.workload_.bytes_per_client),
          chunk_state_(owner.workload_.seed ^ (std::uint64_t{index} * 0x9E3779B97F4A7C15ULL)),
          scratch_(std::max<std::uint32_t>(owner.workload_.chunk_bytes_max, 1)) {}

    Interest on_events(ConnId, Socket socket, std::uint32_t events) noexcept override {
      Progress p;
      if ((events & kSockNotifyEventErr) != 0) {
        p.failed = true;  // a refused connect (spec D3) or a reset
      } else {
        send_some(socket, &p);
        if (!p.failed) {
          receive_some(socket, &p);
        }
      }
      owner_.publish(p);
      if (p.failed || received_ >= total_) {
        return kInterestClose;
      }
      const Mode mode = owner_.workload_.mode;
      if (is_edge(mode)) {
        return kInterestIn | kInterestOut | kInterestHangup;
      }
      return sent_ < total_ ? kInterestIn | kInterestOut : kInterestIn;
    }

    void on_closed(ConnId) noexcept override {
      {
        Guard guard(owner_.mutex_);
        ++owner_.counts_.clients_closed;
        ++owner_.finished_;
      }
      (void)owner_.launch_next();  // keep clients_concurrent clients going
    }

   private:
    friend class EchoClients;
    struct Progress {
      std::uint64_t sent = 0;
      std::uint64_t received = 0;
      std::uint64_t mismatched = 0;
      bool done = false;
      bool failed = false;
    };

    std::uint32_t next_chunk() {
      chunk_state_ = mix(chunk_state_);
      const std::uint32_t chunk_max = static_cast<std::uint32_t>(scratch_.size());
      return 1 + static_cast<std::uint32_t>(chunk_state_ % chunk_max);
    }

    // Sends until done or the socket would block (edge modes need the WSAEWOULDBLOCK).
    void send_some(Socket socket, Progress* p) {
      const std::uint64_t seed = owner_.workload_.seed;
      while (sent_ < total_) {
        const std::uint32_t chunk = std::min(total_ - sent_, next_chunk());
        for (std::uint32_t i = 0; i < chunk; ++i) {
          scratch_[i] = static_cast<char>(payload_byte(seed, index_, sent_ + i));
        }
        const int n = owner_.os_.send(socket, scratch_.data(), static_cast<int>(chunk), 0);
        if (n > 0) {
          sent_ += static_cast<std::uint32_t>(n);
          p->sent += static_cast<std::uint64_t>(n);
          continue;
        }
        if (owner_.os_.last_error() != kWsaEwouldblock) {
          p->failed = true;
        }
        return;
      }
    }

    // Reads until the socket would block, checking every byte against what was sent.
    void receive_some(Socket socket, Progress* p) {
      const std::uint64_t seed = owner_.workload_.seed;
      while (received_ < total_) {
        const int n =
            owner_.os_.recv(socket, scratch_.data(), static_cast<int>(scratch_.size()), 0);
        if (n > 0) {
          for (int i = 0; i < n; ++i) {
            const std::uint64_t offset = received_ + static_cast<std::uint32_t>(i);
            if (offset >= sent_ ||
                static_cast<std::uint8_t>(scratch_[static_cast<std::size_t>(i)]) !=
                    payload_byte(seed, index_, offset)) {
              ++p->mismatched;
            }
          }
          received_ += static_cast<std::uint32_t>(n);
          p->received += static_cast<std::uint64_t>(n);
          if (p->mismatched != 0) {
            p->failed = true;  // what came back is not what was sent: stop here
            return;
          }
          continue;
        }
        // End of stream before every byte came back, or an error other than "would block".
        if (n == 0 || owner_.os_.last_error() != kWsaEwouldblock) {
          p->failed = true;
        }
        return;
      }
      p->done = true;
    }

    EchoClients& owner_;
    const std::uint32_t index_;
    const std::uint32_t total_;
    std::uint32_t sent_ = 0;
    std::uint32_t received_ = 0;
    std::uint64_t chunk_state_;
    std::vector<char> scratch_;
  };

  bool connect_and_add(Client& client) {
    const Socket socket = os_.socket(kAfInet, kSockStream, kIpprotoTcp);
    if (socket == kInvalidSocket) {
      return false;
    }
    bool ok = os_.set_nonblocking(socket, true) == 0;
    if (ok && os_.connect(socket, server_) != 0) {
      ok = os_.last_error() == kWsaEwouldblock;
    }
    // The connect completes as OUT (or fails as ERR, spec D3); the handler starts sending then.
    const Interest interest = is_edge(workload_.mode) ? kInterestIn | kInterestOut | kInterestHangup
                                                      : kInterestIn | kInterestOut;
    if (ok) {
      {
        Guard guard(mutex_);
        ++counts_.clients_started;  // before add(): the handler may finish before it returns
      }
      Result<ConnId> id = engine_.add(socket, interest, workload_.mode, client);
      if (id.ok()) {
        // Edge modes: the connect may have completed before the registration (spec C5).
        if (is_edge(workload_.mode)) {
          (void)engine_.notify(id.value(), kSockNotifyEventIn | kSockNotifyEventOut);
        }
        return true;
      }
      Guard guard(mutex_);
      --counts_.clients_started;
    }
    (void)os_.closesocket(socket);
    return false;
  }

  void publish(Client::Progress& p) {
    Guard guard(mutex_);
    counts_.bytes_sent += p.sent;
    counts_.bytes_received += p.received;
    counts_.bytes_mismatched += p.mismatched;
    if (p.done) {
      ++counts_.clients_done;
    }
    if (p.failed) {
      ++counts_.clients_failed;
    }
  }

  Os& os_;
  Engine& engine_;
  const EchoWorkload workload_;
  const Ipv4Address server_;
  Mutex& mutex_;
  std::vector<std::unique_ptr<Client>> clients_;
  // Guarded by mutex_.
  std::uint32_t next_ = 0;
  std::uint32_t finished_ = 0;  // closed, or failed to start
  bool stopping_ = false;
  EchoCounts counts_;
};

Status check_workload(const EchoWorkload& w) {
  if (w.clients < 1 || w.clients_concurrent < 1 || w.bytes_per_client < 1 ||
      w.chunk_bytes_max < 1 || w.buffer_bytes < 1) {
    return Status(StatusCode::kInvalidArgument,
                  "EchoWorkload: clients, clients_concurrent, bytes_per_client, chunk_bytes_max "
                  "and buffer_bytes must be >= 1");
  }
  if (w.mode == Mode::kOneshotEdge) {
    return Status(StatusCode::kInvalidArgument,
                  "EchoWorkload: oneshot_edge can miss data that arrives before the re-arm "
                  "(spec C5, C6)");
  }
  return Status();
}

// Every byte echoed, every connection closed: the first broken expectation, or ok.
Status verify(const EchoWorkload& w, const EchoCounts& c) {
  const std::uint64_t expected = std::uint64_t{w.clients} * w.bytes_per_client;
  auto broken = [&](const std::string& what) {
    return Status(StatusCode::kFailedPrecondition,
                  "echo workload: " + what + " (clients done " + std::to_string(c.clients_done) +
                      "/" + std::to_string(w.clients) + ", failed " +
                      std::to_string(c.clients_failed) + ", bytes received " +
                      std::to_string(c.bytes_received) + "/" + std::to_string(expected) + ")");
  };
  if (c.clients_failed != 0) {
    return broken("clients failed");
  }
  if (c.bytes_mismatched != 0) {
    return broken(std::to_string(c.bytes_mismatched) + " bytes differ");
  }
  if (c.clients_done != w.clients || c.bytes_received != expected) {
    return broken("not every byte came back");
  }
  if (c.clients_closed != c.clients_started) {
    return broken("a client connection was not closed");
  }
  if (c.server.closed != c.server.accepted || !c.server.listener_closed) {
    return broken("a server connection was not closed");
  }
  if (c.engine.connections_live != 0) {
    return broken("the engine still holds connections");
  }
  return Status();
}

}  // namespace

EngineOptions echo_engine_options(const EchoWorkload& workload) {
  EngineOptions options;
  // Server side and client side of every client, plus the listener.
  options.connections_max = 2 * std::max<std::uint32_t>(workload.clients, 1) + 1;
  options.workers_max = std::max<std::uint32_t>(workload.workers, 1) + 1;
  return options;
}

EchoResult run_echo_workload(Os& os, Engine& engine, const EchoWorkload& workload) {
  EchoResult result;
  result.status = check_workload(workload);
  if (!result.status.ok()) {
    (void)engine.stop();
    return result;
  }
  std::unique_ptr<Mutex> mutex = os.mutex_create();
  EchoServerOptions server_options;
  server_options.connections_max = workload.clients;
  server_options.buffer_bytes = workload.buffer_bytes;
  server_options.mode = workload.mode;
  EchoServer server(os, engine, server_options);
  Result<Ipv4Address> address = server.start();
  EchoClients clients(os, engine, workload, address.ok() ? address.value() : Ipv4Address{}, *mutex);
  std::vector<std::unique_ptr<Thread>> workers;
  if (!address.ok()) {
    result.status = address.status();
  }
  for (std::uint32_t i = 0; result.status.ok() && i < workload.workers; ++i) {
    Result<std::unique_ptr<Thread>> thread =
        os.thread_start("echo-worker", [&engine] { (void)engine.run_worker(); });
    if (!thread.ok()) {
      result.status = thread.status();
      break;
    }
    workers.push_back(std::move(thread).value());
  }
  if (result.status.ok()) {
    for (std::uint32_t i = 0; i < workload.clients_concurrent; ++i) {
      if (!clients.launch_next()) {
        break;
      }
    }
    const std::uint64_t deadline_ns =
        os.now_ns() + std::uint64_t{workload.time_limit_ms} * 1'000'000;
    while (!clients.finished()) {
      if (os.now_ns() >= deadline_ns) {
        result.status = Status(StatusCode::kResourceExhausted,
                               "echo workload: not finished after " +
                                   std::to_string(workload.time_limit_ms) + " ms (Os time)");
        break;
      }
      if (workload.workers == 0) {
        (void)engine.poll(workload.poll_timeout_ms);
      } else {
        os.sleep_ms(1);
      }
    }
  }
  clients.stop_launching();
  (void)engine.stop();  // closes the listener and whatever is still open
  for (std::unique_ptr<Thread>& worker : workers) {
    worker->join();
  }
  result.counts = clients.counts();
  result.counts.server = server.counts();
  result.counts.engine = engine.stats();
  if (result.status.ok()) {
    result.status = verify(workload, result.counts);
  }
  return result;
}

}  // namespace readyport
