// quantize_gguf with an importance matrix: each converted tensor's quantizer calls get its entry's
// importance (llama-quantize's sums / counts, per expert matrix for 3-D tensors), the
// quantize.imatrix.* keys llama-quantize writes, and the refusals: an imatrix of another model, a
// type that needs one without it. The quantizer is substituted by one that records its calls.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/gguf/gguf.h"
#include "core/tools/imatrix_file.h"
#include "core/tools/quantize.h"
#include "tests/support/shared_data.h"

namespace ox {
namespace {

struct Call {
  int64_t n_rows = 0, n_per_row = 0;
  std::vector<float> importance;  // empty: none
};
std::vector<Call> g_calls;  // what recording_quantizer saw (quantize_gguf runs with one thread here)
int64_t g_most_rows = 0;    // the most rows it was given at once

void recording_quantizer(DType type, const float* x, void* y, int64_t n_rows, int64_t n_per_row, const float* imp) {
  Call c{n_rows, n_per_row, {}};
  if (imp != nullptr) c.importance.assign(imp, imp + n_per_row);
  g_calls.push_back(std::move(c));
  g_most_rows = std::max(g_most_rows, n_rows);
  quantize_rows(type, x, y, n_rows, n_per_row, imp);
}

std::string imatrix_reference(const std::string& name) { return test::source_path("tests/data/imatrix/" + name); }

// Quantizes `model` with `imatrix` and checks, tensor by tensor, that every run of rows got the
// importance of its matrix; returns the names that had an entry.
std::vector<std::string> check_importance_per_row(const std::string& model, const std::string& imatrix,
                                                  const char* preset, const std::string& out,
                                                  uint64_t max_buffer_bytes = 0) {
  auto file = gguf::GgufFile::open(model);
  auto im = read_imatrix(imatrix);
  EXPECT_TRUE(file.ok() && im.ok());
  if (!file.ok() || !im.ok()) return {};
  QuantizeOptions o;
  o.n_threads = 1;
  o.imatrix_path = imatrix;
  o.quantize = recording_quantizer;
  o.max_buffer_bytes = max_buffer_bytes;
  g_calls.clear();
  std::vector<std::string> used;
  auto on_tensor = [&](const QuantizeTensorEvent& e) {
    const gguf::TensorInfo* t = (*file)->find_tensor(e.name);
    const auto entry = im->entries.find(std::string(e.name));
    const bool has_entry = entry != im->entries.end() && e.from != e.to && dtype_facts(e.to).block_size > 1;
    EXPECT_EQ(e.importance, has_entry) << e.name;
    if (has_entry) used.emplace_back(e.name);
    const std::vector<float> want = has_entry ? imatrix_importance(*im, entry->second) : std::vector<float>{};
    const int64_t cols = static_cast<int64_t>(t->dims[0]);
    const int64_t rows_per_matrix = static_cast<int64_t>(t->dims.size() > 1 ? t->dims[1] : 1);
    int64_t row = 0;
    for (const Call& c : g_calls) {
      EXPECT_EQ(c.n_per_row, cols) << e.name;
      const int64_t matrix = row / rows_per_matrix;
      EXPECT_EQ((row + c.n_rows - 1) / rows_per_matrix, matrix) << e.name << ": a run crosses matrices at " << row;
      if (has_entry) {
        const std::vector<float> slice(want.begin() + matrix * cols, want.begin() + (matrix + 1) * cols);
        EXPECT_EQ(c.importance, slice) << e.name << " row " << row;
      } else {
        EXPECT_TRUE(c.importance.empty()) << e.name;
      }
      row += c.n_rows;
    }
    EXPECT_EQ(row, e.from == e.to ? 0 : static_cast<int64_t>(t->n_elements) / cols) << e.name;
    g_calls.clear();
  };
  const Result<QuantizeStats> r = quantize_gguf(model, out, preset, o, on_tensor);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (r.ok()) {
    EXPECT_EQ(r->n_imatrix_entries, im->entries.size());
  }
  return used;
}

TEST(QuantizeImatrix, EachTensorGetsItsEntry) {
  const std::string model = test::shared_path("models/stories260K.gguf");
  if (!test::file_exists(model)) GTEST_SKIP() << "missing " << model;
  const std::string out = testing::TempDir() + "oxidize_qimatrix.gguf";
  const std::vector<std::string> used =
      check_importance_per_row(model, imatrix_reference("stories260K.c128.f32.imatrix.gguf"), "Q4_0", out);
  // The 35 block matrices; ffn_down (rows of 172) stays F16 under Q4_0, so 30 were quantized with one.
  EXPECT_EQ(used.size(), 30u);
  auto q = gguf::GgufFile::open(out);
  ASSERT_TRUE(q.ok());
  // llama-quantize's keys (strings cut to 127 bytes, counts u32).
  EXPECT_EQ((*q)->get_string("quantize.imatrix.file").value(), imatrix_reference("stories260K.c128.f32.imatrix.gguf").substr(0, 127));
  EXPECT_EQ((*q)->get_string("quantize.imatrix.dataset").value(), "tests/data/perplexity/story.txt");
  EXPECT_EQ((*q)->get_u32("quantize.imatrix.entries_count").value(), 35u);
  EXPECT_EQ((*q)->get_u32("quantize.imatrix.chunks_count").value(), 23u);
  // The legacy file of the same run is read the same way.
  check_importance_per_row(model, imatrix_reference("stories260K.c128.f32.imatrix.dat"), "Q8_0", out);
  std::remove(out.c_str());
}

TEST(QuantizeImatrix, ExpertsGetTheirOwnSlices) {
  const std::string model = test::shared_path("zoo/models/mixtral-moe.gguf");
  if (!test::file_exists(model)) GTEST_SKIP() << "missing " << model;
  const std::string out = testing::TempDir() + "oxidize_qimatrix_moe.gguf";
  const std::vector<std::string> used =
      check_importance_per_row(model, imatrix_reference("mixtral-moe.c64.f32.imatrix.gguf"), "Q8_0", out);
  EXPECT_NE(std::find(used.begin(), used.end(), "blk.1.ffn_down_exps.weight"), used.end());
  std::remove(out.c_str());
}

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::vector<uint8_t> bytes;
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    for (int c; (c = std::fgetc(f)) != EOF;) bytes.push_back(static_cast<uint8_t>(c));
    std::fclose(f);
  }
  return bytes;
}

// --max-buffer-size: with a bound below one row each tensor is converted a row at a time (where
// the quantizer otherwise gets runs of up to 16), every row still with its expert's importance,
// and the file is the one written without the bound.
TEST(QuantizeImatrix, SlabsOfOneRowGiveTheSameFile) {
  const std::string model = test::shared_path("zoo/models/mixtral-moe.gguf");
  if (!test::file_exists(model)) GTEST_SKIP() << "missing " << model;
  const std::string imatrix = imatrix_reference("mixtral-moe.c64.f32.imatrix.gguf");
  const std::string whole = testing::TempDir() + "oxidize_qimatrix_whole.gguf";
  const std::string slabs = testing::TempDir() + "oxidize_qimatrix_slabs.gguf";
  g_most_rows = 0;
  check_importance_per_row(model, imatrix, "Q4_K_M", whole);
  EXPECT_GT(g_most_rows, 1);
  const std::vector<uint8_t> expected = file_bytes(whole);
  ASSERT_GT(expected.size(), 0u);
  g_most_rows = 0;
  check_importance_per_row(model, imatrix, "Q4_K_M", slabs, /*max_buffer_bytes=*/1);
  EXPECT_EQ(g_most_rows, 1);
  EXPECT_TRUE(file_bytes(slabs) == expected);
  std::remove(whole.c_str());
  std::remove(slabs.c_str());
}

TEST(QuantizeImatrix, IncludeAndExcludeWeights) {
  const std::string model = test::shared_path("models/stories260K.gguf");
  if (!test::file_exists(model)) GTEST_SKIP() << "missing " << model;
  const std::string out = testing::TempDir() + "oxidize_qimatrix_filter.gguf";
  QuantizeOptions o;
  o.imatrix_path = imatrix_reference("stories260K.c128.f32.imatrix.gguf");
  std::vector<std::string> with;
  auto on_tensor = [&](const QuantizeTensorEvent& e) {
    if (e.importance) with.emplace_back(e.name);
  };
  o.include_weights = {"attn_q", "ffn_up"};
  auto r = quantize_gguf(model, out, "Q8_0", o, on_tensor);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->n_imatrix_entries, 10u);
  EXPECT_EQ(with.size(), 10u);
  for (const std::string& n : with) EXPECT_TRUE(n.find("attn_q") != n.npos || n.find("ffn_up") != n.npos) << n;
  o.include_weights.clear();
  o.exclude_weights = {"blk.0.", "blk.1."};
  with.clear();
  r = quantize_gguf(model, out, "Q8_0", o, on_tensor);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->n_imatrix_entries, 21u);
  EXPECT_EQ(with.size(), 18u);  // blocks 2-4, six of seven each (ffn_down stays F16)
  o.include_weights = {"attn_q"};
  EXPECT_EQ(quantize_gguf(model, out, "Q8_0", o, on_tensor).status().code(), ErrorCode::kInvalidArgument);
  std::remove(out.c_str());
}

TEST(QuantizeImatrix, RefusesAnImatrixOfAnotherModel) {
  const std::string model = test::shared_path("models/stories260K.gguf");
  if (!test::file_exists(model)) GTEST_SKIP() << "missing " << model;
  const std::string out = testing::TempDir() + "oxidize_qimatrix_other.gguf";
  auto ignore = [](const QuantizeTensorEvent&) {};
  QuantizeOptions o;
  // mixtral-moe has stories260K's tensor names with other sizes (n_embd 128, not 64).
  o.imatrix_path = imatrix_reference("mixtral-moe.c64.f32.imatrix.gguf");
  Status st = quantize_gguf(model, out, "Q8_0", o, ignore).status();
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find("entry 'blk.0.attn_k.weight' has 128 values but the tensor has 64 columns x 1 "
                              "matrices = 64; is the imatrix for another model?"),
            std::string::npos) << st.message();
  EXPECT_FALSE(test::file_exists(out));
  // No entry names any tensor of the model.
  Imatrix foreign;
  foreign.chunk_size = 4;
  foreign.entries["model.layers.0.q_proj.weight"] = ImatrixEntry{{1, 2}, {4}};
  const std::string im = testing::TempDir() + "oxidize_foreign.imatrix.gguf";
  ASSERT_TRUE(write_imatrix(foreign, im, ImatrixFormat::kGguf).is_ok());
  o.imatrix_path = im;
  st = quantize_gguf(model, out, "Q8_0", o, ignore).status();
  EXPECT_NE(st.message().find("none of its 1 entries (the first: 'model.layers.0.q_proj.weight') names a tensor"),
            std::string::npos) << st.message();
  // A damaged imatrix: the reader's message, naming the file.
  o.imatrix_path = testing::TempDir() + "oxidize_no_such.imatrix";
  st = quantize_gguf(model, out, "Q8_0", o, ignore).status();
  EXPECT_NE(st.message().find("oxidize_no_such.imatrix"), std::string::npos) << st.message();
  std::remove(im.c_str());
}

// No format sets needs_importance yet (IQ2_XXS, IQ1_S and the like will): a stand-in says Q4_0 does.
bool q4_0_needs_importance(DType t) { return t == DType::Q4_0; }

TEST(QuantizeImatrix, ATypeThatNeedsAnImatrixIsRefusedWithoutOne) {
  const std::string model = test::shared_path("models/stories260K.gguf");
  if (!test::file_exists(model)) GTEST_SKIP() << "missing " << model;
  const std::string out = testing::TempDir() + "oxidize_qimatrix_needs.gguf";
  auto ignore = [](const QuantizeTensorEvent&) {};
  QuantizeOptions o;
  o.needs_importance = q4_0_needs_importance;
  Status st = quantize_gguf(model, out, "Q4_0", o, ignore).status();
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  // token_embd (Q4_0 too) is exempt, as in llama.cpp; the first block matrix in llama-quantize's
  // order (by layer, then by name) is named.
  EXPECT_NE(st.message().find("Q4_0 needs an importance matrix (--imatrix FILE, from `oxidize imatrix`): tensor "
                              "'blk.0.attn_k.weight' would be Q4_0"), std::string::npos) << st.message();
  EXPECT_FALSE(test::file_exists(out));
  // With an imatrix that lacks the entry of a tensor that needs one.
  o.imatrix_path = imatrix_reference("stories260K.c128.f32.imatrix.gguf");
  o.exclude_weights = {"blk.3.attn_k"};
  st = quantize_gguf(model, out, "Q4_0", o, ignore).status();
  EXPECT_NE(st.message().find("has no entry for tensor 'blk.3.attn_k.weight', which Q4_0 needs"), std::string::npos)
      << st.message();
  // With every entry: accepted.
  o.exclude_weights.clear();
  EXPECT_TRUE(quantize_gguf(model, out, "Q4_0", o, ignore).ok());
  // The real table: Q4_0 needs none, so the same call without the stand-in succeeds without an imatrix.
  EXPECT_FALSE(quant_traits(DType::Q4_0).needs_importance);
  std::remove(out.c_str());
}

}  // namespace
}  // namespace ox
