// readyport/fake/payload.hpp: the bytes a test client sends, as a pure function of (seed, stream,
// offset), so that the receiver checks every byte without a copy of what was sent: the chaos
// workload's clients and peers (stress/workload) and the harness's echo clients (echo_clients.hpp).
//
//   char chunk[512];
//   readyport::payload_fill(seed, client, sent, chunk, size);              // what to send
//   std::uint64_t wrong = readyport::payload_mismatches(seed, client, received, sent, data, n);
//
// Ownership: none. Threading: pure functions. Errors: payload_mismatches asserts its size bound.
#pragma once

#include <cstddef>
#include <cstdint>

namespace readyport {

// The byte at `offset` of stream `stream`'s payload.
std::uint8_t payload_byte(std::uint64_t seed, std::uint32_t stream, std::uint64_t offset);
// payload_byte() of offsets `offset` .. `offset` + `size` - 1, into `out` (one mix per 8 bytes).
void payload_fill(std::uint64_t seed, std::uint32_t stream, std::uint64_t offset, char* out,
                  std::size_t size);
// How many of the `size` bytes `data` received at `offset` differ from the payload, or lie at or
// beyond `sent` (bytes never sent). `size` at most kPayloadCheckBytesMax.
inline constexpr std::size_t kPayloadCheckBytesMax = 512;
std::uint64_t payload_mismatches(std::uint64_t seed, std::uint32_t stream, std::uint64_t offset,
                                 std::uint64_t sent, const char* data, std::size_t size);

}  // namespace readyport
