// An embedder's echo server as a user writes it on the engine (the harness's subject in the kit's
// tests), and the same server with one planted embedder bug at a time: each a small change of its
// handlers or threads, each a bug class from real servers' histories, each one the harness must
// catch within its default seeds, by the rule it breaks (planted_bugs_test.cpp).
//
//   EchoUnderTest server(ctx.os(), PlantedBug::kNone);
//   Status started = server.start();        // the engine, a listener, two workers
//   ... clients on server.address() ...
//   Status stopped = server.stop();         // engine.stop(), join every thread
//
// Ownership: the server owns its engine, its threads and its connections' state (one object per
// connection, deleted in on_closed). Threading: handlers on the engine's workers; start and stop
// from the scenario's thread. Errors: Status values.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "readyport/engine.hpp"
#include "readyport/os.hpp"

namespace readyport::harness_test {

enum class PlantedBug : std::uint8_t {
  kNone,
  kCloseInHandler,       // closes its own socket in the handler instead of returning close (U2)
  kStaleSocket,          // keeps socket values after on_closed and probes them later (U1)
  kBlockingRecv,         // switches the socket to blocking to read "the rest" in one call (U3)
  kOutlivesStop,         // a reporter thread its stop() does not join (U4)
  kWouldblockAsSuccess,  // ignores send's result: what does not fit is dropped (U5)
  kEdgeNotDrained,       // edge-triggered, reads one chunk per notification (U6)
  kFailedAddLeak,        // forgets to close a socket whose add() failed (U7)
  kEofIgnored,           // treats recv() == 0 as "nothing yet" (U8)
  kBusyWait,             // paces itself by spinning on the clock in the handler (U9)
  kFreedTooEarly,        // a reaper frees a connection's state when it closes it, before
                         // on_closed: a packet already dequeued runs on the freed state (U1)
  kCount,
};
// "close_in_handler", ...; and the rule each breaks ("U2").
const char* planted_bug_name(PlantedBug bug);
const char* planted_bug_rule(PlantedBug bug);

class EchoUnderTest {
 public:
  EchoUnderTest(Os& os, PlantedBug bug, std::uint32_t workers = 2);
  ~EchoUnderTest();
  EchoUnderTest(const EchoUnderTest&) = delete;
  EchoUnderTest& operator=(const EchoUnderTest&) = delete;

  // Starts the engine, opens the listener (127.0.0.1, an ephemeral port) and the workers.
  Status start();
  Ipv4Address address() const;
  // Stops the engine (it closes the listener and every connection) and joins the threads.
  Status stop();

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace readyport::harness_test
