// property_params: READYPORT_PROPERTY_SCALE over RapidCheck's configuration.
#include "property_runner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <vector>

// RapidCheck's own encoder of the `reproduce=` value (src/detail/Serialization, not in its
// installed headers); declared here with the signature of the pinned version.
namespace rc::detail {
std::string reproduceMapToString(const std::unordered_map<std::string, Reproduce>& map);
}  // namespace rc::detail

namespace readyport::properties {

namespace {

// FNV-1a: a fixed, portable hash of the test id.
std::uint64_t id_hash(const std::string& text) {
  std::uint64_t hash = 0xcbf29ce484222325u;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3u;
  }
  return hash;
}

}  // namespace

rc::detail::TestMetadata current_test_metadata() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description = info->name();
  return metadata;
}

rc::detail::TestParams property_params(const std::string& test_id, std::string* error_out,
                                       int cases_default) {
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  params.seed ^= id_hash(test_id);
  const char* rc_params = std::getenv("RC_PARAMS");
  if (rc_params != nullptr && std::string(rc_params).find("max_success") != std::string::npos) {
    return params;  // the user's number of cases
  }
  double scale = 1.0;
  if (const char* text = std::getenv("READYPORT_PROPERTY_SCALE"); text != nullptr) {
    char* end = nullptr;
    scale = std::strtod(text, &end);
    if (end == text || *end != '\0' || !std::isfinite(scale) || scale <= 0 || scale > 1e6) {
      *error_out =
          std::string("READYPORT_PROPERTY_SCALE must be a positive number, got '") + text + "'";
      return params;
    }
  }
  params.maxSuccess = std::max(1, static_cast<int>(std::lround(cases_default * scale)));
  return params;
}

std::string property_replay_line(const rc::detail::TestMetadata& metadata,
                                 const rc::detail::TestResult& result) {
  if (!result.template is<rc::detail::FailureResult>()) {
    return "";
  }
  const auto& failure = result.template get<rc::detail::FailureResult>();
  std::unordered_map<std::string, rc::detail::Reproduce> map;
  map.emplace(metadata.id, failure.reproduce);
  // The GoogleTest filter names the running test "Suite.Name" (both may hold '/': a
  // parameterised test's prefix and parameter), not RapidCheck's id "Suite/Name".
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string filter =
      info == nullptr ? metadata.id : std::string(info->test_suite_name()) + "." + info->name();
  const std::vector<std::string> argv = ::testing::internal::GetArgvs();
  const std::string binary = argv.empty() ? "readyport_properties_test" : argv.front();
  return "replay: RC_PARAMS=\"reproduce=" + rc::detail::reproduceMapToString(map) + "\" " + binary +
         " --gtest_filter='" + filter + "'";
}

}  // namespace readyport::properties
