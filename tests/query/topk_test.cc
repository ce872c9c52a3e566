// Copyright 2026 The Sieve Authors.

#include "query/topk.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

namespace sieve {
namespace {

using Pairs = std::vector<std::pair<uint32_t, float>>;

// The reference: sort everything, best first, ties by the smaller ordinal.
Pairs Reference(Pairs all, size_t k, bool larger_better) {
  std::sort(all.begin(), all.end(), [&](const auto& a, const auto& b) {
    if (a.second != b.second) return larger_better ? a.second > b.second : a.second < b.second;
    return a.first < b.first;
  });
  all.resize(std::min(k, all.size()));
  return all;
}

TEST(TopKTest, MatchesFullSortWithTiesBothOrders) {
  std::mt19937 rng(7);
  for (bool larger : {false, true}) {
    for (uint32_t k : {1u, 5u, 64u, 1000u}) {
      // Few distinct scores: many ties, offered in a shuffled ordinal order.
      std::uniform_int_distribution<int> score(0, 20);
      Pairs all;
      for (uint32_t o = 0; o < 500; ++o) all.emplace_back(o, static_cast<float>(score(rng)));
      std::shuffle(all.begin(), all.end(), rng);
      TopK top(k, larger);
      for (const auto& [o, s] : all) top.Push(s, o);
      EXPECT_EQ(top.Sorted(), Reference(all, k, larger)) << "k=" << k << " larger=" << larger;
    }
  }
}

TEST(TopKTest, MetricOrdering) {
  TopK ip(2, Metric::kInnerProduct);
  TopK l2(2, Metric::kL2);
  for (uint32_t o = 0; o < 4; ++o) {
    ip.Push(static_cast<float>(o), o);
    l2.Push(static_cast<float>(o), o);
  }
  EXPECT_EQ(ip.Sorted(), (Pairs{{3, 3.0f}, {2, 2.0f}}));
  EXPECT_EQ(l2.Sorted(), (Pairs{{0, 0.0f}, {1, 1.0f}}));
}

TEST(TopKTest, WorstKeyAndNaN) {
  TopK top(2, false);
  EXPECT_EQ(top.worst_key(), std::numeric_limits<float>::infinity());
  top.Push(std::nanf(""), 0);
  EXPECT_EQ(top.size(), 0u);
  top.Push(3.0f, 1);
  top.Push(1.0f, 2);
  EXPECT_EQ(top.worst_key(), 3.0f);
  top.Push(3.0f, 0);  // equal key, smaller ordinal: replaces ordinal 1
  EXPECT_EQ(top.Sorted(), (Pairs{{2, 1.0f}, {0, 3.0f}}));
  top.Push(3.0f, 5);  // equal key, larger ordinal: rejected
  EXPECT_EQ(top.Sorted(), (Pairs{{2, 1.0f}, {0, 3.0f}}));
}

TEST(TopKTest, BlockHelpersAndMerge) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  const size_t n = 1000;
  std::vector<float> keys(n);
  for (auto& x : keys) x = u(rng);
  std::vector<uint32_t> bits((n + 31) / 32);
  Pairs passing, all;
  for (uint32_t o = 0; o < n; ++o) {
    all.emplace_back(o, keys[o]);
    if (o % 3 == 0 || (o > 200 && o < 300)) {  // sparse words and a full run
      bits[o / 32] |= 1u << (o % 32);
      passing.emplace_back(o, keys[o]);
    }
  }
  TopK plain(10, false), masked(10, false), indexed(10, false), halves(10, false),
      second(10, false);
  plain.PushKeys(keys.data(), n, 0);
  masked.PushKeysMasked(keys.data(), n, 0, bits.data());
  std::vector<uint32_t> ords(n);
  for (uint32_t o = 0; o < n; ++o) ords[o] = o;
  indexed.PushKeysIndexed(keys.data(), 1, n, ords.data(), bits.data());
  halves.PushKeysMasked(keys.data(), 512, 0, bits.data());
  second.PushKeysMasked(keys.data() + 512, n - 512, 512, bits.data());
  halves.Merge(second);
  EXPECT_EQ(plain.Sorted(), Reference(all, 10, false));
  EXPECT_EQ(masked.Sorted(), Reference(passing, 10, false));
  EXPECT_EQ(indexed.Sorted(), Reference(passing, 10, false));
  EXPECT_EQ(halves.Sorted(), Reference(passing, 10, false));
}

TEST(TopKTest, FewerCandidatesThanK) {
  TopK top(100, true);
  top.Push(1.0f, 4);
  top.Push(2.0f, 9);
  EXPECT_FALSE(top.full());
  EXPECT_EQ(top.Sorted(), (Pairs{{9, 2.0f}, {4, 1.0f}}));
}

}  // namespace
}  // namespace sieve
