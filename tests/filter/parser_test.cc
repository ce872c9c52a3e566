// Copyright 2026 The Sieve Authors.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "filter/ast.h"
#include "filter/filter.h"

namespace sieve {
namespace {

CollectionSpec Spec() {
  CollectionSpec spec;
  spec.name = "c";
  spec.dim = 2;
  spec.attributes = {{"i", AttrType::kInt},    {"f", AttrType::kFloat},
                     {"s", AttrType::kString}, {"b", AttrType::kBool},
                     {"t", AttrType::kTags},   {"Price_2", AttrType::kFloat}};
  return spec;
}

// The canonical text of `text`, or "ERROR: <message>".
std::string Canon(const std::string& text) {
  std::unique_ptr<Filter> f;
  Status s = Filter::Parse(text, Spec(), &f);
  if (!s.ok()) return "ERROR: " + s.message();
  return f->ToString();
}

// The message of the error `text` gives ("" when it parses).
std::string Error(const std::string& text) {
  std::unique_ptr<Filter> f;
  Status s = Filter::Parse(text, Spec(), &f);
  if (s.ok()) return "";
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  return s.message();
}

// Checks that `text` fails at 1-based position `pos`, naming `got`, and that the message
// mentions `what`.
void ExpectErrorAt(const std::string& text, size_t pos, const std::string& got,
                   const std::string& what) {
  std::string m = Error(text);
  SCOPED_TRACE("filter: " + text);
  ASSERT_FALSE(m.empty()) << "parsed";
  std::string prefix = "filter: at position " + std::to_string(pos) + ": ";
  EXPECT_EQ(m.substr(0, prefix.size()), prefix) << m;
  EXPECT_NE(m.find(what), std::string::npos) << m;
  // The token, quoted once (a string literal brings its own quotes), and named once: in `what`
  // or in a "(got ...)" tail.
  const std::string quoted = got.starts_with('\'') ? got : "'" + got + "'";
  if (!got.empty()) EXPECT_EQ(m.find("''" + got), std::string::npos) << "doubled quotes: " << m;
  if (!got.empty()) {
    const size_t first = m.find(quoted);
    EXPECT_EQ(m.find(quoted, first + 1), std::string::npos) << "names the token twice: " << m;
  }
  if (m.find("(got ") == std::string::npos) {
    EXPECT_NE(m.find(quoted), std::string::npos) << "does not name the token: " << m;
  } else {
    std::string tail = "(got " + quoted + ")";
    ASSERT_GE(m.size(), tail.size()) << m;
    EXPECT_EQ(m.substr(m.size() - tail.size()), tail) << m;
  }
}

TEST(FilterParseTest, EmptyAndBlankMatchAll) {
  for (const char* text : {"", "   ", "\t\n "}) {
    std::unique_ptr<Filter> f;
    ASSERT_TRUE(Filter::Parse(text, Spec(), &f).ok());
    EXPECT_TRUE(f->MatchesAll());
    EXPECT_EQ(f->ToString(), "");
    EXPECT_EQ(f->root().kind, FilterNode::Kind::kAll);
  }
  std::unique_ptr<Filter> f;
  ASSERT_TRUE(Filter::Parse("i = 1", Spec(), &f).ok());
  EXPECT_FALSE(f->MatchesAll());
}

TEST(FilterParseTest, EveryOperator) {
  EXPECT_EQ(Canon("i = 3"), "i = 3");
  EXPECT_EQ(Canon("i != -3"), "i != -3");
  EXPECT_EQ(Canon("i <> 3"), "i != 3");
  EXPECT_EQ(Canon("i < 3"), "i < 3");
  EXPECT_EQ(Canon("i <= 3"), "i <= 3");
  EXPECT_EQ(Canon("i > 3"), "i > 3");
  EXPECT_EQ(Canon("i >= 3"), "i >= 3");
  EXPECT_EQ(Canon("i>=3"), "i >= 3");
  EXPECT_EQ(Canon("i=-3"), "i = -3");
  EXPECT_EQ(Canon("f < 2.5"), "f < 2.5");
  EXPECT_EQ(Canon("f < -0.25"), "f < -0.25");
  EXPECT_EQ(Canon("f >= 1e-3"), "f >= 0.001");
  EXPECT_EQ(Canon("f >= 2.5E+3"), "f >= 2500.0");
  EXPECT_EQ(Canon("f = 2"), "f = 2");
  EXPECT_EQ(Canon("i < 2.5"), "i < 2.5");
  EXPECT_EQ(Canon("i IN (1, 2,3)"), "i IN (1, 2, 3)");
  EXPECT_EQ(Canon("i NOT IN (1)"), "i NOT IN (1)");
  EXPECT_EQ(Canon("s IN ('x', 'it''s')"), "s IN ('x', 'it''s')");
  EXPECT_EQ(Canon("s = ''"), "s = ''");
  EXPECT_EQ(Canon("s != 'a b'"), "s != 'a b'");
  EXPECT_EQ(Canon("f BETWEEN 0.2 AND 0.5"), "f BETWEEN 0.2 AND 0.5");
  EXPECT_EQ(Canon("i BETWEEN -1 AND 1.5"), "i BETWEEN -1 AND 1.5");
  EXPECT_EQ(Canon("t CONTAINS 'red'"), "t CONTAINS 'red'");
  EXPECT_EQ(Canon("b = true"), "b = true");
  EXPECT_EQ(Canon("b != FALSE"), "b != false");
  EXPECT_EQ(Canon("b IN (true, false)"), "b IN (true, false)");
  for (const char* a : {"i", "f", "s", "b", "t"}) {
    EXPECT_EQ(Canon(std::string(a) + " IS NULL"), std::string(a) + " IS NULL");
    EXPECT_EQ(Canon(std::string(a) + " IS NOT NULL"), std::string(a) + " IS NOT NULL");
  }
  EXPECT_EQ(Canon("Price_2 > 0"), "Price_2 > 0");
  EXPECT_EQ(Canon("i = -9223372036854775808"), "i = -9223372036854775808");
  EXPECT_EQ(Canon("i = 9223372036854775807"), "i = 9223372036854775807");
  EXPECT_EQ(Canon("s = 'héllo ✓'"), "s = 'héllo ✓'");
}

TEST(FilterParseTest, PrecedenceNotAndOr) {
  EXPECT_EQ(Canon("i = 1 OR i = 2 AND i = 3"), "(i = 1 OR (i = 2 AND i = 3))");
  EXPECT_EQ(Canon("i = 1 AND i = 2 OR i = 3"), "((i = 1 AND i = 2) OR i = 3)");
  EXPECT_EQ(Canon("NOT i = 1 AND i = 2"), "(NOT i = 1 AND i = 2)");
  EXPECT_EQ(Canon("NOT i = 1 OR i = 2"), "(NOT i = 1 OR i = 2)");
  EXPECT_EQ(Canon("NOT (i = 1 OR i = 2)"), "NOT (i = 1 OR i = 2)");
  EXPECT_EQ(Canon("NOT NOT i = 1"), "NOT NOT i = 1");
  EXPECT_EQ(Canon("(i = 1 OR i = 2) AND i = 3"), "((i = 1 OR i = 2) AND i = 3)");
  EXPECT_EQ(Canon("i = 1 AND (i = 2 AND i = 3)"), "(i = 1 AND i = 2 AND i = 3)");
  EXPECT_EQ(Canon("((((i = 1))))"), "i = 1");
  EXPECT_EQ(Canon("i = 1 OR i = 2 OR i = 3 AND NOT i = 4 AND i = 5"),
            "(i = 1 OR i = 2 OR (i = 3 AND NOT i = 4 AND i = 5))");
  // BETWEEN's AND binds to BETWEEN, not to the conjunction.
  EXPECT_EQ(Canon("i BETWEEN 1 AND 2 AND f > 0"), "(i BETWEEN 1 AND 2 AND f > 0)");
  // Structure, not just text: AND under OR.
  std::unique_ptr<Filter> f;
  ASSERT_TRUE(Filter::Parse("i = 1 OR i = 2 AND i = 3", Spec(), &f).ok());
  ASSERT_EQ(f->root().kind, FilterNode::Kind::kOr);
  ASSERT_EQ(f->root().children.size(), 2u);
  EXPECT_EQ(f->root().children[1]->kind, FilterNode::Kind::kAnd);
}

TEST(FilterParseTest, KeywordsCaseInsensitiveAttributesCaseSensitive) {
  EXPECT_EQ(Canon("i in (1) aNd s iS nOt NuLl oR NOT b = TrUe"),
            "((i IN (1) AND s IS NOT NULL) OR NOT b = true)");
  EXPECT_EQ(Canon("i not in (1) and f between 1 and 2 and t contains 'X'"),
            "(i NOT IN (1) AND f BETWEEN 1 AND 2 AND t CONTAINS 'X')");
  ExpectErrorAt("I = 1", 1, "I", "unknown attribute 'I'");
  ExpectErrorAt("price_2 > 0", 1, "price_2", "unknown attribute 'price_2'");
}

TEST(FilterParseTest, ToStringRoundTrips) {
  for (const char* text :
       {"i = 1 OR i = 2 AND NOT (f < 2.5 OR s IN ('a', 'b''c'))", "f >= 2.5E+3 AND f < 1e300",
        "NOT NOT t CONTAINS 'x' OR b = false", "i NOT IN (-1, 2.5) AND f = -0.0"}) {
    std::string once = Canon(text);
    ASSERT_EQ(once.find("ERROR"), std::string::npos) << once;
    EXPECT_EQ(Canon(once), once);
  }
}

TEST(FilterParseTest, ErrorsNameThePosition) {
  // Unknown attribute.
  ExpectErrorAt("i = 1 AND zz = 2", 11, "zz", "unknown attribute 'zz'");
  // Lexical errors.
  ExpectErrorAt("s = 'abc", 5, "'abc", "unterminated string");
  ExpectErrorAt("s = 'it''s", 5, "'it''s", "unterminated string");
  ExpectErrorAt("i = 1 & i = 2", 7, "&", "unexpected character");
  ExpectErrorAt("i ! 1", 3, "!", "unexpected character");
  ExpectErrorAt("i = - 1", 5, "-", "unexpected character");
  ExpectErrorAt("i = .5", 5, ".", "unexpected character");
  ExpectErrorAt("i = 1.2.3", 5, "1.2.3", "malformed number");
  ExpectErrorAt("i = 12abc", 5, "12abc", "malformed number");
  ExpectErrorAt("f = 1e", 5, "1e", "malformed number");
  ExpectErrorAt("f = 5.", 5, "5.", "malformed number");
  ExpectErrorAt("f = 1e+", 5, "1e+", "malformed number");
  ExpectErrorAt("i = 9223372036854775808", 5, "9223372036854775808", "out of the range");
  ExpectErrorAt("i = -9223372036854775809", 5, "-9223372036854775809", "out of the range");
  ExpectErrorAt("f = 1e999", 5, "1e999", "out of the range");
  // Unexpected end of input.
  ExpectErrorAt("i = ", 5, "", "unexpected end of filter");
  ExpectErrorAt("i =", 4, "", "unexpected end of filter");
  ExpectErrorAt("i", 2, "", "unexpected end of filter");
  ExpectErrorAt("(i = 1", 7, "", "expected ')'");
  ExpectErrorAt("i = 1 AND", 10, "", "unexpected end of filter");
  ExpectErrorAt("NOT", 4, "", "unexpected end of filter");
  ExpectErrorAt("i IN (1,", 9, "", "unexpected end of filter");
  ExpectErrorAt("i IN (1", 8, "", "expected ',' or ')'");
  // Trailing garbage.
  ExpectErrorAt("i = 1 )", 7, ")", "expected AND, OR or end of filter");
  ExpectErrorAt("i = 1 s = 2", 7, "s", "expected AND, OR or end of filter");
  ExpectErrorAt("i = 1 2", 7, "2", "expected AND, OR or end of filter");
  // Grammar.
  ExpectErrorAt("i IN ()", 7, ")", "empty IN list");
  ExpectErrorAt("i IN 1", 6, "1", "expected '('");
  ExpectErrorAt("i NOT 1", 7, "1", "expected IN after NOT");
  ExpectErrorAt("i IS 1", 6, "1", "expected NULL");
  ExpectErrorAt("i IS NOT 1", 10, "1", "expected NULL after IS NOT");
  ExpectErrorAt("i BETWEEN 1 OR 2", 13, "OR", "expected AND in BETWEEN");
  ExpectErrorAt("i 1", 3, "1", "expected an operator");
  ExpectErrorAt("= 1", 1, "=", "expected an attribute name");
  ExpectErrorAt("AND i = 1", 1, "AND", "expected an attribute name");
  ExpectErrorAt("i = NULL", 5, "NULL", "IS NULL");
  ExpectErrorAt("i = i", 5, "i", "expected a literal");
  ExpectErrorAt("()", 2, ")", "expected an attribute name");
  // Types.
  ExpectErrorAt("i = 'x'", 5, "'x'", "'i' is int");
  ExpectErrorAt("i = true", 5, "true", "'i' is int");
  ExpectErrorAt("f IN (1, 'x')", 10, "'x'", "'f' is float");
  ExpectErrorAt("s = 1", 5, "1", "'s' is string");
  ExpectErrorAt("b = 1", 5, "1", "'b' is bool");
  ExpectErrorAt("b = 'true'", 5, "'true'", "'b' is bool");
  ExpectErrorAt("s < 'a'", 3, "<", "applies only to int and float");
  ExpectErrorAt("b >= true", 3, ">=", "applies only to int and float");
  ExpectErrorAt("s BETWEEN 'a' AND 'b'", 3, "BETWEEN", "applies only to int and float");
  ExpectErrorAt("i CONTAINS 1", 3, "CONTAINS", "CONTAINS applies only to tags");
  ExpectErrorAt("s contains 'a'", 3, "contains", "CONTAINS applies only to tags");
  ExpectErrorAt("t CONTAINS 1", 12, "1", "CONTAINS needs a 'string'");
  ExpectErrorAt("t = 'x'", 3, "=", "supports only CONTAINS");
  ExpectErrorAt("t IN ('x')", 3, "IN", "supports only CONTAINS");
  ExpectErrorAt("t NOT IN ('x')", 3, "NOT", "supports only CONTAINS");
  ExpectErrorAt("t BETWEEN 1 AND 2", 3, "BETWEEN", "supports only CONTAINS");
  ExpectErrorAt("i BETWEEN 1 AND 'z'", 17, "'z'", "'i' is int");
  // Positions count characters, not bytes.
  ExpectErrorAt("s = 'é✓' AND zz = 1", 14, "zz", "unknown attribute");
  // The first error in the text wins, lexical or not.
  ExpectErrorAt("i = = 'unterminated", 5, "=", "expected a literal");
  ExpectErrorAt("zz = 'unterminated", 1, "zz", "unknown attribute");
}

TEST(FilterParseTest, ExactMessageFormat) {
  EXPECT_EQ(Error("i = 1 AND zz = 2"),
            "filter: at position 11: unknown attribute 'zz' (attributes: i, f, s, b, t, Price_2)");
  EXPECT_EQ(Error("s = 'abc"), "filter: at position 5: unterminated string (got 'abc)");
  EXPECT_EQ(Error("i = '5'"),
            "filter: at position 5: attribute 'i' is int and can only be compared with a number "
            "(got '5')");
  // A long lexeme is shortened in the message.
  std::string m = Error("s = '" + std::string(500, 'x'));
  EXPECT_LT(m.size(), 120u) << m;
}

TEST(FilterParseTest, DeepNestingIsAnErrorNotACrash) {
  auto nots = [](size_t n) {
    std::string s;
    for (size_t k = 0; k < n; ++k) s += "NOT ";
    return s + "i = 1";
  };
  auto parens = [](size_t n) { return std::string(n, '(') + "i = 1" + std::string(n, ')'); };
  EXPECT_EQ(Error(nots(200)), "");
  EXPECT_EQ(Error(parens(200)), "");
  ExpectErrorAt(nots(300), 4 * 256 + 1, "NOT", "nested deeper than 256");
  ExpectErrorAt(parens(300), 257, "(", "nested deeper than 256");
  EXPECT_NE(Error(nots(1000000)), "");
  EXPECT_NE(Error(parens(1000000)), "");
  // Long flat chains are not nesting and must work.
  std::string chain = "i = 0";
  for (int k = 1; k < 20000; ++k) chain += (k % 2 ? " AND i = " : " OR i = ") + std::to_string(k);
  EXPECT_EQ(Error(chain), "");
}

TEST(FilterParseTest, TypeCheckedTreeRecordsAttributes) {
  std::unique_ptr<Filter> f;
  ASSERT_TRUE(Filter::Parse("  f BETWEEN 1 AND 2.5", Spec(), &f).ok());
  const FilterNode& n = f->root();
  EXPECT_EQ(n.kind, FilterNode::Kind::kBetween);
  EXPECT_EQ(n.attr, 1u);
  EXPECT_EQ(n.attr_type, AttrType::kFloat);
  EXPECT_EQ(n.pos, 3u);
  ASSERT_EQ(n.literals.size(), 2u);
  EXPECT_EQ(n.literals[0].kind, FilterLiteral::Kind::kInt);
  EXPECT_EQ(n.literals[1].kind, FilterLiteral::Kind::kDecimal);
  EXPECT_EQ(n.literals[1].d, 2.5);
  EXPECT_EQ(n.literals[1].pos, 19u);
}

}  // namespace
}  // namespace sieve
