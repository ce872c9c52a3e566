// Copyright 2026 The Sieve Authors.
//
// BM25 and hybrid search through the CLI: `query --text-field --text` against a float64 oracle
// on the analyzer's tokens, the collection's k1 and b from `create` and `alter`, a hybrid query
// with its explain line, and the errors (exit 1, one line on stderr).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/e2e/cli_run.h"
#include "tests/testutil.h"
#include "text/text_analyzer.h"
#include "tools/io/npy.h"

namespace sieve {
namespace {

using json = nlohmann::json;

using Result = test::CliRun;

const char* kTexts[] = {"red shoes for running",   "blue running boots", "red red red",
                        "the boots of the trail",  "new york shoes",     "running",
                        "red boots and red shoes", "trail running shoes"};
constexpr size_t kDocs = sizeof(kTexts) / sizeof(kTexts[0]);

class Bm25CliTest : public ::testing::Test {
 protected:
  Result Run(const std::vector<std::string>& args) { return test::RunCli(args, dir_); }

  void SetUp() override {
    ASSERT_EQ(Run({"create", db_, "--collection", "c", "--dim", "4", "--attr", "body:text",
                   "--attr", "n:int", "--shards", "2", "--bm25-k1", "1.2", "--bm25-b", "0.5"})
                  .code,
              0);
    const auto vectors = test::RandomVectors(kDocs, 4, 9);
    ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("v.npy"), vectors.data(), kDocs, 4).ok());
    ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("q.npy"), vectors.data(), 2, 4).ok());
    std::ofstream attrs(dir_.Join("a.jsonl"));
    for (size_t i = 0; i < kDocs; ++i) {
      attrs << json{{"body", kTexts[i]}, {"n", static_cast<int64_t>(i)}}.dump() << "\n";
    }
    attrs.close();
    Result r = Run({"ingest", db_, "--collection", "c", "--vectors", dir_.Join("v.npy"),
                    "--attributes", dir_.Join("a.jsonl")});
    ASSERT_EQ(r.code, 0) << r.err;
  }

  // Ids (= positions) and BM25 scores of the rows holding a query term, best first.
  std::vector<std::pair<int64_t, double>> Oracle(const std::string& query, double k1, double b,
                                                 int64_t max_n = 1 << 30) {
    std::shared_ptr<const TextAnalyzer> a;
    EXPECT_TRUE(TextAnalyzer::Get("english", &a).ok());
    auto terms = [&](const std::string& t) {
      std::vector<TextToken> tokens;
      EXPECT_TRUE(a->Analyze(t, &tokens).ok());
      std::vector<std::string> out;
      for (auto& x : tokens) out.push_back(x.term);
      return out;
    };
    std::vector<std::vector<std::string>> docs;
    double total = 0;
    std::map<std::string, double> df;
    for (const char* t : kTexts) {
      docs.push_back(terms(t));
      total += docs.back().size();
      std::vector<std::string> u = docs.back();
      std::sort(u.begin(), u.end());
      u.erase(std::unique(u.begin(), u.end()), u.end());
      for (auto& w : u) df[w] += 1;
    }
    const double n = kDocs, avgdl = total / n;
    std::vector<std::pair<int64_t, double>> out;
    for (size_t i = 0; i < kDocs; ++i) {
      if (static_cast<int64_t>(i) >= max_n) continue;
      double s = 0;
      for (const std::string& t : terms(query)) {
        const double tf = static_cast<double>(std::count(docs[i].begin(), docs[i].end(), t));
        if (tf == 0) continue;
        const double idf = std::log(1 + (n - df[t] + 0.5) / (df[t] + 0.5));
        s += idf * tf / (tf + k1 * (1 - b + b * docs[i].size() / avgdl));
      }
      if (s > 0) out.push_back({static_cast<int64_t>(i), s});
    }
    std::sort(out.begin(), out.end(), [](auto& x, auto& y) {
      return x.second > y.second || (x.second == y.second && x.first < y.first);
    });
    return out;
  }

  void ExpectLine(const json& line, const std::vector<std::pair<int64_t, double>>& want) {
    ASSERT_EQ(line["ids"].size(), want.size()) << line.dump();
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(line["ids"][i].get<int64_t>(), want[i].first) << line.dump();
      EXPECT_NEAR(line["distances"][i].get<double>(), want[i].second, 1e-12 * want[i].second);
    }
  }

  test::ScratchDir dir_;
  std::string db_ = dir_.Join("db");
};

TEST_F(Bm25CliTest, TextQueryAlterAndHybrid) {
  Result r = Run({"query", db_, "--collection", "c", "--text-field", "body", "--text",
                  "red running shoes", "--k", "5", "--explain"});
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(r.Lines().size(), 1u);
  auto want = Oracle("red running shoes", 1.2, 0.5);
  want.resize(5);
  ExpectLine(r.Lines()[0], want);
  const json plan = json::parse(test::LastLine(r.err));
  EXPECT_EQ(plan["text"]["k1"].get<double>(), 1.2);
  EXPECT_EQ(plan["text"]["documents"].get<uint64_t>(), kDocs);
  // A filter, and then other parameters through alter.
  r = Run({"query", db_, "--collection", "c", "--text-field", "body", "--text", "red boots", "--k",
           "10", "--filter", "n < 5"});
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectLine(r.Lines()[0], Oracle("red boots", 1.2, 0.5, 5));
  r = Run({"alter", db_, "--collection", "c", "--bm25-k1", "2"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.Lines()[0]["bm25"]["b"].get<double>(), 0.5);
  r = Run({"query", db_, "--collection", "c", "--text-field", "body", "--text", "red boots", "--k",
           "10"});
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectLine(r.Lines()[0], Oracle("red boots", 2.0, 0.5));
  // Hybrid: one line per query vector, fused scores, both sides in the explain line.
  r = Run({"query", db_, "--collection", "c", "--queries", dir_.Join("q.npy"), "--text-field",
           "body", "--text", "red boots", "--k", "3", "--fusion", "weighted", "--depth", "4",
           "--explain"});
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(r.Lines().size(), 2u);
  for (const json& line : r.Lines()) {
    ASSERT_EQ(line["ids"].size(), 3u);
    EXPECT_GE(line["distances"][0].get<double>(), line["distances"][2].get<double>());
  }
  const json hybrid = json::parse(test::LastLine(r.err));
  EXPECT_EQ(hybrid["text"]["fusion"], "weighted");
  EXPECT_TRUE(hybrid["stages_ms"].contains("fusion"));
  EXPECT_FALSE(hybrid["shards"].empty());
}

TEST_F(Bm25CliTest, Errors) {
  auto expect_error = [&](const std::vector<std::string>& args, const std::string& what) {
    Result r = Run(args);
    EXPECT_EQ(r.code, 1);
    EXPECT_TRUE(r.out.empty());
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
  };
  expect_error({"query", db_, "--collection", "c", "--text", "red", "--k", "3"}, "text_field");
  expect_error(
      {"query", db_, "--collection", "c", "--text-field", "n", "--text", "red", "--k", "3"},
      "'n' is int, not text");
  expect_error({"query", db_, "--collection", "c", "--k", "3"}, "--queries");
  expect_error({"query", db_, "--collection", "c", "--text-field", "body", "--text", "red", "--k",
                "3", "--fusion", "max"},
               "unknown method 'max'");
  expect_error({"query", db_, "--collection", "c", "--text-field", "body", "--text", "red", "--k",
                "3", "--rrf-c", "abc"},
               "--rrf-c");
  expect_error({"create", db_, "--collection", "d", "--dim", "2", "--bm25-b", "2"}, "b must be");
  expect_error({"alter", db_, "--collection", "c", "--bm25-k1", "-1"}, "k1 must be");
}

}  // namespace
}  // namespace sieve
