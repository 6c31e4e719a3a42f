#include "files/json_fields.hpp"

#include <algorithm>
#include <string>

namespace readyport {
namespace {

Status field_error(std::string_view where, std::string_view key, std::string_view why) {
  return Status(StatusCode::kInvalidArgument,
                std::string(where) + "." + std::string(key) + ": " + std::string(why));
}

// The value, shortened, for an error message.
std::string shown(const Json& value) {
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  constexpr std::size_t kShownMax = 60;
  if (text.size() > kShownMax) {
    text = text.substr(0, kShownMax) + "...";
  }
  return text;
}

// The field, or null with an error when `object` is not an object or has no such key.
const Json* find(const Json& object, std::string_view where, const char* key, Status* status_out) {
  if (!object.is_object()) {
    *status_out = Status(StatusCode::kInvalidArgument,
                         std::string(where) + ": expected an object, got " + shown(object));
    return nullptr;
  }
  const auto it = object.find(key);
  if (it == object.end()) {
    *status_out = field_error(where, key, "missing");
    return nullptr;
  }
  return &*it;
}

}  // namespace

Result<Json> json_parse_document(std::string_view text, std::string_view name) {
  // Arrays and objects deeper than kJsonDepthMax are not kept (the callback drops them as they
  // start) and the document is refused: nlohmann's parser is iterative, but dump() (an error
  // message's shown()) and a copy recurse once a level, and a file of 64,000 '[' overflowed the
  // stack. The files read here nest 4 levels.
  bool too_deep = false;
  const Json::parser_callback_t keep = [&too_deep](int depth, Json::parse_event_t event, Json&) {
    if (depth > kJsonDepthMax &&
        (event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start)) {
      too_deep = true;
      return false;
    }
    return true;
  };
  // No exceptions: a discarded value says the text is not JSON; a second pass with a
  // non-throwing callback is not needed for the message, which names the file.
  Json document = Json::parse(text.begin(), text.end(), keep, /*allow_exceptions=*/false);
  if (document.is_discarded()) {
    return Status(StatusCode::kInvalidArgument,
                  std::string(name) + ": not valid JSON (python3 -m json.tool shows where)");
  }
  if (too_deep) {
    return Status(StatusCode::kInvalidArgument, std::string(name) + ": nested deeper than " +
                                                    std::to_string(kJsonDepthMax) + " levels");
  }
  return document;
}

Status json_field_object(const Json& object, std::string_view where, const char* key,
                         const Json** value_out) {
  Status status;
  const Json* value = find(object, where, key, &status);
  if (value == nullptr) {
    return status;
  }
  if (!value->is_object()) {
    return field_error(where, key, "expected an object, got " + shown(*value));
  }
  *value_out = value;
  return Status();
}

Status json_field_string(const Json& object, std::string_view where, const char* key,
                         std::string* value_out) {
  Status status;
  const Json* value = find(object, where, key, &status);
  if (value == nullptr) {
    return status;
  }
  if (!value->is_string()) {
    return field_error(where, key, "expected a string, got " + shown(*value));
  }
  *value_out = value->get<std::string>();
  return Status();
}

Status json_field_bool(const Json& object, std::string_view where, const char* key,
                       bool* value_out) {
  Status status;
  const Json* value = find(object, where, key, &status);
  if (value == nullptr) {
    return status;
  }
  if (!value->is_boolean()) {
    return field_error(where, key, "expected true or false, got " + shown(*value));
  }
  *value_out = value->get<bool>();
  return Status();
}

Status json_field_u64(const Json& object, std::string_view where, const char* key,
                      std::uint64_t minimum, std::uint64_t maximum, std::uint64_t* value_out) {
  bool null = false;
  Status status = json_field_u64_or_null(object, where, key, minimum, maximum, &null, value_out);
  if (status.ok() && null) {
    return field_error(where, key,
                       "expected a whole number in " + std::to_string(minimum) + ".." +
                           std::to_string(maximum) + ", got null");
  }
  return status;
}

Status json_field_u64_or_null(const Json& object, std::string_view where, const char* key,
                              std::uint64_t minimum, std::uint64_t maximum, bool* null_out,
                              std::uint64_t* value_out) {
  Status status;
  const Json* value = find(object, where, key, &status);
  if (value == nullptr) {
    return status;
  }
  *null_out = value->is_null();
  if (*null_out) {
    return Status();
  }
  // nlohmann keeps non-negative integers as unsigned; negatives, fractions and strings are not.
  if (!value->is_number_unsigned() || value->get<std::uint64_t>() < minimum ||
      value->get<std::uint64_t>() > maximum) {
    return field_error(where, key,
                       "expected a whole number in " + std::to_string(minimum) + ".." +
                           std::to_string(maximum) + ", got " + shown(*value));
  }
  *value_out = value->get<std::uint64_t>();
  return Status();
}

Status json_field_string_optional(const Json& object, std::string_view where, const char* key,
                                  std::string_view fallback, std::string* value_out) {
  if (object.is_object() && object.find(key) == object.end()) {
    *value_out = std::string(fallback);
    return Status();
  }
  return json_field_string(object, where, key, value_out);
}

Status json_fields_known(const Json& object, std::string_view where,
                         const std::vector<std::string_view>& known) {
  if (!object.is_object()) {
    return Status(StatusCode::kInvalidArgument,
                  std::string(where) + ": expected an object, got " + shown(object));
  }
  for (const auto& item : object.items()) {
    if (std::find(known.begin(), known.end(), item.key()) == known.end()) {
      return field_error(where, item.key(), "unknown field (misspelt?)");
    }
  }
  return Status();
}

Status json_format_version_check(const Json& document, std::string_view where,
                                 std::uint64_t version) {
  std::uint64_t found = 0;
  if (Status s = json_field_u64(document, where, "format_version", 1, kJsonU64Max, &found);
      !s.ok()) {
    return s;
  }
  if (found != version) {
    return Status(StatusCode::kInvalidArgument,
                  std::string(where) + ".format_version: " + std::to_string(found) +
                      ", this build reads " + std::to_string(version));
  }
  return Status();
}

}  // namespace readyport
