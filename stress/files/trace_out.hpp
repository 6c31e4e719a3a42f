// stress/files/trace_out.hpp: `--trace-out FILE [--trace-format text|chrome]`: one seed's full
// trace written as recorded, after its header line (trace_header.hpp: the text --check-trace
// reads), or as Chrome trace-event JSON for Perfetto (stress/chrome_trace/: one track per simulated
// thread, seam calls as slices, faults and scheduler decisions as instant events).
//
//   Status s = stress_trace_write("s5.json", StressTraceFormat::kChrome, report.trace_text,
//                                 options, &report.parameters.fake);   // as recorded (fake:
//                                                                      // null when none)
//
// Ownership: none kept. Threading: reentrant. Errors: the converter's (a malformed line) or the
// file's (stress_file_write); on a conversion error nothing is written.
#pragma once

#include <string>
#include <string_view>

#include "cli/stress_options.hpp"
#include "readyport/fake/fake_options.hpp"
#include "readyport/status.hpp"

namespace readyport {

Status stress_trace_write(const std::string& path, StressTraceFormat format, std::string_view text,
                          const StressOptions& recorded_under, const FakeOptions* fake);

}  // namespace readyport
