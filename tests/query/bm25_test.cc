// Copyright 2026 The Sieve Authors.
//
// Bm25TopK against a float64 oracle computed here from the analyzer's tokens alone (the
// issue's formula), and the pruned search against the exhaustive one, over many random
// corpora, queries, filters, updates and deletes, with ties (repeated documents) and ids that
// are not in ordinal order.

#include "query/bm25.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "text/text_analyzer.h"
#include "text/text_segment.h"

namespace sieve {
namespace {

const char* kWords[] = {"red",  "green", "blue",  "shoe",  "boot",   "run",  "walk", "city",
                        "road", "river", "stone", "light", "dark",   "fast", "slow", "tree",
                        "leaf", "wind",  "rain",  "snow",  "the",    "of",   "sun",  "moon",
                        "star", "cloud", "hill",  "lake",  "forest", "sand"};
constexpr size_t kNumWords = sizeof(kWords) / sizeof(kWords[0]);

// Zipf-like: low word indexes are common, so some terms have long postings.
std::string RandomText(std::mt19937& rng, size_t max_words) {
  std::string s;
  const size_t n = rng() % (max_words + 1);
  for (size_t i = 0; i < n; ++i) {
    const size_t a = rng() % kNumWords, b = rng() % kNumWords;
    s += std::string(kWords[std::min(a, b)]) + " ";
  }
  return s;
}

struct Corpus {
  std::vector<std::optional<std::string>> values;
  std::vector<uint8_t> deleted;
  std::vector<int64_t> ids;
  TextIndex index{"english"};
  std::vector<std::vector<std::string>> terms;  // of each value (Analyze), for the oracle
};

std::vector<TextToken> Tokens(const std::string& text) {
  std::shared_ptr<const TextAnalyzer> a;
  EXPECT_TRUE(TextAnalyzer::Get("english", &a).ok());
  std::vector<TextToken> t;
  EXPECT_TRUE(a->Analyze(text, &t).ok());
  return t;
}

// Corpus::terms from the values as they are now.
void Tokenize(Corpus* c) {
  c->terms.clear();
  for (const auto& v : c->values) {
    c->terms.emplace_back();
    if (!v) continue;
    for (const auto& t : Tokens(*v)) c->terms.back().push_back(t.term);
  }
}

void Build(Corpus* c) {
  std::vector<std::string> strings;
  std::vector<uint8_t> valid;
  for (const auto& v : c->values) {
    strings.push_back(v.value_or(""));
    valid.push_back(v.has_value());
  }
  std::shared_ptr<const TextAnalyzer> a;
  ASSERT_TRUE(TextAnalyzer::Get("english", &a).ok());
  TextSegment s;
  ASSERT_TRUE(BuildTextSegment(*a, strings, valid, &s).ok());
  c->index.Append(s, valid);
}

// The query's distinct terms with their idf over the corpus's live rows with a value, and the
// corpus's avgdl: computed from tokens, not from the index.
std::vector<Bm25Term> Terms(const Corpus& c, const std::string& query, double* avgdl) {
  uint64_t n = 0, length = 0;
  std::map<std::string, uint64_t> df;
  for (size_t r = 0; r < c.values.size(); ++r) {
    if (c.deleted[r] || !c.values[r]) continue;
    ++n;
    const auto& tokens = c.terms[r];
    length += tokens.size();
    std::map<std::string, int> seen;
    for (const auto& t : tokens) seen[t] = 1;
    for (const auto& [term, one] : seen) ++df[term];
  }
  *avgdl = n == 0 ? 0 : double(length) / double(n);
  std::vector<Bm25Term> terms;
  for (const auto& t : Tokens(query)) {
    auto it = std::find_if(terms.begin(), terms.end(),
                           [&](const Bm25Term& x) { return x.term == t.term; });
    if (it != terms.end()) {
      ++it->count;
      continue;
    }
    Bm25Term term;
    term.term = t.term;
    const double nt = double(df[t.term]);
    term.idf = std::log(1 + (double(n) - nt + 0.5) / (nt + 0.5));
    terms.push_back(term);
  }
  return terms;
}

// Row r's score in float64 from its tokens (0 when it holds no query term).
double OracleScore(const Corpus& c, const std::vector<Bm25Term>& terms, const Bm25Params& p,
                   double avgdl, uint32_t r) {
  std::map<std::string, double> tf;
  for (const auto& t : c.terms[r]) tf[t] += 1;
  const double dl = double(c.terms[r].size());
  double score = 0;
  for (const Bm25Term& t : terms) {
    auto it = tf.find(t.term);
    if (it == tf.end()) continue;
    score += t.count * t.idf * it->second / (it->second + p.k1 * (1 - p.b + p.b * dl / avgdl));
  }
  return score;
}

// Every allowed live row holding a query term, scored in float64 from its tokens.
std::vector<Bm25Hit> Oracle(const Corpus& c, const std::vector<Bm25Term>& terms,
                            const Bm25Params& p, double avgdl, const RowSet& allowed, size_t k) {
  std::vector<Bm25Hit> all;
  for (uint32_t r = 0; r < c.values.size(); ++r) {
    if (c.deleted[r] || !c.values[r] || !allowed.Contains(r)) continue;
    const auto& tokens = c.terms[r];
    std::map<std::string, double> tf;
    for (const auto& t : tokens) tf[t] += 1;
    const double dl = double(tokens.size());
    double score = 0;
    bool any = false;
    for (const Bm25Term& t : terms) {
      auto it = tf.find(t.term);
      if (it == tf.end()) continue;
      any = true;
      score += t.count * t.idf * it->second / (it->second + p.k1 * (1 - p.b + p.b * dl / avgdl));
    }
    if (any) all.push_back({score, c.ids[r], r});
  }
  std::sort(all.begin(), all.end(), Bm25Before);
  if (all.size() > k) all.resize(k);
  return all;
}

RowSet Live(const Corpus& c) {
  RowSet s;
  for (uint32_t r = 0; r < c.values.size(); ++r) {
    if (!c.deleted[r]) s.Add(r);
  }
  return s;
}

TEST(Bm25, IdfIsLucenes) {
  EXPECT_DOUBLE_EQ(Bm25Idf(10, 2), std::log(1 + (10 - 2 + 0.5) / 2.5));
  EXPECT_GT(Bm25Idf(10, 10), 0);  // never negative, unlike Robertson's
}

TEST(Bm25, HandComputedScores) {
  Corpus c;
  c.values = {std::string("red shoe"), std::string("red red boot walk"), std::nullopt,
              std::string("blue")};
  c.deleted.assign(4, 0);
  c.ids = {10, 11, 12, 13};
  Build(&c);
  Tokenize(&c);
  // N = 3 (the null row is no document), avgdl = (2 + 4 + 1) / 3, n_red = 2.
  const double avgdl = 7.0 / 3, idf = std::log(1 + (3 - 2 + 0.5) / 2.5);
  std::vector<Bm25Term> terms = {{"red", 1, idf}};
  std::vector<Bm25Hit> hits;
  Bm25Counters counters;
  Bm25TopK(c.index, terms, Bm25Params(), avgdl, Live(c), c.ids, 10, true, &hits, &counters);
  ASSERT_EQ(hits.size(), 2u);
  const double s10 = idf * 1 / (1 + 1.5 * (0.25 + 0.75 * 2 / avgdl));
  const double s11 = idf * 2 / (2 + 1.5 * (0.25 + 0.75 * 4 / avgdl));
  EXPECT_EQ(hits[0].id, s10 > s11 ? 10 : 11);
  EXPECT_NEAR(hits[0].score, std::max(s10, s11), 1e-15);
  EXPECT_NEAR(hits[1].score, std::min(s10, s11), 1e-15);
  EXPECT_EQ(counters.postings, 2u);
  // A term no row holds, and k = 0.
  Bm25TopK(c.index, {{"moon", 1, 1.0}}, Bm25Params(), avgdl, Live(c), c.ids, 10, true, &hits,
           &counters);
  EXPECT_TRUE(hits.empty());
  Bm25TopK(c.index, terms, Bm25Params(), avgdl, Live(c), c.ids, 0, true, &hits, &counters);
  EXPECT_TRUE(hits.empty());
}

// Pruned = exhaustive = oracle over random corpora, queries, filters, updates and deletes.
TEST(Bm25, PrunedEqualsExhaustiveAndOracle) {
  std::mt19937 rng(34);
  Bm25Counters total;
  size_t compared = 0, nonempty = 0;
  for (int round = 0; round < 60; ++round) {
    Corpus c;
    const size_t rows = 1 + rng() % (round % 3 == 0 ? 3000 : 400);
    const size_t max_words = 1 + rng() % 12;
    std::vector<std::string> pool;  // repeated texts make ties
    for (size_t r = 0; r < rows; ++r) {
      if (rng() % 10 == 0) {
        c.values.push_back(std::nullopt);
      } else if (rng() % 60 == 0) {  // often longer than Block::lengths holds
        c.values.push_back(RandomText(rng, 600));
      } else if (!pool.empty() && rng() % 4 == 0) {
        c.values.push_back(pool[rng() % pool.size()]);
      } else {
        pool.push_back(RandomText(rng, max_words));
        c.values.push_back(pool.back());
      }
    }
    c.deleted.assign(rows, 0);
    for (size_t r = 0; r < rows; ++r) c.ids.push_back(int64_t(r));
    std::shuffle(c.ids.begin(), c.ids.end(), rng);
    Build(&c);
    // Updates (through TextIndex::Set, which re-blocks postings) and deletes.
    for (size_t u = 0; u < rows / 10; ++u) {
      const uint32_t r = rng() % rows;
      std::optional<std::string> v;
      if (rng() % 5 != 0) v = RandomText(rng, max_words);
      c.index.Set(r, c.values[r] ? &*c.values[r] : nullptr, v ? &*v : nullptr);
      c.values[r] = v;
    }
    std::vector<uint32_t> gone;
    for (uint32_t r = 0; r < rows; ++r) {
      if (rng() % 7 == 0) {
        c.deleted[r] = 1;
        gone.push_back(r);
      }
    }
    c.index.Delete(RowSet::Of(gone.data(), gone.size()));
    Tokenize(&c);
    Bm25Params p;
    if (round % 4 == 1) p = {1.2, 0.5};
    if (round % 4 == 2) p = {0.0, 1.0};
    if (round % 4 == 3) p = {3.0, 0.0};
    for (int qi = 0; qi < 8; ++qi) {
      std::string query = RandomText(rng, 5) + kWords[rng() % kNumWords];
      if (qi == 0) query += " zzzunknown";
      double avgdl = 0;
      const auto terms = Terms(c, query, &avgdl);
      RowSet allowed = Live(c);
      if (qi % 2 == 1) {  // a filter: a random subset
        RowSet f;
        for (uint32_t r = 0; r < rows; ++r) {
          if (rng() % 3 != 0) f.Add(r);
        }
        allowed &= f;
      }
      const size_t k = 1 + rng() % (qi % 3 == 0 ? 50 : 5);
      std::vector<Bm25Hit> pruned, full;
      Bm25Counters cp, cf;
      Bm25TopK(c.index, terms, p, avgdl, allowed, c.ids, k, true, &pruned, &cp);
      Bm25TopK(c.index, terms, p, avgdl, allowed, c.ids, k, false, &full, &cf);
      const auto want = Oracle(c, terms, p, avgdl, allowed, k);
      ASSERT_EQ(pruned.size(), full.size()) << round << " " << query;
      ASSERT_EQ(pruned.size(), want.size()) << round << " " << query;
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(pruned[i].id, full[i].id) << round << " " << query << " rank " << i;
        EXPECT_EQ(pruned[i].score, full[i].score);  // bit for bit
        // The oracle sums in another order: where k1 = 0 or b = 0 makes rows tie exactly, its
        // scores may differ in the last bit and order them otherwise. A row in another place
        // then has the oracle's score of the row it displaced, to that rounding.
        if (pruned[i].id != want[i].id) {
          EXPECT_NEAR(OracleScore(c, terms, p, avgdl, pruned[i].ordinal), want[i].score,
                      1e-12 * want[i].score)
              << round << " " << query << " rank " << i;
          EXPECT_TRUE(p.k1 == 0 || p.b == 0) << round << " " << query << " rank " << i;
        }
        EXPECT_NEAR(pruned[i].score, want[i].score, 1e-12 * want[i].score);
      }
      EXPECT_EQ(cf.postings_skipped, 0u);
      EXPECT_EQ(cf.rows_pruned, 0u);
      EXPECT_EQ(cf.windows_skipped, 0u);
      total += cp;
      ++compared;
      nonempty += !want.empty();
    }
  }
  EXPECT_EQ(compared, 480u);
  EXPECT_GT(nonempty, 300u);
  // Pruning ran: rows dropped by bounds, postings and whole blocks skipped unread.
  EXPECT_GT(total.rows_pruned, 0u);
  EXPECT_GT(total.postings_skipped, 0u);
  EXPECT_GT(total.blocks_skipped, 0u);
  EXPECT_GT(total.windows_skipped, 0u);
  EXPECT_LT(total.postings_read, total.postings);
}

// One common term and one rare: the common term's postings are mostly skipped.
TEST(Bm25, SkipsBlocksOfACommonTerm) {
  Corpus c;
  const size_t rows = 20000;
  for (size_t r = 0; r < rows; ++r) {
    c.values.push_back(std::string(r % 1000 == 7 ? "the red moon" : "the red"));
    c.ids.push_back(int64_t(r));
  }
  c.deleted.assign(rows, 0);
  Build(&c);
  Tokenize(&c);
  double avgdl = 0;
  const auto terms = Terms(c, "red moon", &avgdl);
  std::vector<Bm25Hit> hits;
  Bm25Counters counters;
  Bm25TopK(c.index, terms, Bm25Params(), avgdl, Live(c), c.ids, 3, true, &hits, &counters);
  ASSERT_EQ(hits.size(), 3u);  // 20 rows tie: the smallest ids win
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(hits[i].id, int64_t(7 + 1000 * i));
  EXPECT_EQ(counters.postings, rows + rows / 1000);
  EXPECT_LT(counters.postings_read, rows / 4);
  EXPECT_GT(counters.blocks_skipped, 0u);
}

// Every block of a common term holds a short row with tf 1 and a long row with tf 3, so its
// largest tf with its smallest length would bound it above the best rows (a tf of 3 in a row of
// 3 tokens, in a few blocks only): only the blocks' peaks, pairs that do occur, let whole windows
// be skipped. The best rows tie, with ids out of ordinal order.
TEST(Bm25, PeaksSkipWindowsThatMaxTfAndMinLengthCannot) {
  Corpus c;
  const size_t rows = 30000;
  for (size_t r = 0; r < rows; ++r) {
    std::string v;
    if (r % 2000 == 1000) {
      v = "moon moon moon";
    } else if (r % 100 == 0) {
      v = "moon";
    } else if (r % 100 == 50) {
      v = "moon moon moon red green blue shoe boot run walk city road river stone light dark "
          "fast slow tree leaf";
    } else {
      v = std::string(kWords[r % 7]) + " " + kWords[7 + r % 11] + " " + kWords[18 + r % 5] +
          " moon";
    }
    c.values.push_back(v);
  }
  c.deleted.assign(rows, 0);
  for (size_t r = 0; r < rows; ++r) c.ids.push_back(int64_t((r * 7919) % rows));
  Build(&c);
  Tokenize(&c);
  for (const char* query : {"moon", "moon zzzunknown", "moon moon"}) {
    double avgdl = 0;
    const auto terms = Terms(c, query, &avgdl);
    for (size_t k : {1, 5, 15, 16}) {
      std::vector<Bm25Hit> pruned, full;
      Bm25Counters cp, cf;
      Bm25TopK(c.index, terms, Bm25Params(), avgdl, Live(c), c.ids, k, true, &pruned, &cp);
      Bm25TopK(c.index, terms, Bm25Params(), avgdl, Live(c), c.ids, k, false, &full, &cf);
      const auto want = Oracle(c, terms, Bm25Params(), avgdl, Live(c), k);
      ASSERT_EQ(pruned.size(), want.size()) << query << " k " << k;
      ASSERT_EQ(full.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(pruned[i].id, want[i].id) << query << " k " << k << " rank " << i;
        EXPECT_EQ(full[i].id, want[i].id);
        EXPECT_EQ(pruned[i].score, full[i].score);
        EXPECT_NEAR(pruned[i].score, want[i].score, 1e-12 * want[i].score);
      }
      EXPECT_EQ(cf.windows_skipped, 0u);
      if (k < 15) {
        // The 15 rows of three "moon"s outrank every other: most windows hold none of them.
        EXPECT_GT(cp.windows_skipped, cp.windows / 2) << query << " k " << k;
        EXPECT_GT(cp.blocks_skipped, cp.blocks / 2) << query << " k " << k;
        EXPECT_LT(cp.postings_read, cp.postings / 2) << query << " k " << k;
      }
    }
  }
}

// A selective filter: its rows are walked instead of the postings, with the same result.
TEST(Bm25, ASelectiveFilterWalksItsRows) {
  std::mt19937 rng(8);
  Corpus c;
  const size_t rows = 5000;
  for (size_t r = 0; r < rows; ++r) {
    c.values.push_back(RandomText(rng, 8));
    c.ids.push_back(int64_t(rows - r));
  }
  c.deleted.assign(rows, 0);
  Build(&c);
  Tokenize(&c);
  for (const char* query : {"red green", "blue shoe boot", "snow rain"}) {
    double avgdl = 0;
    const auto terms = Terms(c, query, &avgdl);
    RowSet allowed;
    for (uint32_t r = 0; r < rows; r += 97) allowed.Add(r);
    std::vector<Bm25Hit> walked, full;
    Bm25Counters cw, cf;
    Bm25TopK(c.index, terms, Bm25Params(), avgdl, allowed, c.ids, 7, true, &walked, &cw);
    Bm25TopK(c.index, terms, Bm25Params(), avgdl, allowed, c.ids, 7, false, &full, &cf);
    EXPECT_EQ(cw.filter_scans, 1u) << query;
    EXPECT_EQ(cf.filter_scans, 0u);
    EXPECT_LT(cw.postings_read, cw.postings / 4) << query;
    const auto want = Oracle(c, terms, Bm25Params(), avgdl, allowed, 7);
    ASSERT_EQ(walked.size(), want.size()) << query;
    ASSERT_EQ(full.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(walked[i].id, want[i].id) << query << " " << i;
      EXPECT_EQ(walked[i].score, full[i].score);
      EXPECT_NEAR(walked[i].score, want[i].score, 1e-12 * want[i].score);
    }
  }
}

// A filter of many rows (here half the shard) is never walked, however common the terms: the
// scan's cost would follow those rows while MaxScore skips blocks; the result is the same.
TEST(Bm25, AWideFilterKeepsMaxScore) {
  std::mt19937 rng(9);
  Corpus c;
  const size_t rows = 4000;
  for (size_t r = 0; r < rows; ++r) {
    c.values.push_back(RandomText(rng, 8));
    c.ids.push_back(int64_t(r));
  }
  c.deleted.assign(rows, 0);
  Build(&c);
  Tokenize(&c);
  for (const char* query : {"the", "red the", "of the green"}) {
    double avgdl = 0;
    const auto terms = Terms(c, query, &avgdl);
    RowSet allowed;
    for (uint32_t r = 0; r < rows; r += 2) allowed.Add(r);
    std::vector<Bm25Hit> got;
    Bm25Counters counters;
    Bm25TopK(c.index, terms, Bm25Params(), avgdl, allowed, c.ids, 9, true, &got, &counters);
    EXPECT_EQ(counters.filter_scans, 0u) << query;
    const auto want = Oracle(c, terms, Bm25Params(), avgdl, allowed, 9);
    ASSERT_EQ(got.size(), want.size()) << query;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].id, want[i].id) << query << " " << i;
      EXPECT_NEAR(got[i].score, want[i].score, 1e-12 * want[i].score);
    }
  }
}

}  // namespace
}  // namespace sieve
