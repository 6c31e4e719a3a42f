#include "files/corpus.hpp"

#include <algorithm>
#include <filesystem>
#include <string>
#include <system_error>

#include "cli/build_info.hpp"
#include "files/bundle.hpp"
#include "files/file_io.hpp"
#include "files/options_json.hpp"

// stress/CMakeLists.txt defines it on this file: the source tree's stress/corpus directory.
#ifndef READYPORT_STRESS_CORPUS_DIR
#error "READYPORT_STRESS_CORPUS_DIR must be defined (stress/CMakeLists.txt)"
#endif

namespace readyport {
namespace {

Result<StressCorpusEntry> entry_from_bundle(const Json& document, std::string_view name) {
  Result<StressBundle> bundle = stress_bundle_from_json(document, name);
  if (!bundle.ok()) {
    return bundle.status();
  }
  StressCorpusEntry entry;
  entry.name = std::string(name);
  entry.seed = bundle.value().seed;
  entry.options = bundle.value().options;
  entry.why = "failure bundle of commit " + bundle.value().commit + ": " + bundle.value().message;
  return entry;
}

}  // namespace

std::string stress_corpus_default_dir() { return READYPORT_STRESS_CORPUS_DIR; }

Result<StressCorpusEntry> stress_corpus_entry_parse(std::string_view text, std::string_view name) {
  Result<Json> document = json_parse_document(text, name);
  if (!document.ok()) {
    return document.status();
  }
  return stress_corpus_entry_from_json(document.value(), name);
}

Result<StressCorpusEntry> stress_corpus_entry_from_json(const Json& document,
                                                        std::string_view name) {
  const std::string where(name);
  std::string format;
  if (Status s = json_field_string(document, where, "format", &format); !s.ok()) {
    return s;
  }
  if (format == kStressBundleFormat) {
    return entry_from_bundle(document, name);
  }
  if (format != kStressCorpusFormat) {
    return Status(StatusCode::kInvalidArgument, where + ".format: '" + format + "', expected '" +
                                                    kStressCorpusFormat + "' or '" +
                                                    kStressBundleFormat + "'");
  }
  if (Status s = json_fields_known(
          document, where,
          {"format", "format_version", "seed", "options", "expect_canary", "signature", "why"});
      !s.ok()) {
    return s;
  }
  if (Status s = json_format_version_check(document, where, kStressCorpusFormatVersion); !s.ok()) {
    return s;
  }
  StressCorpusEntry entry;
  entry.name = where;
  if (Status s = stress_seed_and_options_from_json(document, where, &entry.seed, &entry.options);
      !s.ok()) {
    return s;
  }
  if (Status s = json_field_string(document, where, "expect_canary", &entry.expect_canary);
      !s.ok()) {
    return s;
  }
  if (!entry.expect_canary.empty() && !stress_canary_known(entry.expect_canary)) {
    return Status(StatusCode::kInvalidArgument, where + ".expect_canary: '" + entry.expect_canary +
                                                    "' is not a canary of cmake/canary.cmake (" +
                                                    stress_canary_names() + ")");
  }
  if (Status s = json_field_string_optional(document, where, "signature", "", &entry.signature);
      !s.ok()) {
    return s;
  }
  if (Status s = json_field_string(document, where, "why", &entry.why); !s.ok()) {
    return s;
  }
  return entry;
}

Json stress_corpus_entry_json(const StressCorpusEntry& entry) {
  Json document = Json::object();
  document["format"] = kStressCorpusFormat;
  document["format_version"] = kStressCorpusFormatVersion;
  document["seed"] = entry.seed;
  document["options"] = stress_run_options_json(entry.options);
  document["expect_canary"] = entry.expect_canary;
  document["signature"] = entry.signature;
  document["why"] = entry.why;
  return document;
}

Result<std::vector<StressCorpusEntry>> stress_corpus_load(const std::string& dir) {
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) {
    return Status(StatusCode::kNotFound, "corpus directory '" + dir + "' not found");
  }
  std::vector<std::filesystem::path> files;
  for (std::filesystem::directory_iterator it(dir, error), end; !error && it != end;
       it.increment(error)) {
    if (it->path().extension() != ".json") {
      continue;
    }
    if (files.size() == kStressCorpusEntriesMax) {
      return Status(StatusCode::kResourceExhausted,
                    "corpus directory '" + dir + "' holds more than " +
                        std::to_string(kStressCorpusEntriesMax) + " entries");
    }
    files.push_back(it->path());
  }
  if (error) {
    return Status(StatusCode::kOsError, "corpus directory '" + dir + "': " + error.message());
  }
  // The directory's order is the file system's: sort, so every machine replays in one order.
  std::sort(files.begin(), files.end());
  std::vector<StressCorpusEntry> entries;
  for (const std::filesystem::path& file : files) {
    Result<std::string> text = stress_file_read(file.string(), kStressCorpusEntryBytesMax);
    if (!text.ok()) {
      return text.status();
    }
    Result<StressCorpusEntry> entry =
        stress_corpus_entry_parse(text.value(), file.filename().string());
    if (!entry.ok()) {
      return entry.status();
    }
    entry.value().path = file.string();
    entries.push_back(std::move(entry.value()));
  }
  return entries;
}

}  // namespace readyport
