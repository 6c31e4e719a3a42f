#include "readyport/status.hpp"

#include <cstdio>
#include <cstdlib>

namespace readyport {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid_argument";
    case StatusCode::kNotFound:
      return "not_found";
    case StatusCode::kAlreadyExists:
      return "already_exists";
    case StatusCode::kResourceExhausted:
      return "resource_exhausted";
    case StatusCode::kFailedPrecondition:
      return "failed_precondition";
    case StatusCode::kUnavailable:
      return "unavailable";
    case StatusCode::kOsError:
      return "os_error";
    case StatusCode::kInternal:
      return "internal";
  }
  READYPORT_UNREACHABLE();
}

std::string Status::to_string() const {
  if (ok()) {
    return "ok";
  }
  std::string text = status_code_name(code_);
  text += ": ";
  text += message_;
  if (os_error_ != 0) {
    text += " (os error ";
    text += std::to_string(os_error_);
    text += ")";
  }
  return text;
}

namespace internal {
void assert_fail(const char* condition, const char* file, int line) {
  std::fprintf(stderr, "readyport: assertion failed: %s (%s:%d)\n", condition, file, line);
  std::fflush(stderr);
  std::abort();
}
}  // namespace internal

}  // namespace readyport
