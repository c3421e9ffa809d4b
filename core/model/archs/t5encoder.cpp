// t5encoder (T5's encoder alone: sentence-t5, the text encoders of some diffusion models): pre-norm
// blocks with RMSNorms without biases, no positions in the embeddings but a learned bias per head and
// relative-position bucket on every attention score, scores not scaled by 1/sqrt(head_dim), GeGLU
// (T5 v1.1, flan-t5) or ReLU (the original T5, whose files have no ffn_gate), enc.output_norm last.
// The encoder-decoder `t5` (generation) is not run: model.cpp's refusal says so.
#include "core/model/arch_registry.h"

namespace ox::archs {
namespace {

// llama.cpp reads attention.relative_buckets_count as a required key; the bucket function needs at
// least 4 (2 per direction, of which 1 exact).
Status configure_t5encoder(const gguf::GgufFile& file, const HParams& hp, ArchSpec& s) {
  const std::string key = hp.arch + ".attention.relative_buckets_count";
  if (file.find(key) == nullptr) {
    return error(ErrorCode::kInvalidFile, strfmt("%s: missing metadata key '%s'", file.name().c_str(), key.c_str()));
  }
  OX_ASSIGN_OR_RETURN(const uint32_t n_buckets, file.get_u32(key));
  if (n_buckets < 4 || n_buckets > 4096) {
    return error(ErrorCode::kInvalidFile,
                 strfmt("%s: '%s' is %u: expected 4 to 4096 buckets", file.name().c_str(), key.c_str(), n_buckets));
  }
  s.rel_buckets = static_cast<int>(n_buckets);
  // As llama.cpp's build_ffn: gated GELU where the layer has ffn_gate, else ReLU (the original T5).
  if (file.find_tensor(tensor_name(Tn::kEncFfnGate, 0)) == nullptr) s.ffn = FfnKind::kRelu;
  return Status::ok();
}

}  // namespace

extern const ArchDef t5encoder{
    .name = "t5encoder",
    .spec = {.rope = false,
             .position_embd = Has::kNo,
             .ffn = FfnKind::kGeGlu,
             .output = Has::kNo,
             .qkv_either = false,
             .attn_scale = 1.0f,
             .output_norm = Tn::kEncOutputNorm,
             .causal_attention = false,
             .enc_tensors = true,
             .rel_buckets = 32},  // T5's; the file's count replaces it (configure)
    .configure = configure_t5encoder,
    // As many key/value heads as query heads (T5 has no grouped-query attention); no pooling_type,
    // as convert_hf_to_gguf writes none (llama.cpp then pools with none). attention.causal = false,
    // which converted files lack: without it llama.cpp's llama_decode (llama-embedding, its server)
    // masks T5's encoder causally, while llama_encode and this engine attend both ways (T5's own
    // definition); with it both engines agree.
    .synth_keys = {{"attention.head_count_kv", SynthKey::kU32, 4},
                   {"attention.relative_buckets_count", SynthKey::kU32, 32},
                   {"attention.causal", SynthKey::kBool, 0}},
};

}  // namespace ox::archs
