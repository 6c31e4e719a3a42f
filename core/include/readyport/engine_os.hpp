// readyport/engine_os.hpp: the engine's seam, `readyport::EngineOs`: only the calls the engine
// makes (the port, ProcessSocketNotifications, posts, closesocket, the last error, a mutex, sleep
// and the calling thread's id). `Os` (os.hpp) extends it with sockets and threads for handlers,
// workloads and tests; every Os is an EngineOs, so decorators and the fake implement both once.
//
// Conventions (every method, unless its comment says otherwise):
// - Threading: any thread may call any method at any time (spec A9); internally synchronised.
// - Errors: a method returns what its Windows original returns; those that report through
//   GetLastError/WSAGetLastError set the calling thread's last error, read by `last_error()`.
//   ProcessSocketNotifications returns its error code directly (spec A1-A3).
// - Blocking: only methods whose comment says "blocks" wait; in simulation they park the thread.
// - Ownership: the caller owns its EngineOs; an Engine holds a reference to it, never a copy.
// - Lifetime: an Os outlives every object it returned and every port and socket opened through it.
#pragma once

#include <cstdint>
#include <memory>

#include "readyport/os_types.hpp"

namespace readyport {

class EngineBoundary;  // engine_boundary.hpp

// A non-recursive mutual-exclusion lock. In simulation lock() is a scheduling point and a
// contended lock parks the caller. Ownership: the caller of mutex_create owns it; destroy it
// unlocked, before its Os. Threading: any thread; unlock() only by the holder.
class Mutex {
 public:
  virtual ~Mutex() = default;
  virtual void lock() = 0;      // blocks until acquired
  virtual bool try_lock() = 0;  // never blocks
  virtual void unlock() = 0;
};

class EngineOs {
 public:
  virtual ~EngineOs() = default;

  // CreateIoCompletionPort(INVALID_HANDLE_VALUE, NULL, 0, concurrency) (spec F5): a new port.
  // Returns kInvalidPort on failure, with last_error() set. Never blocks.
  virtual Port create_io_completion_port(std::uint32_t concurrency) = 0;

  // CloseHandle(port). Drops the port's registrations without REMOVE packets and releases its
  // waiters with kErrorAbandonedWait0 (spec F6). Returns false with last_error() on a bad handle.
  virtual bool close_port(Port port) = 0;

  // ProcessSocketNotifications (spec A-D). Applies `registrations` in order (writing each
  // registration_result), then dequeues up to `completion_count` entries into `entries`, waiting
  // up to `timeout_ms` (blocks; kInfinite never times out). Returns the error code itself:
  // kErrorSuccess, kWaitTimeout (registrations were applied, nothing dequeued), or another value
  // (the whole call failed and nothing changed, spec A3). `received_out` may be null only when
  // completion_count is 0 (spec A4).
  virtual std::uint32_t process_socket_notifications(Port port, std::uint32_t registration_count,
                                                     SockNotifyRegistration* registrations,
                                                     std::uint32_t timeout_ms,
                                                     std::uint32_t completion_count,
                                                     OverlappedEntry* entries,
                                                     std::uint32_t* received_out) = 0;

  // PostQueuedCompletionStatus (spec F2): queues a packet carrying exactly these three values.
  // Wakes the most recent waiter (spec F1). Returns false with last_error() on failure.
  virtual bool post_queued_completion_status(Port port, std::uint32_t bytes_transferred,
                                             std::uintptr_t completion_key,
                                             std::uintptr_t overlapped) = 0;

  // closesocket: deregisters the socket from its port WITHOUT a REMOVE packet (spec E2); the
  // value may be reused at once (spec E5). Returns kSocketError with last_error() on failure.
  virtual int closesocket(Socket s) = 0;

  // WSAGetLastError / GetLastError of the calling thread.
  virtual std::uint32_t last_error() = 0;

  // A new Mutex. Never fails (the fake and Windows allocate only memory).
  virtual std::unique_ptr<Mutex> mutex_create() = 0;

  // Monotonic time in nanoseconds since an arbitrary origin (virtual time in the fake).
  virtual std::uint64_t now_ns() = 0;

  // Sleep(duration_ms): blocks; virtual time in the fake.
  virtual void sleep_ms(std::uint32_t duration_ms) = 0;

  // An id of the calling thread, distinct from every other live thread's and never 0
  // (GetCurrentThreadId on Windows; the logical thread in simulation, where threads may share an
  // OS thread). Never blocks, never fails, is not a scheduling point and is not traced.
  virtual std::uint64_t thread_id() = 0;

  // The recorder of every crossing between an engine built on this Os and its embedder
  // (engine_boundary.hpp), or null: a test kit's world answers one so that it can judge the
  // embedder's code; every real Os answers null (the default), a decorator what it wraps answers.
  // Asked once per Engine, in its constructor. Never blocks, never fails, not a scheduling point,
  // not traced.
  virtual EngineBoundary* engine_boundary() { return nullptr; }
};

}  // namespace readyport
