// readyport/fake/rng.hpp: seeded, portable randomness for simulation.
//
// One master seed names a whole run. `SeedStreams` derives independent streams from it (schedule,
// workload, faults, the fake's own choices), so changing how one stream is used does not reshuffle
// the others. `Rng` is SplitMix64: the same seed gives the same numbers on every OS and compiler.
//
//   readyport::SeedStreams streams(master_seed);
//   readyport::Rng schedule = streams.stream(readyport::SeedStream::kSchedule);
//   std::uint64_t pick = schedule.below(runnable_count);
//
// Ownership: plain values. Threading: not synchronised; one Rng per user.
#pragma once

#include <array>
#include <cstdint>

#include "readyport/assert.hpp"

namespace readyport {

class Rng {
 public:
  // (2^64 - 1) % bound for the small bounds (a scheduler's pick among at most 64 threads, a
  // percentage): below()'s rejection limit without a division of its own.
  static constexpr std::array<std::uint64_t, 129> kMaxRemainders = [] {
    std::array<std::uint64_t, 129> remainders{};
    for (std::uint64_t bound = 1; bound < remainders.size(); ++bound) {
      remainders[bound] = ~std::uint64_t{0} % bound;
    }
    return remainders;
  }();

  explicit Rng(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {
    state_ += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, bound), bound > 0. Rejection sampling: no modulo bias, still deterministic.
  std::uint64_t below(std::uint64_t bound) {
    READYPORT_ASSERT(bound > 0);
    const std::uint64_t remainder =
        bound < kMaxRemainders.size() ? kMaxRemainders[bound] : ~std::uint64_t{0} % bound;
    const std::uint64_t limit = ~std::uint64_t{0} - remainder;
    std::uint64_t value = next();
    while (value >= limit) {
      value = next();
    }
    return value % bound;
  }
  // True with probability numerator/denominator.
  bool chance(std::uint64_t numerator, std::uint64_t denominator) {
    READYPORT_ASSERT(denominator > 0 && numerator <= denominator);
    return below(denominator) < numerator;
  }

 private:
  std::uint64_t state_;
};

// The independent streams of one master seed. Append new streams at the end: values are stable.
enum class SeedStream : std::uint64_t {
  kSchedule = 1,  // SimScheduler's choices
  kWorkload = 2,  // what the workload does (connections, sizes, closes)
  kFaults = 3,    // which fault sites fire (FaultyOs)
  kFake = 4,      // FakeOs's own choices (early wakes)
  kSwarm = 5,     // which reading of each open question the fake takes (stress driver)
  kHarness = 6,   // the harness's own draws for an embedder's scenario (harness.hpp)
};

class SeedStreams {
 public:
  explicit SeedStreams(std::uint64_t master_seed) : master_seed_(master_seed) {}
  std::uint64_t master_seed() const { return master_seed_; }
  // The seed of one stream: a mix of the master seed and the stream's number.
  std::uint64_t seed(SeedStream stream) const {
    Rng mixer(master_seed_ ^ (static_cast<std::uint64_t>(stream) * 0xD1B54A32D192ED03ULL));
    mixer.next();
    return mixer.next();
  }
  Rng stream(SeedStream stream) const { return Rng(seed(stream)); }

 private:
  std::uint64_t master_seed_;
};

}  // namespace readyport
