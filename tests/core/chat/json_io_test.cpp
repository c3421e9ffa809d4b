// JSON in and out: contexts convert with key order preserved (ordered_json), and dump_json
// writes exactly what Python's json.dumps writes for the same options.
#include "core/chat/json_io.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ox::chat {
namespace {

Value parse(const char* text) {
  Result<Value> v = value_from_json(nlohmann::ordered_json::parse(text, nullptr, false));
  EXPECT_TRUE(v.ok());
  return v.ok() ? *v : Value();
}

std::string dump(const Value& v, JsonDumpOptions o = {}) {
  Result<std::string> s = dump_json(v, o);
  return s.ok() ? *s : "ERROR: " + s.status().message();
}

TEST(JsonIo, DumpsLikePythonJsonDumps) {
  // Expected strings are Python's json.dumps(..., ensure_ascii=False) of the same data.
  const Value v = parse(R"({"a": [1, 2.0, null, true, "x\u0001\u007f"], "b": {}})");
  EXPECT_EQ(dump(v), "{\"a\": [1, 2.0, null, true, \"x\\u0001\x7f\"], \"b\": {}}");
  JsonDumpOptions indented;
  indented.indent = "   ";
  EXPECT_EQ(dump(parse(R"({"a": [1, {"b": []}]})"), indented),
            "{\n   \"a\": [\n      1,\n      {\n         \"b\": []\n      }\n   ]\n}");
  JsonDumpOptions ascii;
  ascii.ensure_ascii = true;
  EXPECT_EQ(dump(Value::string("é🦙\xe2\x80\xa8"), ascii), "\"\\u00e9\\ud83e\\udd99\\u2028\"");
  EXPECT_EQ(dump(Value::string("é🦙")), "\"é🦙\"");
  EXPECT_EQ(dump(Value::list({Value::real(std::nan("")), Value::real(INFINITY), Value::real(-INFINITY), Value::real(1e100)})),
            "[NaN, Infinity, -Infinity, 1e+100]");
  EXPECT_EQ(dump(Value::string("\"\\\n\r\t\b\f")), "\"\\\"\\\\\\n\\r\\t\\b\\f\"");
}

TEST(JsonIo, SeparatorsAndSortKeys) {
  const Value v = parse(R"({"z": 1, "a": [1, 2]})");
  JsonDumpOptions compact;
  compact.item_sep = ",";
  compact.key_sep = ":";
  EXPECT_EQ(dump(v, compact), R"({"z":1,"a":[1,2]})");
  JsonDumpOptions sorted;
  sorted.sort_keys = true;
  EXPECT_EQ(dump(v, sorted), R"({"a": [1, 2], "z": 1})");
}

TEST(JsonIo, UnserializableValuesFail) {
  EXPECT_EQ(dump(Value::undefined()), "ERROR: Object of type Undefined is not JSON serializable");
  Dict d;
  ASSERT_TRUE(d.set(Value::tuple({}), Value::none()).is_ok());
  EXPECT_EQ(dump(Value::dict(d)), "ERROR: keys must be str, int, float, bool or None, not tuple");
}

TEST(JsonIo, ConversionKeepsTypesAndOrder) {
  const Value v = parse(R"({"s": "x", "i": -3, "u": 18446744073709551615, "f": 0.5, "b": false, "n": null, "l": []})");
  ASSERT_TRUE(v.is_dict());
  const auto& e = v.dict().entries();
  ASSERT_EQ(e.size(), 7u);
  EXPECT_EQ(e[0].first.str(), "s");
  EXPECT_EQ(e[1].second.get_int(), -3);
  EXPECT_EQ(e[2].second.kind(), Kind::kFloat);  // past int64: Python would keep an int
  EXPECT_EQ(e[3].second.get_float(), 0.5);
  EXPECT_EQ(e[4].second.kind(), Kind::kBool);
  EXPECT_TRUE(e[5].second.is_none());
  EXPECT_EQ(e[6].second.kind(), Kind::kList);
  // nlohmann::json (not ordered) iterates keys sorted.
  Result<Value> sorted = value_from_json(nlohmann::json::parse(R"({"b": 1, "a": 2})", nullptr, false));
  ASSERT_TRUE(sorted.ok());
  EXPECT_EQ(sorted->dict().entries()[0].first.str(), "a");
}

}  // namespace
}  // namespace ox::chat
