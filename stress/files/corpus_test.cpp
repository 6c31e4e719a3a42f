// The regression corpus (corpus.hpp): entries round-trip, bad entries are clear errors, a
// directory loads in name order, and the checked-in corpus holds the seeds that found bugs.
#include "files/corpus.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli/build_info.hpp"
#include "files/bundle.hpp"
#include "files/file_io.hpp"

namespace readyport {
namespace {

StressCorpusEntry sample_entry() {
  StressCorpusEntry entry;
  entry.seed = 251;
  entry.options.strategy = StressStrategy::kPct;
  entry.options.actions_max = 3;
  entry.expect_canary = "double_remove";
  entry.signature = "O7";
  entry.why = "a test";
  return entry;
}

// A fresh directory under the test's working directory.
// A folder of this process's own under the temporary directory: copies of the test running at
// once (a flake run's launches) never share one.
std::filesystem::path fresh_dir(const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("readyport-corpus-test-" + name + "-" +
       std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void write(const std::filesystem::path& file, const std::string& text) {
  ASSERT_TRUE(stress_file_write(file.string(), text, StressWriteMode::kReplace).ok());
}

TEST(CorpusTest, AnEntryRoundTrips) {
  const Json json = stress_corpus_entry_json(sample_entry());
  EXPECT_EQ(json["format"], kStressCorpusFormat);
  Result<StressCorpusEntry> back = stress_corpus_entry_parse(json.dump(2), "canary-x.json");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back.value().name, "canary-x.json");
  EXPECT_EQ(back.value().seed, 251u);
  EXPECT_EQ(back.value().options.strategy, StressStrategy::kPct);
  EXPECT_EQ(back.value().options.actions_max, 3u);
  EXPECT_EQ(back.value().expect_canary, "double_remove");
  EXPECT_EQ(back.value().signature, "O7");
  EXPECT_EQ(back.value().why, "a test");
}

TEST(CorpusTest, BadEntriesAreClearErrors) {
  const Json good = stress_corpus_entry_json(sample_entry());
  auto with = [&good](const char* key, const Json& value) {
    Json changed = good;
    if (value.is_discarded()) {
      changed.erase(key);
    } else {
      changed[key] = value;
    }
    return changed.dump();
  };
  const Json gone = Json(Json::value_t::discarded);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {with("expect_canary", "no_such_canary"),
       "e.json.expect_canary: 'no_such_canary' is not a canary"},
      {with("expect_canary", gone), "e.json.expect_canary: missing"},
      {with("seed", gone), "e.json.seed: missing"},
      {with("why", 3), "e.json.why: expected a string"},
      {with("options", gone), "e.json.options: missing"},
      {with("comment", "x"), "e.json.comment: unknown field"},
      {with("format_version", 9), "e.json.format_version: 9"},
      {with("format", "readyport-other"), "e.json.format: 'readyport-other'"},
      {"{\"seed\": 1", "e.json: not valid JSON"},
  };
  for (const auto& [text, message] : cases) {
    Result<StressCorpusEntry> entry = stress_corpus_entry_parse(text, "e.json");
    ASSERT_FALSE(entry.ok()) << message;
    EXPECT_NE(entry.status().message().find(message), std::string::npos)
        << "expected '" << message << "' in: " << entry.status().message();
  }
}

TEST(CorpusTest, ABundleIsAnEntryToo) {
  StressOptions options;
  options.pct_depth = 2;
  SeedReport report;
  report.parameters = stress_parameters(options, 17);
  report.status = Status(StatusCode::kInternal, "O2 handler after the end at line 3: x");
  report.trace_hash = "0123456789abcdef";
  const Json bundle =
      stress_bundle_json(options, report, StressBundleContext{{"p"}, "b.json", "seed range"});
  Result<StressCorpusEntry> entry = stress_corpus_entry_parse(bundle.dump(), "seed-17.json");
  ASSERT_TRUE(entry.ok()) << entry.status().to_string();
  EXPECT_EQ(entry.value().seed, 17u);
  EXPECT_EQ(entry.value().options.pct_depth, 2u);
  EXPECT_EQ(entry.value().expect_canary, "");
  EXPECT_NE(entry.value().why.find("O2 handler after the end"), std::string::npos);
}

TEST(CorpusTest, ADirectoryLoadsInNameOrderAndSkipsOtherFiles) {
  const std::filesystem::path dir = fresh_dir("order");
  StressCorpusEntry entry = sample_entry();
  for (std::uint64_t seed : {30u, 10u, 20u}) {
    entry.seed = seed;
    write(dir / ("seed-" + std::to_string(seed) + ".json"), stress_corpus_entry_json(entry).dump());
  }
  write(dir / "README.md", "not an entry");
  write(dir / "regenerate.sh", "not an entry");
  Result<std::vector<StressCorpusEntry>> entries = stress_corpus_load(dir.string());
  ASSERT_TRUE(entries.ok()) << entries.status().to_string();
  ASSERT_EQ(entries.value().size(), 3u);
  EXPECT_EQ(entries.value()[0].seed, 10u);
  EXPECT_EQ(entries.value()[1].seed, 20u);
  EXPECT_EQ(entries.value()[2].seed, 30u);
  EXPECT_EQ(entries.value()[0].name, "seed-10.json");

  write(dir / "seed-40.json", "{\"format\": \"readyport-stress-corpus\"}");
  Result<std::vector<StressCorpusEntry>> bad = stress_corpus_load(dir.string());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("seed-40.json.format_version: missing"), std::string::npos)
      << bad.status().message();

  Result<std::vector<StressCorpusEntry>> missing = stress_corpus_load((dir / "nothing").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  std::filesystem::remove_all(dir);
}

TEST(CorpusTest, TheCheckedInCorpusHoldsTheSeedsThatFoundBugs) {
  Result<std::vector<StressCorpusEntry>> entries =
      stress_corpus_load(READYPORT_STRESS_TEST_CORPUS_DIR);
  ASSERT_TRUE(entries.ok()) << entries.status().to_string();
  for (std::uint64_t seed : {25u, 87u, 91u, 93u, 251u, 1034u}) {
    const bool found = std::any_of(
        entries.value().begin(), entries.value().end(),
        [seed](const StressCorpusEntry& e) { return e.seed == seed && e.expect_canary.empty(); });
    EXPECT_TRUE(found) << "seed " << seed << " is not in stress/corpus";
  }
  for (const StressCorpusEntry& entry : entries.value()) {
    EXPECT_FALSE(entry.why.empty()) << entry.name;
    if (!entry.expect_canary.empty()) {
      EXPECT_EQ(entry.name, "canary-" + entry.expect_canary + ".json");
      EXPECT_FALSE(entry.signature.empty()) << entry.name;
    }
  }
  EXPECT_EQ(stress_corpus_default_dir(), READYPORT_STRESS_TEST_CORPUS_DIR);
}

TEST(BuildInfoTest, CanariesAreKnownByName) {
  EXPECT_TRUE(stress_canary_known("double_remove"));
  EXPECT_TRUE(stress_canary_known("free_before_remove"));
  EXPECT_FALSE(stress_canary_known(""));
  EXPECT_FALSE(stress_canary_known("double"));
  EXPECT_FALSE(stress_canary_known("double_remove,free_before_remove"));
  EXPECT_NE(stress_version_line().find(stress_build_info().commit), std::string::npos);
}

}  // namespace
}  // namespace readyport
