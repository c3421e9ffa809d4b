// JSON Schema -> GBNF, covering what llama.cpp's common/json-schema-to-grammar.cpp covers (types,
// properties/required/additionalProperties, enum/const, items/prefixItems/minItems/maxItems,
// anyOf/oneOf/allOf, local $ref incl. recursive, string length/pattern/format, integer and number
// bounds). A keyword it cannot honour is an error listing it: a schema is never silently loosened.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/status.h"

namespace ox {

// The grammar's start rule is "root".
Result<std::string> json_schema_to_gbnf(std::string_view schema_json);

// A grammar for any JSON object (llama.cpp's json_object / response_format {"type": "json_object"}).
std::string json_object_gbnf();

namespace json_schema_detail {

// GBNF alternatives for the decimal integers in [min, max] (either side may be open: has_min /
// has_max false), written as llama.cpp's build_min_max_int writes them.
std::string integer_range(int64_t min, bool has_min, int64_t max, bool has_max);

// A bound of a `number`: its value, whether it is exclusive, and the keyword that gave it.
struct NumberBound {
  double value;
  bool exclusive;
  const char* keyword;
};
// GBNF for the decimal numbers (no exponent) within the bounds (json_schema_numbers.cpp); an error
// when none lies within them or a bound cannot be compared exactly.
Result<std::string> number_range(const std::optional<NumberBound>& lo, const std::optional<NumberBound>& hi);

// A GBNF string literal matching `text` exactly.
std::string gbnf_literal(std::string_view text);

// GBNF for an anchored regex ("^...$") of the subset llama.cpp converts, matching the string's
// JSON-encoded characters (without the quotes); an error names what is not supported.
Result<std::string> pattern_to_gbnf(std::string_view pattern);

}  // namespace json_schema_detail
}  // namespace ox
