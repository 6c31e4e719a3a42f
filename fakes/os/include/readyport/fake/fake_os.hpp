// readyport/fake/fake_os.hpp: FakeOs, the deterministic fake of Windows' socket state
// notifications (ProcessSocketNotifications on an I/O completion port) and of the Winsock calls
// readyport uses. It implements the seam `readyport::Os` (os.hpp) by the rules of docs/rules.md.
//
//   readyport::FakeOs os;  // default options, its own InlineRuntime
//   readyport::Port port = os.create_io_completion_port(0);
//   readyport::Socket s =
//       os.socket(readyport::kAfInet, readyport::kSockDgram, readyport::kIpprotoUdp);
//   os.set_nonblocking(s, true);
//   readyport::SockNotifyRegistration reg{
//       s, 7, readyport::kSockNotifyRegisterEventIn, readyport::kSockNotifyOpEnable,
//       readyport::kSockNotifyTriggerOneshot | readyport::kSockNotifyTriggerLevel, 0};
//   readyport::OverlappedEntry entry;  std::uint32_t received = 0;
//   os.process_socket_notifications(port, 1, &reg, 0, 1, &entry, &received);
//
// What it models, what it leaves out: docs/rules.md#what-fakeos-models-and-what-it-leaves-out.
//
// Ownership and lifetime: FakeOs owns every socket, port, registration and packet it models.
// Without a runtime it owns an InlineRuntime (one thread; a wait nothing can end asserts as a
// deadlock); a runtime given to it (SimScheduler, FreeRuntime) must outlive it. Mutexes and
// threads it hands out must be destroyed before it (os.hpp).
// Threading: as os.hpp, any thread the runtime knows. A seam call calls runtime.point("<call>")
// with no lock held, then runs under one state mutex; waits park through the runtime holding it
// (runtime.hpp). Errors: as Windows, per method (os.hpp): return values, per-thread last_error(),
// PSN's returned code; broken contracts (destroying a FakeOs with parked threads) assert.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>

#include "readyport/fake/fake_options.hpp"
#include "readyport/fake/inline_runtime.hpp"
#include "readyport/fake/rng.hpp"
#include "readyport/fake/runtime.hpp"
#include "readyport/os.hpp"

namespace readyport {

// The model's parts (readyport/fake/internal/, not installed), owned through pointers.
namespace fake_internal {
class FakePort;
struct FakeSocket;
class SocketTable;
}  // namespace fake_internal

// A snapshot of the fake's size, for tests (FakeOs::stats).
struct FakeStats {
  std::uint32_t sockets_open = 0;        // open SOCKET values (pending connections excluded)
  std::uint32_t ports_open = 0;          // ports created and not closed
  std::uint32_t registrations_live = 0;  // all ports; includes closed sockets' queued leftovers
  std::uint32_t packets_queued = 0;      // all ports; socket and posted packets
  std::uint32_t waiters = 0;             // threads parked in port waits or blocking socket calls
  // Since construction: REMOVE packets a closesocket dropped (remove_dropped_on_close), each a
  // REMOVE no engine will ever dequeue.
  std::uint64_t removes_dropped = 0;
};

// First completion port handle value and the step between values: never a SOCKET value (those
// are multiples of 4), never reused.
inline constexpr std::uintptr_t kFakePortFirst = 2;
inline constexpr std::uintptr_t kFakePortValueStep = 4;

class FakeOs final : public Os {
 public:
  // Owns an InlineRuntime: one thread, virtual time that jumps to each deadline.
  explicit FakeOs(FakeOptions options = {});
  // Uses `runtime`, which must outlive this FakeOs.
  FakeOs(FakeOptions options, Runtime& runtime);
  // Asserts that no thread is parked in it.
  ~FakeOs() override;
  FakeOs(const FakeOs&) = delete;
  FakeOs& operator=(const FakeOs&) = delete;

  // ---- Os: the completion port (threading, blocking and errors as documented in os.hpp) ----
  // Handles are kFakePortFirst + k * kFakePortValueStep, never reused. Fails with
  // ERROR_NOT_ENOUGH_MEMORY past options.ports_max open ports. Never blocks.
  Port create_io_completion_port(std::uint32_t concurrency) override;
  // Spec F6. ERROR_INVALID_HANDLE for a handle that is not an open port. Never blocks.
  bool close_port(Port port) override;
  // Spec A-E. Returns WSAEINVAL (nothing changed) for an A4 violation or counts above
  // options.batch_max, ERROR_INVALID_HANDLE for a bad port, ERROR_ABANDONED_WAIT_0 when the port
  // is closed during the wait. Blocks up to timeout_ms (virtual) when completion_count > 0.
  std::uint32_t process_socket_notifications(Port port, std::uint32_t registration_count,
                                             SockNotifyRegistration* registrations,
                                             std::uint32_t timeout_ms,
                                             std::uint32_t completion_count,
                                             OverlappedEntry* entries,
                                             std::uint32_t* received_out) override;
  // Spec F3. Errors (last_error): ERROR_INVALID_PARAMETER (alertable, null pointers, count 0),
  // ERROR_INVALID_HANDLE, WAIT_TIMEOUT, ERROR_ABANDONED_WAIT_0. Blocks up to timeout_ms.
  bool get_queued_completion_status_ex(Port port, OverlappedEntry* entries, std::uint32_t count,
                                       std::uint32_t* removed_out, std::uint32_t timeout_ms,
                                       bool alertable) override;
  // Spec F2. Errors: ERROR_INVALID_HANDLE; ERROR_NO_SYSTEM_RESOURCES past the fake's bound on
  // posted packets per port (fake_port.hpp). Never blocks.
  bool post_queued_completion_status(Port port, std::uint32_t bytes_transferred,
                                     std::uintptr_t completion_key,
                                     std::uintptr_t overlapped) override;

  // ---- Os: sockets. Errors through last_error(): WSAENOTSOCK for a value that is not an open
  // socket, plus each call's own codes listed below. Blocking: only accept, send, recv, recvfrom
  // and sendto on a stream socket can block, and only on a blocking socket (the default): they
  // park until the socket changes (with the inline runtime: a deadlock assertion); on a
  // non-blocking socket they fail with WSAEWOULDBLOCK. A blocking call whose socket is closed by
  // another thread fails with WSAEINTR (10004). Every other socket call never blocks. ----
  // WSAEAFNOSUPPORT, WSAEINVAL (not TCP/UDP), WSAEMFILE past options.sockets_max.
  Socket socket(int af, int type, int protocol) override;
  // WSAEINVAL (already bound), WSAEADDRNOTAVAIL (not loopback/any), WSAEADDRINUSE, WSAENOBUFS.
  int bind(Socket s, const Ipv4Address& address) override;
  // WSAEINVAL when not bound; WSAEFAULT for a null out-parameter.
  int getsockname(Socket s, Ipv4Address* address_out) override;
  // Backlog clamped to [1, options.backlog_max]. WSAEINVAL (unbound), WSAEOPNOTSUPP (UDP),
  // WSAEISCONN (connected).
  int listen(Socket s, int backlog) override;
  // WSAEINVAL (not listening), WSAEWOULDBLOCK, WSAEMFILE (the connection stays queued).
  Socket accept(Socket s, Ipv4Address* peer_out) override;
  // Instant over loopback: 0 (blocking) or WSAEWOULDBLOCK then OUT (non-blocking); refused:
  // WSAECONNREFUSED (blocking) or WSAEWOULDBLOCK then ERR and SO_ERROR (non-blocking, spec D3).
  // WSAEISCONN, WSAEINVAL (listening or failed socket), WSAEADDRNOTAVAIL, WSAEOPNOTSUPP (UDP).
  int connect(Socket s, const Ipv4Address& address) override;
  // Moves at most the peer's free receive-buffer space (a blocking socket moves everything).
  // WSAENOTCONN, WSAESHUTDOWN, WSAECONNRESET, WSAEWOULDBLOCK, WSAEOPNOTSUPP (flags != 0).
  int send(Socket s, const void* data, int length, int flags) override;
  // 0 at end of stream. WSAENOTCONN, WSAESHUTDOWN, WSAECONNRESET, WSAEWOULDBLOCK,
  // WSAEOPNOTSUPP (flags other than MSG_PEEK).
  int recv(Socket s, void* data, int length, int flags) override;
  // UDP: never blocks; dropped silently when nobody is bound to `to` or its queue is full.
  // WSAEMSGSIZE, WSAEADDRNOTAVAIL. On a stream socket: send, `to` ignored.
  int sendto(Socket s, const void* data, int length, int flags, const Ipv4Address& to) override;
  // UDP: WSAEINVAL (unbound), WSAEWOULDBLOCK, WSAEMSGSIZE (datagram truncated and consumed).
  int recvfrom(Socket s, void* data, int length, int flags, Ipv4Address* from_out) override;
  // SD_SEND is a graceful FIN (the peer sees IN|HANGUP). WSAENOTCONN, WSAEINVAL (bad `how`).
  int shutdown(Socket s, int how) override;
  // Spec E2/E5. FIN to a connected peer, or a reset with SO_LINGER {on, 0}.
  int closesocket(Socket s) override;
  int set_nonblocking(Socket s, bool nonblocking) override;
  // {enabled, 0}: closesocket resets. Any other setting: graceful (no lingering time modelled).
  int set_linger(Socket s, bool enabled, std::uint16_t timeout_s) override;
  // Returns and clears SO_ERROR. WSAEFAULT for a null out-parameter.
  int get_socket_error(Socket s, std::uint32_t* error_out) override;
  // The calling thread's last error (thread-local, as Windows; shared by every FakeOs).
  std::uint32_t last_error() override;

  // ---- Os: threads, locks, time ----
  // A FakeMutex (fake_mutex.hpp) on this FakeOs's runtime. Never fails.
  std::unique_ptr<Mutex> mutex_create() override;
  // Forwards to the runtime (InlineRuntime fails with a Status).
  Result<std::unique_ptr<Thread>> thread_start(std::string_view name,
                                               std::function<void()> body) override;
  // The runtime's virtual clock.
  std::uint64_t now_ns() override;
  // Parks until the virtual clock has advanced by duration_ms. Blocks.
  void sleep_ms(std::uint32_t duration_ms) override;
  // The runtime's logical thread (Runtime::thread_current()); for a thread the runtime did not
  // start, an id of its OS thread above 2^32. Not a scheduling point; not traced.
  std::uint64_t thread_id() override;

  // ---- Fake-only inspection for tests. Any thread; never blocks; no scheduling point. ----
  FakeStats stats() const;
  // Packets queued on `port` (0 for a handle that is not an open port).
  std::uint32_t queued_packet_count(Port port) const;
  // True while `s` is an open socket registered with a port (in any attached state).
  bool socket_registered(Socket s) const;
  // Checks every invariant of the model (sockets, registrations, packets, waiters) and asserts
  // on the first broken one. O(size of the model); tests call it after a scenario, the
  // destructor calls it once.
  void check_invariants() const;
  const FakeOptions& options() const { return options_; }
  Runtime& runtime() { return runtime_; }

 private:
  using FakePort = fake_internal::FakePort;
  using FakeSocket = fake_internal::FakeSocket;

  // Ports.
  // The start of a seam call that reads or writes the model: a scheduling point, and the step
  // touches SimObject::kFakeState.
  void enter(const char* call);
  FakePort* port_find(Port port);
  // The calling thread's associated port in this FakeOs (spec F7), or null.
  FakePort* associated_port();
  // Spec F7, the calling thread's part in its port's running threads (logical_locals.hpp), under
  // the state mutex: it calls `port` to dequeue (no longer running where it ran); it returns from
  // such a call on its own (running); it leaves its port (a thread that ends).
  void port_enter_locked(FakePort& port);
  void port_run_locked(FakePort& port);
  void port_leave_locked();
  // The calling thread, running, stops counting among its port's running threads (it leaves the
  // port or blocks); a thread waiting there may be released.
  void stop_running_locked();
  // A seam call parks the thread (not running) and wakes it (running again); for FakeMutex
  // through `hooks_` (fake_internal::BlockHooks).
  void block_begin_locked();
  void block_end_locked();
  std::uint64_t deadline_for(std::uint32_t timeout_ms);
  std::uint32_t dequeue_batch(FakePort& port, OverlappedEntry* entries, std::uint32_t count);
  std::uint32_t wait_and_dequeue(std::unique_lock<std::mutex>& lock, FakePort& port,
                                 OverlappedEntry* entries, std::uint32_t count,
                                 std::uint32_t timeout_ms, std::uint32_t* received_out,
                                 const char* call);
  std::uint32_t psn_validate(std::uint32_t registration_count,
                             const SockNotifyRegistration* registrations, std::uint32_t timeout_ms,
                             std::uint32_t completion_count, const OverlappedEntry* entries,
                             const std::uint32_t* received_out) const;

  // Invariants (fake_os_invariants.cpp), under the state mutex.
  void check_invariants_locked() const;
  void check_port(const FakePort& port) const;
  void check_socket(const FakeSocket& socket) const;

  // Sockets.
  // The socket's conditions may have changed: evaluates its registration, wakes blocked calls.
  void touch(FakeSocket& socket);
  // Parks a blocking call until `socket` changes. Returns the socket again, or null when it was
  // closed meanwhile (the caller fails with WSAEINTR).
  FakeSocket* wait_socket(std::unique_lock<std::mutex>& lock, FakeSocket& socket, const char* call);
  std::uint32_t connect_stream(FakeSocket& socket, const Ipv4Address& address);
  int send_stream(std::unique_lock<std::mutex>& lock, FakeSocket* socket, const void* data,
                  int length);
  int recv_stream(std::unique_lock<std::mutex>& lock, FakeSocket* socket, void* data, int length,
                  int flags, Ipv4Address* from_out);
  int sendto_datagram(FakeSocket& socket, const void* data, int length, const Ipv4Address& to);
  int recvfrom_datagram(std::unique_lock<std::mutex>& lock, FakeSocket* socket, void* data,
                        int length, int flags, Ipv4Address* from_out);
  void disconnect(FakeSocket& socket);
  void reset_connection(FakeSocket& socket);
  void close_listener(FakeSocket& listener);
  void wake_all(FakeSocket& socket);

  std::unique_ptr<InlineRuntime> owned_runtime_;  // set only by the one-argument constructor
  Runtime& runtime_;
  const FakeOptions options_;
  mutable std::mutex mutex_;  // the state mutex: guards everything below
  const std::unique_ptr<fake_internal::SocketTable> sockets_;
  std::map<std::uintptr_t, std::unique_ptr<FakePort>> ports_;
  std::uintptr_t next_port_value_ = kFakePortFirst;
  std::uint64_t next_registration_id_ = 1;
  std::uint64_t next_mutex_id_ = 1;    // FakeMutex ids (SimObject::kMutex)
  std::uint64_t removes_dropped_ = 0;  // FakeStats::removes_dropped
  // Tells this FakeOs's threads' port associations from another's (logical_locals.hpp); unique
  // in the process, never 0, and affects nothing else.
  const std::uint64_t instance_;
  Rng early_rng_;  // early wakes (spec A5), from SeedStream::kFake
  class Hooks;
  const std::unique_ptr<Hooks> hooks_;  // this FakeOs's BlockHooks, for its mutexes
};

}  // namespace readyport
