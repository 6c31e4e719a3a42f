// The workload's and handlers' trace lines. See trace_lines.hpp.
#include "readyport/fake/trace_lines.hpp"

#include <cstdio>
#include <utility>

#include "readyport/assert.hpp"

namespace readyport {

std::string trace_id_text(ConnId id) {
  return std::to_string(id.slot) + "/" + std::to_string(id.generation);
}

std::string trace_hex_text(std::uint64_t value) {
  char text[24];
  const int size =
      std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
  return std::string(text, static_cast<std::size_t>(size > 0 ? size : 0));
}

std::string trace_status_text(const Status& status) {
  return status.ok() ? "ok" : status_code_name(status.code());
}

namespace {

TraceValue status_value(const Status& status) {
  return TraceValue::of_text(status.ok() ? "ok" : status_code_name(status.code()));
}

}  // namespace

TraceEvent& trace_event_conn(TraceEvent& event, const TraceText& key, ConnId id) {
  return event.id(key, id.slot, id.generation);
}

TraceEvent workload_line_adding(Socket s) {
  TraceEvent event("wl.adding");
  event.num("s", s);
  return event;
}

TraceEvent workload_line_adding(Socket s, Mode mode, std::uint32_t interest) {
  TraceEvent event("wl.adding");
  event.num("s", s).text("mode", mode_name(mode)).hex("interest", interest);
  return event;
}

TraceEvent workload_line_add(Socket s, const Result<ConnId>& added) {
  TraceEvent event("wl.add");
  event.num("s", s);
  if (!added.ok()) {
    event.arrow_text(status_code_name(added.status().code()));
    return event;
  }
  event.arrow_text("ok");
  return std::move(trace_event_conn(event, "id", added.value()));
}

TraceEvent workload_line_close(Socket s, ConnId id, const Status& status) {
  TraceEvent event("wl.close");
  trace_event_conn(event.num("s", s), "id", id).arrow(status_value(status));
  return event;
}

TraceEvent workload_line_notify(Socket s, ConnId id, std::uint32_t events, const Status& status) {
  TraceEvent event("wl.notify");
  trace_event_conn(event.num("s", s), "id", id).hex("ev", events).arrow(status_value(status));
  return event;
}

TraceEvent workload_line_post(std::uint32_t task, const Status& status) {
  TraceEvent event("wl.post");
  event.num("task", task).arrow(status_value(status));
  return event;
}

std::string_view api_call_name(ApiCall call) {
  switch (call) {
    case ApiCall::kAdd:
      return "add";
    case ApiCall::kClose:
      return "close";
    case ApiCall::kNotify:
      return "notify";
    case ApiCall::kPost:
      return "post";
    case ApiCall::kPoll:
      return "poll";
    case ApiCall::kRunWorker:
      return "run_worker";
    case ApiCall::kStop:
      return "stop";
  }
  READYPORT_UNREACHABLE();
}

TraceEvent workload_line_begin(ApiCall call) {
  READYPORT_ASSERT(call != ApiCall::kAdd && call != ApiCall::kClose && call != ApiCall::kNotify);
  TraceEvent event("wl.begin");
  event.word(api_call_name(call));
  return event;
}

TraceEvent workload_line_begin(ApiCall call, Socket s, ConnId id) {
  READYPORT_ASSERT(call == ApiCall::kClose || call == ApiCall::kNotify);
  TraceEvent event("wl.begin");
  event.word(api_call_name(call));
  trace_event_conn(event.num("s", s), "id", id);
  return event;
}

TraceEvent workload_line_end(ApiCall call, const Status& status) {
  READYPORT_ASSERT(call == ApiCall::kPoll || call == ApiCall::kRunWorker || call == ApiCall::kStop);
  TraceEvent event("wl.end");
  event.word(api_call_name(call)).arrow(status_value(status));
  return event;
}

TraceEvent workload_line_task_run(std::uint32_t task) {
  TraceEvent event("wl.task_run");
  event.num("task", task);
  return event;
}

TraceEvent workload_line_task_end(std::uint32_t task) {
  TraceEvent event("wl.task_end");
  event.num("task", task);
  return event;
}

TraceEvent workload_line_close_behind(Socket s) {
  TraceEvent event("wl.close_behind");
  event.num("s", s);
  return event;
}

TraceEvent handler_line_enter(Socket s, ConnId id, Socket arg_socket, std::uint32_t events) {
  TraceEvent event("hnd.enter");
  trace_event_conn(event.num("s", s), "id", id).num("arg_s", arg_socket).hex("ev", events);
  return event;
}

TraceEvent handler_line_leave(Socket s, std::uint32_t interest) {
  TraceEvent event("hnd.leave");
  event.num("s", s).hex("ret", interest);
  return event;
}

TraceEvent handler_line_closed(Socket s, ConnId id) {
  TraceEvent event("hnd.closed");
  trace_event_conn(event.num("s", s), "id", id);
  return event;
}

TraceEvent handler_line_closed_end(Socket s, ConnId id) {
  TraceEvent event("hnd.closed_end");
  trace_event_conn(event.num("s", s), "id", id);
  return event;
}

TraceEvent phase_line(std::string_view phase, bool faults_on) {
  TraceEvent event("phase");
  event.word(phase);
  if (faults_on) {
    event.text("faults", "on");
  }
  return event;
}

}  // namespace readyport
