// check_step: model comparison or one rule, after each command.
#include "psn_checks.hpp"

#include <rapidcheck.h>

#include <sstream>

#include "psn_keys.hpp"
#include "psn_model_set.hpp"

namespace readyport::properties {

namespace {

std::string hex(std::uint64_t value) {
  std::ostringstream text;
  text << "0x" << std::hex << value;
  return text.str();
}

std::string results_text(const std::vector<std::uint32_t>& results) {
  std::string text = "[";
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (i > 0) {
      text += ", ";
    }
    text += std::to_string(results[i]);
  }
  return text + "]";
}

void expect_same(const PsnStep& step, const char* what, const std::string& want,
                 const std::string& got) {
  if (want == got) {
    return;
  }
  RC_FAIL(std::string(what) + " after `" + step.command + "`: model " + want + ", fake " + got);
}

// The fake's state after the step agrees with the model's.
void compare_state(const PsnStep& step, const PsnModel& after, PsnWorld& world) {
  FakeOs* fake = world.fake();
  if (fake == nullptr) {
    return;  // a real OS shows only the calls' outputs
  }
  FakeOs& os = *fake;
  for (int port = 0; port < after.ports_count(); ++port) {
    expect_same(step, ("packets queued on port " + std::to_string(port)).c_str(),
                std::to_string(after.queued_count(port)),
                std::to_string(os.queued_packet_count(world.port(port))));
  }
  for (int s = 0; s < after.sockets_count(); ++s) {
    if (!after.socket(s).open) {
      continue;
    }
    expect_same(step, ("socket " + std::to_string(s) + " registered").c_str(),
                after.socket_registered(s) ? "yes" : "no",
                os.socket_registered(world.local(s)) ? "yes" : "no");
  }
  expect_same(step, "live registrations", std::to_string(after.registrations_count()),
              std::to_string(os.stats().registrations_live));
  os.check_invariants();
}

void feed(PsnRuleChecker& rules, const PsnStep& step, const PsnOutcome& outcome) {
  bool applied_before = false;
  for (std::size_t i = 0; i < outcome.results.size() && i < step.elements.size(); ++i) {
    const PsnElementFact& element = step.elements[i];
    rules.element(step.port, element.incarnation, element.operation, element.trigger_flags,
                  outcome.results[i], outcome.queued_before > 0 || applied_before);
    applied_before = applied_before || outcome.results[i] == 0;
  }
  for (const OverlappedEntry& entry : outcome.entries) {
    rules.dequeued(step.port, entry);
  }
  if (step.socket_closed != 0) {
    rules.socket_closed(step.socket_closed);
  }
  if (step.port_closed) {
    rules.port_closed(step.port);
  }
}

void check_rule(PsnRule rule, const PsnStep& step, PsnWorld& world, const PsnOutcome& want,
                const PsnOutcome& got) {
  feed(world.fake_rules(), step, got);
  feed(world.model_rules(), step, want);
  const std::string& fake = world.fake_rules().violation(rule);
  if (!fake.empty()) {
    RC_FAIL(std::string("rule ") + psn_rule_name(rule) + " broken by the fake at `" + step.command +
            "`: " + fake);
  }
  const std::string& model = world.model_rules().violation(rule);
  if (!model.empty()) {
    RC_FAIL(std::string("rule ") + psn_rule_name(rule) + " broken by the model at `" +
            step.command + "`: " + model);
  }
}

}  // namespace

std::string mask_text(std::uint32_t mask) {
  static constexpr struct {
    std::uint32_t bit;
    const char* name;
  } kBits[] = {{kSockNotifyEventIn, "IN"},
               {kSockNotifyEventOut, "OUT"},
               {kSockNotifyEventHangup, "HANGUP"},
               {kSockNotifyEventErr, "ERR"},
               {kSockNotifyEventRemove, "REMOVE"}};
  std::string text;
  std::uint32_t rest = mask;
  for (const auto& bit : kBits) {
    if ((mask & bit.bit) == 0) {
      continue;
    }
    if (!text.empty()) {
      text += "|";
    }
    text += bit.name;
    rest &= ~bit.bit;
  }
  if (rest != 0 || text.empty()) {
    text += (text.empty() ? "" : "|") + hex(rest);
  }
  return text;
}

std::string entries_text(const std::vector<OverlappedEntry>& entries) {
  std::string text = "[";
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const OverlappedEntry& entry = entries[i];
    if (i > 0) {
      text += ", ";
    }
    if (key_incarnation(entry.completion_key) != 0) {
      text += "key " + hex(entry.completion_key) + " " + mask_text(entry.bytes_transferred);
    } else {
      text += "posted key " + hex(entry.completion_key) + " bytes " +
              std::to_string(entry.bytes_transferred);
    }
    text += " ov " + hex(entry.overlapped);
    if (entry.internal != 0) {
      text += " internal " + hex(entry.internal);
    }
  }
  return text + "]";
}

void check_step(const PsnStep& step, const PsnModel& after, const PsnOutcome& want,
                const PsnOutcome& got, PsnWorld& world) {
  world.coverage() = after.coverage();
  if (world.rule().has_value()) {
    check_rule(*world.rule(), step, world, want, got);
    return;
  }
  expect_same(step, "code", std::to_string(want.code), std::to_string(got.code));
  expect_same(step, "registration results", results_text(want.results), results_text(got.results));
  expect_same(step, "dequeued entries", entries_text(want.entries), entries_text(got.entries));
  expect_same(step, "bytes moved", std::to_string(want.bytes), std::to_string(got.bytes));
  compare_state(step, after, world);
}

void judge_step(const PsnStep& step, const PsnModel& model, const PsnPredict& predict,
                const PsnOutcome& got, PsnWorld& world) {
  PsnModelSet* models = world.model_set();
  if (models == nullptr) {
    PsnModel after = model;
    const PsnOutcome want = predict(after);
    check_step(step, after, want, got, world);
    return;
  }
  const std::string failure = models->judge(step, predict, got);
  if (!failure.empty()) {
    RC_FAIL(failure);
  }
  world.coverage() = models->first().coverage();
}

}  // namespace readyport::properties
