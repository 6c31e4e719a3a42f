// README.md's "Embedding the engine" example for Windows, as the program it shows (docs.snippets
// checks that the README's block is this file's marked lines). Windows builds only: compiled and
// run by ctest (docs.example.readme_embedding_windows) on the Windows runners, and under Wine
// here, where ProcessSocketNotifications is missing: serve() then fails as documented and the
// test skips (exit 77) with that message.
// doc-snippet: README.md embedding-windows begin
#include <cstdio>

#include "readyport/engine.hpp"
#include "readyport/windows_os.hpp"

class Echo final : public readyport::Handler {
  readyport::Interest on_events(readyport::ConnId, [[maybe_unused]] readyport::Socket socket,
                                std::uint32_t events) noexcept override {
    if (events & (readyport::kSockNotifyEventHangup | readyport::kSockNotifyEventErr)) {
      return readyport::kInterestClose;  // the engine removes, then closes
    }
    // recv from socket until WSAEWOULDBLOCK, send it back (examples/echo_server.hpp)
    return readyport::kInterestIn;  // re-arms the whole registration
  }
  void on_closed(readyport::ConnId) noexcept override {}  // last call; the socket is closed
};

// Serves one socket; the engine owns it from a successful add() on, and closes it.
int serve(readyport::Socket accepted_socket) {
  auto os = readyport::WindowsOs::create();  // fails clearly before build 20348
  if (!os.ok()) {
    std::fprintf(stderr, "%s\n", os.status().to_string().c_str());
    return 1;
  }
  readyport::Engine engine(*os.value(), readyport::EngineOptions{});  // allocates everything
  if (auto s = engine.start(); !s.ok()) {
    return 1;
  }
  // start N threads that call engine.run_worker(); then, from any thread:
  Echo echo;
  auto id =
      engine.add(accepted_socket, readyport::kInterestIn, readyport::Mode::kOneshotLevel, echo);
  if (id.ok()) {
    (void)engine.close(id.value());  // from any thread, any number of times
  }
  (void)engine.stop();     // closes all, waits every REMOVE, frees workers
  return id.ok() ? 0 : 1;  // a failed add() leaves the socket to the caller
}
// doc-snippet: embedding-windows end

int main() {
  // Winsock and a listening loopback socket to serve, from a WindowsOs that works without
  // ProcessSocketNotifications.
  readyport::WindowsOsOptions options;
  options.require_process_socket_notifications = false;
  auto made = readyport::WindowsOs::create(options);
  if (!made.ok()) {
    std::fprintf(stderr, "winsock: %s\n", made.status().to_string().c_str());
    return 1;
  }
  readyport::Os& sockets = *made.value();
  const readyport::Socket listener =
      sockets.socket(readyport::kAfInet, readyport::kSockStream, readyport::kIpprotoTcp);
  if (listener == readyport::kInvalidSocket ||
      sockets.bind(listener, readyport::Ipv4Address{readyport::kLoopbackHost, 0}) != 0 ||
      sockets.listen(listener, 4) != 0) {
    std::fprintf(stderr, "a listening socket: error %u\n", sockets.last_error());
    return 1;
  }
  const readyport::Result<std::unique_ptr<readyport::WindowsOs>> psn =
      readyport::WindowsOs::create();
  const int served = serve(listener);
  if (!psn.ok()) {
    (void)sockets.closesocket(listener);
    std::printf("skipped: %s; serve() returned %d as documented\n",
                psn.status().to_string().c_str(), served);
    return served == 1 ? 77 : 1;
  }
  // The engine closed the socket: closing it again fails.
  const bool closed_by_engine = sockets.closesocket(listener) != 0;
  std::printf("served: %d; the engine closed the socket: %s\n", served,
              closed_by_engine ? "yes" : "NO");
  return served == 0 && closed_by_engine ? 0 : 1;
}
