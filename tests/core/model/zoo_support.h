// What the model tests share: loading a model of the shared data folder ("zoo/models/llama.gguf")
// with a test failure naming the problem, and the (architecture, kernel table) parameter that the
// zoo tests run over, with its test-name spelling ("mixtral_moe_avx2").
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <memory>
#include <string>
#include <tuple>

#include "core/model/model.h"
#include "kernels/kernels.h"
#include "tests/support/shared_data.h"

namespace ox::test {

inline std::shared_ptr<const Model> load_shared_model(const std::string& relative) {
  Result<std::unique_ptr<gguf::GgufFile>> file = gguf::GgufFile::open(shared_path(relative));
  EXPECT_TRUE(file.ok()) << file.status().message();
  if (!file.ok()) return nullptr;
  Result<std::shared_ptr<const Model>> model =
      Model::load(std::shared_ptr<const gguf::GgufFile>(std::move(file).value()));
  EXPECT_TRUE(model.ok()) << model.status().message();
  return model.ok() ? model.value() : nullptr;
}

using ArchTable = std::tuple<const char*, const kernels::KernelTable*>;

inline std::string arch_table_name(const ::testing::TestParamInfo<ArchTable>& info) {
  std::string name = std::string(std::get<0>(info.param)) + "_" + std::get<1>(info.param)->isa;
  for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

}  // namespace ox::test
