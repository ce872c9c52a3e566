// Copyright 2026 The Sieve Authors.

#include "index/row_set.h"

#include <gtest/gtest.h>
#include <roaring/roaring.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

namespace sieve {
namespace {

std::vector<uint32_t> Values(const RowSet& s) {
  std::vector<uint32_t> out;
  s.ForEach([&](uint32_t v) { out.push_back(v); });
  return out;
}

// Which container kinds a set holds, to prove a test exercised each.
struct ContainerKinds {
  bool array = false, bitset = false, run = false;
};

ContainerKinds Kinds(const RowSet& s) {
  ContainerKinds k;
  const roaring_array_t& ra = s.raw()->high_low_container;
  for (int32_t i = 0; i < ra.size; ++i) {
    uint8_t type = ra.typecodes[i];
    container_unwrap_shared(ra.containers[i], &type);
    k.array |= type == ARRAY_CONTAINER_TYPE_CODE;
    k.bitset |= type == BITSET_CONTAINER_TYPE_CODE;
    k.run |= type == RUN_CONTAINER_TYPE_CODE;
  }
  return k;
}

// A random set mixing sparse (array), dense (bitset) and run-shaped regions.
std::set<uint32_t> RandomMix(std::mt19937_64& rng, uint32_t universe) {
  std::set<uint32_t> s;
  for (uint32_t base = 0; base < universe; base += 1u << 16) {
    uint32_t end = std::min<uint64_t>(universe, uint64_t{base} + (1u << 16));
    switch (rng() % 4) {
      case 0:  // sparse
        for (int i = 0; i < 200; ++i) s.insert(base + rng() % (end - base));
        break;
      case 1:  // dense random
        for (uint32_t v = base; v < end; ++v) {
          if (rng() % 3 == 0) s.insert(v);
        }
        break;
      case 2: {  // a few long runs
        for (int r = 0; r < 3; ++r) {
          uint32_t a = base + rng() % (end - base);
          uint32_t len = rng() % 20000;
          for (uint32_t v = a; v < std::min<uint64_t>(end, uint64_t{a} + len); ++v) s.insert(v);
        }
        break;
      }
      default:  // empty chunk
        break;
    }
  }
  return s;
}

RowSet FromStdSet(const std::set<uint32_t>& s) {
  std::vector<uint32_t> v(s.begin(), s.end());
  RowSet r = RowSet::Of(v.data(), v.size());
  r.RunOptimize();
  return r;
}

TEST(RowSetTest, EmptyAndBasics) {
  RowSet s;
  EXPECT_TRUE(s.Empty());
  EXPECT_EQ(s.Cardinality(), 0u);
  EXPECT_EQ(s.End(), 0u);
  s.Add(5);
  s.Add(70000);
  s.Add(5);
  EXPECT_EQ(s.Cardinality(), 2u);
  EXPECT_TRUE(s.Contains(5));
  EXPECT_TRUE(s.Contains(70000));
  EXPECT_FALSE(s.Contains(6));
  EXPECT_EQ(s.End(), 70001u);
  s.Remove(70000);
  EXPECT_EQ(s.End(), 6u);
}

TEST(RowSetTest, RangeAndOf) {
  RowSet r = RowSet::Range(10, 20);
  EXPECT_EQ(r.Cardinality(), 10u);
  EXPECT_TRUE(r.Contains(10));
  EXPECT_TRUE(r.Contains(19));
  EXPECT_FALSE(r.Contains(20));
  EXPECT_TRUE(RowSet::Range(7, 7).Empty());
  EXPECT_TRUE(RowSet::Range(9, 3).Empty());
  RowSet big = RowSet::Range(0, 3000000);
  EXPECT_EQ(big.Cardinality(), 3000000u);
  EXPECT_TRUE(Kinds(big).run);  // a range is stored as runs, not 46 bitsets

  uint32_t vals[] = {9, 1, 5, 1, 9};
  RowSet o = RowSet::Of(vals, 5);
  EXPECT_EQ(Values(o), (std::vector<uint32_t>{1, 5, 9}));
}

TEST(RowSetTest, AddRangeRemoveRangeFrom) {
  RowSet s;
  s.AddRange(100, 200000);
  s.AddMany(std::vector<uint32_t>{1, 2, 3}.data(), 3);
  EXPECT_EQ(s.Cardinality(), 199900u + 3);
  s.RemoveRangeFrom(150);
  EXPECT_EQ(s.Cardinality(), 50u + 3);
  EXPECT_EQ(s.End(), 150u);
  s.RemoveRangeFrom(0);
  EXPECT_TRUE(s.Empty());
  s.Add(UINT32_MAX - 1);
  s.RemoveRangeFrom(UINT32_MAX - 1);
  EXPECT_TRUE(s.Empty());
}

TEST(RowSetTest, SetAlgebraMatchesStdSet) {
  std::mt19937_64 rng(1);
  for (int iter = 0; iter < 20; ++iter) {
    auto a = RandomMix(rng, 300000), b = RandomMix(rng, 300000);
    RowSet ra = FromStdSet(a), rb = FromStdSet(b);
    std::vector<uint32_t> i, u, d;
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(i));
    std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(u));
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(d));
    EXPECT_EQ(Values(ra & rb), i);
    EXPECT_EQ(Values(ra | rb), u);
    EXPECT_EQ(Values(ra - rb), d);
    RowSet x = ra;
    x &= rb;
    EXPECT_EQ(Values(x), i);
    x = ra;
    x |= rb;
    EXPECT_EQ(Values(x), u);
    x = ra;
    x -= rb;
    EXPECT_EQ(Values(x), d);
    EXPECT_EQ(ra.Cardinality(), a.size());
    EXPECT_TRUE(ra == FromStdSet(a));
    EXPECT_TRUE(ra != rb || a == b);
  }
}

TEST(RowSetTest, SelfAliasing) {
  RowSet a = RowSet::Range(0, 100);
  a &= a;
  EXPECT_EQ(a.Cardinality(), 100u);
  a |= a;
  EXPECT_EQ(a.Cardinality(), 100u);
  a -= a;
  EXPECT_TRUE(a.Empty());
  RowSet b = RowSet::Range(0, 10);
  b = b;  // NOLINT: self-assignment is the case under test
  EXPECT_EQ(b.Cardinality(), 10u);
}

TEST(RowSetTest, CopyAndMoveAreIndependent) {
  RowSet a = RowSet::Range(0, 10);
  RowSet b = a;
  b.Add(50);
  EXPECT_FALSE(a.Contains(50));
  RowSet c = std::move(b);
  EXPECT_TRUE(c.Contains(50));
  EXPECT_TRUE(b.Empty());  // NOLINT: moved-from sets are valid and empty
  b.Add(3);                // and usable
  EXPECT_TRUE(b.Contains(3));
  a = std::move(c);
  EXPECT_TRUE(a.Contains(50));
  EXPECT_TRUE(c.Empty());  // NOLINT
}

TEST(RowSetTest, UnionOfMany) {
  std::mt19937_64 rng(2);
  std::vector<RowSet> sets;
  std::set<uint32_t> all;
  for (int i = 0; i < 7; ++i) {
    auto s = RandomMix(rng, 200000);
    all.insert(s.begin(), s.end());
    sets.push_back(FromStdSet(s));
  }
  std::vector<const RowSet*> ptrs;
  for (auto& s : sets) ptrs.push_back(&s);
  EXPECT_EQ(Values(RowSet::Union(ptrs.data(), ptrs.size())),
            std::vector<uint32_t>(all.begin(), all.end()));
  EXPECT_TRUE(RowSet::Union(nullptr, 0).Empty());
  EXPECT_TRUE(RowSet::Union(ptrs.data(), 1) == sets[0]);
}

TEST(RowSetTest, ToArrayAndForEachAscending) {
  std::mt19937_64 rng(3);
  auto s = RandomMix(rng, 500000);
  RowSet r = FromStdSet(s);
  std::vector<uint32_t> arr(r.Cardinality());
  r.ToArray(arr.data());
  EXPECT_EQ(arr, std::vector<uint32_t>(s.begin(), s.end()));
  EXPECT_EQ(Values(r), arr);  // ForEach crosses many 256-value batches
}

void ExpectBitsetMatches(const std::set<uint32_t>& s, const RowSet& r, size_t n_words) {
  std::vector<uint32_t> expect(n_words, 0);
  for (uint32_t v : s) {
    if (v < n_words * 32) expect[v / 32] |= 1u << (v % 32);
  }
  // Pre-fill with garbage: every word must be written.
  std::vector<uint32_t> got(n_words + 1, 0xDEADBEEF);
  r.ToBitset(got.data(), n_words);
  EXPECT_EQ(got[n_words], 0xDEADBEEFu) << "wrote past n_words";
  got.resize(n_words);
  ASSERT_EQ(got, expect) << "n_words=" << n_words;
}

TEST(RowSetTest, ToBitsetMatchesNaiveOnEveryContainerKind) {
  std::mt19937_64 rng(4);
  ContainerKinds seen;
  for (int iter = 0; iter < 40; ++iter) {
    uint32_t universe = 1000 + rng() % 600000;
    auto s = RandomMix(rng, universe);
    RowSet r = FromStdSet(s);
    ContainerKinds k = Kinds(r);
    seen.array |= k.array;
    seen.bitset |= k.bitset;
    seen.run |= k.run;
    // Covering exactly, shorter than the set (truncation mid-container), and longer (zeros).
    size_t exact = (universe + 31) / 32;
    for (size_t n_words :
         {exact, exact / 3 + 1, exact + 5000, size_t{1}, size_t{2047}, size_t{2049}}) {
      ExpectBitsetMatches(s, r, n_words);
    }
  }
  EXPECT_TRUE(seen.array && seen.bitset && seen.run);
  ExpectBitsetMatches({}, RowSet(), 100);
  RowSet none;
  none.ToBitset(nullptr, 0);  // no words: nothing written
}

TEST(RowSetTest, ToBitsetHandlesSharedContainers) {
  // Copy-on-write copies share containers (SHARED_CONTAINER_TYPE_CODE).
  std::mt19937_64 rng(5);
  auto s = RandomMix(rng, 400000);
  RowSet a = FromStdSet(s);
  roaring_bitmap_set_copy_on_write(a.raw(), true);
  RowSet b = RowSet::Adopt(roaring_bitmap_copy(a.raw()));
  bool shared = false;
  const roaring_array_t& ra = b.raw()->high_low_container;
  for (int32_t i = 0; i < ra.size; ++i) shared |= ra.typecodes[i] == SHARED_CONTAINER_TYPE_CODE;
  EXPECT_TRUE(shared || ra.size == 0);
  ExpectBitsetMatches(s, b, (400000 + 31) / 32);
}

void ExpectChunkedLowsMatch(const std::set<uint32_t>& s, const RowSet& r, uint32_t c0,
                            uint32_t c1, uint64_t base) {
  std::vector<uint16_t> lows_expect;
  std::vector<uint64_t> starts_expect(c1 - c0 + 1, 0);
  for (uint32_t c = c0; c <= c1; ++c) {
    starts_expect[c - c0] = base + lows_expect.size();
    if (c == c1) break;
    for (auto it = s.lower_bound(c << 16); it != s.end() && (*it >> 16) == c; ++it) {
      lows_expect.push_back(static_cast<uint16_t>(*it));
    }
  }
  // Garbage past the end: nothing may be written there.
  std::vector<uint16_t> lows(lows_expect.size() + 1, 0xBEEF);
  std::vector<uint64_t> starts(c1 - c0 + 2, 77);
  r.ToChunkedLows(lows.data(), starts.data(), c0, c1, base);
  EXPECT_EQ(lows.back(), 0xBEEF) << "wrote past the chunks' ordinals";
  EXPECT_EQ(starts.back(), 77u);
  lows.pop_back();
  starts.pop_back();
  ASSERT_EQ(lows, lows_expect) << "chunks [" << c0 << ", " << c1 << ")";
  ASSERT_EQ(starts, starts_expect) << "chunks [" << c0 << ", " << c1 << ")";
  EXPECT_EQ(r.RangeCardinality(uint64_t{c0} << 16, uint64_t{c1} << 16), lows_expect.size());
}

TEST(RowSetTest, ToChunkedLowsMatchesNaiveOnEveryContainerKind) {
  std::mt19937_64 rng(14);
  ContainerKinds seen;
  for (int iter = 0; iter < 30; ++iter) {
    const uint32_t universe = 1000 + rng() % 900000;
    auto s = RandomMix(rng, universe);
    RowSet r = FromStdSet(s);
    ContainerKinds k = Kinds(r);
    seen.array |= k.array;
    seen.bitset |= k.bitset;
    seen.run |= k.run;
    const uint32_t chunks = (universe + 65535) / 65536;
    // Every chunk; fewer (ordinals past them left out); more (empty chunks at the end); ranges
    // that start past the first chunk (ordinals before them left out), and empty ones.
    for (uint32_t n : {chunks, chunks / 2, chunks + 3, 0u}) {
      ExpectChunkedLowsMatch(s, r, 0, n, iter * 1000);
    }
    const uint32_t a = static_cast<uint32_t>(rng() % (chunks + 1));
    const uint32_t b = a + static_cast<uint32_t>(rng() % (chunks + 2 - a));
    ExpectChunkedLowsMatch(s, r, a, b, iter * 7);
    ExpectChunkedLowsMatch(s, r, chunks / 2, chunks, 3);
    ExpectChunkedLowsMatch(s, r, a, a, 0);
  }
  EXPECT_TRUE(seen.array && seen.bitset && seen.run);
  ExpectChunkedLowsMatch({}, RowSet(), 0, 4, 5);
  ExpectChunkedLowsMatch({}, RowSet(), 2, 4, 5);
}

TEST(RowSetTest, SerializeRoundTrip) {
  std::mt19937_64 rng(6);
  for (int iter = 0; iter < 10; ++iter) {
    RowSet r = FromStdSet(RandomMix(rng, 700000));
    RowSet back;
    ASSERT_TRUE(RowSet::Deserialize(r.Serialize(), &back).ok());
    EXPECT_TRUE(back == r);
  }
  RowSet back = RowSet::Range(0, 5);
  ASSERT_TRUE(RowSet::Deserialize(RowSet().Serialize(), &back).ok());
  EXPECT_TRUE(back.Empty());
}

TEST(RowSetTest, DeserializeRejectsGarbageWithoutCrashing) {
  RowSet out = RowSet::Range(0, 3);
  EXPECT_TRUE(RowSet::Deserialize("", &out).IsCorruption());
  EXPECT_TRUE(RowSet::Deserialize("hello world", &out).IsCorruption());
  EXPECT_EQ(out.Cardinality(), 3u);  // unchanged on error

  std::mt19937_64 rng(7);
  std::string good = FromStdSet(RandomMix(rng, 300000)).Serialize();
  EXPECT_TRUE(RowSet::Deserialize(good + "x", &out).IsCorruption());  // trailing bytes
  EXPECT_TRUE(RowSet::Deserialize(good.substr(0, good.size() - 1), &out).IsCorruption());
  for (int iter = 0; iter < 3000; ++iter) {
    std::string bad = good;
    if (iter % 3 == 0) bad.resize(rng() % bad.size());
    int flips = 1 + rng() % 8;
    for (int f = 0; f < flips && !bad.empty(); ++f) {
      // Most damage where the headers are, so the decoder's checks are reached.
      size_t at = (iter % 2 ? rng() % std::min<size_t>(bad.size(), 64) : rng() % bad.size());
      bad[at] = static_cast<char>(rng());
    }
    RowSet r;
    Status s = RowSet::Deserialize(bad, &r);
    if (s.ok()) {
      // Whatever decodes must be a consistent set.
      EXPECT_EQ(Values(r).size(), r.Cardinality());
    } else {
      EXPECT_TRUE(s.IsCorruption());
    }
  }
  for (int iter = 0; iter < 3000; ++iter) {
    std::string bad(rng() % 100, '\0');
    for (char& c : bad) c = static_cast<char>(rng());
    if (bad.size() >= 4 && iter % 2) {
      bad[0] = 0x3B;  // SERIAL_COOKIE (12347) with runs
      bad[1] = 0x30;
    }
    RowSet r;
    (void)RowSet::Deserialize(bad, &r);
  }
}

}  // namespace
}  // namespace sieve
