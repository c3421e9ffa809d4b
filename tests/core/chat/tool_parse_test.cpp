// Tool-call parsing per format: hand-written replies in each family's syntax (single call,
// parallel calls, content before a call, reasoning, malformed syntax kept as content), and every
// reply streamed: cut at each byte, each partial parse extends the previous one and the OpenAI
// deltas add up to the final parse.
#include "core/chat/tool_parse.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/chat/json_scan.h"

namespace ox::chat {
namespace {

struct Call {
  std::string name;
  std::string arguments;
  std::string id = "";
};

struct Example {
  ChatFormat format;
  const char* name;
  std::string text;
  std::string content;
  std::string reasoning;
  std::vector<Call> calls;
  bool forced_open = false;
  bool streams = true;  // false: a partial parse may see a call the complete reply drops
};

const std::string kDsCall =
    "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"location\": \"Paris\"}\n```<｜tool▁call▁end｜>";
const std::string kDsCall2 =
    "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n{\"tz\": \"CET\"}\n```<｜tool▁call▁end｜>";
const Call kParis{"get_weather", R"({"location":"Paris"})"};
const Call kCet{"get_time", R"({"tz":"CET"})"};

const std::vector<Example>& examples() {
  static const std::vector<Example> kExamples = {
      // Hermes 2 Pro / Qwen 2.5 / Qwen 3
      {ChatFormat::kHermes, "hermes single",
       "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\", \"unit\": \"c\"}}\n</tool_call>", "", "",
       {{"get_weather", R"({"location":"Paris","unit":"c"})"}}},
      {ChatFormat::kHermes, "hermes parallel",
       "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": "
       "\"get_time\", \"arguments\": {\"tz\": \"CET\"}}\n</tool_call>",
       "", "", {kParis, kCet}},
      {ChatFormat::kHermes, "hermes content first",
       "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}\n</tool_call>",
       "Let me check.", "", {kParis}},
      {ChatFormat::kHermes, "qwen3 thinking",
       "<think>\nThe user wants the weather.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": "
       "\"Paris\"}}\n</tool_call>",
       "", "The user wants the weather.", {kParis}},
      {ChatFormat::kHermes, "hermes quoted arguments",
       "<tool_call>{\"name\": \"f\", \"arguments\": \"{\\\"a\\\": 1}\"}</tool_call>", "", "", {{"f", "{\"a\": 1}"}}},
      {ChatFormat::kHermes, "hermes unicode", "<tool_call>{\"name\": \"say\", \"arguments\": {\"text\": \"Привет 🦙\"}}</tool_call>",
       "", "", {{"say", R"({"text":"Привет 🦙"})"}}},
      {ChatFormat::kHermes, "hermes malformed json",
       "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": }\n</tool_call>",
       "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": }\n</tool_call>", "", {}, false, false},
      {ChatFormat::kHermes, "hermes function tag",
       "I'll check.\n<function=get_weather>{\"location\": \"Paris\"}</function><function=get_time>{\"tz\": \"CET\"}</function>",
       "I'll check.", "", {kParis, kCet}},
      {ChatFormat::kHermes, "hermes function tag in prose", "Use <function=x> tags like <b>.", "Use <function=x> tags like <b>.", "",
       {}},
      {ChatFormat::kHermes, "hermes unicode content", "<think>日本語</think>Привет 🦙!", "Привет 🦙!", "日本語", {}},
      {ChatFormat::kHermes, "hermes plain", "Hello there, <b>friend</b>.", "Hello there, <b>friend</b>.", "", {}},
      {ChatFormat::kHermes, "hermes unclosed at end",
       "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}", "", "", {kParis}},
      // Qwen3-Coder and GLM 4.5/4.6: XML-style parameters
      {ChatFormat::kQwen3Coder, "qwen3-coder single",
       "<tool_call>\n<function=get_weather>\n<parameter=location>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n"
       "</tool_call>",
       "", "", {{"get_weather", R"({"location":"Paris","days":3})"}}},
      {ChatFormat::kQwen3Coder, "qwen3-coder parallel with content",
       "I'll look.\n<tool_call>\n<function=get_weather>\n<parameter=location>\nParis\n</parameter>\n</function>\n</tool_call>\n"
       "<tool_call>\n<function=get_time>\n<parameter=tz>\nCET\n</parameter>\n</function>\n</tool_call>",
       "I'll look.", "", {kParis, kCet}},
      {ChatFormat::kGlm45, "glm single",
       "<think>Weather lookup.</think>\n<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
       "", "Weather lookup.", {kParis}},
      {ChatFormat::kGlm45, "glm parallel",
       "<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call><tool_call>get_time\n"
       "<arg_key>tz</arg_key>\n<arg_value>CET</arg_value>\n</tool_call>",
       "", "", {kParis, kCet}},
      // Llama 3.x
      {ChatFormat::kLlama3, "llama3 json", "{\"name\": \"get_weather\", \"parameters\": {\"location\": \"Paris\"}}", "", "", {kParis}},
      {ChatFormat::kLlama3, "llama3 typed json",
       "{\"type\": \"function\", \"name\": \"get_weather\", \"parameters\": {\"location\": \"Paris\"}}", "", "", {kParis}},
      {ChatFormat::kLlama3, "llama3 parallel",
       "{\"name\": \"get_weather\", \"parameters\": {\"location\": \"Paris\"}}; {\"name\": \"get_time\", \"parameters\": {\"tz\": \"CET\"}}",
       "", "", {kParis, kCet}},
      {ChatFormat::kLlama3, "llama3 builtin", "<|python_tag|>brave_search.call(query=\"weather in Paris\", count=3)", "", "",
       {{"brave_search", R"({"query":"weather in Paris","count":3})"}}},
      {ChatFormat::kLlama3, "llama3 python_tag json",
       "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"location\": \"Paris\"}}", "", "", {kParis}},
      {ChatFormat::kLlama3, "llama3 code", "<|python_tag|>print(6 * 7)", "", "", {{"python", R"j({"code":"print(6 * 7)"})j"}}},
      {ChatFormat::kLlama3, "llama3 content", "The weather in Paris is {mild}.", "The weather in Paris is {mild}.", "", {}},
      {ChatFormat::kLlama3, "llama3 truncated json", "{\"name\": \"get_weather\", \"parameters\": {\"location\": \"Par",
       "{\"name\": \"get_weather\", \"parameters\": {\"location\": \"Par", "", {}, false, false},
      // Mistral Nemo
      {ChatFormat::kMistralNemo, "mistral single",
       "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}, \"id\": \"abc123XYZ\"}]", "", "",
       {{"get_weather", R"({"location":"Paris"})", "abc123XYZ"}}},
      {ChatFormat::kMistralNemo, "mistral parallel with content",
       "Sure.[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}, \"id\": \"a1b2c3d4e\"}, {\"name\": "
       "\"get_time\", \"arguments\": {\"tz\": \"CET\"}, \"id\": \"z9y8x7w6v\"}]",
       "Sure.", "", {{"get_weather", R"({"location":"Paris"})", "a1b2c3d4e"}, {"get_time", R"({"tz":"CET"})", "z9y8x7w6v"}}},
      {ChatFormat::kMistralNemo, "mistral malformed",
       "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}, }]",
       "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}, }]", "", {}, false, false},
      // Granite 3.x
      {ChatFormat::kGranite, "granite calls",
       "<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}, {\"name\": \"get_time\", \"arguments\": "
       "{\"tz\": \"CET\"}}]",
       "", "", {kParis, kCet}},
      {ChatFormat::kGranite, "granite thinking", "<think>Easy one.</think><response>It is sunny.</response>", "It is sunny.",
       "Easy one.", {}},
      // gpt-oss (harmony)
      {ChatFormat::kGptOss, "gpt-oss call in channel",
       "<|channel|>analysis<|message|>User wants weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather "
       "<|constrain|>json<|message|>{\"location\": \"Paris\"}<|call|>",
       "", "User wants weather.", {kParis}},
      {ChatFormat::kGptOss, "gpt-oss call in role",
       " to=functions.get_weather<|channel|>commentary json<|message|>{\"location\":\"Paris\"}", "", "", {kParis}},
      {ChatFormat::kGptOss, "gpt-oss final",
       "<|channel|>analysis<|message|>Simple greeting.<|end|><|start|>assistant<|channel|>final<|message|>Hello!", "Hello!",
       "Simple greeting.", {}},
      // Functionary v3.2
      {ChatFormat::kFunctionaryV32, "functionary content then call",
       "all\nLet me check.>>>get_weather\n{\"location\": \"Paris\"}", "Let me check.", "", {kParis}},
      {ChatFormat::kFunctionaryV32, "functionary parallel",
       "get_weather\n{\"location\": \"Paris\"}>>>get_time\n{\"tz\": \"CET\"}", "", "", {kParis, kCet}},
      {ChatFormat::kFunctionaryV32, "functionary python", "python\nprint(2)", "", "", {{"python", R"j({"code":"print(2)"})j"}}},
      {ChatFormat::kFunctionaryV32, "functionary content", "all\nHello! How can I help?", "Hello! How can I help?", "", {}},
      // DeepSeek R1 (the distills' prompt opens <think>)
      {ChatFormat::kDeepSeekR1, "deepseek forced open",
       "I need the weather.\n</think>\n\n<｜tool▁calls▁begin｜>" + kDsCall + "<｜tool▁calls▁end｜>", "", "I need the weather.",
       {kParis}, true},
      {ChatFormat::kDeepSeekR1, "deepseek parallel", "<｜tool▁calls▁begin｜>" + kDsCall + "\n" + kDsCall2 + "<｜tool▁calls▁end｜>",
       "", "", {kParis, kCet}},
      {ChatFormat::kDeepSeekR1, "deepseek content", "<think>\nHmm.\n</think>\n\nHello.", "Hello.", "Hmm.", {}},
      // Command R+ (Action:) and R7B (<|START_ACTION|>)
      {ChatFormat::kCommandR, "command-r+ action",
       "Action: ```json\n[\n    {\n        \"tool_name\": \"get_weather\",\n        \"parameters\": {\"location\": \"Paris\"}\n    }\n]\n```",
       "", "", {kParis}},
      {ChatFormat::kCommandR, "command-r7b action",
       "<|START_THINKING|>Look it up.<|END_THINKING|><|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", "
       "\"parameters\": {\"location\": \"Paris\"}}]<|END_ACTION|>",
       "", "Look it up.", {{"get_weather", R"({"location":"Paris"})", "0"}}},
      {ChatFormat::kCommandR, "command-r7b response", "<|START_RESPONSE|>Actually, hello!<|END_RESPONSE|>", "Actually, hello!", "", {}},
      // Kimi K2
      {ChatFormat::kKimiK2, "kimi-k2 calls",
       "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"location\": "
       "\"Paris\"}<|tool_call_end|><|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{\"tz\": \"CET\"}"
       "<|tool_call_end|><|tool_calls_section_end|>",
       "", "", {{"get_weather", R"({"location":"Paris"})", "functions.get_weather:0"}, {"get_time", R"({"tz":"CET"})", "functions.get_time:1"}}},
      // LFM2 / LFM2.5 (Python-style calls)
      {ChatFormat::kLfm2, "lfm2 parallel",
       "<think>Two lookups.</think>Checking.<|tool_call_start|>[get_weather(location=\"Paris\"), get_time(tz='CET')]<|tool_call_end|>",
       "Checking.", "Two lookups.", {kParis, kCet}},
      {ChatFormat::kLfm2, "lfm2 literals", "<|tool_call_start|>[ns.f(a=1, b=True, c=null, d=-2.5)]<|tool_call_end|>", "", "",
       {{"ns.f", R"({"a":1,"b":true,"c":null,"d":-2.5})"}}},
      {ChatFormat::kLfm2, "lfm2 object and array arguments",
       "<|tool_call_start|>[f(where={\"city\": \"Paris, FR\", \"at\": [1, 2]}, tags=[\"a)\", \"b\"], n=3)]<|tool_call_end|>", "", "",
       {{"f", R"j({"where":{"city":"Paris, FR","at":[1,2]},"tags":["a)","b"],"n":3})j"}}},
      {ChatFormat::kLfm2, "lfm2 malformed", "<|tool_call_start|>[get_weather(location=)]<|tool_call_end|>",
       "<|tool_call_start|>[get_weather(location=)]<|tool_call_end|>", "", {}, false, false},
      // Gemma 4 (llama.cpp's test-chat.cpp cases for its gemma4 parser)
      {ChatFormat::kGemma4, "gemma4 call", "<|tool_call>call:get_time{city:<|\"|>San Francisco<|\"|>}<tool_call|>", "", "",
       {{"get_time", R"({"city":"San Francisco"})"}}},
      {ChatFormat::kGemma4, "gemma4 content then call",
       "Hello, world!\nWhat's up?<|tool_call>call:get_time{city:<|\"|>Paris<|\"|>}<tool_call|>", "Hello, world!\nWhat's up?",
       "", {{"get_time", R"({"city":"Paris"})"}}},
      {ChatFormat::kGemma4, "gemma4 reasoning then call",
       "<|channel>thought\nI'm\nthinking<channel|><|tool_call>call:get_time{city:<|\"|>Paris<|\"|>}<tool_call|>", "",
       "I'm\nthinking", {{"get_time", R"({"city":"Paris"})"}}},
      {ChatFormat::kGemma4, "gemma4 parallel",
       "<|tool_call>call:get_time{city:<|\"|>London<|\"|>}<tool_call|><|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>}"
       "<tool_call|>",
       "", "", {{"get_time", R"({"city":"London"})"}, {"get_weather", R"({"city":"Paris"})"}}},
      {ChatFormat::kGemma4, "gemma4 literals",
       "<|tool_call>call:f{a:-7,b:3.14,c:true,d:false,e:null,todos:[<|\"|>buy milk<|\"|>,<|\"|>walk dog<|\"|>],"
       "config:{theme:<|\"|>dark<|\"|>,count:3},none:[],empty:{}}<tool_call|>",
       "", "",
       {{"f", R"({"a":-7,"b":3.14,"c":true,"d":false,"e":null,"todos":["buy milk","walk dog"],"config":{"theme":"dark",)"
              R"("count":3},"none":[],"empty":{}})"}}},
      {ChatFormat::kGemma4, "gemma4 empty args", "<|tool_call>call:empty_args{}<tool_call|>", "", "", {{"empty_args", "{}"}}},
      {ChatFormat::kGemma4, "gemma4 malformed", "<|tool_call>call:f{a:<tool_call|>", "<|tool_call>call:f{a:<tool_call|>", "", {},
       false, false},
      // Generic JSON fallback
      {ChatFormat::kGeneric, "generic calls",
       "{\"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}, {\"name\": \"get_time\", "
       "\"arguments\": {\"tz\": \"CET\"}}]}",
       "", "", {kParis, kCet}},
      {ChatFormat::kGeneric, "generic single", "{\"tool_call\": {\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}}",
       "", "", {kParis}},
      {ChatFormat::kGeneric, "generic response", "{\"response\": \"Hello!\"}", "Hello!", "", {}},
      {ChatFormat::kGeneric, "generic text", "Just text.", "Just text.", "", {}},
  };
  return kExamples;
}

ParseOptions options_for(const Example& e) {
  ParseOptions o;
  o.thinking_forced_open = e.forced_open;
  return o;
}

void expect_message(const Example& e, const ParsedMessage& m) {
  EXPECT_EQ(m.content, e.content) << e.name;
  EXPECT_EQ(m.reasoning_content, e.reasoning) << e.name;
  ASSERT_EQ(m.tool_calls.size(), e.calls.size()) << e.name;
  for (size_t i = 0; i < e.calls.size(); ++i) {
    EXPECT_EQ(m.tool_calls[i].name, e.calls[i].name) << e.name << " call " << i;
    EXPECT_EQ(m.tool_calls[i].arguments, e.calls[i].arguments) << e.name << " call " << i;
    EXPECT_EQ(m.tool_calls[i].id, e.calls[i].id) << e.name << " call " << i;
    EXPECT_FALSE(nlohmann::json::parse(m.tool_calls[i].arguments, nullptr, false).is_discarded()) << e.name;
  }
}

TEST(ToolParse, EveryExample) {
  for (const Example& e : examples()) {
    Result<ParsedMessage> m = parse_assistant_output(e.format, e.text, /*is_partial=*/false, options_for(e));
    ASSERT_TRUE(m.ok()) << e.name << ": " << m.status().message();
    expect_message(e, *m);
  }
}

TEST(ToolParse, EveryFormatHasAnExample) {
  for (const ChatFormatDef& d : all_chat_formats()) {
    if (d.format == ChatFormat::kContentOnly) continue;
    bool found = false;
    for (const Example& e : examples()) found = found || e.format == d.format;
    EXPECT_TRUE(found) << d.name;
  }
}

// Applies OpenAI deltas to a message, as a client assembling a stream does.
void apply_deltas(const std::vector<nlohmann::ordered_json>& deltas, ParsedMessage* m) {
  for (const nlohmann::ordered_json& d : deltas) {
    if (d.contains("content")) m->content += d["content"].get<std::string>();
    if (d.contains("reasoning_content")) m->reasoning_content += d["reasoning_content"].get<std::string>();
    if (!d.contains("tool_calls")) continue;
    for (const auto& tc : d["tool_calls"]) {
      const size_t i = tc["index"].get<size_t>();
      if (i == m->tool_calls.size()) {
        ASSERT_TRUE(tc.contains("id") && tc["function"].contains("name")) << tc.dump();
        EXPECT_EQ(tc["type"], "function");
        m->tool_calls.push_back({tc["id"].get<std::string>(), tc["function"]["name"].get<std::string>(), ""});
      }
      ASSERT_LT(i, m->tool_calls.size()) << tc.dump();
      m->tool_calls[i].arguments += tc["function"]["arguments"].get<std::string>();
    }
  }
}

bool valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

TEST(ToolParse, StreamingAtEveryByte) {
  for (const Example& e : examples()) {
    if (!e.streams) continue;
    ParsedMessage prev, client;
    std::vector<std::string> ids;
    uint64_t rng = 1;
    auto gen = [&] { return random_tool_call_id(e.format, &rng); };
    for (size_t cut = 0; cut <= e.text.size(); ++cut) {
      const bool last = cut == e.text.size();
      Result<ParsedMessage> m = parse_assistant_output(e.format, std::string_view(e.text).substr(0, cut), !last, options_for(e));
      ASSERT_TRUE(m.ok()) << e.name << " cut " << cut;
      assign_tool_call_ids(&*m, &ids, gen);
      // Every delta is valid UTF-8 (a client serialises it): no character is cut.
      EXPECT_TRUE(valid_utf8(m->content) && valid_utf8(m->reasoning_content)) << e.name << " cut " << cut;
      for (const ToolCall& c : m->tool_calls) EXPECT_TRUE(valid_utf8(c.arguments)) << e.name << " cut " << cut;
      Result<std::vector<nlohmann::ordered_json>> deltas = message_deltas(prev, *m);
      ASSERT_TRUE(deltas.ok()) << e.name << " cut " << cut << ": " << deltas.status().message() << "\nprev "
                               << prev.to_json().dump() << "\nnext " << m->to_json().dump();
      apply_deltas(*deltas, &client);
      prev = std::move(m).value();
    }
    // (a model's own ids, which come after the arguments, lose to the ids streamed first)
    EXPECT_EQ(client, prev) << e.name;
    EXPECT_EQ(client.content, e.content) << e.name;
    ASSERT_EQ(client.tool_calls.size(), e.calls.size()) << e.name;
    for (size_t i = 0; i < e.calls.size(); ++i) {
      EXPECT_FALSE(client.tool_calls[i].id.empty()) << e.name;
    }
  }
}

// Malformed replies cut anywhere: parsing never fails, and a complete parse keeps every byte of
// text that is not tool-call syntax.
TEST(ToolParse, MalformedRepliesNeverLoseText) {
  for (const Example& e : examples()) {
    for (size_t cut = 0; cut <= e.text.size(); ++cut) {
      const std::string_view prefix = std::string_view(e.text).substr(0, cut);
      Result<ParsedMessage> partial = parse_assistant_output(e.format, prefix, true, options_for(e));
      ASSERT_TRUE(partial.ok()) << e.name << " cut " << cut;
      Result<ParsedMessage> whole = parse_assistant_output(e.format, prefix, false, options_for(e));
      ASSERT_TRUE(whole.ok()) << e.name << " cut " << cut;
      if (whole->tool_calls.empty() && whole->reasoning_content.empty() && e.reasoning.empty() && !e.forced_open &&
          e.format != ChatFormat::kGptOss && e.format != ChatFormat::kFunctionaryV32 && e.format != ChatFormat::kGeneric &&
          e.format != ChatFormat::kGranite && e.format != ChatFormat::kCommandR) {
        EXPECT_EQ(whole->content, prefix) << e.name << " cut " << cut;  // nothing parsed: nothing dropped
      }
    }
  }
}

// Replies mangled at random (cut, spliced with other formats' markers, bytes dropped) and parsed
// as every format: never an error or a crash, and complete calls always carry JSON arguments.
TEST(ToolParse, RandomMutationsNeverBreakParsing) {
  const std::vector<std::string> pieces = {"<tool_call>", "</tool_call>", "{", "}", "[", "]", "\"", ",", ":", "\n", "<think>",
                                           "</think>", "<|end|>", "<|start|>assistant", "<|message|>", " to=functions.", ">>>",
                                           "[TOOL_CALLS]", "<|python_tag|>", "Action:", "```json", "<｜tool▁call▁begin｜>",
                                           "<parameter=", "</function>", "<arg_key>", "\xE2\x96", "\\"};
  uint64_t rng = 7;
  auto next = [&](uint64_t n) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return n == 0 ? 0 : (rng >> 33) % n;
  };
  for (const Example& e : examples()) {
    for (int round = 0; round < 100; ++round) {
      std::string text = e.text;
      for (int k = 0; k < 3; ++k) {
        const size_t at = next(text.size() + 1);
        switch (next(3)) {
          case 0: text.insert(at, pieces[next(pieces.size())]); break;
          case 1: text.erase(at, next(8)); break;
          default: text.resize(at); break;
        }
      }
      for (const ChatFormatDef& d : all_chat_formats()) {
        for (bool partial : {true, false}) {
          ParseOptions o;
          o.thinking_forced_open = round % 2 == 1;
          Result<ParsedMessage> m = parse_assistant_output(d.format, text, partial, o);
          ASSERT_TRUE(m.ok()) << d.name << ": " << text;
          if (partial) continue;
          for (const ToolCall& c : m->tool_calls) {
            EXPECT_FALSE(nlohmann::json::parse(c.arguments, nullptr, false).is_discarded())
                << d.name << " arguments " << c.arguments << " from " << text;
            EXPECT_FALSE(c.name.empty()) << d.name << ": " << text;
          }
        }
      }
    }
  }
}

TEST(ToolParse, ToolChoiceNoneKeepsSyntaxAsContent) {
  ParseOptions o;
  o.parse_tool_calls = false;
  const std::string text = "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>";
  Result<ParsedMessage> m = parse_assistant_output(ChatFormat::kHermes, text, false, o);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->content, text);
  EXPECT_TRUE(m->tool_calls.empty());
}

TEST(ToolParse, ReasoningFormats) {
  const std::string text = "<think>\nplan\n</think>\n\nanswer";
  ParseOptions none;
  none.reasoning_format = ReasoningFormat::kNone;
  Result<ParsedMessage> kept = parse_assistant_output(ChatFormat::kHermes, text, false, none);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->content, text);
  EXPECT_EQ(kept->reasoning_content, "");
  Result<ParsedMessage> split = parse_assistant_output(ChatFormat::kContentOnly, text, false);
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(split->reasoning_content, "plan");
  EXPECT_EQ(split->content, "answer");
  // Unclosed: all reasoning, also when complete (the model ran out of tokens while thinking).
  Result<ParsedMessage> open = parse_assistant_output(ChatFormat::kDeepSeekR1, "<think>still going", false);
  ASSERT_TRUE(open.ok());
  EXPECT_EQ(open->reasoning_content, "still going");
  EXPECT_EQ(open->content, "");
  // Partial: a possible end tag is held back.
  Result<ParsedMessage> held = parse_assistant_output(ChatFormat::kDeepSeekR1, "<think>abc</thi", true);
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(held->reasoning_content, "abc");
}

TEST(ToolParse, XmlValuesTypedByTheToolSchema) {
  const nlohmann::json tools = nlohmann::json::parse(R"([{"type": "function", "function": {"name": "lookup", "parameters":
      {"type": "object", "properties": {"zip": {"type": "string"}, "n": {"type": "integer"}}}}}])");
  ParseOptions o;
  o.tools = &tools;
  const std::string text =
      "<tool_call>\n<function=lookup>\n<parameter=zip>\n75001\n</parameter>\n<parameter=n>\n2\n</parameter>\n</function>\n</tool_call>";
  Result<ParsedMessage> typed = parse_assistant_output(ChatFormat::kQwen3Coder, text, false, o);
  ASSERT_TRUE(typed.ok());
  ASSERT_EQ(typed->tool_calls.size(), 1u);
  EXPECT_EQ(typed->tool_calls[0].arguments, R"({"zip":"75001","n":2})");
  const nlohmann::json odd = nlohmann::json::parse(R"([{"function": {"name": 5}}, {"function": {"name": "lookup", "parameters":
      {"properties": {"zip": {"type": ["string"]}, "n": 3}}}}, 4])");
  o.tools = &odd;  // malformed tools are ignored, not an abort
  ASSERT_TRUE(parse_assistant_output(ChatFormat::kQwen3Coder, text, false, o).ok());
  Result<ParsedMessage> untyped = parse_assistant_output(ChatFormat::kQwen3Coder, text, false);
  ASSERT_TRUE(untyped.ok());
  EXPECT_EQ(untyped->tool_calls[0].arguments, R"({"zip":75001,"n":2})");
}

TEST(ToolParse, MessageJsonAndDeltas) {
  ParsedMessage m;
  m.tool_calls.push_back({"id1", "f", "{}"});
  const nlohmann::ordered_json j = m.to_json();
  EXPECT_TRUE(j["content"].is_null());
  EXPECT_EQ(j["tool_calls"][0]["function"]["name"], "f");
  EXPECT_EQ(j["tool_calls"][0]["id"], "id1");
  ParsedMessage shrunk;
  EXPECT_FALSE(message_deltas(m, shrunk).ok());  // calls cannot disappear
  ParsedMessage changed = m;
  changed.tool_calls[0].arguments = "[]";
  EXPECT_FALSE(message_deltas(m, changed).ok());
}

TEST(ToolParse, Ids) {
  uint64_t rng = 42;
  EXPECT_EQ(random_tool_call_id(ChatFormat::kMistralNemo, &rng).size(), 9u);
  const std::string a = random_tool_call_id(ChatFormat::kHermes, &rng);
  EXPECT_EQ(a.size(), 32u);
  EXPECT_NE(a, random_tool_call_id(ChatFormat::kHermes, &rng));
  ParsedMessage m;
  m.tool_calls = {{"", "f", "{}"}, {"own", "g", "{}"}};
  std::vector<std::string> ids;
  int n = 0;
  assign_tool_call_ids(&m, &ids, [&] { return "gen" + std::to_string(n++); });
  EXPECT_EQ(m.tool_calls[0].id, "gen0");
  EXPECT_EQ(m.tool_calls[1].id, "own");
  ParsedMessage again;
  again.tool_calls = {{"", "f", "{}"}};
  assign_tool_call_ids(&again, &ids, [&] { return "gen" + std::to_string(n++); });
  EXPECT_EQ(again.tool_calls[0].id, "gen0");  // stable while streaming
}

TEST(JsonScan, CompleteIncompleteInvalid) {
  EXPECT_EQ(scan_json_value(R"({"a": [1, 2.5e3, "x\"y", true, null]} tail)", 0).state, JsonScan::kComplete);
  EXPECT_EQ(scan_json_value(R"({"a": [1, 2.5e3, "x\"y", true, null]} tail)", 0).end, 37u);
  EXPECT_EQ(scan_json_value(R"({"a": [1, tr)", 0).state, JsonScan::kIncomplete);
  EXPECT_EQ(scan_json_value(R"({"a": "\u00)", 0).state, JsonScan::kIncomplete);
  EXPECT_EQ(scan_json_value(R"({"a" 1})", 0).state, JsonScan::kInvalid);
  EXPECT_EQ(scan_json_value(R"([1,,2])", 0).state, JsonScan::kInvalid);
  EXPECT_EQ(scan_json_value(R"({"a": tru})", 0).state, JsonScan::kInvalid);
  EXPECT_EQ(minify_json("{ \"a b\" : [ 1 , \"c \\\" d\" ] }"), "{\"a b\":[1,\"c \\\" d\"]}");
  EXPECT_EQ(scan_json_value("\"a\xE2\x96\"", 0).state, JsonScan::kInvalid);  // broken UTF-8
  EXPECT_EQ(scan_json_value("\"a\xE2\x96", 0).state, JsonScan::kIncomplete);   // UTF-8 still arriving
  EXPECT_EQ(scan_json_value("\"\xC0\xAF\"", 0).state, JsonScan::kInvalid);     // overlong
  EXPECT_EQ(scan_json_value("\"\xF0\x9F\xA6\x99\"", 0).state, JsonScan::kComplete);
  std::string deep(2000, '[');
  EXPECT_EQ(scan_json_value(deep, 0).state, JsonScan::kInvalid);  // bounded nesting
}

}  // namespace
}  // namespace ox::chat
