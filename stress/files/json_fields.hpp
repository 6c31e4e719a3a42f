// stress/files/json_fields.hpp: reading the fields of a JSON document that a person may have edited
// (failure bundles, corpus entries), with a clear error for each way a field can be wrong.
//
//   std::uint64_t seed = 0;
//   if (Status s = json_field_u64(doc, "bundle", "seed", 0, kJsonU64Max, &seed); !s.ok()) return s;
//   // "bundle.seed: missing", "bundle.seed: expected a whole number in 0..18446744073709551615,
//   //  got \"7\"" ...
//
// `where` names the object for messages ("bundle", "bundle.options"). Ownership: none kept.
// Threading: reentrant. Errors: kInvalidArgument naming the field; nothing throws (types are
// checked before any value is read).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "readyport/status.hpp"

namespace readyport {

using Json = nlohmann::ordered_json;

inline constexpr std::uint64_t kJsonU64Max = std::numeric_limits<std::uint64_t>::max();
// Arrays and objects nested deeper than this are refused (the files read here nest 4 levels).
inline constexpr int kJsonDepthMax = 64;

// Parses `text` as one JSON document. Errors: kInvalidArgument with the parser's position and
// `name` (a file name, for the message), or saying it nests deeper than kJsonDepthMax.
Result<Json> json_parse_document(std::string_view text, std::string_view name);

// The field `key` of the object `object`: present and of the type asked, else an error.
Status json_field_object(const Json& object, std::string_view where, const char* key,
                         const Json** value_out);
Status json_field_string(const Json& object, std::string_view where, const char* key,
                         std::string* value_out);
Status json_field_bool(const Json& object, std::string_view where, const char* key,
                       bool* value_out);
Status json_field_u64(const Json& object, std::string_view where, const char* key,
                      std::uint64_t minimum, std::uint64_t maximum, std::uint64_t* value_out);
// A whole number, or null (written for "no value", e.g. no cap).
Status json_field_u64_or_null(const Json& object, std::string_view where, const char* key,
                              std::uint64_t minimum, std::uint64_t maximum, bool* null_out,
                              std::uint64_t* value_out);
// Optional fields: absent gives `fallback` (a wrong type is still an error).
Status json_field_string_optional(const Json& object, std::string_view where, const char* key,
                                  std::string_view fallback, std::string* value_out);
// Every key of `object` is one of `known`: a misspelt field is an error, not ignored.
Status json_fields_known(const Json& object, std::string_view where,
                         const std::vector<std::string_view>& known);
// The document's "format_version" is `version`, the one this build reads.
Status json_format_version_check(const Json& document, std::string_view where,
                                 std::uint64_t version);

}  // namespace readyport
