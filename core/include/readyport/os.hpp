// readyport/os.hpp: the seam. Everything readyport does that can block, fail, interleave with
// another thread or observe time goes through `readyport::Os` or the narrower `EngineOs` it
// extends (engine_os.hpp: the calls the engine makes). Os adds GetQueuedCompletionStatusEx,
// sockets and threads, for handlers, workloads and tests.
//
// Implementations: `WindowsOs` (core/, the real calls, Windows only), `FakeOs` (fakes/, a
// deterministic model of docs/rules.md), and decorators over any Os (`ForwardingOs` and its
// subclasses `RecordingOs`, `FaultyOs`). Production code passes a `WindowsOs`; tests a fake.
//
//   readyport::FakeOs os(readyport::FakeOptions{});
//   readyport::Port port = os.create_io_completion_port(0);
//   readyport::SockNotifyRegistration reg{sock, key, kSockNotifyRegisterEventIn,
//       kSockNotifyOpEnable, kSockNotifyTriggerOneshot | kSockNotifyTriggerLevel, 0};
//   std::uint32_t err = os.process_socket_notifications(port, 1, &reg, 0, 0, nullptr, nullptr);
//
// The conventions of engine_os.hpp (threading, errors, blocking, lifetime) hold for every method
// here too. Re-entrancy: no method calls back into the caller, except `thread_start`, which runs
// `body` on the new thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "readyport/engine_os.hpp"
#include "readyport/os_types.hpp"
#include "readyport/status.hpp"

namespace readyport {

// A started thread. Ownership: the caller of thread_start; join() it exactly once before
// destroying it (destroying an unjoined Thread is a broken contract and asserts).
class Thread {
 public:
  virtual ~Thread() = default;
  virtual void join() = 0;  // blocks until the body returned
};

class Os : public EngineOs {
 public:
  ~Os() override = default;

  // GetQueuedCompletionStatusEx (spec F3). Blocks up to timeout_ms. Returns true with at least
  // one entry in *removed_out; false with last_error() kWaitTimeout on timeout or
  // kErrorAbandonedWait0 when the port is closed during the wait. `alertable` must be false
  // (readyport queues no APCs); true fails with kErrorInvalidParameter.
  virtual bool get_queued_completion_status_ex(Port port, OverlappedEntry* entries,
                                               std::uint32_t count, std::uint32_t* removed_out,
                                               std::uint32_t timeout_ms, bool alertable) = 0;

  // -- Sockets (Winsock-shaped; the int-returning ones return kSocketError on failure) ----------

  // socket(af, type, protocol). Only kAfInet with kSockStream/kIpprotoTcp or
  // kSockDgram/kIpprotoUdp is supported by readyport. Returns kInvalidSocket on failure.
  virtual Socket socket(int af, int type, int protocol) = 0;
  virtual int bind(Socket s, const Ipv4Address& address) = 0;
  // getsockname: the bound address (learn the ephemeral port after bind to port 0).
  virtual int getsockname(Socket s, Ipv4Address* address_out) = 0;
  virtual int listen(Socket s, int backlog) = 0;
  // accept: blocks on a blocking socket; a non-blocking one fails with kWsaEwouldblock when no
  // connection is pending. The new socket has the listening socket's properties, non-blocking
  // mode included (as Winsock documents). `peer_out` may be null.
  virtual Socket accept(Socket s, Ipv4Address* peer_out) = 0;
  // connect: blocks on a blocking socket; a non-blocking one returns kSocketError with
  // kWsaEwouldblock and reports completion as OUT, or failure as ERR (spec D3).
  virtual int connect(Socket s, const Ipv4Address& address) = 0;
  // send / recv: bytes moved; recv returns 0 at end of stream. Block on a blocking socket.
  virtual int send(Socket s, const void* data, int length, int flags) = 0;
  virtual int recv(Socket s, void* data, int length, int flags) = 0;
  // Datagram calls (UDP).
  virtual int sendto(Socket s, const void* data, int length, int flags, const Ipv4Address& to) = 0;
  virtual int recvfrom(Socket s, void* data, int length, int flags, Ipv4Address* from_out) = 0;
  virtual int shutdown(Socket s, int how) = 0;
  // ioctlsocket(FIONBIO).
  virtual int set_nonblocking(Socket s, bool nonblocking) = 0;
  // setsockopt(SOL_SOCKET, SO_LINGER): {enabled, 0} makes closesocket an abortive reset.
  virtual int set_linger(Socket s, bool enabled, std::uint16_t timeout_s) = 0;
  // getsockopt(SOL_SOCKET, SO_ERROR): the pending error (for example a failed connect), cleared.
  virtual int get_socket_error(Socket s, std::uint32_t* error_out) = 0;

  // -- Threads -----------------------------------------------------------------------------------

  // Starts `body` on a new thread named `name` (names appear in traces). The Os must outlive the
  // thread. Fails with a Status when the implementation cannot start threads.
  virtual Result<std::unique_ptr<Thread>> thread_start(std::string_view name,
                                                       std::function<void()> body) = 0;
};

}  // namespace readyport
