// The tiny parity models of tests/arch: `oxidize synth --arch A` in F32 (tiny-arch: 2 layers, n_embd
// 256, stories260K's vocabulary) written to a temporary file, and the logits of a short prompt.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/base/thread_pool.h"
#include "core/model/model.h"
#include "core/tools/synth.h"
#include "kernels/kernels.h"
#include "tests/support/shared_data.h"

namespace ox::test {

// The path of `oxidize synth --arch arch [--variant variant]` (tag names the file).
inline std::string synth_tiny_arch(const std::string& arch, const std::string& variant, const std::string& tag) {
  SynthOptions o;
  o.arch = arch;
  o.shape = "tiny-arch";
  o.variant = variant;
  o.weight_std = 0.08f;
  o.vocab_path = shared_path("models/stories260K.gguf");
  o.out_path = testing::TempDir() + "oxidize_" + tag + "_" + arch + "_" + variant + ".gguf";
  const Status st = synth_gguf(o);
  EXPECT_TRUE(st.is_ok()) << arch << ": " << st.message();
  return o.out_path;
}

// Every position's logits of a five-token prompt, on the best kernels.
inline std::vector<float> prompt_logits(const Model& m) {
  const std::vector<int32_t> prompt = {1, 403, 407, 261, 378};
  ThreadPool pool(2);
  auto st = m.new_state(16, 8, &kernels::best_kernels(), &pool, DType::F16, DType::F16, 1);
  EXPECT_TRUE(st.ok()) << st.status().message();
  std::vector<float> out(prompt.size() * static_cast<size_t>(m.hparams().n_vocab));
  if (st.ok()) m.forward(*st.value(), prompt, 0, true, out.data());
  return out;
}

}  // namespace ox::test
