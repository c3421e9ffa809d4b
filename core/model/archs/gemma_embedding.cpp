// gemma-embedding (EmbeddingGemma): Gemma 3's blocks as an encoder: no token attends causally,
// and the local layers' window reaches sliding_window / 2 positions either way (llama.cpp's
// symmetric window); the rope base of local layers is rope.freq_base_swa where the file has it.
// The sentence-transformers projections that some files add (dense_2, dense_3) are not run: such a
// file is refused by name rather than embedded without them.
#include "core/model/arch_registry.h"

namespace ox::archs {
namespace {

Status refuse_dense_modules(const gguf::GgufFile& file, const HParams&, ArchSpec&) {
  for (const char* name : {"dense_2.weight", "dense_3.weight"}) {
    if (file.find_tensor(name) != nullptr) {
      return error(ErrorCode::kUnsupported, strfmt("%s: tensor '%s' (a sentence-transformers dense module) is not "
                                                   "supported: convert without --sentence-transformers-dense-modules",
                                                   file.name().c_str(), name));
    }
  }
  return Status::ok();
}

}  // namespace

extern const ArchDef gemma_embedding{
    .name = "gemma-embedding",
    .spec = {.rope_style = RopeStyle::kNeox,
             .ffn = FfnKind::kGeGlu,
             .output = Has::kNo,
             .qk_norm = true,
             .post_norms = true,
             .embd_scale = true,
             .scale_q_first = true,
             .swa_pattern = 6,
             .swa_symmetric = true,
             .causal_attention = false},
    .configure = refuse_dense_modules,
    .synth_keys = {{"attention.sliding_window", SynthKey::kU32, 8},
                   {"attention.sliding_window_pattern", SynthKey::kU32, 2},
                   {"pooling_type", SynthKey::kU32, 1}},  // mean, as EmbeddingGemma's files say
};

}  // namespace ox::archs
