// Copyright 2026 The Sieve Authors.

#include "index/vector_arena.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/testutil.h"

namespace sieve {
namespace {

TEST(VectorArenaTest, AppendsContiguousRowsWithNorms) {
  const uint32_t dim = 7;
  VectorArena arena(dim);
  EXPECT_EQ(arena.rows(), 0u);
  std::vector<float> all;
  uint64_t gen = arena.generation();
  for (uint32_t batch = 0; batch < 20; ++batch) {
    uint32_t n = 1 + batch * 13;
    std::vector<float> v = test::RandomVectors(n, dim, batch);
    arena.Append(v.data(), n);
    EXPECT_GT(arena.generation(), gen);
    gen = arena.generation();
    all.insert(all.end(), v.begin(), v.end());
  }
  ASSERT_EQ(arena.rows() * size_t{dim}, all.size());
  for (uint32_t r = 0; r < arena.rows(); ++r) {
    double norm = 0;
    for (uint32_t d = 0; d < dim; ++d) {
      ASSERT_EQ(arena.row(r)[d], all[size_t{r} * dim + d]);
      norm += double{all[size_t{r} * dim + d]} * all[size_t{r} * dim + d];
    }
    EXPECT_EQ(arena.sq_norms()[r], static_cast<float>(norm));
    EXPECT_EQ(arena.row(r), arena.data() + size_t{r} * dim);  // one contiguous block
  }
  arena.Append(nullptr, 0);
  EXPECT_EQ(arena.generation(), gen);  // nothing appended, nothing to refresh
}

// The largest row norm (what the top-k plan bounds products by): every row's, kept by copies,
// infinite once a row's norm is not finite.
TEST(VectorArenaTest, KeepsTheLargestNorm) {
  VectorArena arena(2);
  EXPECT_EQ(arena.max_sq_norm(), 0.0f);
  const std::vector<float> rows = {1, 2, 3, 0, 0.5f, 0.5f};
  arena.Append(rows.data(), 3);
  EXPECT_EQ(arena.max_sq_norm(), 9.0f);
  EXPECT_EQ(arena.CopyWithRoom(8)->max_sq_norm(), 9.0f);
  const std::vector<float> nan_row = {std::nanf(""), 1};
  arena.Append(nan_row.data(), 1);
  EXPECT_TRUE(std::isinf(arena.max_sq_norm()));
  arena.Append(rows.data(), 1);
  EXPECT_TRUE(std::isinf(arena.max_sq_norm()));
}

TEST(VectorArenaTest, ReserveKeepsRowsInPlace) {
  VectorArena arena(4);
  arena.Reserve(1000);
  std::vector<float> v = test::RandomVectors(10, 4, 1);
  arena.Append(v.data(), 10);
  const float* p = arena.data();
  for (int i = 0; i < 99; ++i) arena.Append(v.data(), 10);
  EXPECT_EQ(arena.data(), p);  // within the reservation nothing moved
  EXPECT_EQ(arena.rows(), 1000u);
}

}  // namespace
}  // namespace sieve
