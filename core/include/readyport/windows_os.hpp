// readyport/windows_os.hpp: the real Windows backend of the `Os` seam.
//
// `WindowsOs` forwards every seam call to Winsock, the I/O completion port functions and the
// Win32 thread, lock and clock primitives. It is what production code passes to the engine on
// Windows, and what the conformance scenarios run against on Windows runners to check the fake.
//
//   readyport::Result<std::unique_ptr<readyport::WindowsOs>> made = readyport::WindowsOs::create();
//   if (!made.ok()) { log(made.status().to_string()); return; }  // e.g. Windows 10 before 20348
//   std::unique_ptr<readyport::WindowsOs> os = std::move(made).value();
//   readyport::Port port = os->create_io_completion_port(0);
//
// Ownership: the caller owns the WindowsOs. Each instance holds one WSAStartup reference, released
// by its destructor (so Winsock stays initialised while any instance lives).
//
// Lifetime: a WindowsOs outlives every port, socket, Mutex and Thread obtained through it (the
// `Os` contract). Destroying it while another thread still calls it is a broken contract.
//
// Threading: every method may be called from any thread at any time; the object holds no mutable
// state after create() (the looked-up function pointer and the clock frequency are written once).
// Several threads may wait on one port at once (spec A9).
//
// Errors: each method returns what the Windows function returns (see os.hpp). last_error() is
// GetLastError() of the calling thread, which is also what WSAGetLastError() reads: errors are per
// thread, as on Windows, and nothing in this class overwrites them between a failed call and the
// caller's last_error(). Factory failures are Status values, never exceptions.
//
// ProcessSocketNotifications (spec G1, G2): the function exists from Windows 10 build 20348
// (Windows Server 2022, Windows 11) on, and some SDKs' ws2_32.lib lack its import, so it is looked
// up at run time with GetProcAddress on ws2_32.dll; the binary starts on any Windows. create()
// fails with StatusCode::kUnavailable naming the required build where the lookup fails.
// create(WindowsOsOptions{.require_process_socket_notifications = false}) builds an instance anyway
// whose process_socket_notifications() returns kErrorProcNotFound without touching anything: the
// ports, sockets, threads and clock still work. That is how the tests exercise everything else
// under Wine 8, which lacks the function.
//
// Portability: this header is plain C++ (it includes no Windows header) so that it can be read and
// included anywhere, but WindowsOs is defined only in Windows builds (core/src/windows_os.cpp, the
// one file of the project that includes the Winsock header). Works for x64 and x86 (spec G3).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "readyport/os.hpp"
#include "readyport/status.hpp"

namespace readyport {

// ERROR_PROC_NOT_FOUND: what process_socket_notifications() returns, and the os_error() of the
// factory's Status, when ws2_32.dll has no ProcessSocketNotifications export.
inline constexpr std::uint32_t kErrorProcNotFound = 127;

// The first Windows build with ProcessSocketNotifications (spec G1).
inline constexpr std::uint32_t kProcessSocketNotificationsMinBuild = 20348;

struct WindowsOsOptions {
  // true (the default): create() fails with kUnavailable where ProcessSocketNotifications is
  // missing. false: create() succeeds there and process_socket_notifications() returns
  // kErrorProcNotFound (spec A3: the whole call failed, nothing changed). Use false only for
  // tests and tools that do not need the real call (for example under Wine).
  bool require_process_socket_notifications = true;
  // The export looked up in ws2_32.dll. A test hook: naming an export that does not exist lets a
  // test exercise the "missing function" path (spec G2) on a Windows that has the real one.
  // Must point to a NUL-terminated string that outlives the create() call.
  const char* psn_export_name = "ProcessSocketNotifications";
};

class WindowsOs final : public Os {
 public:
  // WSAStartup(2.2), then the run-time lookup of ProcessSocketNotifications. Fails with
  // kOsError (os_error() = the WSAStartup code) when Winsock cannot start, and with kUnavailable
  // (os_error() = kErrorProcNotFound) naming Windows 10 build 20348 / Windows Server 2022 /
  // Windows 11 when the function is missing and the options require it. Any thread; never blocks.
  static Result<std::unique_ptr<WindowsOs>> create();
  static Result<std::unique_ptr<WindowsOs>> create(const WindowsOsOptions& options);

  // WSACleanup for this instance's reference.
  ~WindowsOs() override;

  WindowsOs(const WindowsOs&) = delete;
  WindowsOs& operator=(const WindowsOs&) = delete;

  // Whether process_socket_notifications() reaches the real function (false only for instances
  // made with require_process_socket_notifications = false on a system that lacks it).
  bool has_process_socket_notifications() const { return psn_ != nullptr; }

  // The Windows build number (RtlGetVersion's dwBuildNumber, which, unlike GetVersionEx, is not
  // subject to manifest compatibility shims), or 0 if it cannot be read. For messages and tests.
  static std::uint32_t windows_build_number();
  // Whether this process runs under Wine (ntdll.dll exports wine_get_version). For tests: Wine
  // reports a Windows version that says nothing about which functions it implements.
  static bool running_under_wine();
  // Whether this build's SDK declares socket state notifications, so that the mirrored types and
  // constants were checked against the SDK's own declarations (Windows SDK 10.0.20348 and later)
  // and not only against the documented layout (mingw-w64 10). For tests.
  static bool abi_checked_against_sdk();

  // -- Os ------------------------------------------------------------------------------------
  Port create_io_completion_port(std::uint32_t concurrency) override;
  bool close_port(Port port) override;
  std::uint32_t process_socket_notifications(Port port, std::uint32_t registration_count,
                                             SockNotifyRegistration* registrations,
                                             std::uint32_t timeout_ms,
                                             std::uint32_t completion_count,
                                             OverlappedEntry* entries,
                                             std::uint32_t* received_out) override;
  bool get_queued_completion_status_ex(Port port, OverlappedEntry* entries, std::uint32_t count,
                                       std::uint32_t* removed_out, std::uint32_t timeout_ms,
                                       bool alertable) override;
  bool post_queued_completion_status(Port port, std::uint32_t bytes_transferred,
                                     std::uintptr_t completion_key,
                                     std::uintptr_t overlapped) override;

  Socket socket(int af, int type, int protocol) override;
  int bind(Socket s, const Ipv4Address& address) override;
  int getsockname(Socket s, Ipv4Address* address_out) override;
  int listen(Socket s, int backlog) override;
  // Passed through: on Windows the accepted socket has the listening socket's properties.
  Socket accept(Socket s, Ipv4Address* peer_out) override;
  int connect(Socket s, const Ipv4Address& address) override;
  int send(Socket s, const void* data, int length, int flags) override;
  int recv(Socket s, void* data, int length, int flags) override;
  int sendto(Socket s, const void* data, int length, int flags, const Ipv4Address& to) override;
  int recvfrom(Socket s, void* data, int length, int flags, Ipv4Address* from_out) override;
  int shutdown(Socket s, int how) override;
  int closesocket(Socket s) override;
  int set_nonblocking(Socket s, bool nonblocking) override;
  int set_linger(Socket s, bool enabled, std::uint16_t timeout_s) override;
  int get_socket_error(Socket s, std::uint32_t* error_out) override;
  std::uint32_t last_error() override;

  // An SRWLOCK; lock() of a lock the calling thread already holds asserts (it would deadlock).
  std::unique_ptr<Mutex> mutex_create() override;
  // A std::thread named with SetThreadDescription where the system has it. Fails with kOsError
  // when the thread cannot be created.
  Result<std::unique_ptr<Thread>> thread_start(std::string_view name,
                                               std::function<void()> body) override;
  // QueryPerformanceCounter, in nanoseconds.
  std::uint64_t now_ns() override;
  // Sleep(duration_ms).
  void sleep_ms(std::uint32_t duration_ms) override;
  // GetCurrentThreadId.
  std::uint64_t thread_id() override;

 private:
  // A function pointer of a neutral type (the real type, with its WSAAPI calling convention,
  // lives in windows_os.cpp); null when the export is missing.
  using RawProc = void (*)();

  WindowsOs(RawProc psn, std::uint64_t counter_frequency);

  const RawProc psn_;
  const std::uint64_t counter_frequency_;  // QueryPerformanceFrequency, > 0
};

}  // namespace readyport
