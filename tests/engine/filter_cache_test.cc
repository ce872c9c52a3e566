// Copyright 2026 The Sieve Authors.
//
// FilterCache (engine/filter_cache.h): hits only at the same text, shard image and version; a
// newer version replaces an older one; the byte bound evicts the least recently used.

#include "engine/filter_cache.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

namespace sieve {
namespace {

std::shared_ptr<const RowSet> Set(uint32_t begin, uint32_t end) {
  return std::make_shared<const RowSet>(RowSet::Range(begin, end));
}

TEST(FilterCacheTest, HitsOnlyAtTheSameTextInstanceAndVersion) {
  FilterCache cache(1 << 20);
  auto a = Set(0, 10);
  cache.Insert("cat = 1", 7, 3, a);
  EXPECT_EQ(cache.Find("cat = 1", 7, 3), a);
  EXPECT_EQ(cache.Find("cat = 1", 7, 4), nullptr);  // the shard changed since
  EXPECT_EQ(cache.Find("cat = 1", 8, 3), nullptr);  // another shard image
  EXPECT_EQ(cache.Find("cat = 2", 7, 3), nullptr);
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(cache.misses(), 3u);
  // A newer version replaces the entry; an older one never overwrites a newer.
  auto b = Set(0, 20);
  cache.Insert("cat = 1", 7, 4, b);
  EXPECT_EQ(cache.Find("cat = 1", 7, 3), nullptr);
  EXPECT_EQ(cache.Find("cat = 1", 7, 4), b);
  cache.Insert("cat = 1", 7, 3, a);
  EXPECT_EQ(cache.Find("cat = 1", 7, 4), b);
  // The text is compared whole (an instance number is not confused with text).
  cache.Insert(std::string("x\0y", 3), 1, 1, a);
  EXPECT_EQ(cache.Find(std::string("x\0y", 3), 1, 1), a);
  EXPECT_EQ(cache.Find("x", 1, 1), nullptr);
  cache.Insert("", 1, 1, b);
  EXPECT_EQ(cache.Find("", 1, 1), b);
}

TEST(FilterCacheTest, TheByteBoundEvictsTheLeastRecentlyUsed) {
  uint64_t one = 0;  // what one entry below holds
  {
    FilterCache probe(1 << 20);
    probe.Insert("f0", 1, 1, Set(0, 1 << 20));
    one = probe.bytes();
  }
  ASSERT_GT(one, 0u);
  FilterCache cache(3 * one + one / 2);
  cache.Insert("f1", 1, 1, Set(0, 1 << 20));
  cache.Insert("f2", 1, 1, Set(0, 1 << 20));
  cache.Insert("f3", 1, 1, Set(0, 1 << 20));
  EXPECT_EQ(cache.bytes(), 3 * one);
  ASSERT_NE(cache.Find("f1", 1, 1), nullptr);  // f1 is now the most recent
  cache.Insert("f4", 1, 1, Set(0, 1 << 20));
  cache.Insert("f5", 1, 1, Set(0, 1 << 20));
  EXPECT_LE(cache.bytes(), 3 * one);
  EXPECT_NE(cache.Find("f1", 1, 1), nullptr);
  EXPECT_NE(cache.Find("f5", 1, 1), nullptr);
  EXPECT_EQ(cache.Find("f2", 1, 1), nullptr);
  // A set larger than the whole bound is not kept, and nothing is with a bound of 0.
  FilterCache tiny(16);
  tiny.Insert("f", 1, 1, Set(0, 5));
  EXPECT_EQ(tiny.Find("f", 1, 1), nullptr);
  EXPECT_EQ(tiny.bytes(), 0u);
  FilterCache none(0);
  none.Insert("f", 1, 1, Set(0, 5));
  EXPECT_EQ(none.Find("f", 1, 1), nullptr);
}

}  // namespace
}  // namespace sieve
