// stress/cli/cli_number.hpp: numbers on the command line, validated one way in every tool
// (readyport-stress and readyport-sim-trace both include this header; fakes/test/CMakeLists.txt
// adds this directory for the second).
//
// A number is whole and decimal: digits only, no sign, no spaces, no "0x", no exponent, in
// [minimum, maximum]. So `--seed -5` is refused (strtoull would make it 2^64-5), as are `--seeds
// 1e3`, `--depth 0x3` and `--seeds ''`.
//
//   std::uint64_t seed = 0;
//   readyport::cli_add_number(app, "--seed", &seed, 0, readyport::kCliNumberMax, "the seed");
//   // after app.parse(): `seed` holds the value if --seed was given (option->count() != 0).
//
// Ownership: the option keeps `value_out`, which must outlive the App's parse. Threading: as the
// App (one thread). Errors: a bad value makes App::parse throw CLI::ValidationError naming the
// option and the allowed range; the callers turn CLI11's exceptions into a Status or exit 2.
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>

#include "readyport/assert.hpp"

namespace readyport {

inline constexpr std::uint64_t kCliNumberMax = std::numeric_limits<std::uint64_t>::max();

// Parses `text` as above. Returns false (and leaves *value_out) when it is not one.
inline bool cli_number_parse(std::string_view text, std::uint64_t minimum, std::uint64_t maximum,
                             std::uint64_t* value_out) {
  if (text.empty()) {
    return false;
  }
  for (char c : text) {
    if (c < '0' || c > '9') {
      return false;  // no sign, no space, no base prefix
    }
  }
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, error] = std::from_chars(text.data(), end, value, 10);
  if (error != std::errc() || ptr != end) {
    return false;  // out of range: errc::result_out_of_range
  }
  if (value < minimum || value > maximum) {
    return false;
  }
  *value_out = value;
  return true;
}

// "a decimal number in 1..64".
inline std::string cli_number_range_text(std::uint64_t minimum, std::uint64_t maximum) {
  return "a decimal number in " + std::to_string(minimum) + ".." + std::to_string(maximum);
}

// Adds `name` (e.g. "--depth") taking one number in [minimum, maximum], stored into *value_out
// after validation; its help line ends with the range. Given twice, App::parse refuses it (no
// silent override).
template <typename Integer>
CLI::Option* cli_add_number(CLI::App& app, const std::string& name, Integer* value_out,
                            std::uint64_t minimum, std::uint64_t maximum,
                            const std::string& description) {
  static_assert(std::numeric_limits<Integer>::is_integer &&
                !std::numeric_limits<Integer>::is_signed);
  // The range must fit the destination (a contract: the caller's constants).
  READYPORT_ASSERT(maximum <= std::numeric_limits<Integer>::max() && minimum <= maximum);
  CLI::Option* option = app.add_option(
      name,
      [value_out, minimum, maximum](const CLI::results_t& results) {
        std::uint64_t number = 0;
        if (results.size() != 1 || !cli_number_parse(results[0], minimum, maximum, &number)) {
          return false;
        }
        *value_out = static_cast<Integer>(number);
        return true;
      },
      description + " [" + std::to_string(minimum) + ".." + std::to_string(maximum) + "]");
  option->type_name("N");
  option->type_size(1);
  option->expected(1);
  option->multi_option_policy(CLI::MultiOptionPolicy::Throw);
  option->check(CLI::Validator(
      [minimum, maximum](std::string& text) {
        std::uint64_t number = 0;
        if (cli_number_parse(text, minimum, maximum, &number)) {
          return std::string();
        }
        // A whole decimal number outside the range says so (`--seeds 0`), not "not a number".
        if (cli_number_parse(text, 0, kCliNumberMax, &number)) {
          return "'" + text + "' is out of range: it must be in " + std::to_string(minimum) + ".." +
                 std::to_string(maximum);
        }
        return "'" + text + "' is not " + cli_number_range_text(minimum, maximum);
      },
      "", "number"));
  return option;
}

}  // namespace readyport
