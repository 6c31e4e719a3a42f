// The workload's and handlers' trace lines. See trace_lines.hpp.
#include "readyport/fake/trace_lines.hpp"

#include <cstdio>

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

std::string workload_line_adding(Socket s) { return "wl.adding s=" + std::to_string(s); }

std::string workload_line_add(Socket s, const Result<ConnId>& added) {
  return "wl.add s=" + std::to_string(s) + " -> " +
         (added.ok() ? "ok id=" + trace_id_text(added.value())
                     : std::string(status_code_name(added.status().code())));
}

std::string workload_line_close(Socket s, ConnId id, const Status& status) {
  return "wl.close s=" + std::to_string(s) + " id=" + trace_id_text(id) + " -> " +
         trace_status_text(status);
}

std::string workload_line_notify(Socket s, ConnId id, std::uint32_t events, const Status& status) {
  return "wl.notify s=" + std::to_string(s) + " id=" + trace_id_text(id) +
         " ev=" + trace_hex_text(events) + " -> " + trace_status_text(status);
}

std::string workload_line_post(std::uint32_t task, const Status& status) {
  return "wl.post task=" + std::to_string(task) + " -> " + trace_status_text(status);
}

std::string workload_line_task_run(std::uint32_t task) {
  return "wl.task_run task=" + std::to_string(task);
}

std::string workload_line_close_behind(Socket s) {
  return "wl.close_behind s=" + std::to_string(s);
}

std::string handler_line_enter(Socket s, ConnId id, Socket arg_socket, std::uint32_t events) {
  return "hnd.enter s=" + std::to_string(s) + " id=" + trace_id_text(id) +
         " arg_s=" + std::to_string(arg_socket) + " ev=" + trace_hex_text(events);
}

std::string handler_line_leave(Socket s, std::uint32_t interest) {
  return "hnd.leave s=" + std::to_string(s) + " ret=" + trace_hex_text(interest);
}

std::string handler_line_closed(Socket s, ConnId id) {
  return "hnd.closed s=" + std::to_string(s) + " id=" + trace_id_text(id);
}

}  // namespace readyport
