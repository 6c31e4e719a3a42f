// The swarm over the fake's open questions. See fake_options.hpp.
#include "readyport/fake/fake_options.hpp"
#include "readyport/fake/rng.hpp"

namespace readyport {

FakeOptions fake_options_swarm(std::uint64_t seed, std::uint32_t receive_buffer_bytes) {
  static constexpr std::uint32_t kEarlyWakes[] = {0, 0, 2, 10};
  Rng rng = SeedStreams(seed).stream(SeedStream::kSwarm);
  FakeOptions fake;
  fake.seed = seed;
  fake.receive_buffer_bytes = receive_buffer_bytes;
  fake.key_change_strict = rng.chance(1, 2);
  fake.queued_dropped_on_disable = rng.chance(1, 2);
  fake.remove_separate_packet = rng.chance(1, 2);
  fake.remove_dropped_on_close = rng.chance(1, 2);
  fake.oneshot_disarm = rng.chance(1, 2) ? OneshotDisarm::kAtQueue : OneshotDisarm::kAtDequeue;
  fake.early_wake_ms_max = kEarlyWakes[rng.below(std::size(kEarlyWakes))];
  fake.socket_reuse = rng.chance(3, 4);
  // Spec F7 in a quarter of the seeds: a port of concurrency 0 lets 1 to 3 of its threads run at
  // once. Drawn last, so the draws above stay those of earlier commits.
  fake.concurrency_limited = rng.chance(1, 4);
  fake.processors = 1 + static_cast<std::uint32_t>(rng.below(3));
  return fake;
}

}  // namespace readyport
