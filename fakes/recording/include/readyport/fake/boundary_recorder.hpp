// readyport/fake/boundary_recorder.hpp: BoundaryRecorder, the EngineBoundary (engine_boundary.hpp)
// of a test world: it writes every crossing between an engine and its embedder to the trace, in the
// oracle's grammar (trace_lines.hpp), so that an embedder's own server is judged like the chaos
// workload, whose handlers write those lines themselves:
//
//   a public call       wl.adding s= mode= interest= .. wl.add s= -> ok id=   (add)
//                       wl.begin close s= id= .. wl.close s= id= -> ok       (close; notify alike)
//                       wl.begin post .. wl.post task= -> ok; wl.begin poll .. wl.end poll -> ok
//   a handler           hnd.enter s= id= arg_s= ev= .. (the embedder's code) .. hnd.leave s= -> ret
//   on_closed           hnd.closed s= id= .. hnd.closed_end s= id=
//   a task              wl.task_run task= .. wl.task_end task=
//
// Between a callback's two lines every seam call of that thread is the embedder's; between a
// public call's two lines (outside a callback) it is the engine's (embedder_oracle.hpp). `s` in a
// handler's lines is the socket add() was given for the id the engine passed, with that handler; a
// handler the engine calls for an id added with another handler gets s=INVALID_SOCKET (the
// oracle's O4 names it). A task is numbered by its object, in the order of first post().
//
//   readyport::BoundaryRecorder recorder(trace, context);   // RecordingOs::set_boundary(&recorder)
//
// Ownership: borrows the trace and the context, which outlive it; it outlives every engine that
// uses it. Threading: any thread, several at once (one std::mutex around its maps, never held
// across a call out: not a scheduling point). Memory: one entry per connection from add() to the
// end of its on_closed, one per task object, one per stopped engine. Errors: none.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "readyport/engine.hpp"
#include "readyport/engine_boundary.hpp"
#include "readyport/fake/trace.hpp"

namespace readyport {

class BoundaryRecorder final : public EngineBoundary {
 public:
  // `observer`: what observer() answers (the world's TraceObserver; may be null).
  BoundaryRecorder(Trace& trace, const TraceContext& context, EngineObserver* observer = nullptr)
      : trace_(trace), context_(context), observer_(observer) {}
  BoundaryRecorder(const BoundaryRecorder&) = delete;
  BoundaryRecorder& operator=(const BoundaryRecorder&) = delete;

  void call_begin(const EngineCrossing& call) override;
  void call_end(const EngineCrossing& call, const Status& status, ConnId added) override;
  Interest handler_events(Handler& handler, ConnId id, Socket socket,
                          std::uint32_t events) noexcept override;
  void handler_closed(Handler& handler, ConnId id) noexcept override;
  void task_run(Task& task) noexcept override;
  void engine_stopped(const EngineStats& stats) override;
  EngineObserver* observer() override { return observer_; }

  // Each engine's counters when its stop() returned ok, in that order.
  std::vector<EngineStats> stopped() const;
  // Whether `s` is being added, or was added and its on_closed has not returned, in an
  // edge-triggered mode (for FaultyOs::set_stale_veto). Never blocks for long; no seam call.
  bool edge_registered(Socket s) const;

 private:
  struct Added {
    Socket socket = kInvalidSocket;
    Handler* handler = nullptr;
    bool edge = false;
  };
  static std::uint64_t key_of(ConnId id) { return (std::uint64_t{id.slot} << 32) | id.generation; }
  void record(TraceEvent&& event) { trace_.record(context_, event); }
  // The socket a handler line names (see the top).
  Socket handler_socket(const Handler& handler, ConnId id, Socket argument);
  // The socket add() was given for `id`, or INVALID_SOCKET once its on_closed returned.
  Socket socket_of(ConnId id);
  std::uint32_t task_number(const Task& task);

  Trace& trace_;
  const TraceContext& context_;
  EngineObserver* const observer_;
  mutable std::mutex mutex_;
  std::map<std::uint64_t, Added> added_;        // by id, from add()'s ok to on_closed's return
  std::vector<Added> adding_;                   // add() calls begun and not returned
  std::map<const Task*, std::uint32_t> tasks_;  // looked up only, never iterated
  std::vector<EngineStats> stopped_;
};

}  // namespace readyport
