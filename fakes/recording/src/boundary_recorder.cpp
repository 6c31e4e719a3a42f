// The crossings between an engine and its embedder as trace lines. See boundary_recorder.hpp.
#include "readyport/fake/boundary_recorder.hpp"

#include "readyport/assert.hpp"
#include "readyport/fake/trace_lines.hpp"

namespace readyport {
namespace {

ApiCall api_call_of(EngineCall call) {
  switch (call) {
    case EngineCall::kAdd:
      return ApiCall::kAdd;
    case EngineCall::kClose:
      return ApiCall::kClose;
    case EngineCall::kNotify:
      return ApiCall::kNotify;
    case EngineCall::kPost:
      return ApiCall::kPost;
    case EngineCall::kPoll:
      return ApiCall::kPoll;
    case EngineCall::kRunWorker:
      return ApiCall::kRunWorker;
    case EngineCall::kStop:
      return ApiCall::kStop;
  }
  READYPORT_UNREACHABLE();
}

bool is_edge(Mode mode) { return mode == Mode::kPersistentEdge || mode == Mode::kOneshotEdge; }

}  // namespace

bool BoundaryRecorder::edge_registered(Socket s) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Added& pending : adding_) {
    if (pending.socket == s && pending.edge) {
      return true;
    }
  }
  for (const auto& [key, added] : added_) {
    if (added.socket == s && added.edge) {
      return true;
    }
  }
  return false;
}

void BoundaryRecorder::call_begin(const EngineCrossing& call) {
  switch (call.call) {
    case EngineCall::kAdd: {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        adding_.push_back(Added{call.socket, call.handler, is_edge(call.mode)});
      }
      record(workload_line_adding(call.socket, call.mode, call.interest));
      return;
    }
    case EngineCall::kClose:
    case EngineCall::kNotify:
      record(workload_line_begin(api_call_of(call.call), socket_of(call.id), call.id));
      return;
    case EngineCall::kPost:
    case EngineCall::kPoll:
    case EngineCall::kRunWorker:
    case EngineCall::kStop:
      record(workload_line_begin(api_call_of(call.call)));
      return;
  }
  READYPORT_UNREACHABLE();
}

void BoundaryRecorder::call_end(const EngineCrossing& call, const Status& status, ConnId added) {
  switch (call.call) {
    case EngineCall::kAdd: {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        for (auto it = adding_.begin(); it != adding_.end(); ++it) {
          if (it->socket == call.socket && it->handler == call.handler) {
            adding_.erase(it);
            break;
          }
        }
        if (status.ok()) {
          added_[key_of(added)] = Added{call.socket, call.handler, is_edge(call.mode)};
        }
      }
      record(workload_line_add(call.socket,
                               status.ok() ? Result<ConnId>(added) : Result<ConnId>(status)));
      return;
    }
    case EngineCall::kClose:
      record(workload_line_close(socket_of(call.id), call.id, status));
      return;
    case EngineCall::kNotify:
      record(workload_line_notify(socket_of(call.id), call.id, call.events, status));
      return;
    case EngineCall::kPost:
      READYPORT_ASSERT(call.task != nullptr);
      record(workload_line_post(task_number(*call.task), status));
      return;
    case EngineCall::kPoll:
    case EngineCall::kRunWorker:
    case EngineCall::kStop:
      record(workload_line_end(api_call_of(call.call), status));
      return;
  }
  READYPORT_UNREACHABLE();
}

Interest BoundaryRecorder::handler_events(Handler& handler, ConnId id, Socket socket,
                                          std::uint32_t events) noexcept {
  const Socket s = handler_socket(handler, id, socket);
  record(handler_line_enter(s, id, socket, events));
  const Interest result = handler.on_events(id, socket, events);
  record(handler_line_leave(s, result));
  return result;
}

void BoundaryRecorder::handler_closed(Handler& handler, ConnId id) noexcept {
  const Socket s = handler_socket(handler, id, kInvalidSocket);
  record(handler_line_closed(s, id));
  handler.on_closed(id);  // may destroy the handler: not used again
  record(handler_line_closed_end(s, id));
  std::lock_guard<std::mutex> lock(mutex_);
  added_.erase(key_of(id));
}

void BoundaryRecorder::task_run(Task& task) noexcept {
  const std::uint32_t number = task_number(task);
  record(workload_line_task_run(number));
  task.run();  // may destroy the task: not used again
  record(workload_line_task_end(number));
}

void BoundaryRecorder::engine_stopped(const EngineStats& stats) {
  std::lock_guard<std::mutex> lock(mutex_);
  stopped_.push_back(stats);
}

std::vector<EngineStats> BoundaryRecorder::stopped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stopped_;
}

Socket BoundaryRecorder::handler_socket(const Handler& handler, ConnId id, Socket argument) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (const auto it = added_.find(key_of(id)); it != added_.end()) {
    return it->second.handler == &handler ? it->second.socket : kInvalidSocket;
  }
  // Entered before its add() returned (engine.hpp allows it): the add() begun with this handler
  // (and this socket, when one handler is being added for several).
  Socket found = kInvalidSocket;
  for (const Added& pending : adding_) {
    if (pending.handler != &handler) {
      continue;
    }
    if (pending.socket == argument) {
      return argument;
    }
    if (found == kInvalidSocket) {
      found = pending.socket;
    }
  }
  return found;
}

Socket BoundaryRecorder::socket_of(ConnId id) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = added_.find(key_of(id));
  return it == added_.end() ? kInvalidSocket : it->second.socket;
}

std::uint32_t BoundaryRecorder::task_number(const Task& task) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto [it, inserted] = tasks_.emplace(&task, static_cast<std::uint32_t>(tasks_.size() + 1));
  (void)inserted;
  return it->second;
}

}  // namespace readyport
