// readyport/os_types.hpp: the plain types and constants of the seam (handles, the socket
// notification ABI, error codes, Winsock arguments). They mirror the Windows ABI exactly (same
// sizes, offsets and values; WindowsOs checks them with static_assert against the SDK) so core/,
// fakes/ and tests build on any OS. Constants are named kPascalCase after the Windows name.
// Ownership, threading, errors: plain values; nothing here owns or blocks.
#pragma once

#include <cstddef>
#include <cstdint>

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

// ---- Error codes (DWORD / int) ------------------------------------------------------------------

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

inline constexpr int kAfInet = 2;              // AF_INET
inline constexpr int kSockStream = 1;          // SOCK_STREAM
inline constexpr int kSockDgram = 2;           // SOCK_DGRAM
inline constexpr int kIpprotoTcp = 6;          // IPPROTO_TCP
inline constexpr int kIpprotoUdp = 17;         // IPPROTO_UDP
inline constexpr int kSdReceive = 0;           // SD_RECEIVE
inline constexpr int kSdSend = 1;              // SD_SEND
inline constexpr int kSdBoth = 2;              // SD_BOTH
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

// ---- ABI mirrors --------------------------------------------------------------------------------

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
  std::uintptr_t completion_key = 0;    // lpCompletionKey
  std::uintptr_t overlapped = 0;        // lpOverlapped, as an integer
  std::uintptr_t internal = 0;          // Internal
  std::uint32_t bytes_transferred = 0;  // dwNumberOfBytesTransferred
};
static_assert(sizeof(void*) != 8 || sizeof(OverlappedEntry) == 32);
static_assert(sizeof(void*) != 4 || sizeof(OverlappedEntry) == 16);

// Returns a stable name for an error code that this header declares ("WSAEWOULDBLOCK",
// "WAIT_TIMEOUT", ...), or "error" for any other value. Never null. Used by traces and messages.
const char* os_error_name(std::uint32_t code);

}  // namespace readyport
