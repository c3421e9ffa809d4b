// Model loading: architecture lookup, hyperparameters, tensor validation, forward-state sizing.
#include <cstring>

#include "core/model/archs.h"
#include "core/quant/traits.h"

namespace ox {
namespace {

struct ArchEntry {
  const char* name;
  Status (*load)(ModelBuilder&);
};

// Architectures whose weights and forward pass are implemented.
constexpr ArchEntry kArchs[] = {
    {"llama", load_llama},
};

Result<Tensor> view(ModelBuilder& b, const std::string& name, int64_t cols, int64_t rows, bool required) {
  const gguf::TensorInfo* info = b.file().find_tensor(name);
  if (info == nullptr) {
    if (!required) return Tensor{};
    return error(ErrorCode::kInvalidFile, strfmt("%s: missing tensor '%s'", b.file().name().c_str(), name.c_str()));
  }
  const bool shape_ok = !info->dims.empty() && info->dims[0] == static_cast<uint64_t>(cols) &&
                        info->rows() == static_cast<uint64_t>(rows) &&
                        (info->dims.size() < 2 || info->dims[1] == static_cast<uint64_t>(rows) || rows == 1);
  if (!shape_ok) {
    std::string dims;
    for (uint64_t d : info->dims) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
    return error(ErrorCode::kInvalidFile, strfmt("%s: tensor '%s' has shape [%s], expected [%lld, %lld]",
                                                 b.file().name().c_str(), name.c_str(), dims.c_str(),
                                                 static_cast<long long>(cols), static_cast<long long>(rows)));
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
  t.row_bytes = dtype_row_bytes(info->type, static_cast<uint64_t>(cols));
  t.data = info->data;
  return t;
}

}  // namespace

std::string layer_name(int layer, const char* base, const char* suffix) {
  return strfmt("blk.%d.%s.%s", layer, base, suffix);
}

Result<Tensor> ModelBuilder::matrix(const std::string& name, int64_t cols, int64_t rows) {
  return view(*this, name, cols, rows, true);
}

Result<Tensor> ModelBuilder::optional_matrix(const std::string& name, int64_t cols, int64_t rows) {
  return view(*this, name, cols, rows, false);
}

Result<Tensor> ModelBuilder::optional_vector(const std::string& name, int64_t n) {
  OX_ASSIGN_OR_RETURN(Tensor t, view(*this, name, n, 1, false));
  if (t.empty() || t.type == DType::F32) return t;
  model.converted_.push_back(to_f32(t));
  t.type = DType::F32;
  t.row_bytes = static_cast<uint64_t>(n) * sizeof(float);
  t.data = reinterpret_cast<const uint8_t*>(model.converted_.back().data());
  return t;
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
  OX_ASSIGN_OR_RETURN(model->hparams_, read_hparams(*model->file_));
  const std::string& arch = model->hparams_.arch;
  const ArchEntry* entry = nullptr;
  std::string known;
  for (const ArchEntry& e : kArchs) {
    if (arch == e.name) entry = &e;
    known += known.empty() ? e.name : std::string(", ") + e.name;
  }
  if (entry == nullptr) {
    return error(ErrorCode::kUnsupported, strfmt("%s: unknown model architecture '%s' (supported: %s)",
                                                 model->file_->name().c_str(), arch.c_str(), known.c_str()));
  }
  ModelBuilder builder{*model};
  OX_TRY(entry->load(builder));
  OX_CHECK(model->forward_ != nullptr);
  return std::shared_ptr<const Model>(std::move(model));
}

Result<std::unique_ptr<ForwardState>> Model::new_state(int n_ctx, int max_batch, const kernels::KernelTable* kernels,
                                                       ThreadPool* pool) const {
  const HParams& hp = hparams_;
  auto st = std::make_unique<ForwardState>();
  st->ops.kernels = kernels;
  st->ops.pool = pool;
  st->max_batch = max_batch;
  OX_ASSIGN_OR_RETURN(st->kv, KvCache::create(hp.n_layer, n_ctx, hp.n_head_kv * hp.head_dim_k,
                                              hp.n_head_kv * hp.head_dim_v));
  const size_t n = static_cast<size_t>(max_batch);
  st->x.resize(n * hp.n_embd);
  st->h.resize(n * hp.n_embd);
  st->proj.resize(n * hp.n_embd);
  st->q.resize(n * hp.n_head * hp.head_dim_k);
  st->k.resize(n * hp.n_head_kv * hp.head_dim_k);
  st->v.resize(n * hp.n_head_kv * hp.head_dim_v);
  st->att.resize(n * hp.n_head * hp.head_dim_v);
  st->gate.resize(n * hp.n_ff);
  st->up.resize(n * hp.n_ff);
  return st;
}

void Model::forward(ForwardState& st, std::span<const int32_t> tokens, int64_t pos0, bool all_logits,
                    float* logits) const {
  OX_CHECK(static_cast<int64_t>(tokens.size()) <= st.max_batch);
  OX_CHECK(pos0 + static_cast<int64_t>(tokens.size()) <= st.kv.n_ctx());
  forward_(*this, st, tokens, pos0, all_logits, logits);
}

}  // namespace ox
