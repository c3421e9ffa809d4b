// Values behave like the Python objects jinja2 templates see: repr of floats and strings,
// equality across int/float/bool, ordering errors, dict key identity and insertion order.
#include "core/chat/value.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace ox::chat {
namespace {

TEST(Value, FloatReprMatchesPython) {
  // Expected strings are Python 3's repr() of the same doubles.
  const std::pair<double, const char*> cases[] = {
      {0.1, "0.1"},
      {1e16, "1e+16"},
      {1e15, "1000000000000000.0"},
      {123456789.125, "123456789.125"},
      {1e-5, "1e-05"},
      {0.0001, "0.0001"},
      {5e-324, "5e-324"},
      {1.7976931348623157e308, "1.7976931348623157e+308"},
      {-2.5, "-2.5"},
      {100.0, "100.0"},
      {1e22, "1e+22"},
      {123456789012345678.0, "1.2345678901234568e+17"},
      {2.0 / 3.0, "0.6666666666666666"},
      {std::numeric_limits<double>::infinity(), "inf"},
      {-0.0, "-0.0"},
      {std::nan(""), "nan"},
  };
  for (const auto& [v, want] : cases) EXPECT_EQ(float_repr(v), want) << want;
}

TEST(Value, StringReprMatchesPython) {
  EXPECT_EQ(repr_string("a'b"), "\"a'b\"");
  EXPECT_EQ(repr_string("a\"b"), "'a\"b'");
  EXPECT_EQ(repr_string("a'\"b"), "'a\\'\"b'");
  EXPECT_EQ(repr_string(std::string("\x00\x7f", 2) + "\xc2\x85\xc2\xa0\xc2\xad\xe2\x80\xa8"),
            "'\\x00\\x7f\\x85\\xa0\\xad\\u2028'");
  EXPECT_EQ(repr_string("tab\there\n"), "'tab\\there\\n'");
  EXPECT_EQ(repr_string("é🦙"), "'é🦙'");
}

TEST(Value, StrOfContainers) {
  Dict d;
  ASSERT_TRUE(d.set(Value::string("k"), Value::list({Value::integer(1), Value::none(), Value::boolean(true)})).is_ok());
  ASSERT_TRUE(d.set(Value::integer(2), Value::tuple({Value::real(1.5)})).is_ok());
  EXPECT_EQ(to_str(Value::dict(d)), "{'k': [1, None, True], 2: (1.5,)}");
  EXPECT_EQ(to_str(Value::tuple({})), "()");
  EXPECT_EQ(to_str(Value::undefined("x")), "");
  EXPECT_EQ(repr(Value::undefined()), "Undefined");
}

TEST(Value, EqualityFollowsPython) {
  EXPECT_TRUE(equals(Value::integer(1), Value::real(1.0)));
  EXPECT_TRUE(equals(Value::boolean(true), Value::integer(1)));
  EXPECT_FALSE(equals(Value::real(1.5), Value::integer(1)));
  EXPECT_FALSE(equals(Value::string("1"), Value::integer(1)));
  EXPECT_FALSE(equals(Value::list({Value::integer(1)}), Value::tuple({Value::integer(1)})));
  EXPECT_TRUE(equals(Value::undefined(), Value::undefined("other hint")));
  EXPECT_FALSE(equals(Value::undefined(), Value::none()));
  Dict a, b;
  ASSERT_TRUE(a.set(Value::string("x"), Value::integer(1)).is_ok());
  ASSERT_TRUE(a.set(Value::string("y"), Value::integer(2)).is_ok());
  ASSERT_TRUE(b.set(Value::string("y"), Value::real(2.0)).is_ok());
  ASSERT_TRUE(b.set(Value::string("x"), Value::integer(1)).is_ok());
  EXPECT_TRUE(equals(Value::dict(a), Value::dict(b)));  // order does not matter for ==
}

TEST(Value, OrderingAndItsErrors) {
  EXPECT_EQ(*compare(Value::integer(1), Value::real(1.5)), -1);
  EXPECT_EQ(*compare(Value::string("b"), Value::string("a")), 1);
  EXPECT_EQ(*compare(Value::string("é"), Value::string("z")), 1);  // code point order
  EXPECT_EQ(*compare(Value::list({Value::integer(1), Value::integer(2)}), Value::list({Value::integer(1)})), 1);
  Result<int> bad = compare(Value::string("a"), Value::integer(1));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "'<' not supported between instances of 'str' and 'int'");
}

TEST(Value, DictKeysHashLikePython) {
  Dict d;
  ASSERT_TRUE(d.set(Value::integer(1), Value::string("int")).is_ok());
  ASSERT_TRUE(d.set(Value::real(1.0), Value::string("float")).is_ok());  // same key as 1
  ASSERT_TRUE(d.set(Value::boolean(true), Value::string("bool")).is_ok());
  ASSERT_TRUE(d.set(Value::string("1"), Value::string("str")).is_ok());
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d.entries()[0].first.kind(), Kind::kInt);  // the first key object is kept
  EXPECT_EQ(d.entries()[0].second.str(), "bool");
  EXPECT_EQ(d.find("1")->str(), "str");
  EXPECT_EQ(d.find(Value::tuple({})), nullptr);
  Status unhashable = d.set(Value::list({}), Value::none());
  EXPECT_FALSE(unhashable.is_ok());
  EXPECT_EQ(unhashable.message(), "unhashable type: 'list'");
}

TEST(Value, TruthinessAndDepth) {
  EXPECT_FALSE(truthy(Value::string("")));
  EXPECT_FALSE(truthy(Value::real(0.0)));
  EXPECT_FALSE(truthy(Value::undefined()));
  EXPECT_FALSE(truthy(Value::list({})));
  EXPECT_TRUE(truthy(Value::list({Value::none()})));
  EXPECT_TRUE(truthy(Value::string("0")));
  const Value nested = Value::list({Value::list({Value::list({})})});
  EXPECT_EQ(nested.depth(), 3u);
  EXPECT_EQ(Value::integer(3).depth(), 0u);
}

}  // namespace
}  // namespace ox::chat
