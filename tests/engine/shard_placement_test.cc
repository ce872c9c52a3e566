// Copyright 2026 The Sieve Authors.
//
// ShardPlacement: shards over devices balanced by rows, kept where they are, new ones on the
// emptiest device, device memory honoured (moves off a device that outgrew it, one move
// against a gap growth opened), and errors that name the sizes and change nothing.

#include "engine/shard_placement.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

namespace sieve {
namespace {

using Shard = ShardPlacement::Shard;

uint64_t Key(uint32_t collection, uint32_t shard) {
  return (static_cast<uint64_t>(collection) << 32) | shard;
}

std::vector<Shard> Shards(uint32_t collection, const std::vector<uint64_t>& rows,
                          uint64_t bytes_per_row = 1) {
  std::vector<Shard> out;
  for (uint32_t i = 0; i < rows.size(); ++i) {
    out.push_back({Key(collection, i), rows[i], rows[i] * bytes_per_row});
  }
  return out;
}

ShardPlacement Devices(size_t n, uint64_t memory = 0) {
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) names.push_back("gpu" + std::to_string(i));
  return ShardPlacement(names, std::vector<uint64_t>(n, memory));
}

TEST(ShardPlacementTest, SpreadsShardsBalancedByRows) {
  ShardPlacement p = Devices(3);
  std::vector<uint32_t> dev;
  std::vector<ShardPlacement::Move> moves;
  const std::vector<uint64_t> rows = {900, 100, 500, 500, 400, 300, 200, 100};
  ASSERT_TRUE(p.Place("c", Shards(1, rows), &dev, &moves).ok());
  EXPECT_TRUE(moves.empty());
  ASSERT_EQ(dev.size(), rows.size());
  uint64_t lo = UINT64_MAX, hi = 0;
  for (uint32_t d = 0; d < 3; ++d) {
    lo = std::min(lo, p.rows(d));
    hi = std::max(hi, p.rows(d));
  }
  EXPECT_EQ(std::accumulate(rows.begin(), rows.end(), uint64_t{0}),
            p.rows(0) + p.rows(1) + p.rows(2));
  // Largest first onto the emptiest: 3,000 rows in 1,000 per device.
  EXPECT_EQ(lo, 1000u);
  EXPECT_EQ(hi, 1000u);
  EXPECT_EQ(dev[0], 0u);  // the largest shard goes first, to device 0 (ties: lower index)
}

TEST(ShardPlacementTest, ShardsStayWhereTheyAreAsTheyGrowEvenly) {
  ShardPlacement p = Devices(2);
  std::vector<uint32_t> first, again;
  std::vector<ShardPlacement::Move> moves;
  ASSERT_TRUE(p.Place("c", Shards(1, {100, 100, 100}), &first, &moves).ok());
  for (uint64_t grow : {150, 400, 1000}) {
    ASSERT_TRUE(p.Place("c", Shards(1, {grow, grow, grow}), &again, &moves).ok());
    EXPECT_EQ(again, first);
    EXPECT_TRUE(moves.empty()) << grow;  // 2 shards against 1: no move narrows the gap
  }
  EXPECT_EQ(p.rows(0) + p.rows(1), 3000u);
}

TEST(ShardPlacementTest, NewCollectionsFillTheEmptiestDevices) {
  ShardPlacement p = Devices(3);
  std::vector<uint32_t> dev;
  std::vector<ShardPlacement::Move> moves;
  ASSERT_TRUE(p.Place("a", Shards(1, {1000}), &dev, &moves).ok());
  EXPECT_EQ(dev, (std::vector<uint32_t>{0}));
  ASSERT_TRUE(p.Place("b", Shards(2, {300}), &dev, &moves).ok());
  EXPECT_EQ(dev, (std::vector<uint32_t>{1}));
  ASSERT_TRUE(p.Place("c", Shards(3, {200, 200}), &dev, &moves).ok());
  EXPECT_EQ(dev, (std::vector<uint32_t>{2, 2}));  // 2: 0 rows, then 200 < 300
  ASSERT_TRUE(p.Place("d", Shards(4, {50}), &dev, &moves).ok());
  EXPECT_EQ(dev, (std::vector<uint32_t>{1}));  // 300 against 400 and 1000
  p.Forget(Key(1, 0), Key(1, 0xffffffffu));
  EXPECT_EQ(p.rows(0), 0u);
  ASSERT_TRUE(p.Place("e", Shards(5, {10}), &dev, &moves).ok());
  EXPECT_EQ(dev, (std::vector<uint32_t>{0}));
}

TEST(ShardPlacementTest, MoreThanOneDeviceButWithinAllOfThem) {
  ShardPlacement p = Devices(3, 1000);  // 1,000 bytes each
  std::vector<uint32_t> dev;
  std::vector<ShardPlacement::Move> moves;
  // 2,400 bytes in 6 shards: more than any one device, within the three.
  ASSERT_TRUE(p.Place("c", Shards(1, {400, 400, 400, 400, 400, 400}), &dev, &moves).ok());
  for (uint32_t d = 0; d < 3; ++d) {
    EXPECT_EQ(p.bytes(d), 800u) << d;
  }
}

TEST(ShardPlacementTest, LargerThanEveryDeviceTogetherNamesTheSizesAndChangesNothing) {
  ShardPlacement p = Devices(2, 1000);
  std::vector<uint32_t> dev;
  std::vector<ShardPlacement::Move> moves;
  ASSERT_TRUE(p.Place("small", Shards(1, {300}), &dev, &moves).ok());
  Status s = p.Place("big", Shards(2, {600, 600, 600}), &dev, &moves);
  ASSERT_TRUE(s.IsResourceExhausted()) << s.ToString();
  const std::string m = s.message();
  EXPECT_NE(m.find("collection 'big' needs 1.8 KiB (1800 bytes) of device memory for its 1800 "
                   "rows"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("other collections held there take 300 bytes"), std::string::npos) << m;
  EXPECT_NE(m.find("2 devices hold together (2.0 KiB (2000 bytes)"), std::string::npos) << m;
  EXPECT_NE(m.find("gpu0"), std::string::npos) << m;
  EXPECT_EQ(p.rows(0) + p.rows(1), 300u);
  uint32_t d;
  EXPECT_FALSE(p.DeviceOf(Key(2, 0), &d));
  // Growth past every device: the same error, and the shard that was placed stays as it was.
  s = p.Place("small", Shards(1, {2500}), &dev, &moves);
  EXPECT_TRUE(s.IsResourceExhausted());
  EXPECT_EQ(p.rows(0) + p.rows(1), 300u);
}

TEST(ShardPlacementTest, AShardLargerThanAnyDeviceIsRefused) {
  ShardPlacement p = Devices(3, 1000);
  std::vector<uint32_t> dev;
  std::vector<ShardPlacement::Move> moves;
  Status s = p.Place("c", Shards(1, {1500, 100}), &dev, &moves);
  ASSERT_TRUE(s.IsResourceExhausted()) << s.ToString();
  EXPECT_NE(s.message().find("shard 0 (1500 rows"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("fits on no device"), std::string::npos) << s.message();
  EXPECT_EQ(p.rows(0) + p.rows(1) + p.rows(2), 0u);
}

TEST(ShardPlacementTest, ADeviceThatOutgrewItsMemoryMovesShardsToTheEmptiest) {
  ShardPlacement p = Devices(2, 1000);
  std::vector<uint32_t> dev;
  std::vector<ShardPlacement::Move> moves;
  ASSERT_TRUE(p.Place("a", Shards(1, {500, 100}), &dev, &moves).ok());
  EXPECT_EQ(dev, (std::vector<uint32_t>{0, 1}));
  ASSERT_TRUE(p.Place("b", Shards(2, {350}), &dev, &moves).ok());
  EXPECT_EQ(dev, (std::vector<uint32_t>{1}));  // device 1 holds 450
  // a's shard 1 grows to 700 on device 1 (350 + 700 > 1000) and fits on device 0 neither
  // (500 + 700): the error says which device outgrew its memory.
  Status s = p.Place("a", Shards(1, {500, 700}), &dev, &moves);
  ASSERT_TRUE(s.IsResourceExhausted()) << s.ToString();
  EXPECT_NE(s.message().find("the shards on gpu1 take"), std::string::npos) << s.message();
  // Growth that does fit elsewhere moves.
  ASSERT_TRUE(p.Place("a", Shards(1, {500, 100}), &dev, &moves).ok());
  ASSERT_TRUE(p.Place("a", Shards(1, {300, 680}), &dev, &moves).ok());
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].key, Key(1, 1));
  EXPECT_EQ(moves[0].from, 1u);
  EXPECT_EQ(moves[0].to, 0u);
  EXPECT_EQ(dev, (std::vector<uint32_t>{0, 0}));
  EXPECT_LE(p.bytes(0), 1000u);
  EXPECT_LE(p.bytes(1), 1000u);
}

TEST(ShardPlacementTest, UnevenGrowthMovesOneShardToTheEmptiestDevice) {
  ShardPlacement p = Devices(2);
  std::vector<uint32_t> dev;
  std::vector<ShardPlacement::Move> moves;
  ASSERT_TRUE(p.Place("c", Shards(1, {100, 100, 100, 100}), &dev, &moves).ok());
  EXPECT_EQ(p.rows(0), 200u);
  // Device 0's shards grow: 2,000 + 2,000 against 200 on device 1.
  std::vector<uint64_t> rows(4, 100);
  for (size_t i = 0; i < 4; ++i) {
    if (dev[i] == 0) rows[i] = 2000;
  }
  ASSERT_TRUE(p.Place("c", Shards(1, rows), &dev, &moves).ok());
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].from, 0u);
  EXPECT_EQ(moves[0].to, 1u);
  EXPECT_EQ(p.rows(0), 2000u);
  EXPECT_EQ(p.rows(1), 2200u);
  // Now balanced within the gap rule: no more moves.
  ASSERT_TRUE(p.Place("c", Shards(1, rows), &dev, &moves).ok());
  EXPECT_TRUE(moves.empty());
}

TEST(ShardPlacementTest, ResidentBytes) {
  EXPECT_EQ(ResidentBytes(10, 768, /*float16=*/true), 10u * (768 * 2 + 4));
  EXPECT_EQ(ResidentBytes(10, 768, /*float16=*/false), 10u * (768 * 4 + 4));
  // Int8 codes: the dim padded to 16 and four floats of terms a row.
  EXPECT_EQ(ResidentBytes(10, 768, true, /*int8_codes=*/true), 10u * (768 * 2 + 4 + 768 + 16));
  EXPECT_EQ(ResidentBytes(10, 100, false, /*int8_codes=*/true), 10u * (100 * 4 + 4 + 112 + 16));
}

}  // namespace
}  // namespace sieve
