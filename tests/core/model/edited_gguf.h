// A model file rewritten in memory for a loader test: its metadata keys and tensors filtered, keys
// added, then parsed and loaded, so a test can say what a file lacks or declares otherwise.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/gguf/writer.h"
#include "core/model/model.h"

namespace ox::test {

// The file at `path` with the keys keep_key rejects left out, add's keys appended and the tensors
// keep_tensor rejects left out, loaded.
inline Result<std::shared_ptr<const Model>> load_edited_gguf(const std::string& path,
                                                             const std::function<bool(const std::string&)>& keep_key,
                                                             const std::function<void(gguf::GgufWriter&)>& add,
                                                             const std::function<bool(const std::string&)>& keep_tensor) {
  Result<std::unique_ptr<gguf::GgufFile>> src = gguf::GgufFile::open(path);
  EXPECT_TRUE(src.ok()) << src.status().message();
  if (!src.ok()) return src.status();
  gguf::GgufWriter w;
  for (const auto& [key, value] : src.value()->metadata()) {
    if (keep_key(key)) {
      EXPECT_TRUE(w.add(key, gguf::encode_value(value)).is_ok()) << key;
    }
  }
  add(w);
  for (const gguf::TensorInfo& t : src.value()->tensors()) {
    if (!keep_tensor(t.name)) continue;
    EXPECT_TRUE(w.add_tensor(t.name, t.dims, t.type, std::vector<uint8_t>(t.data, t.data + t.n_bytes)).is_ok()) << t.name;
  }
  Result<std::vector<uint8_t>> bytes = w.to_bytes();
  EXPECT_TRUE(bytes.ok());
  if (!bytes.ok()) return bytes.status();
  auto owned = std::make_shared<std::vector<uint8_t>>(std::move(bytes).value());
  Result<std::unique_ptr<gguf::GgufFile>> file = gguf::GgufFile::parse(*owned, "edited.gguf", owned);
  EXPECT_TRUE(file.ok()) << file.status().message();
  if (!file.ok()) return file.status();
  return Model::load(std::shared_ptr<const gguf::GgufFile>(std::move(file).value()));
}

}  // namespace ox::test
