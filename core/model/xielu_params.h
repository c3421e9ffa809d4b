// Apertus' xIELU parameters: the GGUF's xielu.* keys (no architecture prefix) into each layer.
#pragma once

#include <vector>

#include "core/model/model.h"

namespace ox {

// xielu.alpha_n, xielu.alpha_p, xielu.beta, xielu.eps: each one value for every layer or an array
// of one per layer (llama.cpp's get_key_or_arr; required). Errors name the file and key.
Status read_xielu(const gguf::GgufFile& file, const HParams& hp, std::vector<LayerWeights>& layers);

}  // namespace ox
