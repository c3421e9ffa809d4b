// quantize_gguf on a split model (gguf::write_split's shards of stories260K): as one file, the
// bytes of the unsplit model's quantization; with keep_split, llama-quantize --keep-split's layout:
// a file per input shard named OUT-0000i-of-0000N.gguf, each with its shard's tensors in order,
// every tensor's bytes as in the one-file output, the split keys last, the metadata in the first.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/gguf/gguf.h"
#include "core/gguf/split.h"
#include "core/tools/quantize.h"
#include "tests/support/shared_data.h"

namespace ox {
namespace {

std::unique_ptr<gguf::GgufFile> open_quantize_split(const std::string& path) {
  Result<std::unique_ptr<gguf::GgufFile>> r = gguf::GgufFile::open(path);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(r).value() : nullptr;
}

Result<QuantizeStats> quantize_split_q8(const std::string& in, const std::string& out, bool keep_split) {
  QuantizeOptions o;
  o.n_threads = 2;
  o.keep_split = keep_split;
  auto ignore = [](const QuantizeTensorEvent&) {};
  return quantize_gguf(in, out, "Q8_0", o, ignore);
}

class QuantizeSplit : public ::testing::Test {
 protected:
  void SetUp() override {
    whole_path_ = test::shared_path("models/stories260K.gguf");
    if (!test::file_exists(whole_path_)) GTEST_SKIP() << "missing " << whole_path_;
    std::unique_ptr<gguf::GgufFile> whole = open_quantize_split(whole_path_);
    ASSERT_TRUE(whole);
    Result<std::vector<std::string>> shards = gguf::write_split(*whole, dir_ + "qsplit_in", 20);
    ASSERT_TRUE(shards.ok()) << shards.status().message();
    shards_ = *shards;
    ASSERT_EQ(shards_.size(), 3u);
  }
  void TearDown() override {
    for (const std::string& p : shards_) std::remove(p.c_str());
  }
  const std::string dir_ = testing::TempDir();
  std::string whole_path_;
  std::vector<std::string> shards_;
};

TEST_F(QuantizeSplit, IntoOneFileAsTheUnsplitModel) {
  const std::string from_whole = dir_ + "qsplit_whole.gguf", from_split = dir_ + "qsplit_one.gguf";
  ASSERT_TRUE(quantize_split_q8(whole_path_, from_whole, false).ok());
  Result<QuantizeStats> r = quantize_split_q8(shards_[0], from_split, false);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->out_paths, std::vector<std::string>{from_split});
  EXPECT_EQ(test::read_file_bytes(from_split), test::read_file_bytes(from_whole));
  std::remove(from_whole.c_str());
  std::remove(from_split.c_str());
}

TEST_F(QuantizeSplit, KeepSplitWritesAFilePerShard) {
  const std::string one = dir_ + "qsplit_ref.gguf";
  ASSERT_TRUE(quantize_split_q8(whole_path_, one, false).ok());
  Result<QuantizeStats> r = quantize_split_q8(shards_[0], dir_ + "qsplit_out.gguf", true);
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::vector<std::string> want;
  for (int i = 1; i <= 3; ++i) want.push_back(dir_ + strfmt("qsplit_out-0000%d-of-00003.gguf", i));
  ASSERT_EQ(r->out_paths, want);

  std::unique_ptr<gguf::GgufFile> in = open_quantize_split(shards_[0]);
  std::unique_ptr<gguf::GgufFile> out = open_quantize_split(want[0]);
  std::unique_ptr<gguf::GgufFile> ref = open_quantize_split(one);
  ASSERT_TRUE(in && out && ref);
  ASSERT_EQ(out->tensors().size(), in->tensors().size());
  for (size_t i = 0; i < in->tensors().size(); ++i) {  // each shard's tensors, in its order
    const gguf::TensorInfo& t = out->tensors()[i];
    EXPECT_EQ(t.name, in->tensors()[i].name);
    EXPECT_EQ(t.shard, in->tensors()[i].shard) << t.name;
    const gguf::TensorInfo* r1 = ref->find_tensor(t.name);
    ASSERT_NE(r1, nullptr);
    EXPECT_EQ(t.type, r1->type) << t.name;
    ASSERT_EQ(t.n_bytes, r1->n_bytes) << t.name;
    EXPECT_EQ(std::memcmp(t.data, r1->data, t.n_bytes), 0) << t.name;
  }
  // The first shard: the one-file output's metadata, then split.no, split.count, split.tensors.count.
  const auto& md = out->metadata();
  ASSERT_EQ(md.size(), ref->metadata().size() + 3);
  for (size_t i = 0; i < ref->metadata().size(); ++i) EXPECT_EQ(md[i].first, ref->metadata()[i].first);
  EXPECT_EQ(md[md.size() - 3].first, "split.no");
  EXPECT_EQ(md[md.size() - 3].second.type, gguf::ValueType::UINT16);
  EXPECT_EQ(md[md.size() - 2].second.u, 3u);
  EXPECT_EQ(md[md.size() - 1].second.type, gguf::ValueType::INT32);
  EXPECT_EQ(md[md.size() - 1].second.i, 48);
  // A later shard alone: the split keys only.
  const std::vector<uint8_t> second = test::read_file_bytes(want[1]);
  Result<std::unique_ptr<gguf::GgufFile>> alone = gguf::GgufFile::parse(second, want[1]);
  ASSERT_TRUE(alone.ok()) << alone.status().message();
  ASSERT_EQ((*alone)->metadata().size(), 3u);
  EXPECT_EQ((*alone)->get_u32("split.no").value(), 1u);
  for (const std::string& p : want) std::remove(p.c_str());
  std::remove(one.c_str());
}

// An unsplit input under keep_split: one file named as shard 1 of 1, without split keys (as
// llama-quantize); a dry run writes nothing.
TEST_F(QuantizeSplit, KeepSplitOfOneFile) {
  Result<QuantizeStats> r = quantize_split_q8(whole_path_, dir_ + "qsplit_single", true);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::string want = dir_ + "qsplit_single-00001-of-00001.gguf";
  ASSERT_EQ(r->out_paths, std::vector<std::string>{want});
  std::unique_ptr<gguf::GgufFile> out = open_quantize_split(want);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->find("split.count"), nullptr);
  EXPECT_EQ(out->tensors().size(), 48u);
  std::remove(want.c_str());

  QuantizeOptions dry;
  dry.keep_split = true;
  dry.dry_run = true;
  auto ignore = [](const QuantizeTensorEvent&) {};
  Result<QuantizeStats> d = quantize_gguf(shards_[0], "", "Q8_0", dry, ignore);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_TRUE(d->out_paths.empty());
}

// Shards of 3 tensors: shard 5 holds blk.1's first three only, which --prune-layers 1 leaves out
// (llama-quantize crashes there); refused naming the shard, nothing written.
TEST_F(QuantizeSplit, KeepSplitRefusesAShardPruningEmpties) {
  std::unique_ptr<gguf::GgufFile> whole = open_quantize_split(whole_path_);
  ASSERT_TRUE(whole);
  ASSERT_EQ(whole->tensors()[12].name, "blk.1.attn_q.weight");
  ASSERT_EQ(whole->tensors()[14].name, "blk.1.attn_v.weight");
  Result<std::vector<std::string>> small = gguf::write_split(*whole, dir_ + "qsplit_small", 3);
  ASSERT_TRUE(small.ok()) << small.status().message();
  ASSERT_EQ(small->size(), 16u);
  QuantizeOptions o;
  o.keep_split = true;
  o.prune_layers = {1};
  auto ignore = [](const QuantizeTensorEvent&) {};
  Result<QuantizeStats> r = quantize_gguf(small->front(), dir_ + "qsplit_pruned.gguf", "Q8_0", o, ignore);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--keep-split: shard 5 of 16 (" + (*small)[4] + ") would hold no tensors"),
            std::string::npos) << r.status().message();
  EXPECT_FALSE(test::file_exists(dir_ + "qsplit_pruned-00001-of-00016.gguf"));
  for (const std::string& p : *small) std::remove(p.c_str());
}

}  // namespace
}  // namespace ox
