// Copyright 2026 The Sieve Authors.

#include "index/attribute_index.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace sieve {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// Columns are filled directly (not through Column::Append) so the index is tested against
// exactly the layout column.h documents: one entry per row in the type's vector.
Column IntColumn(const std::vector<std::optional<int64_t>>& v, AttrType type = AttrType::kInt) {
  Column c;
  c.type = type;
  for (const auto& x : v) {
    c.valid.push_back(x.has_value());
    c.ints.push_back(x.value_or(0));
  }
  return c;
}

Column FloatColumn(const std::vector<std::optional<double>>& v) {
  Column c;
  c.type = AttrType::kFloat;
  for (const auto& x : v) {
    c.valid.push_back(x.has_value());
    c.floats.push_back(x.value_or(0));
  }
  return c;
}

Column StringColumn(const std::vector<std::optional<std::string>>& v) {
  Column c;
  c.type = AttrType::kString;
  for (const auto& x : v) {
    c.valid.push_back(x.has_value());
    c.strings.push_back(x.value_or(""));
  }
  return c;
}

Column TagsColumn(const std::vector<std::optional<std::vector<std::string>>>& v) {
  Column c;
  c.type = AttrType::kTags;
  for (const auto& x : v) {
    c.valid.push_back(x.has_value());
    c.tags.push_back(x.value_or(std::vector<std::string>{}));
  }
  return c;
}

std::vector<uint32_t> Rows(const RowSet& s) {
  std::vector<uint32_t> out;
  s.ForEach([&](uint32_t v) { out.push_back(v); });
  return out;
}

using V = std::vector<uint32_t>;

TEST(AttributeIndexTest, IntEqualityRangesAndNulls) {
  AttributeIndex idx(AttrType::kInt);
  idx.Append(IntColumn({5, std::nullopt, -3, 5, kMin, kMax, 0}));
  EXPECT_EQ(idx.rows(), 7u);
  EXPECT_EQ(idx.type(), AttrType::kInt);
  EXPECT_EQ(Rows(idx.nulls()), V({1}));
  EXPECT_EQ(Rows(idx.non_null()), V({0, 2, 3, 4, 5, 6}));
  EXPECT_EQ(Rows(idx.EqualInt(5)), V({0, 3}));
  EXPECT_EQ(Rows(idx.EqualInt(0)), V({6}));  // the null row's stored 0 is not a value
  EXPECT_TRUE(idx.EqualInt(42).Empty());
  EXPECT_EQ(Rows(idx.IntRange(-3, 5)), V({0, 2, 3, 6}));
  EXPECT_EQ(Rows(idx.IntRange(kMin, kMax)), V({0, 2, 3, 4, 5, 6}));
  EXPECT_EQ(Rows(idx.IntRange(kMin, kMin)), V({4}));
  EXPECT_EQ(Rows(idx.IntRange(kMax, kMax)), V({5}));
  EXPECT_EQ(Rows(idx.IntRange(kMin + 1, kMax - 1)), V({0, 2, 3, 6}));
  EXPECT_TRUE(idx.IntRange(6, 4).Empty());
  EXPECT_TRUE(idx.IntRange(1, 4).Empty());
  EXPECT_EQ(std::get<int64_t>(idx.ValueAt(4)), kMin);
  EXPECT_TRUE(IsNull(idx.ValueAt(1)));
  EXPECT_TRUE(IsNull(idx.ValueAt(100)));
}

TEST(AttributeIndexTest, FloatRangesBoundsAndNaN) {
  AttributeIndex idx(AttrType::kFloat);
  idx.Append(FloatColumn({0.5, kNaN, 1.0, std::nullopt, -kInf, kInf, 1.0, -0.0}));
  EXPECT_EQ(Rows(idx.non_null()), V({0, 1, 2, 4, 5, 6, 7}));
  EXPECT_EQ(Rows(idx.FloatRange(0.5, true, 1.0, true)), V({0, 2, 6}));
  EXPECT_EQ(Rows(idx.FloatRange(0.5, false, 1.0, true)), V({2, 6}));
  EXPECT_EQ(Rows(idx.FloatRange(0.5, true, 1.0, false)), V({0}));
  EXPECT_TRUE(idx.FloatRange(0.5, false, 1.0, false).Empty());
  EXPECT_EQ(Rows(idx.FloatRange(1.0, true, 1.0, true)), V({2, 6}));
  EXPECT_TRUE(idx.FloatRange(1.0, true, 1.0, false).Empty());
  EXPECT_EQ(Rows(idx.FloatRange(-kInf, true, kInf, true)), V({0, 2, 4, 5, 6, 7}));  // no NaN
  EXPECT_EQ(Rows(idx.FloatRange(-kInf, false, kInf, false)), V({0, 2, 6, 7}));
  EXPECT_EQ(Rows(idx.FloatRange(0.0, true, 0.0, true)), V({7}));  // -0.0 == 0.0
  EXPECT_TRUE(idx.FloatRange(kNaN, true, kInf, true).Empty());
  EXPECT_TRUE(idx.FloatRange(-kInf, true, kNaN, true).Empty());
  EXPECT_TRUE(std::isnan(std::get<double>(idx.ValueAt(1))));
  EXPECT_EQ(std::get<double>(idx.ValueAt(0)), 0.5);
}

TEST(AttributeIndexTest, BoolStringTags) {
  AttributeIndex b(AttrType::kBool);
  b.Append(IntColumn({1, 0, std::nullopt, 1}, AttrType::kBool));
  EXPECT_EQ(Rows(b.EqualInt(1)), V({0, 3}));
  EXPECT_EQ(Rows(b.EqualInt(0)), V({1}));
  EXPECT_EQ(std::get<bool>(b.ValueAt(0)), true);
  EXPECT_TRUE(IsNull(b.ValueAt(2)));

  AttributeIndex s(AttrType::kString);
  s.Append(StringColumn({"x", "", std::nullopt, "x", "it's"}));
  EXPECT_EQ(Rows(s.EqualString("x")), V({0, 3}));
  EXPECT_EQ(Rows(s.EqualString("")), V({1}));  // empty string is a value, not null
  EXPECT_EQ(Rows(s.EqualString("it's")), V({4}));
  EXPECT_TRUE(s.EqualString("y").Empty());
  EXPECT_EQ(std::get<std::string>(s.ValueAt(4)), "it's");

  AttributeIndex t(AttrType::kTags);
  t.Append(TagsColumn({std::vector<std::string>{"a", "b"}, std::vector<std::string>{}, std::nullopt,
                       std::vector<std::string>{"b", "b"}}));
  EXPECT_EQ(Rows(t.ContainsTag("b")), V({0, 3}));
  EXPECT_EQ(Rows(t.ContainsTag("a")), V({0}));
  EXPECT_TRUE(t.ContainsTag("c").Empty());
  EXPECT_EQ(Rows(t.nulls()), V({2}));
  EXPECT_EQ(Rows(t.non_null()), V({0, 1, 3}));  // an empty list is not null
  EXPECT_EQ(std::get<std::vector<std::string>>(t.ValueAt(0)), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(std::get<std::vector<std::string>>(t.ValueAt(1)).empty());
}

// Brute force over the values appended so far.
V IntOracle(const std::vector<std::optional<int64_t>>& all, int64_t lo, int64_t hi) {
  V out;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i] && *all[i] >= lo && *all[i] <= hi) out.push_back(i);
  }
  return out;
}

V FloatOracle(const std::vector<std::optional<double>>& all, double lo, bool li, double hi,
              bool hi_incl) {
  V out;
  for (size_t i = 0; i < all.size(); ++i) {
    if (!all[i]) continue;
    double v = *all[i];
    if ((li ? v >= lo : v > lo) && (hi_incl ? v <= hi : v < hi)) out.push_back(i);
  }
  return out;
}

TEST(AttributeIndexTest, RandomRangesWithAppendsBetweenQueries) {
  std::mt19937_64 rng(11);
  AttributeIndex ints(AttrType::kInt), floats(AttrType::kFloat);
  std::vector<std::optional<int64_t>> all_i;
  std::vector<std::optional<double>> all_f;
  // Batches of very different sizes, so runs of several sizes coexist and merge; queries
  // after every batch.
  for (int batch = 0; batch < 30; ++batch) {
    size_t n = batch % 5 == 0 ? 20000 + rng() % 30000 : rng() % 3000;
    std::vector<std::optional<int64_t>> bi;
    std::vector<std::optional<double>> bf;
    for (size_t i = 0; i < n; ++i) {
      if (rng() % 7 == 0) {
        bi.push_back(std::nullopt);
      } else if (rng() % 50 == 0) {
        bi.push_back(rng() % 2 ? kMin : kMax);
      } else {
        bi.push_back(static_cast<int64_t>(rng() % 2001) - 1000);
      }
      if (rng() % 7 == 0) {
        bf.push_back(std::nullopt);
      } else if (rng() % 40 == 0) {
        bf.push_back(kNaN);
      } else {
        switch (rng() % 60) {
          case 0:
            bf.push_back(-0.0);
            break;
          case 1:
            bf.push_back(rng() % 2 ? kInf : -kInf);
            break;
          default:
            bf.push_back(static_cast<double>(rng() % 1000) / 100.0 - 5.0);  // many ties
        }
      }
    }
    ints.Append(IntColumn(bi));
    floats.Append(FloatColumn(bf));
    all_i.insert(all_i.end(), bi.begin(), bi.end());
    all_f.insert(all_f.end(), bf.begin(), bf.end());
    for (int q = 0; q < 6; ++q) {
      int64_t a = static_cast<int64_t>(rng() % 2400) - 1200,
              b = static_cast<int64_t>(rng() % 2400) - 1200;
      if (q == 0) b = a + 1500;  // wide: takes the complement path
      if (q == 1) a = kMin;
      ASSERT_EQ(Rows(ints.IntRange(a, b)), IntOracle(all_i, a, b)) << a << ".." << b;
      double fa = static_cast<double>(rng() % 1100) / 100.0 - 5.5;
      double fb = q == 0 ? fa + 8 : static_cast<double>(rng() % 1100) / 100.0 - 5.5;
      if (q == 2) fa = -kInf;
      if (q == 3) fb = 0.0;
      bool li = rng() % 2, hi = rng() % 2;
      ASSERT_EQ(Rows(floats.FloatRange(fa, li, fb, hi)), FloatOracle(all_f, fa, li, fb, hi))
          << fa << (li ? "[" : "(") << fb << (hi ? "]" : ")");
    }
  }
}

TEST(AttributeIndexTest, ConcurrentFirstQueriesAgree) {
  // The first range query after an append flushes the tail under the index's mutex; many
  // threads doing it at once must all see the same answer.
  AttributeIndex idx(AttrType::kInt);
  std::vector<std::optional<int64_t>> v;
  std::mt19937_64 rng(12);
  for (int i = 0; i < 200000; ++i) v.push_back(static_cast<int64_t>(rng() % 1000));
  idx.Append(IntColumn(v));
  V expect = IntOracle(v, 100, 500);
  std::vector<std::thread> threads;
  std::vector<V> got(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] { got[t] = Rows(idx.IntRange(100, 500)); });
  }
  for (auto& t : threads) t.join();
  for (const V& g : got) EXPECT_EQ(g, expect);
}

TEST(AttributeIndexTest, MoveKeepsContents) {
  AttributeIndex a(AttrType::kInt);
  a.Append(IntColumn({1, 2, 3}));
  AttributeIndex b = std::move(a);
  EXPECT_EQ(Rows(b.IntRange(2, 3)), V({1, 2}));
  std::vector<AttributeIndex> many;
  many.emplace_back(AttrType::kString);
  many.emplace_back(AttrType::kTags);  // vector growth moves them
  EXPECT_EQ(many[0].type(), AttrType::kString);
}

}  // namespace
}  // namespace sieve
