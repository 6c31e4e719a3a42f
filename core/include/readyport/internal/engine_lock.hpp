// readyport/internal/engine_lock.hpp: the engine's one lock, as a checked capability. Internal.
//
// EngineMutex wraps the Os's Mutex (Os::mutex_create) and is the capability that the engine's
// READYPORT_GUARDED_BY and READYPORT_REQUIRES annotations name; EngineLock holds it for a scope.
// With clang, -Wthread-safety checks every access at compile time (cmake/warnings.cmake).
// Ownership: EngineMutex owns the Mutex; EngineLock borrows the EngineMutex for its scope.
// Lifetime: the Mutex lives as long as the engine. Threading: any thread; not recursive.
// Errors: none (a null Mutex asserts).
#pragma once

#include <memory>
#include <utility>

#include "readyport/assert.hpp"
#include "readyport/engine_os.hpp"
#include "readyport/internal/thread_annotations.hpp"

namespace readyport::internal {

class READYPORT_CAPABILITY("mutex") EngineMutex {
 public:
  explicit EngineMutex(std::unique_ptr<Mutex> mutex) : mutex_(std::move(mutex)) {
    READYPORT_ASSERT(mutex_ != nullptr);
  }
  EngineMutex(const EngineMutex&) = delete;
  EngineMutex& operator=(const EngineMutex&) = delete;

  // const: a const method of the engine (stats()) locks it too.
  void lock() const READYPORT_ACQUIRE() { mutex_->lock(); }
  void unlock() const READYPORT_RELEASE() { mutex_->unlock(); }

 private:
  std::unique_ptr<Mutex> mutex_;
};

class READYPORT_SCOPED_CAPABILITY EngineLock {
 public:
  explicit EngineLock(const EngineMutex& mutex) READYPORT_ACQUIRE(mutex) : mutex_(mutex) {
    mutex_.lock();
  }
  ~EngineLock() READYPORT_RELEASE() { mutex_.unlock(); }
  EngineLock(const EngineLock&) = delete;
  EngineLock& operator=(const EngineLock&) = delete;

 private:
  const EngineMutex& mutex_;
};

}  // namespace readyport::internal
