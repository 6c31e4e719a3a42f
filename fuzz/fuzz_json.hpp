// fuzz/fuzz_json.hpp: the checks the JSON targets (bundle, corpus entry, options) share.
//
// A bundle, a corpus entry and an options object all carry the run options
// (stress/files/options_json.hpp). Whatever a reader accepted must come back the same through the
// writer: fuzz_check_run_options() writes the options, reads them back and compares the flags
// that replay them (stress_run_flags) and the Os; a mismatch is a finding.
//
// Ownership: none kept. Threading: the fuzzer's thread. Errors: a broken property aborts
// (fuzz_support.hpp).
#pragma once

#include <string>

#include "cli/stress_options.hpp"
#include "files/options_json.hpp"
#include "fuzz_support.hpp"

namespace readyport::fuzz {

// `options`, as a reader accepted them, survive their writer and reader unchanged.
inline void fuzz_check_run_options(const StressOptions& options, std::uint64_t seed) {
  const Json written = stress_run_options_json(options);
  const Result<StressOptions> back = stress_run_options_from_json(written, "fuzz.options");
  fuzz_require(back.ok(), "written run options read back", back.status().message());
  const std::string flags = stress_run_flags(options, seed);
  fuzz_require(stress_run_flags(back.value(), seed) == flags,
               "run options read back replay the same", flags);
  fuzz_require(back.value().os == options.os, "run options read back keep the Os");
}

// A reader's refusal of a document: kInvalidArgument with a message.
inline void fuzz_check_refusal(const Status& status, const char* what) {
  fuzz_require(status.code() == StatusCode::kInvalidArgument, what, status.to_string());
  fuzz_require_error(status, what);
}

}  // namespace readyport::fuzz
