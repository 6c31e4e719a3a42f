#include "files/file_io.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

namespace readyport {

Result<std::string> stress_file_read(const std::string& path, std::uint64_t bytes_max) {
  std::error_code error;
  const std::filesystem::path file(path);
  if (!std::filesystem::exists(file, error)) {
    return Status(StatusCode::kNotFound, "'" + path + "': no such file");
  }
  if (std::filesystem::is_directory(file, error)) {
    return Status(StatusCode::kInvalidArgument, "'" + path + "' is a directory, not a file");
  }
  const std::uintmax_t size = std::filesystem::file_size(file, error);
  if (error) {
    return Status(StatusCode::kOsError, "'" + path + "': " + error.message());
  }
  if (size > bytes_max) {
    return Status(StatusCode::kResourceExhausted, "'" + path + "': " + std::to_string(size) +
                                                      " bytes, more than the " +
                                                      std::to_string(bytes_max) + " read at most");
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    return Status(StatusCode::kOsError, "'" + path + "': cannot be opened for reading");
  }
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  if (static_cast<std::uintmax_t>(in.gcount()) != size) {
    return Status(StatusCode::kOsError, "'" + path + "': read failed");
  }
  return text;
}

Status stress_file_write(const std::string& path, std::string_view text, StressWriteMode mode) {
  const std::filesystem::path file(path);
  std::error_code error;
  if (file.has_parent_path()) {
    std::filesystem::create_directories(file.parent_path(), error);
    if (error) {
      return Status(
          StatusCode::kOsError,
          "cannot create the directory '" + file.parent_path().string() + "': " + error.message());
    }
  }
  const std::ios::openmode open_mode =
      std::ios::binary | (mode == StressWriteMode::kAppend ? std::ios::app : std::ios::trunc);
  std::ofstream out(file, open_mode);
  if (!out) {
    return Status(StatusCode::kOsError, "cannot open '" + path + "' for writing");
  }
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) {
    return Status(StatusCode::kOsError, "cannot write '" + path + "' (disk full?)");
  }
  return Status();
}

}  // namespace readyport
