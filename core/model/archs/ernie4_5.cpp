// ERNIE 4.5 (dense, 0.3B): llama's layout. llama.cpp loads an optional attn_output.bias but never
// adds it, so it is not read here either.
#include "core/model/arch_registry.h"

namespace ox::archs {

extern const ArchDef ernie4_5{
    .name = "ernie4_5",
    .spec = {.bias = {.qkv = Has::kOptional}},
};

}  // namespace ox::archs
