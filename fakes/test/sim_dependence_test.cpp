// The dependence relation that exploration prunes by (runtime.hpp's SimObject) holds in the fake:
// two calls whose steps touch no common object give the same state in either order, and two calls
// it calls dependent can really differ. One logical thread makes the two calls in one order or the
// other on a fresh FakeOs; the end state is read back the same way every time.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "readyport/fake/fake_os.hpp"
#include "readyport/fake/sim_scheduler.hpp"

namespace readyport {
namespace {

// What the calls act on: a port and two of the fake's mutexes.
struct Objects {
  FakeOs& os;
  Port port;
  std::unique_ptr<Mutex> first;
  std::unique_ptr<Mutex> second;
};
using Call = std::function<void(Objects&)>;

// The state the calls left: the port's packets in dequeue order, which mutexes are held, the
// calling thread's last error.
std::string state_of(Objects& objects) {
  std::string text = "packets";
  OverlappedEntry entry{};
  std::uint32_t removed = 0;
  while (objects.os.get_queued_completion_status_ex(objects.port, &entry, 1, &removed, 0, false)) {
    text += " " + std::to_string(entry.completion_key);
  }
  text += " last_error " + std::to_string(objects.os.last_error());
  for (const auto* mutex : {&objects.first, &objects.second}) {
    const bool free = (*mutex)->try_lock();
    text += free ? " free" : " held";
    if (free) {
      (*mutex)->unlock();
    }
  }
  return text;
}

struct Outcome {
  std::string state;
  SimFootprint a = 0;  // the footprint of call a's step
  SimFootprint b = 0;
};

// Runs `a` then `b` (or `b` then `a`) and reads the state back. Each call makes one seam call
// (one step).
Outcome run_in_order(const Call& a, const Call& b, bool a_first) {
  SimChoices choices;
  SimOptions options;
  options.strategy = SimStrategy::kExplore;
  options.choices = &choices;
  SimScheduler sim(options);
  FakeOs os(FakeOptions{}, sim);
  Outcome outcome;
  std::size_t first_step = 0;
  const Status status = sim.run([&] {
    Objects objects{os, os.create_io_completion_port(0), os.mutex_create(), os.mutex_create()};
    // Each call's step starts at its point: the one after the step running now.
    first_step = choices.segments.size() + 1;
    (a_first ? a : b)(objects);
    (a_first ? b : a)(objects);
    outcome.state = state_of(objects);
    for (const auto* mutex : {&objects.first, &objects.second}) {
      // Held by a call (this thread) or taken now: released before it is destroyed.
      (void)(*mutex)->try_lock();
      (*mutex)->unlock();
    }
    objects.first.reset();
    objects.second.reset();
    EXPECT_TRUE(os.close_port(objects.port));
  });
  EXPECT_TRUE(status.ok()) << status.to_string();
  EXPECT_GT(choices.segments.size(), first_step + 1);
  outcome.a = choices.segments[a_first ? first_step : first_step + 1].footprint;
  outcome.b = choices.segments[a_first ? first_step + 1 : first_step].footprint;
  return outcome;
}

void post(Objects& objects, std::uintptr_t key) {
  ASSERT_TRUE(objects.os.post_queued_completion_status(objects.port, 0, key, 0));
}

TEST(SimDependence, CallsOnNoCommonObjectGiveOneStateInEitherOrder) {
  struct Pair {
    const char* name;
    Call a;
    Call b;
  };
  const Pair pairs[] = {
      {"lock one mutex, lock another", [](Objects& o) { o.first->lock(); },
       [](Objects& o) { o.second->lock(); }},
      {"lock a mutex, post to the port", [](Objects& o) { o.first->lock(); },
       [](Objects& o) { post(o, 7); }},
      {"read the last error, post to the port", [](Objects& o) { (void)o.os.last_error(); },
       [](Objects& o) { post(o, 7); }},
      {"read the clock, lock a mutex", [](Objects& o) { (void)o.os.now_ns(); },
       [](Objects& o) { o.first->lock(); }},
  };
  for (const Pair& pair : pairs) {
    const Outcome ab = run_in_order(pair.a, pair.b, true);
    const Outcome ba = run_in_order(pair.a, pair.b, false);
    EXPECT_NE(ab.b, 0u) << pair.name;  // each b touches something: a lock or the port
    EXPECT_FALSE(sim_dependent(ab.a, ab.b)) << pair.name;
    EXPECT_EQ(ab.a, ba.a) << pair.name;  // a step's footprint does not depend on the order
    EXPECT_EQ(ab.b, ba.b) << pair.name;
    EXPECT_EQ(ab.state, ba.state) << pair.name;
  }
}

TEST(SimDependence, CallsTheRelationCallsDependentCanDiffer) {
  // Two posts to one port: both touch the fake's state, and the dequeue order shows which ran
  // first.
  const Call post_one = [](Objects& o) { post(o, 1); };
  const Call post_two = [](Objects& o) { post(o, 2); };
  const Outcome ab = run_in_order(post_one, post_two, true);
  const Outcome ba = run_in_order(post_one, post_two, false);
  EXPECT_TRUE(sim_dependent(ab.a, ab.b));
  EXPECT_NE(ab.state, ba.state);
  EXPECT_NE(ab.state.find("packets 1 2"), std::string::npos) << ab.state;
  // A post and a poll of the same port: the poll takes the packet only when it comes second.
  const Call poll = [](Objects& o) {
    OverlappedEntry entry{};
    std::uint32_t removed = 0;
    (void)o.os.get_queued_completion_status_ex(o.port, &entry, 1, &removed, 0, false);
  };
  const Outcome post_then_poll = run_in_order(post_one, poll, true);
  const Outcome poll_then_post = run_in_order(post_one, poll, false);
  EXPECT_TRUE(sim_dependent(post_then_poll.a, post_then_poll.b));
  EXPECT_NE(post_then_poll.state, poll_then_post.state);
}

}  // namespace
}  // namespace readyport
