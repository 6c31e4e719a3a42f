// stress/trace_header.hpp: the first line of a trace file says how the trace was made, so that
// --check-trace judges it as what it is, never by a flag the reader must remember:
//
//   # readyport-trace format=1 runtime=free os=fake commit=85d8eff992c9 canary=none
//
// runtime: sim (SimScheduler: every rule judged) or free (real threads); os: fake or windows
// (WindowsOs: real threads). A trace from real threads is judged with the oracle's real-thread
// mode (OracleOptions::calls_may_lag). The header is written by readyport-stress with the text
// (--trace-out, a failure's seed-<S>.trace); it is not part of the trace hash, which covers the
// recorded lines only.
//
//   std::string text = stress_trace_header_line(options) + report.trace_text;
//   Result<StressTraceHeader> header = stress_trace_header_parse(text);   // has == false: none
//
// Ownership: values. Threading: reentrant. Errors: a header line that does not parse is
// kInvalidArgument naming the field.
#pragma once

#include <string>
#include <string_view>

#include "readyport/status.hpp"
#include "stress_options.hpp"

namespace readyport {

inline constexpr std::string_view kStressTraceHeaderPrefix = "# readyport-trace ";

struct StressTraceHeader {
  bool has = false;  // the text began with a header line
  StressRuntime runtime = StressRuntime::kSim;
  StressOs os = StressOs::kFake;
  std::string commit;
  std::string canary;
  std::size_t length = 0;  // the header line's bytes, '\n' included: the trace starts after them
};

// The header line of a trace recorded under `options` by this build, '\n' included.
std::string stress_trace_header_line(const StressOptions& options);
// The header at the start of `text`, if any.
Result<StressTraceHeader> stress_trace_header_parse(std::string_view text);
// Whether a trace with this header comes from real threads.
inline bool stress_trace_header_real_threads(const StressTraceHeader& header) {
  return header.runtime == StressRuntime::kFree || header.os == StressOs::kWindows;
}

}  // namespace readyport
