// JSON Schema -> GBNF: integer ranges checked number by number; for a set of schemas, random
// walks through the grammar constraint (seeded, over a vocabulary of single chars and some longer
// tokens) whose every output is validated by ajv in node (tests/core/sampler/validate_json.mjs),
// and parsed as JSON here; unsupported keywords are errors that list them.
#include "core/sampler/json_schema.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>

#include <nlohmann/json.hpp>

#include "core/sampler/grammar_constraint.h"
#include "core/sampler/grammar_parser.h"
#include "tests/support/shared_data.h"

namespace ox {
namespace {

std::shared_ptr<const TokenTrie> walk_vocab() {
  std::vector<std::string> pieces;
  for (int c = 0x20; c < 0x7F; ++c) pieces.push_back(std::string(1, static_cast<char>(c)));
  for (const char* p : {"\n", "\t", "\"", "{\"", "\":", "\": ", ", ", "true", "null", "false", "é", "中", "\\u00", "\\n",
                        "12", "-0", ".5", "e+", "\xC3", "\xA9", "ab", "-01-", "T1", ":00", "Z\""}) {
    pieces.push_back(p);
  }
  pieces.push_back("</s>");
  return TokenTrie::build(pieces, std::vector<int32_t>{static_cast<int32_t>(pieces.size() - 1)});
}

std::unique_ptr<GrammarConstraint> schema_constraint(const std::string& schema, std::shared_ptr<const TokenTrie> trie) {
  Result<std::string> gbnf = json_schema_to_gbnf(schema);
  EXPECT_TRUE(gbnf.ok()) << schema << "\n -> " << gbnf.status().message();
  if (!gbnf.ok()) return nullptr;
  Result<Grammar> g = parse_grammar(*gbnf);
  EXPECT_TRUE(g.ok()) << schema << "\n" << *gbnf << "\n -> " << g.status().message();
  if (!g.ok()) return nullptr;
  const int32_t eog = trie->n_vocab() - 1;
  auto c = GrammarConstraint::create(std::move(g).value(), std::move(trie), std::vector<int32_t>{eog});
  return c.ok() ? std::move(c).value() : nullptr;
}

// One random sentence: random allowed tokens, stopping at an allowed end with probability 1/3;
// after a while closing characters are preferred, so nesting winds down.
bool random_walk(GrammarConstraint& c, const TokenTrie& trie, std::mt19937& rng, std::string* out) {
  c.reset();
  out->clear();
  const int32_t eog = trie.n_vocab() - 1;
  for (int step = 0; step < 4000; ++step) {
    const std::vector<uint8_t>& mask = c.allowed_tokens();
    if (mask[eog] && (rng() % 3 == 0 || step > 200)) return true;
    std::vector<int32_t> allowed, closers;
    for (int32_t id = 0; id < eog; ++id) {
      if (!mask[id]) continue;
      allowed.push_back(id);
      const std::string& p = trie.piece(id);
      if (p == "\"" || p == "}" || p == "]" || p == "0" || p == "1" || p == "a" || p == "Z\"") closers.push_back(id);
    }
    if (allowed.empty()) return mask[eog] != 0;
    const std::vector<int32_t>& from = (step > 40 && !closers.empty() && rng() % 10 < 8) ? closers : allowed;
    const int32_t id = from[rng() % from.size()];
    EXPECT_TRUE(c.accept(id).is_ok());
    *out += trie.piece(id);
  }
  return false;
}

const char* kSchemas[] = {
    R"({"type": "object", "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 8},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "maxItems": 3},
        "active": {"type": "boolean"}}, "required": ["name", "age"], "additionalProperties": false})",
    R"({"type": "array", "items": {"type": "number", "minimum": -5, "maximum": 10}, "minItems": 1, "maxItems": 4})",
    R"({"type": "array", "items": {"type": "number", "minimum": 3}})",
    R"({"type": "array", "items": {"type": "number", "maximum": -2}})",
    R"({"type": "integer", "exclusiveMinimum": -120, "maximum": 3456})",
    R"({"type": "array", "items": {"type": "integer", "exclusiveMinimum": 2.5, "exclusiveMaximum": 40.5}})",
    R"({"type": "array", "items": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}})",
    R"({"type": "array", "items": {"type": "number", "minimum": -2.75, "maximum": 3.125}})",
    R"({"type": "array", "items": {"type": "number", "exclusiveMinimum": -0.5, "maximum": -0.25}})",
    R"({"type": "array", "items": {"type": "number", "exclusiveMinimum": 1.1, "exclusiveMaximum": 1.1000001}})",
    R"({"type": "array", "items": {"type": "number", "exclusiveMinimum": 7}})",
    R"({"type": "array", "items": {"type": "number", "exclusiveMaximum": -0.001}})",
    R"({"type": "array", "items": {"type": "number", "minimum": 0.1, "exclusiveMinimum": 0.1, "maximum": 99.99}})",
    R"({"type": "array", "items": {"type": "integer", "minimum": 17}})",
    R"({"type": "array", "items": {"type": "integer", "maximum": -7}})",
    R"({"$defs": {"node": {"type": "object", "properties": {"value": {"type": "integer"},
        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2}},
        "required": ["value"], "additionalProperties": false}}, "$ref": "#/$defs/node"})",
    R"({"anyOf": [{"type": "null"}, {"const": "fixed"}, {"type": "string", "pattern": "^[a-c]+-[0-9]{2,3}(x|yz)?$"}]})",
    R"({"type": "object", "properties": {"d": {"type": "string", "format": "date"}, "t": {"type": "string", "format": "time"},
        "dt": {"type": "string", "format": "date-time"}, "u": {"type": "string", "format": "uuid"}},
        "required": ["d", "t", "dt", "u"]})",
    R"({"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": {"type": "boolean"}})",
    R"({"allOf": [{"type": "object", "properties": {"x": {"type": "integer"}}},
        {"anyOf": [{"type": "object", "properties": {"y": {"type": "string", "maxLength": 3}}}]}]})",
    R"({"type": "array", "prefixItems": [{"type": "boolean"}, {"enum": [1, "two", null, {"k": [2]}]}]})",
    R"({"type": "object"})",
    R"({"type": ["integer", "null", "string"], "minimum": 5, "maxLength": 2})",
    R"({"definitions": {"s": {"type": "string", "pattern": "^\\d+\\.\\w\\\\[^x]*$"}}, "type": "array", "items": {"$ref": "#/definitions/s"}})",
    R"({"type": "object", "properties": {"q": {"const": "say \"hi\"\n"}, "e": {"enum": [0.5, -2, true]}}, "required": ["q"]})",
};

TEST(JsonSchema, RandomOutputsValidateWithAjv) {
  const auto trie = walk_vocab();
  std::mt19937 rng(42);
  const std::string path = ::testing::TempDir() + "oxidize_json_schema_outputs.jsonl";
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  size_t n_outputs = 0;
  for (const char* schema : kSchemas) {
    auto c = schema_constraint(schema, trie);
    ASSERT_NE(c, nullptr) << schema;
    nlohmann::json line;
    line["schema"] = nlohmann::json::parse(schema);
    line["outputs"] = nlohmann::json::array();
    int n_ended = 0;
    for (int i = 0; i < 60; ++i) {
      std::string text;
      if (!random_walk(*c, *trie, rng, &text)) continue;
      ++n_ended;
      EXPECT_FALSE(nlohmann::json::parse(text, nullptr, false).is_discarded()) << "not JSON: " << text << "\n" << schema;
      line["outputs"].push_back(text);
    }
    EXPECT_GE(n_ended, 50) << schema;
    n_outputs += line["outputs"].size();
    const std::string dumped = line.dump() + "\n";
    std::fwrite(dumped.data(), 1, dumped.size(), f);
  }
  std::fclose(f);
  EXPECT_GT(n_outputs, 800u);
  const std::string script = test::source_path("tests/core/sampler/validate_json.mjs");
  const std::string ajv = test::source_path("tests/node/node_modules/ajv/package.json");
  if (!test::file_exists(ajv) || std::system("node --version > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "node or tests/node/node_modules missing (scripts/setup installs ajv); outputs only parsed as JSON";
  }
  EXPECT_EQ(std::system(("node " + script + " " + path).c_str()), 0) << "ajv refused some outputs (listed above)";
}

TEST(JsonSchema, IntegerRangesMatchExactlyTheirNumbers) {
  const auto trie = walk_vocab();
  struct Range {
    int64_t lo;
    bool has_lo;
    int64_t hi;
    bool has_hi;
  };
  const Range ranges[] = {{0, true, 9, true},     {-5, true, 5, true},   {7, true, 1234, true}, {-1000, true, -13, true},
                          {100, true, 100, true}, {0, true, 0, false},   {42, true, 0, false},  {-42, true, 0, false},
                          {0, false, 0, true},    {0, false, 59, true},  {0, false, -8, true},  {-99, true, 101, true},
                          {1, true, 0, false},    {10, true, 0, false},  {0, false, 1000, true}};
  for (const Range& r : ranges) {
    const std::string gbnf = "root ::= " + json_schema_detail::integer_range(r.lo, r.has_lo, r.hi, r.has_hi) + "\n";
    Result<Grammar> g = parse_grammar(gbnf);
    ASSERT_TRUE(g.ok()) << gbnf << g.status().message();
    auto c = GrammarConstraint::create(*g, trie, std::vector<int32_t>{});
    ASSERT_TRUE(c.ok());
    for (int64_t v = -1300; v <= 1300; ++v) {
      (*c)->reset();
      const bool in = (!r.has_lo || v >= r.lo) && (!r.has_hi || v <= r.hi);
      const bool ok = (*c)->accept_text(std::to_string(v)).is_ok() && (*c)->can_end();
      ASSERT_EQ(ok, in) << v << " in " << gbnf;
    }
    (*c)->reset();
    EXPECT_FALSE((*c)->accept_text("01").is_ok() && (*c)->can_end()) << gbnf;  // no leading zeros
  }
}

std::string conversion_error(const std::string& schema) {
  Result<std::string> g = json_schema_to_gbnf(schema);
  EXPECT_FALSE(g.ok()) << schema << " converted to:\n" << (g.ok() ? *g : "");
  return g.ok() ? "" : g.status().message();
}

TEST(JsonSchema, UnsupportedKeywordsAreListed) {
  std::string m = conversion_error(R"({"type": "object", "patternProperties": {"a": {}}, "minProperties": 1})");
  EXPECT_NE(m.find("'patternProperties'"), std::string::npos) << m;
  EXPECT_NE(m.find("'minProperties'"), std::string::npos) << m;
  m = conversion_error(R"({"type": "object", "properties": {"x": {"type": "array", "uniqueItems": true}}})");
  EXPECT_NE(m.find("#/properties/x: unsupported keyword 'uniqueItems'"), std::string::npos) << m;
  EXPECT_NE(conversion_error(R"({"not": {"type": "null"}})").find("'not'"), std::string::npos);
  EXPECT_NE(conversion_error(R"({"type": "string", "format": "email"})").find("format 'email'"), std::string::npos);
  EXPECT_NE(conversion_error(R"({"type": "number", "minimum": 0.1234567890123456})").find("minimum 0.1234567890123456 has more than 15 significant digits"),
            std::string::npos);
  EXPECT_NE(conversion_error(R"({"type": "number", "exclusiveMinimum": 2, "maximum": 2})").find("no number lies within the bounds"),
            std::string::npos);
  EXPECT_NE(conversion_error(R"({"type": "number", "minimum": "1"})").find("minimum must be a number"), std::string::npos);
  EXPECT_NE(conversion_error(R"({"type": "string", "pattern": "abc"})").find("not anchored"), std::string::npos);
  EXPECT_NE(conversion_error(R"({"type": "string", "pattern": "^(?=a)b$"})").find("unsupported group"), std::string::npos);
  EXPECT_NE(conversion_error(R"({"type": "string", "pattern": "^a\\bc$"})").find("unsupported escape"), std::string::npos);
  EXPECT_NE(conversion_error(R"({"$ref": "https://example.com/s.json"})").find("only references into the same document"),
            std::string::npos);
  EXPECT_NE(conversion_error(R"({"$ref": "#/$defs/missing"})").find("cannot resolve"), std::string::npos);
  EXPECT_NE(conversion_error(R"({"type": "integer", "minLength": 2})").find("'minLength' not supported with type integer"),
            std::string::npos);
  EXPECT_NE(conversion_error(R"({"type": "object", "required": ["a"]})").find("required property 'a'"), std::string::npos);
  EXPECT_NE(conversion_error(R"({"type": "string", "maxLength": 5000})").find("maxLength"), std::string::npos);
  EXPECT_NE(conversion_error(R"({"type": "integer", "minimum": 10, "maximum": 2})").find("no integer"), std::string::npos);
  EXPECT_NE(conversion_error(R"({"type": "tuple"})").find("unknown type 'tuple'"), std::string::npos);
  EXPECT_NE(conversion_error("{\"type\": ").find("not valid JSON"), std::string::npos);
  EXPECT_NE(conversion_error("false").find("must be an object"), std::string::npos);
}

TEST(JsonSchema, AnnotationsAreIgnoredAndJsonObjectGrammarParses) {
  Result<std::string> g = json_schema_to_gbnf(
      R"({"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "t", "description": "d",
          "type": "integer", "default": 3, "examples": [1], "$comment": "c"})");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_TRUE(parse_grammar(*g).ok());
  Result<Grammar> obj = parse_grammar(json_object_gbnf());
  ASSERT_TRUE(obj.ok()) << obj.status().message();
}

TEST(JsonSchema, RecursiveSchemaTerminatesAndGrammarIsNotLeftRecursive) {
  Result<std::string> g = json_schema_to_gbnf(
      R"({"type": "object", "properties": {"next": {"$ref": "#"}, "v": {"type": "integer"}}, "required": ["v"]})");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_TRUE(parse_grammar(*g).ok()) << *g;
}

}  // namespace
}  // namespace ox
