// Copyright 2026 The Sieve Authors.
//
// The analyzers' documented outputs (docs/filter-language.md, "Text analyzers") on fixed
// strings, token by token: the ICU segmentation, folding, stop words and Snowball stems are
// held to what the documentation promises rather than to a second tokenizer.

#include "text/text_analyzer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace sieve {
namespace {

std::vector<TextToken> Analyze(const std::string& analyzer, const std::string& text) {
  std::shared_ptr<const TextAnalyzer> a;
  Status s = TextAnalyzer::Get(analyzer, &a);
  EXPECT_TRUE(s.ok()) << s.ToString();
  std::vector<TextToken> out;
  if (!s.ok()) return out;
  s = a->Analyze(text, &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

// "term@position term@position ..." for readable comparisons.
std::string Show(const std::vector<TextToken>& tokens) {
  std::string s;
  for (const TextToken& t : tokens)
    s += (s.empty() ? "" : " ") + t.term + "@" + std::to_string(t.position);
  return s;
}

TEST(TextAnalyzerTest, EnglishIsWordsFoldedStopWordsDroppedAndPorter2Stems) {
  // The example docs/filter-language.md walks through.
  EXPECT_EQ(Show(Analyze("english", "The Quick Brown Foxes jumped over the lazy dogs.")),
            "quick@1 brown@2 fox@3 jump@4 over@5 lazi@7 dog@8");
  EXPECT_EQ(Show(Analyze("english", "Running shoes, runners' SHOES & the runner's shoe")),
            "run@0 shoe@1 runner@2 shoe@3 runner@5 shoe@6");
  // U+2019 becomes an apostrophe; numbers and abbreviations stay one word; a hyphen splits.
  EXPECT_EQ(Show(Analyze("english", "Don\u2019t stop: it's 3.14 \u2014 U.S.A. e-mail foo_bar")),
            "don't@0 stop@1 it@2 3.14@3 u.s.a@4 e@5 mail@6 foo_bar@7");
  // Full case folding: ß → ss, final sigma → σ, the ﬁ ligature → fi.
  EXPECT_EQ(
      Show(Analyze("english",
                   "Stra\u00dfe \u03a3\u038a\u03a3\u03a5\u03a6\u039f\u03a3 \ufb01ne Caf\u00e9")),
      "strass@0 \u03c3\u03af\u03c3\u03c5\u03c6\u03bf\u03c3@1 fine@2 caf\u00e9@3");
}

// An ASCII word is folded byte by byte and every other word by ICU; the two agree wherever a
// word's case can be written either way (the ASCII K and the Kelvin sign fold to the same k,
// U+2019 and ' make the same word), and a word of both kinds goes the ICU way as a whole.
TEST(TextAnalyzerTest, AsciiWordsFoldAsIcuFoldsThem) {
  EXPECT_EQ(Show(Analyze("simple", "KELVIN \u212aelvin kelvin MiXeD123 A_B DON'T Don\u2019t")),
            "kelvin@0 kelvin@1 kelvin@2 mixed123@3 a_b@4 don't@5 don't@6");
  EXPECT_EQ(Show(Analyze("simple", "CAF\u00c9 Caf\u00e9 cafe NA\u00cfVE")),
            "caf\u00e9@0 caf\u00e9@1 cafe@2 na\u00efve@3");
}

// A text of ASCII letters and spaces alone is split without ICU (its words are its runs of
// letters); the same text with a '!' after it goes through ICU's word breaks. Both must give
// the same tokens at the same positions, for every analyzer kind: random texts with upper
// case, runs of spaces at either end, stop words and words past kMaxTermBytes.
TEST(TextAnalyzerTest, LetterAndSpaceTextsSplitAsIcuSplitsThem) {
  std::mt19937 rng(34);
  const std::vector<std::string> words = {"the", "Running", "SHOES", "a", "of", "Dogs", "x",
                                          "caresses", "ponies", "generously", "THE", "and"};
  for (int i = 0; i < 400; ++i) {
    std::string text;
    const int n = static_cast<int>(rng() % 8);
    for (int w = 0; w < n; ++w) {
      text += std::string(rng() % 3, ' ');
      switch (rng() % 4) {
        case 0: {
          const size_t len = 1 + rng() % (i % 50 == 0 ? 300 : 12);
          for (size_t c = 0; c < len; ++c) {
            text += static_cast<char>((rng() % 2 ? 'a' : 'A') + rng() % 26);
          }
          break;
        }
        default: text += words[rng() % words.size()];
      }
      text += std::string(1 + rng() % 2, ' ');
    }
    for (const char* analyzer : {"english", "simple", "stem:french"}) {
      EXPECT_EQ(Show(Analyze(analyzer, text)), Show(Analyze(analyzer, text + "!")))
          << analyzer << " '" << text << "'";
    }
  }
  EXPECT_EQ(Show(Analyze("english", "  The  Quick brown FOXES  ")), "quick@1 brown@2 fox@3");
  EXPECT_EQ(Show(Analyze("simple", std::string(kMaxTermBytes + 1, 'y') + " Zed")), "zed@1");
}

// Stems are remembered per worker (and forgotten past a bound): analyzing more distinct words
// than it remembers, twice, gives the same stems both times, and as one word alone does.
TEST(TextAnalyzerTest, RememberedStemsAreTheStemmersOwn) {
  std::string text;
  std::vector<std::string> words;
  for (int i = 0; i < 70000; ++i) {
    std::string w = "running";
    for (int x = i; x > 0; x /= 26) w += static_cast<char>('a' + x % 26);
    w += (i % 3 == 0) ? "ing" : (i % 3 == 1 ? "ed" : "ness");
    words.push_back(w);
    text += w + " ";
  }
  const std::vector<TextToken> first = Analyze("english", text);
  const std::vector<TextToken> second = Analyze("english", text);
  ASSERT_EQ(first.size(), words.size());
  ASSERT_EQ(Show(first), Show(second));
  for (size_t i = 0; i < words.size(); i += 997) {
    const std::vector<TextToken> alone = Analyze("english", words[i]);
    ASSERT_EQ(alone.size(), 1u);
    EXPECT_EQ(alone[0].term, first[i].term) << words[i];
  }
  EXPECT_EQ(Show(Analyze("english", "running runs ran")), "run@0 run@1 ran@2");
  EXPECT_EQ(Show(Analyze("english", "running runs ran")), "run@0 run@1 ran@2");
}

TEST(TextAnalyzerTest, SimpleKeepsEveryWordFoldedAndUnstemmed) {
  EXPECT_EQ(Show(Analyze("simple", "The Quick Brown Foxes jumped over the lazy dogs.")),
            "the@0 quick@1 brown@2 foxes@3 jumped@4 over@5 the@6 lazy@7 dogs@8");
  EXPECT_EQ(Show(Analyze("simple", "Running shoes, runners' SHOES & the runner's shoe")),
            "running@0 shoes@1 runners@2 shoes@3 the@4 runner's@5 shoe@6");
  // Dictionary segmentation of Japanese: one token per word ICU finds.
  EXPECT_EQ(Show(Analyze("simple", "\u6771\u4eac\u90fd\u306b\u4f4f\u3093\u3067\u3044\u307e\u3059")),
            "\u6771\u4eac@0 \u90fd@1 \u306b@2 \u4f4f@3 \u3093\u3067@4 \u3044@5 \u307e\u3059@6");
}

TEST(TextAnalyzerTest, StemLanguageStemsWithThatSnowballAlgorithmAndKeepsStopWords) {
  EXPECT_EQ(Show(Analyze("stem:french", "G\u00e9n\u00e9ralement, les chevaux")),
            "g\u00e9n\u00e9ral@0 le@1 cheval@2");
  EXPECT_EQ(Show(Analyze("stem:english", "the runners")), "the@0 runner@1");
  EXPECT_EQ(Show(Analyze("stem:german", "H\u00e4user")), "haus@0");
}

TEST(TextAnalyzerTest, EveryStopWordIsDroppedAndKeepsItsPosition) {
  const auto& stop = TextAnalyzer::EnglishStopWords();
  EXPECT_EQ(stop.size(), 33u);
  EXPECT_TRUE(std::is_sorted(stop.begin(), stop.end()));
  for (std::string_view w : stop) {
    const std::string text = "alpha " + std::string(w) + " omega";
    EXPECT_EQ(Show(Analyze("english", text)), "alpha@0 omega@2") << w;
    // Upper case folds first.
    std::string upper(w);
    for (char& c : upper) c = static_cast<char>(c - 'a' + 'A');
    EXPECT_EQ(Show(Analyze("english", upper + " omega")), "omega@1") << upper;
  }
}

TEST(TextAnalyzerTest, PunctuationSpacesAndSymbolsAreNotWords) {
  EXPECT_TRUE(Analyze("english", "").empty());
  EXPECT_TRUE(Analyze("english", "  ,.;:!? -- () \t\n \U0001F600 ").empty());
  EXPECT_EQ(Show(Analyze("simple", "a\u3000b")), "a@0 b@1");  // ideographic space
}

TEST(TextAnalyzerTest, IllFormedUtf8BecomesReplacementCharactersWhichAreNotWords) {
  EXPECT_EQ(Show(Analyze("simple", std::string("ab\xff"
                                               "cd \xc3 ef",
                                               10))),
            "ab@0 cd@1 ef@2");
}

TEST(TextAnalyzerTest, OverlongWordsAreDroppedAndKeepTheirPosition) {
  const std::string longest(kMaxTermBytes, 'x');
  const std::string too_long(kMaxTermBytes + 1, 'y');
  auto tokens = Analyze("simple", "a " + longest + " " + too_long + " b");
  ASSERT_EQ(tokens.size(), 3u);
  EXPECT_EQ(tokens[1].term, longest);
  EXPECT_EQ(tokens[2].term, "b");
  EXPECT_EQ(tokens[2].position, 3u);
}

TEST(TextAnalyzerTest, UnknownNamesAreRefusedNamingTheAcceptedOnes) {
  std::shared_ptr<const TextAnalyzer> a;
  for (const char* bad : {"", "English", "stem:", "stem:klingon", "icu", "simple "}) {
    Status s = TextAnalyzer::Get(bad, &a);
    EXPECT_TRUE(s.IsInvalidArgument()) << bad;
    EXPECT_NE(s.message().find("'english', 'simple' or 'stem:<language>'"), std::string::npos)
        << s.message();
  }
  const auto langs = TextAnalyzer::StemLanguages();
  EXPECT_TRUE(std::find(langs.begin(), langs.end(), "french") != langs.end());
  for (const std::string& lang : langs) EXPECT_TRUE(TextAnalyzer::Validate("stem:" + lang).ok());
  std::shared_ptr<const TextAnalyzer> b;
  ASSERT_TRUE(TextAnalyzer::Get("english", &a).ok());
  ASSERT_TRUE(TextAnalyzer::Get("english", &b).ok());
  EXPECT_EQ(a.get(), b.get());
  EXPECT_TRUE(a->stems());
  EXPECT_TRUE(a->drops_stop_words());
}

TEST(TextAnalyzerTest, TooLongATextIsRefused) {
  std::shared_ptr<const TextAnalyzer> a;
  ASSERT_TRUE(TextAnalyzer::Get("simple", &a).ok());
  std::vector<TextToken> out;
  Status s = a->Analyze(std::string(kMaxTextBytes + 1, 'a'), &out);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
}

TEST(TextAnalyzerTest, ConcurrentCallsGiveTheSameTokens) {
  const std::vector<std::string> texts = {
      "The Quick Brown Foxes jumped over the lazy dogs.", "Running shoes for the runner",
      "G\u00e9n\u00e9ralement, les chevaux", "\u6771\u4eac\u90fd\u306b\u4f4f\u3093\u3067"};
  std::vector<std::string> want;
  for (const std::string& t : texts) want.push_back(Show(Analyze("english", t)));
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int th = 0; th < 4; ++th) {
    threads.emplace_back([&, th] {
      std::shared_ptr<const TextAnalyzer> a;
      if (!TextAnalyzer::Get("english", &a).ok()) return;
      std::vector<TextToken> out;
      for (int i = 0; i < 300; ++i) {
        const size_t k = static_cast<size_t>(i + th) % texts.size();
        if (!a->Analyze(texts[k], &out).ok() || Show(out) != want[k]) ++wrong[th];
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int th = 0; th < 4; ++th) EXPECT_EQ(wrong[th], 0) << "thread " << th;
}

}  // namespace
}  // namespace sieve
