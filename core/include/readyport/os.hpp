// readyport/os.hpp: the seam. Everything readyport does that can block, fail, interleave with
// another thread or observe time goes through `readyport::Os`.
//
// Implementations: `WindowsOs` (core/, the real calls, Windows only), `FakeOs` (fakes/, a
// deterministic model of spec/psn.md), and decorators over any Os (`RecordingOs`, `FaultyOs`).
// Production code passes a `WindowsOs`; tests pass a fake. The engine never calls the OS directly.
//
//   readyport::FakeOs os(readyport::FakeOptions{});
//   readyport::Port port = os.create_io_completion_port(0);
//   readyport::SockNotifyRegistration reg{sock, key, kSockNotifyRegisterEventIn,
//       kSockNotifyOpEnable, kSockNotifyTriggerOneshot | kSockNotifyTriggerLevel, 0};
//   std::uint32_t err = os.process_socket_notifications(port, 1, &reg, 0, 0, nullptr, nullptr);
//
// The types below are the project's own plain structs and integers that mirror the Windows ABI
// (same sizes, offsets and constant values: WindowsOs checks them with static_assert against the
// SDK), so core/, fakes/ and tests build on any OS. Constants are named kPascalCase after the
// Windows name they mirror (the Windows names themselves are macros in the Winsock header).
//
// Conventions for every method, unless its comment says otherwise:
// - Threading: any thread may call any method at any time (spec A9); implementations are
//   internally synchronised.
// - Errors: the method returns what the Windows function returns. Calls whose Windows original
//   reports through GetLastError/WSAGetLastError set the calling thread's last error, read by
//   `last_error()`. ProcessSocketNotifications returns its error code directly (spec A1-A3).
// - Blocking: only methods whose comment says "blocks" may wait; in simulation those are the
//   points where a thread parks.
// - Re-entrancy: no method calls back into the caller, except `thread_start`, which runs `body`
//   on the new thread.
// - Lifetime: an Os outlives every object it returned (Mutex, Thread) and every port and socket
//   opened through it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "readyport/status.hpp"

namespace readyport {

// ---- Handles ---------------------------------------------------------------------------------

// SOCKET (UINT_PTR). kInvalidSocket is INVALID_SOCKET.
using Socket = std::uintptr_t;
inline constexpr Socket kInvalidSocket = ~Socket{0};

// A completion port HANDLE, as an integer. kInvalidPort is NULL (CreateIoCompletionPort's failure).
struct Port {
  std::uintptr_t value = 0;
  friend bool operator==(Port a, Port b) { return a.value == b.value; }
};
inline constexpr Port kInvalidPort{0};

// SOCKET_ERROR, the failure return of the int-returning socket calls.
inline constexpr int kSocketError = -1;

// ---- Socket state notifications (spec "Constants and layout"; exact values) --------------------

// eventFilter bits (UINT16).
inline constexpr std::uint16_t kSockNotifyRegisterEventNone = 0x00;
inline constexpr std::uint16_t kSockNotifyRegisterEventIn = 0x01;
inline constexpr std::uint16_t kSockNotifyRegisterEventOut = 0x02;
inline constexpr std::uint16_t kSockNotifyRegisterEventHangup = 0x04;
inline constexpr std::uint16_t kSockNotifyRegisterEventsAll = 0x07;
// Event mask bits, delivered in OverlappedEntry::bytes_transferred.
inline constexpr std::uint32_t kSockNotifyEventIn = 0x01;
inline constexpr std::uint32_t kSockNotifyEventOut = 0x02;
inline constexpr std::uint32_t kSockNotifyEventHangup = 0x04;
inline constexpr std::uint32_t kSockNotifyEventErr = 0x40;
inline constexpr std::uint32_t kSockNotifyEventRemove = 0x80;
inline constexpr std::uint32_t kSockNotifyEventsAll = 0xC7;
// operation (UINT8): one value, not a mask.
inline constexpr std::uint8_t kSockNotifyOpNone = 0;
inline constexpr std::uint8_t kSockNotifyOpEnable = 1;
inline constexpr std::uint8_t kSockNotifyOpDisable = 2;
inline constexpr std::uint8_t kSockNotifyOpRemove = 4;
// triggerFlags (UINT8).
inline constexpr std::uint8_t kSockNotifyTriggerOneshot = 0x01;
inline constexpr std::uint8_t kSockNotifyTriggerPersistent = 0x02;
inline constexpr std::uint8_t kSockNotifyTriggerLevel = 0x04;
inline constexpr std::uint8_t kSockNotifyTriggerEdge = 0x08;

// ---- Error codes (DWORD / int) -------------------------------------------------------------------

inline constexpr std::uint32_t kErrorSuccess = 0;
inline constexpr std::uint32_t kErrorInvalidHandle = 6;
inline constexpr std::uint32_t kErrorNotEnoughMemory = 8;
inline constexpr std::uint32_t kErrorInvalidParameter = 87;
inline constexpr std::uint32_t kWaitIoCompletion = 192;
inline constexpr std::uint32_t kWaitTimeout = 258;
inline constexpr std::uint32_t kErrorAbandonedWait0 = 735;
inline constexpr std::uint32_t kErrorNoSystemResources = 1450;
inline constexpr std::uint32_t kErrorTimeout = 1460;
inline constexpr std::uint32_t kInfinite = 0xFFFFFFFF;

inline constexpr std::uint32_t kWsaEintr = 10004;
inline constexpr std::uint32_t kWsaEfault = 10014;
inline constexpr std::uint32_t kWsaEinval = 10022;
inline constexpr std::uint32_t kWsaEmfile = 10024;
inline constexpr std::uint32_t kWsaEwouldblock = 10035;
inline constexpr std::uint32_t kWsaEinprogress = 10036;
inline constexpr std::uint32_t kWsaEalready = 10037;
inline constexpr std::uint32_t kWsaEnotsock = 10038;
inline constexpr std::uint32_t kWsaEmsgsize = 10040;
inline constexpr std::uint32_t kWsaEopnotsupp = 10045;
inline constexpr std::uint32_t kWsaEafnosupport = 10047;
inline constexpr std::uint32_t kWsaEaddrinuse = 10048;
inline constexpr std::uint32_t kWsaEaddrnotavail = 10049;
inline constexpr std::uint32_t kWsaEconnaborted = 10053;
inline constexpr std::uint32_t kWsaEconnreset = 10054;
inline constexpr std::uint32_t kWsaEnobufs = 10055;
inline constexpr std::uint32_t kWsaEisconn = 10056;
inline constexpr std::uint32_t kWsaEnotconn = 10057;
inline constexpr std::uint32_t kWsaEshutdown = 10058;
inline constexpr std::uint32_t kWsaEconnrefused = 10061;

// ---- Socket call arguments (Winsock values) -----------------------------------------------------

inline constexpr int kAfInet = 2;       // AF_INET
inline constexpr int kSockStream = 1;   // SOCK_STREAM
inline constexpr int kSockDgram = 2;    // SOCK_DGRAM
inline constexpr int kIpprotoTcp = 6;   // IPPROTO_TCP
inline constexpr int kIpprotoUdp = 17;  // IPPROTO_UDP
inline constexpr int kSdReceive = 0;    // SD_RECEIVE
inline constexpr int kSdSend = 1;       // SD_SEND
inline constexpr int kSdBoth = 2;       // SD_BOTH
inline constexpr int kSomaxconn = 0x7fffffff;  // SOMAXCONN

// An IPv4 endpoint in host byte order (the backend converts to sockaddr_in).
struct Ipv4Address {
  std::uint32_t host = 0;  // 0x7F000001 is 127.0.0.1
  std::uint16_t port = 0;  // 0 asks bind for an ephemeral port
  friend bool operator==(const Ipv4Address& a, const Ipv4Address& b) {
    return a.host == b.host && a.port == b.port;
  }
};
inline constexpr std::uint32_t kLoopbackHost = 0x7F000001;

// ---- ABI mirrors ---------------------------------------------------------------------------------

// SOCK_NOTIFY_REGISTRATION: 24 bytes on x64, 16 on x86 (spec G3). completion_key mirrors PVOID.
struct SockNotifyRegistration {
  Socket socket = kInvalidSocket;
  std::uintptr_t completion_key = 0;
  std::uint16_t event_filter = 0;
  std::uint8_t operation = 0;
  std::uint8_t trigger_flags = 0;
  std::uint32_t registration_result = 0;  // written by the call (spec A8)
};
static_assert(sizeof(void*) != 8 || sizeof(SockNotifyRegistration) == 24);
static_assert(sizeof(void*) != 4 || sizeof(SockNotifyRegistration) == 16);
static_assert(offsetof(SockNotifyRegistration, event_filter) == 2 * sizeof(void*));

// OVERLAPPED_ENTRY. For socket packets the key is the registration's key and bytes_transferred
// the event mask; overlapped and internal are reserved and must not be read (spec, layout).
struct OverlappedEntry {
  std::uintptr_t completion_key = 0;     // lpCompletionKey
  std::uintptr_t overlapped = 0;         // lpOverlapped, as an integer
  std::uintptr_t internal = 0;           // Internal
  std::uint32_t bytes_transferred = 0;   // dwNumberOfBytesTransferred
};
static_assert(sizeof(void*) != 8 || sizeof(OverlappedEntry) == 32);
static_assert(sizeof(void*) != 4 || sizeof(OverlappedEntry) == 16);

// ---- Synchronisation objects handed out by an Os ---------------------------------------------

// A non-recursive mutual-exclusion lock. In simulation lock() is a scheduling point and a
// contended lock parks the caller. Ownership: the caller of mutex_create owns it; destroy it
// unlocked, before its Os. Threading: any thread; unlock() only by the holder.
class Mutex {
 public:
  virtual ~Mutex() = default;
  virtual void lock() = 0;      // blocks until acquired
  virtual bool try_lock() = 0;  // never blocks
  virtual void unlock() = 0;
};

// A started thread. Ownership: the caller of thread_start; join() it exactly once before
// destroying it (destroying an unjoined Thread is a broken contract and asserts).
class Thread {
 public:
  virtual ~Thread() = default;
  virtual void join() = 0;  // blocks until the body returned
};

// ---- The seam --------------------------------------------------------------------------------

class Os {
 public:
  virtual ~Os() = default;

  // -- The completion port ---------------------------------------------------------------------

  // CreateIoCompletionPort(INVALID_HANDLE_VALUE, NULL, 0, concurrency) (spec F5): a new port.
  // Returns kInvalidPort on failure, with last_error() set. Never blocks.
  virtual Port create_io_completion_port(std::uint32_t concurrency) = 0;

  // CloseHandle(port). Drops the port's registrations without REMOVE packets and releases its
  // waiters with kErrorAbandonedWait0 (spec F6). Returns false with last_error() on a bad handle.
  virtual bool close_port(Port port) = 0;

  // ProcessSocketNotifications (spec A-D). Applies `registrations` in order (writing each
  // registration_result), then dequeues up to `completion_count` entries into `entries`, waiting
  // up to `timeout_ms` (blocks; kInfinite never times out). Returns the error code itself:
  // kErrorSuccess, kWaitTimeout (registrations were applied, nothing dequeued), or another value
  // (the whole call failed and nothing changed, spec A3). `received_out` may be null only when
  // completion_count is 0 (spec A4).
  virtual std::uint32_t process_socket_notifications(Port port, std::uint32_t registration_count,
                                                     SockNotifyRegistration* registrations,
                                                     std::uint32_t timeout_ms,
                                                     std::uint32_t completion_count,
                                                     OverlappedEntry* entries,
                                                     std::uint32_t* received_out) = 0;

  // GetQueuedCompletionStatusEx (spec F3). Blocks up to timeout_ms. Returns true with at least
  // one entry in *removed_out; false with last_error() kWaitTimeout on timeout or
  // kErrorAbandonedWait0 when the port is closed during the wait. `alertable` must be false
  // (readyport queues no APCs); true fails with kErrorInvalidParameter.
  virtual bool get_queued_completion_status_ex(Port port, OverlappedEntry* entries,
                                               std::uint32_t count, std::uint32_t* removed_out,
                                               std::uint32_t timeout_ms, bool alertable) = 0;

  // PostQueuedCompletionStatus (spec F2): queues a packet carrying exactly these three values.
  // Wakes the most recent waiter (spec F1). Returns false with last_error() on failure.
  virtual bool post_queued_completion_status(Port port, std::uint32_t bytes_transferred,
                                             std::uintptr_t completion_key,
                                             std::uintptr_t overlapped) = 0;

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
  virtual int sendto(Socket s, const void* data, int length, int flags,
                     const Ipv4Address& to) = 0;
  virtual int recvfrom(Socket s, void* data, int length, int flags, Ipv4Address* from_out) = 0;
  virtual int shutdown(Socket s, int how) = 0;
  // closesocket: deregisters the socket from its port WITHOUT a REMOVE packet (spec E2); the
  // value may be reused at once (spec E5).
  virtual int closesocket(Socket s) = 0;
  // ioctlsocket(FIONBIO).
  virtual int set_nonblocking(Socket s, bool nonblocking) = 0;
  // setsockopt(SOL_SOCKET, SO_LINGER): {enabled, 0} makes closesocket an abortive reset.
  virtual int set_linger(Socket s, bool enabled, std::uint16_t timeout_s) = 0;
  // getsockopt(SOL_SOCKET, SO_ERROR): the pending error (for example a failed connect), cleared.
  virtual int get_socket_error(Socket s, std::uint32_t* error_out) = 0;
  // WSAGetLastError / GetLastError of the calling thread.
  virtual std::uint32_t last_error() = 0;

  // -- Threads, locks, time ----------------------------------------------------------------------

  // A new Mutex. Never fails (the fake and Windows allocate only memory).
  virtual std::unique_ptr<Mutex> mutex_create() = 0;
  // Starts `body` on a new thread named `name` (names appear in traces). The Os must outlive the
  // thread. Fails with a Status when the implementation cannot start threads.
  virtual Result<std::unique_ptr<Thread>> thread_start(std::string_view name,
                                                       std::function<void()> body) = 0;
  // Monotonic time in nanoseconds since an arbitrary origin (virtual time in the fake).
  virtual std::uint64_t now_ns() = 0;
  // Sleep(duration_ms): blocks; virtual time in the fake.
  virtual void sleep_ms(std::uint32_t duration_ms) = 0;
};

// Returns a stable name for an error code that this header declares ("WSAEWOULDBLOCK",
// "WAIT_TIMEOUT", ...), or "error" for any other value. Never null. Used by traces and messages.
const char* os_error_name(std::uint32_t code);

}  // namespace readyport
