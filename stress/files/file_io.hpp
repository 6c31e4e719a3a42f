// stress/files/file_io.hpp: whole-file reads and writes for the driver's inputs and outputs
// (bundles, corpus entries, traces, summaries), each bounded and each failure a Status naming the
// file.
//
//   Result<std::string> text = stress_file_read("stress-failures/seed-7.json", kBundleBytesMax);
//   Status written = stress_file_write("out/s.json", text, StressWriteMode::kReplace);
//
// Ownership: values. Threading: reentrant (two writers of one file race, as with any file).
// Errors: kNotFound (no such file), kResourceExhausted (larger than the limit), kOsError
// (cannot read, create the directory, write or close).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "readyport/status.hpp"

namespace readyport {

enum class StressWriteMode : std::uint8_t {
  kReplace,  // create or truncate
  kAppend,   // create or append (the Markdown summary, $GITHUB_STEP_SUMMARY)
};

// The file's bytes, at most `bytes_max` of them.
Result<std::string> stress_file_read(const std::string& path, std::uint64_t bytes_max);
// Writes `text` to `path`, creating its parent directories when missing.
Status stress_file_write(const std::string& path, std::string_view text, StressWriteMode mode);

}  // namespace readyport
