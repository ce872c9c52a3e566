// Copyright 2026 The Sieve Authors.
//
// The packing of a filter per query for its upload (gpu/filter_pack.h), on the host: the
// distinct sets and each query's slot, the choice of a list or a bitset per set, and the
// packed bytes decoded here as the device decodes them, for every query. Runs without a GPU.

#include "gpu/filter_pack.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace sieve::gpu::detail {
namespace {

RowSet Random(uint32_t rows, double density, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution pass(density);
  std::vector<uint32_t> ids;
  for (uint32_t r = 0; r < rows; ++r) {
    if (pass(rng)) ids.push_back(r);
  }
  return RowSet::Of(ids.data(), ids.size());
}

BatchFilters Batch(const std::vector<const RowSet*>& per_query) {
  BatchFilters b;
  for (const RowSet* s : per_query) {
    b.sets.push_back(s);
    b.passing_rows.push_back(s->Cardinality());
  }
  return b;
}

// What query q's filter is after a round trip through the packed bytes, decoded as
// ExpandBitmapKernel and ExpandListsKernel read them.
std::vector<uint32_t> Decode(const PackedFilters& pk, const std::vector<char>& bytes, size_t words,
                             uint32_t q) {
  const char* base = bytes.data();
  const auto* source = reinterpret_cast<const uint32_t*>(base + pk.off_source);
  std::vector<uint32_t> ids;
  const uint32_t src = source[q];
  if ((src & kListSource) == 0) {
    EXPECT_LT(src, pk.bitset_slots);
    const auto* bits = reinterpret_cast<const uint32_t*>(base + pk.off_bitsets) + src * words;
    for (size_t w = 0; w < words; ++w) {
      for (int b = 0; b < 32; ++b) {
        if (bits[w] >> b & 1u) ids.push_back(static_cast<uint32_t>(w * 32 + b));
      }
    }
    const auto* starts = reinterpret_cast<const uint64_t*>(base + pk.off_bitset_starts);
    EXPECT_EQ(starts[src + 1] - starts[src], ids.size()) << "bitset slot " << src;
    return ids;
  }
  const uint32_t l = src & ~kListSource;
  EXPECT_LT(l, pk.list_slots);
  const size_t table = size_t{l} * (pk.chunks + 1);
  const auto* ranks = reinterpret_cast<const uint64_t*>(base + pk.off_chunk_ranks) + table;
  const auto* at = reinterpret_cast<const uint64_t*>(base + pk.off_chunk_lows) + table;
  const auto* lows = reinterpret_cast<const uint16_t*>(base + pk.off_lows);
  EXPECT_EQ(ranks[0], 0u);
  for (uint32_t g = 0; g < pk.groups; ++g) {
    for (uint32_t c = pk.group_chunks[g]; c < pk.group_chunks[g + 1]; ++c) {
      EXPECT_LE(ranks[c], ranks[c + 1]);
      EXPECT_EQ(ranks[c], ids.size()) << "chunk " << c << ": its position in the list";
      // A chunk's lows lie within its group's, which one upload carries.
      EXPECT_GE(at[c], pk.group_lows[g]) << "chunk " << c;
      EXPECT_LE(at[c] + (ranks[c + 1] - ranks[c]), pk.group_lows[g + 1]) << "chunk " << c;
      for (uint64_t j = 0; j < ranks[c + 1] - ranks[c]; ++j) ids.push_back(c << 16 | lows[at[c] + j]);
    }
  }
  EXPECT_EQ(ranks[pk.chunks], ids.size());
  return ids;
}

std::vector<uint32_t> Ids(const RowSet& s) {
  std::vector<uint32_t> ids(s.Cardinality());
  if (!ids.empty()) s.ToArray(ids.data());
  return ids;
}

TEST(FilterPackTest, DistinctSetsByAddressAndContent) {
  const uint32_t rows = 1000;
  RowSet a = Random(rows, 0.1, 1), b = Random(rows, 0.1, 2);
  RowSet a_copy = a;  // equal content, another address
  RowSet same_size_other = b;
  same_size_other.Remove(*Ids(b).begin());
  same_size_other.Add(rows - 1);  // b's size, other rows
  ASSERT_EQ(same_size_other.Cardinality(), b.Cardinality());
  ASSERT_NE(same_size_other, b);
  const BatchFilters f = Batch({&a, &b, &a, &a_copy, &same_size_other, &b});
  std::vector<const RowSet*> slots;
  std::vector<uint32_t> slot_of;
  DistinctSets(f, &slots, &slot_of);
  ASSERT_EQ(slots.size(), 3u);
  EXPECT_EQ(slot_of, (std::vector<uint32_t>{0, 1, 0, 0, 2, 1}));
  EXPECT_EQ(slots[0], &a);
  EXPECT_EQ(slots[1], &b);
  EXPECT_EQ(slots[2], &same_size_other);

  const BatchFilters one = Batch({&a, &a_copy, &a});
  DistinctSets(one, &slots, &slot_of);
  ASSERT_EQ(slots.size(), 1u);
  EXPECT_EQ(slot_of, (std::vector<uint32_t>{0, 0, 0}));
}

// Sets spanning several chunks (the last partial), sparse ones as lists and dense ones as
// bitsets, the empty set, ids at the chunk edges, shared and repeated slots: every query
// decodes to its own set.
TEST(FilterPackTest, EveryQueryDecodesToItsSet) {
  const uint32_t rows = 3 * kListChunkRows + 1234;
  const size_t words = (rows + 31) / 32;
  std::vector<RowSet> sets;
  sets.push_back(Random(rows, 0.001, 10));  // list
  sets.push_back(Random(rows, 0.3, 11));    // bitset
  sets.push_back(RowSet());                 // empty: a list of no ids
  {
    const uint32_t edges[] = {0, 65535, 65536, 65537, 131071, 131072, 196607, 196608, rows - 1};
    sets.push_back(RowSet::Of(edges, sizeof(edges) / sizeof(edges[0])));  // list
  }
  sets.push_back(RowSet::Range(0, rows));                   // every row: bitset
  sets.push_back(RowSet::Range(3 * kListChunkRows, rows));  // only the last chunk
  std::vector<const RowSet*> per_query;
  for (int rep = 0; rep < 2; ++rep) {
    for (const RowSet& s : sets) per_query.push_back(&s);
  }
  const BatchFilters f = Batch(per_query);
  std::vector<const RowSet*> slots;
  std::vector<uint32_t> slot_of;
  DistinctSets(f, &slots, &slot_of);
  ASSERT_EQ(slots.size(), sets.size());
  const FilterPacker packer(slots, slot_of, rows, words);
  const PackedFilters& pk = packer.layout();
  EXPECT_EQ(pk.chunks, 4u);
  EXPECT_EQ(pk.bitset_slots + pk.list_slots, sets.size());
  // A list where 2 bytes an id and the chunk table are fewer bytes than the bitset.
  uint32_t lists = 0;
  uint64_t list_ids = 0, bitset_ids = 0;
  for (const RowSet& s : sets) {
    const bool list = s.Cardinality() * 2 + (pk.chunks + 1) * 16 < words * 4;
    lists += list ? 1 : 0;
    (list ? list_ids : bitset_ids) += s.Cardinality();
  }
  EXPECT_EQ(lists, 4u);  // the sparse, empty, edge and last-chunk sets
  EXPECT_EQ(pk.list_slots, lists);
  EXPECT_EQ(pk.list_ids, list_ids);
  EXPECT_EQ(pk.bitset_ids, bitset_ids);
  // Each slot once: the bytes are those of the distinct sets, not of the queries.
  EXPECT_LT(pk.bytes, (pk.bitset_slots + 1) * words * 4 + pk.list_ids * 2 + 4096 * 4);
  std::vector<char> bytes(pk.bytes, '\x5a');  // garbage where the packer writes nothing
  packer.Write(bytes.data());
  for (uint32_t q = 0; q < per_query.size(); ++q) {
    EXPECT_EQ(Decode(pk, bytes, words, q), Ids(*per_query[q])) << "query " << q;
  }
  // Spread over threads (more than the slots, too), the same bytes.
  for (uint32_t threads : {2u, 5u, 64u}) {
    std::vector<char> again(pk.bytes, '\x5a');
    packer.Write(again.data(), threads);
    EXPECT_TRUE(again == bytes) << threads << " threads";
  }
  // With a bitset among the sets, the lists stay one range whatever is asked.
  const FilterPacker ranged(slots, slot_of, rows, words, 3);
  EXPECT_EQ(ranged.layout().groups, 1u);
}

// Lists in row ranges (PackedFilters::groups): each range's lows are one contiguous stretch,
// every query still decodes to its set, and each query's segments are its list positions in
// the range's chunks, the last reaching the longest list; the spans are their widest.
TEST(FilterPackTest, ListsInRowRanges) {
  const uint32_t rows = 7 * kListChunkRows + 999;
  const size_t words = (rows + 31) / 32;
  std::vector<RowSet> sets;
  sets.push_back(Random(rows, 0.01, 20));
  sets.push_back(Random(rows, 0.002, 21));
  sets.push_back(RowSet());
  sets.push_back(RowSet::Range(5 * kListChunkRows, 5 * kListChunkRows + 100));  // one chunk
  {
    const uint32_t edges[] = {0, 65535, 65536, 3 * 65536 - 1, 3 * 65536, rows - 1};
    sets.push_back(RowSet::Of(edges, sizeof(edges) / sizeof(edges[0])));
  }
  std::vector<const RowSet*> per_query;
  for (int rep = 0; rep < 3; ++rep) {
    for (const RowSet& s : sets) per_query.push_back(&s);
  }
  const BatchFilters f = Batch(per_query);
  std::vector<const RowSet*> slots;
  std::vector<uint32_t> slot_of;
  DistinctSets(f, &slots, &slot_of);
  uint64_t longest = 0;
  for (const RowSet& s : sets) longest = std::max(longest, s.Cardinality());
  for (uint32_t asked : {1u, 2u, 3u, 8u, 64u, 0u}) {
    const FilterPacker packer(slots, slot_of, rows, words, asked);
    const PackedFilters& pk = packer.layout();
    ASSERT_EQ(pk.bitset_slots, 0u);
    ASSERT_EQ(pk.chunks, 8u);
    // 0 chooses by the lists' bytes: under a MiB here, one range.
    EXPECT_EQ(pk.groups, asked == 0 ? 1u : std::min(asked, 8u)) << "asked " << asked;
    ASSERT_EQ(pk.group_chunks.size(), pk.groups + 1);
    EXPECT_EQ(pk.group_chunks.front(), 0u);
    EXPECT_EQ(pk.group_chunks.back(), pk.chunks);
    EXPECT_EQ(pk.group_lows.front(), 0u);
    EXPECT_EQ(pk.group_lows.back(), pk.list_ids);
    std::vector<char> bytes(pk.bytes, '\x5a');
    packer.Write(bytes.data(), asked % 3 + 1);
    std::vector<char> one(pk.bytes, '\x5a');
    packer.Write(one.data());
    EXPECT_TRUE(one == bytes) << "threads " << asked % 3 + 1;
    const auto* segments = reinterpret_cast<const uint64_t*>(bytes.data() + pk.off_segments);
    std::vector<uint64_t> span(pk.groups, 0);
    for (uint32_t q = 0; q < per_query.size(); ++q) {
      const std::vector<uint32_t> ids = Ids(*per_query[q]);
      EXPECT_EQ(Decode(pk, bytes, words, q), ids) << "query " << q << ", " << asked << " ranges";
      uint64_t lo = 0;
      for (uint32_t g = 0; g < pk.groups; ++g) {
        const uint64_t* seg = segments + (size_t{g} * pk.queries + q) * 2;
        const uint32_t end_row = pk.group_chunks[g + 1] * kListChunkRows;
        const uint64_t hi =
            g + 1 == pk.groups
                ? longest
                : static_cast<uint64_t>(std::lower_bound(ids.begin(), ids.end(), end_row) -
                                        ids.begin());
        EXPECT_EQ(seg[0], lo) << "query " << q << " range " << g;
        EXPECT_EQ(seg[1], hi) << "query " << q << " range " << g;
        span[g] = std::max(span[g], hi - lo);
        lo = hi;
      }
    }
    EXPECT_EQ(pk.group_span, span);
  }
  // Chosen for lists of a few MiB: a range a MiB of them, at most kListGroupsAuto.
  const uint32_t big_rows = 40'000'000;
  const RowSet big = Random(big_rows, 0.05, 22);  // 4 MB of lows
  const BatchFilters fb = Batch({&big, &sets[0]});
  DistinctSets(fb, &slots, &slot_of);
  const FilterPacker chosen(slots, slot_of, big_rows, (big_rows + 31) / 32, 0);
  EXPECT_EQ(chosen.layout().groups,
            std::min<uint64_t>(kListGroupsAuto, chosen.layout().list_ids * 2 / kListGroupMinBytes));
  EXPECT_GT(chosen.layout().groups, 1u);
}

// A sparse set packs into fewer bytes than its bitset: 2 bytes an id and the chunk table.
TEST(FilterPackTest, SparseSetsAreSmallerThanTheirBitsets) {
  const uint32_t rows = 10'000'000;
  const size_t words = (rows + 31) / 32;
  const RowSet sparse = Random(rows, 0.0001, 3);
  const BatchFilters f = Batch({&sparse});
  std::vector<const RowSet*> slots;
  std::vector<uint32_t> slot_of;
  DistinctSets(f, &slots, &slot_of);
  const FilterPacker packer(slots, slot_of, rows, words);
  EXPECT_EQ(packer.layout().list_slots, 1u);
  EXPECT_LT(packer.layout().bytes, sparse.Cardinality() * 2 + 8 * 1024);
  EXPECT_LT(packer.layout().bytes * 100, words * 4);
}

}  // namespace
}  // namespace sieve::gpu::detail
