// windows_os.cpp: WindowsOs, the real calls behind the Os seam.
//
// The only file of the project that includes <winsock2.h>. It also proves, at compile time, that
// the project's mirrored types and constants (os.hpp) have the SDK's sizes, offsets and values:
// against the SDK's own declarations where the SDK has them (Windows SDK 10.0.20348 and later,
// newer mingw-w64), and against the documented layout where it does not (mingw-w64 10 declares
// nothing of socket state notifications). See windows_os.hpp for the contract.

#include "readyport/windows_os.hpp"

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
// winsock2.h first: it must precede windows.h (which would otherwise bring in the old winsock.h
// when WIN32_LEAN_AND_MEAN is not defined), and clang-format must not sort them.
// clang-format off
#include <winsock2.h>
#include <windows.h>
// clang-format on

#include <atomic>
#include <cstddef>
#include <exception>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>

#include "readyport/assert.hpp"

namespace readyport {
namespace {

// ---- ABI checks ----------------------------------------------------------------------------

// Compares a project constant with an SDK macro of whatever integer type the SDK gave it.
template <typename A, typename B>
constexpr bool same_value(A a, B b) {
  static_assert(std::is_integral_v<A> || std::is_enum_v<A>);
  static_assert(std::is_integral_v<B> || std::is_enum_v<B>);
  return static_cast<unsigned long long>(a) == static_cast<unsigned long long>(b);
}

// Handles and socket call values.
static_assert(sizeof(Socket) == sizeof(SOCKET));
static_assert(same_value(kInvalidSocket, INVALID_SOCKET));
static_assert(kSocketError == SOCKET_ERROR);
static_assert(sizeof(Port::value) == sizeof(HANDLE));
static_assert(kAfInet == AF_INET);
static_assert(kSockStream == SOCK_STREAM);
static_assert(kSockDgram == SOCK_DGRAM);
static_assert(kIpprotoTcp == IPPROTO_TCP);
static_assert(kIpprotoUdp == IPPROTO_UDP);
static_assert(kSdReceive == SD_RECEIVE);
static_assert(kSdSend == SD_SEND);
static_assert(kSdBoth == SD_BOTH);
static_assert(kSomaxconn == SOMAXCONN);

// Error codes.
static_assert(same_value(kErrorSuccess, ERROR_SUCCESS));
static_assert(same_value(kErrorInvalidHandle, ERROR_INVALID_HANDLE));
static_assert(same_value(kErrorNotEnoughMemory, ERROR_NOT_ENOUGH_MEMORY));
static_assert(same_value(kErrorInvalidParameter, ERROR_INVALID_PARAMETER));
static_assert(same_value(kErrorProcNotFound, ERROR_PROC_NOT_FOUND));
static_assert(same_value(kWaitIoCompletion, WAIT_IO_COMPLETION));
static_assert(same_value(kWaitTimeout, WAIT_TIMEOUT));
static_assert(same_value(kErrorAbandonedWait0, ERROR_ABANDONED_WAIT_0));
static_assert(same_value(kErrorNoSystemResources, ERROR_NO_SYSTEM_RESOURCES));
static_assert(same_value(kErrorTimeout, ERROR_TIMEOUT));
static_assert(same_value(kInfinite, INFINITE));
static_assert(same_value(kWsaEintr, WSAEINTR));
static_assert(same_value(kWsaEfault, WSAEFAULT));
static_assert(same_value(kWsaEinval, WSAEINVAL));
static_assert(same_value(kWsaEmfile, WSAEMFILE));
static_assert(same_value(kWsaEwouldblock, WSAEWOULDBLOCK));
static_assert(same_value(kWsaEinprogress, WSAEINPROGRESS));
static_assert(same_value(kWsaEalready, WSAEALREADY));
static_assert(same_value(kWsaEnotsock, WSAENOTSOCK));
static_assert(same_value(kWsaEmsgsize, WSAEMSGSIZE));
static_assert(same_value(kWsaEopnotsupp, WSAEOPNOTSUPP));
static_assert(same_value(kWsaEafnosupport, WSAEAFNOSUPPORT));
static_assert(same_value(kWsaEaddrinuse, WSAEADDRINUSE));
static_assert(same_value(kWsaEaddrnotavail, WSAEADDRNOTAVAIL));
static_assert(same_value(kWsaEconnaborted, WSAECONNABORTED));
static_assert(same_value(kWsaEconnreset, WSAECONNRESET));
static_assert(same_value(kWsaEnobufs, WSAENOBUFS));
static_assert(same_value(kWsaEisconn, WSAEISCONN));
static_assert(same_value(kWsaEnotconn, WSAENOTCONN));
static_assert(same_value(kWsaEshutdown, WSAESHUTDOWN));
static_assert(same_value(kWsaEconnrefused, WSAECONNREFUSED));

// OVERLAPPED_ENTRY: every SDK declares it (winbase.h / minwinbase.h).
static_assert(sizeof(OverlappedEntry) == sizeof(OVERLAPPED_ENTRY));
static_assert(alignof(OverlappedEntry) == alignof(OVERLAPPED_ENTRY));
static_assert(offsetof(OverlappedEntry, completion_key) ==
              offsetof(OVERLAPPED_ENTRY, lpCompletionKey));
static_assert(offsetof(OverlappedEntry, overlapped) == offsetof(OVERLAPPED_ENTRY, lpOverlapped));
static_assert(offsetof(OverlappedEntry, internal) == offsetof(OVERLAPPED_ENTRY, Internal));
static_assert(offsetof(OverlappedEntry, bytes_transferred) ==
              offsetof(OVERLAPPED_ENTRY, dwNumberOfBytesTransferred));
static_assert(sizeof(OverlappedEntry::bytes_transferred) ==
              sizeof(OVERLAPPED_ENTRY::dwNumberOfBytesTransferred));

// SOCK_NOTIFY_REGISTRATION, the documented layout (spec "Constants and layout", G3): pointer-sized
// socket and key, then UINT16 eventFilter, UINT8 operation, UINT8 triggerFlags, DWORD result.
// 24 bytes on x64, 16 on x86. Holds whether or not the SDK declares the struct.
constexpr std::size_t kPointerSize = sizeof(void*);
static_assert(sizeof(SockNotifyRegistration) == (kPointerSize == 8 ? 24 : 16));
static_assert(offsetof(SockNotifyRegistration, socket) == 0);
static_assert(offsetof(SockNotifyRegistration, completion_key) == kPointerSize);
static_assert(offsetof(SockNotifyRegistration, event_filter) == 2 * kPointerSize);
static_assert(offsetof(SockNotifyRegistration, operation) == 2 * kPointerSize + 2);
static_assert(offsetof(SockNotifyRegistration, trigger_flags) == 2 * kPointerSize + 3);
static_assert(offsetof(SockNotifyRegistration, registration_result) == 2 * kPointerSize + 4);

#if defined(SOCK_NOTIFY_REGISTER_EVENT_IN)
// The SDK declares socket state notifications: the mirror must match it exactly.
static_assert(sizeof(SockNotifyRegistration) == sizeof(SOCK_NOTIFY_REGISTRATION));
static_assert(alignof(SockNotifyRegistration) == alignof(SOCK_NOTIFY_REGISTRATION));
static_assert(offsetof(SockNotifyRegistration, socket) ==
              offsetof(SOCK_NOTIFY_REGISTRATION, socket));
static_assert(offsetof(SockNotifyRegistration, completion_key) ==
              offsetof(SOCK_NOTIFY_REGISTRATION, completionKey));
static_assert(offsetof(SockNotifyRegistration, event_filter) ==
              offsetof(SOCK_NOTIFY_REGISTRATION, eventFilter));
static_assert(offsetof(SockNotifyRegistration, operation) ==
              offsetof(SOCK_NOTIFY_REGISTRATION, operation));
static_assert(offsetof(SockNotifyRegistration, trigger_flags) ==
              offsetof(SOCK_NOTIFY_REGISTRATION, triggerFlags));
static_assert(offsetof(SockNotifyRegistration, registration_result) ==
              offsetof(SOCK_NOTIFY_REGISTRATION, registrationResult));
static_assert(sizeof(SockNotifyRegistration::event_filter) ==
              sizeof(SOCK_NOTIFY_REGISTRATION::eventFilter));
static_assert(sizeof(SockNotifyRegistration::operation) ==
              sizeof(SOCK_NOTIFY_REGISTRATION::operation));
static_assert(sizeof(SockNotifyRegistration::trigger_flags) ==
              sizeof(SOCK_NOTIFY_REGISTRATION::triggerFlags));
static_assert(sizeof(SockNotifyRegistration::registration_result) ==
              sizeof(SOCK_NOTIFY_REGISTRATION::registrationResult));
static_assert(same_value(kSockNotifyRegisterEventNone, SOCK_NOTIFY_REGISTER_EVENT_NONE));
static_assert(same_value(kSockNotifyRegisterEventIn, SOCK_NOTIFY_REGISTER_EVENT_IN));
static_assert(same_value(kSockNotifyRegisterEventOut, SOCK_NOTIFY_REGISTER_EVENT_OUT));
static_assert(same_value(kSockNotifyRegisterEventHangup, SOCK_NOTIFY_REGISTER_EVENT_HANGUP));
static_assert(same_value(kSockNotifyRegisterEventsAll, SOCK_NOTIFY_REGISTER_EVENTS_ALL));
static_assert(same_value(kSockNotifyEventIn, SOCK_NOTIFY_EVENT_IN));
static_assert(same_value(kSockNotifyEventOut, SOCK_NOTIFY_EVENT_OUT));
static_assert(same_value(kSockNotifyEventHangup, SOCK_NOTIFY_EVENT_HANGUP));
static_assert(same_value(kSockNotifyEventErr, SOCK_NOTIFY_EVENT_ERR));
static_assert(same_value(kSockNotifyEventRemove, SOCK_NOTIFY_EVENT_REMOVE));
static_assert(same_value(kSockNotifyEventsAll, SOCK_NOTIFY_EVENTS_ALL));
static_assert(same_value(kSockNotifyOpNone, SOCK_NOTIFY_OP_NONE));
static_assert(same_value(kSockNotifyOpEnable, SOCK_NOTIFY_OP_ENABLE));
static_assert(same_value(kSockNotifyOpDisable, SOCK_NOTIFY_OP_DISABLE));
static_assert(same_value(kSockNotifyOpRemove, SOCK_NOTIFY_OP_REMOVE));
static_assert(same_value(kSockNotifyTriggerOneshot, SOCK_NOTIFY_TRIGGER_ONESHOT));
static_assert(same_value(kSockNotifyTriggerPersistent, SOCK_NOTIFY_TRIGGER_PERSISTENT));
static_assert(same_value(kSockNotifyTriggerLevel, SOCK_NOTIFY_TRIGGER_LEVEL));
static_assert(same_value(kSockNotifyTriggerEdge, SOCK_NOTIFY_TRIGGER_EDGE));
#else
// The SDK declares none of it (mingw-w64 10, Windows SDKs before 10.0.20348): the project's own
// declaration is os.hpp's SockNotifyRegistration and the constants there, checked above against
// the documented layout; the function type is declared below.
#endif

// ProcessSocketNotifications, declared by the project in every build (the SDK's prototype, where
// it exists, is an import this binary must not take: spec G2). The registration and entry
// pointers are the project's mirrors, layout-identical to SOCK_NOTIFY_REGISTRATION and
// OVERLAPPED_ENTRY (checked above). WSAAPI is __stdcall on x86, which matters (spec G3).
using ProcessSocketNotificationsFn = DWORD(WSAAPI*)(HANDLE completion_port,
                                                    UINT32 registration_count,
                                                    SockNotifyRegistration* registrations,
                                                    UINT32 timeout_ms, ULONG completion_count,
                                                    OverlappedEntry* entries, UINT32* received_out);
static_assert(std::is_same_v<UINT32, std::uint32_t>);

// RtlGetVersion (ntdll), looked up at run time like everything the SDKs may not declare.
using RtlGetVersionFn = LONG(WINAPI*)(OSVERSIONINFOW* version_out);
// SetThreadDescription (kernel32, Windows 10 1607 and later).
using SetThreadDescriptionFn = HRESULT(WINAPI*)(HANDLE thread, PCWSTR description);

// GetProcAddress into a neutral function pointer. Going through void (*)() keeps GCC's
// -Wcast-function-type quiet: that type is the documented "matches anything" case.
using RawProc = void (*)();
RawProc find_export(const wchar_t* module_name, const char* export_name) {
  HMODULE module = ::GetModuleHandleW(module_name);
  if (module == nullptr) {
    return nullptr;
  }
  return reinterpret_cast<RawProc>(::GetProcAddress(module, export_name));
}

template <typename Fn>
Fn as_function(RawProc proc) {
  return reinterpret_cast<Fn>(proc);
}

HANDLE port_handle(Port port) { return reinterpret_cast<HANDLE>(port.value); }

sockaddr_in to_sockaddr(const Ipv4Address& address) {
  sockaddr_in native{};
  native.sin_family = AF_INET;
  native.sin_port = ::htons(address.port);
  native.sin_addr.s_addr = ::htonl(address.host);
  return native;
}

Ipv4Address from_sockaddr(const sockaddr_in& native) {
  return Ipv4Address{::ntohl(native.sin_addr.s_addr), ::ntohs(native.sin_port)};
}

// The Status create() returns where ProcessSocketNotifications is missing (spec G1, G2).
Status missing_psn_status(const char* export_name, std::uint32_t os_error) {
  std::string message = "ws2_32.dll has no export '";
  message += export_name;
  message +=
      "': readyport needs ProcessSocketNotifications, which exists from Windows 10 build 20348 on "
      "(Windows Server 2022, Windows 11); this system reports build ";
  message += std::to_string(WindowsOs::windows_build_number());
  if (WindowsOs::running_under_wine()) {
    message += " (Wine, which does not implement it)";
  }
  return Status(StatusCode::kUnavailable, std::move(message), os_error);
}

// ---- Mutex and Thread ----------------------------------------------------------------------

// An SRWLOCK plus the id of the holding thread, kept only to assert the contract (unlock by the
// holder, no recursive lock, destroyed unlocked). SRW locks need no cleanup.
class SrwMutex final : public Mutex {
 public:
  SrwMutex() = default;
  SrwMutex(const SrwMutex&) = delete;
  SrwMutex& operator=(const SrwMutex&) = delete;
  ~SrwMutex() override { READYPORT_ASSERT(owner_.load(std::memory_order_relaxed) == 0); }

  void lock() override {
    const DWORD self = ::GetCurrentThreadId();
    READYPORT_ASSERT(owner_.load(std::memory_order_relaxed) != self);  // would deadlock
    ::AcquireSRWLockExclusive(&lock_);
    owner_.store(self, std::memory_order_relaxed);
  }
  bool try_lock() override {
    if (::TryAcquireSRWLockExclusive(&lock_) == 0) {
      return false;
    }
    owner_.store(::GetCurrentThreadId(), std::memory_order_relaxed);
    return true;
  }
  void unlock() override {
    READYPORT_ASSERT(owner_.load(std::memory_order_relaxed) == ::GetCurrentThreadId());
    owner_.store(0, std::memory_order_relaxed);
    ::ReleaseSRWLockExclusive(&lock_);
  }

 private:
  SRWLOCK lock_ = SRWLOCK_INIT;
  std::atomic<DWORD> owner_{0};  // 0 is never a thread id
};

class StdThread final : public Thread {
 public:
  explicit StdThread(std::thread thread) : thread_(std::move(thread)) {}
  StdThread(const StdThread&) = delete;
  StdThread& operator=(const StdThread&) = delete;
  ~StdThread() override { READYPORT_ASSERT(joined_); }

  void join() override {
    READYPORT_ASSERT(!joined_);
    READYPORT_ASSERT(thread_.get_id() != std::this_thread::get_id());  // joining itself
    thread_.join();
    joined_ = true;
  }

 private:
  std::thread thread_;
  bool joined_ = false;
};

// Names the calling thread where the system can (a debugging aid; failure changes nothing).
void name_current_thread(const std::wstring& name) {
  auto set_description =
      as_function<SetThreadDescriptionFn>(find_export(L"kernel32.dll", "SetThreadDescription"));
  if (set_description != nullptr) {
    (void)set_description(::GetCurrentThread(), name.c_str());
  }
}

}  // namespace

// ---- Construction ------------------------------------------------------------------------------

Result<std::unique_ptr<WindowsOs>> WindowsOs::create() { return create(WindowsOsOptions{}); }

Result<std::unique_ptr<WindowsOs>> WindowsOs::create(const WindowsOsOptions& options) {
  READYPORT_ASSERT(options.psn_export_name != nullptr);
  WSADATA wsa_data{};
  const int startup_error = ::WSAStartup(MAKEWORD(2, 2), &wsa_data);
  if (startup_error != 0) {
    return Status(StatusCode::kOsError, "WSAStartup(2.2) failed",
                  static_cast<std::uint32_t>(startup_error));
  }
  // ws2_32.dll is loaded: the binary imports it and WSAStartup just succeeded.
  const RawProc psn = find_export(L"ws2_32.dll", options.psn_export_name);
  if (psn == nullptr && options.require_process_socket_notifications) {
    const auto lookup_error = static_cast<std::uint32_t>(::GetLastError());
    ::WSACleanup();
    return missing_psn_status(options.psn_export_name,
                              lookup_error != 0 ? lookup_error : kErrorProcNotFound);
  }
  LARGE_INTEGER frequency{};
  const BOOL have_frequency = ::QueryPerformanceFrequency(&frequency);
  READYPORT_ASSERT(have_frequency != 0 && frequency.QuadPart > 0);  // never fails since XP
  return std::unique_ptr<WindowsOs>(
      new WindowsOs(psn, static_cast<std::uint64_t>(frequency.QuadPart)));
}

WindowsOs::WindowsOs(RawProc psn, std::uint64_t counter_frequency)
    : psn_(psn), counter_frequency_(counter_frequency) {}

WindowsOs::~WindowsOs() { ::WSACleanup(); }

std::uint32_t WindowsOs::windows_build_number() {
  auto rtl_get_version = as_function<RtlGetVersionFn>(find_export(L"ntdll.dll", "RtlGetVersion"));
  if (rtl_get_version == nullptr) {
    return 0;
  }
  OSVERSIONINFOW version{};
  version.dwOSVersionInfoSize = static_cast<DWORD>(sizeof(version));
  if (rtl_get_version(&version) != 0) {
    return 0;  // not STATUS_SUCCESS
  }
  return static_cast<std::uint32_t>(version.dwBuildNumber);
}

bool WindowsOs::abi_checked_against_sdk() {
#if defined(SOCK_NOTIFY_REGISTER_EVENT_IN)
  return true;
#else
  return false;
#endif
}

bool WindowsOs::running_under_wine() {
  return find_export(L"ntdll.dll", "wine_get_version") != nullptr;
}

// ---- The completion port ---------------------------------------------------------------------

Port WindowsOs::create_io_completion_port(std::uint32_t concurrency) {
  HANDLE port = ::CreateIoCompletionPort(INVALID_HANDLE_VALUE, nullptr, 0, concurrency);
  return Port{reinterpret_cast<std::uintptr_t>(port)};  // NULL on failure: kInvalidPort
}

bool WindowsOs::close_port(Port port) { return ::CloseHandle(port_handle(port)) != 0; }

std::uint32_t WindowsOs::process_socket_notifications(Port port, std::uint32_t registration_count,
                                                      SockNotifyRegistration* registrations,
                                                      std::uint32_t timeout_ms,
                                                      std::uint32_t completion_count,
                                                      OverlappedEntry* entries,
                                                      std::uint32_t* received_out) {
  // Built without the function (see WindowsOsOptions): the whole call fails, nothing changed.
  if (psn_ == nullptr) {
    return kErrorProcNotFound;
  }
  auto psn = as_function<ProcessSocketNotificationsFn>(psn_);
  // The return value is the error code itself (spec A1-A3); passed through unchanged.
  return static_cast<std::uint32_t>(psn(port_handle(port), registration_count, registrations,
                                        timeout_ms, completion_count, entries, received_out));
}

bool WindowsOs::get_queued_completion_status_ex(Port port, OverlappedEntry* entries,
                                                std::uint32_t count, std::uint32_t* removed_out,
                                                std::uint32_t timeout_ms, bool alertable) {
  // readyport queues no APCs, so an alertable wait is a misuse the seam rejects (os.hpp).
  if (alertable) {
    ::SetLastError(ERROR_INVALID_PARAMETER);
    return false;
  }
  ULONG removed = 0;
  const BOOL dequeued =
      ::GetQueuedCompletionStatusEx(port_handle(port), reinterpret_cast<OVERLAPPED_ENTRY*>(entries),
                                    count, &removed, timeout_ms, FALSE);
  if (removed_out != nullptr) {
    *removed_out = dequeued != 0 ? static_cast<std::uint32_t>(removed) : 0;
  }
  return dequeued != 0;
}

bool WindowsOs::post_queued_completion_status(Port port, std::uint32_t bytes_transferred,
                                              std::uintptr_t completion_key,
                                              std::uintptr_t overlapped) {
  return ::PostQueuedCompletionStatus(port_handle(port), bytes_transferred, completion_key,
                                      reinterpret_cast<OVERLAPPED*>(overlapped)) != 0;
}

// ---- Sockets -------------------------------------------------------------------------------

Socket WindowsOs::socket(int af, int type, int protocol) {
  // socket() makes overlapped sockets, which is what socket state notifications need.
  return static_cast<Socket>(::socket(af, type, protocol));
}

int WindowsOs::bind(Socket s, const Ipv4Address& address) {
  const sockaddr_in native = to_sockaddr(address);
  return ::bind(static_cast<SOCKET>(s), reinterpret_cast<const sockaddr*>(&native),
                static_cast<int>(sizeof(native)));
}

int WindowsOs::getsockname(Socket s, Ipv4Address* address_out) {
  if (address_out == nullptr) {
    ::WSASetLastError(WSAEFAULT);
    return SOCKET_ERROR;
  }
  sockaddr_in native{};
  int length = static_cast<int>(static_cast<int>(sizeof(native)));
  if (::getsockname(static_cast<SOCKET>(s), reinterpret_cast<sockaddr*>(&native), &length) != 0) {
    return SOCKET_ERROR;
  }
  if (native.sin_family != AF_INET) {  // readyport creates IPv4 sockets only
    ::WSASetLastError(WSAEAFNOSUPPORT);
    return SOCKET_ERROR;
  }
  *address_out = from_sockaddr(native);
  return 0;
}

int WindowsOs::listen(Socket s, int backlog) { return ::listen(static_cast<SOCKET>(s), backlog); }

Socket WindowsOs::accept(Socket s, Ipv4Address* peer_out) {
  sockaddr_in native{};
  int length = static_cast<int>(static_cast<int>(sizeof(native)));
  const SOCKET accepted = ::accept(
      static_cast<SOCKET>(s), peer_out != nullptr ? reinterpret_cast<sockaddr*>(&native) : nullptr,
      peer_out != nullptr ? &length : nullptr);
  if (accepted != INVALID_SOCKET && peer_out != nullptr) {
    *peer_out = from_sockaddr(native);
  }
  return static_cast<Socket>(accepted);
}

int WindowsOs::connect(Socket s, const Ipv4Address& address) {
  const sockaddr_in native = to_sockaddr(address);
  return ::connect(static_cast<SOCKET>(s), reinterpret_cast<const sockaddr*>(&native),
                   static_cast<int>(sizeof(native)));
}

int WindowsOs::send(Socket s, const void* data, int length, int flags) {
  return ::send(static_cast<SOCKET>(s), static_cast<const char*>(data), length, flags);
}

int WindowsOs::recv(Socket s, void* data, int length, int flags) {
  return ::recv(static_cast<SOCKET>(s), static_cast<char*>(data), length, flags);
}

int WindowsOs::sendto(Socket s, const void* data, int length, int flags, const Ipv4Address& to) {
  const sockaddr_in native = to_sockaddr(to);
  return ::sendto(static_cast<SOCKET>(s), static_cast<const char*>(data), length, flags,
                  reinterpret_cast<const sockaddr*>(&native), static_cast<int>(sizeof(native)));
}

int WindowsOs::recvfrom(Socket s, void* data, int length, int flags, Ipv4Address* from_out) {
  sockaddr_in native{};
  int native_length = static_cast<int>(static_cast<int>(sizeof(native)));
  const int received =
      ::recvfrom(static_cast<SOCKET>(s), static_cast<char*>(data), length, flags,
                 from_out != nullptr ? reinterpret_cast<sockaddr*>(&native) : nullptr,
                 from_out != nullptr ? &native_length : nullptr);
  if (received != SOCKET_ERROR && from_out != nullptr) {
    *from_out = from_sockaddr(native);
  }
  return received;
}

int WindowsOs::shutdown(Socket s, int how) { return ::shutdown(static_cast<SOCKET>(s), how); }

int WindowsOs::closesocket(Socket s) { return ::closesocket(static_cast<SOCKET>(s)); }

int WindowsOs::set_nonblocking(Socket s, bool nonblocking) {
  u_long mode = nonblocking ? 1u : 0u;
  return ::ioctlsocket(static_cast<SOCKET>(s), static_cast<long>(FIONBIO), &mode);
}

int WindowsOs::set_linger(Socket s, bool enabled, std::uint16_t timeout_s) {
  linger option{};
  option.l_onoff = static_cast<u_short>(enabled ? 1 : 0);
  option.l_linger = timeout_s;
  return ::setsockopt(static_cast<SOCKET>(s), SOL_SOCKET, SO_LINGER,
                      reinterpret_cast<const char*>(&option), static_cast<int>(sizeof(option)));
}

int WindowsOs::get_socket_error(Socket s, std::uint32_t* error_out) {
  if (error_out == nullptr) {
    ::WSASetLastError(WSAEFAULT);
    return SOCKET_ERROR;
  }
  int error = 0;
  int length = static_cast<int>(sizeof(error));
  if (::getsockopt(static_cast<SOCKET>(s), SOL_SOCKET, SO_ERROR, reinterpret_cast<char*>(&error),
                   &length) != 0) {
    return SOCKET_ERROR;
  }
  *error_out = static_cast<std::uint32_t>(error);
  return 0;
}

// WSAGetLastError reads the same per-thread slot as GetLastError; GetLastError also covers the
// port and handle calls.
std::uint32_t WindowsOs::last_error() { return static_cast<std::uint32_t>(::GetLastError()); }

// ---- Threads, locks, time --------------------------------------------------------------------

std::unique_ptr<Mutex> WindowsOs::mutex_create() { return std::make_unique<SrwMutex>(); }

Result<std::unique_ptr<Thread>> WindowsOs::thread_start(std::string_view name,
                                                        std::function<void()> body) {
  READYPORT_ASSERT(body != nullptr);
  // Thread names are ASCII identifiers in practice; widen byte by byte.
  std::wstring wide_name;
  wide_name.reserve(name.size());
  for (const char c : name) {
    wide_name.push_back(static_cast<wchar_t>(static_cast<unsigned char>(c)));
  }
  try {
    std::thread thread([wide_name = std::move(wide_name), body = std::move(body)]() {
      name_current_thread(wide_name);
      body();
    });
    return std::unique_ptr<Thread>(std::make_unique<StdThread>(std::move(thread)));
  } catch (const std::system_error& error) {
    // The one exception std::thread's constructor throws; errors cross the seam as values.
    return Status(StatusCode::kOsError,
                  std::string("cannot start thread '") + std::string(name) + "': " + error.what(),
                  static_cast<std::uint32_t>(error.code().value()));
  }
}

std::uint64_t WindowsOs::now_ns() {
  LARGE_INTEGER counter{};
  ::QueryPerformanceCounter(&counter);  // never fails on Windows XP and later
  const auto ticks = static_cast<std::uint64_t>(counter.QuadPart);
  // Split to avoid overflowing ticks * 1e9 (which a 10 MHz counter reaches after 58 years of
  // uptime, and a faster one sooner).
  constexpr std::uint64_t kNanosPerSecond = 1'000'000'000;
  const std::uint64_t seconds = ticks / counter_frequency_;
  const std::uint64_t remainder = ticks % counter_frequency_;
  return seconds * kNanosPerSecond + remainder * kNanosPerSecond / counter_frequency_;
}

void WindowsOs::sleep_ms(std::uint32_t duration_ms) { ::Sleep(duration_ms); }

std::uint64_t WindowsOs::thread_id() { return ::GetCurrentThreadId(); }

}  // namespace readyport
