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
    std::string line;
    bool written = false;
  };
  void write_up_to(EffectPoint point) override {
    for (std::uint32_t i = 0; i < count; ++i) {
      Begin& begin = begins[i];
      if (begin.written || begin.point > point) {
        continue;
      }
      begin.written = true;
      os->record_as(thread, begin.line);
    }
  }

  RecordingOs* os = nullptr;
  std::uint32_t thread = 0;
  std::array<Begin, 2> begins;
  std::uint32_t count = 0;
};

// Appends 0x<lower-case hex>.
void append_hex(std::string* text_out, std::uint64_t value) {
  char buffer[24];
  const int size =
      std::snprintf(buffer, sizeof(buffer), "0x%llx", static_cast<unsigned long long>(value));
  READYPORT_ASSERT(size > 0 && static_cast<std::size_t>(size) < sizeof(buffer));
  text_out->append(buffer, static_cast<std::size_t>(size));
}

// Appends the code's name, or error(<n>) when os_error_name does not know it.
void append_error(std::string* text_out, std::uint32_t code) {
  const std::string_view name = os_error_name(code);
  if (name == "error") {
    *text_out += "error(" + std::to_string(code) + ")";
  } else {
    *text_out += name;
  }
}

std::string op_name(std::uint8_t operation) {
  switch (operation) {
    case kSockNotifyOpNone:
      return "NONE";
    case kSockNotifyOpEnable:
      return "ENABLE";
    case kSockNotifyOpDisable:
      return "DISABLE";
    case kSockNotifyOpRemove:
      return "REMOVE";
    default:
      return std::to_string(operation);
  }
}

// Builds one event: "name key=value ... -> result ...".
class Line {
 public:
  explicit Line(std::string_view name) : text_(name) {}

  Line& num(const char* key, std::uint64_t value) {
    field(key);
    text_ += std::to_string(value);
    return *this;
  }
  Line& num_signed(const char* key, std::int64_t value) {
    field(key);
    text_ += std::to_string(value);
    return *this;
  }
  Line& hex(const char* key, std::uint64_t value) {
    field(key);
    append_hex(value);
    return *this;
  }
  Line& error(const char* key, std::uint32_t code) {
    field(key);
    append_error(code);
    return *this;
  }
  Line& address(const char* key, const Ipv4Address& address) {
    field(key);
    append_address(address);
    return *this;
  }
  Line& text(const char* key, std::string_view value) {
    field(key);
    text_ += value;
    return *this;
  }
  // " -> " and the result's first word.
  Line& arrow(std::string_view result) {
    text_ += " -> ";
    text_ += result;
    return *this;
  }
  Line& arrow_num(std::int64_t result) { return arrow(std::to_string(result)); }
  Line& arrow_error(std::uint32_t code) {
    text_ += " -> ";
    append_error(code);
    return *this;
  }

  Line& entries(const OverlappedEntry* entries, std::uint32_t count) {
    field("entries");
    text_ += '[';
    for (std::uint32_t i = 0; i < count; ++i) {
      if (i > 0) {
        text_ += ',';
      }
      text_ += "key=" + std::to_string(entries[i].completion_key) + "/mask=";
      append_hex(entries[i].bytes_transferred);
    }
    text_ += ']';
    return *this;
  }
  Line& registrations(const SockNotifyRegistration* registrations, std::uint32_t count,
                      bool with_results) {
    field("regs");
    text_ += trace_registrations(registrations, count, with_results);
    return *this;
  }

  const std::string& str() const { return text_; }

 private:
  void field(const char* key) {
    text_ += ' ';
    text_ += key;
    text_ += '=';
  }
  void append_hex(std::uint64_t value) { readyport::append_hex(&text_, value); }
  void append_error(std::uint32_t code) { readyport::append_error(&text_, code); }
  void append_address(const Ipv4Address& address) {
    char buffer[32];
    const int size = std::snprintf(buffer, sizeof(buffer), "%u.%u.%u.%u:%u",
                                   static_cast<unsigned>((address.host >> 24) & 0xFF),
                                   static_cast<unsigned>((address.host >> 16) & 0xFF),
                                   static_cast<unsigned>((address.host >> 8) & 0xFF),
                                   static_cast<unsigned>(address.host & 0xFF),
                                   static_cast<unsigned>(address.port));
    READYPORT_ASSERT(size > 0 && static_cast<std::size_t>(size) < sizeof(buffer));
    text_.append(buffer, static_cast<std::size_t>(size));
  }
  std::string text_;
};

std::string socket_result(Socket s) {
  return s == kInvalidSocket ? std::string("INVALID_SOCKET") : std::to_string(s);
}

// "m<n>", built by appending: `"m" + std::to_string(n)` makes g++ 12 at -O2/-O3 warn
// -Wrestrict about its own inlined memcpy (a false positive, GCC bug 105651).
std::string mutex_name(std::uint32_t number) {
  std::string name(1, 'm');
  name += std::to_string(number);
  return name;
}

// A Mutex whose calls are recorded as m<n>.lock / m<n>.try_lock / m<n>.unlock.
class RecordingMutex final : public Mutex {
 public:
  RecordingMutex(RecordingOs& os, std::unique_ptr<Mutex> inner, std::uint32_t number)
      : os_(os), inner_(std::move(inner)), name_(mutex_name(number)) {}
  void lock() override {
    inner_->lock();
    os_.record(name_ + ".lock");
  }
  bool try_lock() override {
    const bool locked = inner_->try_lock();
    os_.record(Line(name_ + ".try_lock").arrow(locked ? "1" : "0").str());
    return locked;
  }
  void unlock() override {
    // Recorded before the inner unlock: once it is released another thread may record.
    os_.record(name_ + ".unlock");
    inner_->unlock();
  }

 private:
  RecordingOs& os_;
  std::unique_ptr<Mutex> inner_;
  const std::string name_;
};

// A Thread whose join is recorded as th<n>.join.
class RecordingThread final : public Thread {
 public:
  RecordingThread(RecordingOs& os, std::unique_ptr<Thread> inner, std::uint32_t number)
      : os_(os), inner_(std::move(inner)), name_("th" + std::to_string(number)) {}
  void join() override {
    inner_->join();
    os_.record(name_ + ".join");
  }

 private:
  RecordingOs& os_;
  std::unique_ptr<Thread> inner_;
  const std::string name_;
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

  void add(EffectPoint point, std::string line) {
    if (!at_effect_) {
      os_.record(line);
      return;
    }
    READYPORT_ASSERT(pending_.count < pending_.begins.size());
    PendingBegins::Begin& begin = pending_.begins[pending_.count++];
    begin.point = point;
    begin.line = std::move(line);
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

std::string trace_registrations(const SockNotifyRegistration* registrations, std::uint32_t count,
                                bool with_results) {
  if (registrations == nullptr) {
    return "null";
  }
  std::string text = "[";
  for (std::uint32_t i = 0; i < count; ++i) {
    const SockNotifyRegistration& r = registrations[i];
    if (i > 0) {
      text += ',';
    }
    text += "s=" + std::to_string(r.socket) + "/key=" + std::to_string(r.completion_key);
    text += "/filter=";
    append_hex(&text, r.event_filter);
    text += "/op=";
    text += op_name(r.operation);
    text += "/trig=";
    append_hex(&text, r.trigger_flags);
    if (!with_results) {
      continue;
    }
    text += "/res=";
    if (r.registration_result == 0) {
      text += '0';
    } else {
      append_error(&text, r.registration_result);
    }
  }
  text += ']';
  return text;
}

Port RecordingOs::create_io_completion_port(std::uint32_t concurrency) {
  const Port port = inner().create_io_completion_port(concurrency);
  record(Line("create_port")
             .num("concurrency", concurrency)
             .arrow_num(static_cast<std::int64_t>(port.value))
             .str());
  return port;
}

bool RecordingOs::close_port(Port port) {
  const bool closed = inner().close_port(port);
  record(Line("close_port").num("port", port.value).arrow(closed ? "1" : "0").str());
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
                   .registrations(registrations, registration_count, false)
                   .str());
  }
  if (completion_count > 0) {
    begins.add(EffectPoint::kDequeue, Line("dequeue.begin").num("port", port.value).str());
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
      line.entries(entries, std::min(*received_out, completion_count));
    }
  }
  record(line.str());
  return result;
}

bool RecordingOs::get_queued_completion_status_ex(Port port, OverlappedEntry* entries,
                                                  std::uint32_t count, std::uint32_t* removed_out,
                                                  std::uint32_t timeout_ms, bool alertable) {
  IntervalBegins begins(*this, begin_lines_);
  begins.add(EffectPoint::kDequeue, Line("dequeue.begin").num("port", port.value).str());
  const bool ok = inner().get_queued_completion_status_ex(port, entries, count, removed_out,
                                                          timeout_ms, alertable);
  begins.flush();
  Line line("gqcs");
  line.num("port", port.value).num("count", count).num("timeout", timeout_ms);
  line.num("alertable", alertable ? 1 : 0).arrow(ok ? "1" : "0");
  if (ok && removed_out != nullptr && entries != nullptr) {
    line.num("n", *removed_out).entries(entries, std::min(*removed_out, count));
  }
  record(line.str());
  return ok;
}

bool RecordingOs::post_queued_completion_status(Port port, std::uint32_t bytes_transferred,
                                                std::uintptr_t completion_key,
                                                std::uintptr_t overlapped) {
  Line line("post");
  line.num("port", port.value).hex("bytes", bytes_transferred).num("key", completion_key);
  IntervalBegins begins(*this, begin_lines_);
  begins.add(EffectPoint::kCall, "post.begin" + line.str().substr(4));
  const bool ok =
      inner().post_queued_completion_status(port, bytes_transferred, completion_key, overlapped);
  begins.flush();
  record(line.arrow(ok ? "1" : "0").str());
  return ok;
}

Socket RecordingOs::socket(int af, int type, int protocol) {
  const Socket s = inner().socket(af, type, protocol);
  record(Line("socket")
             .num_signed("af", af)
             .num_signed("type", type)
             .num_signed("proto", protocol)
             .arrow(socket_result(s))
             .str());
  return s;
}

int RecordingOs::bind(Socket s, const Ipv4Address& address) {
  const int result = inner().bind(s, address);
  record(Line("bind").num("s", s).address("addr", address).arrow_num(result).str());
  return result;
}

int RecordingOs::getsockname(Socket s, Ipv4Address* address_out) {
  const int result = inner().getsockname(s, address_out);
  Line line("getsockname");
  line.num("s", s).arrow_num(result);
  if (result == 0 && address_out != nullptr) {
    line.address("addr", *address_out);
  }
  record(line.str());
  return result;
}

int RecordingOs::listen(Socket s, int backlog) {
  const int result = inner().listen(s, backlog);
  record(Line("listen").num("s", s).num_signed("backlog", backlog).arrow_num(result).str());
  return result;
}

Socket RecordingOs::accept(Socket s, Ipv4Address* peer_out) {
  const Socket accepted = inner().accept(s, peer_out);
  Line line("accept");
  line.num("s", s).arrow(socket_result(accepted));
  if (accepted != kInvalidSocket && peer_out != nullptr) {
    line.address("peer", *peer_out);
  }
  record(line.str());
  return accepted;
}

int RecordingOs::connect(Socket s, const Ipv4Address& address) {
  const int result = inner().connect(s, address);
  record(Line("connect").num("s", s).address("addr", address).arrow_num(result).str());
  return result;
}

int RecordingOs::send(Socket s, const void* data, int length, int flags) {
  const int result = inner().send(s, data, length, flags);
  record(Line("send")
             .num("s", s)
             .num_signed("len", length)
             .num_signed("flags", flags)
             .arrow_num(result)
             .str());
  return result;
}

int RecordingOs::recv(Socket s, void* data, int length, int flags) {
  const int result = inner().recv(s, data, length, flags);
  record(Line("recv")
             .num("s", s)
             .num_signed("len", length)
             .num_signed("flags", flags)
             .arrow_num(result)
             .str());
  return result;
}

int RecordingOs::sendto(Socket s, const void* data, int length, int flags, const Ipv4Address& to) {
  const int result = inner().sendto(s, data, length, flags, to);
  record(Line("sendto")
             .num("s", s)
             .num_signed("len", length)
             .num_signed("flags", flags)
             .address("to", to)
             .arrow_num(result)
             .str());
  return result;
}

int RecordingOs::recvfrom(Socket s, void* data, int length, int flags, Ipv4Address* from_out) {
  const int result = inner().recvfrom(s, data, length, flags, from_out);
  Line line("recvfrom");
  line.num("s", s).num_signed("len", length).num_signed("flags", flags).arrow_num(result);
  if (result >= 0 && from_out != nullptr) {
    line.address("from", *from_out);
  }
  record(line.str());
  return result;
}

int RecordingOs::shutdown(Socket s, int how) {
  const int result = inner().shutdown(s, how);
  record(Line("shutdown").num("s", s).num_signed("how", how).arrow_num(result).str());
  return result;
}

int RecordingOs::closesocket(Socket s) {
  IntervalBegins begins(*this, begin_lines_);
  begins.add(EffectPoint::kCall, Line("closesocket.begin").num("s", s).str());
  const int result = inner().closesocket(s);
  begins.flush();
  record(Line("closesocket").num("s", s).arrow_num(result).str());
  return result;
}

int RecordingOs::set_nonblocking(Socket s, bool nonblocking) {
  const int result = inner().set_nonblocking(s, nonblocking);
  record(
      Line("set_nonblocking").num("s", s).num("on", nonblocking ? 1 : 0).arrow_num(result).str());
  return result;
}

int RecordingOs::set_linger(Socket s, bool enabled, std::uint16_t timeout_s) {
  const int result = inner().set_linger(s, enabled, timeout_s);
  record(Line("set_linger")
             .num("s", s)
             .num("on", enabled ? 1 : 0)
             .num("timeout", timeout_s)
             .arrow_num(result)
             .str());
  return result;
}

int RecordingOs::get_socket_error(Socket s, std::uint32_t* error_out) {
  const int result = inner().get_socket_error(s, error_out);
  Line line("get_socket_error");
  line.num("s", s).arrow_num(result);
  if (result == 0 && error_out != nullptr) {
    line.error("error", *error_out);
  }
  record(line.str());
  return result;
}

std::uint32_t RecordingOs::last_error() {
  const std::uint32_t code = inner().last_error();
  record(Line("last_error").arrow_error(code).str());
  return code;
}

std::unique_ptr<Mutex> RecordingOs::mutex_create() {
  std::unique_ptr<Mutex> created = inner().mutex_create();
  READYPORT_ASSERT(created != nullptr);
  const std::uint32_t number = mutexes_created_.fetch_add(1) + 1;
  record(Line("mutex_create").arrow(mutex_name(number)).str());
  return std::make_unique<RecordingMutex>(*this, std::move(created), number);
}

Result<std::unique_ptr<Thread>> RecordingOs::thread_start(std::string_view name,
                                                          std::function<void()> body) {
  Result<std::unique_ptr<Thread>> started = inner().thread_start(name, std::move(body));
  if (!started.ok()) {
    record(Line("thread_start")
               .text("name", name)
               .arrow(std::string("FAIL ") + status_code_name(started.status().code()))
               .str());
    return started;
  }
  const std::uint32_t number = threads_started_.fetch_add(1) + 1;
  record(Line("thread_start").text("name", name).arrow("th" + std::to_string(number)).str());
  return std::unique_ptr<Thread>(
      std::make_unique<RecordingThread>(*this, std::move(started).value(), number));
}

std::uint64_t RecordingOs::now_ns() {
  const std::uint64_t now = inner().now_ns();
  record(Line("now_ns").arrow(std::to_string(now)).str());
  return now;
}

void RecordingOs::sleep_ms(std::uint32_t duration_ms) {
  inner().sleep_ms(duration_ms);
  record(Line("sleep_ms").num("ms", duration_ms).str());
}

}  // namespace readyport
