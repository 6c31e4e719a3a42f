// Echo clients for a scenario. See echo_clients.hpp.
#include "readyport/fake/echo_clients.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "readyport/fake/payload.hpp"

namespace readyport {
namespace {

enum class Behaviour : std::uint8_t {
  kPolite,  // sends everything, reads everything back, closes
  kReset,   // resets its connection halfway through sending (SO_LINGER 0, then closesocket)
  kLeave,   // sends everything, closes without reading the echo
};

constexpr std::uint32_t kBackoffMsMax = 16;
constexpr std::uint32_t kReadBytesMax = kPayloadCheckBytesMax;

struct Client {
  std::uint32_t number = 0;  // its payload's stream
  std::uint32_t bytes = 0;
  std::uint32_t chunk = 0;
  Behaviour behaviour = Behaviour::kPolite;
  std::uint64_t seed = 0;
  Ipv4Address server;
  std::uint32_t stall_ms_max = 0;
  // Its outcome.
  Status status;
  std::uint32_t sent = 0;
  std::uint32_t received = 0;
};

std::string client_text(const Client& c) {
  return "echo client " + std::to_string(c.number) + " (sent " + std::to_string(c.sent) +
         ", got back " + std::to_string(c.received) + " of " + std::to_string(c.bytes) + " bytes)";
}

// Ends the client with `why` (kUnavailable: it did not finish), closing its socket.
void end(Os& os, Socket s, Client& c, const std::string& why) {
  c.status = Status(StatusCode::kUnavailable, client_text(c) + ": " + why);
  (void)os.closesocket(s);
}

std::string error_text(std::uint32_t code) { return os_error_name(code); }

// One round: sends what it may and reads what came back. False when the client ended.
bool step(Os& os, Socket s, Client& c, bool* progress_out) {
  const std::uint32_t goal = c.behaviour == Behaviour::kReset ? c.bytes / 2 : c.bytes;
  if (c.sent < goal) {
    char chunk[kReadBytesMax];
    const std::uint32_t size = std::min(c.chunk, goal - c.sent);
    payload_fill(c.seed, c.number, c.sent, chunk, size);
    const int n = os.send(s, chunk, static_cast<int>(size), 0);
    if (n > 0) {
      c.sent += static_cast<std::uint32_t>(n);
      *progress_out = true;
    } else if (const std::uint32_t error = os.last_error(); n < 0 && error != kWsaEwouldblock) {
      end(os, s, c, "send failed: " + error_text(error));
      return false;
    }
  }
  if (c.behaviour != Behaviour::kPolite && c.sent >= goal) {
    if (c.behaviour == Behaviour::kReset) {
      (void)os.set_linger(s, true, 0);  // the close becomes a reset
    }
    (void)os.closesocket(s);
    c.status = Status();
    return false;
  }
  if (c.received < c.sent) {
    char data[kReadBytesMax];
    const int n =
        os.recv(s, data, static_cast<int>(std::min(kReadBytesMax, c.bytes - c.received)), 0);
    if (n > 0) {
      const std::uint64_t wrong = payload_mismatches(c.seed, c.number, c.received, c.sent, data,
                                                     static_cast<std::size_t>(n));
      if (wrong != 0) {
        c.status =
            Status(StatusCode::kInternal, client_text(c) + ": " + std::to_string(wrong) +
                                              " of the " + std::to_string(n) + " bytes at offset " +
                                              std::to_string(c.received) + " are not what it sent");
        (void)os.closesocket(s);
        return false;
      }
      c.received += static_cast<std::uint32_t>(n);
      *progress_out = true;
    } else if (n == 0) {
      end(os, s, c, "the server closed the connection before echoing everything");
      return false;
    } else if (const std::uint32_t error = os.last_error(); error != kWsaEwouldblock) {
      end(os, s, c, "recv failed: " + error_text(error));
      return false;
    }
  }
  return true;
}

void run_client(Os& os, Client& c) {
  const Socket s = os.socket(kAfInet, kSockStream, kIpprotoTcp);
  if (s == kInvalidSocket) {
    c.status = Status(StatusCode::kUnavailable,
                      client_text(c) + ": socket failed: " + error_text(os.last_error()));
    return;
  }
  if (os.set_nonblocking(s, true) != 0) {
    end(os, s, c, "set_nonblocking failed: " + error_text(os.last_error()));
    return;
  }
  if (os.connect(s, c.server) != 0) {
    if (const std::uint32_t error = os.last_error(); error != kWsaEwouldblock) {
      end(os, s, c, "connect failed: " + error_text(error));
      return;
    }
  }
  std::uint64_t last_progress_ns = os.now_ns();
  std::uint32_t backoff_ms = 1;
  while (c.received < c.bytes) {
    bool progress = false;
    if (!step(os, s, c, &progress)) {
      return;
    }
    if (progress) {
      backoff_ms = 1;
      last_progress_ns = os.now_ns();
      continue;
    }
    if (os.now_ns() - last_progress_ns > std::uint64_t{c.stall_ms_max} * 1'000'000) {
      end(os, s, c, "no progress for " + std::to_string(c.stall_ms_max) + " ms of virtual time");
      return;
    }
    os.sleep_ms(backoff_ms);
    backoff_ms = std::min(backoff_ms * 2, kBackoffMsMax);
  }
  if (os.closesocket(s) != 0) {
    c.status = Status(StatusCode::kUnavailable,
                      client_text(c) + ": closesocket failed: " + error_text(os.last_error()));
  }
}

}  // namespace

Status echo_clients(ScenarioContext& ctx, const Ipv4Address& server,
                    const EchoClientsOptions& options) {
  const bool strict = !ctx.faults_on();
  Rng& rng = ctx.rng();
  std::vector<Client> clients(options.clients);
  // Streams differ between calls (chaos, then liveness) and clients.
  const std::uint32_t first = static_cast<std::uint32_t>(ctx.phase()) * 1024;
  for (std::uint32_t i = 0; i < options.clients; ++i) {
    Client& c = clients[i];
    c.number = first + i;
    c.bytes = 1 + static_cast<std::uint32_t>(rng.below(std::max(options.bytes, 1u)));
    c.chunk = 1 + static_cast<std::uint32_t>(
                      rng.below(std::min(std::max(options.chunk_bytes_max, 1u), kReadBytesMax)));
    const std::uint64_t draw = rng.below(8);
    c.behaviour = strict || !options.misbehave ? Behaviour::kPolite
                  : draw == 0                  ? Behaviour::kReset
                  : draw == 1                  ? Behaviour::kLeave
                                               : Behaviour::kPolite;
    c.seed = ctx.seed();
    c.server = server;
    c.stall_ms_max = options.liveness_ms;
  }
  Os& os = ctx.os();
  std::vector<std::unique_ptr<Thread>> threads;
  for (Client& c : clients) {
    Result<std::unique_ptr<Thread>> thread =
        os.thread_start("echo_client", [&os, &c] { run_client(os, c); });
    if (thread.ok()) {
      threads.push_back(std::move(thread.value()));
    } else {
      c.status =
          Status(StatusCode::kUnavailable,
                 client_text(c) + ": its thread did not start: " + thread.status().message());
    }
  }
  for (std::unique_ptr<Thread>& thread : threads) {
    thread->join();
  }
  for (const Client& c : clients) {
    if (c.status.code() == StatusCode::kInternal || (strict && !c.status.ok())) {
      return c.status;
    }
  }
  return Status();
}

}  // namespace readyport
