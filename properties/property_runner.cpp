// property_params: READYPORT_PROPERTY_SCALE over RapidCheck's configuration.
#include "property_runner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>

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

rc::detail::TestParams property_params(const std::string& test_id, std::string* error_out) {
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
  params.maxSuccess = std::max(1, static_cast<int>(std::lround(kPropertyCasesDefault * scale)));
  return params;
}

}  // namespace readyport::properties
