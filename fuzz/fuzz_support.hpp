// fuzz/fuzz_support.hpp: what every libFuzzer target of fuzz/ shares (fuzz/README.md).
//
// Each target hands libFuzzer's bytes to one reader of the tools and checks its contract: a clear
// error (a Status naming what is wrong) or a judgement, never a crash, a hang, a sanitizer report
// or unbounded memory. The sanitizers, libFuzzer's -timeout and -rss_limit_mb catch the last
// three; fuzz_require() checks what the reader promises beyond them (a round trip, an error with
// a message, two readers of one format agreeing).
//
//   extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
//     const std::string_view text = readyport::fuzz::fuzz_text(data, size);
//     readyport::Result<readyport::FaultPlan> plan = readyport::FaultPlan::parse(text);
//     readyport::fuzz::fuzz_require_error(plan.status(), "FaultPlan::parse");
//     return 0;
//   }
//
// Ownership: none kept. Threading: the fuzzer's thread only. Errors: a broken property prints what
// broke and aborts, which libFuzzer reports as a crash and keeps the input (crash-<sha1>).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "readyport/status.hpp"

namespace readyport::fuzz {

// The input as text (any bytes, NULs included).
inline std::string_view fuzz_text(const std::uint8_t* data, std::size_t size) {
  return size == 0 ? std::string_view()
                   : std::string_view(reinterpret_cast<const char*>(data), size);
}

// A property of the contract: when it does not hold, prints `what` and `detail` and aborts.
inline void fuzz_require(bool holds, const char* what, std::string_view detail = {}) {
  if (holds) {
    return;
  }
  std::fprintf(stderr, "fuzz: property broken: %s%s%.*s\n", what, detail.empty() ? "" : ": ",
               static_cast<int>(detail.size()), detail.data());
  std::fflush(stderr);
  std::abort();
}

// A refusal must say why: not ok implies a message (an ok status passes).
inline void fuzz_require_error(const Status& status, const char* what) {
  fuzz_require(status.ok() || !status.message().empty(), what, "an error without a message");
}

// `text` cut at `separator` into its pieces, empty ones kept ("a\n\nb" -> "a", "", "b").
inline std::vector<std::string> fuzz_split(std::string_view text, char separator) {
  std::vector<std::string> pieces;
  while (true) {
    const std::size_t at = text.find(separator);
    pieces.emplace_back(text.substr(0, at));
    if (at == std::string_view::npos) {
      return pieces;
    }
    text.remove_prefix(at + 1);
  }
}

}  // namespace readyport::fuzz
