// PsnModelSet: one model per reading of the open questions, dropped at its first disagreement.
#include "psn_model_set.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "psn_keys.hpp"
#include "readyport/assert.hpp"

namespace readyport::properties {

namespace {

// The behaviour questions, bit q of Candidate::readings: name, fake default, other reading.
struct BehaviourQuestion {
  const char* name;
  const char* fake_default;
  const char* other;
};
constexpr BehaviourQuestion kBehaviour[] = {
    {"trigger_without_oneshot_or_persistent", "WSAEINVAL", "PERSISTENT"},
    {"key_change_on_live_registration", "old key kept", "WSAEINVAL"},
    {"packet_queued_at_disable_or_closesocket", "delivered", "dropped"},
    {"remove_while_packet_queued", "OR-ed into it", "separate packet"},
    {"closesocket_after_remove_before_its_packet", "REMOVE delivered", "REMOVE dropped"},
    {"oneshot_disarm", "at dequeue", "at queue"},
};
constexpr const char* kCodeNames[] = {"second_port_error", "unregistered_error",
                                      "not_socket_error"};
// What a model predicts for code question q: no real Winsock or Win32 code is this large.
constexpr std::uint32_t kCodePlaceholderFirst = 0xFFFF0100;
constexpr std::uint32_t kResultUnwritten = 0xFFFF;  // psn_commands.cpp: registration_result before

FakeOptions reading_options(FakeOptions options, std::uint32_t readings) {
  options.trigger_lenient = (readings & 1u) != 0;
  options.key_change_strict = (readings & 2u) != 0;
  options.queued_dropped_on_disable = (readings & 4u) != 0;
  options.remove_separate_packet = (readings & 8u) != 0;
  options.remove_dropped_on_close = (readings & 16u) != 0;
  options.oneshot_disarm =
      (readings & 32u) != 0 ? OneshotDisarm::kAtQueue : OneshotDisarm::kAtDequeue;
  options.second_port_error = kCodePlaceholderFirst + 0;
  options.unregistered_error = kCodePlaceholderFirst + 1;
  options.not_socket_error = kCodePlaceholderFirst + 2;
  return options;
}

// The entries as compared: lpOverlapped of socket packets and every Internal are reserved.
std::vector<OverlappedEntry> compared(const std::vector<OverlappedEntry>& entries) {
  std::vector<OverlappedEntry> out = entries;
  for (OverlappedEntry& entry : out) {
    if (key_incarnation(entry.completion_key) != 0) {
      entry.overlapped = 0;
    }
    entry.internal = 0;
  }
  return out;
}

std::string results_text(const std::vector<std::uint32_t>& results) {
  std::string text = "[";
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (i > 0) {
      text += ", ";
    }
    const std::uint32_t code = results[i];
    if (code >= kCodePlaceholderFirst && code < kCodePlaceholderFirst + 3) {
      text += std::string("<") + kCodeNames[code - kCodePlaceholderFirst] + ">";
    } else {
      text += std::to_string(code);
    }
  }
  return text + "]";
}

}  // namespace

PsnModelSet::PsnModelSet(const FakeOptions& base, int sockets_count, int ports_count) {
  constexpr std::uint32_t kCombinations = 1u << kBehaviourQuestions;
  static_assert(std::size(kBehaviour) == kBehaviourQuestions);
  candidates_.reserve(kCombinations);
  for (std::uint32_t readings = 0; readings < kCombinations; ++readings) {
    candidates_.push_back(
        Candidate{readings,
                  {0, 0, 0},
                  PsnModel(reading_options(base, readings), sockets_count, ports_count)});
  }
}

const PsnModel& PsnModelSet::first() const {
  READYPORT_ASSERT(!candidates_.empty());
  return candidates_.front().model;
}

std::string PsnModelSet::readings_text(const std::vector<const Candidate*>& group) {
  READYPORT_ASSERT(!group.empty());
  const Candidate& first = *group.front();
  std::string text;
  auto add = [&](const char* question, const std::string& reading) {
    text += text.empty() ? "" : ", ";
    text += std::string(question) + " = " + reading;
  };
  for (int q = 0; q < kBehaviourQuestions; ++q) {
    const std::uint32_t bit = (first.readings >> q) & 1u;
    bool same = true;
    for (const Candidate* candidate : group) {
      same = same && ((candidate->readings >> q) & 1u) == bit;
    }
    if (same) {
      add(kBehaviour[q].name, bit != 0 ? kBehaviour[q].other : kBehaviour[q].fake_default);
    }
  }
  for (int q = 0; q < kCodeQuestions; ++q) {
    bool same = first.codes[q] != 0;
    for (const Candidate* candidate : group) {
      same = same && candidate->codes[q] == first.codes[q];
    }
    if (same) {
      add(kCodeNames[q], std::to_string(first.codes[q]));
    }
  }
  return text.empty() ? "any" : text;
}

std::string PsnModelSet::mismatch(Candidate& candidate, const PsnStep& step, const PsnOutcome& want,
                                  const PsnOutcome& got) {
  const std::string at = " after `" + step.command + "`: ";
  if (want.code != got.code) {
    return "code" + at + "model " + std::to_string(want.code) + ", os " + std::to_string(got.code);
  }
  bool results_match = want.results.size() == got.results.size();
  std::uint32_t codes[kCodeQuestions] = {candidate.codes[0], candidate.codes[1],
                                         candidate.codes[2]};
  for (std::size_t i = 0; results_match && i < want.results.size(); ++i) {
    const std::uint32_t expected = want.results[i];
    const std::uint32_t actual = got.results[i];
    if (expected >= kCodePlaceholderFirst && expected < kCodePlaceholderFirst + kCodeQuestions) {
      std::uint32_t& code = codes[expected - kCodePlaceholderFirst];
      const bool failure = actual != 0 && actual != kResultUnwritten;
      results_match = failure && (code == 0 || code == actual);
      if (results_match) {
        code = actual;
      }
    } else {
      results_match = expected == actual;
    }
  }
  if (!results_match) {
    return "registration results" + at + "model " + results_text(want.results) + ", os " +
           results_text(got.results);
  }
  const std::string want_entries = entries_text(compared(want.entries));
  const std::string got_entries = entries_text(compared(got.entries));
  if (want_entries != got_entries) {
    return "dequeued entries (lpOverlapped of socket packets and Internal not compared)" + at +
           "model " + want_entries + ", os " + got_entries;
  }
  if (want.bytes != got.bytes) {
    return "bytes moved" + at + "model " + std::to_string(want.bytes) + ", os " +
           std::to_string(got.bytes);
  }
  for (int q = 0; q < kCodeQuestions; ++q) {
    candidate.codes[q] = codes[q];
  }
  return "";
}

void PsnModelSet::note_overlapped(const PsnOutcome& got) {
  for (const OverlappedEntry& entry : got.entries) {
    if (key_incarnation(entry.completion_key) == 0) {
      continue;
    }
    const int kind = entry.overlapped == 0 && entry.internal == 0                   ? 1
                     : entry.overlapped == kOverlappedPoison && entry.internal == 0 ? 2
                                                                                    : 3;
    overlapped_seen_ = overlapped_seen_ == 0 || overlapped_seen_ == kind ? kind : 3;
  }
}

std::string PsnModelSet::judge(const PsnStep& step,
                               const std::function<PsnOutcome(PsnModel&)>& predict,
                               const PsnOutcome& got) {
  READYPORT_ASSERT(!candidates_.empty());
  note_overlapped(got);
  std::vector<Candidate> kept;
  kept.reserve(candidates_.size());
  // The readings dropped here, grouped by the check they broke (in the order first broken).
  std::vector<std::pair<std::string, std::vector<const Candidate*>>> dropped;
  for (Candidate& candidate : candidates_) {
    const PsnOutcome want = predict(candidate.model);
    const std::string wrong = mismatch(candidate, step, want, got);
    if (wrong.empty()) {
      kept.push_back(std::move(candidate));
      continue;
    }
    auto group = std::find_if(dropped.begin(), dropped.end(),
                              [&](const auto& entry) { return entry.first == wrong; });
    if (group == dropped.end()) {
      group = dropped.emplace(dropped.end(), wrong, std::vector<const Candidate*>{});
    }
    group->second.push_back(&candidate);
  }
  if (!kept.empty()) {
    candidates_ = std::move(kept);
    return "";
  }
  std::string text =
      "no reading of the spec's open questions explains what the OS did; the last readings, "
      "grouped by the check they broke:";
  for (const auto& [wrong, group] : dropped) {
    text += "\n  " + std::to_string(group.size()) + " reading" + (group.size() == 1 ? "" : "s") +
            " {" + readings_text(group) + "}:\n    " + wrong;
  }
  candidates_.clear();
  return text;
}

std::vector<PsnAnswer> PsnModelSet::answers() const {
  std::vector<PsnAnswer> out;
  if (candidates_.empty()) {
    return out;
  }
  for (int q = 0; q < kBehaviourQuestions; ++q) {
    const std::uint32_t bit = (candidates_.front().readings >> q) & 1u;
    bool agreed = true;
    for (const Candidate& candidate : candidates_) {
      agreed = agreed && ((candidate.readings >> q) & 1u) == bit;
    }
    if (agreed) {
      out.push_back(PsnAnswer{kBehaviour[q].name,
                              bit != 0 ? kBehaviour[q].other : kBehaviour[q].fake_default});
    }
  }
  for (int q = 0; q < kCodeQuestions; ++q) {
    const std::uint32_t code = candidates_.front().codes[q];
    bool agreed = code != 0;
    for (const Candidate& candidate : candidates_) {
      agreed = agreed && candidate.codes[q] == code;
    }
    if (agreed) {
      out.push_back(PsnAnswer{kCodeNames[q], std::to_string(code)});
    }
  }
  if (overlapped_seen_ != 0) {
    static constexpr const char* kOverlapped[] = {"", "0", "poisoned 0xdead0000",
                                                  "other (reserved: not compared)"};
    out.push_back(PsnAnswer{"lpoverlapped_in_socket_packets", kOverlapped[overlapped_seen_]});
  }
  return out;
}

}  // namespace readyport::properties
