// stress/files/corpus.hpp: the regression corpus (stress/corpus/, docs/replay.md): seeds that found
// real bugs and each canary's minimal case, replayed by the main job before its seed range
// (`--corpus DIR|none`) and by ctest stress.corpus (each entry through --replay).
//
// An entry is one small JSON file, `<name>.json`:
//   {"format": "readyport-stress-corpus", "format_version": 1,
//    "seed": 251,
//    "options": {...the run options, options_json.hpp: every key, so it replays the same case...},
//    "expect_canary": "",    // the canary (cmake/canary.cmake) whose build must fail it, or ""
//    "signature": "",        // with expect_canary: the failure it shrank to there, e.g. "O2"
//    "why": "what it found, in which commit"}
// In a build without a canary, and in any other canary's build, every entry must pass. A failure
// bundle (bundle.hpp) dropped into the directory is an entry too (its seed and options; the bug
// it recorded is expected to be fixed).
//
//   Result<std::vector<StressCorpusEntry>> entries = stress_corpus_load(dir);
//
// Ownership: values. Threading: reentrant. Errors: kNotFound for a missing directory;
// kInvalidArgument naming the file and field of a bad entry; kResourceExhausted past the limits.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cli/stress_options.hpp"
#include "files/json_fields.hpp"
#include "readyport/status.hpp"

namespace readyport {

inline constexpr const char* kStressCorpusFormat = "readyport-stress-corpus";
inline constexpr std::uint64_t kStressCorpusFormatVersion = 1;
// Limits: entries per directory, bytes per entry.
inline constexpr std::size_t kStressCorpusEntriesMax = 1000;
inline constexpr std::uint64_t kStressCorpusEntryBytesMax = 1u << 20;

struct StressCorpusEntry {
  std::string name;  // the file name, "seed-251.json"
  std::string path;  // as opened
  std::uint64_t seed = 0;
  StressOptions options;      // the run options; the rest at their defaults
  std::string expect_canary;  // "" or a name of cmake/canary.cmake's list
  std::string signature;      // "" or the failure's signature in that canary's build
  std::string why;
};

// The source tree's stress/corpus (a compile definition), for --corpus's default.
std::string stress_corpus_default_dir();

// Parses one entry (or a bundle). `name` is the file name.
Result<StressCorpusEntry> stress_corpus_entry_parse(std::string_view text, std::string_view name);
Result<StressCorpusEntry> stress_corpus_entry_from_json(const Json& document,
                                                        std::string_view name);
Json stress_corpus_entry_json(const StressCorpusEntry& entry);

// Every *.json file of `dir`, in name order (the replay order is stable). Other files (the
// README, scripts) are skipped.
Result<std::vector<StressCorpusEntry>> stress_corpus_load(const std::string& dir);

}  // namespace readyport
