// read_hparams: GGUF keys -> HParams, with the defaults llama.cpp applies when a key is absent.
#include "core/model/hparams.h"

#include <algorithm>
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

// attention.head_count_kv: one count, or one per layer (hybrids: 0 on layers without attention,
// recorded in kv_free_layer); the largest count sizes the KV cache. Absent: n_head.
Result<int> read_head_count_kv(const gguf::GgufFile& f, const std::string& key, HParams& hp) {
  const gguf::Value* v = f.find(key);
  if (v == nullptr || v->type != gguf::ValueType::ARRAY) return read_count(f, key, false, hp.n_head);
  gguf::Value elem;
  elem.type = v->elem_type;
  if (v->count != static_cast<uint64_t>(hp.n_layer) || !elem.is_integer()) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: '%s' holds %llu values for %d layers (integers expected)", f.name().c_str(),
                                                 key.c_str(), static_cast<unsigned long long>(v->count), hp.n_layer));
  }
  int largest = 0;
  hp.kv_free_layer.assign(static_cast<size_t>(hp.n_layer), false);
  hp.n_head_kv_layer.assign(static_cast<size_t>(hp.n_layer), 0);
  for (uint64_t l = 0; l < v->count; ++l) {
    const int64_t n = v->integer_at(l);
    if (n < 0 || n > (1 << 20)) {
      return error(ErrorCode::kInvalidFile, strfmt("%s: '%s'[%llu] = %lld is out of range", f.name().c_str(),
                                                   key.c_str(), static_cast<unsigned long long>(l),
                                                   static_cast<long long>(n)));
    }
    hp.kv_free_layer[static_cast<size_t>(l)] = n == 0;
    hp.n_head_kv_layer[static_cast<size_t>(l)] = static_cast<int>(n);
    largest = std::max(largest, static_cast<int>(n));
  }
  return largest > 0 ? largest : hp.n_head;  // no attention layer: the count sizes nothing that is used
}

// A count given once or per layer (feed_forward_length of gemma4): the per-layer values into
// `layers` (left empty for one count), the largest returned.
Result<int> read_count_or_layers(const gguf::GgufFile& f, const std::string& key, bool required, int n_layer,
                                 std::vector<int>& layers) {
  const gguf::Value* v = f.find(key);
  if (v == nullptr || v->type != gguf::ValueType::ARRAY) return read_count(f, key, required, 0);
  gguf::Value elem;
  elem.type = v->elem_type;
  if (v->count != static_cast<uint64_t>(n_layer) || !elem.is_integer()) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: '%s' holds %llu values for %d layers (integers expected)",
                                                 f.name().c_str(), key.c_str(), static_cast<unsigned long long>(v->count),
                                                 n_layer));
  }
  int largest = 0;
  for (uint64_t l = 0; l < v->count; ++l) {
    const int64_t n = v->integer_at(l);
    if (n <= 0 || n > (1 << 30)) {
      return error(ErrorCode::kInvalidFile, strfmt("%s: '%s'[%llu] = %lld is out of range", f.name().c_str(), key.c_str(),
                                                   static_cast<unsigned long long>(l), static_cast<long long>(n)));
    }
    layers.push_back(static_cast<int>(n));
    largest = std::max(largest, static_cast<int>(n));
  }
  return largest;
}

// attention.sliding_window_pattern: a period (gemma3), or one flag per layer (gemma4: bools or
// integers, as llama.cpp's get_arr takes them) into hp.swa_layers.
Status read_swa_pattern(const gguf::GgufFile& f, const std::string& key, HParams& hp) {
  const gguf::Value* v = f.find(key);
  if (v == nullptr || v->type != gguf::ValueType::ARRAY) {
    OX_ASSIGN_OR_RETURN(hp.swa_pattern, read_count(f, key, false, 0));
    return Status::ok();
  }
  gguf::Value elem;
  elem.type = v->elem_type;
  if (v->count != static_cast<uint64_t>(hp.n_layer) || !(elem.is_integer() || elem.type == gguf::ValueType::BOOL)) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: '%s' holds %llu values for %d layers (one flag per layer expected)",
                                                 f.name().c_str(), key.c_str(), static_cast<unsigned long long>(v->count),
                                                 hp.n_layer));
  }
  for (uint64_t l = 0; l < v->count; ++l) hp.swa_layers.push_back(v->integer_at(l) != 0);
  return Status::ok();
}

// <arch>.ssm.*, shortconv.*, RWKV's and MLA's keys: optional here, checked by the architectures that use them.
Status read_ssm(const gguf::GgufFile& f, const std::string& p, HParams& hp) {
  OX_ASSIGN_OR_RETURN(hp.ssm_d_conv, read_count(f, p + "ssm.conv_kernel", false, 0));
  OX_ASSIGN_OR_RETURN(hp.ssm_d_inner, read_count(f, p + "ssm.inner_size", false, 0));
  OX_ASSIGN_OR_RETURN(hp.ssm_d_state, read_count(f, p + "ssm.state_size", false, 0));
  OX_ASSIGN_OR_RETURN(hp.ssm_dt_rank, read_count(f, p + "ssm.time_step_rank", false, 0));
  OX_ASSIGN_OR_RETURN(hp.ssm_n_group, read_count(f, p + "ssm.group_count", false, 0));
  OX_ASSIGN_OR_RETURN(hp.shortconv_l_cache, read_count(f, p + "shortconv.l_cache", false, 0));
  OX_ASSIGN_OR_RETURN(hp.wkv_head_size, read_count(f, p + "wkv.head_size", false, 0));
  OX_ASSIGN_OR_RETURN(hp.n_lora_decay, read_count(f, p + "attention.decay_lora_rank", false, 0));
  OX_ASSIGN_OR_RETURN(hp.n_lora_iclr, read_count(f, p + "attention.iclr_lora_rank", false, 0));
  OX_ASSIGN_OR_RETURN(hp.n_lora_value_res_mix, read_count(f, p + "attention.value_residual_mix_lora_rank", false, 0));
  OX_ASSIGN_OR_RETURN(hp.n_lora_gate, read_count(f, p + "attention.gate_lora_rank", false, 0));
  OX_ASSIGN_OR_RETURN(hp.token_shift_count, read_count(f, p + "token_shift_count", false, 0));
  OX_ASSIGN_OR_RETURN(hp.full_attention_interval, read_count(f, p + "full_attention_interval", false, 0));
  OX_ASSIGN_OR_RETURN(hp.n_lora_q, read_count(f, p + "attention.q_lora_rank", false, 0));
  OX_ASSIGN_OR_RETURN(hp.n_lora_kv, read_count(f, p + "attention.kv_lora_rank", false, 0));
  OX_ASSIGN_OR_RETURN(hp.head_dim_k_mla, read_count(f, p + "attention.key_length_mla", false, 0));
  OX_ASSIGN_OR_RETURN(hp.head_dim_v_mla, read_count(f, p + "attention.value_length_mla", false, 0));
  return Status::ok();
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

// The keys embedding models add (pooling, causal attention, classifier, token types).
Status read_embedding_keys(const gguf::GgufFile& f, const std::string& p, HParams& hp) {
  if (f.find(p + "pooling_type") != nullptr) {
    OX_ASSIGN_OR_RETURN(hp.pooling_type, read_count(f, p + "pooling_type", true, 0));
    if (hp.pooling_type > 4) {
      return error(ErrorCode::kInvalidFile, strfmt("%s: '%spooling_type' is %d, not one of 0..4 (none, mean, cls, "
                                                   "last, rank)", f.name().c_str(), p.c_str(), hp.pooling_type));
    }
  }
  OX_ASSIGN_OR_RETURN(hp.causal_attn, f.get_bool_or(p + "attention.causal", true));
  if (const gguf::Value* labels = f.find(p + "classifier.output_labels"); labels != nullptr) {
    if (labels->type != gguf::ValueType::ARRAY || labels->count == 0 || labels->count > 4096) {
      return error(ErrorCode::kInvalidFile, strfmt("%s: '%sclassifier.output_labels' must be an array of 1..4096 "
                                                   "labels", f.name().c_str(), p.c_str()));
    }
    hp.n_cls_out = static_cast<int>(labels->count);
  }
  OX_ASSIGN_OR_RETURN(hp.n_token_types, read_count(f, "tokenizer.ggml.token_type_count", false, 0));
  return Status::ok();
}

// The trunk: n_layer without the multi-token-prediction blocks, and the per-layer values without theirs.
void drop_nextn_layers(HParams& hp) {
  hp.n_layer -= hp.n_layer_nextn;
  const size_t n = static_cast<size_t>(hp.n_layer);
  if (hp.kv_free_layer.size() > n) hp.kv_free_layer.resize(n);
  if (hp.n_head_kv_layer.size() > n) hp.n_head_kv_layer.resize(n);
  if (hp.n_ff_layer.size() > n) hp.n_ff_layer.resize(n);
  if (hp.swa_layers.size() > n) hp.swa_layers.resize(n);
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
  // An expert model may state only its experts' widths (Qwen3.5-MoE files have no
  // feed_forward_length, as llama.cpp allows): n_ff is 0 then, and dense layers are refused on load.
  const bool expert_widths = f.find(p + "expert_feed_forward_length") != nullptr;
  OX_ASSIGN_OR_RETURN(hp.n_ff, read_count_or_layers(f, p + "feed_forward_length", !expert_widths, hp.n_layer, hp.n_ff_layer));
  OX_ASSIGN_OR_RETURN(hp.n_head, read_count(f, p + "attention.head_count", true, 0));
  OX_ASSIGN_OR_RETURN(hp.n_head_kv, read_head_count_kv(f, p + "attention.head_count_kv", hp));
  OX_TRY(read_ssm(f, p, hp));
  // Pure state-space models (mamba) have no attention: head_count 0.
  const bool attention_free = hp.n_head == 0 && hp.n_head_kv == 0 && hp.ssm_d_inner > 0;
  if (attention_free) hp.n_head = hp.n_head_kv = 1;  // head sizes below stay defined; no KV cache is made
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
  // llama.cpp's n_layer(): block_count less the multi-token-prediction blocks, dropped at the end of
  // this function once the per-layer keys (one value per block) are read.
  OX_ASSIGN_OR_RETURN(hp.n_layer_nextn, read_count(f, p + "nextn_predict_layers", false, 0));
  if (hp.n_layer_nextn >= hp.n_layer) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: '%snextn_predict_layers' (%d) must be below '%sblock_count' (%d): "
                                                 "a file of multi-token-prediction blocks only has no model to run",
                                                 f.name().c_str(), p.c_str(), hp.n_layer_nextn, p.c_str(), hp.n_layer));
  }
  if (hp.n_head % hp.n_head_kv != 0) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: '%sattention.head_count' (%d) is not a multiple of "
                                                 "'%sattention.head_count_kv' (%d)",
                                                 f.name().c_str(), p.c_str(), hp.n_head, p.c_str(), hp.n_head_kv));
  }
  OX_ASSIGN_OR_RETURN(hp.head_dim_k, read_count(f, p + "attention.key_length", false, hp.n_embd / hp.n_head));
  OX_ASSIGN_OR_RETURN(hp.head_dim_v, read_count(f, p + "attention.value_length", false, hp.head_dim_k));
  OX_ASSIGN_OR_RETURN(hp.n_rot, read_count(f, p + "rope.dimension_count", false, hp.head_dim_k));
  OX_ASSIGN_OR_RETURN(hp.head_dim_k_swa, read_count(f, p + "attention.key_length_swa", false, hp.head_dim_k));
  OX_ASSIGN_OR_RETURN(hp.head_dim_v_swa, read_count(f, p + "attention.value_length_swa", false, hp.head_dim_v));
  OX_ASSIGN_OR_RETURN(hp.n_rot_swa, read_count(f, p + "rope.dimension_count_swa", false, hp.n_rot));
  if (hp.head_dim_k <= 0 || hp.head_dim_v <= 0 || hp.n_rot > hp.head_dim_k || hp.n_rot % 2 != 0 ||
      hp.head_dim_k_swa <= 0 || hp.head_dim_v_swa <= 0 || hp.n_rot_swa > hp.head_dim_k_swa || hp.n_rot_swa % 2 != 0) {
    return error(ErrorCode::kInvalidFile,
                 strfmt("%s: inconsistent head dimensions (key %d, value %d, rope %d; window layers: %d, %d, %d)",
                        f.name().c_str(), hp.head_dim_k, hp.head_dim_v, hp.n_rot, hp.head_dim_k_swa, hp.head_dim_v_swa,
                        hp.n_rot_swa));
  }
  OX_ASSIGN_OR_RETURN(hp.n_embd_per_layer, read_count(f, p + "embedding_length_per_layer_input", false, 0));
  OX_ASSIGN_OR_RETURN(hp.n_kv_shared_layers, read_count(f, p + "attention.shared_kv_layers", false, 0));
  if (hp.n_kv_shared_layers >= hp.n_layer) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: '%sattention.shared_kv_layers' (%d) must be below '%sblock_count' (%d)",
                                                 f.name().c_str(), p.c_str(), hp.n_kv_shared_layers, p.c_str(), hp.n_layer));
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
  OX_ASSIGN_OR_RETURN(hp.n_ff_exp, read_count(f, p + "expert_feed_forward_length", false, 0));
  OX_ASSIGN_OR_RETURN(hp.n_ff_shexp, read_count(f, p + "expert_shared_feed_forward_length", false, 0));
  OX_ASSIGN_OR_RETURN(hp.n_expert_shared, read_count(f, p + "expert_shared_count", false, 0));
  OX_ASSIGN_OR_RETURN(hp.n_layer_dense_lead, read_count(f, p + "leading_dense_block_count", false, 0));
  OX_ASSIGN_OR_RETURN(hp.n_expert_groups, read_count(f, p + "expert_group_count", false, 0));
  OX_ASSIGN_OR_RETURN(hp.n_group_used, read_count(f, p + "expert_group_used_count", false, 0));
  OX_ASSIGN_OR_RETURN(hp.n_moe_layer_step, read_count(f, p + "interleave_moe_layer_step", false, 0));
  OX_ASSIGN_OR_RETURN(hp.n_moe_every, read_count(f, p + "moe_every_n_layers", false, 0));
  if (hp.n_expert_groups > 1 && (hp.n_expert_groups > 64 || hp.n_expert % hp.n_expert_groups != 0 || hp.n_group_used < 1 ||
                                 hp.n_group_used >= hp.n_expert_groups)) {
    return error(ErrorCode::kInvalidFile,
                 strfmt("%s: '%sexpert_group_count' (%d, at most 64) must divide the %d experts and exceed "
                        "'%sexpert_group_used_count' (%d) > 0",
                        f.name().c_str(), p.c_str(), hp.n_expert_groups, hp.n_expert, p.c_str(), hp.n_group_used));
  }
  OX_ASSIGN_OR_RETURN(hp.n_swa, read_count(f, p + "attention.sliding_window", false, 0));
  OX_TRY(read_swa_pattern(f, p + "attention.sliding_window_pattern", hp));
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
  OX_TRY(read_embedding_keys(f, p, hp));
  drop_nextn_layers(hp);
  return hp;
}

}  // namespace ox
