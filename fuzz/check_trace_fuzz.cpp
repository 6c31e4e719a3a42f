// fuzz/check_trace_fuzz.cpp: the whole `readyport-stress --check-trace FILE` path on any file:
// the header line (stress/files/trace_header.hpp), then every line read by the LifetimeOracle
// (observe_text) and its end-of-trace judgement (finish, or finish_cut for a run cut by an abort),
// as check_trace() in stress/cli/stress_main.cpp does them, without the printing; for a harness's
// trace (world=embedder) the EmbedderOracle's judgement of the embedder's code too.
//
// Contract: a header that does not parse is a kInvalidArgument Status with a message; anything
// after it gets a judgement: ok, or a violation (kInternal with a sentence naming the rule or the
// unparsable line), never a crash, a sanitizer report, a hang or memory beyond what the oracle's
// bounds allow. Checked here as well: the header's length lies within the text; the oracle reads
// no more lines than the text has; finish() once more gives the same verdict; the reports a
// verdict prints (the rules' text, the coverage rows, the open connections) can be made; and the
// same lines given one by one (on_trace_line, each line's copy freed after its call) are judged
// the same, with nothing kept pointing into a freed line.
// Input: a trace file's bytes (the file reader's own limit, 4 GiB, is far above any fuzz input).
// Corpus: traces readyport-stress writes (--trace-out), cut short, and their headers
// (fuzz/corpus/check_trace/); dictionary fuzz/dict/trace.dict.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "files/trace_header.hpp"
#include "fuzz_support.hpp"
#include "readyport/fake/embedder_oracle.hpp"
#include "readyport/fake/lifetime_oracle.hpp"

namespace readyport::fuzz {
namespace {

// The judgement of the lines after the header, as check_trace() makes it.
void judge(std::string_view text, const StressTraceHeader& header) {
  fuzz_require(header.length <= text.size(), "the header's length lies within the text");
  const std::string_view lines = text.substr(header.length);
  LifetimeOracle oracle;
  oracle.observe_text(lines);
  const bool cut = header.has && header.cut;
  const Status verdict = cut ? oracle.finish_cut() : oracle.finish();
  fuzz_require(verdict.ok() || verdict.code() == StatusCode::kInternal,
               "a verdict is ok or a violation", verdict.to_string());
  fuzz_require_error(verdict, "LifetimeOracle::finish");
  const Status again = oracle.finish();
  fuzz_require(again.code() == verdict.code() && again.message() == verdict.message(),
               "finish() once more gives the same verdict");
  const OracleCounts counts = oracle.counts();
  const auto newlines = static_cast<std::uint64_t>(std::count(lines.begin(), lines.end(), '\n'));
  fuzz_require(counts.lines <= newlines + 1, "the oracle reads no more lines than the text has");
  (void)oracle_rules_text(counts.judgement);
  (void)oracle_bounds_text(counts.judgement.bounds_hit);
  (void)oracle.coverage();
  std::string open;
  (void)oracle.try_describe_open(&open);
}

// A harness's trace: the EmbedderOracle over the same lines, as check_trace_embedder() judges it.
void judge_embedder(std::string_view text, const StressTraceHeader& header) {
  EmbedderOracle embedder(/*exact=*/!stress_trace_header_real_threads(header));
  embedder.observe_text(text.substr(header.length));
  const Status verdict = embedder.finish(/*run_completed=*/!header.cut);
  fuzz_require(verdict.ok() || verdict.code() == StatusCode::kInternal,
               "an embedder verdict is ok or a violation", verdict.to_string());
  fuzz_require_error(verdict, "EmbedderOracle::finish");
  const EmbedderCounts counts = embedder.counts();
  (void)embedder_judgement_headline(counts.judgement);
  (void)embedder_rules_text(counts.judgement);
}

// The same lines given one at a time (on_trace_line, as a sink is given them), each from a copy
// freed once the call returns: the oracle keeps nothing that points into a line it was given
// (AddressSanitizer reports a use after free if it does), and it judges as observe_text does.
void judge_line_by_line(std::string_view text, const StressTraceHeader& header) {
  LifetimeOracle whole;
  whole.observe_text(text.substr(header.length));
  LifetimeOracle oracle;
  for (const std::string& line : fuzz_split(text.substr(header.length), '\n')) {
    if (line.empty() || line == "\r") {
      continue;  // observe_text skips them
    }
    const auto copy = std::make_unique<std::string>(line);
    oracle.on_trace_line(*copy);
  }
  const bool cut = header.has && header.cut;
  const Status verdict = cut ? oracle.finish_cut() : oracle.finish();
  const Status expected = cut ? whole.finish_cut() : whole.finish();
  fuzz_require(verdict.code() == expected.code() && verdict.message() == expected.message(),
               "line by line, the oracle judges as it judges the whole text",
               verdict.to_string() + " vs " + expected.to_string());
  fuzz_require(oracle.counts().lines == whole.counts().lines, "line by line, the same lines");
}

}  // namespace
}  // namespace readyport::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace readyport;
  const std::string_view text = fuzz::fuzz_text(data, size);
  const Result<StressTraceHeader> header = stress_trace_header_parse(text);
  if (!header.ok()) {
    fuzz::fuzz_require(header.status().code() == StatusCode::kInvalidArgument,
                       "a bad header is kInvalidArgument", header.status().to_string());
    fuzz::fuzz_require_error(header.status(), "stress_trace_header_parse");
    return 0;  // check_trace() exits 2 here: the trace is not judged
  }
  fuzz::judge(text, header.value());
  if (header.value().embedder) {
    fuzz::judge_embedder(text, header.value());
  }
  fuzz::judge_line_by_line(text, header.value());
  return 0;
}
