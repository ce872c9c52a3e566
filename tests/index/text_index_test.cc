// Copyright 2026 The Sieve Authors.
//
// TextIndex kept exact under appends, updates and deletes: after every change it must equal
// (Difference) an index rebuilt from the current values, and its postings, positions, lengths,
// block bounds and live statistics must be what the analyzer makes of those values.

#include "index/text_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "index/shard_index.h"

namespace sieve {
namespace {

std::optional<std::string> RandomText(std::mt19937& rng) {
  static const char* kWords[] = {"Red", "green", "blue", "shoes",   "shoe", "boots",
                                 "the", "of",    "run",  "running", "new",  "york"};
  if (rng() % 6 == 0) return std::nullopt;
  std::string s;
  // Now and then a row longer than Block::lengths holds (TextIndex::kLongRow).
  const size_t words = rng() % 40 == 0 ? 320 + rng() % 60 : rng() % 9;
  for (size_t w = 0; w < words; ++w) s += std::string(kWords[rng() % 12]) + " ";
  return s;
}

// Rebuilds an index from values alone, as DB::Check does.
TextIndex Rebuild(const std::vector<std::optional<std::string>>& values,
                  const std::vector<uint8_t>& deleted) {
  std::vector<std::string> strings;
  std::vector<uint8_t> valid;
  for (const auto& v : values) {
    strings.push_back(v.value_or(""));
    valid.push_back(v.has_value());
  }
  std::shared_ptr<const TextAnalyzer> a;
  EXPECT_TRUE(TextAnalyzer::Get("english", &a).ok());
  TextSegment s;
  EXPECT_TRUE(BuildTextSegment(*a, strings, valid, &s).ok());
  TextIndex index("english");
  index.Append(s, valid);
  std::vector<uint32_t> gone;
  for (uint32_t r = 0; r < deleted.size(); ++r) {
    if (deleted[r]) gone.push_back(r);
  }
  index.Delete(RowSet::Of(gone.data(), gone.size()));
  return index;
}

// Checks what the index tells a BM25 scorer against the analyzer's tokens of each value.
void ExpectServes(const TextIndex& index, const std::vector<std::optional<std::string>>& values,
                  const std::vector<uint8_t>& deleted) {
  std::shared_ptr<const TextAnalyzer> a;
  ASSERT_TRUE(TextAnalyzer::Get("english", &a).ok());
  std::map<std::string, std::map<uint32_t, std::vector<uint32_t>>> want;
  uint64_t live_docs = 0, live_len = 0;
  for (uint32_t r = 0; r < values.size(); ++r) {
    std::vector<TextToken> tokens;
    if (values[r]) ASSERT_TRUE(a->Analyze(*values[r], &tokens).ok());
    EXPECT_EQ(index.DocumentLength(r), tokens.size()) << r;
    for (const TextToken& t : tokens) want[t.term][r].push_back(t.position);
    if (!deleted[r] && values[r]) {
      ++live_docs;
      live_len += tokens.size();
    }
  }
  EXPECT_EQ(index.live_documents(), live_docs);
  EXPECT_EQ(index.live_length(), live_len);
  std::vector<uint32_t> gone;
  for (uint32_t r = 0; r < deleted.size(); ++r) {
    if (deleted[r]) gone.push_back(r);
  }
  const RowSet deleted_set = RowSet::Of(gone.data(), gone.size());
  size_t terms = 0;
  index.ForEachTerm([&](const std::string& term, const TextIndex::Postings& p) {
    ++terms;
    auto it = want.find(term);
    ASSERT_NE(it, want.end()) << term;
    std::vector<uint32_t> ordinals;
    uint32_t last = 0;
    bool first = true;
    std::vector<std::pair<uint32_t, uint32_t>> term_peaks;
    for (const TextIndex::Block& b : p.blocks()) {
      ASSERT_GT(b.size(), 0u);
      ASSERT_LE(b.size(), 2 * TextIndex::kBlockSize);
      uint32_t max_tf = 0, min_len = UINT32_MAX;
      for (size_t i = 0; i < b.size(); ++i) {
        const uint32_t o = b.ordinals[i];
        EXPECT_TRUE(first || o > last) << term;
        first = false;
        last = o;
        ordinals.push_back(o);
        const std::vector<uint32_t> pos(b.positions.begin() + b.position_starts[i],
                                        b.positions.begin() + b.position_starts[i + 1]);
        EXPECT_EQ(pos, it->second[o]) << term << " row " << o;
        EXPECT_EQ(b.tfs[i], pos.size());
        EXPECT_EQ(b.lengths[i], std::min<uint32_t>(index.DocumentLength(o), TextIndex::kLongRow));
        max_tf = std::max(max_tf, b.tfs[i]);
        min_len = std::min(min_len, index.DocumentLength(o));
      }
      EXPECT_EQ(b.max_tf, max_tf) << term;
      EXPECT_EQ(b.min_length, min_len) << term;
      // Peaks: the pairs no other entry of the block dominates, by brute force.
      std::vector<std::pair<uint32_t, uint32_t>> peaks;
      for (size_t i = 0; i < b.size(); ++i) {
        const uint32_t tf = b.tfs[i], len = index.DocumentLength(b.ordinals[i]);
        bool dominated = false;
        for (size_t j = 0; j < b.size(); ++j) {
          const uint32_t tf2 = b.tfs[j], len2 = index.DocumentLength(b.ordinals[j]);
          dominated = dominated || (tf2 >= tf && len2 <= len && (tf2 > tf || len2 < len));
        }
        if (!dominated) peaks.emplace_back(tf, len);
      }
      std::sort(peaks.begin(), peaks.end());
      peaks.erase(std::unique(peaks.begin(), peaks.end()), peaks.end());
      std::vector<uint32_t> flat;
      for (const auto& [tf, len] : peaks) {
        flat.push_back(tf);
        flat.push_back(len);
        term_peaks.emplace_back(tf, len);
      }
      EXPECT_EQ(b.peaks, flat) << term;
    }
    // The term's peaks: those of its blocks' peaks that no other dominates.
    std::vector<uint32_t> want_peaks;
    for (const auto& [tf, len] : term_peaks) {
      bool dominated = false;
      for (const auto& [tf2, len2] : term_peaks) {
        dominated = dominated || (tf2 >= tf && len2 <= len && (tf2 > tf || len2 < len));
      }
      if (dominated) continue;
      want_peaks.push_back(tf);
      want_peaks.push_back(len);
    }
    std::vector<std::pair<uint32_t, uint32_t>> sorted_peaks;
    for (size_t i = 0; i < want_peaks.size(); i += 2) {
      sorted_peaks.emplace_back(want_peaks[i], want_peaks[i + 1]);
    }
    std::sort(sorted_peaks.begin(), sorted_peaks.end());
    sorted_peaks.erase(std::unique(sorted_peaks.begin(), sorted_peaks.end()), sorted_peaks.end());
    want_peaks.clear();
    for (const auto& [tf, len] : sorted_peaks) {
      want_peaks.push_back(tf);
      want_peaks.push_back(len);
    }
    EXPECT_EQ(p.peaks(), want_peaks) << term;
    EXPECT_EQ(ordinals.size(), it->second.size()) << term;
    EXPECT_EQ(p.rows(), RowSet::Of(ordinals.data(), ordinals.size())) << term;
    uint64_t live = 0;
    for (const auto& [o, unused] : it->second) live += !deleted[o];
    EXPECT_EQ(index.LiveCount(term, deleted_set), live) << term;
    const uint32_t *pb = nullptr, *pe = nullptr;
    const uint32_t o = it->second.begin()->first;
    ASSERT_TRUE(p.Positions(o, &pb, &pe));
    EXPECT_EQ(std::vector<uint32_t>(pb, pe), it->second.begin()->second);
  });
  EXPECT_EQ(terms, want.size());
  EXPECT_EQ(index.Find("no-such-term"), nullptr);
}

TEST(TextIndexTest, UpdatesAndDeletesKeepItEqualToARebuild) {
  std::mt19937 rng(11);
  std::vector<std::optional<std::string>> values;
  std::vector<uint8_t> deleted;
  TextIndex index("english");
  std::shared_ptr<const TextAnalyzer> a;
  ASSERT_TRUE(TextAnalyzer::Get("english", &a).ok());
  // Appends in segments of several sizes, so that terms span many blocks.
  for (int chunk = 0; chunk < 6; ++chunk) {
    const size_t n = 50 + rng() % 400;
    std::vector<std::string> strings;
    std::vector<uint8_t> valid;
    for (size_t i = 0; i < n; ++i) {
      auto v = RandomText(rng);
      values.push_back(v);
      deleted.push_back(0);
      strings.push_back(v.value_or(""));
      valid.push_back(v.has_value());
    }
    TextSegment s;
    ASSERT_TRUE(BuildTextSegment(*a, strings, valid, &s).ok());
    index.Append(s, valid);
  }
  EXPECT_EQ(index.Difference(Rebuild(values, deleted)), "");
  ExpectServes(index, values, deleted);
  // Many updates landing in the same blocks split them; deletes leave the live statistics.
  for (int step = 0; step < 3000; ++step) {
    const uint32_t r = static_cast<uint32_t>(rng() % (step % 2 ? 40 : values.size()));
    if (rng() % 10 == 0) {
      if (!deleted[r]) {
        deleted[r] = 1;
        index.Delete(RowSet::Of(&r, 1));
      }
      continue;
    }
    if (deleted[r]) continue;  // an update selects live rows only
    auto v = RandomText(rng);
    index.Set(r, values[r] ? &*values[r] : nullptr, v ? &*v : nullptr);
    values[r] = v;
  }
  EXPECT_EQ(index.Difference(Rebuild(values, deleted)), "");
  ExpectServes(index, values, deleted);
  TextIndex copy = index.Copy();
  EXPECT_EQ(copy.Difference(index), "");
}

TEST(TextIndexTest, DifferenceNamesWhatDiffers) {
  std::vector<std::optional<std::string>> values = {"red shoes", "blue boots", std::nullopt};
  std::vector<uint8_t> deleted = {0, 0, 0};
  TextIndex index = Rebuild(values, deleted);
  EXPECT_EQ(index.Difference(Rebuild(values, deleted)), "");
  values[1] = "blue shoes";
  EXPECT_NE(index.Difference(Rebuild(values, deleted)).find("term '"), std::string::npos);
  values[1] = "blue boots";
  deleted[0] = 1;
  EXPECT_NE(index.Difference(Rebuild(values, deleted)).find("live statistics"), std::string::npos);
}

TEST(TextIndexTest, ShardIndexKeepsItThroughChunksValuesDeletesAndCopies) {
  CollectionSpec spec;
  spec.name = "t";
  spec.dim = 1;
  spec.attributes = {{"n", AttrType::kInt}, {"body", AttrType::kText, "english"}};
  ShardIndex shard(spec, 0);
  EXPECT_EQ(shard.text(0), nullptr);
  ASSERT_NE(shard.text(1), nullptr);
  Chunk c;
  c.num_rows = 3;
  c.ids = {1, 2, 3};
  c.vectors = {1, 2, 3};
  c.columns.resize(2);
  c.columns[0].type = AttrType::kInt;
  c.columns[1].type = AttrType::kText;
  for (int i = 0; i < 3; ++i) c.columns[0].Append(Value(int64_t{i}));
  c.columns[1].Append(Value(std::string("red running shoes")));
  c.columns[1].Append(Value());
  c.columns[1].Append(Value(std::string("The shoe")));
  // Without a segment the shard analyzes the column itself.
  shard.ApplyChunk(c);
  EXPECT_EQ(shard.text(1)->live_documents(), 2u);
  EXPECT_EQ(shard.text(1)->live_length(), 4u);
  EXPECT_EQ(shard.text(1)->Find("shoe")->rows().Cardinality(), 2u);
  auto copy = shard.CopyForWrite();
  copy->SetValue(1, 1, Value(std::string("shoes shoes")));
  copy->SetDeleted(RowSet::Range(0, 1));
  EXPECT_EQ(copy->text(1)->Find("shoe")->rows().Cardinality(), 3u);
  EXPECT_EQ(copy->text(1)->live_documents(), 2u);
  EXPECT_EQ(copy->text(1)->live_length(), 3u);
  EXPECT_EQ(copy->text(1)->LiveCount("shoe", copy->deleted()), 2u);
  // A deleted row keeps its postings (as every index of a shard does); it is not live.
  ASSERT_NE(copy->text(1)->Find("run"), nullptr);
  EXPECT_EQ(copy->text(1)->LiveCount("run", copy->deleted()), 0u);
  EXPECT_NE(copy->text(1)->Find("red"), nullptr);
  // The original image is untouched.
  EXPECT_EQ(shard.text(1)->Find("shoe")->rows().Cardinality(), 2u);
  EXPECT_EQ(shard.text(1)->live_length(), 4u);
}

}  // namespace
}  // namespace sieve
