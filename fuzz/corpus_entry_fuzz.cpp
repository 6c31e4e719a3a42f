// fuzz/corpus_entry_fuzz.cpp: the regression corpus reader (stress_corpus_entry_parse,
// stress/files/corpus.hpp), which the main job and ctest stress.corpus run on every file of
// stress/corpus/, on any file.
//
// Contract: an entry, or a kInvalidArgument Status naming the file and the field, never a crash,
// a sanitizer report, a hang or unbounded memory (the loader reads at most
// kStressCorpusEntryBytesMax a file). Checked here as well: an entry the reader accepted (a corpus
// entry or a failure bundle) written back as a corpus entry (stress_corpus_entry_json) reads back
// the same: seed, options, expected canary, signature and why; and its run options survive their
// writer and reader (fuzz_json.hpp).
// Input: an entry file's bytes. Corpus: the entries of stress/corpus/ and bundles
// (fuzz/corpus/corpus_entry/); dictionary fuzz/dict/json.dict.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "files/corpus.hpp"
#include "fuzz_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace readyport;
  const std::string_view text = fuzz::fuzz_text(data, size);
  if (text.size() > kStressCorpusEntryBytesMax) {
    return 0;  // stress_corpus_load refuses it before any parsing
  }
  const Result<StressCorpusEntry> entry = stress_corpus_entry_parse(text, "fuzz.json");
  if (!entry.ok()) {
    fuzz::fuzz_check_refusal(entry.status(), "stress_corpus_entry_parse refuses with a message");
    return 0;
  }
  const StressCorpusEntry& e = entry.value();
  fuzz::fuzz_check_run_options(e.options, e.seed);
  const std::string written = stress_corpus_entry_json(e).dump(2);
  const Result<StressCorpusEntry> back = stress_corpus_entry_parse(written, "fuzz.json");
  fuzz::fuzz_require(back.ok(), "a written entry reads back", back.status().message());
  const StressCorpusEntry& b = back.value();
  fuzz::fuzz_require(b.seed == e.seed && b.expect_canary == e.expect_canary &&
                         b.signature == e.signature && b.why == e.why,
                     "a written entry reads back the same", written);
  fuzz::fuzz_require(stress_run_flags(b.options, b.seed) == stress_run_flags(e.options, e.seed),
                     "a written entry's options read back the same", written);
  return 0;
}
