// Copyright 2026 The Sieve Authors.
//
// Fuzzes the filter language: lexing, parsing and type-checking arbitrary text against a
// schema with one attribute of each type, then compiling what parses against a small shard
// whose rows hold nulls, extremes and NaN. Invariants: a filter's canonical text parses to
// the same filter and the same rows, and every passing row is live.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "filter/filter.h"
#include "index/shard_index.h"
#include "storage/store.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

constexpr uint32_t kRows = 64;

sieve::CollectionSpec Spec() {
  sieve::CollectionSpec spec;
  spec.name = "fuzz";
  spec.dim = 2;
  spec.attributes = {{"i", sieve::AttrType::kInt},    {"f", sieve::AttrType::kFloat},
                     {"s", sieve::AttrType::kString}, {"b", sieve::AttrType::kBool},
                     {"t", sieve::AttrType::kTags}};
  return spec;
}

// Row r: every 5th attribute value null, the rest drawn from small sets and extremes so that
// equality, ranges and tags all match some rows.
std::unique_ptr<sieve::ShardIndex> MakeShard(const sieve::CollectionSpec& spec) {
  sieve::Chunk chunk;
  chunk.first_ordinal = 0;
  chunk.num_rows = kRows;
  chunk.vectors.assign(kRows * spec.dim, 0.5f);
  chunk.columns.resize(spec.attributes.size());
  for (size_t a = 0; a < spec.attributes.size(); ++a) chunk.columns[a].type = spec.attributes[a].type;
  const int64_t ints[] = {0, 1, -1, 7, std::numeric_limits<int64_t>::max(),
                          std::numeric_limits<int64_t>::min()};
  const double floats[] = {0.0, -0.0, 1.5, -2.25, 1e300, std::numeric_limits<double>::infinity(),
                           std::nan("")};
  const char* strings[] = {"", "a", "b", "It's", "\xc3\xa9"};
  for (uint32_t r = 0; r < kRows; ++r) {
    chunk.ids.push_back(r);
    auto null_at = [r](size_t a) { return (r + a) % 5 == 0; };
    chunk.columns[0].Append(null_at(0) ? sieve::Value() : sieve::Value(ints[r % 6]));
    chunk.columns[1].Append(null_at(1) ? sieve::Value() : sieve::Value(floats[r % 7]));
    chunk.columns[2].Append(null_at(2) ? sieve::Value()
                                       : sieve::Value(std::string(strings[r % 5])));
    chunk.columns[3].Append(null_at(3) ? sieve::Value() : sieve::Value(r % 2 == 0));
    std::vector<std::string> tags;
    for (uint32_t k = 0; k < r % 3; ++k) tags.push_back(strings[(r + k) % 5]);
    chunk.columns[4].Append(null_at(4) ? sieve::Value() : sieve::Value(tags));
  }
  auto shard = std::make_unique<sieve::ShardIndex>(spec, 0);
  shard->ApplyChunk(chunk);
  // A few deleted rows, which no filter may return.
  const uint32_t deleted[] = {3, 10, 33};
  shard->SetDeleted(sieve::RowSet::Of(deleted, 3));
  return shard;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using sieve::fuzz::Fail;
  static const sieve::CollectionSpec spec = Spec();
  static const std::unique_ptr<sieve::ShardIndex> shard = MakeShard(spec);
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::unique_ptr<sieve::Filter> f;
  sieve::Status s = sieve::Filter::Parse(text, spec, &f);
  if (!s.ok()) {
    if (!s.IsInvalidArgument()) Fail("a parse error that is not InvalidArgument: " + s.ToString());
    if (s.message().rfind("filter: ", 0) != 0) Fail("message lacks 'filter: ': " + s.ToString());
    return 0;
  }
  const sieve::RowSet rows = f->Compile(*shard);
  if (!(rows - shard->Live()).Empty()) Fail("a filter passed a deleted row");
  if (f->MatchesAll() && rows != shard->Live()) Fail("the empty filter missed live rows");

  const std::string canonical = f->ToString();
  std::unique_ptr<sieve::Filter> again;
  s = sieve::Filter::Parse(canonical, spec, &again);
  if (!s.ok()) Fail("canonical text '" + canonical + "' does not parse: " + s.ToString());
  if (again->ToString() != canonical) {
    Fail("canonical text is not a fixed point: '" + canonical + "' -> '" + again->ToString() + "'");
  }
  if (again->Compile(*shard) != rows) Fail("canonical text '" + canonical + "' passes other rows");
  return 0;
}
