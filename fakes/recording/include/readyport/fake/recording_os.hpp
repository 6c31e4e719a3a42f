// readyport/fake/recording_os.hpp: an Os decorator that writes every call and result to a Trace.
//
// RecordingOs forwards each call to the Os it wraps, unchanged, and when the call returns appends
// one line to a Trace: the call's name, its arguments and its result, with the time and thread
// from a TraceContext. It makes no seam call of its own, so a recorded run takes exactly the
// scheduling points of an unrecorded one. A call whose order the oracle needs also gets a begin
// line, so that its effect lies between the two (BeginLines, effect_point.hpp).
//
//   readyport::SimScheduler sim(options);
//   readyport::FakeOs fake(readyport::FakeOptions{}, sim);
//   readyport::Trace trace;
//   readyport::RuntimeTraceContext context(sim);
//   readyport::RecordingOs os(fake, trace, context);   // the engine gets `os`
//
// Every line it writes: docs/simulation.md#call-lines. The begin lines and where each is written:
// docs/oracle.md#calls-as-intervals.
//
// Ownership: borrows `inner`, `trace` and `context`, which must outlive it. Mutexes and threads it
// hands out wrap the inner ones and must be destroyed before it (os.hpp).
// Threading: as the inner Os (any thread); Trace is internally synchronised.
// Errors: exactly the inner Os's.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "readyport/fake/forwarding_os.hpp"
#include "readyport/fake/trace.hpp"
#include "readyport/os.hpp"

namespace readyport {

class RecordingOs final : public ForwardingOs {
 public:
  // Where begin lines are written (docs/oracle.md#calls-as-intervals).
  enum class BeginLines : std::uint8_t {
    kBeforeCall,  // before the inner call: right for any Os
    kAtEffect,    // at the inner Os's effect_point() (FakeOs), else just before the call's line
  };

  RecordingOs(Os& inner, Trace& trace, const TraceContext& context,
              BeginLines begin_lines = BeginLines::kBeforeCall)
      : ForwardingOs(inner), trace_(trace), context_(context), begin_lines_(begin_lines) {}
  RecordingOs(const RecordingOs&) = delete;
  RecordingOs& operator=(const RecordingOs&) = delete;

  using ForwardingOs::inner;  // public here: the wrapped Os
  Trace& trace() { return trace_; }

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

  // Records `event` as a line of the calling thread now (for wrappers such as RecordingMutex).
  void record(TraceEvent& event) { trace_.record(context_, event); }
  void record(TraceEvent&& event) { trace_.record(context_, event); }
  // The same for a line given as text (a rare one: a failed thread_start).
  void record_text(std::string_view event) { trace_.record(context_, event); }
  // Records `event` now as a line of `thread` (a trace_thread() value), from any thread: a begin
  // line written on behalf of a waiter (effect_point.hpp).
  void record_as(std::uint32_t thread, TraceEvent& event) {
    trace_.record(context_.trace_time_ns(), thread, event);
  }
  // The calling thread's number in this trace.
  std::uint32_t trace_thread() const { return context_.trace_thread(); }

  // The boundary an engine built on this Os (or on a decorator above it) reports to: a
  // BoundaryRecorder writing to this trace (boundary_recorder.hpp), borrowed; it must outlive
  // those engines. Null (the default): the inner Os's answer. Set before any engine is built.
  void set_boundary(EngineBoundary* boundary) { boundary_ = boundary; }
  EngineBoundary* engine_boundary() override {
    return boundary_ != nullptr ? boundary_ : ForwardingOs::engine_boundary();
  }

 private:
  Trace& trace_;
  const TraceContext& context_;
  const BeginLines begin_lines_;
  EngineBoundary* boundary_ = nullptr;
  std::atomic<std::uint32_t> mutexes_created_{0};
  std::atomic<std::uint32_t> threads_started_{0};
};

}  // namespace readyport
