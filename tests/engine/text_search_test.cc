// Copyright 2026 The Sieve Authors.
//
// Text and hybrid search through DB::Search: BM25 against a float64 oracle computed here from
// the analyzer's tokens over the live rows of every shard, under filters, updates, deletes and
// upserts; hybrid results against fusing two exact lists fetched separately; the request's
// rules; the explain's text plan.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "sieve/db.h"
#include "tests/testutil.h"
#include "text/text_analyzer.h"

namespace sieve {
namespace {

constexpr uint32_t kDim = 8;
const char* kWords[] = {"red",  "green", "blue",  "shoe", "boot",  "run",  "walk", "city",
                        "road", "river", "stone", "the",  "light", "dark", "fast", "slow",
                        "tree", "leaf",  "wind",  "rain", "snow",  "of",   "sun",  "moon"};
constexpr size_t kNumWords = sizeof(kWords) / sizeof(kWords[0]);

std::string RandomText(std::mt19937& rng) {
  std::string s;
  const size_t n = 1 + rng() % 10;
  for (size_t i = 0; i < n; ++i)
    s += std::string(kWords[std::min(rng() % kNumWords, rng() % kNumWords)]) + " ";
  return s;
}

struct Model {  // what the collection holds, by id
  std::map<int64_t, std::optional<std::string>> text;
  std::map<int64_t, int64_t> price;
  std::map<int64_t, std::vector<float>> vec;
};

struct Expected {
  int64_t id;
  double score;
};

std::vector<std::string> Terms(const std::string& text) {
  std::shared_ptr<const TextAnalyzer> a;
  EXPECT_TRUE(TextAnalyzer::Get("english", &a).ok());
  std::vector<TextToken> tokens;
  EXPECT_TRUE(a->Analyze(text, &tokens).ok());
  std::vector<std::string> out;
  for (auto& t : tokens) out.push_back(t.term);
  return out;
}

// BM25 over the model's rows with a text (N, n_t, avgdl), rows passing `pass`, top k.
template <typename Pass>
std::vector<Expected> Oracle(const Model& m, const std::string& query, size_t k, Pass&& pass,
                             double k1 = 1.5, double b = 0.75) {
  double n = 0, total = 0;
  std::map<std::string, double> df;
  std::map<int64_t, std::vector<std::string>> toks;
  for (const auto& [id, t] : m.text) {
    if (!t) continue;
    toks[id] = Terms(*t);
    n += 1;
    total += toks[id].size();
    std::map<std::string, int> seen;
    for (auto& w : toks[id]) seen[w] = 1;
    for (auto& [w, one] : seen) df[w] += 1;
  }
  const double avgdl = total / n;
  std::vector<Expected> out;
  const auto q = Terms(query);
  for (const auto& [id, words] : toks) {
    if (!pass(id)) continue;
    std::map<std::string, double> tf;
    for (auto& w : words) tf[w] += 1;
    double score = 0;
    bool any = false;
    for (const std::string& t : q) {  // a term given twice counts twice
      if (!tf.count(t)) continue;
      any = true;
      const double idf = std::log(1 + (n - df[t] + 0.5) / (df[t] + 0.5));
      score += idf * tf[t] / (tf[t] + k1 * (1 - b + b * words.size() / avgdl));
    }
    if (any) out.push_back({id, score});
  }
  std::sort(out.begin(), out.end(), [](const Expected& a, const Expected& b) {
    return a.score > b.score || (a.score == b.score && a.id < b.id);
  });
  if (out.size() > k) out.resize(k);
  return out;
}

class TextSearchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(DB::Open(Options(), dir_.path(), &db_).ok());
    CollectionSpec spec;
    spec.name = "docs";
    spec.dim = kDim;
    spec.shards = 3;
    spec.attributes = {{"title", AttrType::kText}, {"price", AttrType::kInt}};
    ASSERT_TRUE(db_->CreateCollection(spec).ok());
    std::mt19937 rng(7);
    Write(rng, 0, 500, /*upsert=*/false);
  }

  // Rows [first, first + n) with ids 1000 + 3 · i (not in ordinal order across shards).
  void Write(std::mt19937& rng, size_t first, size_t n, bool upsert) {
    std::vector<int64_t> ids;
    std::vector<std::vector<Value>> attrs;
    const std::vector<float> vecs = test::RandomVectors(n, kDim, rng());
    for (size_t i = 0; i < n; ++i) {
      const int64_t id = 1000 + 3 * static_cast<int64_t>(first + i);
      ids.push_back(id);
      std::optional<std::string> t;
      if (rng() % 12 != 0) t = RandomText(rng);
      if (i % 50 == 7) t = "red red shoe";  // repeated texts: ties broken by id
      const int64_t price = rng() % 100;
      attrs.push_back({t ? Value(*t) : Value(), Value(price)});
      model_.text[id] = t;
      model_.price[id] = price;
      model_.vec[id].assign(vecs.begin() + i * kDim, vecs.begin() + (i + 1) * kDim);
    }
    RowBatch batch;
    batch.num_rows = n;
    batch.dim = kDim;
    batch.vectors = vecs.data();
    batch.ids = ids.data();
    batch.attributes = attrs.data();
    IngestResult r;
    Status s = upsert ? db_->Upsert("docs", batch, IngestOptions(), &r)
                      : db_->Ingest("docs", batch, IngestOptions(), &r);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  Status TextSearch(const std::string& text, int k, const std::string& filter,
                    SearchResult* result) {
    SearchRequest r;
    r.k = k;
    r.text_field = "title";
    r.text = text;
    r.filter = filter;
    return db_->Search("docs", r, SearchOptions(), result);
  }

  void ExpectText(const std::string& text, int k, const std::string& filter,
                  const std::vector<Expected>& want) {
    SearchResult result;
    Status s = TextSearch(text, k, filter, &result);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_EQ(result.results.size(), 1u);
    const Neighbors& nb = result.results[0];
    ASSERT_EQ(nb.ids.size(), want.size()) << text << " / " << filter;
    ASSERT_EQ(nb.scores.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(nb.ids[i], want[i].id) << text << " rank " << i;
      EXPECT_NEAR(nb.scores[i], want[i].score, 1e-12 * want[i].score);
      EXPECT_EQ(nb.distances[i], static_cast<float>(nb.scores[i]));
    }
    EXPECT_TRUE(result.explain.has_text);
    EXPECT_EQ(result.explain.text.field, "title");
    EXPECT_FALSE(result.explain.text.beside_vector);  // a text-only search has no other side
  }

  test::ScratchDir dir_;
  std::unique_ptr<DB> db_;
  Model model_;
};

TEST_F(TextSearchTest, MatchesTheOracleOverEveryShard) {
  auto all = [](int64_t) { return true; };
  for (const char* q : {"red shoe", "river stone light", "red red", "moon", "wind rain snow sun"}) {
    ExpectText(q, 10, "", Oracle(model_, q, 10, all));
    ExpectText(q, 1000, "", Oracle(model_, q, 1000, all));
  }
  auto cheap = [&](int64_t id) { return model_.price.at(id) < 30; };
  ExpectText("red shoe walk", 7, "price < 30", Oracle(model_, "red shoe walk", 7, cheap));
  // The text query's filter may also be given as the one entry of `filters`.
  SearchRequest r;
  r.k = 5;
  r.text_field = "title";
  r.text = "red shoe walk";
  r.filters = {"price < 30"};
  SearchResult result;
  ASSERT_TRUE(db_->Search("docs", r, SearchOptions(), &result).ok());
  const auto want = Oracle(model_, "red shoe walk", 5, cheap);
  ASSERT_EQ(result.results[0].ids.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(result.results[0].ids[i], want[i].id);
  // The plan: every term with n_t and idf, and what the scorer did.
  ASSERT_TRUE(TextSearch("red shoe", 3, "", &result).ok());
  const TextSearchPlan& t = result.explain.text;
  ASSERT_EQ(t.terms.size(), 2u);
  EXPECT_EQ(t.terms[0].term, "red");
  EXPECT_GT(t.terms[0].rows, 0u);
  EXPECT_EQ(t.strategy, "maxscore");
  EXPECT_EQ(t.k1, 1.5);
  EXPECT_EQ(t.b, 0.75);
  uint64_t with_text = 0;
  for (const auto& [id, v] : model_.text) with_text += v.has_value();
  EXPECT_EQ(t.documents, with_text);
  EXPECT_EQ(t.passing_rows, model_.text.size());
  EXPECT_GT(t.postings, 0u);
  EXPECT_GT(t.rows_scored, 0u);
  const std::string json = result.explain.ToJson();
  EXPECT_NE(json.find("\"text\": {\"field\": \"title\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"postings_skipped\""), std::string::npos);
}

TEST_F(TextSearchTest, WritesAreSeenAtOnce) {
  auto all = [](int64_t) { return true; };
  const std::string q = "red shoe river";
  // Delete the current best rows.
  auto before = Oracle(model_, q, 5, all);
  std::vector<int64_t> gone = {before[0].id, before[1].id};
  uint64_t deleted = 0;
  ASSERT_TRUE(db_->DeleteByIds("docs", gone.data(), gone.size(), &deleted).ok());
  for (int64_t id : gone) {
    model_.text.erase(id);
    model_.price.erase(id);
  }
  ExpectText(q, 5, "", Oracle(model_, q, 5, all));
  // Update a row's text so it becomes the best.
  UpdateRequest u;
  const int64_t target = 1000 + 3 * 123;
  u.ids = &target;
  u.num_ids = 1;
  u.set = {{"title", Value(std::string("river river river shoe red"))}};
  uint64_t updated = 0;
  ASSERT_TRUE(db_->Update("docs", u, &updated).ok());
  ASSERT_EQ(updated, 1u);
  model_.text[target] = "river river river shoe red";
  auto want = Oracle(model_, q, 5, all);
  EXPECT_EQ(want[0].id, target);
  ExpectText(q, 5, "", want);
  // Null the text of another: it leaves N and avgdl.
  const int64_t other = 1000 + 3 * 124;
  u.ids = &other;
  u.set = {{"title", Value()}};
  ASSERT_TRUE(db_->Update("docs", u, &updated).ok());
  model_.text[other] = std::nullopt;
  ExpectText(q, 5, "", Oracle(model_, q, 5, all));
  // Upsert rows over existing ids and add new ones.
  std::mt19937 rng(99);
  Write(rng, 450, 100, /*upsert=*/true);
  ExpectText(q, 20, "", Oracle(model_, q, 20, all));
}

TEST_F(TextSearchTest, StopWordsUnknownTermsAndEmptyResults) {
  SearchResult result;
  // Only stop words: no term, no row.
  ASSERT_TRUE(TextSearch("the of and", 10, "", &result).ok());
  EXPECT_TRUE(result.results[0].ids.empty());
  EXPECT_TRUE(result.explain.text.terms.empty());
  EXPECT_EQ(result.explain.text.strategy, "none");
  // A term no row holds.
  ASSERT_TRUE(TextSearch("zebra", 10, "", &result).ok());
  EXPECT_TRUE(result.results[0].ids.empty());
  ASSERT_EQ(result.explain.text.terms.size(), 1u);
  EXPECT_EQ(result.explain.text.terms[0].rows, 0u);
  // A filter no row passes.
  ASSERT_TRUE(TextSearch("red", 10, "price > 1000", &result).ok());
  EXPECT_TRUE(result.results[0].ids.empty());
}

TEST_F(TextSearchTest, RequestRules) {
  SearchResult result;
  SearchRequest r;
  r.text = "red";
  Status s = db_->Search("docs", r, SearchOptions(), &result);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("text_field"), std::string::npos) << s.message();
  r.text_field = "price";
  s = db_->Search("docs", r, SearchOptions(), &result);
  EXPECT_NE(s.message().find("'price' is int, not text (text attributes: title)"),
            std::string::npos)
      << s.message();
  r.text_field = "colour";
  s = db_->Search("docs", r, SearchOptions(), &result);
  EXPECT_NE(s.message().find("no attribute 'colour'"), std::string::npos) << s.message();
  r.text_field = "title";
  r.filters = {"price < 3", "price < 4"};
  s = db_->Search("docs", r, SearchOptions(), &result);
  EXPECT_NE(s.message().find("2 filters for 1 query (a text query is one)"), std::string::npos)
      << s.message();
  r.filters.clear();
  r.k = 20;
  r.fusion.depth = 10;
  s = db_->Search("docs", r, SearchOptions(), &result);
  EXPECT_NE(s.message().find("fusion: depth"), std::string::npos) << s.message();
  r.fusion.depth = 0;
  r.fusion.vector_weight = 0;
  r.fusion.text_weight = 0;
  EXPECT_TRUE(db_->Search("docs", r, SearchOptions(), &result).IsInvalidArgument());
  r.fusion.text_weight = 1;
  r.fusion.rrf_c = -1;
  EXPECT_TRUE(db_->Search("docs", r, SearchOptions(), &result).IsInvalidArgument());
  r.filter = "price <";
  r.fusion.rrf_c = 60;
  EXPECT_TRUE(db_->Search("docs", r, SearchOptions(), &result).IsInvalidArgument());
  // A text query ranks the k best rows: no groups, radius or pages with it.
  r.filter.clear();
  r.k = 5;
  auto refused = [&](const char* what) {
    Status st = db_->Search("docs", r, SearchOptions(), &result);
    EXPECT_TRUE(st.IsInvalidArgument()) << what;
    EXPECT_NE(st.message().find("a text query (text, text_field) does not combine"),
              std::string::npos)
        << what << ": " << st.message();
  };
  r.group_by = "price";
  refused("group_by");
  r.group_by.clear();
  r.radius = 1.0;
  refused("radius");
  r.radius.reset();
  r.offset = 0;
  refused("offset");
  r.offset.reset();
  r.after = {""};
  refused("after");
}

// A side's list as the test fetches it: the search's own result with k = depth.
struct Side {
  std::vector<int64_t> ids;
  std::vector<double> scores;  // larger is better
};

std::vector<Expected> Fuse(const Fusion& f, const Side& v, const Side& t, size_t k) {
  std::unordered_map<int64_t, double> score;
  auto add = [&](const Side& side, double w) {
    if (f.method == Fusion::Method::kRrf) {
      for (size_t r = 0; r < side.ids.size(); ++r) score[side.ids[r]] += w / (f.rrf_c + r + 1);
      return;
    }
    if (side.ids.empty()) return;
    const double lo = *std::min_element(side.scores.begin(), side.scores.end());
    const double hi = *std::max_element(side.scores.begin(), side.scores.end());
    for (size_t r = 0; r < side.ids.size(); ++r) {
      score[side.ids[r]] += w * (hi > lo ? (side.scores[r] - lo) / (hi - lo) : 1.0);
    }
  };
  add(v, f.vector_weight);
  add(t, f.text_weight);
  std::vector<Expected> out;
  for (auto& [id, s] : score) out.push_back({id, s});
  std::sort(out.begin(), out.end(), [](const Expected& a, const Expected& b) {
    return a.score > b.score || (a.score == b.score && a.id < b.id);
  });
  if (out.size() > k) out.resize(k);
  return out;
}

// SearchOptions::stage_times false: the same rows, scores and plan, only no step times.
TEST_F(TextSearchTest, StageTimesOffLeavesOnlyTheTimesOut) {
  const std::vector<float> queries = test::RandomVectors(2, kDim, 55);
  for (int kind = 0; kind < 3; ++kind) {  // text, hybrid, vector
    SearchRequest r;
    r.k = 7;
    r.filter = "price < 60";
    if (kind != 2) {
      r.text_field = "title";
      r.text = "red shoe river";
    }
    if (kind != 0) {
      r.queries = queries.data();
      r.num_queries = 2;
      r.dim = kDim;
    }
    SearchOptions timed, untimed;
    untimed.stage_times = false;
    SearchResult a, b;
    ASSERT_TRUE(db_->Search("docs", r, timed, &a).ok());
    ASSERT_TRUE(db_->Search("docs", r, untimed, &b).ok());
    std::map<std::string, int> stages;
    for (auto& [name, ms] : a.explain.stage_ms) ++stages[name];
    EXPECT_EQ(stages["total"], 1) << kind;
    EXPECT_EQ(stages[kind == 2 ? "execute" : "text"], 1) << kind;
    EXPECT_TRUE(b.explain.stage_ms.empty()) << kind;
    ASSERT_EQ(a.results.size(), b.results.size());
    for (size_t q = 0; q < a.results.size(); ++q) {
      EXPECT_FALSE(a.results[q].ids.empty());
      EXPECT_EQ(a.results[q].ids, b.results[q].ids) << kind;
      EXPECT_EQ(a.results[q].distances, b.results[q].distances) << kind;
      EXPECT_EQ(a.results[q].scores, b.results[q].scores) << kind;
    }
    EXPECT_EQ(a.explain.device, b.explain.device);
    EXPECT_EQ(a.explain.thresholds, b.explain.thresholds);
    EXPECT_EQ(a.explain.filter_mode, b.explain.filter_mode);
    EXPECT_EQ(a.explain.passing_rows, b.explain.passing_rows);
    EXPECT_EQ(a.explain.shards.size(), b.explain.shards.size());
    EXPECT_EQ(a.explain.has_text, b.explain.has_text);
    EXPECT_EQ(a.explain.text.terms.size(), b.explain.text.terms.size());
    EXPECT_EQ(a.explain.text.postings_read, b.explain.text.postings_read);
    EXPECT_EQ(a.explain.text.rows_scored, b.explain.text.rows_scored);
    EXPECT_EQ(a.explain.text.strategy, b.explain.text.strategy);
  }
}

TEST_F(TextSearchTest, HybridEqualsFusingTheTwoExactLists) {
  const std::vector<float> queries = test::RandomVectors(3, kDim, 1234);
  const std::vector<std::string> filters = {"price < 40", "", "price >= 40"};
  for (int method = 0; method < 2; ++method) {
    for (int depth : {0, 25}) {
      SearchRequest r;
      r.queries = queries.data();
      r.num_queries = 3;
      r.dim = kDim;
      r.k = 10;
      r.filters = filters;
      r.text_field = "title";
      r.text = "red shoe river";
      r.fusion.method = method == 0 ? Fusion::Method::kRrf : Fusion::Method::kWeighted;
      r.fusion.rrf_c = 30;
      r.fusion.vector_weight = 0.7;
      r.include.attributes = {"price"};
      r.fusion.depth = depth;
      SearchResult hybrid;
      Status s = db_->Search("docs", r, SearchOptions(), &hybrid);
      ASSERT_TRUE(s.ok()) << s.ToString();
      ASSERT_EQ(hybrid.results.size(), 3u);
      const int d = depth == 0 ? 100 : depth;
      EXPECT_EQ(hybrid.explain.text.depth, static_cast<uint32_t>(d));
      EXPECT_EQ(hybrid.explain.text.fusion, method == 0 ? "rrf" : "weighted");
      // The text side runs beside the vector side exactly when a GPU searched (kAuto picks
      // one where present): the same answers either way, checked below.
      const bool on_gpu = hybrid.explain.device.rfind("gpu", 0) == 0;
      EXPECT_EQ(hybrid.explain.text.beside_vector, on_gpu) << hybrid.explain.device;
      EXPECT_NE(hybrid.explain.ToJson().find(on_gpu ? "\"beside_vector\": true"
                                                    : "\"beside_vector\": false"),
                std::string::npos)
          << hybrid.explain.ToJson();
      EXPECT_FALSE(hybrid.explain.shards.empty());  // the vector side's plan
      std::map<std::string, int> stages;
      for (auto& [name, ms] : hybrid.explain.stage_ms) ++stages[name];
      EXPECT_EQ(stages["text"], 1);
      EXPECT_EQ(stages["vector"], 1);
      EXPECT_EQ(stages["fusion"], 1);
      EXPECT_EQ(stages["execute"], 1);
      for (size_t q = 0; q < 3; ++q) {
        // The two lists, fetched on their own.
        SearchRequest vr;
        vr.queries = queries.data() + q * kDim;
        vr.num_queries = 1;
        vr.dim = kDim;
        vr.k = d;
        vr.filter = filters[q];
        SearchResult vres;
        ASSERT_TRUE(db_->Search("docs", vr, SearchOptions(), &vres).ok());
        Side v;
        v.ids = vres.results[0].ids;
        for (size_t i = 0; i < v.ids.size(); ++i) {
          // l2: the exact float64 distance, negated (the engine fuses its float64 distances).
          v.scores.push_back(
              -test::OracleDistance(Metric::kL2, vr.queries, model_.vec.at(v.ids[i]).data(), kDim));
        }
        SearchResult tres;
        ASSERT_TRUE(TextSearch(r.text, d, filters[q], &tres).ok());
        Side t{tres.results[0].ids, tres.results[0].scores};
        ASSERT_FALSE(t.ids.empty());
        const auto want = Fuse(r.fusion, v, t, 10);
        const Neighbors& got = hybrid.results[q];
        ASSERT_EQ(got.ids.size(), want.size()) << q;
        for (size_t i = 0; i < want.size(); ++i) {
          EXPECT_EQ(got.ids[i], want[i].id) << "method " << method << " query " << q << " " << i;
          EXPECT_NEAR(got.scores[i], want[i].score, 1e-9 * std::abs(want[i].score) + 1e-15);
          ASSERT_EQ(got.attributes[i].size(), 1u);
          EXPECT_EQ(std::get<int64_t>(got.attributes[i][0]), model_.price.at(got.ids[i]));
        }
      }
    }
  }
}

}  // namespace
}  // namespace sieve
