// tests/consumer/main.cpp: an embedder's first test of its own handler, built against an
// installed readyport (find_package) or its sources (FetchContent). No Windows needed: the engine
// runs over FakeOs, single-threaded (Engine::poll on the inline runtime).
//
// One TCP connection over the fake's loopback: the server side is added to the engine with an
// echo handler; the client sends a message, reads the echo, then closes; the handler sees the end
// of the stream and closes its connection; stop() must leave nothing open in the fake.
// Exit status 0 when everything held, 1 (with the reason on stderr) otherwise.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "readyport/engine.hpp"
#include "readyport/fake/fake_os.hpp"
#include "readyport/os.hpp"
#include "readyport/version.hpp"

namespace {

// Echoes what it reads; closes on end of stream or error. Runs on the thread that calls poll().
class EchoHandler final : public readyport::Handler {
 public:
  explicit EchoHandler(readyport::Os& os) : os_(os) {}

  readyport::Interest on_events(readyport::ConnId /*id*/, readyport::Socket socket,
                                std::uint32_t events) noexcept override {
    if ((events & readyport::kSockNotifyEventErr) != 0) {
      return readyport::kInterestClose;
    }
    char buffer[512];
    for (;;) {
      const int received = os_.recv(socket, buffer, static_cast<int>(sizeof buffer), 0);
      if (received == 0) {
        return readyport::kInterestClose;  // the peer finished
      }
      if (received < 0) {
        // A stale IN (spec D5) reads nothing: wait for the next one.
        if (os_.last_error() == readyport::kWsaEwouldblock) {
          return readyport::kInterestIn;
        }
        return readyport::kInterestClose;
      }
      // The message is far smaller than the fake's receive buffer: one send takes it all.
      if (os_.send(socket, buffer, received, 0) != received) {
        failed_ = true;
        return readyport::kInterestClose;
      }
      echoed_bytes_ += static_cast<std::uint32_t>(received);
    }
  }

  void on_closed(readyport::ConnId /*id*/) noexcept override { closed_ = true; }

  std::uint32_t echoed_bytes() const { return echoed_bytes_; }
  bool closed() const { return closed_; }
  bool failed() const { return failed_; }

 private:
  readyport::Os& os_;
  std::uint32_t echoed_bytes_ = 0;
  bool closed_ = false;
  bool failed_ = false;
};

int fail(const std::string& why) {
  std::fprintf(stderr, "readyport_consumer: FAILED: %s\n", why.c_str());
  return 1;
}

// Polls the engine until `done()` holds, at most `polls_max` batches.
template <typename Done>
bool poll_until(readyport::Engine& engine, Done done, int polls_max = 100) {
  for (int i = 0; i < polls_max && !done(); ++i) {
    if (!engine.poll(10).ok()) {
      return false;
    }
  }
  return done();
}

int run() {
  if (std::strcmp(readyport::version_string(), READYPORT_VERSION_STRING) != 0) {
    return fail(std::string("headers are ") + READYPORT_VERSION_STRING + " but the library is " +
                readyport::version_string());
  }
  readyport::FakeOs os;  // the inline runtime: one thread, virtual time
  readyport::Engine engine(os, readyport::EngineOptions{});
  if (readyport::Status s = engine.start(); !s.ok()) {
    return fail("start: " + s.to_string());
  }

  // A listener and one connection over the fake's loopback.
  const readyport::Socket listener =
      os.socket(readyport::kAfInet, readyport::kSockStream, readyport::kIpprotoTcp);
  readyport::Ipv4Address address{readyport::kLoopbackHost, 0};
  if (os.bind(listener, address) != 0 || os.listen(listener, 4) != 0 ||
      os.getsockname(listener, &address) != 0) {
    return fail("listener: error " + std::to_string(os.last_error()));
  }
  const readyport::Socket client =
      os.socket(readyport::kAfInet, readyport::kSockStream, readyport::kIpprotoTcp);
  if (os.connect(client, address) != 0) {
    return fail("connect: " + std::to_string(os.last_error()));
  }
  const readyport::Socket server = os.accept(listener, nullptr);
  if (server == readyport::kInvalidSocket || os.set_nonblocking(server, true) != 0 ||
      os.set_nonblocking(client, true) != 0) {
    return fail("accept: error " + std::to_string(os.last_error()));
  }

  EchoHandler handler(os);
  readyport::Result<readyport::ConnId> id =
      engine.add(server, readyport::kInterestIn, readyport::Mode::kOneshotLevel, handler);
  if (!id.ok()) {
    return fail("add: " + id.status().to_string());
  }

  const std::string message = "hello, readyport " READYPORT_VERSION_STRING;
  const int length = static_cast<int>(message.size());
  if (os.send(client, message.data(), length, 0) != length) {
    return fail("client send");
  }
  if (!poll_until(engine, [&] { return handler.echoed_bytes() == message.size(); })) {
    return fail("the handler echoed " + std::to_string(handler.echoed_bytes()) + " of " +
                std::to_string(message.size()) + " bytes");
  }
  char echo[64] = {};
  if (os.recv(client, echo, static_cast<int>(sizeof echo), 0) != length ||
      message.compare(0, message.size(), echo, message.size()) != 0) {
    return fail("the client did not read its message back");
  }

  // The client leaves: the handler reads the end of the stream and closes the connection.
  if (os.closesocket(client) != 0) {
    return fail("client closesocket");
  }
  if (!poll_until(engine, [&] { return handler.closed(); })) {
    return fail("on_closed was not called after the peer closed");
  }
  if (handler.failed()) {
    return fail("the handler's send was short");
  }
  if (readyport::Status s = engine.stop(); !s.ok()) {
    return fail("stop: " + s.to_string());
  }
  if (os.closesocket(listener) != 0) {
    return fail("listener closesocket");
  }

  const readyport::EngineStats stats = engine.stats();
  const readyport::FakeStats fake = os.stats();
  if (stats.connections_added != 1 || stats.connections_closed != 1 || fake.sockets_open != 0 ||
      fake.registrations_live != 0) {
    return fail("leftovers: connections " + std::to_string(stats.connections_added) + " added, " +
                std::to_string(stats.connections_closed) + " closed; fake sockets open " +
                std::to_string(fake.sockets_open) + ", registrations " +
                std::to_string(fake.registrations_live));
  }
  std::printf(
      "readyport_consumer: readyport %s (commit %s): echoed %u bytes over FakeOs in %llu "
      "notifications, connection closed, nothing left open: ok\n",
      readyport::version_string(), readyport::version_commit(), handler.echoed_bytes(),
      static_cast<unsigned long long>(stats.notifications));
  return 0;
}

}  // namespace

int main() { return run(); }
