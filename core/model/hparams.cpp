// read_hparams: GGUF keys -> HParams, with the defaults llama.cpp applies when a key is absent.
#include "core/model/hparams.h"

#include <cmath>

namespace ox {
namespace {

Result<int> read_count(const gguf::GgufFile& f, const std::string& key, bool required, int fallback) {
  if (f.find(key) == nullptr) {
    if (required) return error(ErrorCode::kInvalidFile, strfmt("%s: missing metadata key '%s'", f.name().c_str(), key.c_str()));
    return fallback;
  }
  OX_ASSIGN_OR_RETURN(uint32_t v, f.get_u32(key));
  if (v > (1u << 30)) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: metadata key '%s' = %u is out of range", f.name().c_str(), key.c_str(), v));
  }
  return static_cast<int>(v);
}

// rope.scaling.*: as llama_model::load_hparams and llama_context (type none: never scaled).
Status read_rope_scaling(const gguf::GgufFile& f, const std::string& p, HParams& hp) {
  OX_ASSIGN_OR_RETURN(std::string_view type, f.get_string_or(p + "rope.scaling.type", "linear"));
  if (type == "none") {
    hp.rope_scaling = RopeScalingType::kNone;
    hp.rope_freq_scale = 1.0f;
  } else if (type == "linear") {
    hp.rope_scaling = RopeScalingType::kLinear;
  } else if (type == "yarn") {
    hp.rope_scaling = RopeScalingType::kYarn;
  } else if (type == "longrope") {
    hp.rope_scaling = RopeScalingType::kLongrope;
  } else {
    return error(ErrorCode::kUnsupported, strfmt("%s: '%srope.scaling.type' is '%.*s' (known: none, linear, yarn, longrope)",
                                                 f.name().c_str(), p.c_str(), static_cast<int>(type.size()), type.data()));
  }
  OX_ASSIGN_OR_RETURN(hp.rope_attn_factor, f.get_f32_or(p + "rope.scaling.attn_factor", 1.0f));
  OX_ASSIGN_OR_RETURN(hp.n_ctx_orig_yarn, read_count(f, p + "rope.scaling.original_context_length", false, hp.n_ctx_train));
  if (hp.n_ctx_orig_yarn == 0) hp.n_ctx_orig_yarn = hp.n_ctx_train;  // llama_context's fallback
  OX_ASSIGN_OR_RETURN(hp.rope_scaling_alpha, f.get_f32_or(p + "rope.scaling.alpha", 0.0f));
  if (!(hp.rope_attn_factor > 0.0f) || !(hp.rope_scaling_alpha >= 0.0f) || !(hp.rope_freq_scale > 0.0f) ||
      !std::isfinite(hp.rope_freq_scale)) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: rope.scaling factor, attn_factor or alpha out of range", f.name().c_str()));
  }
  return Status::ok();
}

}  // namespace

Result<HParams> read_hparams(const gguf::GgufFile& f) {
  HParams hp;
  OX_ASSIGN_OR_RETURN(std::string_view arch, f.get_string("general.architecture"));
  hp.arch = std::string(arch);
  const std::string p = hp.arch + ".";
  OX_ASSIGN_OR_RETURN(hp.n_ctx_train, read_count(f, p + "context_length", true, 0));
  OX_ASSIGN_OR_RETURN(hp.n_embd, read_count(f, p + "embedding_length", true, 0));
  OX_ASSIGN_OR_RETURN(hp.n_layer, read_count(f, p + "block_count", true, 0));
  OX_ASSIGN_OR_RETURN(hp.n_ff, read_count(f, p + "feed_forward_length", true, 0));
  OX_ASSIGN_OR_RETURN(hp.n_head, read_count(f, p + "attention.head_count", true, 0));
  OX_ASSIGN_OR_RETURN(hp.n_head_kv, read_count(f, p + "attention.head_count_kv", false, hp.n_head));
  if (hp.n_embd <= 0 || hp.n_layer <= 0 || hp.n_head <= 0 || hp.n_head_kv <= 0 || hp.n_ctx_train <= 0) {
    return error(ErrorCode::kInvalidFile,
                 strfmt("%s: embedding_length, block_count, head counts and context_length must be positive",
                        f.name().c_str()));
  }
  // Every layer has tensors of its own (blk.L.*): a block count above the tensor count is a corrupt
  // file, caught here before the loaders size per-layer tables by it (2^30 layers exhausted memory).
  if (static_cast<size_t>(hp.n_layer) > f.tensors().size()) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: '%sblock_count' is %d but the file holds only %zu tensors",
                                                 f.name().c_str(), p.c_str(), hp.n_layer, f.tensors().size()));
  }
  if (hp.n_head % hp.n_head_kv != 0) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: '%sattention.head_count' (%d) is not a multiple of "
                                                 "'%sattention.head_count_kv' (%d)",
                                                 f.name().c_str(), p.c_str(), hp.n_head, p.c_str(), hp.n_head_kv));
  }
  OX_ASSIGN_OR_RETURN(hp.head_dim_k, read_count(f, p + "attention.key_length", false, hp.n_embd / hp.n_head));
  OX_ASSIGN_OR_RETURN(hp.head_dim_v, read_count(f, p + "attention.value_length", false, hp.head_dim_k));
  OX_ASSIGN_OR_RETURN(hp.n_rot, read_count(f, p + "rope.dimension_count", false, hp.head_dim_k));
  if (hp.head_dim_k <= 0 || hp.head_dim_v <= 0 || hp.n_rot > hp.head_dim_k || hp.n_rot % 2 != 0) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: inconsistent head dimensions (key %d, value %d, rope %d)",
                                                 f.name().c_str(), hp.head_dim_k, hp.head_dim_v, hp.n_rot));
  }
  OX_ASSIGN_OR_RETURN(hp.rope_freq_base, f.get_f32_or(p + "rope.freq_base", 10000.0f));
  OX_ASSIGN_OR_RETURN(float rope_scale, f.get_f32_or(p + "rope.scaling.factor", 0.0f));
  hp.rope_freq_scale = rope_scale > 0 ? 1.0f / rope_scale : 1.0f;
  OX_TRY(read_rope_scaling(f, p, hp));
  OX_ASSIGN_OR_RETURN(hp.rms_eps, f.get_f32_or(p + "attention.layer_norm_rms_epsilon", 1e-5f));
  OX_ASSIGN_OR_RETURN(hp.norm_eps, f.get_f32_or(p + "attention.layer_norm_epsilon", 1e-5f));
  OX_ASSIGN_OR_RETURN(hp.n_expert, read_count(f, p + "expert_count", false, 0));
  OX_ASSIGN_OR_RETURN(hp.n_expert_used, read_count(f, p + "expert_used_count", false, 0));
  if (hp.n_expert_used > hp.n_expert || (hp.n_expert > 0 && hp.n_expert_used <= 0)) {
    return error(ErrorCode::kInvalidFile,
                 strfmt("%s: '%sexpert_used_count' (%d) must be in 1..'%sexpert_count' (%d)", f.name().c_str(),
                        p.c_str(), hp.n_expert_used, p.c_str(), hp.n_expert));
  }
  OX_ASSIGN_OR_RETURN(hp.n_swa, read_count(f, p + "attention.sliding_window", false, 0));
  OX_ASSIGN_OR_RETURN(hp.swa_pattern, read_count(f, p + "attention.sliding_window_pattern", false, 0));
  OX_ASSIGN_OR_RETURN(hp.rope_freq_base_swa, f.get_f32_or(p + "rope.freq_base_swa", 0.0f));
  OX_ASSIGN_OR_RETURN(hp.attn_softcap, f.get_f32_or(p + "attn_logit_softcapping", 0.0f));
  OX_ASSIGN_OR_RETURN(hp.final_softcap, f.get_f32_or(p + "final_logit_softcapping", 0.0f));
  if (!(hp.attn_softcap >= 0.0f) || !(hp.final_softcap >= 0.0f) || !(hp.rope_freq_base_swa >= 0.0f) ||
      !(hp.rope_freq_base > 0.0f) || !(hp.rms_eps >= 0.0f) || !(hp.norm_eps >= 0.0f)) {
    return error(ErrorCode::kInvalidFile,
                 strfmt("%s: negative or NaN rope base, epsilon or soft-cap", f.name().c_str()));
  }

  // Vocabulary size: the key if present, else the token list's length.
  if (f.find(p + "vocab_size") != nullptr) {
    OX_ASSIGN_OR_RETURN(hp.n_vocab, read_count(f, p + "vocab_size", true, 0));
  } else if (const gguf::Value* tokens = f.find("tokenizer.ggml.tokens"); tokens != nullptr) {
    hp.n_vocab = static_cast<int>(tokens->count);
  }
  return hp;
}

}  // namespace ox
