// readyport/fake/echo_clients.hpp: clients for an echo server under the harness (harness.hpp),
// through the scenario's Os: each connects, sends its payload (a pure function of the seed and its
// number, payload.hpp) in chunks, reads the echo back and checks every byte, then closes. Turmoil's
// hosts and clients in one simulation, for the seam.
//
//   readyport::Status drive(readyport::ScenarioContext& ctx) override {
//     return readyport::echo_clients(ctx, server_->address(), {.clients = 2, .bytes = 3000});
//   }
//
// In the chaos phase some clients misbehave, as real peers do, drawn from ctx.rng(): one resets its
// connection midway, one leaves without reading its echo; and a client the faults break (a reset,
// a failed connect or thread) simply ends. Only a wrong byte is a failure there (kInternal: never
// expected, even under faults). In the liveness phase (no faults) every client must get every
// byte back within `liveness_ms` of virtual time, or the call fails naming the client, what it
// got and where it stalled.
//
// Ownership: borrows the context. Threading: call from the scenario's thread; it starts one thread
// per client through ctx.os() and joins them all before it returns. Errors: a Status as above.
#pragma once

#include <cstdint>

#include "readyport/fake/harness.hpp"
#include "readyport/os.hpp"

namespace readyport {

struct EchoClientsOptions {
  std::uint32_t clients = 2;            // at once, each on its own thread
  std::uint32_t bytes = 3000;           // per client at most (each seed draws 1 .. bytes)
  std::uint32_t chunk_bytes_max = 512;  // per send at most (each client draws its chunk size)
  // Virtual time a liveness client may go without progress before it is a failure.
  std::uint32_t liveness_ms = 30'000;
  // Chaos: clients that reset midway or leave without reading (drawn per client).
  bool misbehave = true;
};

Status echo_clients(ScenarioContext& ctx, const Ipv4Address& server,
                    const EchoClientsOptions& options = {});

}  // namespace readyport
