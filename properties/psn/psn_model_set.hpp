// properties/psn/psn_model_set.hpp: PsnModelSet, one PsnModel per reading of the open questions of
// docs/rules.md ("Fake defaults"), judged against a system that may answer them either way
// (Windows).
//
//   PsnModelSet models(base_options, kPsnSockets, kPsnPorts);   // 64 readings
//   std::string failure = models.judge(step, predict, got);     // drops the readings that disagree
//   if (!failure.empty()) RC_FAIL(failure);                     // none left
//   for (const PsnAnswer& answer : models.answers()) ...        // what every survivor agrees on
//
// The six behaviour questions (trigger without ONESHOT/PERSISTENT, key change, a queued packet at
// DISABLE or closesocket, REMOVE while a packet is queued, closesocket after REMOVE, when a
// one-shot disarms) are FakeOptions switches: one model per combination, 2^6. The three error-code
// questions (second port, DISABLE/REMOVE of an unregistered socket, a value that is not a socket)
// have no fixed list of readings: each model predicts a placeholder code, any failure code matches
// it the first time, and from then on that model expects the same code again. lpOverlapped and
// Internal of socket packets are reserved (spec "Constants and layout"): never compared, only
// reported. Every other output must match exactly: the call's code, each registration_result,
// the dequeued entries in order (key, mask or bytes, lpOverlapped of posted packets), bytes moved.
// Internal is not compared (reserved for every packet; the fake's own property compares it).
//
// A model is dropped at its first disagreement, so the set shrinks fast (most questions are
// settled by the first few calls that touch them) and each command costs one prediction per
// surviving model. When the last models go, the failure names what each broke (grouped: the
// readings that broke the same check, with the answers they share), expected against actual.
//
// Ownership: a plain value; owns its models. Threading: one thread. Errors: none thrown; judge()
// returns the failure text.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "psn_checks.hpp"
#include "psn_model.hpp"

namespace readyport::properties {

// An open question of the spec that the system answered, and how (for `observed:` lines).
struct PsnAnswer {
  std::string question;  // "remove_while_packet_queued", ...
  std::string reading;   // "separate packet", "10022", ...
};

class PsnModelSet {
 public:
  // `base`: the options every model shares (receive_buffer_bytes; its question switches are
  // replaced by each combination).
  PsnModelSet(const FakeOptions& base, int sockets_count, int ports_count);

  // Runs `predict` on every surviving model (each advances in place) and drops those whose
  // prediction differs from `got`. Returns "" while one model at least is left; otherwise the
  // failure text naming the step and, for each model dropped by it, its readings and mismatch.
  std::string judge(const PsnStep& step, const std::function<PsnOutcome(PsnModel&)>& predict,
                    const PsnOutcome& got);

  std::size_t size() const { return candidates_.size(); }
  // The first surviving model (for coverage), the set being non-empty.
  const PsnModel& first() const;
  // Each question every surviving model answers the same way (the system's answer), in a fixed
  // order; plus lpOverlapped of socket packets when the dequeued ones agreed.
  std::vector<PsnAnswer> answers() const;

 private:
  static constexpr int kBehaviourQuestions = 6;
  static constexpr int kCodeQuestions = 3;
  struct Candidate {
    std::uint32_t readings = 0;  // bit q: question q read the other way (not the fake default)
    std::uint32_t codes[kCodeQuestions] = {0, 0, 0};  // the code each question answered, 0: none
    PsnModel model;
  };
  // Whether `want` (from candidate) matches `got`; else the mismatch text.
  static std::string mismatch(Candidate& candidate, const PsnStep& step, const PsnOutcome& want,
                              const PsnOutcome& got);
  // The readings every candidate of `group` shares, as "question = reading, ..." ("any": none).
  static std::string readings_text(const std::vector<const Candidate*>& group);
  void note_overlapped(const PsnOutcome& got);

  std::vector<Candidate> candidates_;
  // lpOverlapped of the socket packets dequeued so far: 0 none seen, 1 all 0, 2 all poisoned,
  // 3 something else or a mix.
  int overlapped_seen_ = 0;
};

}  // namespace readyport::properties
