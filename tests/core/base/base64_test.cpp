// base64_encode against RFC 4648's test vectors, and base64_floats against Python's
// base64.b64encode(struct.pack('<3f', 1.0, -2.5, 0.1)) (OpenAI's embedding encoding).
#include "core/base/base64.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ox {
namespace {

std::string encode(const std::string& s) {
  return base64_encode(std::vector<uint8_t>(s.begin(), s.end()));
}

TEST(Base64, Rfc4648Vectors) {
  EXPECT_EQ(encode(""), "");
  EXPECT_EQ(encode("f"), "Zg==");
  EXPECT_EQ(encode("fo"), "Zm8=");
  EXPECT_EQ(encode("foo"), "Zm9v");
  EXPECT_EQ(encode("foob"), "Zm9vYg==");
  EXPECT_EQ(encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(encode("foobar"), "Zm9vYmFy");
}

TEST(Base64, HighBytesUseTheLastAlphabetEntries) {
  EXPECT_EQ(base64_encode(std::vector<uint8_t>{0xfb, 0xff, 0xbf}), "+/+/");
}

TEST(Base64, FloatsAreLittleEndianFloat32) {
  const std::vector<float> v = {1.0f, -2.5f, 0.1f};
  EXPECT_EQ(base64_floats(v), "AACAPwAAIMDNzMw9");
}

}  // namespace
}  // namespace ox
