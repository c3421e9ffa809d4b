// The architectures this engine runs. Each one is a loader (GGUF tensors -> ModelWeights) and a
// forward function, in its own file; arch.cpp maps `general.architecture` to them.
#pragma once

#include "core/model/builder.h"

namespace ox {

Status load_llama(ModelBuilder& b);

}  // namespace ox
