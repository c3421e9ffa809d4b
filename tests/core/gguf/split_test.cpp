// Split GGUFs (core/gguf/split.h): llama.cpp's shard names, write_split's shards, and
// GgufFile::open joining them: every tensor of the unsplit file, at the same bytes; a missing
// shard, a shard of another split, a duplicated or missing tensor refused naming the shard file.
#include "core/gguf/split.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/gguf/gguf.h"
#include "core/gguf/writer.h"
#include "tests/support/shared_data.h"

namespace ox::gguf {
namespace {

const char* const kStories = "models/stories260K.gguf";  // 48 tensors

std::unique_ptr<GgufFile> open_or_fail(const std::string& path) {
  Result<std::unique_ptr<GgufFile>> r = GgufFile::open(path);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(r).value() : nullptr;
}

// The message of a failed open (and a gtest failure where it opened).
std::string open_error(const std::string& path) {
  Result<std::unique_ptr<GgufFile>> r = GgufFile::open(path);
  EXPECT_FALSE(r.ok()) << path << " opened";
  return r.ok() ? std::string() : r.status().message();
}

// Shards of stories260K at TempDir()/NAME, 20 tensors each (3 shards: 20, 20, 8).
std::vector<std::string> split_stories(const std::string& name) {
  std::unique_ptr<GgufFile> in = open_or_fail(ox::test::shared_path(kStories));
  if (in == nullptr) return {};
  Result<std::vector<std::string>> paths = write_split(*in, testing::TempDir() + name, 20);
  EXPECT_TRUE(paths.ok()) << paths.status().message();
  return paths.ok() ? paths.value() : std::vector<std::string>{};
}

// A one-tensor shard `no` of `count` at `path`, its tensor named `tensor`.
void write_shard_file(const std::string& path, int no, int count, int n_tensors_all, const std::string& tensor) {
  GgufWriter w;
  ASSERT_TRUE(w.add(kSplitNoKey, encode_u16(static_cast<uint16_t>(no))).is_ok());
  ASSERT_TRUE(w.add(kSplitCountKey, encode_u16(static_cast<uint16_t>(count))).is_ok());
  ASSERT_TRUE(w.add(kSplitTensorsCountKey, encode_i32(n_tensors_all)).is_ok());
  const uint64_t dims[1] = {32};
  const std::vector<uint8_t> data(32 * 4, 0);
  ASSERT_TRUE(w.add_tensor(tensor, dims, DType::F32, data).is_ok());
  ASSERT_TRUE(w.write_file(path).is_ok());
}

void remove_all(const std::vector<std::string>& paths) {
  for (const std::string& p : paths) std::remove(p.c_str());
}

TEST(SplitNames, AsLlamaCpp) {
  EXPECT_EQ(split_path("/m/model", 0, 3), "/m/model-00001-of-00003.gguf");
  EXPECT_EQ(split_path("x", 11, 12), "x-00012-of-00012.gguf");
  EXPECT_EQ(split_prefix("/m/model-00001-of-00003.gguf", 0, 3), "/m/model");
  EXPECT_EQ(split_prefix("/m/model-00002-of-00003.gguf", 1, 3), "/m/model");
  EXPECT_FALSE(split_prefix("/m/model-00002-of-00003.gguf", 0, 3).has_value());  // another shard's name
  EXPECT_FALSE(split_prefix("/m/model-00001-of-00004.gguf", 0, 3).has_value());
  EXPECT_FALSE(split_prefix("-00001-of-00003.gguf", 0, 3).has_value());          // no prefix (llama.cpp too)
  EXPECT_FALSE(split_prefix("/m/model.gguf", 0, 3).has_value());
  EXPECT_EQ(split_output_prefix("out.gguf"), "out");
  EXPECT_EQ(split_output_prefix("dir/ggml-model-Q8_0"), "dir/ggml-model-Q8_0");
  EXPECT_TRUE(is_split_key("split.count"));
  EXPECT_FALSE(is_split_key("split.counts"));
}

// Shards as gguf-split writes them: the first holds the metadata, every shard the split keys.
TEST(SplitFiles, ShardsJoinIntoTheUnsplitModel) {
  const std::vector<std::string> paths = split_stories("split_join");
  ASSERT_EQ(paths.size(), 3u);
  std::unique_ptr<GgufFile> whole = open_or_fail(ox::test::shared_path(kStories));
  std::unique_ptr<GgufFile> joined = open_or_fail(paths[0]);
  ASSERT_TRUE(whole && joined);
  ASSERT_EQ(joined->shards().size(), 3u);
  EXPECT_EQ(joined->shards()[1].path, paths[1]);
  EXPECT_EQ(joined->shards()[2].n_tensors, 8u);
  ASSERT_EQ(joined->tensors().size(), whole->tensors().size());
  for (size_t i = 0; i < whole->tensors().size(); ++i) {
    const TensorInfo& w = whole->tensors()[i];
    const TensorInfo* j = joined->find_tensor(w.name);
    ASSERT_NE(j, nullptr) << w.name;
    EXPECT_EQ(&joined->tensors()[i], j) << "file order kept";
    EXPECT_EQ(j->shard, i / 20) << w.name;
    EXPECT_EQ(j->dims, w.dims);
    EXPECT_EQ(j->type, w.type);
    ASSERT_EQ(j->n_bytes, w.n_bytes);
    EXPECT_EQ(std::memcmp(j->data, w.data, w.n_bytes), 0) << w.name;
  }
  for (const auto& [key, value] : whole->metadata()) EXPECT_NE(joined->find(key), nullptr) << key;
  EXPECT_EQ(joined->get_u32("split.count").value(), 3u);
  uint64_t sizes = 0;
  for (const std::string& p : paths) {
    FILE* f = std::fopen(p.c_str(), "rb");
    ASSERT_NE(f, nullptr);
    std::fseek(f, 0, SEEK_END);
    sizes += static_cast<uint64_t>(std::ftell(f));
    std::fclose(f);
  }
  EXPECT_EQ(joined->file_bytes(), sizes);
  remove_all(paths);
}

TEST(SplitFiles, LaterShardIsRefusedNamingTheFirst) {
  const std::vector<std::string> paths = split_stories("split_later");
  ASSERT_EQ(paths.size(), 3u);
  const std::string msg = open_error(paths[1]);
  EXPECT_NE(msg.find(paths[1] + " is shard 2 of 3 of a split model: load its first shard, " + paths[0]),
            std::string::npos) << msg;
  remove_all(paths);
}

TEST(SplitFiles, MissingShardIsNamed) {
  std::vector<std::string> paths = split_stories("split_missing");
  ASSERT_EQ(paths.size(), 3u);
  std::remove(paths[2].c_str());
  const std::string msg = open_error(paths[0]);
  EXPECT_NE(msg.find("shard 3 of 3 of " + paths[0]), std::string::npos) << msg;
  EXPECT_NE(msg.find(paths[2]), std::string::npos) << msg;
  remove_all(paths);
}

TEST(SplitFiles, ShardOfAnotherSplitIsRefused) {
  std::vector<std::string> paths = split_stories("split_other");
  ASSERT_EQ(paths.size(), 3u);
  write_shard_file(paths[1], 1, 4, 48, "other.weight");  // shard 2 of a 4-way split, under this name
  std::string msg = open_error(paths[0]);
  EXPECT_NE(msg.find(paths[1] + ": split.no = 1, split.count = 4; " + paths[0] +
                     " expects split.no = 1, split.count = 3"), std::string::npos) << msg;
  write_shard_file(paths[1], 2, 3, 48, "other.weight");  // the right count, the wrong place
  msg = open_error(paths[0]);
  EXPECT_NE(msg.find(paths[1] + ": split.no = 2, split.count = 3"), std::string::npos) << msg;
  remove_all(paths);
}

TEST(SplitFiles, DuplicatedAndMissingTensorsAreRefused) {
  std::vector<std::string> paths = split_stories("split_dup");
  ASSERT_EQ(paths.size(), 3u);
  std::unique_ptr<GgufFile> whole = open_or_fail(ox::test::shared_path(kStories));
  ASSERT_TRUE(whole);
  const std::string first_tensor = whole->tensors()[0].name;  // in shard 1
  write_shard_file(paths[2], 2, 3, 48, first_tensor);
  std::string msg = open_error(paths[0]);
  EXPECT_NE(msg.find(paths[2] + ": tensor '" + first_tensor + "' is also in " + paths[0]), std::string::npos) << msg;
  write_shard_file(paths[2], 2, 3, 48, "extra.weight");  // 41 tensors where 48 were announced
  msg = open_error(paths[0]);
  EXPECT_NE(msg.find(paths[0] + ": split.tensors.count is 48, but its 3 shards hold 41 tensors"), std::string::npos)
      << msg;
  remove_all(paths);
}

TEST(SplitFiles, FirstShardOutsideTheNamingIsRefused) {
  std::vector<std::string> paths = split_stories("split_renamed");
  ASSERT_EQ(paths.size(), 3u);
  const std::string renamed = testing::TempDir() + "split_renamed.gguf";
  ASSERT_EQ(std::rename(paths[0].c_str(), renamed.c_str()), 0);
  const std::string msg = open_error(renamed);
  EXPECT_NE(msg.find(renamed + ": split.count is 3, but the name does not end in -00001-of-00003.gguf"),
            std::string::npos) << msg;
  remove_all(paths);
  std::remove(renamed.c_str());
}

}  // namespace
}  // namespace ox::gguf
