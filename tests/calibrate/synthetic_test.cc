// Copyright 2026 The Sieve Authors.
//
// The sweep's synthetic data (query/calibrate/synthetic.h): exact counts, overlaps, ranges.

#include "query/calibrate/synthetic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace sieve::calibrate {
namespace {

// RoundToHalf is the float16 conversion for every value the generator makes (k / 2^23 - 1).
TEST(SyntheticTest, RoundToHalfIsTheFloat16Conversion) {
  size_t mismatches = 0;
  for (uint32_t k = 0; k < (1u << 24); ++k) {
    const float x = static_cast<float>(k) / 8388608.0f - 1.0f;
    const float want = static_cast<float>(static_cast<_Float16>(x));
    const float got = RoundToHalf(x);
    if (std::memcmp(&want, &got, sizeof(float)) != 0 && ++mismatches <= 3) {
      ADD_FAILURE() << "k " << k << ": " << x << " -> " << got << ", float16 " << want;
    }
  }
  EXPECT_EQ(mismatches, 0u);
  FloatBuffer v;
  MakeVectors(300, 8, /*round_half=*/true, 3, &v, nullptr);
  for (float x : v) EXPECT_EQ(x, static_cast<float>(static_cast<_Float16>(x)));
}

// Bernoulli sets: the same rows for a seed, about p of them, on every chunk boundary.
TEST(SyntheticTest, BernoulliAcrossChunks) {
  const uint64_t rows = 3 * 65536 + 123;
  RowSet a = Bernoulli(rows, 0.3, 11);
  RowSet b = Bernoulli(rows, 0.3, 11);
  EXPECT_EQ(a, b);
  EXPECT_NEAR(static_cast<double>(a.Cardinality()) / rows, 0.3, 0.01);
  EXPECT_LT(a.End(), rows + 1);
  EXPECT_EQ(Bernoulli(rows, 1.0, 5).Cardinality(), rows);
  EXPECT_EQ(Bernoulli(rows, 0.0, 5).Cardinality(), 0u);
}

TEST(SyntheticTest, VectorsAreUniformAndDeterministic) {
  FloatBuffer a, b, norms;
  MakeVectors(1000, 16, /*round_half=*/false, 7, &a, &norms);
  MakeVectors(1000, 16, false, 7, &b, nullptr);
  ASSERT_EQ(a.size(), 16000u);
  EXPECT_EQ(a, b);
  double sum = 0;
  for (float x : a) {
    ASSERT_GE(x, -1.0f);
    ASSERT_LT(x, 1.0f);
    sum += x;
  }
  EXPECT_LT(std::fabs(sum / a.size()), 0.05);
  ASSERT_EQ(norms.size(), 1000u);
  double n0 = 0;
  for (int d = 0; d < 16; ++d) n0 += double{a[d]} * a[d];
  EXPECT_NEAR(norms[0], n0, 1e-4);
  FloatBuffer h;
  MakeVectors(10, 8, /*round_half=*/true, 7, &h, nullptr);
  for (float x : h) EXPECT_EQ(x, static_cast<float>(static_cast<_Float16>(x)));
}

TEST(SyntheticTest, ExactlyHasTheCount) {
  for (uint64_t n : {0ull, 1ull, 37ull, 5000ull, 9999ull, 10000ull, 20000ull}) {
    const RowSet s = Exactly(10000, n, 3);
    EXPECT_EQ(s.Cardinality(), std::min<uint64_t>(n, 10000)) << n;
    EXPECT_LE(s.End(), 10000u);
  }
  EXPECT_NEAR(static_cast<double>(Bernoulli(100000, 0.1, 5).Cardinality()), 10000.0, 500.0);
}

TEST(SyntheticTest, SeriesCountsMergeFractionsAndCounts) {
  EXPECT_EQ(SeriesCounts({0.5, 1.0, 0.00001}, {100, 1000, 5000, 20000}, 10000),
            (std::vector<uint64_t>{100, 1000, 5000, 10000}));
}

TEST(SyntheticTest, FiltersOfEachOverlap) {
  const PointFilters bitset = BuildFilters(20000, 2000, false, Overlap::kShared, 10, 1);
  ASSERT_EQ(bitset.sets.size(), 1u);
  EXPECT_EQ(bitset.mean, 2000u);
  EXPECT_EQ(bitset.union_rows, 2000u);
  const PointFilters shared = BuildFilters(20000, 2000, true, Overlap::kShared, 10, 1);
  ASSERT_EQ(shared.sets.size(), 1u);
  const PointFilters indep = BuildFilters(20000, 2000, true, Overlap::kIndependent, 10, 1);
  ASSERT_EQ(indep.sets.size(), 10u);
  EXPECT_NEAR(static_cast<double>(indep.mean), 2000.0, 200.0);
  EXPECT_GT(indep.union_rows, 5 * indep.mean);  // independent sets barely overlap
  EXPECT_GE(indep.max_rows, indep.mean);
  const PointFilters half = BuildFilters(20000, 2000, true, Overlap::kHalf, 10, 1);
  ASSERT_EQ(half.sets.size(), 10u);
  EXPECT_LT(half.union_rows, indep.union_rows);
}

}  // namespace
}  // namespace sieve::calibrate
