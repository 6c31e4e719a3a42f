// properties/psn/psn_keys.hpp: the completion keys the PSN properties use, chosen so that a
// dequeued packet names the connection it belongs to without asking the model.
//
//   std::uintptr_t key = readyport::properties::socket_key(3, 0);  // connection 3, first key
//   readyport::properties::key_incarnation(key);                  // 3
//
// A socket key encodes the connection's incarnation (PsnModel: a new one for each connection a
// socket index holds) and a variant (0 or 1: an ENABLE with the other variant asks for a key
// change, spec B3). Posted keys come from a disjoint range (spec F2: sentinel keys).
// Pure functions; any thread. Incarnations above kIncarnationsMax are a broken contract (assert).
#pragma once

#include <cstdint>

#include "readyport/assert.hpp"

namespace readyport::properties {

inline constexpr std::uintptr_t kSocketKeyFirst = 0x10000;
inline constexpr std::uint32_t kIncarnationsMax = 0x100000;
inline constexpr std::uintptr_t kPostedKeyFirst = kSocketKeyFirst + 2 * kIncarnationsMax;
inline constexpr int kKeyVariants = 2;

inline std::uintptr_t socket_key(std::uint32_t incarnation, int variant) {
  READYPORT_ASSERT(incarnation > 0 && incarnation < kIncarnationsMax);
  READYPORT_ASSERT(variant >= 0 && variant < kKeyVariants);
  return kSocketKeyFirst + 2 * std::uintptr_t{incarnation} + static_cast<std::uintptr_t>(variant);
}

// The incarnation a socket key names; 0 for any other key (posted packets).
inline std::uint32_t key_incarnation(std::uintptr_t key) {
  if (key < kSocketKeyFirst + 2 || key >= kPostedKeyFirst) {
    return 0;
  }
  return static_cast<std::uint32_t>((key - kSocketKeyFirst) / 2);
}

inline std::uintptr_t posted_key(std::uint32_t index) { return kPostedKeyFirst + index; }

}  // namespace readyport::properties
