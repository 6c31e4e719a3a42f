// readyport/fake/recording_os.hpp: an Os decorator that writes every call and result to a Trace.
//
// RecordingOs forwards each call to the Os it wraps, unchanged, and when the call returns appends
// one line to a Trace (trace.hpp gives the line format): the call's name, its arguments, and its
// result, with the time and thread from a TraceContext. It never makes a seam call of its own
// (it does not read last_error() after a failure: the caller's own last_error() call is recorded
// as a line), so a recorded run takes exactly the scheduling points of an unrecorded one.
//
//   readyport::SimScheduler sim(options);
//   readyport::FakeOs fake(readyport::FakeOptions{}, sim);
//   readyport::Trace trace;
//   readyport::RuntimeTraceContext context(sim);
//   readyport::RecordingOs os(fake, trace, context);   // the engine gets `os`
//
// Events, one per call (values decimal unless noted; `s` a SOCKET, `port` a port handle; error
// codes by name as os_error_name() gives them, `error(<n>)` when unknown; addresses a.b.c.d:port):
//   create_port concurrency=<n> -> <port>                 (0 on failure)
//   close_port port=<p> -> <0|1>
//   psn.begin port=<p> regs=[s=<s>/key=<k>/filter=0x<f>/op=<NONE|ENABLE|DISABLE|REMOVE|n>
//       /trig=0x<t>,...]                                   (see below)
//   psn port=<p> regs=[s=<s>/key=<k>/filter=0x<f>/op=<NONE|ENABLE|DISABLE|REMOVE|n>/trig=0x<t>
//       /res=<0|error>,...] timeout=<ms> count=<n> -> <error> [n=<received>]
//       [entries=[key=<k>/mask=0x<m>,...]]                 (entries when n is known and > 0)
//   gqcs port=<p> count=<n> timeout=<ms> alertable=<0|1> -> <0|1> [n=<removed> entries=[...]]
//   post port=<p> bytes=0x<b> key=<k> -> <0|1>
//   socket af=<n> type=<n> proto=<n> -> <s|INVALID_SOCKET>
//   bind s=<s> addr=<a> -> <r>             getsockname s=<s> -> <r> [addr=<a>]
//   listen s=<s> backlog=<n> -> <r>        accept s=<s> -> <s|INVALID_SOCKET> [peer=<a>]
//   connect s=<s> addr=<a> -> <r>          send|recv s=<s> len=<n> flags=<n> -> <r>
//   sendto s=<s> len=<n> flags=<n> to=<a> -> <r>
//   recvfrom s=<s> len=<n> flags=<n> -> <r> [from=<a>]
//   shutdown s=<s> how=<n> -> <r>          closesocket s=<s> -> <r>
//   set_nonblocking s=<s> on=<0|1> -> <r>  set_linger s=<s> on=<0|1> timeout=<n> -> <r>
//   get_socket_error s=<s> -> <r> [error=<error>]
//   last_error -> <error>
//   mutex_create -> m<n>                   m<n>.lock   m<n>.try_lock -> <0|1>   m<n>.unlock
//   thread_start name=<name> -> th<n>      (-> FAIL <status code name> on failure)
//   th<n>.join
//   now_ns -> <ns>                         sleep_ms ms=<n>
// (the psn lines are shown wrapped). m<n> and th<n> number the mutexes and threads this
// RecordingOs handed out, from 1, in creation order. Data bytes of send/recv are not recorded.
//
// Intervals: a call whose order the oracle needs is recorded as a begin line and its ordinary
// line, so that its effect lies somewhere between the two (effect_point.hpp):
//   psn.begin port=<p> regs=[...]   (registration_count > 0; the elements without /res=)
//   dequeue.begin port=<p>          (a PSN with completion_count > 0, and every gqcs)
//   post.begin port=<p> bytes=0x<b> key=<k>          closesocket.begin s=<s>
// With BeginLines::kBeforeCall (any backend) they are written before the inner call; with
// kAtEffect (an inner FakeOs, which calls effect_point()) when the fake reaches the effect, so in
// simulation the two lines are exact; a waiting dequeue's effect is the hand-off of a packet to it
// (spec F1), and its begin line is written there by the thread that hands it (effect_point.hpp).
// A PSN's registrations apply at its start and its dequeue after any wait, hence its two begin
// lines.
//
// Handle values are printed as the wrapped Os returns them: FakeOs's are deterministic; a real
// backend's are not, and neither are its traces across runs (use CountingTraceContext there).
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

// The `regs=` value of the trace lines above for `count` elements: `[s=../key=../filter=0x..
// /op=../trig=0x..[/res=..],...]`, with `/res=` when `with_results`; `null` when `registrations`
// is null. Shared with FaultyOs's fault lines. Never fails.
std::string trace_registrations(const SockNotifyRegistration* registrations, std::uint32_t count,
                                bool with_results);

class RecordingOs final : public ForwardingOs {
 public:
  // Where begin lines are written (see "Intervals" above).
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
  void record(std::string_view event) { trace_.record(context_, event); }
  // Records `event` now as a line of `thread` (a trace_thread() value), from any thread: a begin
  // line written on behalf of a waiter (effect_point.hpp).
  void record_as(std::uint32_t thread, std::string_view event) {
    trace_.record(context_.trace_time_ns(), thread, event);
  }
  // The calling thread's number in this trace.
  std::uint32_t trace_thread() const { return context_.trace_thread(); }

 private:
  Trace& trace_;
  const TraceContext& context_;
  const BeginLines begin_lines_;
  std::atomic<std::uint32_t> mutexes_created_{0};
  std::atomic<std::uint32_t> threads_started_{0};
};

}  // namespace readyport
