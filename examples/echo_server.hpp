// examples/echo_server.hpp: a multithreaded TCP echo server on the engine, and a reusable echo
// workload (clients that check every byte) for tests and the stress driver.
//
// The shape is Microsoft's multithreaded echo sample for socket state notifications: a
// non-blocking listening socket registered one-shot level-triggered for IN; worker threads that
// dequeue notifications; on the listener, accept until WSAEWOULDBLOCK and register each new
// socket; on a connection, read until WSAEWOULDBLOCK and send it back, waiting for OUT when the
// peer's buffer is full; close on end of stream or error; one chained exit packet to stop. Here
// the engine does the port, the re-arming and the teardown; this file is only the handlers.
//
//   readyport::EchoWorkload workload;           // 8 clients x 4 KiB, one thread (poll)
//   readyport::Engine engine(os, readyport::echo_engine_options(workload));
//   (void)engine.start();
//   readyport::EchoResult result = readyport::run_echo_workload(os, engine, workload);
//   if (!result.status.ok()) print(result.status.to_string());
//
// Ownership: EchoServer borrows the Os and Engine (both must outlive it) and owns its connection
// pool, allocated by the constructor. Threading: handlers run on any engine driver; shared
// counters and the pool are guarded by one Os::mutex_create() lock. Errors: Status values.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "readyport/engine.hpp"
#include "readyport/os.hpp"
#include "readyport/status.hpp"

namespace readyport {

struct EchoServerOptions {
  // Server-side connections open at once (the pool); more are accepted and closed at once.
  std::uint32_t connections_max = 64;
  // Bytes read per recv and held while the peer cannot take them.
  std::uint32_t buffer_bytes = 4096;
  // The connections' trigger mode. kOneshotEdge is refused: a one-shot edge registration is
  // re-armed after data may already be there, and enabling on a readable socket reports nothing
  // (spec C5, C6), so an echo server on it can hang. The listener is always one-shot level.
  Mode mode = Mode::kOneshotLevel;
};

struct EchoServerCounts {
  std::uint32_t accepted = 0;  // connections added to the engine
  std::uint32_t refused = 0;   // accepted but closed at once (pool full, add failed)
  std::uint32_t closed = 0;    // on_closed of accepted connections
  std::uint32_t errors = 0;    // connections closed on an error (ERR, reset)
  std::uint64_t bytes_echoed = 0;
  bool listener_closed = false;
  // Times the listener was opened again after the engine closed it on its own (a refused re-arm
  // ends a connection: engine.hpp, on_closed).
  std::uint32_t listener_reopened = 0;
};

class EchoServer {
 public:
  // Allocates the pool. `os` and `engine` must outlive the server; the engine must be stopped
  // (every on_closed returned) before the server is destroyed.
  EchoServer(Os& os, Engine& engine, EchoServerOptions options);
  ~EchoServer();
  EchoServer(const EchoServer&) = delete;
  EchoServer& operator=(const EchoServer&) = delete;

  // Opens a non-blocking listener on 127.0.0.1 with an ephemeral port, adds it to the engine
  // and returns its address. Call once, on any thread, after engine.start(). Errors:
  // kInvalidArgument (kOneshotEdge), the socket calls' kOsError, the engine's add() errors.
  Result<Ipv4Address> start();
  // Closes the listener (engine.close); connections stay. Any thread. Idempotent.
  Status close_listener();
  // A snapshot. Any thread.
  EchoServerCounts counts() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// ---- The workload: clients on the same engine --------------------------------------------------

struct EchoWorkload {
  std::uint32_t clients = 8;              // client connections in all
  std::uint32_t clients_concurrent = 32;  // at once at most (a finished client starts the next)
  std::uint32_t bytes_per_client = 4096;  // each client sends this many and expects them back
  std::uint32_t chunk_bytes_max = 1024;   // each send is 1..this many bytes (seeded)
  std::uint32_t buffer_bytes = 4096;      // server connection buffer
  Mode mode = Mode::kOneshotLevel;        // clients' and server connections' mode
  // 0: the calling thread drives the engine with poll() (any runtime, also the inline FakeOs).
  // N > 0: N threads started with Os::thread_start call run_worker() (SimScheduler,
  // FreeRuntime, Windows); the calling thread waits with Os::sleep_ms.
  std::uint32_t workers = 0;
  std::uint64_t seed = 0;                 // payload bytes and chunk sizes
  std::uint32_t time_limit_ms = 600'000;  // Os time (virtual in the fake) before giving up
  std::uint32_t poll_timeout_ms = 50;     // poll() timeout when workers == 0
};

struct EchoCounts {
  std::uint32_t clients_started = 0;   // connected and added
  std::uint32_t clients_done = 0;      // every byte came back and matched
  std::uint32_t clients_failed = 0;    // connect/add/send/recv failed, early end, or mismatch
  std::uint32_t clients_closed = 0;    // client on_closed calls
  std::uint64_t bytes_sent = 0;        // by clients
  std::uint64_t bytes_received = 0;    // by clients
  std::uint64_t bytes_mismatched = 0;  // received bytes that differ from what was sent
  EchoServerCounts server;
  EngineStats engine;  // after stop()
};

struct EchoResult {
  Status status;  // ok: every byte echoed and every connection closed, engine stopped
  EchoCounts counts;
};

// Engine options that fit `workload` (capacity for every client, server connection and the
// listener; workers_max for its threads).
EngineOptions echo_engine_options(const EchoWorkload& workload);

// Runs an EchoServer and `workload.clients` clients on `engine` (started, not stopped, with no
// connection yet), waits until every client finished and every connection closed, then stops the
// engine (and joins the workers it started). Call from a thread of `os`'s runtime that may make
// seam calls (in simulation: inside SimScheduler::run). Returns the counts and ok, or the first
// broken expectation (bytes missing or different, a connection not closed, time limit, a failed
// call) with the counts so far. The engine is stopped in every case.
EchoResult run_echo_workload(Os& os, Engine& engine, const EchoWorkload& workload);

}  // namespace readyport
