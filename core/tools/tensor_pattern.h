// llama-quantize's --tensor-type PATTERN=TYPE: a regular expression searched in each tensor name.
// llama.cpp compiles it with std::regex (ECMAScript), which throws on a bad pattern; we build
// without exceptions, so the pattern is a POSIX extended one (regcomp), whose errors come back as
// codes. The two agree on what such patterns use ("attn_q", "blk\.(0|1)\.ffn_down", "ffn_.*_exps",
// "[0-9]+"); the ECMAScript-only escapes that POSIX would read differently are refused by name.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "core/base/status.h"
#include "core/quant/dtype.h"

namespace ox {

struct TensorTypeOverride {
  std::string pattern;  // lower-cased, as llama-quantize stores it
  DType type = DType::F32;
};

// "PATTERN=TYPE" as llama-quantize reads it (the first '=' splits; the type is a GGUF type name,
// any case). The error quotes the text and says what is wrong with it.
Result<TensorTypeOverride> parse_tensor_type_override(std::string_view text);

// Where the layer number of the first "blk.N." in a tensor name is (llama.cpp's "blk\\.(\\d+)\\."
// searched anywhere): {position, length} of N's digits (at most 9), or {npos, 0}.
std::pair<size_t, size_t> block_number_at(std::string_view name);

// A compiled pattern: matches() is a search anywhere in the name, as std::regex_search.
class TensorPattern {
 public:
  static Result<TensorPattern> compile(std::string_view pattern);
  bool matches(std::string_view name) const;

 private:
  struct Compiled;
  std::shared_ptr<const Compiled> compiled_;  // shared: patterns are copied into per-run lists
};

}  // namespace ox
