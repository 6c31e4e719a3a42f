// RecordingOs: one trace line per seam call. See recording_os.hpp for the event list.
#include "readyport/fake/recording_os.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>
#include <utility>

#include "readyport/assert.hpp"
#include "readyport/fake/internal/effect_point.hpp"

namespace readyport {

// One call's begin lines not yet written (effect_point.hpp): at most a PSN's two, and the thread
// they belong to (a hand-off writes them from another thread).
namespace {

// One call's begin lines, pending until the fake reaches their effect point (effect_point.hpp).
struct PendingBegins final : EffectBegins {
  struct Begin {
    EffectPoint point = EffectPoint::kCall;
    TraceEvent event;
    bool written = false;
  };
  void write_up_to(EffectPoint point) override {
    for (std::uint32_t i = 0; i < count; ++i) {
      Begin& begin = begins[i];
      if (begin.written || begin.point > point) {
        continue;
      }
      begin.written = true;
      os->record_as(thread, begin.event);
    }
  }

  RecordingOs* os = nullptr;
  std::uint32_t thread = 0;
  std::array<Begin, 2> begins;
  std::uint32_t count = 0;
};

// An event, built with TraceEvent's calls (trace_event.hpp).
using Line = TraceEvent;

TraceValue socket_result(Socket s) {
  return s == kInvalidSocket ? TraceValue::of_text("INVALID_SOCKET")
                             : TraceValue::of(TraceValueKind::kDecimal, s);
}

TraceValue flag_result(bool value) { return TraceValue::of_text(value ? "1" : "0"); }

// "<prefix><n><suffix>", interned (an event's name lives as long as the trace). Built by
// appending: `"m" + std::to_string(n)` makes g++ 12 at -O2/-O3 warn -Wrestrict about its own
// inlined memcpy (a false positive, GCC bug 105651).
TraceText numbered_name(char const* prefix, std::uint32_t number, std::string_view suffix) {
  std::string name(prefix);
  name += std::to_string(number);
  name += suffix;
  return TraceText::at_run_time(trace_intern(name));
}

// A Mutex whose calls are recorded as m<n>.lock / m<n>.try_lock / m<n>.unlock.
class RecordingMutex final : public Mutex {
 public:
  RecordingMutex(RecordingOs& os, std::unique_ptr<Mutex> inner, std::uint32_t number)
      : os_(os),
        inner_(std::move(inner)),
        lock_name_(numbered_name("m", number, ".lock")),
        try_lock_name_(numbered_name("m", number, ".try_lock")),
        unlock_name_(numbered_name("m", number, ".unlock")) {}
  void lock() override {
    inner_->lock();
    Line event(lock_name_);
    os_.record(event);
  }
  bool try_lock() override {
    const bool locked = inner_->try_lock();
    Line event(try_lock_name_);
    os_.record(event.arrow(flag_result(locked)));
    return locked;
  }
  void unlock() override {
    // Recorded before the inner unlock: once it is released another thread may record.
    Line event(unlock_name_);
    os_.record(event);
    inner_->unlock();
  }

 private:
  RecordingOs& os_;
  std::unique_ptr<Mutex> inner_;
  const TraceText lock_name_;  // interned
  const TraceText try_lock_name_;
  const TraceText unlock_name_;
};

// A Thread whose join is recorded as th<n>.join.
class RecordingThread final : public Thread {
 public:
  RecordingThread(RecordingOs& os, std::unique_ptr<Thread> inner, std::uint32_t number)
      : os_(os), inner_(std::move(inner)), join_name_(numbered_name("th", number, ".join")) {}
  void join() override {
    inner_->join();
    Line event(join_name_);
    os_.record(event);
  }

 private:
  RecordingOs& os_;
  std::unique_ptr<Thread> inner_;
  const TraceText join_name_;  // interned
};

// The calling logical thread's pending begin lines (a fiber's own, under SimScheduler): only a
// RecordingOs sets them, so they are a PendingBegins.
PendingBegins* pending_get() { return static_cast<PendingBegins*>(effect_begins_current()); }
void pending_set(PendingBegins* pending) { (void)effect_begins_set(pending); }

// The begin lines of one call: written now (BeginLines::kBeforeCall), or at the inner Os's effect
// points; flush() writes what is left just before the call's own line (the inner Os returned
// before reaching an effect, e.g. on bad arguments).
class IntervalBegins {
 public:
  IntervalBegins(RecordingOs& os, RecordingOs::BeginLines mode)
      : os_(os), at_effect_(mode == RecordingOs::BeginLines::kAtEffect), outer_(pending_get()) {
    pending_.os = &os;
    pending_.thread = os.trace_thread();
    if (at_effect_) {
      pending_set(&pending_);
    }
  }
  ~IntervalBegins() {
    if (at_effect_) {
      pending_set(outer_);
    }
  }
  IntervalBegins(const IntervalBegins&) = delete;
  IntervalBegins& operator=(const IntervalBegins&) = delete;

  void add(EffectPoint point, TraceEvent& event) {
    if (!at_effect_) {
      os_.record(event);
      return;
    }
    READYPORT_ASSERT(pending_.count < pending_.begins.size());
    PendingBegins::Begin& begin = pending_.begins[pending_.count++];
    begin.point = point;
    begin.event = std::move(event);
  }
  void flush() {
    if (at_effect_) {
      effect_point(EffectPoint::kCall);  // the last point: writes every one
    }
  }

 private:
  RecordingOs& os_;
  const bool at_effect_;
  PendingBegins* const outer_;
  PendingBegins pending_;
};

}  // namespace

Port RecordingOs::create_io_completion_port(std::uint32_t concurrency) {
  const Port port = inner().create_io_completion_port(concurrency);
  record(Line("create_port")
             .num("concurrency", concurrency)
             .arrow_num(static_cast<std::int64_t>(port.value)));
  return port;
}

bool RecordingOs::close_port(Port port) {
  const bool closed = inner().close_port(port);
  record(Line("close_port").num("port", port.value).arrow(flag_result(closed)));
  return closed;
}

std::uint32_t RecordingOs::process_socket_notifications(Port port, std::uint32_t registration_count,
                                                        SockNotifyRegistration* registrations,
                                                        std::uint32_t timeout_ms,
                                                        std::uint32_t completion_count,
                                                        OverlappedEntry* entries,
                                                        std::uint32_t* received_out) {
  IntervalBegins begins(*this, begin_lines_);
  if (registration_count > 0) {
    begins.add(EffectPoint::kRegistrations,
               Line("psn.begin")
                   .num("port", port.value)
                   .registrations(registrations, registration_count, false));
  }
  if (completion_count > 0) {
    begins.add(EffectPoint::kDequeue, Line("dequeue.begin").num("port", port.value));
  }
  const std::uint32_t result = inner().process_socket_notifications(
      port, registration_count, registrations, timeout_ms, completion_count, entries, received_out);
  begins.flush();
  Line line("psn");
  line.num("port", port.value);
  if (registration_count > 0 || registrations != nullptr) {
    line.registrations(registrations, registration_count, true);
  }
  line.num("timeout", timeout_ms).num("count", completion_count).arrow_error(result);
  if (received_out != nullptr) {
    line.num("n", *received_out);
    if (result == kErrorSuccess && entries != nullptr && *received_out > 0) {
      line.completions(entries, std::min(*received_out, completion_count));
    }
  }
  record(line);
  return result;
}

bool RecordingOs::get_queued_completion_status_ex(Port port, OverlappedEntry* entries,
                                                  std::uint32_t count, std::uint32_t* removed_out,
                                                  std::uint32_t timeout_ms, bool alertable) {
  IntervalBegins begins(*this, begin_lines_);
  begins.add(EffectPoint::kDequeue, Line("dequeue.begin").num("port", port.value));
  const bool ok = inner().get_queued_completion_status_ex(port, entries, count, removed_out,
                                                          timeout_ms, alertable);
  begins.flush();
  Line line("gqcs");
  line.num("port", port.value).num("count", count).num("timeout", timeout_ms);
  line.num("alertable", alertable ? 1 : 0).arrow(flag_result(ok));
  if (ok && removed_out != nullptr && entries != nullptr) {
    line.num("n", *removed_out).completions(entries, std::min(*removed_out, count));
  }
  record(line);
  return ok;
}

bool RecordingOs::post_queued_completion_status(Port port, std::uint32_t bytes_transferred,
                                                std::uintptr_t completion_key,
                                                std::uintptr_t overlapped) {
  Line line("post");
  line.num("port", port.value).hex("bytes", bytes_transferred).num("key", completion_key);
  IntervalBegins begins(*this, begin_lines_);
  Line begin = line;
  begin.rename("post.begin");
  begins.add(EffectPoint::kCall, begin);
  const bool ok =
      inner().post_queued_completion_status(port, bytes_transferred, completion_key, overlapped);
  begins.flush();
  record(line.arrow(flag_result(ok)));
  return ok;
}

Socket RecordingOs::socket(int af, int type, int protocol) {
  const Socket s = inner().socket(af, type, protocol);
  record(Line("socket")
             .num_signed("af", af)
             .num_signed("type", type)
             .num_signed("proto", protocol)
             .arrow(socket_result(s)));
  return s;
}

int RecordingOs::bind(Socket s, const Ipv4Address& address) {
  const int result = inner().bind(s, address);
  record(Line("bind").num("s", s).address("addr", address).arrow_num(result));
  return result;
}

int RecordingOs::getsockname(Socket s, Ipv4Address* address_out) {
  const int result = inner().getsockname(s, address_out);
  Line line("getsockname");
  line.num("s", s).arrow_num(result);
  if (result == 0 && address_out != nullptr) {
    line.address("addr", *address_out);
  }
  record(line);
  return result;
}

int RecordingOs::listen(Socket s, int backlog) {
  const int result = inner().listen(s, backlog);
  record(Line("listen").num("s", s).num_signed("backlog", backlog).arrow_num(result));
  return result;
}

Socket RecordingOs::accept(Socket s, Ipv4Address* peer_out) {
  const Socket accepted = inner().accept(s, peer_out);
  Line line("accept");
  line.num("s", s).arrow(socket_result(accepted));
  if (accepted != kInvalidSocket && peer_out != nullptr) {
    line.address("peer", *peer_out);
  }
  record(line);
  return accepted;
}

int RecordingOs::connect(Socket s, const Ipv4Address& address) {
  const int result = inner().connect(s, address);
  record(Line("connect").num("s", s).address("addr", address).arrow_num(result));
  return result;
}

int RecordingOs::send(Socket s, const void* data, int length, int flags) {
  const int result = inner().send(s, data, length, flags);
  record(Line("send")
             .num("s", s)
             .num_signed("len", length)
             .num_signed("flags", flags)
             .arrow_num(result));
  return result;
}

int RecordingOs::recv(Socket s, void* data, int length, int flags) {
  const int result = inner().recv(s, data, length, flags);
  record(Line("recv")
             .num("s", s)
             .num_signed("len", length)
             .num_signed("flags", flags)
             .arrow_num(result));
  return result;
}

int RecordingOs::sendto(Socket s, const void* data, int length, int flags, const Ipv4Address& to) {
  const int result = inner().sendto(s, data, length, flags, to);
  record(Line("sendto")
             .num("s", s)
             .num_signed("len", length)
             .num_signed("flags", flags)
             .address("to", to)
             .arrow_num(result));
  return result;
}

int RecordingOs::recvfrom(Socket s, void* data, int length, int flags, Ipv4Address* from_out) {
  const int result = inner().recvfrom(s, data, length, flags, from_out);
  Line line("recvfrom");
  line.num("s", s).num_signed("len", length).num_signed("flags", flags).arrow_num(result);
  if (result >= 0 && from_out != nullptr) {
    line.address("from", *from_out);
  }
  record(line);
  return result;
}

int RecordingOs::shutdown(Socket s, int how) {
  const int result = inner().shutdown(s, how);
  record(Line("shutdown").num("s", s).num_signed("how", how).arrow_num(result));
  return result;
}

int RecordingOs::closesocket(Socket s) {
  IntervalBegins begins(*this, begin_lines_);
  begins.add(EffectPoint::kCall, Line("closesocket.begin").num("s", s));
  const int result = inner().closesocket(s);
  begins.flush();
  record(Line("closesocket").num("s", s).arrow_num(result));
  return result;
}

int RecordingOs::set_nonblocking(Socket s, bool nonblocking) {
  const int result = inner().set_nonblocking(s, nonblocking);
  record(Line("set_nonblocking").num("s", s).num("on", nonblocking ? 1 : 0).arrow_num(result));
  return result;
}

int RecordingOs::set_linger(Socket s, bool enabled, std::uint16_t timeout_s) {
  const int result = inner().set_linger(s, enabled, timeout_s);
  record(Line("set_linger")
             .num("s", s)
             .num("on", enabled ? 1 : 0)
             .num("timeout", timeout_s)
             .arrow_num(result));
  return result;
}

int RecordingOs::get_socket_error(Socket s, std::uint32_t* error_out) {
  const int result = inner().get_socket_error(s, error_out);
  Line line("get_socket_error");
  line.num("s", s).arrow_num(result);
  if (result == 0 && error_out != nullptr) {
    line.error("error", *error_out);
  }
  record(line);
  return result;
}

std::uint32_t RecordingOs::last_error() {
  const std::uint32_t code = inner().last_error();
  record(Line("last_error").arrow_error(code));
  return code;
}

std::unique_ptr<Mutex> RecordingOs::mutex_create() {
  std::unique_ptr<Mutex> created = inner().mutex_create();
  READYPORT_ASSERT(created != nullptr);
  const std::uint32_t number = mutexes_created_.fetch_add(1) + 1;
  record(Line("mutex_create").arrow_text(numbered_name("m", number, "").text()));
  return std::make_unique<RecordingMutex>(*this, std::move(created), number);
}

Result<std::unique_ptr<Thread>> RecordingOs::thread_start(std::string_view name,
                                                          std::function<void()> body) {
  Result<std::unique_ptr<Thread>> started = inner().thread_start(name, std::move(body));
  if (!started.ok()) {
    // Rare, and its result is two words: recorded as text.
    record_text("thread_start name=" + std::string(name) + " -> FAIL " +
                status_code_name(started.status().code()));
    return started;
  }
  const std::uint32_t number = threads_started_.fetch_add(1) + 1;
  record(Line("thread_start")
             .text("name", trace_intern(name))
             .arrow_text(numbered_name("th", number, "").text()));
  return std::unique_ptr<Thread>(
      std::make_unique<RecordingThread>(*this, std::move(started).value(), number));
}

std::uint64_t RecordingOs::now_ns() {
  const std::uint64_t now = inner().now_ns();
  record(Line("now_ns").arrow(TraceValue::of(TraceValueKind::kDecimal, now)));
  return now;
}

void RecordingOs::sleep_ms(std::uint32_t duration_ms) {
  inner().sleep_ms(duration_ms);
  record(Line("sleep_ms").num("ms", duration_ms));
}

}  // namespace readyport
