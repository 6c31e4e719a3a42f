// Stalls as text (sim_stall.hpp).
#include "readyport/fake/sim_stall.hpp"

#include <algorithm>
#include <charconv>

namespace readyport {
namespace {

// A decimal in [1, max] (no sign, no leading '+'); false otherwise.
bool parse_count(std::string_view text, std::uint64_t max, std::uint64_t* value_out) {
  if (text.empty() || text.front() < '0' || text.front() > '9') {
    return false;
  }
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value == 0 || value > max) {
    return false;
  }
  *value_out = value;
  return true;
}

Status bad_stall(std::string_view token, const std::string& why) {
  return Status(StatusCode::kInvalidArgument,
                "stalls: bad token '" + std::string(token) + "': " + why);
}

}  // namespace

std::string sim_stalls_text(const std::vector<SimStall>& stalls) {
  std::string text;
  for (const SimStall& stall : stalls) {
    if (!text.empty()) {
      text += ',';
    }
    text += std::to_string(stall.step) + ':' + std::to_string(stall.steps);
  }
  return text;
}

Result<std::vector<SimStall>> sim_stalls_parse(std::string_view text) {
  std::vector<SimStall> stalls;
  if (text.empty() || text == "none") {
    return stalls;
  }
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string_view token = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const std::size_t colon = token.find(':');
    if (colon == std::string_view::npos) {
      return bad_stall(token, "not step:steps");
    }
    SimStall stall;
    if (!parse_count(token.substr(0, colon), ~std::uint64_t{0}, &stall.step)) {
      return bad_stall(token, "the step is not a decimal from 1 to 2^64-1");
    }
    if (!parse_count(token.substr(colon + 1), kSimStallStepsMax, &stall.steps)) {
      return bad_stall(
          token, "the steps are not a decimal from 1 to " + std::to_string(kSimStallStepsMax));
    }
    for (const SimStall& other : stalls) {
      if (other.step == stall.step) {
        return bad_stall(token, "step " + std::to_string(stall.step) + " is given twice");
      }
    }
    if (stalls.size() == kSimStallsMax) {
      return bad_stall(token, "more than " + std::to_string(kSimStallsMax) + " stalls");
    }
    stalls.push_back(stall);
    if (comma == std::string_view::npos) {
      std::sort(stalls.begin(), stalls.end(),
                [](const SimStall& a, const SimStall& b) { return a.step < b.step; });
      return stalls;
    }
    start = comma + 1;
  }
}

}  // namespace readyport
