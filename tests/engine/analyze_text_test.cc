// Copyright 2026 The Sieve Authors.
//
// sieve::AnalyzeText, the public face of the text analyzers (include/sieve/text.h): the
// documented terms and positions on fixed strings, and the errors it promises.

#include "sieve/text.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace sieve {
namespace {

TEST(AnalyzeTextTest, EnglishDropsStopWordsKeepsTheirPositionsAndStems) {
  std::vector<std::string> terms;
  std::vector<uint32_t> positions;
  ASSERT_TRUE(
      AnalyzeText("english", "The runners were RUNNING, to the shoe-store!", &terms, &positions)
          .ok());
  EXPECT_EQ(terms, (std::vector<std::string>{"runner", "were", "run", "shoe", "store"}));
  EXPECT_EQ(positions, (std::vector<uint32_t>{1, 2, 3, 6, 7}));
}

TEST(AnalyzeTextTest, SimpleOnlyFoldsAndPositionsAreOptional) {
  std::vector<std::string> terms;
  ASSERT_TRUE(AnalyzeText("simple", "The Runners  were running", &terms).ok());
  EXPECT_EQ(terms, (std::vector<std::string>{"the", "runners", "were", "running"}));
}

TEST(AnalyzeTextTest, NamedStemmerHasNoStopWords) {
  std::vector<std::string> terms;
  ASSERT_TRUE(AnalyzeText("stem:french", "les chevaux", &terms).ok());
  EXPECT_EQ(terms, (std::vector<std::string>{"le", "cheval"}));
}

TEST(AnalyzeTextTest, EmptyAndPunctuationOnlyTextsHaveNoTerms) {
  std::vector<std::string> terms = {"left over"};
  std::vector<uint32_t> positions = {7};
  ASSERT_TRUE(AnalyzeText("english", " ,.;!? ", &terms, &positions).ok());
  EXPECT_TRUE(terms.empty());
  EXPECT_TRUE(positions.empty());
  ASSERT_TRUE(AnalyzeText("english", "", &terms).ok());
  EXPECT_TRUE(terms.empty());
}

TEST(AnalyzeTextTest, UnknownAnalyzerIsInvalidArgumentNamingTheAcceptedOnes) {
  std::vector<std::string> terms = {"left over"};
  Status s = AnalyzeText("klingon", "qapla", &terms);
  ASSERT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("klingon"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("'english'"), std::string::npos) << s.ToString();
  EXPECT_TRUE(terms.empty());
  s = AnalyzeText("stem:klingon", "qapla", &terms);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
}

TEST(AnalyzeTextTest, TextOver64MiBIsInvalidArgument) {
  const std::string text((size_t{64} << 20) + 1, 'a');
  std::vector<std::string> terms;
  Status s = AnalyzeText("simple", text, &terms);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_TRUE(terms.empty());
}

TEST(AnalyzeTextTest, DefaultIsEnglish) { EXPECT_EQ(DefaultTextAnalyzer(), "english"); }

TEST(AnalyzeTextTest, ConcurrentCallsAgree) {
  const std::string text = "Sieve's analyzers borrow a break iterator and a stemmer per call";
  std::vector<std::string> want;
  ASSERT_TRUE(AnalyzeText("english", text, &want).ok());
  ASSERT_EQ(want.size(), 8u);  // "a", "and", "a" are stop words
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        std::vector<std::string> got;
        if (!AnalyzeText("english", text, &got).ok() || got != want) ++mismatches[t];
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

}  // namespace
}  // namespace sieve
