// The test clients' payloads. See payload.hpp.
#include "readyport/fake/payload.hpp"

#include <bit>
#include <cstring>

#include "readyport/assert.hpp"
#include "readyport/fake/rng.hpp"

namespace readyport {
namespace {

// splitmix64's finaliser of `x`: Rng's first number from seed `x`.
std::uint64_t mix(std::uint64_t x) { return Rng(x).next(); }

}  // namespace

std::uint8_t payload_byte(std::uint64_t seed, std::uint32_t stream, std::uint64_t offset) {
  const std::uint64_t word = mix(seed ^ (std::uint64_t{stream} << 40) ^ (offset >> 3));
  return static_cast<std::uint8_t>(word >> ((offset & 7) * 8));
}

void payload_fill(std::uint64_t seed, std::uint32_t stream, std::uint64_t offset, char* out,
                  std::size_t size) {
  const std::uint64_t base = seed ^ (std::uint64_t{stream} << 40);
  std::size_t i = 0;
  while (i < size) {  // payload_byte()'s word, once per 8 bytes
    const std::uint64_t at = offset + i;
    const std::uint64_t word = mix(base ^ (at >> 3));
    if constexpr (std::endian::native == std::endian::little) {
      if ((at & 7) == 0 && size - i >= 8) {  // a whole word: its bytes, low first, are its memory
        std::memcpy(out + i, &word, 8);
        i += 8;
        continue;
      }
    }
    for (std::uint64_t byte = at & 7; byte < 8 && i < size; ++byte, ++i) {
      out[i] = static_cast<char>(static_cast<std::uint8_t>(word >> (byte * 8)));
    }
  }
}

std::uint64_t payload_mismatches(std::uint64_t seed, std::uint32_t stream, std::uint64_t offset,
                                 std::uint64_t sent, const char* data, std::size_t size) {
  READYPORT_ASSERT(size <= kPayloadCheckBytesMax);
  char expected[kPayloadCheckBytesMax];
  payload_fill(seed, stream, offset, expected, size);
  std::uint64_t mismatched = 0;
  for (std::size_t i = 0; i < size; ++i) {
    if (offset + i >= sent || data[i] != expected[i]) {
      ++mismatched;
    }
  }
  return mismatched;
}

}  // namespace readyport
