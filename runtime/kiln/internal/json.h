// Internal: a small JSON reader and writer for the runtime's own files
// (tuning tables, kiln/tuning_table.h). The runtime depends on Abseil only,
// so it carries these ~300 lines instead of a JSON library.

#ifndef KILN_INTERNAL_JSON_H_
#define KILN_INTERNAL_JSON_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kiln {
namespace internal {

// A parsed JSON value. Objects keep their members in document order (a
// repeated member is a parse error).
struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  // For numbers written without a fraction or exponent that fit in int64.
  bool is_integer = false;
  int64_t integer = 0;
  std::string string;
  std::vector<JsonValue> items;
  std::vector<std::pair<std::string, JsonValue>> members;
  // 1-based line of the value's first character, for messages.
  int line = 0;

  // The member named `name`, or null.
  const JsonValue* Find(absl::string_view name) const;
  // "an object", "a string", ... for messages.
  const char* KindName() const;
};

// Parses `text` (one JSON document, RFC 8259). An InvalidArgument error
// names `origin`, the line and column, and what was expected.
absl::StatusOr<JsonValue> ParseJson(absl::string_view text,
                                    absl::string_view origin);

// `text` as a JSON string literal, quotes included.
std::string JsonQuote(absl::string_view text);

}  // namespace internal
}  // namespace kiln

#endif  // KILN_INTERNAL_JSON_H_
