// fuzz/bundle_fuzz.cpp: the failure bundle reader, `readyport-stress --replay FILE`'s first step
// (stress_bundle_parse, stress/files/bundle.hpp), on any file.
//
// Contract: a bundle, or a kInvalidArgument Status naming the file and the field (or saying the
// text is not JSON), never a crash, a sanitizer report, a hang or unbounded memory (the reader's
// own limit, kStressBundleBytesMax, is far above any fuzz input). Checked here as well: the run
// options a bundle holds survive their writer and reader (fuzz_json.hpp); an exploration's
// bundle names a known small world or is refused later by --replay, but always holds a schedule
// of thread ids and commas; and the corpus reader, which takes a bundle as an entry, agrees: it
// accepts what this reader accepts, with the same seed and options.
// Input: a bundle file's bytes. Corpus: bundles readyport-stress writes (failing seeds, shrunk
// cases, explorations; fuzz/corpus/bundle/); dictionary fuzz/dict/json.dict.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "files/bundle.hpp"
#include "files/corpus.hpp"
#include "fuzz_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace readyport;
  const std::string_view text = fuzz::fuzz_text(data, size);
  if (text.size() > kStressBundleBytesMax) {
    return 0;  // stress_file_read refuses it before any parsing
  }
  const Result<StressBundle> bundle = stress_bundle_parse(text, "fuzz.json");
  if (!bundle.ok()) {
    fuzz::fuzz_check_refusal(bundle.status(), "stress_bundle_parse refuses with a message");
    return 0;
  }
  const StressBundle& b = bundle.value();
  fuzz::fuzz_check_run_options(b.options, b.seed);
  if (!b.explore_world.empty()) {
    fuzz::fuzz_require(!b.explore_schedule.empty() &&
                           b.explore_schedule.find_first_not_of("0123456789,") == std::string::npos,
                       "an exploration's bundle holds a schedule of thread ids and commas",
                       b.explore_schedule);
  }
  const Result<StressCorpusEntry> entry = stress_corpus_entry_parse(text, "fuzz.json");
  fuzz::fuzz_require(entry.ok(), "the corpus reader takes what the bundle reader takes",
                     entry.status().message());
  fuzz::fuzz_require(entry.value().seed == b.seed, "the corpus reader reads the bundle's seed");
  fuzz::fuzz_require(
      stress_run_flags(entry.value().options, b.seed) == stress_run_flags(b.options, b.seed),
      "the corpus reader reads the bundle's options");
  return 0;
}
