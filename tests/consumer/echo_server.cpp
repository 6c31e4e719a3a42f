// The consumer's echo server. See echo_server.hpp.
#include "echo_server.hpp"

#include <string>
#include <vector>

namespace consumer {
namespace {

using readyport::Interest;
using readyport::Socket;

constexpr int kBufferBytes = 1024;
constexpr std::uint32_t kHousekeepingMs = 10;

readyport::Status os_error(const char* what, std::uint32_t code) {
  return readyport::Status(readyport::StatusCode::kOsError,
                           std::string(what) + ": " + readyport::os_error_name(code));
}

// One connection: echoes what it reads; what the peer cannot take yet waits for OUT.
class Connection final : public readyport::Handler {
 public:
  explicit Connection(readyport::Os& os) : os_(os) {}

  // doc-snippet: docs/testing-your-server.md handler begin
  Interest on_events(readyport::ConnId /*id*/, Socket socket,
                     std::uint32_t events) noexcept override {
    if ((events & readyport::kSockNotifyEventErr) != 0 || !flush(socket)) {
      return end(socket);
    }
    while (held_ == 0) {
      const int received = os_.recv(socket, buffer_, kBufferBytes, 0);
      if (received < 0 && os_.last_error() == readyport::kWsaEwouldblock) {
        return readyport::kInterestIn;  // read everything there was: wait for more
      }
      if (received <= 0) {
        return end(socket);  // the peer finished (0), or the connection broke
      }
      start_ = 0;
      held_ = received;
      if (!flush(socket)) {
        return end(socket);
      }
    }
    return readyport::kInterestOut;  // the peer is full: wait until it can take the rest
  }
  // doc-snippet: handler end

  void on_closed(readyport::ConnId /*id*/) noexcept override { delete this; }  // the last call

 private:
  // Sends what is held; false when the connection broke.
  bool flush(Socket socket) {
    while (held_ > 0) {
      const int sent = os_.send(socket, buffer_ + start_, held_, 0);
      if (sent < 0) {
        return os_.last_error() == readyport::kWsaEwouldblock;  // the rest waits for OUT
      }
      start_ += sent;
      held_ -= sent;
    }
    return true;
  }

  // doc-snippet: docs/testing-your-server.md end begin
  Interest end(Socket socket) {
#if defined(CONSUMER_PLANTED_BUG)
    (void)os_.closesocket(socket);  // the planted bug: the engine owns this socket
    return readyport::kInterestNone;
#else
    (void)socket;
    return readyport::kInterestClose;  // the engine removes it from the port, then closes it
#endif
  }
  // doc-snippet: end end

  readyport::Os& os_;
  char buffer_[kBufferBytes];
  int start_ = 0;
  int held_ = 0;
};

}  // namespace

struct EchoServer::State {
  State(readyport::Os& os_in, std::uint32_t workers_in)
      : os(os_in), workers_count(workers_in), engine(os_in, {}), mutex(os_in.mutex_create()) {}
  readyport::Status open_listener();
  void adopt(Socket accepted);
  void housekeeping();

  // The listener: accepts until WSAEWOULDBLOCK. The engine may close it (a refused re-arm ends a
  // connection, engine.hpp): then the housekeeping thread opens it again on the same port.
  class Listener final : public readyport::Handler {
   public:
    explicit Listener(State& state) : state_(state) {}
    Interest on_events(readyport::ConnId, Socket socket, std::uint32_t) noexcept override {
      for (Socket accepted;
           (accepted = state_.os.accept(socket, nullptr)) != readyport::kInvalidSocket;) {
        state_.adopt(accepted);
      }
      return readyport::kInterestIn;
    }
    void on_closed(readyport::ConnId) noexcept override {
      state_.mutex->lock();
      state_.listener_lost = state_.running;
      state_.mutex->unlock();
    }

   private:
    State& state_;
  };

  readyport::Os& os;
  const std::uint32_t workers_count;
  readyport::Engine engine;
  std::unique_ptr<readyport::Mutex> mutex;  // guards running and listener_lost
  Listener listener{*this};
  readyport::Ipv4Address address{readyport::kLoopbackHost, 0};  // port 0 until the first open
  std::vector<std::unique_ptr<readyport::Thread>> threads;      // the workers, the housekeeper
  bool running = false;
  bool listener_lost = false;
};

readyport::Status EchoServer::State::open_listener() {
  const Socket s = os.socket(readyport::kAfInet, readyport::kSockStream, readyport::kIpprotoTcp);
  if (s == readyport::kInvalidSocket) {
    return os_error("socket", os.last_error());
  }
  if (os.bind(s, address) != 0 || os.listen(s, 64) != 0 || os.getsockname(s, &address) != 0 ||
      os.set_nonblocking(s, true) != 0) {
    const std::uint32_t code = os.last_error();
    (void)os.closesocket(s);
    return os_error("listener", code);
  }
  const readyport::Result<readyport::ConnId> added =
      engine.add(s, readyport::kInterestIn, readyport::Mode::kOneshotLevel, listener);
  if (!added.ok()) {
    (void)os.closesocket(s);  // a failed add() leaves the socket to its caller
  }
  return added.status();
}

void EchoServer::State::adopt(Socket accepted) {
  if (os.set_nonblocking(accepted, true) != 0) {
    (void)os.closesocket(accepted);
    return;
  }
  auto* connection = new Connection(os);
  if (!engine.add(accepted, readyport::kInterestIn, readyport::Mode::kOneshotLevel, *connection)
           .ok()) {
    delete connection;
    (void)os.closesocket(accepted);  // a failed add() leaves the socket to its caller
  }
}

void EchoServer::State::housekeeping() {
  for (;;) {
    mutex->lock();
    const bool stop_now = !running;
    if (listener_lost && running) {
      listener_lost = !open_listener().ok();  // the next round tries again
    }
    mutex->unlock();
    if (stop_now) {
      return;
    }
    os.sleep_ms(kHousekeepingMs);
  }
}

EchoServer::EchoServer(readyport::Os& os, std::uint32_t workers)
    : state_(std::make_unique<State>(os, workers)) {}

EchoServer::~EchoServer() { (void)stop(); }

readyport::Ipv4Address EchoServer::address() const { return state_->address; }

readyport::Status EchoServer::start() {
  State& st = *state_;
  if (readyport::Status s = st.engine.start(); !s.ok()) {
    return s;
  }
  if (readyport::Status s = st.open_listener(); !s.ok()) {
    return s;
  }
  st.running = true;
  for (std::uint32_t i = 0; i <= st.workers_count; ++i) {
    auto body = i < st.workers_count
                    ? std::function<void()>([&st] { (void)st.engine.run_worker(); })
                    : std::function<void()>([&st] { st.housekeeping(); });
    readyport::Result<std::unique_ptr<readyport::Thread>> thread =
        st.os.thread_start(i < st.workers_count ? "worker" : "housekeeping", std::move(body));
    if (!thread.ok()) {
      return thread.status();  // stop() (the destructor's) joins those that started
    }
    st.threads.push_back(std::move(thread.value()));
  }
  return readyport::Status();
}

readyport::Status EchoServer::stop() {
  State& st = *state_;
  st.mutex->lock();
  st.running = false;  // the housekeeper returns at its next round
  st.mutex->unlock();
  // Every connection and the listener closed, every worker released.
  const readyport::Status stopped = st.engine.stop();
  for (std::unique_ptr<readyport::Thread>& thread : st.threads) {
    thread->join();
  }
  st.threads.clear();
  return stopped;
}

}  // namespace consumer
