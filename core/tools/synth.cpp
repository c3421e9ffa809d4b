// synth_gguf: writes a llama-architecture GGUF with seeded random weights, named and shaped as
// llama.cpp's converter writes Llama models (dims[0] = input dimension), tensor types chosen by
// the same preset rules as quantize_gguf.
#include "core/tools/synth.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>

#include "core/gguf/gguf.h"
#include "core/gguf/writer.h"
#include "core/quant/traits.h"
#include "core/tools/quantize.h"

namespace ox {
namespace {

struct Shape {
  const char* name;
  uint32_t n_embd, n_ff, n_layer, n_head, n_head_kv;
  float rope_base, rms_eps;
};

// Hyper-parameters as the models they imitate publish them (llama2.c stories15M, Qwen2.5-0.5B,
// Llama-3.2-1B), and tiny-256: the smallest llama whose rows all take the K-quants' 256-element
// blocks (the browser tests load it as Q4_K_M, whose weights the relaxed-SIMD module converts).
constexpr Shape kShapes[] = {
    {"tiny-256", 256, 512, 2, 4, 2, 10000.0f, 1e-5f},
    {"tiny-15M", 288, 768, 6, 6, 6, 10000.0f, 1e-5f},
    {"0.5B", 896, 4864, 24, 14, 2, 1000000.0f, 1e-6f},
    {"1B", 2048, 8192, 16, 32, 8, 500000.0f, 1e-5f},
};

uint64_t splitmix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Row r of tensor t: its own generator state, so the bytes do not depend on the thread split.
void fill_gaussian_row(uint64_t seed, uint64_t tensor, uint64_t row, float std_dev, float* out, int64_t n) {
  uint64_t state = seed;
  state = splitmix64(&state) ^ (tensor * 0xD1B54A32D192ED03ull);
  state = splitmix64(&state) ^ (row * 0x8CB92BA72F3D8DD7ull);
  for (int64_t i = 0; i < n; i += 2) {
    // Box-Muller on two uniforms in (0, 1].
    const double u1 = static_cast<double>((splitmix64(&state) >> 11) + 1) * 0x1p-53;
    const double u2 = static_cast<double>(splitmix64(&state) >> 11) * 0x1p-53;
    const double r = std::sqrt(-2.0 * std::log(u1)) * std_dev;
    out[i] = static_cast<float>(r * std::cos(6.283185307179586 * u2));
    if (i + 1 < n) out[i + 1] = static_cast<float>(r * std::sin(6.283185307179586 * u2));
  }
}

struct SynthTensor {
  std::string name;
  std::vector<uint64_t> dims;
  bool is_norm;
  DType type = DType::F32;
};

std::vector<SynthTensor> tensor_list(const Shape& s, uint32_t n_layer, uint64_t n_vocab) {
  const uint64_t d = s.n_embd, ff = s.n_ff, kv = d / s.n_head * s.n_head_kv;
  std::vector<SynthTensor> t;
  t.push_back({"token_embd.weight", {d, n_vocab}, false});
  for (uint32_t l = 0; l < n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    t.push_back({p + "attn_norm.weight", {d}, true});
    t.push_back({p + "attn_q.weight", {d, d}, false});
    t.push_back({p + "attn_k.weight", {d, kv}, false});
    t.push_back({p + "attn_v.weight", {d, kv}, false});
    t.push_back({p + "attn_output.weight", {d, d}, false});
    t.push_back({p + "ffn_norm.weight", {d}, true});
    t.push_back({p + "ffn_gate.weight", {d, ff}, false});
    t.push_back({p + "ffn_up.weight", {d, ff}, false});
    t.push_back({p + "ffn_down.weight", {ff, d}, false});
  }
  t.push_back({"output_norm.weight", {d}, true});
  t.push_back({"output.weight", {d, n_vocab}, false});
  return t;
}

// Generates tensor `index` and converts it to its type, rows split over threads.
void generate_tensor(const SynthTensor& t, uint64_t seed, float std_dev, uint64_t index, int n_threads,
                     std::vector<uint8_t>* out) {
  const int64_t n_per_row = static_cast<int64_t>(t.dims[0]);
  const int64_t n_rows = t.dims.size() > 1 ? static_cast<int64_t>(t.dims[1]) : 1;
  const uint64_t row_bytes = dtype_row_bytes(t.type, t.dims[0]);
  out->resize(row_bytes * static_cast<uint64_t>(n_rows));
  auto work = [&](int64_t r0, int64_t r1) {
    std::vector<float> row(static_cast<size_t>(n_per_row));
    for (int64_t r = r0; r < r1; ++r) {
      if (t.is_norm) std::fill(row.begin(), row.end(), 1.0f);
      else fill_gaussian_row(seed, index, static_cast<uint64_t>(r), std_dev, row.data(), n_per_row);
      quantize_rows_uniform(t.type, row.data(), out->data() + static_cast<uint64_t>(r) * row_bytes, 1, n_per_row);
    }
  };
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  n_threads = 1;
#endif
  const int64_t n_workers = std::max<int64_t>(1, std::min<int64_t>(n_threads, n_rows));
  std::vector<std::thread> threads;
  for (int64_t w = 1; w < n_workers; ++w) threads.emplace_back(work, n_rows * w / n_workers, n_rows * (w + 1) / n_workers);
  work(0, n_rows / n_workers);
  for (std::thread& th : threads) th.join();
}

Status add_header(gguf::GgufWriter& w, const Shape& s, const SynthOptions& o, uint32_t n_layer, uint64_t n_vocab,
                  const QuantPreset& preset) {
  OX_TRY(w.add_string("general.architecture", "llama"));
  OX_TRY(w.add_string("general.name", std::string("oxidize synthetic ") + s.name));
  OX_TRY(w.add_u32("llama.context_length", o.n_ctx));
  OX_TRY(w.add_u32("llama.embedding_length", s.n_embd));
  OX_TRY(w.add_u32("llama.block_count", n_layer));
  OX_TRY(w.add_u32("llama.feed_forward_length", s.n_ff));
  OX_TRY(w.add_u32("llama.rope.dimension_count", s.n_embd / s.n_head));
  OX_TRY(w.add_u32("llama.attention.head_count", s.n_head));
  OX_TRY(w.add_u32("llama.attention.head_count_kv", s.n_head_kv));
  OX_TRY(w.add_f32("llama.attention.layer_norm_rms_epsilon", s.rms_eps));
  OX_TRY(w.add_f32("llama.rope.freq_base", s.rope_base));
  OX_TRY(w.add_u32("llama.vocab_size", static_cast<uint32_t>(n_vocab)));
  OX_TRY(w.add_u32("general.file_type", preset.llama_ftype));
  OX_TRY(w.add_u32("general.quantization_version", 2));
  return Status::ok();
}

}  // namespace

const std::vector<std::string>& synth_shape_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Shape& s : kShapes) v.push_back(s.name);
    return v;
  }();
  return names;
}

std::string default_synth_vocab_path() {
  const char* env = std::getenv("OXIDIZE_SHARED");
  const std::string shared = env != nullptr && *env != '\0' ? std::string(env) : std::string(OXIDIZE_SOURCE_DIR) + "/../shared";
  return shared + "/vocab/ggml-vocab-llama-spm.gguf";
}

Status synth_gguf(const SynthOptions& o) {
  const Shape* shape = nullptr;
  for (const Shape& s : kShapes) {
    if (o.shape == s.name) shape = &s;
  }
  if (shape == nullptr) {
    std::string known;
    for (const Shape& s : kShapes) known += (known.empty() ? "" : ", ") + std::string(s.name);
    return error(ErrorCode::kInvalidArgument,
                 strfmt("synth: unknown shape '%s' (known: %s)", o.shape.c_str(), known.c_str()));
  }
  const QuantPreset* preset = find_quant_preset(o.type);
  if (preset == nullptr) return error(ErrorCode::kInvalidArgument, strfmt("synth: unknown weight type '%s'", o.type.c_str()));
  if (o.out_path.empty()) return error(ErrorCode::kInvalidArgument, "synth: no output path");
  const uint32_t n_layer = o.n_layer != 0 ? o.n_layer : shape->n_layer;
  int n_threads = o.n_threads > 0 ? o.n_threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  const std::string vocab_path = o.vocab_path.empty() ? default_synth_vocab_path() : o.vocab_path;
  OX_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> vocab, gguf::GgufFile::open(vocab_path));
  OX_ASSIGN_OR_RETURN(const std::vector<std::string_view>* tokens, vocab->get_string_array("tokenizer.ggml.tokens"));
  const uint64_t n_vocab = tokens->size();
  if (n_vocab == 0) return error(ErrorCode::kInvalidFile, strfmt("%s: empty tokenizer.ggml.tokens", vocab_path.c_str()));

  gguf::GgufWriter w;
  OX_TRY(add_header(w, *shape, o, n_layer, n_vocab, *preset));
  for (const auto& [key, value] : vocab->metadata()) {
    if (key.rfind("tokenizer.", 0) == 0) OX_TRY(w.add(key, gguf::encode_value(value)).with_context(vocab_path));
  }

  QuantModelFacts facts;
  facts.arch = "llama";
  facts.n_layer = n_layer;
  facts.n_head = shape->n_head;
  facts.n_head_kv = shape->n_head_kv;
  facts.has_output = true;
  facts.n_attention_wv = n_layer;
  std::vector<SynthTensor> tensors = tensor_list(*shape, n_layer, n_vocab);
  for (SynthTensor& t : tensors) {
    t.type = quant_tensor_type(*preset, facts, t.name, t.dims, DType::F32);
    const QuantTraits& q = quant_traits(t.type);
    if (q.from_float_ref == nullptr && q.quantize_rows == nullptr) {
      return error(ErrorCode::kUnsupported, strfmt("synth: %s gives tensor '%s' type %s, which this engine cannot "
                                                   "quantize to", preset->name, t.name.c_str(), dtype_name(t.type)));
    }
    OX_TRY(w.declare_tensor(t.name, t.dims, t.type));
  }

  FILE* f = std::fopen(o.out_path.c_str(), "wb");
  if (f == nullptr) return error(ErrorCode::kIo, strfmt("synth: cannot create %s", o.out_path.c_str()));
  Status st = w.begin(f);
  std::vector<uint8_t> data;
  for (size_t i = 0; i < tensors.size() && st.is_ok(); ++i) {
    generate_tensor(tensors[i], o.seed, o.weight_std, i, n_threads, &data);
    st = w.write_tensor_data(tensors[i].name, data);
  }
  if (st.is_ok()) st = w.finish();
  if (std::fclose(f) != 0 && st.is_ok()) st = error(ErrorCode::kIo, strfmt("synth: closing %s failed", o.out_path.c_str()));
  if (!st.is_ok()) {
    std::remove(o.out_path.c_str());
    return st.with_context(o.out_path);
  }
  return Status::ok();
}

}  // namespace ox
