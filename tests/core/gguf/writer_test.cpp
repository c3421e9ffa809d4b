// GgufWriter: every value type round-trips through the reader; tensors, alignment, padding and
// the streaming mode; the writer's own argument checks.
#include "core/gguf/writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "tests/support/shared_data.h"

namespace ox::gguf {
namespace {

std::unique_ptr<GgufFile> reparse(const GgufWriter& w, std::vector<uint8_t>* keep) {
  auto bytes = w.to_bytes();
  EXPECT_TRUE(bytes.ok()) << bytes.status().message();
  if (!bytes.ok()) return nullptr;
  *keep = std::move(bytes).value();
  auto f = GgufFile::parse(*keep, "written.gguf");
  EXPECT_TRUE(f.ok()) << f.status().message();
  if (!f.ok()) return nullptr;
  return std::move(f).value();
}

std::vector<uint8_t> as_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

TEST(GgufWriter, EveryScalarType) {
  GgufWriter w;
  ASSERT_TRUE(w.add("u8", encode_u8(250)).is_ok());
  ASSERT_TRUE(w.add("i8", encode_i8(-120)).is_ok());
  ASSERT_TRUE(w.add("u16", encode_u16(65000)).is_ok());
  ASSERT_TRUE(w.add("i16", encode_i16(-32000)).is_ok());
  ASSERT_TRUE(w.add("u32", encode_u32(4000000000u)).is_ok());
  ASSERT_TRUE(w.add("i32", encode_i32(-2000000000)).is_ok());
  ASSERT_TRUE(w.add("u64", encode_u64(18000000000000000000ull)).is_ok());
  ASSERT_TRUE(w.add("i64", encode_i64(-9000000000000000000ll)).is_ok());
  ASSERT_TRUE(w.add("f32", encode_f32(0.1f)).is_ok());
  ASSERT_TRUE(w.add("f64", encode_f64(-1e300)).is_ok());
  ASSERT_TRUE(w.add("yes", encode_bool(true)).is_ok());
  ASSERT_TRUE(w.add("no", encode_bool(false)).is_ok());
  ASSERT_TRUE(w.add("s", encode_string("h\xc3\xa9llo")).is_ok());
  ASSERT_TRUE(w.add("empty", encode_string("")).is_ok());
  ASSERT_TRUE(w.add("nul", encode_string(std::string_view("a\0b", 3))).is_ok());
  std::vector<uint8_t> keep;
  auto f = reparse(w, &keep);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->version(), 3u);
  ASSERT_EQ(f->metadata().size(), 15u);
  EXPECT_EQ(f->metadata()[0].first, "u8");  // file order kept
  EXPECT_EQ(f->metadata()[14].first, "nul");

  EXPECT_EQ(f->find("u8")->type, ValueType::UINT8);
  EXPECT_EQ(f->find("u8")->u, 250u);
  EXPECT_EQ(f->find("i8")->i, -120);
  EXPECT_EQ(f->find("u16")->u, 65000u);
  EXPECT_EQ(f->find("i16")->i, -32000);
  EXPECT_EQ(f->get_u32("u32").value(), 4000000000u);
  EXPECT_EQ(f->get_i64("i32").value(), -2000000000);
  EXPECT_EQ(f->get_u64("u64").value(), 18000000000000000000ull);
  EXPECT_EQ(f->get_i64("i64").value(), -9000000000000000000ll);
  EXPECT_EQ(f->get_f32("f32").value(), 0.1f);
  EXPECT_EQ(f->find("f64")->type, ValueType::FLOAT64);
  EXPECT_EQ(f->find("f64")->f, -1e300);
  EXPECT_TRUE(f->get_bool("yes").value());
  EXPECT_FALSE(f->get_bool("no").value());
  EXPECT_EQ(f->get_string("s").value(), "h\xc3\xa9llo");
  EXPECT_EQ(f->get_string("empty").value(), "");
  EXPECT_EQ(f->get_string("nul").value(), std::string_view("a\0b", 3));
}

TEST(GgufWriter, TypedGettersConvertAndReject) {
  GgufWriter w;
  ASSERT_TRUE(w.add("small", encode_u8(7)).is_ok());
  ASSERT_TRUE(w.add("neg", encode_i32(-1)).is_ok());
  ASSERT_TRUE(w.add("big", encode_u64(1ull << 40)).is_ok());
  ASSERT_TRUE(w.add("huge", encode_u64(1ull << 63)).is_ok());
  ASSERT_TRUE(w.add("pi", encode_f64(3.25)).is_ok());
  ASSERT_TRUE(w.add("name", encode_string("x")).is_ok());
  ASSERT_TRUE(w.add("flag", encode_bool(true)).is_ok());
  const std::vector<int32_t> ints = {1, 2, 3};
  ASSERT_TRUE(w.add_array<int32_t>("ints", ints).is_ok());
  std::vector<uint8_t> keep;
  auto f = reparse(w, &keep);
  ASSERT_NE(f, nullptr);

  EXPECT_EQ(f->get_u32("small").value(), 7u);
  EXPECT_EQ(f->get_i64("neg").value(), -1);
  EXPECT_EQ(f->get_f32("small").value(), 7.0f);
  EXPECT_EQ(f->get_f32("pi").value(), 3.25f);
  EXPECT_EQ(f->get_u64("big").value(), 1ull << 40);

  auto expect_error = [&](const Status& s, std::initializer_list<std::string> needles) {
    ASSERT_FALSE(s.is_ok());
    EXPECT_EQ(s.code(), ErrorCode::kInvalidFile);
    EXPECT_NE(s.message().find("written.gguf"), std::string::npos) << s.message();
    for (const std::string& n : needles) EXPECT_NE(s.message().find(n), std::string::npos) << s.message();
  };
  expect_error(f->get_u32("neg").status(), {"'neg'", "-1"});
  expect_error(f->get_u64("neg").status(), {"'neg'", "-1"});
  expect_error(f->get_u32("big").status(), {"'big'", "1099511627776"});
  expect_error(f->get_i64("huge").status(), {"'huge'", "too large for int64"});
  expect_error(f->get_u32("pi").status(), {"'pi'", "is FLOAT64"});
  expect_error(f->get_f32("name").status(), {"'name'", "is STRING"});
  expect_error(f->get_bool("small").status(), {"'small'", "is UINT8", "expected BOOL"});
  expect_error(f->get_string("flag").status(), {"'flag'", "is BOOL", "expected STRING"});
  expect_error(f->get_string("missing").status(), {"'missing'", "not found"});
  expect_error(f->get_string_array("ints").status(), {"'ints'", "is ARRAY of INT32", "ARRAY of STRING"});
  expect_error(f->get_array("name").status(), {"'name'", "is STRING", "expected ARRAY"});

  EXPECT_EQ(f->get_u32_or("missing", 11).value(), 11u);
  EXPECT_EQ(f->get_u32_or("small", 11).value(), 7u);
  EXPECT_FALSE(f->get_u32_or("neg", 11).ok());
  EXPECT_EQ(f->get_f32_or("missing", 0.5f).value(), 0.5f);
  EXPECT_TRUE(f->get_bool_or("missing", true).value());
  EXPECT_FALSE(f->get_bool_or("small", true).ok());
  EXPECT_EQ(f->get_string_or("missing", "dflt").value(), "dflt");
  EXPECT_EQ(f->get_string_or("name", "dflt").value(), "x");
  EXPECT_FALSE(f->get_string_or("small", "dflt").ok());
}

TEST(GgufWriter, ArraysOfEveryType) {
  GgufWriter w;
  const std::vector<uint8_t> u8 = {0, 1, 255};
  const std::vector<int8_t> i8 = {-128, 0, 127};
  const std::vector<uint16_t> u16 = {0, 65535};
  const std::vector<int16_t> i16 = {-32768, 32767};
  const std::vector<uint32_t> u32 = {1, 4294967295u};
  const std::vector<int32_t> i32 = {-5, 6, -7};
  const std::vector<uint64_t> u64 = {1ull << 60};
  const std::vector<int64_t> i64 = {-(1ll << 60), 3};
  const std::vector<float> f32 = {1.5f, -0.0f, std::numeric_limits<float>::infinity()};
  const std::vector<double> f64 = {1e-300, 2.5};
  const std::vector<std::string> strings = {"<unk>", "", "\xe2\x96\x81the"};
  ASSERT_TRUE(w.add_array<uint8_t>("u8", u8).is_ok());
  ASSERT_TRUE(w.add_array<int8_t>("i8", i8).is_ok());
  ASSERT_TRUE(w.add_array<uint16_t>("u16", u16).is_ok());
  ASSERT_TRUE(w.add_array<int16_t>("i16", i16).is_ok());
  ASSERT_TRUE(w.add_array<uint32_t>("u32", u32).is_ok());
  ASSERT_TRUE(w.add_array<int32_t>("i32", i32).is_ok());
  ASSERT_TRUE(w.add_array<uint64_t>("u64", u64).is_ok());
  ASSERT_TRUE(w.add_array<int64_t>("i64", i64).is_ok());
  ASSERT_TRUE(w.add_array<float>("f32", f32).is_ok());
  ASSERT_TRUE(w.add_array<double>("f64", f64).is_ok());
  ASSERT_TRUE(w.add("bools", encode_bool_array({true, false, true})).is_ok());
  ASSERT_TRUE(w.add_string_array("strings", strings).is_ok());
  ASSERT_TRUE(w.add_array<int32_t>("empty", std::span<const int32_t>()).is_ok());
  std::vector<uint8_t> keep;
  auto f = reparse(w, &keep);
  ASSERT_NE(f, nullptr);

  auto arr = [&](const char* key, ValueType elem, uint64_t count) -> const Value* {
    auto r = f->get_array(key);
    EXPECT_TRUE(r.ok()) << r.status().message();
    if (!r.ok()) return nullptr;
    EXPECT_EQ((*r)->elem_type, elem) << key;
    EXPECT_EQ((*r)->count, count) << key;
    return *r;
  };
  EXPECT_EQ(arr("u8", ValueType::UINT8, 3)->integer_at(2), 255);
  EXPECT_EQ(arr("i8", ValueType::INT8, 3)->integer_at(0), -128);
  EXPECT_EQ(arr("u16", ValueType::UINT16, 2)->integer_at(1), 65535);
  EXPECT_EQ(arr("i16", ValueType::INT16, 2)->integer_at(0), -32768);
  EXPECT_EQ(arr("u32", ValueType::UINT32, 2)->integer_at(1), 4294967295ll);
  const Value* vi32 = arr("i32", ValueType::INT32, 3);
  EXPECT_EQ(vi32->integer_at(0), -5);
  EXPECT_EQ(vi32->integer_at(2), -7);
  EXPECT_EQ(vi32->number_at(1), 6.0);
  EXPECT_EQ(arr("u64", ValueType::UINT64, 1)->integer_at(0), 1ll << 60);
  EXPECT_EQ(arr("i64", ValueType::INT64, 2)->integer_at(0), -(1ll << 60));
  const Value* vf32 = arr("f32", ValueType::FLOAT32, 3);
  EXPECT_EQ(vf32->f32_at(0), 1.5f);
  EXPECT_TRUE(std::signbit(vf32->f32_at(1)));
  EXPECT_TRUE(std::isinf(vf32->f32_at(2)));
  EXPECT_EQ(arr("f64", ValueType::FLOAT64, 2)->number_at(0), 1e-300);
  const Value* vb = arr("bools", ValueType::BOOL, 3);
  EXPECT_EQ(vb->integer_at(0), 1);
  EXPECT_EQ(vb->integer_at(1), 0);
  arr("empty", ValueType::INT32, 0);
  auto s = f->get_string_array("strings");
  ASSERT_TRUE(s.ok());
  ASSERT_EQ((*s)->size(), 3u);
  EXPECT_EQ((**s)[0], "<unk>");
  EXPECT_EQ((**s)[1], "");
  EXPECT_EQ((**s)[2], "\xe2\x96\x81the");
}

TEST(GgufWriter, NestedArrays) {
  // [[1, 2], [], [3]] of INT32, [["a"], ["b", "c"]] of STRING, and [[[7]]] three deep.
  const std::vector<int32_t> a = {1, 2}, b = {}, c = {3};
  std::vector<EncodedValue> ints = {encode_array<int32_t>(a), encode_array<int32_t>(b), encode_array<int32_t>(c)};
  auto nested_ints = encode_array_of(ValueType::ARRAY, ints);
  ASSERT_TRUE(nested_ints.ok());
  const std::vector<std::string> s1 = {"a"}, s2 = {"b", "c"};
  std::vector<EncodedValue> strs = {encode_string_array(s1), encode_string_array(s2)};
  auto nested_strs = encode_array_of(ValueType::ARRAY, strs);
  ASSERT_TRUE(nested_strs.ok());
  const std::vector<int32_t> seven = {7};
  std::vector<EncodedValue> inner = {encode_array<int32_t>(seven)};
  auto mid = encode_array_of(ValueType::ARRAY, inner);
  ASSERT_TRUE(mid.ok());
  std::vector<EncodedValue> outer = {*mid};
  auto deep = encode_array_of(ValueType::ARRAY, outer);
  ASSERT_TRUE(deep.ok());
  std::vector<EncodedValue> scalars = {encode_u8(1), encode_u8(2)};
  auto of_u8 = encode_array_of(ValueType::UINT8, scalars);
  ASSERT_TRUE(of_u8.ok());
  std::vector<EncodedValue> mixed = {encode_u8(1), encode_i8(2)};
  EXPECT_FALSE(encode_array_of(ValueType::UINT8, mixed).ok());

  GgufWriter w;
  ASSERT_TRUE(w.add("ints", *nested_ints).is_ok());
  ASSERT_TRUE(w.add("strs", *nested_strs).is_ok());
  ASSERT_TRUE(w.add("deep", *deep).is_ok());
  ASSERT_TRUE(w.add("of_u8", *of_u8).is_ok());
  std::vector<uint8_t> keep;
  auto f = reparse(w, &keep);
  ASSERT_NE(f, nullptr);

  const Value* v = f->find("ints");
  ASSERT_EQ(v->elem_type, ValueType::ARRAY);
  ASSERT_EQ(v->items.size(), 3u);
  EXPECT_EQ(v->items[0].count, 2u);
  EXPECT_EQ(v->items[0].integer_at(1), 2);
  EXPECT_EQ(v->items[1].count, 0u);
  EXPECT_EQ(v->items[2].integer_at(0), 3);
  v = f->find("strs");
  ASSERT_EQ(v->items.size(), 2u);
  ASSERT_EQ(v->items[1].strings.size(), 2u);
  EXPECT_EQ(v->items[1].strings[1], "c");
  v = f->find("deep");
  ASSERT_EQ(v->items.size(), 1u);
  ASSERT_EQ(v->items[0].items.size(), 1u);
  EXPECT_EQ(v->items[0].items[0].integer_at(0), 7);
  v = f->find("of_u8");
  EXPECT_EQ(v->elem_type, ValueType::UINT8);
  EXPECT_EQ(v->integer_at(1), 2);
}

TEST(GgufWriter, TensorsAlignmentAndPadding) {
  for (uint32_t alignment : {32u, 64u, 256u}) {
    GgufWriter w;
    ASSERT_TRUE(w.add_string("general.architecture", "llama").is_ok());
    if (alignment != 32) {
      ASSERT_TRUE(w.set_alignment(alignment).is_ok());
    }
    const std::vector<float> a = {1, 2, 3};  // 12 bytes: padding follows
    const std::vector<uint64_t> dims_a = {3};
    ASSERT_TRUE(w.add_tensor("a", dims_a, DType::F32, as_bytes(a)).is_ok());
    std::vector<uint8_t> q(2 * 34);  // Q8_0: 64 x 1 is two 34-byte blocks
    for (size_t k = 0; k < q.size(); ++k) q[k] = static_cast<uint8_t>(k * 7);
    const std::vector<uint64_t> dims_q = {64, 1};
    ASSERT_TRUE(w.add_tensor("q", dims_q, DType::Q8_0, q).is_ok());
    std::vector<uint8_t> h(2 * 3 * 5 * 7 * 2);
    const std::vector<uint64_t> dims_h = {2, 3, 5, 7};
    ASSERT_TRUE(w.add_tensor("h", dims_h, DType::F16, h).is_ok());
    std::vector<uint8_t> keep;
    auto f = reparse(w, &keep);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->alignment(), alignment);
    EXPECT_EQ(f->data_offset() % alignment, 0u);
    EXPECT_EQ(keep.size() % alignment, 0u);
    ASSERT_EQ(f->tensors().size(), 3u);
    for (const TensorInfo& t : f->tensors()) EXPECT_EQ(t.offset % alignment, 0u) << t.name;
    const TensorInfo* ta = f->find_tensor("a");
    ASSERT_NE(ta, nullptr);
    EXPECT_EQ(ta->n_bytes, 12u);
    float back[3];
    std::memcpy(back, ta->data, 12);
    EXPECT_EQ(back[2], 3.0f);
    const TensorInfo* tq = f->find_tensor("q");
    EXPECT_EQ(tq->type, DType::Q8_0);
    EXPECT_EQ(tq->n_bytes, 68u);
    EXPECT_EQ(tq->offset, alignment == 256 ? 256u : (alignment == 64 ? 64u : 32u));
    EXPECT_EQ(std::memcmp(tq->data, q.data(), q.size()), 0);
    const TensorInfo* th = f->find_tensor("h");
    EXPECT_EQ(th->dims, dims_h);
    EXPECT_EQ(th->n_elements, 2u * 3 * 5 * 7);
    EXPECT_EQ(th->rows(), 3u * 5 * 7);
    EXPECT_EQ(w.tensor_offset(2), th->offset);
  }
}

TEST(GgufWriter, RejectsBadArguments) {
  GgufWriter w;
  ASSERT_TRUE(w.add_u32("k", 1).is_ok());
  EXPECT_EQ(w.add_u32("k", 2).code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(w.set_alignment(0).is_ok());
  EXPECT_FALSE(w.set_alignment(48).is_ok());
  EXPECT_FALSE(w.add("general.alignment", encode_i32(-32)).is_ok());
  EXPECT_FALSE(w.add("general.alignment", encode_f32(32)).is_ok());
  EXPECT_EQ(w.alignment(), 32u);
  GgufWriter signed_alignment;  // the reader accepts any integer type here, so the writer does too
  ASSERT_TRUE(signed_alignment.add("general.alignment", encode_i32(128)).is_ok());
  EXPECT_EQ(signed_alignment.alignment(), 128u);
  ASSERT_TRUE(w.set_alignment(16).is_ok());
  ASSERT_TRUE(w.set_alignment(64).is_ok());  // replaces, not duplicates
  EXPECT_EQ(w.alignment(), 64u);
  const std::vector<uint64_t> five = {1, 1, 1, 1, 1}, zero = {4, 0}, odd = {33}, ok = {32};
  const std::vector<uint8_t> data(18);
  EXPECT_FALSE(w.declare_tensor("t", five, DType::F32).is_ok());
  EXPECT_FALSE(w.declare_tensor("t", zero, DType::F32).is_ok());
  EXPECT_FALSE(w.declare_tensor("t", odd, DType::Q4_0).is_ok());
  EXPECT_FALSE(w.declare_tensor("", ok, DType::Q4_0).is_ok());
  EXPECT_FALSE(w.add_tensor("t", ok, DType::Q4_0, std::span<const uint8_t>(data.data(), 17)).is_ok());
  EXPECT_EQ(w.tensor_count(), 0u);
  ASSERT_TRUE(w.add_tensor("t", ok, DType::Q4_0, data).is_ok());
  Status dup = w.add_tensor("t", ok, DType::Q4_0, data);
  EXPECT_NE(dup.message().find("'t'"), std::string::npos) << dup.message();
  ASSERT_TRUE(w.declare_tensor("streamed", ok, DType::Q4_0).is_ok());
  EXPECT_FALSE(w.to_bytes().ok());  // declared without data
  std::vector<uint8_t> keep;
  GgufWriter fine;
  ASSERT_TRUE(fine.set_alignment(64).is_ok());
  auto f = reparse(fine, &keep);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->get_u32("general.alignment").value(), 64u);
  EXPECT_EQ(f->metadata().size(), 1u);
}

std::string temp_path(const char* name) { return testing::TempDir() + "oxidize_gguf_" + name; }

TEST(GgufWriter, StreamingMatchesInMemory) {
  const std::vector<uint64_t> dims = {8, 3};
  std::vector<std::vector<float>> data;
  for (int t = 0; t < 3; ++t) {
    std::vector<float> v(24);
    for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<float>(t * 100 + static_cast<int>(k));
    data.push_back(v);
  }
  GgufWriter mem, stream;
  for (GgufWriter* w : {&mem, &stream}) {
    ASSERT_TRUE(w->add_string("general.name", "streamed").is_ok());
    ASSERT_TRUE(w->set_alignment(64).is_ok());
  }
  for (int t = 0; t < 3; ++t) {
    const std::string name = ox::strfmt("t%d", t);
    ASSERT_TRUE(mem.add_tensor(name, dims, DType::F32, as_bytes(data[t])).is_ok());
    ASSERT_TRUE(stream.declare_tensor(name, dims, DType::F32).is_ok());
  }
  const std::string path = temp_path("stream.gguf");
  FILE* out = std::fopen(path.c_str(), "wb");
  ASSERT_NE(out, nullptr) << path;
  ASSERT_TRUE(stream.begin(out).is_ok());
  EXPECT_FALSE(stream.add_u32("late", 1).is_ok());
  EXPECT_FALSE(stream.write_tensor_data("t1", as_bytes(data[1])).is_ok());  // out of order
  EXPECT_FALSE(stream.write_tensor_data("t0", std::span<const uint8_t>()).is_ok());  // wrong size
  ASSERT_TRUE(stream.write_tensor_data("t0", as_bytes(data[0])).is_ok());
  EXPECT_FALSE(stream.finish().is_ok());  // two still missing
  // t1 in two parts (quantize's slabs of rows): more than the rest is refused, padding follows the last.
  const std::vector<uint8_t> t1_bytes = as_bytes(data[1]);
  const std::span<const uint8_t> t1(t1_bytes);
  ASSERT_TRUE(stream.write_tensor_part("t1", t1.first(40)).is_ok());
  EXPECT_FALSE(stream.write_tensor_part("t1", t1).is_ok());
  EXPECT_FALSE(stream.write_tensor_data("t2", as_bytes(data[2])).is_ok());  // t1 is not done
  ASSERT_TRUE(stream.write_tensor_part("t1", t1.subspan(40)).is_ok());
  ASSERT_TRUE(stream.write_tensor_data("t2", as_bytes(data[2])).is_ok());
  ASSERT_TRUE(stream.finish().is_ok());
  std::fclose(out);

  auto expected = mem.to_bytes();
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(ox::test::read_file_bytes(path), *expected);
  auto f = GgufFile::open(path);
  ASSERT_TRUE(f.ok()) << f.status().message();
  const TensorInfo* t2 = (*f)->find_tensor("t2");
  ASSERT_NE(t2, nullptr);
  float last;
  std::memcpy(&last, t2->data + 23 * 4, 4);
  EXPECT_EQ(last, 223.0f);

  const std::string path2 = temp_path("whole.gguf");
  ASSERT_TRUE(mem.write_file(path2).is_ok());
  EXPECT_EQ(ox::test::read_file_bytes(path2), *expected);
  std::remove(path.c_str());
  std::remove(path2.c_str());
}

// Copying every value and tensor of a file written by llama.cpp's gguf writer must reproduce it
// byte for byte: the same layout rules (order, padding, alignment) from an independent writer.
TEST(GgufWriter, RewritesRealFilesByteForByte) {
  for (const char* rel : {"models/stories260K.gguf", "models/llama-2-tiny-random.gguf"}) {
    const std::vector<uint8_t> original = ox::test::read_file_bytes(ox::test::shared_path(rel));
    ASSERT_FALSE(original.empty());
    auto f = GgufFile::parse(original, rel);
    ASSERT_TRUE(f.ok()) << f.status().message();
    GgufWriter w;
    for (const auto& [key, value] : (*f)->metadata()) ASSERT_TRUE(w.add(key, encode_value(value)).is_ok());
    for (const TensorInfo& t : (*f)->tensors()) {
      ASSERT_TRUE(w.add_tensor(t.name, t.dims, t.type, std::span<const uint8_t>(t.data, t.n_bytes)).is_ok());
    }
    auto bytes = w.to_bytes();
    ASSERT_TRUE(bytes.ok());
    EXPECT_EQ(bytes->size(), original.size()) << rel;
    EXPECT_TRUE(*bytes == original) << rel;
  }
}

}  // namespace
}  // namespace ox::gguf
