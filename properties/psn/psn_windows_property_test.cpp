// The PSN commands against an OS that may answer the spec's open questions either way:
// PsnOsWorld runs them through the `Os` seam and PsnModelSet keeps every reading of the
// open questions that explains what the OS did. The property fails only when no reading is left;
// each test prints `observed: <question> = <reading>` for each question the OS answered.
//
// PsnWindowsProperty: against WindowsOs (real loopback sockets and ports). Skips in a non-Windows
// build ("needs Windows") and where WindowsOs::create() fails (no ProcessSocketNotifications: Wine,
// Windows before build 20348).
// PsnOsProperty: the same world and the same judging over FakeOs seen only through the seam, under
// several switch settings; here every question the fake answered must be answered the way its
// switch says. How to run them and reproduce a failure: docs/properties.md.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/state.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "property_runner.hpp"
#include "psn_commands.hpp"
#include "psn_keys.hpp"
#include "psn_model.hpp"
#include "psn_model_set.hpp"
#include "psn_os_world.hpp"
#include "readyport/fake/fake_os.hpp"

#if defined(_WIN32)
#include "readyport/windows_os.hpp"
#endif

namespace readyport::properties {
namespace {

// The options the models share: as the fake's properties (psn_fake_property_test.cpp), a receive
// buffer small enough for the model's bookkeeping; peer sends stay far below it.
FakeOptions model_options(FakeOptions base) {
  base.receive_buffer_bytes = 4096;
  return base;
}

// The answers over every case of one test: question -> readings some case settled on.
using AnswerTotals = std::map<std::string, std::set<std::string>>;

void add_answers(const PsnModelSet& models, AnswerTotals* totals) {
  for (const PsnAnswer& answer : models.answers()) {
    (*totals)[answer.question].insert(answer.reading);
  }
}

void print_answers(const AnswerTotals& totals) {
  for (const auto& [question, readings] : totals) {
    std::string text;
    for (const std::string& reading : readings) {
      text += (text.empty() ? "" : " | ") + reading;
    }
    std::cout << "observed: " << question << " = " << text
              << (readings.size() > 1 ? "  (different cases disagree: the OS is not consistent)"
                                      : "")
              << "\n";
  }
  std::cout << std::flush;
}

// One case: a generated command sequence on a fresh world over `os`, judged by every reading.
void run_case(Os& os, std::uint32_t settle_ms, AnswerTotals* totals) {
  const FakeOptions options = model_options(FakeOptions{});
  const PsnModel driving(options, kPsnSockets,
                         kPsnPorts);  // draws commands; readings do not matter
  PsnOsWorld world(os, options, kPsnSockets, kPsnPorts, settle_ms);
  rc::state::check(driving, world, &psn_os_command_generator);
  const std::size_t left = world.models().size();
  RC_TAG(std::string("readings left: ") + (left == 1    ? "1"
                                           : left <= 8  ? "2-8"
                                           : left <= 32 ? "9-32"
                                                        : "33-64"));
  add_answers(world.models(), totals);
}

// ---- over FakeOs, through the seam only ------------------------------------------------------

struct FakeSetting {
  std::string name;
  FakeOptions options;
};

void PrintTo(const FakeSetting& setting, std::ostream* os) { *os << setting.name; }

std::vector<FakeSetting> fake_settings() {
  std::vector<FakeSetting> settings;
  auto add = [&](const char* name, auto change) {
    FakeOptions options;
    change(options);
    settings.push_back(FakeSetting{name, model_options(options)});
  };
  add("defaults", [](FakeOptions&) {});
  add("trigger_lenient", [](FakeOptions& o) { o.trigger_lenient = true; });
  add("key_change_strict", [](FakeOptions& o) { o.key_change_strict = true; });
  add("queued_dropped_on_disable", [](FakeOptions& o) { o.queued_dropped_on_disable = true; });
  add("remove_separate_packet", [](FakeOptions& o) { o.remove_separate_packet = true; });
  add("remove_dropped_on_close", [](FakeOptions& o) { o.remove_dropped_on_close = true; });
  add("oneshot_disarm_at_queue",
      [](FakeOptions& o) { o.oneshot_disarm = OneshotDisarm::kAtQueue; });
  add("other_error_codes_no_poison", [](FakeOptions& o) {
    o.second_port_error = kErrorInvalidParameter;
    o.unregistered_error = kWsaEnotsock;
    o.not_socket_error = kErrorInvalidHandle;
    o.overlapped_poison = false;
    o.socket_reuse = false;
  });
  add("all_other_readings", [](FakeOptions& o) {
    o.trigger_lenient = true;
    o.key_change_strict = true;
    o.queued_dropped_on_disable = true;
    o.remove_separate_packet = true;
    o.remove_dropped_on_close = true;
    o.oneshot_disarm = OneshotDisarm::kAtQueue;
  });
  return settings;
}

// How the fake answers each question under `o`, in PsnModelSet's words.
std::map<std::string, std::string> fake_answers(const FakeOptions& o) {
  return {
      {"trigger_without_oneshot_or_persistent", o.trigger_lenient ? "PERSISTENT" : "WSAEINVAL"},
      {"key_change_on_live_registration", o.key_change_strict ? "WSAEINVAL" : "old key kept"},
      {"packet_queued_at_disable_or_closesocket",
       o.queued_dropped_on_disable ? "dropped" : "delivered"},
      {"remove_while_packet_queued",
       o.remove_separate_packet ? "separate packet" : "OR-ed into it"},
      {"closesocket_after_remove_before_its_packet",
       o.remove_dropped_on_close ? "REMOVE dropped" : "REMOVE delivered"},
      {"oneshot_disarm", o.oneshot_disarm == OneshotDisarm::kAtQueue ? "at queue" : "at dequeue"},
      {"second_port_error", std::to_string(o.second_port_error)},
      {"unregistered_error", std::to_string(o.unregistered_error)},
      {"not_socket_error", std::to_string(o.not_socket_error)},
      {"lpoverlapped_in_socket_packets", o.overlapped_poison ? "poisoned 0xdead0000" : "0"},
  };
}

class PsnOsProperty : public ::testing::TestWithParam<FakeSetting> {};

// The generic world and the model set over FakeOs: some reading always explains the fake, and
// every question a case settles is settled the way the fake's switch answers it.
TEST_P(PsnOsProperty, FakeThroughTheGenericWorld) {
  const FakeOptions& options = GetParam().options;
  AnswerTotals totals;
  check_property([&] {
    FakeOs fake(options);
    run_case(fake, 0, &totals);
  });
  print_answers(totals);
  const std::map<std::string, std::string> expected = fake_answers(options);
  for (const auto& [question, readings] : totals) {
    ASSERT_EQ(expected.count(question), 1u) << "unknown question " << question;
    EXPECT_EQ(readings, std::set<std::string>{expected.at(question)})
        << "the model set settled " << question << " otherwise than the fake's switch";
  }
  // Questions every run of a few hundred cases reaches (the rest depend on rarer sequences).
  EXPECT_EQ(totals.count("trigger_without_oneshot_or_persistent"), 1u);
  EXPECT_EQ(totals.count("lpoverlapped_in_socket_packets"), 1u);
}

INSTANTIATE_TEST_SUITE_P(Switches, PsnOsProperty, ::testing::ValuesIn(fake_settings()),
                         [](const ::testing::TestParamInfo<FakeSetting>& setting) {
                           return setting.param.name;
                         });

// ---- the model set alone -----------------------------------------------------------------------

// A reading goes at its first disagreement, a code question is answered by the first failure code
// and holds it, and when no reading is left the failure names each last one and what it broke.
TEST(PsnModelSetTest, DropsReadingsAndFailsWhenNoneIsLeft) {
  PsnModelSet models(model_options(FakeOptions{}), 1, 1);
  ASSERT_EQ(models.size(), 64u);
  const auto call = [](std::uint8_t operation, std::uint8_t trigger) {
    return [operation, trigger](PsnModel& m) {
      const std::vector<ModelElement> elements = {
          {0, socket_key(1, 0), kSockNotifyRegisterEventIn, operation, trigger}};
      PsnOutcome want;
      want.code = m.process(0, elements, 0, &want.results, &want.entries);
      return want;
    };
  };
  PsnStep step;
  step.port = 0;
  PsnOutcome got;
  got.code = kErrorSuccess;

  // Spec C1: LEVEL alone. Half the readings say WSAEINVAL, half register it as PERSISTENT.
  step.command = "psn(port 0, [enable s0 key0 IN level])";
  got.results = {kWsaEinval};
  EXPECT_EQ(models.judge(step, call(kSockNotifyOpEnable, kSockNotifyTriggerLevel), got), "");
  EXPECT_EQ(models.size(), 32u);

  // Spec B6: DISABLE of the unregistered socket answers the code question for every reading.
  step.command = "psn(port 0, [disable s0])";
  got.results = {kWsaEinval};
  EXPECT_EQ(models.judge(step, call(kSockNotifyOpDisable, 0), got), "");
  EXPECT_EQ(models.size(), 32u);
  std::map<std::string, std::string> answers;
  for (const PsnAnswer& answer : models.answers()) {
    answers[answer.question] = answer.reading;
  }
  EXPECT_EQ(answers["trigger_without_oneshot_or_persistent"], "WSAEINVAL");
  EXPECT_EQ(answers["unregistered_error"], std::to_string(kWsaEinval));
  EXPECT_EQ(answers.count("remove_while_packet_queued"), 0u);  // not asked yet

  // The same question answered with another code: no reading explains it.
  got.results = {kWsaEnotsock};
  const std::string failure = models.judge(step, call(kSockNotifyOpDisable, 0), got);
  EXPECT_EQ(models.size(), 0u);
  EXPECT_NE(failure.find("no reading of the spec's open questions"), std::string::npos) << failure;
  EXPECT_NE(failure.find("registration results after `psn(port 0, [disable s0])`: model "
                         "[<unregistered_error>], os [10038]"),
            std::string::npos)
      << failure;
  // All 32 broke the same check: one group, with the answers they share.
  EXPECT_NE(failure.find("\n  32 readings {trigger_without_oneshot_or_persistent = WSAEINVAL, "),
            std::string::npos)
      << failure;
  EXPECT_NE(failure.find("unregistered_error = 10022}"), std::string::npos) << failure;
  EXPECT_EQ(failure.find("key_change_on_live_registration"), std::string::npos) << failure;
}

// ---- over WindowsOs --------------------------------------------------------------------------

TEST(PsnWindowsProperty, WindowsMatchesAReadingOfTheModel) {
#if defined(_WIN32)
  // Cases are a fifth of the default: each waits for the network after its socket commands.
  constexpr int kWindowsCasesDivisor = 5;
  Result<std::unique_ptr<WindowsOs>> made = WindowsOs::create();
  if (!made.ok()) {
    GTEST_SKIP() << "needs the real ProcessSocketNotifications (Windows 10 build 20348 or later, "
                    "not Wine): "
                 << made.status().to_string();
  }
  std::unique_ptr<WindowsOs> os = std::move(made).value();
  AnswerTotals totals;
  check_property([&] { run_case(*os, kPsnSettleMsWindows, &totals); },
                 kPropertyCasesDefault / kWindowsCasesDivisor);
  print_answers(totals);
#else
  GTEST_SKIP() << "needs Windows: WindowsOs exists only in Windows builds (this build is not one); "
                  "PsnOsProperty runs the same world and judging over FakeOs here";
#endif
}

}  // namespace
}  // namespace readyport::properties
