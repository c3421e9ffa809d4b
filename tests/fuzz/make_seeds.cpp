// Writes the fuzz targets' seed corpora (tests/fuzz/corpus/<target>/): tiny GGUF models built with
// GgufWriter (one per tensor layout family, each checked to load), short texts for every tokenizer
// vocabulary, Jinja snippets plus the built-in chat templates, chat-message arrays, saved states
// of the shared stories260K model (computed by a session, the one data file read), and importance
// matrices in both formats. Everything is
// generated here, nothing is copied from data files; rerun after changing a target's input format:
//   build/asan/bin/fuzz_make_seeds tests/fuzz/corpus
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/chat/template.h"
#include "core/gguf/writer.h"
#include "core/quant/traits.h"
#include "core/session/session.h"
#include "core/tools/imatrix_file.h"
#include "tests/support/shared_data.h"

namespace ox {
namespace {

namespace fs = std::filesystem;

bool write_file(const fs::path& path, std::string_view bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
    std::fprintf(stderr, "make_seeds: cannot write %s\n", path.c_str());
    if (f != nullptr) std::fclose(f);
    return false;
  }
  return std::fclose(f) == 0;
}

bool must(const Status& s, const char* what) {
  if (!s.is_ok()) std::fprintf(stderr, "make_seeds: %s: %s\n", what, s.message().c_str());
  return s.is_ok();
}

// ---- GGUF ----

// Deterministic small weights: the seeds must be byte-identical on every run.
struct Lcg {
  uint32_t s = 12345;
  float next() {  // in [-0.05, 0.05)
    s = s * 1664525u + 1013904223u;
    return (static_cast<float>(s >> 8) / 16777216.0f - 0.5f) * 0.1f;
  }
};

// Bytes of a rows x cols tensor of `type` (F32, F16, BF16, Q4_0, Q8_0) with small values.
std::vector<uint8_t> tensor_bytes(DType type, uint64_t n, Lcg& rng, float fill = 0.0f) {
  std::vector<uint8_t> out;
  auto put16 = [&](uint16_t v) { out.push_back(uint8_t(v)), out.push_back(uint8_t(v >> 8)); };
  for (uint64_t i = 0; i < n;) {
    const float x = fill != 0.0f ? fill : rng.next();
    switch (type) {
      case DType::F32: { uint8_t b[4]; std::memcpy(b, &x, 4); out.insert(out.end(), b, b + 4); ++i; break; }
      case DType::F16: put16(f32_to_fp16(x)); ++i; break;
      case DType::BF16: put16(f32_to_bf16(x)); ++i; break;
      case DType::Q8_0:  // d, then 32 int8
        put16(f32_to_fp16(0.002f));
        for (int k = 0; k < 32; ++k) out.push_back(uint8_t(int8_t(rng.next() * 500)));
        i += 32; break;
      case DType::Q4_0:  // d, then 16 bytes of nibble pairs
        put16(f32_to_fp16(0.01f));
        for (int k = 0; k < 16; ++k) out.push_back(uint8_t(int(rng.next() * 2000) & 0xff));
        i += 32; break;
      default: return {};
    }
  }
  return out;
}

struct ModelSeed {
  const char* file;
  const char* arch;
  const char* tokenizer;  // vocab_of() family: "spm", "ugm", "wpm" or a gpt2 pre-tokenizer name
  DType matrix_type;
  int n_embd, n_head, n_head_kv, n_ff;
  bool fused_qkv = false, fused_gate_up = false, gated = true, qk_norm = false, post_norms = false;
  bool position_embd = false, biases = false, tied = false;
  bool qkv_biases = false;  // biases on q, k and v only (qwen2); `biases`: on every linear and norm
  const char* chat_template = nullptr;
};

// A tiny vocabulary of each tokenizer family, written as tokenizer.ggml.* keys.
struct Vocab {
  const char* model;  // tokenizer.ggml.model
  std::vector<std::string> tokens;
  std::vector<float> scores;   // empty: not written
  std::vector<int32_t> types;  // 1 normal, 2 unknown, 3 control, 6 byte
  std::vector<std::string> merges;
  std::vector<std::pair<const char*, uint32_t>> ids;  // tokenizer.ggml.<name>_token_id
  std::vector<uint8_t> charsmap;                      // Unigram's precompiled_charsmap
};

// A darts-clone double array holding one normalisation rule, "A" -> "a": the root's children sit
// at (offset 0) ^ byte, so unit 65 is 'A' (label 0x41, has-leaf bit 8, offset 1), whose leaf is unit
// 65 ^ 1 = 64 (bit 31: a value unit) with value 0, the offset of "a" among the replacements.
std::vector<uint8_t> one_rule_charsmap() {
  std::vector<uint32_t> units(66, 0);
  units[65] = (1u << 10) | (1u << 8) | 0x41;
  units[64] = 0x80000000u;
  std::vector<uint8_t> out(4);
  const uint32_t blob = static_cast<uint32_t>(units.size() * 4);
  std::memcpy(out.data(), &blob, 4);
  out.resize(4 + blob);
  std::memcpy(out.data() + 4, units.data(), blob);
  out.insert(out.end(), {'a', 0});
  return out;
}

// family: "spm", "ugm", "wpm", or a gpt2 pre-tokenizer name (byte-level BPE).
Vocab vocab_of(std::string_view family) {
  if (family == "spm") {
    return {"llama",
            {"<unk>", "<s>", "</s>", "<0x0A>", "\xE2\x96\x81", "H", "e", "l", "o", "\xE2\x96\x81H", "ll",
             "\xE2\x96\x81Hello", "<|im_start|>", "<|im_end|>"},
            {0, 0, 0, 0, -1, -2, -2, -2, -2, -1, -1, -0.5f, 0, 0},
            {2, 3, 3, 6, 1, 1, 1, 1, 1, 1, 1, 1, 3, 3},
            {},
            {{"bos", 1}, {"eos", 2}, {"unknown", 0}},
            {}};
  }
  if (family == "ugm") {
    return {"t5",
            {"<pad>", "</s>", "<unk>", "\xE2\x96\x81", "\xE2\x96\x81Hello", "\xE2\x96\x81world", "a", "H", "e",
             "l", "o", "w", "r", "d", "!"},
            {0, 0, 0, -2, -3, -3, -4, -5, -5, -5, -5, -5, -5, -5, -4},
            {3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
            {},
            {{"eos", 1}, {"unknown", 2}, {"padding", 0}},
            one_rule_charsmap()};
  }
  if (family == "wpm") {
    return {"bert",
            // llama.cpp's WordPiece spelling: word starts carry U+2581, continuations lose their "##".
            {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "\xE2\x96\x81hello", "\xE2\x96\x81world",
             "\xE2\x96\x81wo", "rld", "s", "\xE2\x96\x81!", "\xE2\x96\x81,"},
            {},
            {3, 2, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1},
            {},
            {{"bos", 2}, {"seperator", 3}, {"unknown", 1}, {"padding", 0}, {"mask", 4}},
            {}};
  }
  return {"gpt2",
          {"<|endoftext|>", "H", "e", "l", "o", "\xC4\xA0", "w", "r", "d", "!", "\xC4\x8A", "ll", "llo",
           "\xC4\xA0w", "<|im_start|>", "<|im_end|>"},
          {},
          {3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 3},
          {"l l", "ll o", "\xC4\xA0 w"},
          {{"bos", 0}, {"eos", 0}},
          {}};
}

Status add_vocab(gguf::GgufWriter& w, std::string_view family, const Vocab& v) {
  OX_TRY(w.add_string("tokenizer.ggml.model", v.model));
  if (std::string_view(v.model) == "gpt2") OX_TRY(w.add_string("tokenizer.ggml.pre", family));
  OX_TRY(w.add_string_array("tokenizer.ggml.tokens", v.tokens));
  if (!v.scores.empty()) OX_TRY(w.add_array<float>("tokenizer.ggml.scores", v.scores));
  OX_TRY(w.add_array<int32_t>("tokenizer.ggml.token_type", v.types));
  if (!v.merges.empty()) OX_TRY(w.add_string_array("tokenizer.ggml.merges", v.merges));
  if (!v.charsmap.empty()) OX_TRY(w.add_array<uint8_t>("tokenizer.ggml.precompiled_charsmap", v.charsmap));
  for (const auto& [name, id] : v.ids) OX_TRY(w.add_u32(std::string("tokenizer.ggml.") + name + "_token_id", id));
  return Status::ok();
}

Status add_model_tensors(gguf::GgufWriter& w, const ModelSeed& m, int n_vocab, int n_ctx) {
  Lcg rng;
  const uint64_t d = m.n_embd, hd = m.n_embd / m.n_head, q = m.n_head * hd, kv = m.n_head_kv * hd;
  auto tensor = [&](const std::string& name, std::vector<uint64_t> dims, DType type, float fill = 0.0f) {
    uint64_t n = 1;
    for (uint64_t x : dims) n *= x;
    return w.add_tensor(name, dims, type, tensor_bytes(type, n, rng, fill));
  };
  auto norm = [&](const std::string& base, uint64_t n) -> Status {
    OX_TRY(tensor(base + ".weight", {n}, DType::F32, 1.0f));
    if (m.biases) OX_TRY(tensor(base + ".bias", {n}, DType::F32));
    return Status::ok();
  };
  auto linear = [&](const std::string& base, uint64_t cols, uint64_t rows, bool qkv = false) -> Status {
    OX_TRY(tensor(base + ".weight", {cols, rows}, m.matrix_type));
    if (m.biases || (qkv && m.qkv_biases)) OX_TRY(tensor(base + ".bias", {rows}, DType::F32));
    return Status::ok();
  };
  OX_TRY(tensor("token_embd.weight", {d, uint64_t(n_vocab)}, m.matrix_type));
  if (m.position_embd) OX_TRY(tensor("position_embd.weight", {d, uint64_t(n_ctx)}, DType::F32));
  OX_TRY(norm("output_norm", d));
  if (!m.tied) OX_TRY(tensor("output.weight", {d, uint64_t(n_vocab)}, m.matrix_type));
  const std::string b = "blk.0.";
  OX_TRY(norm(b + "attn_norm", d));
  OX_TRY(norm(b + "ffn_norm", d));
  if (m.fused_qkv) {
    OX_TRY(linear(b + "attn_qkv", d, q + 2 * kv));
  } else {
    OX_TRY(linear(b + "attn_q", d, q, true));
    OX_TRY(linear(b + "attn_k", d, kv, true));
    OX_TRY(linear(b + "attn_v", d, kv, true));
  }
  OX_TRY(linear(b + "attn_output", q, d));
  if (m.qk_norm) {
    OX_TRY(tensor(b + "attn_q_norm.weight", {hd}, DType::F32, 1.0f));
    OX_TRY(tensor(b + "attn_k_norm.weight", {hd}, DType::F32, 1.0f));
  }
  if (m.post_norms) {
    OX_TRY(tensor(b + "post_attention_norm.weight", {d}, DType::F32, 1.0f));
    OX_TRY(tensor(b + "post_ffw_norm.weight", {d}, DType::F32, 1.0f));
  }
  if (m.fused_gate_up) {
    OX_TRY(linear(b + "ffn_up", d, 2 * uint64_t(m.n_ff)));
  } else {
    if (m.gated) OX_TRY(linear(b + "ffn_gate", d, m.n_ff));
    OX_TRY(linear(b + "ffn_up", d, m.n_ff));
  }
  OX_TRY(linear(b + "ffn_down", m.n_ff, d));
  return Status::ok();
}

Result<std::vector<uint8_t>> model_bytes(const ModelSeed& m) {
  const Vocab v = vocab_of(m.tokenizer);
  const int n_vocab = static_cast<int>(v.tokens.size()), n_ctx = 16;
  const std::string p = std::string(m.arch) + ".";
  gguf::GgufWriter w;
  OX_TRY(w.add_string("general.architecture", m.arch));
  OX_TRY(w.add_string("general.name", std::string("fuzz seed ") + m.file));
  OX_TRY(w.add_u32(p + "context_length", n_ctx));
  OX_TRY(w.add_u32(p + "embedding_length", m.n_embd));
  OX_TRY(w.add_u32(p + "block_count", 1));
  OX_TRY(w.add_u32(p + "feed_forward_length", m.n_ff));
  OX_TRY(w.add_u32(p + "attention.head_count", m.n_head));
  OX_TRY(w.add_u32(p + "attention.head_count_kv", m.n_head_kv));
  OX_TRY(w.add_f32(p + "attention.layer_norm_rms_epsilon", 1e-5f));
  OX_TRY(w.add_f32(p + "rope.freq_base", 10000.0f));
  OX_TRY(add_vocab(w, m.tokenizer, v));
  if (m.chat_template != nullptr) OX_TRY(w.add_string("tokenizer.chat_template", m.chat_template));
  OX_TRY(add_model_tensors(w, m, n_vocab, n_ctx));
  return w.to_bytes();
}

// Every metadata value type (nested arrays too), a 64-byte alignment and tensors of several
// formats and ranks: the parser's paths that real model files do not all take.
Result<std::vector<uint8_t>> metadata_zoo_bytes() {
  gguf::GgufWriter w;
  OX_TRY(w.set_alignment(64));
  OX_TRY(w.add("u8", gguf::encode_u8(7)));
  OX_TRY(w.add("i8", gguf::encode_i8(-7)));
  OX_TRY(w.add("u16", gguf::encode_u16(700)));
  OX_TRY(w.add("i16", gguf::encode_i16(-700)));
  OX_TRY(w.add_u32("u32", 70000));
  OX_TRY(w.add_i32("i32", -70000));
  OX_TRY(w.add_u64("u64", 1ull << 40));
  OX_TRY(w.add("i64", gguf::encode_i64(-(1ll << 40))));
  OX_TRY(w.add_f32("f32", 1.5f));
  OX_TRY(w.add("f64", gguf::encode_f64(-2.25)));
  OX_TRY(w.add_bool("bool", true));
  OX_TRY(w.add_string("str", "h\xC3\xA9llo"));
  const std::vector<int16_t> i16s = {1, -2, 3};
  OX_TRY(w.add_array<int16_t>("arr.i16", i16s));
  const std::vector<double> f64s = {0.5, -1e300};
  OX_TRY(w.add_array<double>("arr.f64", f64s));
  OX_TRY(w.add("arr.bool", gguf::encode_bool_array({true, false})));
  const std::vector<std::string> strs = {"a", "", "bc"};
  OX_TRY(w.add_string_array("arr.str", strs));
  const std::vector<uint8_t> u8s = {1, 2};
  const gguf::EncodedValue inner[] = {gguf::encode_array<uint8_t>(u8s), gguf::encode_array<uint8_t>({})};
  OX_ASSIGN_OR_RETURN(gguf::EncodedValue nested, gguf::encode_array_of(gguf::ValueType::ARRAY, inner));
  OX_TRY(w.add("arr.nested", nested));
  Lcg rng;
  struct T { const char* name; std::vector<uint64_t> dims; DType type; };
  const T tensors[] = {{"f32", {4}, DType::F32}, {"f16", {2, 2}, DType::F16}, {"bf16", {2, 1, 2}, DType::BF16},
                       {"q8_0", {32, 2}, DType::Q8_0}, {"q4_0", {32, 1, 1, 1}, DType::Q4_0}};
  for (const T& t : tensors) {
    uint64_t n = 1;
    for (uint64_t x : t.dims) n *= x;
    OX_TRY(w.add_tensor(t.name, t.dims, t.type, tensor_bytes(t.type, n, rng)));
  }
  return w.to_bytes();
}

bool write_gguf_seeds(const fs::path& dir) {
  const ModelSeed models[] = {
      {.file = "llama_spm_f32.gguf", .arch = "llama", .tokenizer = "spm", .matrix_type = DType::F32, .n_embd = 8,
       .n_head = 2, .n_head_kv = 1, .n_ff = 16,
       .chat_template = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"},
      {.file = "qwen3_bpe_f16_tied.gguf", .arch = "qwen3", .tokenizer = "qwen2", .matrix_type = DType::F16,
       .n_embd = 8, .n_head = 2, .n_head_kv = 2, .n_ff = 8, .qk_norm = true, .tied = true},
      {.file = "gpt2_bpe_fused_qkv.gguf", .arch = "gpt2", .tokenizer = "gpt-2", .matrix_type = DType::F32,
       .n_embd = 8, .n_head = 2, .n_head_kv = 2, .n_ff = 16, .fused_qkv = true, .gated = false,
       .position_embd = true, .biases = true},
      {.file = "phi3_ugm_bf16_fused.gguf", .arch = "phi3", .tokenizer = "ugm", .matrix_type = DType::BF16,
       .n_embd = 8, .n_head = 2, .n_head_kv = 2, .n_ff = 8, .fused_qkv = true, .fused_gate_up = true},
      {.file = "gemma2_spm_q4_0.gguf", .arch = "gemma2", .tokenizer = "spm", .matrix_type = DType::Q4_0,
       .n_embd = 32, .n_head = 2, .n_head_kv = 1, .n_ff = 32, .post_norms = true, .tied = true},
      {.file = "qwen2_wpm_q8_0_bias.gguf", .arch = "qwen2", .tokenizer = "wpm", .matrix_type = DType::Q8_0,
       .n_embd = 32, .n_head = 4, .n_head_kv = 1, .n_ff = 32, .tied = true, .qkv_biases = true},
  };
  for (const ModelSeed& m : models) {
    Result<std::vector<uint8_t>> bytes = model_bytes(m);
    if (!must(bytes.status(), m.file)) return false;
    // A seed that does not load would leave the loader and the forward pass unfuzzed.
    auto owned = std::make_shared<std::vector<uint8_t>>(*bytes);
    Result<std::shared_ptr<const LoadedModel>> model = LoadedModel::from_bytes(*owned, m.file, owned);
    if (!must(model.status(), m.file)) return false;
    if (!write_file(dir / m.file, std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()))) {
      return false;
    }
  }
  Result<std::vector<uint8_t>> zoo = metadata_zoo_bytes();
  if (!must(zoo.status(), "metadata_zoo.gguf")) return false;
  return write_file(dir / "metadata_zoo.gguf", std::string_view(reinterpret_cast<const char*>(zoo->data()), zoo->size()));
}

// ---- tokenizer: first byte = vocabulary index (tokenizer_fuzz.cpp's list) | flags ----

bool write_tokenizer_seeds(const fs::path& dir) {
  constexpr int kNumVocabs = 19;  // tokenizer_fuzz.cpp: kVocabs
  const char* const texts[] = {
      "Hello world! It's 2026, isn't it?",
      "<|im_start|>user\nhi there<|im_end|>\n<s>[INST] x [/INST]</s>",
      "  \t\n\n   leading and    trailing spaces   ",
      "int main() { return a->b[3] >= 0x1F; } // done",
      "\xE4\xBD\xA0\xE5\xA5\xBD\xE4\xB8\x96\xE7\x95\x8C \xF0\x9F\x98\x80\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD caf\xC3\xA9 na\xC3\xAFve",
      "1234567890 3.14159 -42 1,000,000",
      "bad utf-8: \xC3\x28 \xA0\xA1 \xF0\x28\x8C\xBC \xFF\xFE end",
      "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82 \xD9\x85\xD8\xB1\xD8\xAD\xD8\xA8\xD8\xA7 \xE0\xA4\xA8\xE0\xA4\xAE\xE0\xA4\xB8\xE0\xA5\x8D\xE0\xA4\xA4\xE0\xA5\x87",
  };
  constexpr int kNumTexts = sizeof(texts) / sizeof(texts[0]);
  for (int v = 0; v < kNumVocabs; ++v) {
    for (int k = 0; k < 2; ++k) {
      const int t = (v * 2 + k) % kNumTexts;
      const uint8_t flags = static_cast<uint8_t>(((v + k) % 4) << 6) | (k ? 0x20 : 0);
      std::string seed(1, static_cast<char>(v | flags));
      seed += texts[t];
      if (!write_file(dir / ("vocab" + std::to_string(v) + "_" + std::to_string(k)), seed)) return false;
    }
  }
  return true;
}

// ---- Jinja: snippets for each construct, plus the built-in chat templates ----

bool write_jinja_seeds(const fs::path& dir) {
  const char* const snippets[] = {
      "{{ bos_token }}{% for m in messages %}{{ m['role'] | upper }}: {{ m.content | trim }}\n{% endfor %}",
      "{%- if add_generation_prompt and not flag -%}yes{%- elif n > 2 %}many{% else %}no{% endif -%}",
      "{% set ns = namespace(found=false, k=0) %}{% for x in list if x > 1 %}{% set ns.k = ns.k + x %}"
      "{{ loop.index }}/{{ loop.length }}{{ ',' if not loop.last }}{% else %}empty{% endfor %}{{ ns.k }}",
      "{% macro tag(name, v='d') %}<{{ name }}>{{ v }}{{ caller() if caller is defined }}</{{ name }}>{% endmacro %}"
      "{{ tag('a') }}{% call tag('b', 2) %}in{% endcall %}",
      "{{ tools | tojson(indent=2) }}{{ obj | tojson }}{{ messages[2].tool_calls[0].function.arguments | tojson }}",
      "{{ s.split(' ')[0] }}{{ s[1:-1] }}{{ s.startswith('h') }}{{ s.replace('l', 'L', 1) }}{{ s | length }}"
      "{{ '%s-%d' % ('a', 3) }}{{ s.strip().title() }}",
      "{{ list | sort | join(', ') }}{{ list | map('string') | list }}{{ obj.items() | list }}{{ range(3) | sum }}"
      "{{ list | selectattr('real') | first }}{{ [1, [2, 3]] | length }}",
      "{% for k, v in obj | dictsort %}{{ k }}={{ v }};{% endfor %}{{ obj.get('c', 'none') }}{{ x | abs | round(1) }}",
      "{{ raise_exception('bad role') if messages[0].role != 'system' }}{{ strftime_now('%Y-%m-%d') }}",
      "{# comment #}{% raw %}{{ not parsed }}{% endraw %}{{ 'a' ~ 1 ~ none }}{{ 10 // 3 }}{{ 2 ** 10 }}{{ 7 % 3 }}",
      "{% if messages is defined and messages is iterable and n is number and s is string %}{{ n is even }}"
      "{% endif %}{{ x if x is not none else 'none' }}{{ nothing is none }}",
      "{%- for m in messages -%}{%- if m.content is string -%}{{ m.content }}{%- else -%}{%- for c in m.content -%}"
      "{{ c.text if c.type == 'text' else '<img>' }}{%- endfor -%}{%- endif -%}{%- endfor -%}",
      "{% set x = {'a': 1, 'b': [1, 2]} %}{{ x.b[1] }}{{ x['a'] + 1 }}{{ (1, 2)[0] }}{{ [3, 4] + [5] }}{{ x | items | list }}",
      "{% for i in range(10) %}{% if i > 3 %}{% break %}{% endif %}{% if i is odd %}{% continue %}{% endif %}{{ i }}"
      "{% endfor %}{{ 'abc' | reverse | join }}{{ 'x' * 3 }}{{ 'A' in s }}",
      "{% filter upper %}text{% endfilter %}{{ s | indent(2) }}{{ '<&>' | e }}{{ ' a  b ' | wordcount }}{{ 3.7 | int }}",
  };
  int i = 0;
  for (const char* s : snippets) {
    if (!write_file(dir / ("snippet" + std::to_string(i++) + ".jinja"), s)) return false;
  }
  for (std::string_view name : chat::builtin_template_names()) {
    if (!write_file(dir / ("builtin_" + std::string(name) + ".jinja"), chat::builtin_template(name))) return false;
  }
  return true;
}

// ---- chat messages JSON ----

bool write_chat_json_seeds(const fs::path& dir) {
  const char* const seeds[] = {
      R"([{"role":"user","content":"Hello"}])",
      R"([{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello!"},{"role":"user","content":"Bye"}])",
      R"([{"role":"user","content":[{"type":"text","text":"What is in"},{"type":"image"},{"type":"text","text":"this?"}]}])",
      R"([{"role":"user","content":"Weather?"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":{"city":"Paris"}}}]},{"role":"tool","tool_call_id":"c1","content":"{\"t\": 21}"}])",
      R"([{"role":"assistant","content":"<think>hmm</think>Answer","reasoning_content":"hmm"},{"role":"user","content":"\u00e9\u4e16\ud83d\ude00 \"quoted\" \\ back"}])",
      R"({"messages":[{"role":"user","content":"Use a tool"}],"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather for a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}],"enable_thinking":false})",
      R"([{"role":"user","content":"a"},{"role":"user","content":"b"}])",
      R"([{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":"{\"x\": [1, 2.5, true, null]}"}}]},{"role":"ipython","content":{"k":"v"}}])",
      R"([])",
  };
  int i = 0;
  for (const char* s : seeds) {
    if (!write_file(dir / ("messages" + std::to_string(i++) + ".json"), s)) return false;
  }
  return true;
}

// ---- saved states of the model state_fuzz.cpp loads (shared stories260K, n_ctx 64, f16 cache) ----

bool write_state_seeds(const fs::path& dir) {
  Result<std::shared_ptr<const LoadedModel>> model = LoadedModel::open(test::shared_path("models/stories260K.gguf"));
  if (!must(model.status(), "stories260K.gguf (set OXIDIZE_SHARED)")) return false;
  SessionOptions options;
  options.n_ctx = 64;
  Result<std::unique_ptr<Session>> session = Session::create(model.value(), options);
  if (!must(session.status(), "session")) return false;
  Session& s = **session;
  auto save = [&](const char* name) {
    Result<std::vector<uint8_t>> bytes = s.save_state();
    return must(bytes.status(), name) &&
           write_file(dir / name, std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()));
  };
  const int32_t prompt[] = {1, 403, 385, 410};
  if (!save("empty.state")) return false;  // header only
  if (!must(s.eval(std::span<const int32_t>(prompt, 1)), "eval") || !save("bos.state")) return false;
  if (!must(s.eval(std::span<const int32_t>(prompt + 1, 3)), "eval") || !save("prompt.state")) return false;
  return must(s.truncate(2), "truncate") && save("no_logits.state");  // the logits' position is gone
}

// ---- importance matrices: both formats, from imatrix_file's own writer ----

bool write_imatrix_seeds(const fs::path& dir) {
  Imatrix m;
  m.datasets = {"story.txt"};
  m.chunk_count = 2;
  m.chunk_size = 4;
  m.entries["blk.0.attn_q.weight"] = ImatrixEntry{{1.5f, 0.25f, 4, 0}, {8}};
  m.entries["blk.0.ffn_up_exps.weight"] = ImatrixEntry{{1, 2, 0, 0, 3, 4}, {3, 0, 5}};  // an expert no token reached
  for (const auto& [name, format] : {std::pair{"dense_moe.imatrix.gguf", ImatrixFormat::kGguf},
                                     std::pair{"dense_moe.imatrix.dat", ImatrixFormat::kDat}}) {
    Result<std::vector<uint8_t>> bytes = imatrix_to_bytes(m, format);
    if (!must(bytes.status(), name) ||
        !write_file(dir / name, std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()))) {
      return false;
    }
  }
  // A .dat of older llama.cpp versions: the entries only, no chunk count or dataset after them.
  std::string old;
  auto put = [&](const void* p, size_t n) { old.append(static_cast<const char*>(p), n); };
  const int32_t header[] = {1, 4};
  put(header, sizeof(header));
  put("blk.", 4);
  const int32_t counts[] = {3, 2};
  const float values[] = {0.5f, 7};
  put(counts, sizeof(counts));
  put(values, sizeof(values));
  return write_file(dir / "old.imatrix.dat", old);
}

}  // namespace
}  // namespace ox

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_ROOT   (tests/fuzz/corpus)\n", argv[0]);
    return 2;
  }
  const fs::path root = argv[1];
  struct Target { const char* dir; bool (*write)(const fs::path&); };
  const Target targets[] = {{"gguf", ox::write_gguf_seeds},
                            {"tokenizer", ox::write_tokenizer_seeds},
                            {"jinja", ox::write_jinja_seeds},
                            {"chat_json", ox::write_chat_json_seeds},
                            {"state", ox::write_state_seeds},
                            {"imatrix", ox::write_imatrix_seeds}};
  for (const Target& t : targets) {
    std::error_code ec;
    fs::remove_all(root / t.dir, ec);  // stale seeds of an older format go
    fs::create_directories(root / t.dir, ec);
    if (ec) {
      std::fprintf(stderr, "make_seeds: cannot create %s: %s\n", (root / t.dir).c_str(), ec.message().c_str());
      return 1;
    }
    if (!t.write(root / t.dir)) return 1;
  }
  return 0;
}
