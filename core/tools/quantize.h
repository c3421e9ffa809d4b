// Model quantization in llama-quantize's manner: a preset (Q4_K_M, Q8_0, ...) names a default
// weight type plus llama.cpp's rules for which tensors get more bits, which stay as they are
// (1-D, norms) and what to fall back to when a row length does not fit the block size.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/base/thread_pool.h"
#include "core/gguf/kv_override.h"
#include "core/quant/dtype.h"
#include "core/quant/traits.h"
#include "core/tools/tensor_pattern.h"

namespace ox {

namespace gguf {
class GgufFile;
}

// Tensor-name rules match parts of names ("attn_v", "ffn_down").
inline bool contains_part(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }
// A block format (what needs --allow-requantize and takes an importance matrix), not F32/F16/BF16.
inline bool is_quantized(DType t) { return dtype_facts(t).block_size > 1; }

// One preset as llama-quantize names it.
struct QuantPreset {
  const char* name;       // "Q4_K_M"
  DType default_type;     // type of the 2-D weights no rule singles out
  uint32_t llama_ftype;   // general.file_type: llama.cpp's LLAMA_FTYPE_* number
  // COPY: every tensor keeps its type and bytes; general.file_type is the input's
  // (llama_model_quantize_params.only_copy).
  bool only_copy = false;
};

// Every preset quantize_gguf accepts; find_quant_preset matches names case-insensitively.
const std::vector<QuantPreset>& quant_presets();
const QuantPreset* find_quant_preset(std::string_view name);

// The LLAMA_FTYPE_* llama.cpp's model loader guesses from a file's most common tensor type (without
// its guessed flag, 1024): Q3_K..Q5_K give their _M mixes, a type it has no ftype for ALL_F32.
uint32_t llama_ftype_guessed_from(DType most_common);
constexpr uint32_t kLlamaFtypeGuessed = 1024;  // LLAMA_FTYPE_GUESSED

// The model facts the type rules look at (from GGUF metadata and the tensor list).
struct QuantModelFacts {
  std::string arch;             // general.architecture
  uint32_t n_layer = 0;         // {arch}.block_count
  uint32_t n_head = 0;          // {arch}.attention.head_count (layer 0)
  uint32_t n_head_kv = 0;       // {arch}.attention.head_count_kv (defaults to n_head)
  uint32_t n_expert = 0;        // {arch}.expert_count
  bool has_output = false;      // an output.weight exists (else token_embd is tied to the output)
  uint32_t n_attention_wv = 0;  // tensors named *attn_v.weight / *attn_qkv.weight / *attn_kv_b.weight
};

// The facts of a model file (arrays of per-layer counts read at layer 0).
Result<QuantModelFacts> read_quant_model_facts(const gguf::GgufFile& file);

// What llama-quantize's flags change in the type choice (llama_model_quantize_params).
struct QuantTypeOptions {
  bool pure = false;             // --pure: no per-tensor mixes, the preset's type for every quantized tensor
  bool has_imatrix = false;      // an importance matrix is used (two rules differ: ffn_down of the first
                                 // eighth of the layers under Q4_0/Q5_0 and IQ4_NL/IQ4_XS)
  bool quantize_output = true;   // false: --leave-output-tensor
  std::optional<DType> output_type;      // --output-tensor-type
  std::optional<DType> token_embd_type;  // --token-embedding-type
  // --tensor-type PATTERN=TYPE, in the order given: the first pattern found in a quantized tensor's
  // name sets its type in place of the preset's rules (row-length fallbacks still apply).
  std::vector<TensorTypeOverride> tensor_types;
};

// A model's tensor types, asked for in file order, as llama.cpp's quantize state gives them. Its
// attn_v and (dense) ffn counters skip the tensors a --tensor-type pattern named, so the rules see
// the layers after such a tensor one lower than their number: llama-quantize's behaviour, kept so
// that the same flags give the same file.
class QuantTypePlan {
 public:
  QuantTypePlan() = default;  // (for Result) holds no preset: only create() gives a usable plan
  // Fails on a --tensor-type pattern that does not compile.
  static Result<QuantTypePlan> create(const QuantPreset& preset, const QuantModelFacts& facts,
                                      const QuantTypeOptions& options);
  struct Choice {
    DType type = DType::F32;
    bool manual = false;  // a --tensor-type pattern chose it
  };
  // The next tensor's type (current type `current`, GGUF dims, dims[0] = row length).
  Choice next(std::string_view name, std::span<const uint64_t> dims, DType current);

 private:
  QuantTypePlan(const QuantPreset& preset, const QuantModelFacts& facts, const QuantTypeOptions& options)
      : preset_(&preset), facts_(facts), options_(options) {}
  const QuantPreset* preset_ = nullptr;
  QuantModelFacts facts_;
  QuantTypeOptions options_;
  std::vector<TensorPattern> patterns_;  // options_.tensor_types, compiled
  uint32_t manual_attn_v_ = 0, manual_ffn_down_ = 0, manual_ffn_gate_ = 0, manual_ffn_up_ = 0;
};

// The type llama.cpp's rules give one tensor (current type `current`, GGUF dims, dims[0] = row
// length) under `preset`. Tensors the rules do not quantize keep `current`; a row length that
// fits neither the type nor its fallback gets F16. The two explicit types are taken as given.
// One tensor alone: options.tensor_types must be valid patterns (a QuantTypePlan checks them).
DType quant_tensor_type(const QuantPreset& preset, const QuantModelFacts& facts, std::string_view name,
                        std::span<const uint64_t> dims, DType current, const QuantTypeOptions& options = {});

// ox::quantize_rows' signature (core/quant/traits.h): what quantize_gguf calls for each run of rows.
using QuantizeRowsHook = void (*)(DType type, const float* x, void* y, int64_t n_rows, int64_t n_per_row,
                                  const float* importance);

// True where llama-quantize refuses to quantize tensor `name` to `type` without an importance
// matrix (llama.cpp's tensor_requires_imatrix: the 1- to 2-bit i-quants and IQ3_XXS, except for
// token_embd / output, which a preset never gives those types).
bool quant_needs_importance(std::string_view name, DType type);

// Converts n_rows rows of n_per_row elements from `src_type` (F32, F16, BF16, or any type with a
// dequantizer) to `dst_type`, rows split over n_threads threads. `importance`, where not null, holds
// n_per_row weights for each run of rows_per_importance rows (one per expert matrix of a 3-D tensor).
void convert_rows(DType src_type, const uint8_t* src, DType dst_type, uint8_t* dst, int64_t n_rows,
                  int64_t n_per_row, int n_threads, const float* importance = nullptr,
                  int64_t rows_per_importance = 0, QuantizeRowsHook quantize = quantize_rows);

struct QuantizeOptions {
  int n_threads = 0;                          // <= 0: every core
  std::string imatrix_path;                   // --imatrix (empty: none)
  std::vector<std::string> include_weights;   // --include-weights: use the imatrix only for names containing one
  std::vector<std::string> exclude_weights;   // --exclude-weights: never for names containing one
  bool allow_requantize = false;              // without it an already quantized tensor is not converted
  QuantTypeOptions types;                     // has_imatrix is set from the imatrix
  bool dry_run = false;                       // --dry-run: types and sizes only; nothing is written
  // --override-kv KEY=TYPE:VALUE, in order: each set in the output's metadata after the input's keys,
  // general.file_type and general.quantization_version (replacing a key of the same name), as
  // llama-quantize sets them; the last of one key wins.
  std::vector<gguf::KvOverride> override_kv;
  // --prune-layers: the tensors of these layers (blk.N.) are left out, the later layers renumbered
  // down, and {arch}.block_count lowered, as llama-quantize does; per-layer metadata arrays are kept
  // as they are (llama.cpp's behaviour too). Ids past the last layer, or every layer, are refused.
  std::vector<uint32_t> prune_layers;
  // --keep-split: one output file per input shard, as llama-quantize writes them: OUT (less a final
  // ".gguf") named as shard i of N (split.h), each with the input shard's tensors, in its order, and
  // split.no / split.count / split.tensors.count where N > 1; the first holds the metadata. Without
  // it a split model is written as one file.
  bool keep_split = false;
  // --max-buffer-size: at most about this many bytes (source rows, their float copy and the
  // converted rows, as llama-quantize counts them) are held while converting one tensor, which is
  // done in slabs of whole rows; 0: llama-quantize's default, 8 GiB. The output does not depend on it.
  uint64_t max_buffer_bytes = 0;
  // The row quantizer and the "needs an importance matrix" fact (ox::quantize_rows and
  // quant_traits(t).needs_importance); tests substitute ones that record what they are given.
  QuantizeRowsHook quantize = quantize_rows;
  bool (*needs_importance)(DType type) = nullptr;  // null: quant_traits(type).needs_importance
};

// One tensor done, in llama-quantize's progress-line terms.
struct QuantizeTensorEvent {
  size_t index = 0;  // 0-based
  size_t count = 0;
  std::string_view name;
  std::span<const uint64_t> dims;
  DType from = DType::F32, to = DType::F32;
  uint64_t bytes_in = 0, bytes_out = 0;
  bool importance = false;  // an imatrix entry was used for it
};

struct QuantizeStats {
  uint64_t bytes_in = 0, bytes_out = 0;  // tensor data of the model before and after
  uint64_t n_elements = 0;               // of every tensor (bits per weight = bytes * 8 / n_elements)
  size_t n_imatrix_entries = 0;          // entries in use after --include/--exclude-weights
  // Dry run only: a tensor would need an importance matrix that was not given (a real run refuses).
  std::string needs_imatrix;             // the first such tensor's name
  std::vector<std::string> out_paths;    // the files written (several under keep_split)
};

// Reads a GGUF and writes it quantized under `preset`: metadata copied (general.file_type and
// general.quantization_version set, split.* dropped, quantize.imatrix.* added with an imatrix),
// tensors in llama-quantize's order (by layer, then by name; by shard and place under keep_split).
// Errors, before anything is written: an unknown preset, a tensor already quantized without
// allow_requantize, an imatrix for another model (no entry names a tensor, or an entry's size
// differs from its tensor's), a type that needs an importance matrix without one, an output file
// that is an input shard, a keep_split shard that pruning leaves empty. On error the partial
// output files are removed. A dry run (out_path may be empty) makes every check
// but the importance-matrix one, which it reports in QuantizeStats::needs_imatrix.
Result<QuantizeStats> quantize_gguf(const std::string& in_path, const std::string& out_path, std::string_view preset,
                                    const QuantizeOptions& options,
                                    FunctionRef<void(const QuantizeTensorEvent&)> on_tensor);
Status quantize_gguf(const std::string& in_path, const std::string& out_path, std::string_view preset,
                     int n_threads);

}  // namespace ox
