// readyport/fake/trace_lines.hpp: the events a test world records beside the recorded calls: the
// workload's (`wl.*`, `phase`) and its handlers' (`hnd.*`), as values (trace_event.hpp). They are
// the oracle's input grammar (docs/oracle.md); every world writes them through these functions,
// so the grammar has one writer, beside the one reader (the oracle; trace_parse.hpp for text).
//
//   trace.record(context, workload_line_add(s, engine.add(s, interest, mode, handler)));
//
// The forms of an id ("slot/generation"), a mask ("0x1f") and a status ("ok" or its code's name)
// are shared with the observer's `obs.*` lines. Ownership: returns values (their texts are
// literals). Threading: pure functions. Errors: none.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "readyport/engine.hpp"
#include "readyport/fake/trace_event.hpp"
#include "readyport/status.hpp"

namespace readyport {

std::string trace_id_text(ConnId id);
std::string trace_hex_text(std::uint64_t value);
std::string trace_status_text(const Status& status);
// Adds the field `key`=<slot>/<generation>.
TraceEvent& trace_event_conn(TraceEvent& event, const TraceText& key, ConnId id);

// The workload's calls of the engine: written before (adding) and after (the rest) the call.
TraceEvent workload_line_adding(Socket s);
// The same with the registration's mode and interest (`mode=oneshot_level interest=0x1`): written
// by the boundary recorder (boundary_recorder.hpp), whose readers judge the embedder's handlers by
// their mode (embedder_oracle.hpp).
TraceEvent workload_line_adding(Socket s, Mode mode, std::uint32_t interest);
TraceEvent workload_line_add(Socket s, const Result<ConnId>& added);
TraceEvent workload_line_close(Socket s, ConnId id, const Status& status);
TraceEvent workload_line_notify(Socket s, ConnId id, std::uint32_t events, const Status& status);
TraceEvent workload_line_post(std::uint32_t task, const Status& status);
TraceEvent workload_line_task_run(std::uint32_t task);
// The task's run() returned (the boundary recorder's; the chaos workload writes none).
TraceEvent workload_line_task_end(std::uint32_t task);
// Written before the workload closes `s` itself, behind the engine's back.
TraceEvent workload_line_close_behind(Socket s);

// The engine's public calls, as intervals: `wl.begin <call>[ s=<s> id=<id>]` right before the
// call, and its end line right after it (wl.add, wl.close, wl.notify, wl.post, or
// `wl.end <call> -> <status>` for poll, run_worker and stop). add()'s begin is wl.adding. The
// oracle counts which calls' intervals overlapped (race coverage) and judges each result against
// what overlapped it (rule O13, docs/oracle.md). A world that writes no wl.begin gets neither.
enum class ApiCall : std::uint8_t { kAdd, kClose, kNotify, kPost, kPoll, kRunWorker, kStop };
inline constexpr std::size_t kApiCallCount = 7;
// "add", "close", "notify", "post", "poll", "run_worker", "stop".
std::string_view api_call_name(ApiCall call);
// For post, poll, run_worker and stop (add begins with wl.adding).
TraceEvent workload_line_begin(ApiCall call);
// For close and notify: the connection the call names.
TraceEvent workload_line_begin(ApiCall call, Socket s, ConnId id);
// The end of a poll, run_worker or stop: its status.
TraceEvent workload_line_end(ApiCall call, const Status& status);

// A handler's entry and return, and its on_closed. `s` is the socket the workload added the
// handler for; `arg_socket` the one the engine passed.
TraceEvent handler_line_enter(Socket s, ConnId id, Socket arg_socket, std::uint32_t events);
TraceEvent handler_line_leave(Socket s, std::uint32_t interest);
TraceEvent handler_line_closed(Socket s, ConnId id);
// on_closed returned (written after its body: until then close() and notify() of the id may still
// answer as for a connection that is closing, rule O13).
TraceEvent handler_line_closed_end(Socket s, ConnId id);
// `phase <phase>[ faults=on]`: the workload's phases (chaos, liveness, stop, end). `phase` must
// be a literal.
TraceEvent phase_line(std::string_view phase, bool faults_on = false);

}  // namespace readyport
