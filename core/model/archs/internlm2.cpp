// InternLM2: llama's layout once converted (convert_hf_to_gguf splits InternLM2's interleaved
// wqkv into attn_q / attn_k / attn_v, so the GGUF holds llama's q/k/v); the output projection is
// required (never tied).
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef internlm2{
    .name = "internlm2",
    .spec = {.bias = {.qkv = Has::kOptional}, .output = Has::kYes},
};

}  // namespace ox::archs
