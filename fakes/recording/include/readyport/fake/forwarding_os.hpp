// readyport/fake/forwarding_os.hpp: ForwardingOs, the base of every Os decorator.
//
// A decorator (RecordingOs, FaultyOs) changes a few seam calls and passes the rest through.
// ForwardingOs implements every method of `readyport::Os` by calling the same method of an inner
// Os with the same arguments and returning its result unchanged, so a decorator derives from it
// and overrides only what it intercepts:
//
//   class CountingOs final : public readyport::ForwardingOs {
//    public:
//     using ForwardingOs::ForwardingOs;
//     int closesocket(readyport::Socket s) override {
//       ++closes_;
//       return inner().closesocket(s);
//     }
//     int closes_ = 0;
//   };
//
// Mutexes and threads are the inner Os's own objects, handed through (no wrapper).
//
// Hook: every forwarding method first calls before_call() on the calling thread, then the inner
// method. The default does nothing; FaultyOs uses it to end an injected last error at the
// thread's next call. An override that does not call the ForwardingOs method calls before_call()
// itself if it needs the hook.
//
// Ownership: borrows `inner`, which must outlive the decorator. Lifetime: as os.hpp (objects the
// inner Os handed out must be destroyed before it).
// Threading: as the inner Os (any thread); ForwardingOs itself holds no state.
// Re-entrancy: none beyond the inner Os's. Errors: exactly the inner Os's.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "readyport/os.hpp"

namespace readyport {

class ForwardingOs : public Os {
 public:
  explicit ForwardingOs(Os& inner) : inner_(inner) {}
  ForwardingOs(const ForwardingOs&) = delete;
  ForwardingOs& operator=(const ForwardingOs&) = delete;

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

  std::unique_ptr<Mutex> mutex_create() override;
  Result<std::unique_ptr<Thread>> thread_start(std::string_view name,
                                               std::function<void()> body) override;
  std::uint64_t now_ns() override;
  void sleep_ms(std::uint32_t duration_ms) override;
  // Forwarded without before_call(): not a seam call that can fail or be scheduled.
  std::uint64_t thread_id() override;
  // Forwarded without before_call(), as thread_id().
  EngineBoundary* engine_boundary() override;

 protected:
  // The wrapped Os. Calls made through it bypass before_call().
  Os& inner() { return inner_; }
  // Called on the calling thread at the start of every forwarding method (see the top).
  virtual void before_call() {}

 private:
  Os& inner_;
};

}  // namespace readyport
