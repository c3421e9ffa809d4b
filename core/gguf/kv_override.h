// llama.cpp's --override-kv KEY=TYPE:VALUE (TYPE: int, float, bool, str), parsed strictly: where
// llama.cpp's atol/atof would read "12x" as 12 or "-3" as 3, we refuse the text and say why.
#pragma once

#include <string>
#include <string_view>

#include "core/base/status.h"
#include "core/gguf/writer.h"

namespace ox::gguf {

struct KvOverride {
  std::string key;
  EncodedValue value;  // int: UINT32 (as llama-quantize writes it), float: FLOAT32, bool, str: STRING
};

// `flag` names the option in errors ("--override-kv").
Result<KvOverride> parse_kv_override(std::string_view text, std::string_view flag);

}  // namespace ox::gguf
