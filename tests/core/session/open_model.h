// The session tests' way to open a model from the shared data: a gtest failure (and nullptr)
// naming the problem when it does not load.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/session/session.h"
#include "tests/support/shared_data.h"

namespace ox::test {

// relative: a path under the shared data folder ("models/stories260K.gguf").
inline std::shared_ptr<const LoadedModel> open_shared_model(const std::string& relative) {
  Result<std::shared_ptr<const LoadedModel>> model = LoadedModel::open(shared_path(relative));
  EXPECT_TRUE(model.ok()) << model.status().message();
  return model.ok() ? model.value() : nullptr;
}

}  // namespace ox::test
