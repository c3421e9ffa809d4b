// libFuzzer target: GGUF bytes -> GgufFile::parse, every metadata value read back and described,
// Tokenizer::from_gguf with a short encode/decode, then LoadedModel::from_bytes (architecture,
// tensor shapes, tokenizer, in-place weight relayout) and, for files that load, a short tokenize,
// the chat template and a two-token forward pass.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>

#include "core/gguf/describe.h"
#include "core/gguf/gguf.h"
#include "core/session/session.h"
#include "core/tokenizer/tokenizer.h"
#include "tests/fuzz/fuzz_support.h"

namespace ox {
namespace {

void read_metadata(const gguf::GgufFile& f) {
  for (const auto& [key, v] : f.metadata()) {
    OX_CHECK(f.find(key) != nullptr);
    (void)f.get_u64(key);
    (void)f.get_i64(key);
    (void)f.get_f32(key);
    (void)f.get_bool(key);
    (void)f.get_string(key);
    (void)f.get_string_array(key);
    (void)f.get_array(key);
    (void)gguf::describe_value(v);
    if (v.type == gguf::ValueType::ARRAY && v.count > 0 && v.raw != nullptr) {
      // Numeric arrays: the first and last element (the accessors copy from unaligned bytes).
      for (uint64_t k : {uint64_t{0}, v.count - 1}) {
        (void)v.number_at(k);
        if (v.elem_type != gguf::ValueType::FLOAT32 && v.elem_type != gguf::ValueType::FLOAT64) (void)v.integer_at(k);
        if (v.elem_type == gguf::ValueType::FLOAT32) (void)v.f32_at(k);
      }
    }
  }
  for (const gguf::TensorInfo& t : f.tensors()) {
    OX_CHECK(f.find_tensor(t.name) == &t);
    OX_CHECK(t.data >= f.bytes().data() && t.data + t.n_bytes <= f.bytes().data() + f.bytes().size());
    (void)t.rows();
  }
  (void)gguf::describe_gguf(f);
}

// Encode and decode a fixed text (normalisation rules, merges and special tokens all come from the file).
void use_tokenizer(const tok::Tokenizer& t) {
  Result<std::vector<int32_t>> ids = t.encode("Hello world! AAa  <s> [CLS] <|im_start|>\n\xC3\xA9", true, true);
  OX_CHECK(ids.ok());
  for (int32_t id : *ids) OX_CHECK(id >= 0 && id < t.n_vocab());
  OX_CHECK(t.decode(*ids, true).ok());
}

void use_model(const std::shared_ptr<const LoadedModel>& model) {
  (void)model->apply_chat_template(R"([{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}])",
                                   true);
  SessionOptions options;
  options.n_ctx = 8;
  options.n_batch = 4;
  Result<std::unique_ptr<Session>> session = Session::create(model, options);
  if (!session.ok()) return;
  const int32_t prompt[] = {0, model->hparams().n_vocab - 1};
  if ((*session)->eval(prompt).is_ok()) OX_CHECK((*session)->logits().size() == size_t(model->hparams().n_vocab));
}

}  // namespace
}  // namespace ox

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ox;
  Result<std::unique_ptr<gguf::GgufFile>> file = gguf::GgufFile::parse(std::span<const uint8_t>(data, size), "fuzz.gguf");
  if (!file.ok()) return 0;
  read_metadata(**file);
  // The vocabulary alone (a file whose model part is broken still reaches it).
  if (Result<std::unique_ptr<tok::Tokenizer>> t = tok::Tokenizer::from_gguf(**file); t.ok()) use_tokenizer(**t);

  // A writable, 64-byte aligned copy (a mapped file is page aligned): the loader may relayout in place.
  // Exactly `size` bytes, so ASan sees a read past the end.
  void* raw = nullptr;
  OX_CHECK(posix_memalign(&raw, 64, size == 0 ? 1 : size) == 0);
  std::shared_ptr<uint8_t> copy(static_cast<uint8_t*>(raw), std::free);
  if (size > 0) std::memcpy(copy.get(), data, size);
  Result<std::shared_ptr<const LoadedModel>> model =
      LoadedModel::from_bytes(std::span<const uint8_t>(copy.get(), size), "fuzz.gguf", copy, /*writable=*/true);
  if (model.ok()) use_model(*model);
  return 0;
}
