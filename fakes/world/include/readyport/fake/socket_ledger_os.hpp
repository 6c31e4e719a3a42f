// readyport/fake/socket_ledger_os.hpp: SocketLedgerOs, an Os decorator that keeps the set of
// sockets and ports open through it, for the end check of a World on a real Os, where no
// fake holds the ground truth: after stop() every socket and port the world opened must have
// been closed again.
//
//   SocketLedgerOs ledger(windows_os);
//   ... run the engine and the workload over `ledger` ...
//   Status leaks = ledger.check_closed();   // names the sockets still open
//
// A socket enters at a successful socket() or accept(), a port at a successful
// create_io_completion_port(); each leaves at its successful closesocket() / close_port(). A
// value closed that the ledger never saw open (handed out by the OS before the ledger existed)
// is ignored. The OS may reuse a value once it is closed; the ledger follows it.
//
// Ownership: borrows `inner` (must outlive it). Threading: every method from any thread (one
// std::mutex, held only around the set, never across the inner call). Errors: the inner Os's;
// check_closed returns kInternal naming the leaks.
#pragma once

#include <cstdint>
#include <mutex>
#include <set>
#include <string>

#include "readyport/fake/forwarding_os.hpp"
#include "readyport/status.hpp"

namespace readyport {

class SocketLedgerOs final : public ForwardingOs {
 public:
  using ForwardingOs::ForwardingOs;

  Socket socket(int af, int type, int protocol) override {
    const Socket s = inner().socket(af, type, protocol);
    if (s != kInvalidSocket) {
      opened(sockets_, s);
    }
    return s;
  }
  Socket accept(Socket s, Ipv4Address* peer_out) override {
    const Socket accepted = inner().accept(s, peer_out);
    if (accepted != kInvalidSocket) {
      opened(sockets_, accepted);
    }
    return accepted;
  }
  int closesocket(Socket s) override {
    const int result = inner().closesocket(s);
    if (result == 0) {
      closed(sockets_, s);
    }
    return result;
  }
  Port create_io_completion_port(std::uint32_t concurrency) override {
    const Port port = inner().create_io_completion_port(concurrency);
    if (port != kInvalidPort) {
      opened(ports_, port.value);
    }
    return port;
  }
  bool close_port(Port port) override {
    const bool ok = inner().close_port(port);
    if (ok) {
      closed(ports_, port.value);
    }
    return ok;
  }

  // ok when nothing is open; kInternal listing (up to 16 of) the sockets and ports still open.
  Status check_closed() const {
    std::lock_guard<std::mutex> guard(mutex_);
    if (sockets_.empty() && ports_.empty()) {
      return Status();
    }
    std::string text = "leak: after stop() " + std::to_string(sockets_.size()) + " socket(s) and " +
                       std::to_string(ports_.size()) + " port(s) opened by the run are still open:";
    std::size_t listed = 0;
    for (const std::uint64_t s : sockets_) {
      if (listed++ < 16) {
        text += " s=" + std::to_string(s);
      }
    }
    for (const std::uint64_t port : ports_) {
      if (listed++ < 16) {
        text += " port=" + std::to_string(port);
      }
    }
    return Status(StatusCode::kInternal, text);
  }

 private:
  void opened(std::set<std::uint64_t>& set, std::uintptr_t value) {
    std::lock_guard<std::mutex> guard(mutex_);
    set.insert(value);
  }
  void closed(std::set<std::uint64_t>& set, std::uintptr_t value) {
    std::lock_guard<std::mutex> guard(mutex_);
    set.erase(value);
  }

  mutable std::mutex mutex_;
  std::set<std::uint64_t> sockets_;  // guarded by mutex_
  std::set<std::uint64_t> ports_;    // guarded by mutex_
};

}  // namespace readyport
