// The PSN rules as properties of FakeOs: a stateful RapidCheck test against the
// reference model (PsnModel), and four lifetime rules each checked as its own property, under the
// fake's default options and under each open-question switch of docs/rules.md ("Fake defaults").
// How to run one and how to reproduce a failure: docs/properties.md.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/state.h>

#include <cstdio>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "property_runner.hpp"
#include "psn_commands.hpp"
#include "psn_model.hpp"
#include "psn_rules.hpp"
#include "psn_world.hpp"

namespace readyport::properties {
namespace {

// The fake's options for these properties: `base` with a receive buffer small enough that a
// command can fill it (so OUT can fall and rise) and large enough that peer sends never block.
FakeOptions property_options(FakeOptions base) {
  base.receive_buffer_bytes = 4096;
  return base;
}

struct SwitchSetting {
  std::string name;
  FakeOptions options;
};

// GoogleTest prints the parameter by its name.
void PrintTo(const SwitchSetting& setting, std::ostream* os) { *os << setting.name; }

// The defaults, then each row of the spec's "Fake defaults" table set the other way.
std::vector<SwitchSetting> switch_settings() {
  std::vector<SwitchSetting> settings;
  auto add = [&](const char* name, auto change) {
    FakeOptions options;
    change(options);
    settings.push_back(SwitchSetting{name, property_options(options)});
  };
  add("defaults", [](FakeOptions&) {});
  add("trigger_lenient", [](FakeOptions& o) { o.trigger_lenient = true; });
  add("key_change_strict", [](FakeOptions& o) { o.key_change_strict = true; });
  add("queued_dropped_on_disable", [](FakeOptions& o) { o.queued_dropped_on_disable = true; });
  add("remove_separate_packet", [](FakeOptions& o) { o.remove_separate_packet = true; });
  add("remove_dropped_on_close", [](FakeOptions& o) { o.remove_dropped_on_close = true; });
  add("oneshot_disarm_at_queue",
      [](FakeOptions& o) { o.oneshot_disarm = OneshotDisarm::kAtQueue; });
  add("other_error_codes", [](FakeOptions& o) {
    o.second_port_error = kErrorInvalidParameter;
    o.unregistered_error = kWsaEnotsock;
    o.not_socket_error = kErrorInvalidHandle;
  });
  add("no_poison_no_reuse", [](FakeOptions& o) {
    o.overlapped_poison = false;
    o.socket_reuse = false;
  });
  return settings;
}

// Coverage over all the cases of one test, printed after it: a path no case reached shows as 0.
struct CoverageTotals {
  int cases = 0;
  int modes[4] = {0, 0, 0, 0};   // level|oneshot, level|persistent, edge|oneshot, edge|persistent
  int ops[5] = {0, 0, 0, 0, 0};  // by operation value 0..4 (none, enable, disable, -, remove)
  int remove_merged = 0, remove_separate = 0, close_plain = 0, close_queued = 0;
  int close_removing = 0, detached_delivered = 0, disarms = 0, disarmed_rises = 0;
  int port_closes = 0, posted = 0, or_merges = 0;

  void add(const ModelCoverage& c) {
    ++cases;
    for (int i = 0; i < 4; ++i) {
      modes[i] += (c.modes_enabled >> i) & 1u ? 1 : 0;
    }
    for (int i = 0; i < 5; ++i) {
      ops[i] += (c.ops_applied >> i) & 1u ? 1 : 0;
    }
    remove_merged += c.remove_merged > 0;
    remove_separate += c.remove_separate > 0;
    close_plain += c.close_plain > 0;
    close_queued += c.close_queued > 0;
    close_removing += c.close_removing > 0;
    detached_delivered += c.detached_delivered > 0;
    disarms += c.oneshot_disarms > 0;
    disarmed_rises += c.disarmed_rises > 0;
    port_closes += c.port_closes_registered > 0;
    posted += c.posted_delivered > 0;
    or_merges += c.or_merges > 0;
  }
  void print() const {
    std::printf(
        "coverage: cases reaching each path, of %d run (shrinking included)\n"
        "  modes applied: level|oneshot %d, level|persistent %d, edge|oneshot %d, "
        "edge|persistent %d\n"
        "  ops applied: enable %d, disable %d, remove %d, none %d; OR-ed into a queued packet %d\n"
        "  REMOVE dequeued: OR-ed %d, separate %d; one-shot disarmed %d, then a rise %d\n"
        "  closesocket registered: nothing queued %d, packet queued %d, after REMOVE %d; "
        "closed socket's packet delivered %d\n"
        "  close_port with registrations %d; posted packets delivered %d\n",
        cases, modes[0], modes[1], modes[2], modes[3], ops[1], ops[2], ops[4], ops[0], or_merges,
        remove_merged, remove_separate, disarms, disarmed_rises, close_plain, close_queued,
        close_removing, detached_delivered, port_closes, posted);
  }
};

// RC_TAG: the distribution of REMOVE paths and closesocket paths over the cases.
void tag_case(const ModelCoverage& c) {
  const char* remove = c.remove_merged > 0
                           ? (c.remove_separate > 0 ? "remove:merged+separate" : "remove:merged")
                           : (c.remove_separate > 0 ? "remove:separate" : "remove:none");
  const char* close = c.close_removing > 0 ? "close:after-remove"
                      : c.close_queued > 0 ? "close:packet-queued"
                      : c.close_plain > 0  ? "close:registered"
                                           : "close:none";
  RC_TAG(std::string(remove), std::string(close));
}

// One case: a generated command sequence on a fresh model and a fresh fake.
void run_case(const FakeOptions& options, std::optional<PsnRule> rule, CoverageTotals* totals) {
  const PsnModel initial(options, kPsnSockets, kPsnPorts);
  PsnFakeWorld world(options, kPsnSockets, kPsnPorts, rule);
  rc::state::check(initial, world, &psn_command_generator);
  tag_case(world.coverage());
  totals->add(world.coverage());
}

void run_property(const FakeOptions& options, std::optional<PsnRule> rule) {
  CoverageTotals totals;
  check_property([&] { run_case(options, rule, &totals); });
  totals.print();
}

class PsnFakeProperty : public ::testing::TestWithParam<SwitchSetting> {};

// The fake does what the model predicts after every command (codes, results, packets in order,
// queue lengths, registrations).
TEST_P(PsnFakeProperty, FakeMatchesModel) { run_property(GetParam().options, std::nullopt); }

// Spec E2 (with B5): closesocket never produces a REMOVE packet.
TEST_P(PsnFakeProperty, ClosesocketNeverQueuesRemove) {
  run_property(GetParam().options, PsnRule::kClosesocketNoRemove);
}

// Spec B5, E3: the REMOVE packet is the last packet for its key.
TEST_P(PsnFakeProperty, RemoveIsLastPacketForItsKey) {
  run_property(GetParam().options, PsnRule::kRemoveIsLast);
}

// Spec B8: a socket is registered with one port at a time.
TEST_P(PsnFakeProperty, SocketRegisteredWithOnePortAtATime) {
  run_property(GetParam().options, PsnRule::kOnePortAtATime);
}

// Spec C2: a one-shot packet disarms every direction.
TEST_P(PsnFakeProperty, OneshotPacketDisarmsEveryDirection) {
  run_property(GetParam().options, PsnRule::kOneshotDisarmsAll);
}

INSTANTIATE_TEST_SUITE_P(Switches, PsnFakeProperty, ::testing::ValuesIn(switch_settings()),
                         [](const ::testing::TestParamInfo<SwitchSetting>& setting) {
                           return setting.param.name;
                         });

// Every switch drawn as part of the case (shrinking toward the defaults), so combinations of
// switches are checked too.
TEST(PsnFakePropertyDrawn, FakeMatchesModelUnderDrawnSwitches) {
  CoverageTotals totals;
  check_property([&] {
    FakeOptions options;
    options.trigger_lenient = *rc::gen::arbitrary<bool>();
    options.key_change_strict = *rc::gen::arbitrary<bool>();
    options.queued_dropped_on_disable = *rc::gen::arbitrary<bool>();
    options.remove_separate_packet = *rc::gen::arbitrary<bool>();
    options.remove_dropped_on_close = *rc::gen::arbitrary<bool>();
    options.oneshot_disarm =
        *rc::gen::arbitrary<bool>() ? OneshotDisarm::kAtQueue : OneshotDisarm::kAtDequeue;
    const int flipped = options.trigger_lenient + options.key_change_strict +
                        options.queued_dropped_on_disable + options.remove_separate_packet +
                        options.remove_dropped_on_close +
                        (options.oneshot_disarm == OneshotDisarm::kAtQueue);
    RC_CLASSIFY(flipped == 0, "switches: defaults");
    RC_CLASSIFY(flipped > 0 && flipped < 6, "switches: some flipped");
    RC_CLASSIFY(flipped == 6, "switches: all flipped");
    run_case(property_options(options), std::nullopt, &totals);
  });
  totals.print();
}

}  // namespace
}  // namespace readyport::properties
