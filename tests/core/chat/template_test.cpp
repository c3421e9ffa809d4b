// The twenty real chat templates of ../shared/templates rendered for every conversation, with
// and without the generation prompt, must match Python jinja2's output byte for byte (or fail
// where jinja2 raised). Also checks the public API entry points.
#include "core/chat/template.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>

#include "tests/core/chat/render_helpers.h"
#include "tests/support/shared_data.h"

namespace ox::chat {
namespace {

std::string read_text(const std::string& path) {
  std::vector<uint8_t> bytes = ox::test::read_file_bytes(path);
  return std::string(bytes.begin(), bytes.end());
}

TEST(ChatTemplate, ReproducesEveryExpectedRender) {
  const std::string path = ox::test::shared_path("templates/expected.json");
  if (!ox::test::file_exists(path)) GTEST_SKIP() << "missing " << path;
  const auto expected = nlohmann::ordered_json::parse(read_text(path), nullptr, false);
  ASSERT_FALSE(expected.is_discarded());
  ASSERT_TRUE(expected.contains("cases"));
  const auto& conversations = expected["conversations"];

  struct Tally {
    int passed = 0;
    int total = 0;
  };
  std::map<std::string, Tally> table;
  std::map<std::string, ChatTemplate> parsed;
  int cases = 0;
  for (const auto& c : expected["cases"]) {
    const std::string name = c["template"].get<std::string>();
    if (parsed.find(name) == parsed.end()) {
      Result<ChatTemplate> t = ChatTemplate::parse(read_text(ox::test::shared_path("templates/" + name)));
      ASSERT_TRUE(t.ok()) << name << ": " << t.status().message();
      parsed[name] = std::move(*t);
    }
    nlohmann::ordered_json ctx;
    ctx["messages"] = conversations[c["conversation"].get<std::string>()];
    ctx["add_generation_prompt"] = c["add_generation_prompt"];
    ctx["bos_token"] = c["bos_token"];
    ctx["eos_token"] = c["eos_token"];
    Result<std::string> out = parsed[name].render(ctx, test::fixed_clock());
    bool ok = false;
    const std::string label = name + " / " + c["conversation"].get<std::string>() +
                              (c["add_generation_prompt"].get<bool>() ? " / gen" : " / no-gen");
    if (c.contains("error")) {
      ok = !out.ok();
      EXPECT_FALSE(out.ok()) << label << ": jinja2 raised " << c["error"] << " but we rendered:\n" << *out;
    } else {
      ok = out.ok() && *out == c["output"].get<std::string>();
      if (!out.ok()) {
        ADD_FAILURE() << label << ": " << out.status().message();
      } else {
        EXPECT_EQ(*out, c["output"].get<std::string>()) << label;
      }
    }
    table[name].total++;
    table[name].passed += ok ? 1 : 0;
    ++cases;
  }
  EXPECT_EQ(cases, 160);
  EXPECT_EQ(table.size(), 20u);
  std::printf("%-56s %s\n", "template", "cases passed");
  int passed = 0;
  for (const auto& [name, t] : table) {
    std::printf("%-56s %d/%d\n", name.c_str(), t.passed, t.total);
    passed += t.passed;
  }
  std::printf("%-56s %d/%d\n", "TOTAL", passed, cases);
}

TEST(ChatTemplate, ApplyChatTemplateBuildsTransformersContext) {
  const char* tmpl =
      "{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
      "{% if add_generation_prompt %}<assistant>{% endif %}{{ eos_token }}{{ tools | length }}";
  const nlohmann::json messages = nlohmann::json::parse(R"([{"role":"user","content":"hi"}])", nullptr, false);
  const nlohmann::json extra = nlohmann::json::parse(R"({"tools":[{"name":"a"},{"name":"b"}]})", nullptr, false);
  Result<std::string> r = apply_chat_template(tmpl, messages, true, "<s>", "</s>", extra);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, "<s><user>hi<assistant></s>2");
  r = apply_chat_template(tmpl, messages, false, "", "", nlohmann::json());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, "<user>hi0");
  Result<std::string> bad = apply_chat_template(tmpl, messages, false, "", "", nlohmann::json::array());
  EXPECT_FALSE(bad.ok());
}

TEST(ChatTemplate, OrderedJsonKeepsKeyOrderAndJsonSortsIt) {
  const char* src = R"({"z": 1, "a": 2})";
  const std::string tmpl = "{{ d | tojson }}";
  nlohmann::ordered_json ordered;
  ordered["d"] = nlohmann::ordered_json::parse(src, nullptr, false);
  Result<std::string> r = render_template_ordered(tmpl, ordered);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, R"({"z": 1, "a": 2})");
  nlohmann::json sorted;
  sorted["d"] = nlohmann::json::parse(src, nullptr, false);
  r = render_template(tmpl, sorted);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, R"({"a": 2, "z": 1})");
}

TEST(ChatTemplate, ParsedTemplateRendersManyContexts) {
  Result<ChatTemplate> t = ChatTemplate::parse("{{ x * 2 }}");
  ASSERT_TRUE(t.ok());
  for (int i = 0; i < 3; ++i) {
    nlohmann::json ctx;
    ctx["x"] = i;
    Result<std::string> r = t->render(ctx);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(*r, std::to_string(i * 2));
  }
  EXPECT_FALSE(ChatTemplate().render(nlohmann::json::object()).ok());
  EXPECT_FALSE(render_template("{{ x }}", nlohmann::json::array()).ok()) << "context must be an object";
}

TEST(ChatTemplate, StrftimeNowUsesTheInjectedClock) {
  RenderOptions o;
  o.now = DateTime{1999, 12, 31, 23, 59, 58};
  Result<std::string> r = render_template("{{ strftime_now('%Y-%m-%d %H:%M:%S %A %b') }}", nlohmann::json::object(), o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "1999-12-31 23:59:58 Friday Dec");
  // Without an injected time the system clock is used: the year is at least 2024.
  r = render_template("{{ strftime_now('%Y') | int >= 2024 }}", nlohmann::json::object());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "True");
}

}  // namespace
}  // namespace ox::chat
