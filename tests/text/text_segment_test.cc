// Copyright 2026 The Sieve Authors.

#include "text/text_segment.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

namespace sieve {
namespace {

const TextAnalyzer& Simple() {
  static std::shared_ptr<const TextAnalyzer> a = [] {
    std::shared_ptr<const TextAnalyzer> x;
    EXPECT_TRUE(TextAnalyzer::Get("simple", &x).ok());
    return x;
  }();
  return *a;
}

// What a segment must hold, from the analyzer's tokens row by row: term → row → positions.
using Expected = std::map<std::string, std::map<uint32_t, std::vector<uint32_t>>>;

Expected FromTokens(const std::vector<std::string>& values, const std::vector<uint8_t>& valid) {
  Expected e;
  for (uint32_t r = 0; r < values.size(); ++r) {
    if (!valid[r]) continue;
    std::vector<TextToken> tokens;
    EXPECT_TRUE(Simple().Analyze(values[r], &tokens).ok());
    for (const TextToken& t : tokens) e[t.term][r].push_back(t.position);
  }
  return e;
}

Expected FromSegment(const TextSegment& s) {
  Expected e;
  for (size_t t = 0; t < s.terms.size(); ++t) {
    for (uint32_t p = s.term_starts[t]; p < s.term_starts[t + 1]; ++p) {
      auto& pos = e[s.terms[t]][s.rows[p]];
      pos.assign(s.positions.begin() + s.position_starts[p],
                 s.positions.begin() + s.position_starts[p + 1]);
    }
  }
  return e;
}

std::vector<std::string> RandomTexts(std::mt19937& rng, size_t n) {
  static const char* kWords[] = {"red", "green", "blue", "shoe", "boot", "the", "a", "run"};
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) {
    std::string s;
    const size_t words = rng() % 7;
    for (size_t w = 0; w < words; ++w)
      s += std::string(kWords[rng() % 8]) + (rng() % 3 ? " " : ", ");
    out.push_back(s);
  }
  return out;
}

TEST(TextSegmentTest, BuildHoldsEveryTokenOfEveryNonNullRow) {
  std::mt19937 rng(5);
  auto values = RandomTexts(rng, 300);
  std::vector<uint8_t> valid(values.size());
  for (auto& v : valid) v = rng() % 5 != 0;
  TextSegment s;
  ASSERT_TRUE(BuildTextSegment(Simple(), values, valid, &s).ok());
  EXPECT_EQ(s.num_rows, 300u);
  EXPECT_TRUE(CheckTextSegment(s, valid).ok());
  EXPECT_EQ(FromSegment(s), FromTokens(values, valid));
  const std::vector<uint32_t> lengths = s.Lengths();
  for (uint32_t r = 0; r < values.size(); ++r) {
    std::vector<TextToken> tokens;
    ASSERT_TRUE(Simple().Analyze(values[r], &tokens).ok());
    EXPECT_EQ(lengths[r], valid[r] ? tokens.size() : 0u) << r;
  }
}

TEST(TextSegmentTest, RebuildOfChangedRowsEqualsABuildOfTheNewValues) {
  std::mt19937 rng(7);
  auto values = RandomTexts(rng, 200);
  std::vector<uint8_t> valid(values.size(), 1);
  TextSegment old;
  ASSERT_TRUE(BuildTextSegment(Simple(), values, valid, &old).ok());
  std::vector<uint32_t> changed;
  for (uint32_t r = 0; r < values.size(); r += 1 + rng() % 9) {
    changed.push_back(r);
    values[r] = RandomTexts(rng, 1)[0];
    valid[r] = rng() % 4 != 0;
  }
  TextSegment rebuilt, built;
  ASSERT_TRUE(RebuildTextSegment(Simple(), old, changed, values, valid, &rebuilt).ok());
  ASSERT_TRUE(BuildTextSegment(Simple(), values, valid, &built).ok());
  EXPECT_EQ(rebuilt, built);
}

TEST(TextSegmentTest, SliceAndSelectRenumberTheRowsTheyKeep) {
  std::mt19937 rng(9);
  auto values = RandomTexts(rng, 100);
  std::vector<uint8_t> valid(values.size(), 1);
  TextSegment s;
  ASSERT_TRUE(BuildTextSegment(Simple(), values, valid, &s).ok());
  TextSegment slice = SliceTextSegment(s, 30, 40);
  TextSegment want;
  ASSERT_TRUE(BuildTextSegment(Simple(),
                               std::vector<std::string>(values.begin() + 30, values.begin() + 70),
                               std::vector<uint8_t>(40, 1), &want)
                  .ok());
  EXPECT_EQ(slice, want);
  std::vector<uint8_t> keep(values.size());
  std::vector<std::string> kept;
  for (size_t r = 0; r < values.size(); ++r) {
    keep[r] = rng() % 2;
    if (keep[r]) kept.push_back(values[r]);
  }
  ASSERT_TRUE(BuildTextSegment(Simple(), kept, std::vector<uint8_t>(kept.size(), 1), &want).ok());
  EXPECT_EQ(SelectTextSegment(s, keep), want);
}

TEST(TextSegmentTest, CheckFindsEveryBrokenRule) {
  TextSegment s;
  ASSERT_TRUE(BuildTextSegment(Simple(), {"b a b", "c", "a"}, {1, 1, 1}, &s).ok());
  ASSERT_TRUE(CheckTextSegment(s, {1, 1, 1}).ok());
  EXPECT_TRUE(CheckTextSegment(s, {1, 1}).IsCorruption());
  EXPECT_TRUE(CheckTextSegment(s, {1, 0, 1}).IsCorruption());  // a posting in a null row
  auto broken = [&](auto&& change) {
    TextSegment b = s;
    change(&b);
    return CheckTextSegment(b, {1, 1, 1});
  };
  EXPECT_TRUE(broken([](TextSegment* b) { std::swap(b->terms[0], b->terms[1]); }).IsCorruption());
  EXPECT_TRUE(broken([](TextSegment* b) { b->terms[0] = ""; }).IsCorruption());
  EXPECT_TRUE(broken([](TextSegment* b) { b->rows[0] = 3; }).IsCorruption());
  EXPECT_TRUE(broken([](TextSegment* b) { b->rows[1] = b->rows[0]; }).IsCorruption());
  EXPECT_TRUE(broken([](TextSegment* b) { b->term_starts.back() = 1; }).IsCorruption());
  // "b" in row 0 has positions 0 and 2: make them equal.
  EXPECT_TRUE(broken([](TextSegment* b) {
                const size_t t = 1;  // "b"
                const uint32_t p = b->term_starts[t];
                b->positions[b->position_starts[p] + 1] = b->positions[b->position_starts[p]];
              }).IsCorruption());
}

}  // namespace
}  // namespace sieve
