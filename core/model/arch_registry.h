// The architecture registry: one ArchDef per file in core/model/archs/ (CMake generates the list
// from the folder, so adding an architecture is adding a file). An ArchDef is data: the
// `general.architecture` name, the ArchSpec, an optional hook for what depends on the file, and a
// forward function only where the generic decoder cannot express the architecture.
#pragma once

#include <span>
#include <string_view>

#include "core/base/status.h"
#include "core/gguf/gguf.h"
#include "core/model/arch_spec.h"
#include "core/model/hparams.h"

namespace ox {

class Model;
struct ForwardState;
struct BatchToken;

// A metadata key `oxidize synth` writes for the architecture ("<arch>." is prefixed), so its tiny
// models switch on every optional feature (a sliding window, soft-caps, ...).
struct SynthKey {
  const char* key = nullptr;  // nullptr ends the list
  enum Type : uint8_t { kU32, kF32, kBool, kStr } type = kU32;
  double value = 0;
  const char* str = nullptr;  // kStr's value
  bool global = false;        // written as `key`, without the "<arch>." prefix (apertus' xielu.*)
};

struct ArchDef {
  const char* name;  // general.architecture
  ArchSpec spec;
  // Adjusts the model's copy of the spec to the file (a layout only some files use, a key only
  // this architecture reads). Errors name the file and key.
  Status (*configure)(const gguf::GgufFile& file, const HParams& hp, ArchSpec& spec) = nullptr;
  // nullptr: the generic decoder (decoder.cpp).
  void (*forward)(const Model&, ForwardState&, std::span<const BatchToken>, float*) = nullptr;
  SynthKey synth_keys[8] = {};
};

// Every registered architecture, sorted by name.
std::span<const ArchDef* const> all_archs();
const ArchDef* find_arch(std::string_view name);
// "falcon, gemma, ...": for error messages.
std::string arch_names();

}  // namespace ox
