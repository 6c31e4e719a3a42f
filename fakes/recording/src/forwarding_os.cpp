// ForwardingOs: every seam call passed to the inner Os unchanged. See forwarding_os.hpp.
#include "readyport/fake/forwarding_os.hpp"

#include <utility>

namespace readyport {

Port ForwardingOs::create_io_completion_port(std::uint32_t concurrency) {
  before_call();
  return inner_.create_io_completion_port(concurrency);
}

bool ForwardingOs::close_port(Port port) {
  before_call();
  return inner_.close_port(port);
}

std::uint32_t ForwardingOs::process_socket_notifications(
    Port port, std::uint32_t registration_count, SockNotifyRegistration* registrations,
    std::uint32_t timeout_ms, std::uint32_t completion_count, OverlappedEntry* entries,
    std::uint32_t* received_out) {
  before_call();
  return inner_.process_socket_notifications(port, registration_count, registrations, timeout_ms,
                                             completion_count, entries, received_out);
}

bool ForwardingOs::get_queued_completion_status_ex(Port port, OverlappedEntry* entries,
                                                   std::uint32_t count, std::uint32_t* removed_out,
                                                   std::uint32_t timeout_ms, bool alertable) {
  before_call();
  return inner_.get_queued_completion_status_ex(port, entries, count, removed_out, timeout_ms,
                                                alertable);
}

bool ForwardingOs::post_queued_completion_status(Port port, std::uint32_t bytes_transferred,
                                                 std::uintptr_t completion_key,
                                                 std::uintptr_t overlapped) {
  before_call();
  return inner_.post_queued_completion_status(port, bytes_transferred, completion_key, overlapped);
}

Socket ForwardingOs::socket(int af, int type, int protocol) {
  before_call();
  return inner_.socket(af, type, protocol);
}

int ForwardingOs::bind(Socket s, const Ipv4Address& address) {
  before_call();
  return inner_.bind(s, address);
}

int ForwardingOs::getsockname(Socket s, Ipv4Address* address_out) {
  before_call();
  return inner_.getsockname(s, address_out);
}

int ForwardingOs::listen(Socket s, int backlog) {
  before_call();
  return inner_.listen(s, backlog);
}

Socket ForwardingOs::accept(Socket s, Ipv4Address* peer_out) {
  before_call();
  return inner_.accept(s, peer_out);
}

int ForwardingOs::connect(Socket s, const Ipv4Address& address) {
  before_call();
  return inner_.connect(s, address);
}

int ForwardingOs::send(Socket s, const void* data, int length, int flags) {
  before_call();
  return inner_.send(s, data, length, flags);
}

int ForwardingOs::recv(Socket s, void* data, int length, int flags) {
  before_call();
  return inner_.recv(s, data, length, flags);
}

int ForwardingOs::sendto(Socket s, const void* data, int length, int flags, const Ipv4Address& to) {
  before_call();
  return inner_.sendto(s, data, length, flags, to);
}

int ForwardingOs::recvfrom(Socket s, void* data, int length, int flags, Ipv4Address* from_out) {
  before_call();
  return inner_.recvfrom(s, data, length, flags, from_out);
}

int ForwardingOs::shutdown(Socket s, int how) {
  before_call();
  return inner_.shutdown(s, how);
}

int ForwardingOs::closesocket(Socket s) {
  before_call();
  return inner_.closesocket(s);
}

int ForwardingOs::set_nonblocking(Socket s, bool nonblocking) {
  before_call();
  return inner_.set_nonblocking(s, nonblocking);
}

int ForwardingOs::set_linger(Socket s, bool enabled, std::uint16_t timeout_s) {
  before_call();
  return inner_.set_linger(s, enabled, timeout_s);
}

int ForwardingOs::get_socket_error(Socket s, std::uint32_t* error_out) {
  before_call();
  return inner_.get_socket_error(s, error_out);
}

std::uint32_t ForwardingOs::last_error() {
  before_call();
  return inner_.last_error();
}

std::unique_ptr<Mutex> ForwardingOs::mutex_create() {
  before_call();
  return inner_.mutex_create();
}

Result<std::unique_ptr<Thread>> ForwardingOs::thread_start(std::string_view name,
                                                           std::function<void()> body) {
  before_call();
  return inner_.thread_start(name, std::move(body));
}

std::uint64_t ForwardingOs::now_ns() {
  before_call();
  return inner_.now_ns();
}

void ForwardingOs::sleep_ms(std::uint32_t duration_ms) {
  before_call();
  inner_.sleep_ms(duration_ms);
}

std::uint64_t ForwardingOs::thread_id() { return inner_.thread_id(); }

EngineBoundary* ForwardingOs::engine_boundary() { return inner_.engine_boundary(); }

}  // namespace readyport
