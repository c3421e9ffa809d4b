// `oxidize archs`: the architecture registry (core/model/arch_registry.h) as a markdown table, one
// row per `general.architecture` this engine runs, with what its spec switches on.
#include <cstdio>
#include <string>

#include "core/model/arch_registry.h"
#include "native/commands.h"

namespace ox::cli {
namespace {

std::string features(const ArchSpec& s) {
  std::string f;
  auto add = [&](bool on, const char* what) {
    if (on) f += (f.empty() ? "" : ", ") + std::string(what);
  };
  add(s.bias.qkv != Has::kNo, s.bias.qkv == Has::kYes ? "qkv bias" : "optional qkv bias");
  add(s.mla, "latent attention (MLA)");
  add(s.fused_qkv, "fused qkv");
  add(s.fused_gate_up, "fused gate/up");
  add(s.qk_norm, "q/k norm");
  add(s.qk_norms.has != Has::kNo, s.qk_norms.has == Has::kYes ? "q/k norm" : "optional q/k norm");
  add(!s.norm_affine, "norms without weights");
  add(!s.pre_norms, "no pre-norms");
  add(s.embd_norm, "embedding norm");
  add(s.post_norms, "post norms");
  add(s.moe, "experts");
  add(s.moe && s.experts.shared != SharedFf::kNone, "shared experts");
  add(s.moe && s.experts.leading_dense, "leading dense layers");
  add(s.moe && s.experts.gate_up_either, "gate/up experts fused or apart");
  add(s.attn_sinks, "attention sinks");
  add(s.attn_chunk > 0, "chunked attention");
  add(s.nope_step > 0, "layers without rope");
  add(s.embd_scale, "embedding scale");
  add(s.softcaps, "soft-caps");
  add(s.swa_pattern > 0, "sliding window");
  add(s.rope_freqs != Has::kNo, "rope_freqs");
  add(!s.causal_attention, "non-causal (encoder)");
  add(s.token_types != Has::kNo, "token types");
  add(s.cls_head.any(), "classifier head");
  add(s.attn_norm_2 != Has::kNo, "second attention norm");
  add(s.nextn.on, "NextN blocks skipped");
  return f.empty() ? "-" : f;
}

const char* positions(const ArchSpec& s) {
  // Without rope: T5's relative bias, learned positions, ALiBi (bloom, jais), or ALiBi and optional
  // learned ones (mpt).
  if (!s.rope && s.rel_buckets > 0) return "relative bias";
  if (!s.rope) return s.position_embd == Has::kYes ? "learned" : s.position_embd == Has::kNo ? "ALiBi" : "ALiBi, learned";
  if (s.rope_swa_only) return "rope on window layers";
  return s.rope_style == RopeStyle::kNeox ? "rope (neox)" : "rope";
}

const char* ffn(const ArchSpec& s) {
  switch (s.ffn) {
    case FfnKind::kSwiGlu: return "SwiGLU";
    case FfnKind::kGeGlu: return "GeGLU";
    case FfnKind::kGelu: return "GELU";
    case FfnKind::kReluSqr: return "ReLU^2";
    case FfnKind::kXielu: return "xIELU";
    case FfnKind::kRelu: return "ReLU";
  }
  return "?";
}

const char* block(const ArchSpec& s) {
  switch (s.residual) {
    case Residual::kSequential: return "sequential";
    case Residual::kParallel: return "parallel";
    case Residual::kParallelTwoNorms: return "parallel, two norms";
    case Residual::kPostNorm: return "post-norm";
  }
  return "?";
}

}  // namespace

Status cmd_archs(Args& args) {
  const bool names_only = args.flag({"--names"});
  const bool generative = args.flag({"--generative"});
  OX_TRY(args.finish());
  if (generative && !names_only) return error(ErrorCode::kInvalidArgument, "archs: --generative goes with --names");
  if (names_only) {
    for (const ArchDef* a : all_archs()) {
      if (!generative || a->spec.causal_attention) std::printf("%s\n", a->name);
    }
    return Status::ok();
  }
  std::printf("| architecture | norm | positions | feed-forward | block | features | forward |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const ArchDef* a : all_archs()) {
    const ArchSpec& s = a->spec;
    std::printf("| %s | %s | %s | %s | %s | %s | %s |\n", a->name, s.norm == NormKind::kRms ? "RMSNorm" : "LayerNorm",
                positions(s), ffn(s), block(s), features(s).c_str(), a->forward != nullptr ? "own" : "generic");
  }
  return Status::ok();
}

}  // namespace ox::cli
