// XVERSE: llama's layout with a required output projection.
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef xverse{
    .name = "xverse",
    .spec = {.bias = {.qkv = Has::kOptional}, .output = Has::kYes},
};

}  // namespace ox::archs
