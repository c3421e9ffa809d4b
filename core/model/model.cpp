// Model loading: architecture lookup, hyperparameters, tensor validation, forward-state sizing;
// and the edits of a sequence's cached positions (context shift, seq_rm).
#include <algorithm>
#include <cstring>
#include <numeric>

#include "core/base/memory.h"
#include "core/model/arch_registry.h"
#include "core/model/decoder_load.h"
#include "core/model/file_layout.h"
#include "core/model/mla.h"
#include "core/model/recurrent.h"
#include "core/model/moe.h"
#include "core/quant/traits.h"

namespace ox {
namespace {

Result<Tensor> view(ModelBuilder& b, const std::string& name, int64_t cols, int64_t rows, int64_t n_mats,
                    bool required) {
  const gguf::TensorInfo* info = b.file().find_tensor(name);
  if (info == nullptr) {
    if (!required) return Tensor{};
    return error(ErrorCode::kInvalidFile, strfmt("%s: missing tensor '%s'", b.file().name().c_str(), name.c_str()));
  }
  const std::vector<uint64_t>& dims = info->dims;
  const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  bool shape_ok = !dims.empty() && dims[0] == u(cols) && info->rows() == u(rows) * u(n_mats);
  if (n_mats > 1) {
    shape_ok = shape_ok && dims.size() == 3 && dims[1] == u(rows);
  } else {
    // {cols, 1, 1, rows}: RWKV's stacked vectors (time_mix_lerp_fused)
    const bool stacked = dims.size() == 4 && dims[1] == 1 && dims[2] == 1 && dims[3] == u(rows);
    shape_ok = shape_ok && (dims.size() < 2 || dims[1] == u(rows) || rows == 1 || stacked);
  }
  if (!shape_ok) {
    std::string shape;
    for (uint64_t d : dims) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    std::string want = strfmt("%lld, %lld", static_cast<long long>(cols), static_cast<long long>(rows));
    if (n_mats > 1) want += strfmt(", %lld", static_cast<long long>(n_mats));
    return error(ErrorCode::kInvalidFile, strfmt("%s: tensor '%s' has shape [%s], expected [%s]",
                                                 b.file().name().c_str(), name.c_str(), shape.c_str(), want.c_str()));
  }
  const QuantTraits& tr = quant_traits(info->type);
  if (!dtype_facts(info->type).supported || tr.to_float == nullptr || tr.vec_dot_ref == nullptr) {
    return error(ErrorCode::kUnsupported, strfmt("%s: tensor '%s' uses type %s, which this engine does not support",
                                                 b.file().name().c_str(), name.c_str(), dtype_name(info->type)));
  }
  Tensor t;
  t.name = info->name.c_str();
  t.type = info->type;
  t.cols = cols;
  t.rows = rows;
  t.n_mats = n_mats;
  t.row_bytes = dtype_row_bytes(info->type, static_cast<uint64_t>(cols));
  t.data = info->data;
  return t;
}

}  // namespace

Tensor row_slice(const Tensor& t, int64_t first, int64_t count) {
  OX_CHECK(t.n_mats == 1 && first >= 0 && count >= 0 && first + count <= t.rows);
  Tensor s = t;
  s.rows = count;
  s.data = t.row(first);
  return s;
}

Tensor element_slice(const Tensor& vector_f32, int64_t first, int64_t count) {
  OX_CHECK(vector_f32.type == DType::F32 && vector_f32.rows == 1 && first >= 0 && first + count <= vector_f32.cols);
  Tensor s = vector_f32;
  s.cols = count;
  s.row_bytes = static_cast<uint64_t>(count) * sizeof(float);
  s.data = vector_f32.data + static_cast<uint64_t>(first) * sizeof(float);
  return s;
}

std::string layer_name(int layer, const char* base, const char* suffix) {
  return strfmt("blk.%d.%s.%s", layer, base, suffix);
}

Result<Tensor> ModelBuilder::matrix(const std::string& name, int64_t cols, int64_t rows) {
  return view(*this, name, cols, rows, 1, true);
}

Result<Tensor> ModelBuilder::matrices(const std::string& name, int64_t cols, int64_t rows, int64_t n_mats) {
  return view(*this, name, cols, rows, n_mats, true);
}

Result<Tensor> ModelBuilder::optional_matrix(const std::string& name, int64_t cols, int64_t rows) {
  return view(*this, name, cols, rows, 1, false);
}

Result<Tensor> ModelBuilder::optional_vector(const std::string& name, int64_t n) {
  OX_ASSIGN_OR_RETURN(Tensor t, view(*this, name, n, 1, 1, false));
  if (t.empty() || t.type == DType::F32) return t;
  model.converted_.push_back(to_f32(t));
  t.type = DType::F32;
  t.row_bytes = static_cast<uint64_t>(n) * sizeof(float);
  t.data = reinterpret_cast<const uint8_t*>(model.converted_.back().data());
  return t;
}

Result<Tensor> ModelBuilder::f32_matrix(const std::string& name, int64_t cols, int64_t rows) {
  OX_ASSIGN_OR_RETURN(Tensor t, view(*this, name, cols, rows, 1, true));
  if (t.type == DType::F32) return t;
  model.converted_.push_back(to_f32(t));
  t.type = DType::F32;
  t.row_bytes = static_cast<uint64_t>(cols) * sizeof(float);
  t.data = reinterpret_cast<const uint8_t*>(model.converted_.back().data());
  return t;
}

Result<Tensor> ModelBuilder::optional_vectors(const std::string& name, int64_t n, int64_t count) {
  OX_ASSIGN_OR_RETURN(Tensor t, view(*this, name, n, count, 1, false));
  if (t.empty()) return t;
  model.converted_.push_back(to_f32(t));
  t.type = DType::F32;
  t.cols = n * count;
  t.rows = 1;
  t.row_bytes = static_cast<uint64_t>(n * count) * sizeof(float);
  t.data = reinterpret_cast<const uint8_t*>(model.converted_.back().data());
  return t;
}

Status ModelBuilder::check(const std::string& name, int64_t cols, int64_t rows, int64_t n_mats, bool required) {
  return view(*this, name, cols, rows, n_mats, required).status();
}

Result<Tensor> ModelBuilder::vector(const std::string& name, int64_t n) {
  OX_ASSIGN_OR_RETURN(Tensor t, optional_vector(name, n));
  if (t.empty()) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: missing tensor '%s'", file().name().c_str(), name.c_str()));
  }
  return t;
}

Result<std::shared_ptr<const Model>> Model::load(std::shared_ptr<const gguf::GgufFile> file) {
  auto model = std::make_shared<Model>();
  model->file_ = std::move(file);
  // The architecture first: an unknown one is "unsupported", whatever keys it lacks.
  OX_ASSIGN_OR_RETURN(std::string_view arch_view, model->file_->get_string("general.architecture"));
  const std::string arch(arch_view);
  const ArchDef* def = find_arch(arch);
  if (def == nullptr) {
    std::string what =
        llama_cpp_name_only(arch)
            ? strfmt("model architecture '%s' is not supported (llama.cpp v0.5.0 knows the name but does not run it "
                     "either)", arch.c_str())
        : known_to_llama_cpp(arch)
            ? strfmt("model architecture '%s' is not supported by oxidize yet (llama.cpp runs it)", arch.c_str())
            : strfmt("unknown model architecture '%s'", arch.c_str());
    if (const std::string_view why = out_of_scope_reason(arch); !why.empty()) what.append(": ").append(why);
    return error(ErrorCode::kUnsupported, strfmt("%s: %s (supported: %s)", model->file_->name().c_str(), what.c_str(),
                                                 arch_names().c_str()));
  }
  OX_ASSIGN_OR_RETURN(model->hparams_, read_hparams(*model->file_));
  if (def->fix_hparams != nullptr) def->fix_hparams(model->hparams_);
  model->spec_ = def->spec;
  if (def->configure != nullptr) OX_TRY(def->configure(*model->file_, model->hparams_, model->spec_));
  OX_TRY(read_file_layout(*model->file_, model->hparams_, model->spec_));
  if (model->hparams_.n_layer_nextn > 0 && !model->spec_.nextn.on) {
    return error(ErrorCode::kUnsupported,
                 strfmt("%s: multi-token-prediction blocks ('%s.nextn_predict_layers' = %d) are not supported for %s",
                        model->file_->name().c_str(), arch.c_str(), model->hparams_.n_layer_nextn, arch.c_str()));
  }
  if (model->spec_.softcaps) {
    model->spec_.attn_softcap = model->hparams_.attn_softcap;
    model->spec_.final_softcap = model->hparams_.final_softcap;
  }
  // Encoders declare non-causal attention in the file (bert.attention.causal = false), as llama.cpp reads it.
  if (model->file_->find(model->hparams_.arch + ".attention.causal") != nullptr) {
    model->spec_.causal_attention = model->hparams_.causal_attn;
  }
  ModelBuilder builder{*model};
  OX_TRY(load_decoder(builder));
  model->forward_ = def->forward != nullptr ? def->forward : &forward_decoder;
  return std::shared_ptr<const Model>(std::move(model));
}

KvCacheShape Model::kv_shape(int n_ctx, int max_batch, DType cache_type_k, DType cache_type_v, int n_seq,
                             bool swa_full) const {
  const HParams& hp = hparams_;
  KvCacheShape s;
  // The layers that store keys and values (the last ones may reuse earlier ones'), each
  // position's row as wide as the widest layer's; every layer's heads must be whole blocks of a
  // block type, so the head size checked is their greatest common divisor.
  s.n_layer = n_layer_kv_own(spec_, hp);
  s.n_ctx = n_ctx;
  s.k_dim = hp.n_head_kv * hp.head_dim_k;
  s.v_dim = hp.n_head_kv * hp.head_dim_v;
  s.head_dim_k = hp.head_dim_k;
  s.head_dim_v = hp.head_dim_v;
  for (const LayerAttention& a : layers_) {
    s.k_dim = std::max(s.k_dim, a.n_head_kv * a.head_dim_k);
    s.v_dim = std::max(s.v_dim, a.n_head_kv * a.head_dim_v);
    s.head_dim_k = std::gcd(s.head_dim_k, a.head_dim_k);
    s.head_dim_v = std::gcd(s.head_dim_v, a.head_dim_v);
  }
  s.type_k = cache_type_k;
  s.type_v = cache_type_v;
  s.n_seq = n_seq;
  // Causal sliding-window layers (llama4's chunks too: a chunk lies within the window before a
  // position) keep only their window unless swa_full; a symmetric window sees later positions too.
  const bool windows = spec_.causal_attention && !spec_.swa_symmetric;
  for (int l = 0; l < s.n_layer && windows; ++l) {
    const int window = layers_[static_cast<size_t>(l)].window;
    s.window = std::max(s.window, window);
    s.sliding.push_back(window > 0);
  }
  if (s.window == 0) s.sliding.clear();
  s.n_batch = max_batch;
  s.swa_full = swa_full;
  // The latent cache of deepseek2 files with attn_k_b / attn_v_b: a position's value is the start of
  // its key row (llama.cpp's K-only cache, which ignores the V type), so no V rows.
  if (spec_.mla && hp.mla_absorbed()) {
    s.v_dim = 0;
    s.type_v = cache_type_k;
  }
  // Recurrent layers: their state instead of K/V rows (a pure state-space model attends nowhere).
  if (spec_.recurrent != Recurrent::kNone) {
    const RecurrentDims r = recurrent_dims(spec_, hp);
    s.rs_conv_dim = r.conv;
    s.rs_ssm_dim = r.ssm;
    if (!spec_.hybrid) s.k_dim = s.v_dim = 0;
  }
  return s;
}

namespace {

// Every buffer of a ForwardState, listed once (plan_state_buffers): a counting pass sums their bytes
// for the memory check, then an allocating pass sizes them, so the check covers exactly what is
// allocated (MemoryLimits.StateEstimateMatchesWhatIsAllocated measures the two against malloc).
struct StatePlan {
  bool allocate = false;
  uint64_t bytes = 0;
  uint64_t widest_row = 0;  // floats of the widest per-token buffer: bounds what a matmul quantizes

  template <typename T>
  void buffer(std::vector<T>& v, uint64_t n) {
    bytes += n * sizeof(T);
    if (allocate) v.resize(static_cast<size_t>(n));
  }
  // [n_tokens, width]
  template <typename T>
  void rows(std::vector<T>& v, uint64_t n_tokens, uint64_t width) {
    widest_row = std::max(widest_row, width);
    buffer(v, n_tokens * width);
  }
};

void plan_state_buffers(const Model& m, int n_ctx, uint64_t n, ForwardState& st, StatePlan& plan) {
  const HParams& hp = m.hparams();
  const ArchSpec& spec = m.spec();
  // Head buffers as wide as the widest layer's (window layers may have heads of their own size).
  const uint64_t head_dim_k = std::max(hp.head_dim_k, hp.head_dim_k_swa);
  const uint64_t head_dim_v = std::max(hp.head_dim_v, hp.head_dim_v_swa);
  const uint64_t n_embd = hp.n_embd;
  plan.buffer(st.batch, n);
  plan.buffer(st.runs, n);
  for (std::vector<float>* v : {&st.x, &st.h, &st.h2, &st.proj, &st.ffn_out}) plan.rows(*v, n, n_embd);
  plan.rows(st.q, n, hp.n_head * head_dim_k);
  plan.rows(st.k, n, hp.n_head_kv * head_dim_k);
  plan.rows(st.v, n, hp.n_head_kv * head_dim_v);
  plan.rows(st.att, n, hp.n_head * head_dim_v);
  plan.rows(st.gate, n, static_cast<uint64_t>(hp.n_ff));
  plan.rows(st.up, n, static_cast<uint64_t>(hp.n_ff));
  plan.rows(st.mixer, n, static_cast<uint64_t>(recurrent_dims(spec, hp).scratch + mla_scratch_floats(spec, hp)));
  // gemma4's per-layer inputs, then room for one token's table row or the batch's gate.
  const uint64_t per_layer_width = static_cast<uint64_t>(hp.n_layer) * hp.n_embd_per_layer;
  plan.buffer(st.per_layer, hp.n_embd_per_layer > 0 ? n * per_layer_width + std::max(per_layer_width, n * hp.n_embd_per_layer) : 0);
  plan.buffer(st.altup, m.weights().altup_proj.empty() ? 0 : 2 * n * n_embd * static_cast<uint64_t>(m.weights().altup_proj.n_mats + 1));
  if (hp.n_expert > 0) {
    const uint64_t moe_ff = static_cast<uint64_t>(std::max(expert_ff(spec, hp), shared_ff(spec, hp)));
    plan.rows(st.router, n, static_cast<uint64_t>(hp.n_expert));
    plan.rows(st.routed, n, static_cast<uint64_t>(hp.n_expert_used));
    plan.rows(st.route_w, n, static_cast<uint64_t>(hp.n_expert_used));
    plan.buffer(st.members, n);
    plan.rows(st.moe_in, n, n_embd);
    plan.rows(st.moe_out, n, n_embd);
    plan.rows(st.moe_gate, n, moe_ff);
    plan.rows(st.moe_up, n, moe_ff);
    plan.buffer(st.moe_scores, static_cast<uint64_t>(hp.n_expert));
  }
  // T5's bias per key - query distance, for a run as long as the context (decoder.cpp resizes it
  // per run, within this).
  if (spec.rel_buckets > 0) plan.buffer(st.rel_bias, (2 * static_cast<uint64_t>(n_ctx) - 1) * hp.n_head);
}

}  // namespace

Result<StateBytes> Model::state_bytes(int n_ctx, int max_batch, DType cache_type_k, DType cache_type_v, int n_seq,
                                      bool swa_full) const {
  if (n_ctx < 1 || max_batch < 1 || n_seq < 1) {
    return error(ErrorCode::kInvalidArgument, strfmt("context %d, batch %d and sequences %d must be positive", n_ctx,
                                                     max_batch, n_seq));
  }
  StateBytes out;
  OX_ASSIGN_OR_RETURN(out.kv, KvCache::bytes_needed(kv_shape(n_ctx, max_batch, cache_type_k, cache_type_v, n_seq, swa_full)));
  ForwardState none;  // the counting pass allocates nothing
  StatePlan plan;
  plan_state_buffers(*this, n_ctx, static_cast<uint64_t>(max_batch), none, plan);
  out.buffers = plan.bytes;
  // OpContext::act_scratch grows on first use to a batch's rows of the widest matmul input in the
  // activation type, no wider than f32 (attention's float_scratch is per thread, not per token).
  out.act_scratch = static_cast<uint64_t>(max_batch) * plan.widest_row * sizeof(float);
  return out;
}

Result<std::unique_ptr<ForwardState>> Model::new_state(int n_ctx, int max_batch, const kernels::KernelTable* kernels,
                                                       ThreadPool* pool, DType cache_type_k, DType cache_type_v,
                                                       int n_seq, bool swa_full) const {
  if (!weights_.position_embd.empty() && n_ctx > weights_.position_embd.rows) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("%s: context %d exceeds the %lld learned positions of this model", file_->name().c_str(), n_ctx,
                        static_cast<long long>(weights_.position_embd.rows)));
  }
  // Everything below, counted before any of it is allocated: a context or batch too large for this
  // machine (or wasm's 4 GiB) is refused with the numbers instead of aborting or swapping.
  OX_ASSIGN_OR_RETURN(const StateBytes need, state_bytes(n_ctx, max_batch, cache_type_k, cache_type_v, n_seq, swa_full));
  const uint64_t buffers = need.buffers + need.act_scratch;
  OX_TRY(check_memory(need.kv + buffers,
                      strfmt("%d sequence%s of %d positions (KV cache %.2f GiB in %s/%s, buffers %.2f GiB for "
                             "batches of %d tokens)", n_seq, n_seq == 1 ? "" : "s", n_ctx, need.kv / 1073741824.0,
                             kv_cache_type_name(cache_type_k).c_str(), kv_cache_type_name(cache_type_v).c_str(),
                             buffers / 1073741824.0, max_batch),
                      "use a smaller context size (-c / n_ctx), batch size (-b / n_batch) or KV cache type "
                      "(-ctk/-ctv q8_0)"));
  auto st = std::make_unique<ForwardState>();
  st->ops.kernels = kernels;
  st->ops.pool = pool;
  st->max_batch = max_batch;
  OX_ASSIGN_OR_RETURN(st->kv, KvCache::create(kv_shape(n_ctx, max_batch, cache_type_k, cache_type_v, n_seq, swa_full)));
  StatePlan plan;
  plan.allocate = true;
  plan_state_buffers(*this, n_ctx, static_cast<uint64_t>(max_batch), *st, plan);
  OX_CHECK(plan.bytes == need.buffers);
  return st;
}

Status Model::shift(ForwardState& st, int64_t n_keep, int64_t n_discard, int64_t n_past, int seq) const {
  // A hybrid shifts its attention layers' rows like a transformer and keeps its recurrent state.
  if (spec_.recurrent != Recurrent::kNone && !spec_.hybrid) return shift_recurrent(st, n_keep, n_discard, n_past, seq);
  if (!can_shift()) {
    return error(ErrorCode::kUnsupported,
                 strfmt("%s: a context shift needs rotary (or ALiBi) positions; this %s model has learned absolute "
                        "positions, whose cached keys cannot be moved",
                        file_->name().c_str(), hparams_.arch.c_str()));
  }
  OX_TRY(st.kv.check_seq(seq));
  if (n_keep < 0 || n_discard < 1 || n_keep + n_discard > n_past || n_past > st.kv.n_pos(seq)) {
    return error(ErrorCode::kOutOfRange,
                 strfmt("cannot drop positions [%lld, %lld) of a context holding %lld (sequence %d has %lld cached)",
                        static_cast<long long>(n_keep), static_cast<long long>(n_keep + n_discard),
                        static_cast<long long>(n_past), seq, static_cast<long long>(st.kv.n_pos(seq))));
  }
  st.kv.set_n_pos(seq, n_past);
  st.kv.drop_positions(seq, n_keep, n_keep + n_discard);
  if (!spec_.rope) return Status::ok();  // ALiBi's biases depend on distances only: the moved keys stay as they are
  // Rotating by -n_discard: RoPE's angle is linear in the position, so rotation by theta(p) then by
  // theta(-d) is rotation by theta(p - d). A block of rows at a time, as one token of many heads.
  const int64_t k_dim = st.kv.k_dim();
  constexpr int64_t kRows = 64;
  std::vector<float> rows(static_cast<size_t>(kRows * k_dim));
  const kernels::KernelTable& k = *st.ops.kernels;
  const ToFloatFn load = k.to_float[static_cast<uint32_t>(st.kv.type_k())];
  const FromFloatFn store = k.quantize_row[static_cast<uint32_t>(st.kv.type_k())];
  for (int l = 0; l < st.kv.shape().n_layer; ++l) {  // the layers that store keys, with their own heads
    const LayerAttention& la = layers_[static_cast<size_t>(l)];
    // Latent attention rotates the last n_rot values of each key head (of the compressed row).
    const int64_t rot_offset = spec_.mla ? la.head_dim_k - hparams_.n_rot : 0;
    // A pure rotation: the keys already carry rope's magnitude (YaRN, attn_factor) once. (llama.cpp's
    // shift applies it again; its keys grow by that factor at every shift.)
    RopeParams rope_params = la.rope;
    rope_params.attn_factor /= rope_mscale(rope_params);
    const int64_t layer_k_dim = int64_t{la.n_head_kv} * la.head_dim_k;
    // The moved positions this layer holds (a sliding-window layer: only its window's).
    const int64_t end = n_past - n_discard;
    for (int64_t p0 = std::max(n_keep, st.kv.first_pos(l, seq)); p0 < end; p0 += kRows) {
      const int64_t n = std::min(kRows, end - p0);
      for (int64_t r = 0; r < n; ++r) load(st.kv.k(l, seq, p0 + r), rows.data() + r * layer_k_dim, layer_k_dim);
      rope(rows.data() + rot_offset, 1, static_cast<int>(n * la.n_head_kv), la.head_dim_k, -n_discard, rope_params);
      for (int64_t r = 0; r < n; ++r) store(rows.data() + r * layer_k_dim, st.kv.k(l, seq, p0 + r), layer_k_dim);
    }
  }
  return Status::ok();
}

Status Model::seq_rm(ForwardState& st, int seq, int64_t p0, int64_t p1) const {
  OX_TRY(st.kv.check_seq(seq));
  const int64_t n_pos = st.kv.n_pos(seq);
  if (p1 < 0 || p1 > n_pos) p1 = n_pos;
  if (p0 < 0 || p0 > p1) {
    return error(ErrorCode::kOutOfRange, strfmt("cannot remove positions from %lld of sequence %d, which holds %lld",
                                                static_cast<long long>(p0), seq, static_cast<long long>(n_pos)));
  }
  if (p0 == p1) return Status::ok();
  if (st.kv.has_recurrent()) {
    // The state summarises every position: only all of them can go (llama.cpp refuses the rest).
    if (p0 != 0 || p1 != n_pos) {
      return error(ErrorCode::kUnsupported,
                   strfmt("cannot remove positions [%lld, %lld) of sequence %d (of %lld): this %s model keeps a "
                          "recurrent state per sequence, which can only be cleared whole (positions 0 to the end)",
                          static_cast<long long>(p0), static_cast<long long>(p1), seq, static_cast<long long>(n_pos),
                          hparams_.arch.c_str()));
    }
    st.kv.rs().clear(seq);
    st.kv.set_n_pos(seq, 0);
    return Status::ok();
  }
  if (p1 == n_pos) {  // the tail: later tokens overwrite those rows
    st.kv.set_n_pos(seq, p0);
    return Status::ok();
  }
  return shift(st, p0, p1 - p0, n_pos, seq);
}

// A context shift of a pure recurrent model: the state cannot forget the dropped positions, so it
// is kept as it is and only the positions are renumbered (llama.cpp's recurrent memory does the
// same: its seq_rm of a middle range changes no state, seq_add moves the positions).
Status Model::shift_recurrent(ForwardState& st, int64_t n_keep, int64_t n_discard, int64_t n_past, int seq) const {
  OX_TRY(st.kv.check_seq(seq));
  if (n_keep < 0 || n_discard < 1 || n_keep + n_discard > n_past || n_past > st.kv.n_pos(seq)) {
    return error(ErrorCode::kOutOfRange,
                 strfmt("cannot drop positions [%lld, %lld) of a context holding %lld (sequence %d has %lld cached)",
                        static_cast<long long>(n_keep), static_cast<long long>(n_keep + n_discard),
                        static_cast<long long>(n_past), seq, static_cast<long long>(st.kv.n_pos(seq))));
  }
  st.kv.set_n_pos(seq, n_past - n_discard);
  return Status::ok();
}

}  // namespace ox
