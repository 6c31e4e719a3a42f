// readyport/status.hpp: errors as values.
//
// `Status` says whether an operation worked and, if not, why: a code, the OS error number where
// the OS said no (0 otherwise), and a sentence for a human. `Result<T>` is a value or a Status.
//
//   readyport::Result<ConnId> id = engine.add(sock, kInterestIn, Mode::kOneshotLevel, &h);
//   if (!id.ok()) { log(id.status().message()); return; }
//   use(id.value());
//
// Ownership: both are plain values; a Status owns its message. Threading: not synchronised, like
// any value; distinct objects may be used from distinct threads. Errors: accessing value() of a
// failed Result is a broken contract and asserts (assertions are on in every build).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

#include "readyport/assert.hpp"

namespace readyport {

enum class StatusCode : std::uint8_t {
  kOk = 0,
  kInvalidArgument,     // the caller passed something that can never work (bad handle, bad bits)
  kNotFound,            // the named thing does not exist (unknown or already-closed ConnId)
  kAlreadyExists,       // the thing is already there (socket added twice, registered elsewhere)
  kResourceExhausted,   // a fixed limit was reached (capacity, batch); nothing was changed
  kFailedPrecondition,  // the object is not in a state that allows this (called after stop())
  kUnavailable,  // the OS lacks the facility (no ProcessSocketNotifications); retrying won't help
  kOsError,      // the OS call failed; os_error() holds its code
  kInternal,     // a checker found a broken promise (test oracles; never the engine's API)
};

// Returns a stable, human-readable name such as "invalid_argument". Never null.
const char* status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  Status(StatusCode code, std::string message, std::uint32_t os_error = 0)
      : code_(code), os_error_(os_error), message_(std::move(message)) {}

  static Status ok_status() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  std::uint32_t os_error() const { return os_error_; }
  const std::string& message() const { return message_; }
  // "<code name>: <message>" plus " (os error N)" when os_error() != 0; "ok" when ok().
  std::string to_string() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::uint32_t os_error_ = 0;
  std::string message_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : storage_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : storage_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    READYPORT_ASSERT(!std::get<Status>(storage_).ok());  // an ok Result must carry a value
  }

  bool ok() const { return std::holds_alternative<T>(storage_); }
  // The failure; for an ok Result, an ok Status.
  Status status() const { return ok() ? Status() : std::get<Status>(storage_); }
  T& value() & {
    READYPORT_ASSERT(ok());
    return std::get<T>(storage_);
  }
  const T& value() const& {
    READYPORT_ASSERT(ok());
    return std::get<T>(storage_);
  }
  T&& value() && {
    READYPORT_ASSERT(ok());
    return std::get<T>(std::move(storage_));
  }

 private:
  std::variant<T, Status> storage_;
};

}  // namespace readyport
