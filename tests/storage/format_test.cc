// Copyright 2026 The Sieve Authors.
//
// The byte-level codecs of storage/format.h: float16 rounding against the compiler's own
// _Float16, column and chunk round trips, and decoders refusing damaged input.

#include "storage/format.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "storage/roaring.h"

namespace sieve::format {
namespace {

TEST(HalfTest, EveryHalfRoundTripsExactly) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = HalfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_EQ(FloatToHalf(f) & 0x7c00, 0x7c00) << h;
      EXPECT_NE(FloatToHalf(f) & 0x3ff, 0) << h;
      continue;
    }
    EXPECT_EQ(FloatToHalf(f), h) << "half 0x" << std::hex << h << " -> " << f;
  }
}

TEST(HalfTest, KnownValues) {
  EXPECT_EQ(FloatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7bff);               // below the halfway point to 65536
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);               // halfway: ties to even = infinity
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000);  // halfway to zero: even
  EXPECT_EQ(FloatToHalf(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1.0).
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3·2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9: rounds up to even.
  EXPECT_EQ(FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(HalfToFloat(0x3555), 0.333251953125f);
}

#ifdef __FLT16_MAX__
TEST(HalfTest, MatchesCompilerFloat16OnRandomFloats) {
  std::mt19937 rng(7);
  int checked = 0;
  for (int i = 0; i < 2000000; ++i) {
    const float f = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    if (std::isnan(f)) continue;
    const _Float16 h = static_cast<_Float16>(f);
    uint16_t expected;
    std::memcpy(&expected, &h, 2);
    ASSERT_EQ(FloatToHalf(f), expected)
        << "float bits 0x" << std::hex << std::bit_cast<uint32_t>(f);
    ++checked;
  }
  EXPECT_GT(checked, 1000000);
}
#endif

TEST(KeyTest, ChunkKeysSortByCollectionShardOrdinal) {
  const std::string a = ChunkKey(kVectorsTag, 1, 0, 0xffffff);
  const std::string b = ChunkKey(kVectorsTag, 1, 0, 0x1000000);
  const std::string c = ChunkKey(kVectorsTag, 1, 1, 0);
  const std::string d = ChunkKey(kVectorsTag, 2, 0, 0);
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  EXPECT_LT(c, d);
  EXPECT_EQ(a.size(), kChunkKeySize);
  char tag;
  uint32_t cid, shard, first;
  ASSERT_TRUE(ParseChunkKey(b, &tag, &cid, &shard, &first));
  EXPECT_EQ(tag, kVectorsTag);
  EXPECT_EQ(cid, 1u);
  EXPECT_EQ(shard, 0u);
  EXPECT_EQ(first, 0x1000000u);
  EXPECT_FALSE(ParseChunkKey(b.substr(1), &tag, &cid, &shard, &first));
  const std::string prefix = ChunkPrefix(kVectorsTag, 1, 0);
  EXPECT_EQ(b.compare(0, prefix.size(), prefix), 0);
  EXPECT_LT(b, PrefixSuccessor(prefix));
  EXPECT_GE(c, PrefixSuccessor(prefix));
  EXPECT_EQ(PrefixSuccessor(std::string("a\xff\xff", 3)), "b");
  EXPECT_EQ(PrefixSuccessor(std::string("\xff", 1)), "");
}

Column MakeColumn(AttrType type, const std::vector<Value>& values) {
  Column c;
  c.type = type;
  c.Reserve(values.size());
  for (const Value& v : values) c.Append(v);
  return c;
}

std::vector<AttributeSpec> Schema() {
  return {{"i", AttrType::kInt},
          {"f", AttrType::kFloat},
          {"s", AttrType::kString},
          {"b", AttrType::kBool},
          {"t", AttrType::kTags}};
}

std::vector<Column> SampleColumns() {
  using Tags = std::vector<std::string>;
  return {
      MakeColumn(AttrType::kInt, {int64_t{-5}, Value(), std::numeric_limits<int64_t>::min(),
                                  std::numeric_limits<int64_t>::max(), int64_t{0}}),
      MakeColumn(AttrType::kFloat,
                 {1.5, -0.0, Value(), std::numeric_limits<double>::infinity(), 1e-300}),
      MakeColumn(AttrType::kString, {std::string("héllo"), std::string(""), Value(),
                                     std::string("a\0b", 3), std::string(1000, 'x')}),
      MakeColumn(AttrType::kBool, {true, false, Value(), true, Value()}),
      MakeColumn(AttrType::kTags, {Tags{"a", "b"}, Tags{}, Value(), Tags{""}, Tags{"x"}}),
  };
}

TEST(ColumnsCodecTest, RoundTripsEveryTypeWithNullsAndEmptyValues) {
  const std::vector<Column> columns = SampleColumns();
  ASSERT_TRUE(CheckColumns(columns, Schema(), 5).ok());
  std::string encoded;
  EncodeColumns(columns, 0, 5, &encoded);
  uint32_t rows = 0;
  std::vector<Column> decoded;
  ASSERT_TRUE(DecodeColumns(encoded, Schema(), &rows, &decoded).ok());
  ASSERT_EQ(rows, 5u);
  ASSERT_EQ(decoded.size(), columns.size());
  for (size_t c = 0; c < columns.size(); ++c) {
    EXPECT_EQ(decoded[c].type, columns[c].type);
    EXPECT_EQ(decoded[c].valid, columns[c].valid) << c;
    for (size_t r = 0; r < 5; ++r) {
      EXPECT_EQ(decoded[c].Get(r), columns[c].Get(r)) << "column " << c << " row " << r;
    }
  }
  // -0.0 keeps its sign bit.
  EXPECT_TRUE(std::signbit(decoded[1].floats[1]));
  // The empty tag list is valid and empty; the null one is null.
  EXPECT_TRUE(decoded[4].valid[1]);
  EXPECT_TRUE(std::get<std::vector<std::string>>(decoded[4].Get(1)).empty());
  EXPECT_TRUE(IsNull(decoded[4].Get(2)));
}

TEST(ColumnsCodecTest, EncodesARowRange) {
  const std::vector<Column> columns = SampleColumns();
  std::string encoded;
  EncodeColumns(columns, 2, 3, &encoded);
  uint32_t rows = 0;
  std::vector<Column> decoded;
  ASSERT_TRUE(DecodeColumns(encoded, Schema(), &rows, &decoded).ok());
  ASSERT_EQ(rows, 3u);
  for (size_t c = 0; c < columns.size(); ++c) {
    for (size_t r = 0; r < 3; ++r) {
      EXPECT_EQ(decoded[c].Get(r), columns[c].Get(r + 2)) << "column " << c << " row " << r;
    }
  }
}

TEST(ColumnsCodecTest, EveryTruncationIsCorruptionNotACrash) {
  std::string encoded;
  EncodeColumns(SampleColumns(), 0, 5, &encoded);
  for (size_t n = 0; n < encoded.size(); ++n) {
    uint32_t rows = 0;
    std::vector<Column> out;
    Status s = DecodeColumns(std::string_view(encoded).substr(0, n), Schema(), &rows, &out);
    EXPECT_TRUE(s.IsCorruption()) << n << ": " << s.ToString();
  }
  uint32_t rows = 0;
  EXPECT_TRUE(DecodeColumns(encoded + "x", Schema(), &rows, nullptr).IsCorruption());
  auto schema = Schema();
  schema[2].type = AttrType::kInt;
  Status s = DecodeColumns(encoded, schema, &rows, nullptr);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("'s'"), std::string::npos) << s.message();
}

TEST(ColumnsCodecTest, CheckColumnsRejectsMismatches) {
  auto columns = SampleColumns();
  EXPECT_TRUE(CheckColumns(columns, Schema(), 4).IsInvalidArgument());
  columns[3].ints.pop_back();
  Status s = CheckColumns(columns, Schema(), 5);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("'b'"), std::string::npos) << s.message();
  columns.pop_back();
  EXPECT_TRUE(CheckColumns(columns, Schema(), 5).IsInvalidArgument());
}

TEST(VectorsCodecTest, Float32AndFloat16RoundTrip) {
  const std::vector<float> v = {0.1f, -2.5f, 1e-6f, 3.0f, 70000.0f, 0.0f};
  for (DType dtype : {DType::kFloat32, DType::kFloat16}) {
    std::string value;
    EncodeVectorsHeader(2, 3, dtype, &value);
    Status s = EncodeVectorsPayload(v.data(), 2, 3, dtype, &value);
    if (dtype == DType::kFloat16) {
      // 70000 overflows half: rejected, naming row 1 component 1.
      ASSERT_TRUE(s.IsInvalidArgument());
      EXPECT_NE(s.message().find("row 1 component 1"), std::string::npos) << s.message();
      continue;
    }
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(value.size(), kVectorsHeaderSize + 6 * 4);
    uint32_t rows = 0;
    std::vector<float> out;
    ASSERT_TRUE(DecodeVectors(value, 3, dtype, &rows, &out).ok());
    EXPECT_EQ(rows, 2u);
    EXPECT_EQ(out, v);
    EXPECT_TRUE(DecodeVectors(value, 4, dtype, &rows, &out).IsCorruption());
    EXPECT_TRUE(DecodeVectors(value, 3, DType::kFloat16, &rows, &out).IsCorruption());
    EXPECT_TRUE(
        DecodeVectors(value.substr(0, value.size() - 1), 3, dtype, &rows, &out).IsCorruption());
  }
  const std::vector<float> small = {0.1f, -2.5f, 1e-6f};
  std::string value;
  EncodeVectorsHeader(1, 3, DType::kFloat16, &value);
  ASSERT_TRUE(EncodeVectorsPayload(small.data(), 1, 3, DType::kFloat16, &value).ok());
  EXPECT_EQ(value.size(), kVectorsHeaderSize + 3 * 2);
  uint32_t rows = 0;
  std::vector<float> out;
  ASSERT_TRUE(DecodeVectors(value, 3, DType::kFloat16, &rows, &out).ok());
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(out[i], HalfToFloat(FloatToHalf(small[i])));
  EXPECT_NE(out[0], small[0]);  // 0.1 is not a half: the rounding really happened

  const float nan[1] = {std::numeric_limits<float>::quiet_NaN()};
  std::string ignored;
  EXPECT_TRUE(EncodeVectorsPayload(nan, 1, 1, DType::kFloat32, &ignored).IsInvalidArgument());
}

TEST(ShardStateCodecTest, RoundTripsAndRejectsDamage) {
  ShardState state;
  state.next_ordinal = 100000;
  state.deleted = std::make_shared<roaring::Roaring>();
  for (uint32_t i = 0; i < 100000; i += 7) state.deleted->add(i);
  state.live_rows = state.next_ordinal - state.deleted->cardinality();
  ASSERT_TRUE(CheckShardState(state).ok());
  std::string value;
  EncodeShardState(state, &value);
  ShardState out;
  ASSERT_TRUE(DecodeShardState(value, &out).ok());
  EXPECT_EQ(out.next_ordinal, state.next_ordinal);
  EXPECT_EQ(out.live_rows, state.live_rows);
  ASSERT_NE(out.deleted, nullptr);
  EXPECT_TRUE(*out.deleted == *state.deleted);

  for (size_t n : {size_t{0}, size_t{10}, value.size() - 1}) {
    EXPECT_TRUE(DecodeShardState(value.substr(0, n), &out).IsCorruption()) << n;
  }
  std::string garbage = value;
  for (size_t i = kShardStateHeaderSize; i < garbage.size(); ++i) garbage[i] = '\x7f';
  EXPECT_TRUE(DecodeShardState(garbage, &out).IsCorruption());
  std::string future = value;
  future[0] = 9;
  EXPECT_TRUE(DecodeShardState(future, &out).IsCorruption());
  EXPECT_EQ(out.space, 0u);

  // A shard moved to its own key space (compaction) is stored as version 2.
  state.space = 77;
  std::string v2;
  EncodeShardState(state, &v2);
  EXPECT_EQ(v2[0], 2);
  EXPECT_EQ(v2.size(), value.size() + 4);
  ASSERT_TRUE(DecodeShardState(v2, &out).ok());
  EXPECT_EQ(out.space, 77u);
  EXPECT_TRUE(*out.deleted == *state.deleted);
  EXPECT_TRUE(DecodeShardState(v2.substr(0, v2.size() - 1), &out).IsCorruption());
  std::string v2_zero = v2;
  v2_zero.replace(v2.size() - 4, 4, std::string(4, '\0'));
  EXPECT_TRUE(DecodeShardState(v2_zero, &out).IsCorruption());
  state.space = 0;

  state.live_rows += 1;
  EXPECT_TRUE(CheckShardState(state).IsInvalidArgument());
  state.live_rows -= 1;
  state.deleted->add(100000);
  EXPECT_TRUE(CheckShardState(state).IsInvalidArgument());
}

TEST(MetaCodecTest, RoundTripsAndRejectsDamage) {
  CollectionMeta meta;
  meta.id = 42;
  meta.spec.name = "items.v2";
  meta.spec.dim = 128;
  meta.spec.metric = Metric::kCosine;
  meta.spec.dtype = DType::kFloat16;
  meta.spec.shards = 4;
  meta.spec.attributes = Schema();
  meta.next_auto_id = 1234567890123;
  const std::string value = EncodeMeta(meta);
  EXPECT_EQ(value.find('\n'), std::string::npos);
  CollectionMeta out;
  ASSERT_TRUE(DecodeMeta(value, &out).ok());
  EXPECT_EQ(out.id, 42u);
  EXPECT_EQ(out.spec.name, "items.v2");
  EXPECT_EQ(out.spec.dim, 128u);
  EXPECT_EQ(out.spec.metric, Metric::kCosine);
  EXPECT_EQ(out.spec.dtype, DType::kFloat16);
  EXPECT_EQ(out.spec.shards, 4u);
  ASSERT_EQ(out.spec.attributes.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(out.spec.attributes[i].name, Schema()[i].name);
    EXPECT_EQ(out.spec.attributes[i].type, Schema()[i].type);
  }
  EXPECT_EQ(out.next_auto_id, 1234567890123);
  for (const char* bad : {"", "{", "[]", "{\"id\":1}", "null"}) {
    EXPECT_TRUE(DecodeMeta(bad, &out).IsCorruption()) << bad;
  }
  std::string wrong_metric = value;
  wrong_metric.replace(wrong_metric.find("cosine"), 6, "cosin");
  EXPECT_TRUE(DecodeMeta(wrong_metric, &out).IsCorruption());
  for (size_t n = 0; n < value.size(); ++n) {
    EXPECT_TRUE(DecodeMeta(value.substr(0, n), &out).IsCorruption()) << n;
  }
}

}  // namespace
}  // namespace sieve::format
