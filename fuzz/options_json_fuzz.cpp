// fuzz/options_json_fuzz.cpp: the run options as JSON (stress/files/options_json.hpp) and the field
// readers under them (stress/files/json_fields.hpp), on any text: the document is parsed
// (json_parse_document), read as a run options object (stress_run_options_from_json), and read as
// the document that holds them ({"seed": .., "options": {..}}: stress_seed_and_options_from_json),
// as bundles and corpus entries read them.
//
// Contract: options, or a kInvalidArgument Status naming the field (a misspelt key, a wrong type,
// a number out of range, a bad fault plan) or saying the text is not JSON; never a crash, a
// sanitizer report (nlohmann's exceptions included: the readers check types before reading) or a
// hang. Checked here as well: accepted options survive their writer and reader (fuzz_json.hpp).
// Input: a JSON text. Corpus: the options objects of bundles and corpus entries, and whole
// entries (fuzz/corpus/options_json/); dictionary fuzz/dict/json.dict.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "files/json_fields.hpp"
#include "fuzz_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace readyport;
  const std::string_view text = fuzz::fuzz_text(data, size);
  const Result<Json> document = json_parse_document(text, "fuzz.json");
  if (!document.ok()) {
    fuzz::fuzz_check_refusal(document.status(), "json_parse_document refuses with a message");
    return 0;
  }
  const Result<StressOptions> options =
      stress_run_options_from_json(document.value(), "fuzz.options");
  if (options.ok()) {
    fuzz::fuzz_check_run_options(options.value(), 1);
  } else {
    fuzz::fuzz_check_refusal(options.status(), "stress_run_options_from_json refuses");
  }
  std::uint64_t seed = 0;
  StressOptions held;
  const Status status = stress_seed_and_options_from_json(document.value(), "fuzz", &seed, &held);
  if (status.ok()) {
    fuzz::fuzz_check_run_options(held, seed);
  } else {
    fuzz::fuzz_check_refusal(status, "stress_seed_and_options_from_json refuses");
  }
  return 0;
}
