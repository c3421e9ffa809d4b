// The architecture registry: one ArchDef per file in core/model/archs/ (CMake generates the list
// from the folder, so adding an architecture is adding a file). An ArchDef is data: the
// `general.architecture` name, the ArchSpec, an optional hook for what depends on the file, and a
// forward function only where the generic decoder cannot express the architecture.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/gguf/gguf.h"
#include "core/model/arch_spec.h"
#include "core/model/hparams.h"

namespace ox {

class Model;
struct ForwardState;
struct BatchToken;
struct PlannedTensor;

// A metadata key `oxidize synth` writes for the architecture ("<arch>." is prefixed), so its tiny
// models switch on every optional feature (a sliding window, soft-caps, ...).
struct SynthKey {
  const char* key = nullptr;  // nullptr ends the list
  enum Type : uint8_t { kU32, kF32, kBool, kU32Layers, kU32List, kStr, kStrList } type = kU32;
  double value = 0;
  // kU32Layers: an array of one u32 per layer, cycling through this list ("0,2": layer 0 gets 0,
  // layer 1 gets 2, layer 2 gets 0, ...): per-layer keys such as a hybrid's head_count_kv.
  // kU32List: an array of exactly these values (qwen35's rope.dimension_sections).
  // kStrList: an array of these comma-separated strings (a reranker's classifier.output_labels).
  // kStr's value, or kU32Layers / kU32List / kStrList's comma-separated values.
  const char* text = nullptr;
  bool global = false;        // written as `key`, without the "<arch>." prefix (apertus' xielu.*)
  // nullptr: written by every variant of the parity model; "NAME": only by `synth --variant NAME`;
  // "!NAME": by every variant but NAME (a second layout, e.g. deepseek2's older attn_kv_b files).
  const char* variant = nullptr;
};

struct ArchDef {
  const char* name;  // general.architecture
  ArchSpec spec;
  // Adjusts the model's copy of the spec to the file (a layout only some files use, a key only
  // this architecture reads). Errors name the file and key.
  Status (*configure)(const gguf::GgufFile& file, const HParams& hp, ArchSpec& spec) = nullptr;
  // nullptr: the generic decoder (decoder.cpp).
  void (*forward)(const Model&, ForwardState&, std::span<const BatchToken>, float*) = nullptr;
  // The architecture's own tensor plan (tensor_plan.h) where the spec's switches cannot say it
  // (per-layer shapes); nullptr: plan_tensors' generic one.
  void (*plan)(const ArchSpec&, const HParams&, std::vector<PlannedTensor>&) = nullptr;
  SynthKey synth_keys[28] = {};
  // Where llama.cpp reads a key differently by shape (deepseek2 ignores q_lora_rank at its "lite"
  // layer counts): run on what read_hparams read, and on what `oxidize synth` will declare.
  void (*fix_hparams)(HParams& hp) = nullptr;
};

// Every registered architecture, sorted by name.
std::span<const ArchDef* const> all_archs();
const ArchDef* find_arch(std::string_view name);
// "falcon, gemma, ...": for error messages.
std::string arch_names();
// Whether llama.cpp v0.5.0 has this `general.architecture` (llama_cpp_archs.cpp).
bool known_to_llama_cpp(std::string_view arch);
// Whether llama.cpp v0.5.0 knows only the name and refuses to load the model too (gptj).
bool llama_cpp_name_only(std::string_view arch);
// Why an architecture llama.cpp runs is out of this engine's scope, where that is decided (t5's
// decoder); empty for the others, which are only not done yet.
std::string_view out_of_scope_reason(std::string_view arch);

}  // namespace ox
