// The workload's payload: payload_fill() and payload_mismatches() against payload_byte(), the
// definition (chaos_world.hpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "workload/chaos_world.hpp"

namespace readyport::chaos {
namespace {

TEST(PayloadTest, FillGivesPayloadByteAtEveryOffset) {
  for (const std::uint64_t seed : {std::uint64_t{1}, std::uint64_t{0xDEADBEEF12345678ULL}}) {
    for (const std::uint64_t offset : {0, 1, 7, 8, 13, 4095}) {
      for (const std::size_t size : {0, 1, 8, 9, 17, 512}) {
        std::vector<char> filled(size + 1, 'x');
        payload_fill(seed, 3, offset, filled.data(), size);
        for (std::size_t i = 0; i < size; ++i) {
          ASSERT_EQ(static_cast<std::uint8_t>(filled[i]), payload_byte(seed, 3, offset + i))
              << "seed " << seed << " offset " << offset << " byte " << i;
        }
        EXPECT_EQ(filled[size], 'x') << "wrote past size " << size;
      }
    }
  }
}

TEST(PayloadTest, MismatchesCountsChangedAndUnsentBytes) {
  constexpr std::uint64_t kOffset = 5;
  std::vector<char> data(40);
  payload_fill(9, 2, kOffset, data.data(), data.size());
  EXPECT_EQ(payload_mismatches(9, 2, kOffset, kOffset + 40, data.data(), data.size()), 0U);
  data[3] = static_cast<char>(data[3] ^ 1);
  data[30] = static_cast<char>(data[30] ^ 0x80);
  EXPECT_EQ(payload_mismatches(9, 2, kOffset, kOffset + 40, data.data(), data.size()), 2U);
  // Bytes at or beyond `sent` were never sent: each counts, whatever its value.
  EXPECT_EQ(payload_mismatches(9, 2, kOffset, kOffset + 35, data.data(), data.size()), 7U);
  // Another stream's payload differs almost everywhere.
  EXPECT_GT(payload_mismatches(9, 1, kOffset, kOffset + 40, data.data(), data.size()), 30U);
}

}  // namespace
}  // namespace readyport::chaos
