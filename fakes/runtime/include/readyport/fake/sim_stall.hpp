// readyport/fake/sim_stall.hpp: a stall, a thread kept off the CPU for a number of steps.
//
// A stall models what an OS does to a thread on a loaded machine: it loses the CPU right where it
// is (after a call returned, inside a handler) and gets it back only after the others ran for a
// while. A strategy never does that to a thread that can run when the others block: PCT lowers a
// priority, but a thread that is the only one runnable runs; a random pick reaches a thread within
// a few steps. A stall does: SimScheduler (SimOptions::stalls) keeps the thread that took step
// `step` from being picked for the next `steps` steps, as long as some other thread can run. The
// stalls of a run are part of its schedule (a corpus entry's or a bundle's options), written as
// text: "6752:300,6761:2000" (step:steps; parsed in any order, kept by step).
//
//   readyport::Result<std::vector<readyport::SimStall>> stalls =
//       readyport::sim_stalls_parse("6752:300,6761:2000");
//   options.stalls = stalls.value();                       // SimOptions (sim_scheduler.hpp)
//   std::string text = readyport::sim_stalls_text(options.stalls);  // the same text back
//
// Ownership: plain values. Threading: pure functions. Errors: sim_stalls_parse returns
// kInvalidArgument naming the bad token (not step:steps, a number out of range, a step given
// twice, more than kSimStallsMax stalls).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "readyport/status.hpp"

namespace readyport {

// The most stalls a run holds, and the longest stall (in steps).
inline constexpr std::size_t kSimStallsMax = 16;
inline constexpr std::uint64_t kSimStallStepsMax = 1'000'000;

struct SimStall {
  std::uint64_t step = 1;   // the step (SimStats::steps, counting it; >= 1) whose thread stalls
  std::uint64_t steps = 1;  // how many steps after it the thread is not picked (1..max)

  friend bool operator==(const SimStall& a, const SimStall& b) = default;
};

// "step:steps,..." in the order given (sim_stalls_parse's: by step); "" for none.
std::string sim_stalls_text(const std::vector<SimStall>& stalls);
// The stalls of `text` ("" or "none": no stall), sorted by step: sim_stalls_text of the result is
// the canonical text; see the errors above.
Result<std::vector<SimStall>> sim_stalls_parse(std::string_view text);

}  // namespace readyport
