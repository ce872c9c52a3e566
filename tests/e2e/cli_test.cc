// Copyright 2026 The Sieve Authors.
//
// End-to-end tests of the `sieve` CLI contract (DESIGN.md): they run the real binary on files
// they write, and check every answer against a float64 brute-force oracle.

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sieve/version.h"
#include "tests/e2e/cli_run.h"
#include "tests/testutil.h"
#include "tools/io/hdf5.h"
#include "tools/io/npy.h"

namespace sieve {
namespace {

using json = nlohmann::json;

using test::CliPath;
using test::CliRun;
using test::ReadFile;
using test::ShellQuote;

// The device the path-by-path test forces: $SIEVE_TEST_DEVICE (the H200 runs set "gpu"), else
// the CPU, which every machine has.
const char* TestDevice() {
  const char* env = std::getenv("SIEVE_TEST_DEVICE");
  return env != nullptr && *env != '\0' ? env : "cpu";
}

// One row of the test collection, kept to evaluate filters independently of Sieve.
struct Row {
  int64_t id;
  bool has_cat;
  int64_t cat;
  bool has_price;
  double price;
  std::string name;  // "" = null
  bool has_flag;
  bool flag;
  bool has_tags;
  std::vector<std::string> tags;
};

class CliTest : public ::testing::Test {
 protected:
  static constexpr size_t kRows = 3000;
  static constexpr size_t kDim = 16;

  void SetUp() override {
    db_ = dir_.Join("db");
    vectors_ = test::RandomVectors(kRows, kDim, 42);
    std::mt19937_64 rng(7);
    const char* names[] = {"alpha", "beta", "gamma", "it's"};
    const char* tagpool[] = {"red", "green", "blue", "x y"};
    for (size_t i = 0; i < kRows; ++i) {
      Row r;
      r.id = 1000 + static_cast<int64_t>(i) * 7;
      r.has_cat = rng() % 10 != 0;
      r.cat = static_cast<int64_t>(rng() % 10);
      r.has_price = rng() % 8 != 0;
      r.price = static_cast<double>(rng() % 10000) / 100.0;
      r.name = rng() % 6 == 0 ? "" : names[rng() % 4];
      r.has_flag = rng() % 5 != 0;
      r.flag = rng() % 2;
      r.has_tags = rng() % 7 != 0;
      if (r.has_tags) {
        for (int t = 0; t < 4; ++t) {
          if (rng() % 3 == 0) r.tags.push_back(tagpool[t]);
        }
      }
      rows_.push_back(r);
    }
  }

  void WriteInputs(size_t begin, size_t end, const std::string& tag) {
    ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join(tag + "_vectors.npy"), vectors_.data() + begin * kDim,
                                   end - begin, kDim)
                    .ok());
    std::vector<int64_t> ids;
    std::ofstream attrs(dir_.Join(tag + "_attrs.jsonl"));
    for (size_t i = begin; i < end; ++i) {
      const Row& r = rows_[i];
      ids.push_back(r.id);
      json j = json::object();
      if (r.has_cat) j["cat"] = r.cat;
      if (r.has_price) j["price"] = r.price;
      j["name"] = r.name.empty() ? json(nullptr) : json(r.name);
      if (r.has_flag) j["flag"] = r.flag;
      if (r.has_tags) j["tags"] = r.tags;
      attrs << j.dump() << "\n";
    }
    attrs.close();
    ASSERT_TRUE(io::WriteNpyInt64(dir_.Join(tag + "_ids.npy"), ids.data(), ids.size()).ok());
  }

  CliRun Run(const std::vector<std::string>& args) { return test::RunCli(args, dir_); }

  void CreateAndIngest(const std::string& metric, size_t rows = kRows) {
    auto c = Run({"create", db_, "--collection", "c", "--dim", std::to_string(kDim), "--metric",
                  metric, "--attr", "cat:int", "--attr", "price:float", "--attr", "name:string",
                  "--attr", "flag:bool", "--attr", "tags:tags"});
    ASSERT_EQ(c.code, 0) << c.err;
    WriteInputs(0, rows, "all");
    auto r = Run({"ingest", db_, "--collection", "c", "--vectors", dir_.Join("all_vectors.npy"),
                  "--attributes", dir_.Join("all_attrs.jsonl"), "--ids", dir_.Join("all_ids.npy"),
                  "--batch-rows", "1000"});
    ASSERT_EQ(r.code, 0) << r.err;
    auto lines = r.Lines();
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0]["ingested"], rows);
    EXPECT_EQ(lines[0]["rows"], rows);
  }

  // Checks one query line against the oracle over the rows passing `pass` and not deleted.
  void ExpectMatchesOracle(const json& line, Metric metric, const float* q, size_t k,
                           const std::function<bool(const Row&)>& pass) {
    auto expect = test::OracleTopK(metric, q, vectors_.data(), rows_.size(), kDim, k,
                                   [&](uint32_t i) {
                                     return !deleted_.count(rows_[i].id) && pass(rows_[i]);
                                   });
    auto ids = line["ids"].get<std::vector<int64_t>>();
    auto dists = line["distances"].get<std::vector<double>>();
    ASSERT_EQ(ids.size(), expect.size()) << line.dump();
    ASSERT_EQ(dists.size(), expect.size());
    for (size_t i = 0; i < expect.size(); ++i) {
      const double want = expect[i].second;
      EXPECT_NEAR(dists[i], want, 1e-4 * std::max(1.0, std::fabs(want))) << "rank " << i;
      // Ids must agree except where the oracle's distances tie.
      bool tie = (i > 0 && std::fabs(expect[i - 1].second - want) < 1e-9) ||
                 (i + 1 < expect.size() && std::fabs(expect[i + 1].second - want) < 1e-9);
      if (!tie) EXPECT_EQ(ids[i], rows_[expect[i].first].id) << "rank " << i;
    }
  }

  test::ScratchDir dir_;
  std::string db_;
  std::vector<float> vectors_;
  std::vector<Row> rows_;
  std::set<int64_t> deleted_;
};

bool HasTag(const Row& r, const std::string& t) {
  return r.has_tags && std::find(r.tags.begin(), r.tags.end(), t) != r.tags.end();
}

struct FilterCase {
  std::string text;
  std::function<bool(const Row&)> pass;
};

std::vector<FilterCase> FilterCases() {
  return {
      {"", [](const Row&) { return true; }},
      {"cat = 3", [](const Row& r) { return r.has_cat && r.cat == 3; }},
      {"cat != 3", [](const Row& r) { return r.has_cat && r.cat != 3; }},
      {"cat < 2", [](const Row& r) { return r.has_cat && r.cat < 2; }},
      {"cat <= 2", [](const Row& r) { return r.has_cat && r.cat <= 2; }},
      {"cat > 7", [](const Row& r) { return r.has_cat && r.cat > 7; }},
      {"cat >= 7", [](const Row& r) { return r.has_cat && r.cat >= 7; }},
      {"price BETWEEN 10.5 AND 20", [](const Row& r) {
         return r.has_price && r.price >= 10.5 && r.price <= 20; }},
      {"cat IN (1, 4, 9)", [](const Row& r) {
         return r.has_cat && (r.cat == 1 || r.cat == 4 || r.cat == 9); }},
      {"cat NOT IN (1, 4, 9)", [](const Row& r) {
         return r.has_cat && !(r.cat == 1 || r.cat == 4 || r.cat == 9); }},
      {"name = 'it''s'", [](const Row& r) { return r.name == "it's"; }},
      {"name IN ('alpha', 'beta')", [](const Row& r) {
         return r.name == "alpha" || r.name == "beta"; }},
      {"tags CONTAINS 'x y'", [](const Row& r) { return HasTag(r, "x y"); }},
      {"flag = true", [](const Row& r) { return r.has_flag && r.flag; }},
      {"name IS NULL", [](const Row& r) { return r.name.empty(); }},
      {"tags IS NOT NULL", [](const Row& r) { return r.has_tags; }},
      {"NOT cat = 3", [](const Row& r) { return r.has_cat && r.cat != 3; }},
      {"(cat < 5 OR price > 90) and not flag = false", [](const Row& r) {
         bool a = r.has_cat && r.cat < 5, b = r.has_price && r.price > 90;
         bool left_true = a || b;
         return left_true && r.has_flag && r.flag; }},
      {"cat = 1 AND price < 5", [](const Row& r) {
         return r.has_cat && r.cat == 1 && r.has_price && r.price < 5; }},
      {"cat = 12", [](const Row&) { return false; }},
  };
}

TEST_F(CliTest, EveryFilterEveryPathEveryMetricMatchesOracle) {
  const std::vector<std::pair<std::string, Metric>> metrics = {
      {"l2", Metric::kL2}, {"ip", Metric::kInnerProduct}, {"cosine", Metric::kCosine}};
  auto queries = test::RandomVectors(4, kDim, 99);
  ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("q.npy"), queries.data(), 4, kDim).ok());
  for (auto& [mname, metric] : metrics) {
    SCOPED_TRACE(mname);
    db_ = dir_.Join("db_" + mname);
    CreateAndIngest(mname);
    for (const auto& fc : FilterCases()) {
      for (std::string path : {"auto", "sddmm", "gather", "dense"}) {
        SCOPED_TRACE(fc.text + " / " + path);
        auto r = Run({"query", db_, "--collection", "c", "--queries", dir_.Join("q.npy"), "--k",
                      "10", "--filter", fc.text, "--path", path, "--device", TestDevice(),
                      "--explain"});
        ASSERT_EQ(r.code, 0) << r.err;
        auto lines = r.Lines();
        ASSERT_EQ(lines.size(), 4u);
        for (size_t q = 0; q < 4; ++q) {
          EXPECT_EQ(lines[q]["query"], q);
          ExpectMatchesOracle(lines[q], metric, queries.data() + q * kDim, 10, fc.pass);
        }
        json plan = json::parse(test::LastLine(r.err));
        if (path != "auto") EXPECT_EQ(plan["path"], path);
        size_t passing = 0;
        for (auto& row : rows_) passing += fc.pass(row);
        EXPECT_EQ(plan["passing_rows"], passing);
      }
    }
  }
}

TEST_F(CliTest, PerQueryFiltersAndLargeK) {
  CreateAndIngest("l2");
  const size_t nq = 6;
  auto queries = test::RandomVectors(nq, kDim, 5);
  ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("q.npy"), queries.data(), nq, kDim).ok());
  auto cases = FilterCases();
  std::vector<size_t> pick = {1, 0, 7, 12, 19, 4};
  std::ofstream f(dir_.Join("filters.txt"));
  for (size_t q = 0; q < nq; ++q) f << cases[pick[q]].text << "\n";
  f.close();
  for (std::string path : {"auto", "sddmm", "gather", "dense"}) {
    for (std::string k : {"1", "25", "5000"}) {
      SCOPED_TRACE(path + " k=" + k);
      auto r = Run({"query", db_, "--collection", "c", "--queries", dir_.Join("q.npy"), "--k", k,
                    "--filters", dir_.Join("filters.txt"), "--path", path, "--explain"});
      ASSERT_EQ(r.code, 0) << r.err;
      auto lines = r.Lines();
      ASSERT_EQ(lines.size(), nq);
      for (size_t q = 0; q < nq; ++q) {
        ExpectMatchesOracle(lines[q], Metric::kL2, queries.data() + q * kDim, std::stoul(k),
                            cases[pick[q]].pass);
      }
      const json plan = json::parse(test::LastLine(r.err));
      EXPECT_EQ(plan["filter_mode"], "bitmap");
      // Top-level passing_rows: the rows that pass at least one query's filter (not the sum
      // over queries, which can exceed the collection).
      size_t any = 0;
      for (const Row& row : rows_) {
        bool passes = false;
        for (size_t q = 0; q < nq; ++q) passes = passes || cases[pick[q]].pass(row);
        any += passes;
      }
      EXPECT_EQ(plan["passing_rows"], any);
      // Stage times to the microsecond, not 1.1492559999999998.
      const std::string stages = plan["stages_ms"].dump();
      for (const auto& [stage, ms] : plan["stages_ms"].items()) {
        const double v = ms.get<double>();
        EXPECT_DOUBLE_EQ(v, std::round(v * 1000) / 1000) << stage;
      }
      const size_t at = r.err.find("\"stages_ms\": {");
      ASSERT_NE(at, std::string::npos) << r.err;
      const std::string text = r.err.substr(at, r.err.find('}', at) - at);
      size_t digits = 0, most = 0;
      bool after_point = false;
      for (char ch : text) {
        if (ch == '.') {
          after_point = true;
          digits = 0;
        } else if (ch >= '0' && ch <= '9') {
          digits += after_point;
        } else {
          after_point = false;
        }
        most = std::max(most, digits);
      }
      EXPECT_LE(most, 3u) << text;
    }
  }
}

TEST_F(CliTest, FiltersFileErrorsNameTheLine) {
  CreateAndIngest("l2", 200);
  auto queries = test::RandomVectors(4, kDim, 5);
  ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("q.npy"), queries.data(), 4, kDim).ok());
  const std::string file = dir_.Join("filters.txt");
  // Line 3 is bad; line 4 repeats it (the first occurrence is the one reported).
  std::ofstream(file) << "cat = 1\n\ncat = 'x'\ncat = 'x'\n";
  auto r = Run({"query", db_, "--collection", "c", "--queries", dir_.Join("q.npy"), "--k", "3",
                "--filters", file});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(r.err, "sieve query: file " + file + ": line 3 (query 2): filter: at position 7: "
                   "attribute 'cat' is int and can only be compared with a number (got 'x')\n");
  std::ofstream(file) << "nosuch = 1\n\n\n\n";
  r = Run({"query", db_, "--collection", "c", "--queries", dir_.Join("q.npy"), "--k", "3",
           "--filters", file});
  EXPECT_EQ(r.err, "sieve query: file " + file + ": line 1 (query 0): filter: at position 1: "
                   "unknown attribute 'nosuch' (attributes: cat, price, name, flag, tags)\n");
  // --filter is one filter for every query: no file, no line.
  r = Run({"query", db_, "--collection", "c", "--queries", dir_.Join("q.npy"), "--k", "3",
           "--filter", "colour = 'red'"});
  EXPECT_EQ(r.err, "sieve query: filter: at position 1: unknown attribute 'colour' (attributes: "
                   "cat, price, name, flag, tags)\n");
}

TEST_F(CliTest, NoArgumentsIsBadInputAndStatsPrintsLikeCreate) {
  auto r = Run({});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("usage: sieve COMMAND"), std::string::npos) << r.err;
  EXPECT_EQ(Run({"--help"}).code, 0);
  r = Run({"create", db_, "--collection", "c", "--dim", "3", "--attr", "a:int"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "{\"created\": \"c\", \"dim\": 3, \"metric\": \"l2\", \"dtype\": \"f32\"}\n");
  r = Run({"stats", db_});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "{\"collection\": \"c\", \"rows\": 0, \"deleted_rows\": 0, \"total_rows\": 0, "
                   "\"dim\": 3, \"metric\": \"l2\", \"dtype\": \"f32\", \"shards\": 1, "
                   "\"attributes\": {\"a\": \"int\"}}\n");
}

// ann-benchmarks files (--vectors FILE.hdf5:train, --queries FILE.hdf5:test) and ids from a
// column of the attributes file (--id-field).
TEST_F(CliTest, IngestsHdf5VectorsWithIdsFromTheAttributesFile) {
  auto c = Run({"create", db_, "--collection", "c", "--dim", std::to_string(kDim), "--attr",
                "cat:int"});
  ASSERT_EQ(c.code, 0) << c.err;
  const size_t n = 500;
  const std::string h5 = dir_.Join("ann.hdf5");
  ASSERT_TRUE(io::WriteHdf5Matrix(h5, "train", vectors_.data(), n, kDim, /*float64=*/true).ok());
  auto queries = test::RandomVectors(3, kDim, 8);
  ASSERT_TRUE(io::WriteHdf5Matrix(dir_.Join("q.h5"), "test", queries.data(), 3, kDim).ok());
  {
    std::ofstream csv(dir_.Join("attrs.csv"));
    csv << "pk,cat\n";
    for (size_t i = 0; i < n; ++i) csv << rows_[i].id << "," << i % 4 << "\n";
  }
  auto r = Run({"ingest", db_, "--collection", "c", "--vectors", h5 + ":train", "--attributes",
                dir_.Join("attrs.csv"), "--id-field", "pk"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.Lines()[0]["ingested"], n);
  rows_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    rows_[i].has_cat = true;
    rows_[i].cat = static_cast<int64_t>(i % 4);
  }
  r = Run({"query", db_, "--collection", "c", "--queries", dir_.Join("q.h5") + ":test", "--k",
           "7", "--filter", "cat = 2"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto lines = r.Lines();
  ASSERT_EQ(lines.size(), 3u);
  for (size_t q = 0; q < 3; ++q) {
    ExpectMatchesOracle(lines[q], Metric::kL2, queries.data() + q * kDim, 7,
                        [](const Row& row) { return row.cat == 2; });
  }

  // Bad input: one line naming the file, the dataset, the line; the store is unchanged.
  {
    std::ofstream(dir_.Join("dup.csv")) << "pk,cat\n1,0\n2,0\n1,0\n";
    std::ofstream(dir_.Join("neg.jsonl")) << "{\"pk\": 1}\n{\"pk\": -2}\n{\"pk\": 3}\n";
  }
  auto three = test::RandomVectors(3, kDim, 9);
  ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("three.npy"), three.data(), 3, kDim).ok());
  struct Bad {
    std::vector<std::string> extra;
    std::string must_mention;
  };
  const std::vector<Bad> bad = {
      {{"--vectors", h5 + ":nope"}, "file " + h5 + ": no dataset 'nope' (datasets: train)"},
      {{"--vectors", h5}, "name the dataset after a colon"},
      {{"--vectors", dir_.Join("three.npy"), "--attributes", dir_.Join("dup.csv"), "--id-field",
        "pk"},
       "line 4 (row 2): id 1 repeats the id of line 2 (row 0)"},
      {{"--vectors", dir_.Join("three.npy"), "--attributes", dir_.Join("neg.jsonl"),
        "--id-field", "pk"},
       "line 2 (row 1): id field 'pk': expected an integer id >= 0, found -2"},
      {{"--vectors", dir_.Join("three.npy"), "--attributes", dir_.Join("dup.csv"), "--id-field",
        "cat"},
       "the id field 'cat' is an attribute of the collection"},
      {{"--vectors", dir_.Join("three.npy"), "--id-field", "pk"}, "--attributes FILE"},
      {{"--vectors", dir_.Join("three.npy"), "--attributes", dir_.Join("dup.csv"), "--id-field",
        "pk", "--ids", dir_.Join("x.npy")},
       "not both"},
  };
  for (const Bad& b : bad) {
    std::vector<std::string> args = {"ingest", db_, "--collection", "c"};
    args.insert(args.end(), b.extra.begin(), b.extra.end());
    SCOPED_TRACE(b.must_mention);
    r = Run(args);
    EXPECT_EQ(r.code, 1);
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(b.must_mention), std::string::npos) << r.err;
  }
  r = Run({"stats", db_, "--collection", "c"});
  EXPECT_EQ(r.Lines()[0]["rows"], n);
}

TEST_F(CliTest, DeletesByIdsAndFilterAreExcludedAndDurable) {
  CreateAndIngest("l2");
  std::vector<int64_t> del = {rows_[0].id, rows_[5].id, rows_[17].id, 999999};
  ASSERT_TRUE(io::WriteNpyInt64(dir_.Join("del.npy"), del.data(), del.size()).ok());
  auto r = Run({"delete", db_, "--collection", "c", "--ids", dir_.Join("del.npy")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.Lines()[0]["deleted"], 3);
  deleted_.insert(del.begin(), del.begin() + 3);
  r = Run({"delete", db_, "--collection", "c", "--filter", "cat = 2"});
  ASSERT_EQ(r.code, 0) << r.err;
  size_t n2 = 0;
  for (auto& row : rows_) {
    if (row.has_cat && row.cat == 2 && !deleted_.count(row.id)) {
      ++n2;
      deleted_.insert(row.id);
    }
  }
  EXPECT_EQ(r.Lines()[0]["deleted"], n2);
  r = Run({"stats", db_, "--collection", "c"});
  ASSERT_EQ(r.code, 0);
  EXPECT_EQ(r.Lines()[0]["rows"], kRows - deleted_.size());
  EXPECT_EQ(r.Lines()[0]["dim"], kDim);
  EXPECT_EQ(r.Lines()[0]["metric"], "l2");

  // Query the deleted rows' own vectors: they must not come back.
  std::vector<float> q(vectors_.begin(), vectors_.begin() + kDim);
  ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("q.npy"), q.data(), 1, kDim).ok());
  for (std::string path : {"sddmm", "gather", "dense"}) {
    r = Run({"query", db_, "--collection", "c", "--queries", dir_.Join("q.npy"), "--k", "10",
             "--path", path});
    ASSERT_EQ(r.code, 0) << r.err;
    ExpectMatchesOracle(r.Lines()[0], Metric::kL2, q.data(), 10, [](const Row&) { return true; });
  }
  // A deleted id may be ingested again.
  WriteInputs(0, 1, "again");
  r = Run({"ingest", db_, "--collection", "c", "--vectors", dir_.Join("again_vectors.npy"),
           "--attributes", dir_.Join("again_attrs.jsonl"), "--ids", dir_.Join("again_ids.npy")});
  ASSERT_EQ(r.code, 0) << r.err;
  r = Run({"check", db_});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

TEST_F(CliTest, BadInputFailsWithOneLineAndLeavesTheStoreUnchanged) {
  CreateAndIngest("l2", 500);
  auto q = test::RandomVectors(2, kDim, 1);
  ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("q.npy"), q.data(), 2, kDim).ok());
  auto baseline = Run({"query", db_, "--collection", "c", "--queries", dir_.Join("q.npy"), "--k",
                       "5", "--filter", "cat < 5"});
  ASSERT_EQ(baseline.code, 0);

  // Inputs for the bad cases.
  auto wrong_dim = test::RandomVectors(3, kDim + 1, 2);
  ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("wrongdim.npy"), wrong_dim.data(), 3, kDim + 1).ok());
  auto nan = test::RandomVectors(3, kDim, 3);
  nan[kDim + 4] = std::nanf("");
  ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("nan.npy"), nan.data(), 3, kDim).ok());
  auto good3 = test::RandomVectors(3, kDim, 4);
  ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("good3.npy"), good3.data(), 3, kDim).ok());
  {
    std::string full = ReadFile(dir_.Join("good3.npy"));
    std::ofstream(dir_.Join("trunc.npy")) << full.substr(0, full.size() - 5);
    std::ofstream(dir_.Join("notnpy.npy")) << "this is not an npy file";
    std::ofstream(dir_.Join("badtype.jsonl")) << "{\"cat\": 1}\n{\"cat\": \"two\"}\n{}\n";
    std::ofstream(dir_.Join("badjson.jsonl")) << "{\"cat\": 1}\n{\"cat\": \n{}\n";
    std::ofstream(dir_.Join("unknown.jsonl")) << "{\"cat\": 1}\n{\"nope\": 1}\n{}\n";
    std::ofstream(dir_.Join("short.jsonl")) << "{\"cat\": 1}\n{}\n";
    std::vector<int64_t> dup = {1, 2, 1};
    ASSERT_TRUE(io::WriteNpyInt64(dir_.Join("dup.npy"), dup.data(), 3).ok());
    std::vector<int64_t> existing = {rows_[3].id, 5, 6};
    ASSERT_TRUE(io::WriteNpyInt64(dir_.Join("existing.npy"), existing.data(), 3).ok());
    std::vector<int64_t> two = {5, 6};
    ASSERT_TRUE(io::WriteNpyInt64(dir_.Join("two.npy"), two.data(), 2).ok());
  }
  auto ingest = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = {"ingest", db_, "--collection", "c"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  auto query = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = {"query", db_, "--collection", "c", "--queries",
                                  dir_.Join("q.npy")};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  struct Bad {
    std::vector<std::string> args;
    std::string must_mention;
  };
  std::vector<Bad> bad = {
      {ingest({"--vectors", dir_.Join("wrongdim.npy")}), "dim"},
      {ingest({"--vectors", dir_.Join("nan.npy")}), "row 1"},
      {ingest({"--vectors", dir_.Join("trunc.npy")}), "trunc"},
      {ingest({"--vectors", dir_.Join("notnpy.npy")}), "notnpy.npy"},
      {ingest({"--vectors", dir_.Join("missing.npy")}), "missing.npy"},
      {ingest({"--vectors", dir_.Join("good3.npy"), "--attributes", dir_.Join("badtype.jsonl")}),
       "cat"},
      {ingest({"--vectors", dir_.Join("good3.npy"), "--attributes", dir_.Join("badjson.jsonl")}),
       "2"},
      {ingest({"--vectors", dir_.Join("good3.npy"), "--attributes", dir_.Join("unknown.jsonl")}),
       "nope"},
      {ingest({"--vectors", dir_.Join("good3.npy"), "--attributes", dir_.Join("short.jsonl")}),
       "rows"},
      {ingest({"--vectors", dir_.Join("good3.npy"), "--ids", dir_.Join("dup.npy")}), "id 1"},
      {ingest({"--vectors", dir_.Join("good3.npy"), "--ids", dir_.Join("existing.npy")}),
       "already exists"},
      {ingest({"--vectors", dir_.Join("good3.npy"), "--ids", dir_.Join("two.npy")}), "ids"},
      {{"ingest", db_, "--collection", "nosuch", "--vectors", dir_.Join("good3.npy")}, "nosuch"},
      {query({"--k", "0"}), "--k"},
      {query({"--k", "-3"}), "--k"},
      {query({"--k", "5", "--filter", "nosuch = 1"}), "nosuch"},
      {query({"--k", "5", "--filter", "cat = 'x'"}), "position"},
      {query({"--k", "5", "--filter", "cat = "}), "position"},
      {query({"--k", "5", "--filter", "cat = 1 AND"}), "position"},
      {query({"--k", "5", "--filter", "(cat = 1"}), "position"},
      {query({"--k", "5", "--filter", "name = 'open"}), "position"},
      {query({"--k", "5", "--filter", "cat = 1 )"}), "position"},
      {query({"--k", "5", "--filter", "tags = 'red'"}), "position"},
      {query({"--k", "5", "--filter", "name < 'b'"}), "position"},
      {query({"--k", "5", "--filter", "cat IN ()"}), "position"},
      {query({"--k", "5", "--filter", "cat @ 1"}), "position"},
      {query({"--k", "5", "--path", "warp"}), "warp"},
      {{"query", db_, "--collection", "c", "--queries", dir_.Join("wrongdim.npy"), "--k", "5"},
       "dim"},
      {{"query", dir_.Join("nodb"), "--collection", "c", "--queries", dir_.Join("q.npy"), "--k",
        "5"},
       "nodb"},
      {{"delete", db_, "--collection", "c", "--filter", "cat >"}, "position"},
      {{"create", db_, "--collection", "c", "--dim", "4"}, "c"},
      {{"create", db_, "--collection", "d", "--dim", "0"}, "dim"},
      {{"create", db_, "--collection", "d", "--dim", "4", "--attr", "x:complex"}, "complex"},
      {{"create", db_, "--collection", "d", "--dim", "4", "--metric", "hamming"}, "hamming"},
  };
  for (const auto& b : bad) {
    std::string joined;
    for (auto& a : b.args) joined += a + " ";
    SCOPED_TRACE(joined);
    auto r = Run(b.args);
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    ASSERT_FALSE(r.err.empty());
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(b.must_mention), std::string::npos) << r.err;
  }
  auto after = Run({"query", db_, "--collection", "c", "--queries", dir_.Join("q.npy"), "--k", "5",
                    "--filter", "cat < 5"});
  EXPECT_EQ(after.out, baseline.out);
  auto stats = Run({"stats", db_, "--collection", "c"});
  EXPECT_EQ(stats.Lines()[0]["rows"], 500);
  EXPECT_EQ(Run({"check", db_}).code, 0);
}

TEST_F(CliTest, KillDuringIngestLeavesWholeBatchesThatPassCheck) {
  auto c = Run({"create", db_, "--collection", "c", "--dim", "64", "--attr", "cat:int"});
  ASSERT_EQ(c.code, 0) << c.err;
  const size_t n = 200000, batch = 5000;
  auto big = test::RandomVectors(n, 64, 11);
  ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("big.npy"), big.data(), n, 64).ok());
  std::mt19937 rng(3);
  uint64_t before = 0;
  for (int round = 0; round < 3; ++round) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int devnull = open("/dev/null", O_WRONLY);
      dup2(devnull, 1);
      dup2(devnull, 2);
      execl(CliPath(), "sieve", "ingest", db_.c_str(), "--collection", "c", "--vectors",
            dir_.Join("big.npy").c_str(), "--batch-rows", std::to_string(batch).c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    usleep(300000 + rng() % 900000);
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    auto chk = Run({"check", db_});
    ASSERT_EQ(chk.code, 0) << chk.out << chk.err;
    auto st = Run({"stats", db_, "--collection", "c"});
    ASSERT_EQ(st.code, 0) << st.err;
    uint64_t rows = st.Lines()[0]["rows"];
    EXPECT_EQ((rows - before) % batch, 0u) << "partial batch after kill -9 in round " << round;
    EXPECT_GE(rows, before);
    // Intact rows: a committed row is its own nearest neighbour at distance 0, with its id.
    if (rows > before) {
      const size_t i = (rows - before) - 1;  // the last committed row of this round
      ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("self.npy"), big.data() + i * 64, 1, 64).ok());
      auto r = Run({"query", db_, "--collection", "c", "--queries", dir_.Join("self.npy"), "--k",
                    "5"});
      ASSERT_EQ(r.code, 0) << r.err;
      // Earlier rounds ingested the same vectors under other ids: look among the zeros.
      auto line = r.Lines()[0];
      bool found = false;
      for (size_t j = 0; j < line["ids"].size(); ++j) {
        if (line["distances"][j] == 0.0 && line["ids"][j] == static_cast<int64_t>(before + i)) {
          found = true;
        }
      }
      EXPECT_TRUE(found) << line.dump();
    }
    before = rows;
  }
}

// The attributes of `r` as the CLI prints them ("attributes": {...}, null for nulls).
json AttributesJson(const Row& r) {
  json j = json::object();
  j["cat"] = r.has_cat ? json(r.cat) : json(nullptr);
  j["price"] = r.has_price ? json(r.price) : json(nullptr);
  j["name"] = r.name.empty() ? json(nullptr) : json(r.name);
  j["flag"] = r.has_flag ? json(r.flag) : json(nullptr);
  j["tags"] = r.has_tags ? json(r.tags) : json(nullptr);
  return j;
}

TEST_F(CliTest, QueryIncludeGetCountAndExportReturnWhatWasIngested) {
  CreateAndIngest("l2", 600);
  rows_.resize(600);
  ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("q.npy"), vectors_.data(), 2, kDim).ok());
  auto q = Run({"query", db_, "--collection", "c", "--queries", dir_.Join("q.npy"), "--k", "5",
                "--filter", "cat >= 2", "--include", "*,vector"});
  ASSERT_EQ(q.code, 0) << q.err;
  std::map<int64_t, size_t> at;
  for (size_t i = 0; i < rows_.size(); ++i) at[rows_[i].id] = i;
  for (const json& line : q.Lines()) {
    ExpectMatchesOracle(line, Metric::kL2, vectors_.data() + line["query"].get<size_t>() * kDim,
                        5, [](const Row& r) { return r.has_cat && r.cat >= 2; });
    ASSERT_EQ(line["attributes"].size(), line["ids"].size());
    for (size_t i = 0; i < line["ids"].size(); ++i) {
      const size_t row = at.at(line["ids"][i].get<int64_t>());
      EXPECT_EQ(line["attributes"][i], AttributesJson(rows_[row]));
      auto v = line["vectors"][i].get<std::vector<float>>();
      EXPECT_EQ(v, std::vector<float>(vectors_.begin() + row * kDim,
                                      vectors_.begin() + (row + 1) * kDim));
    }
  }
  // get: in the order asked, missing ids reported per id.
  auto g = Run({"get", db_, "--collection", "c", "--id", std::to_string(rows_[3].id), "--id", "5",
                "--id", std::to_string(rows_[0].id), "--include", "name,cat"});
  ASSERT_EQ(g.code, 0) << g.err;
  auto lines = g.Lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["id"], rows_[3].id);
  EXPECT_EQ(lines[0]["found"], true);
  EXPECT_EQ(lines[0]["attributes"]["cat"], AttributesJson(rows_[3])["cat"]);
  EXPECT_EQ(lines[0]["attributes"].size(), 2u);
  EXPECT_EQ(lines[1], json::parse(R"({"id": 5, "found": false})"));
  EXPECT_EQ(lines[2]["id"], rows_[0].id);
  // count against the oracle.
  for (const FilterCase& c : FilterCases()) {
    auto r = Run({"count", db_, "--collection", "c", "--filter", c.text});
    ASSERT_EQ(r.code, 0) << c.text << ": " << r.err;
    size_t want = 0;
    for (const Row& row : rows_) want += c.pass(row);
    EXPECT_EQ(r.Lines().at(0)["count"], want) << c.text;
  }
  // export jsonl: every passing row in id order, equal to what was ingested.
  auto e = Run({"export", db_, "--collection", "c", "--filter", "flag = true", "--page-rows", "37",
                "--include", "*,vector"});
  ASSERT_EQ(e.code, 0) << e.err;
  std::vector<const Row*> want;
  for (const Row& r : rows_) {
    if (r.has_flag && r.flag) want.push_back(&r);
  }
  std::sort(want.begin(), want.end(), [](const Row* a, const Row* b) { return a->id < b->id; });
  auto rows = e.Lines();
  ASSERT_EQ(rows.size(), want.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    json expect = AttributesJson(*want[i]);
    expect["id"] = want[i]->id;
    const size_t row = at.at(want[i]->id);
    // Components are the shortest text of each float: compared as floats.
    EXPECT_EQ(rows[i]["vector"].get<std::vector<float>>(),
              std::vector<float>(vectors_.begin() + row * kDim,
                                 vectors_.begin() + (row + 1) * kDim));
    rows[i].erase("vector");
    EXPECT_EQ(rows[i], expect);
  }
  EXPECT_NE(e.err.find("\"exported\": " + std::to_string(want.size())), std::string::npos) << e.err;
  // export csv and npy.
  auto csv = Run({"export", db_, "--collection", "c", "--format", "csv", "--include", "cat,name",
                  "--filter", "id < 1100"});
  ASSERT_EQ(csv.code, 0) << csv.err;
  std::istringstream in(csv.out);
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header, "id,cat,name");
  auto npy = Run({"export", db_, "--collection", "c", "--format", "npy", "--output",
                  dir_.Join("out"), "--include", "cat"});
  ASSERT_EQ(npy.code, 0) << npy.err;
  io::NpyMatrix m;
  ASSERT_TRUE(io::ReadNpyMatrix(dir_.Join("out.vectors.npy"), &m).ok());
  std::vector<int64_t> ids;
  ASSERT_TRUE(io::ReadNpyInt64Vector(dir_.Join("out.ids.npy"), &ids).ok());
  ASSERT_EQ(ids.size(), rows_.size());
  ASSERT_EQ(m.rows, rows_.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    const size_t row = at.at(ids[i]);
    EXPECT_TRUE(std::equal(m.data.begin() + i * kDim, m.data.begin() + (i + 1) * kDim,
                           vectors_.begin() + row * kDim));
  }
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  EXPECT_EQ(ReadFile(dir_.Join("out.attributes.jsonl")).size() > 0, true);
  auto bad = Run({"export", db_, "--collection", "c", "--format", "xml"});
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("xml"), std::string::npos);
}

TEST_F(CliTest, UpsertUpdateDropAndCompact) {
  CreateAndIngest("l2", 400);
  rows_.resize(400);
  // Running the same ingest without ids again is refused; with --auto-ids it adds rows.
  auto again = Run({"ingest", db_, "--collection", "c", "--vectors", dir_.Join("all_vectors.npy")});
  EXPECT_EQ(again.code, 1);
  EXPECT_NE(again.err.find("--auto-ids"), std::string::npos) << again.err;
  // Upsert: the first 100 rows again with new vectors, and 50 new ids.
  std::vector<float> fresh = test::RandomVectors(150, kDim, 77);
  std::vector<int64_t> ids;
  for (size_t i = 0; i < 100; ++i) ids.push_back(rows_[i].id);
  for (int64_t i = 0; i < 50; ++i) ids.push_back(900000 + i);
  ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("up.npy"), fresh.data(), 150, kDim).ok());
  ASSERT_TRUE(io::WriteNpyInt64(dir_.Join("up_ids.npy"), ids.data(), ids.size()).ok());
  auto up = Run({"ingest", db_, "--collection", "c", "--vectors", dir_.Join("up.npy"), "--ids",
                 dir_.Join("up_ids.npy"), "--upsert", "--batch-rows", "40"});
  ASSERT_EQ(up.code, 0) << up.err;
  EXPECT_EQ(up.Lines()[0]["replaced"], 100);
  EXPECT_EQ(up.Lines()[0]["rows"], 450);
  auto g = Run({"get", db_, "--collection", "c", "--id", std::to_string(ids[5]), "--include",
                "vector,cat"});
  ASSERT_EQ(g.code, 0) << g.err;
  EXPECT_EQ(g.Lines()[0]["vector"].get<std::vector<float>>(),
            std::vector<float>(fresh.begin() + 5 * kDim, fresh.begin() + 6 * kDim));
  EXPECT_TRUE(g.Lines()[0]["attributes"]["cat"].is_null());  // upserted without attributes
  // Update by filter, then by ids.
  auto u = Run({"update", db_, "--collection", "c", "--filter", "id >= 900000", "--set",
                "name = 'new'", "--set", "tags = ('a', 'b')"});
  ASSERT_EQ(u.code, 0) << u.err;
  EXPECT_EQ(u.Lines()[0]["updated"], 50);
  auto n = Run({"count", db_, "--collection", "c", "--filter", "name = 'new' AND tags CONTAINS 'b'"});
  EXPECT_EQ(n.Lines().at(0)["count"], 50);
  auto badset = Run({"update", db_, "--collection", "c", "--id", "1", "--set", "colour = 1"});
  EXPECT_EQ(badset.code, 1);
  EXPECT_NE(badset.err.find("cat, price, name, flag, tags"), std::string::npos) << badset.err;
  // Delete most rows, compact: the rest stay, answers exact, ids the same.
  auto d = Run({"delete", db_, "--collection", "c", "--filter", "id < 900000 AND NOT id IN (" +
                                                                 std::to_string(rows_[7].id) + ")"});
  ASSERT_EQ(d.code, 0) << d.err;
  // 499 deleted rows of dim 16 hold less than a rewrite writes: left in place, unless forced.
  auto c = Run({"compact", db_});
  ASSERT_EQ(c.code, 0) << c.err;
  auto left = c.Lines().at(0);
  EXPECT_EQ(left["rows_removed"], 0);
  EXPECT_EQ(left["shards_skipped"], 1);
  EXPECT_EQ(left["rows_left_deleted"], 100 + 399);
  EXPECT_EQ(left["bytes_after"], left["bytes_before"]);
  EXPECT_NE(left.value("note", "").find("force"), std::string::npos) << c.out;
  c = Run({"compact", db_, "--force"});
  ASSERT_EQ(c.code, 0) << c.err;
  auto cj = c.Lines().at(0);
  EXPECT_EQ(cj["rows_removed"], 100 + 399);  // the rows upsert replaced, and the deleted
  EXPECT_GT(cj["bytes_before"].get<uint64_t>(), 0u);  // (space given back: rows_test, the bench)
  auto after = Run({"export", db_, "--collection", "c", "--include", "name"});
  ASSERT_EQ(after.code, 0) << after.err;
  auto lines = after.Lines();
  ASSERT_EQ(lines.size(), 51u);
  EXPECT_EQ(lines[0]["id"], rows_[7].id);
  EXPECT_EQ(lines[1]["id"], 900000);
  EXPECT_EQ(lines[1]["name"], "new");
  auto check = Run({"check", db_});
  EXPECT_EQ(check.code, 0) << check.out << check.err;
  // Drop: gone, durably; the name is free.
  auto drop = Run({"drop", db_, "--collection", "c"});
  ASSERT_EQ(drop.code, 0) << drop.err;
  auto stats = Run({"stats", db_, "--collection", "c"});
  EXPECT_EQ(stats.code, 1);
  auto collections = Run({"collections", db_});
  EXPECT_TRUE(collections.Lines().empty());
  auto dropped_again = Run({"drop", db_, "--collection", "c"});
  EXPECT_EQ(dropped_again.code, 1);
}

// Issue 32 item 8: get, update and delete take the same id forms (--ids .npy or text,
// --id N... or repeated); a blank filter is refused by update and delete alike; a negative id
// is refused by --ids as by --id-field.
TEST_F(CliTest, AlterRenameAndAliasKeepTheContract) {
  CreateAndIngest("l2", 300);
  rows_.resize(300);
  size_t cat3 = 0;
  for (const Row& r : rows_) cat3 += r.has_cat && r.cat == 3;
  auto a = Run({"alter", db_, "--collection", "c", "--add-attr", "stock:int", "--default", "4"});
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.Lines()[0]["rows"], 300);
  EXPECT_EQ(a.Lines()[0]["attributes"].back(), json::parse(R"({"name": "stock", "type": "int"})"));
  auto c = Run({"count", db_, "--collection", "c", "--filter", "stock = 4 AND cat = 3"});
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(c.Lines()[0]["count"], cat3);
  a = Run({"alter", db_, "--collection", "c", "--rename-attr", "cat", "kind"});
  ASSERT_EQ(a.code, 0) << a.err;
  a = Run({"alter", db_, "--collection", "c", "--drop-attr", "tags"});
  ASSERT_EQ(a.code, 0) << a.err;
  auto g = Run({"get", db_, "--collection", "c", "--id", std::to_string(rows_[0].id)});
  ASSERT_EQ(g.code, 0) << g.err;
  EXPECT_EQ(g.Lines()[0]["attributes"]["stock"], 4);
  EXPECT_FALSE(g.Lines()[0]["attributes"].contains("tags"));
  EXPECT_FALSE(g.Lines()[0]["attributes"].contains("cat"));
  // Bad input: one line on stderr, exit 1, nothing changed.
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"alter", db_, "--collection", "c", "--drop-attr", "nope"},
        {"alter", db_, "--collection", "c", "--add-attr", "kind:int"},
        {"alter", db_, "--collection", "c", "--add-attr", "b:bool", "--default", "3"},
        {"alter", db_, "--collection", "c", "--add-attr", "x:int", "--drop-attr", "kind"},
        {"alter", db_, "--collection", "c"},
        {"rename", db_, "c"},
        {"alias", db_, "c", "--to", "c"},
        {"alias", db_, "x", "--to", "none"}}) {
    auto r = Run(bad);
    EXPECT_EQ(r.code, 1) << bad[4 < bad.size() ? 4 : 2];
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  // Rename, then an alias that every command takes as --collection.
  auto rn = Run({"rename", db_, "c", "c_v1"});
  ASSERT_EQ(rn.code, 0) << rn.err;
  EXPECT_EQ(rn.Lines()[0], json::parse(R"({"renamed": "c", "to": "c_v1"})"));
  auto al = Run({"alias", db_, "c", "--to", "c_v1"});
  ASSERT_EQ(al.code, 0) << al.err;
  c = Run({"count", db_, "--collection", "c", "--filter", "kind = 3"});
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(c.Lines()[0]["count"], cat3);
  auto ls = Run({"aliases", db_});
  ASSERT_EQ(ls.code, 0) << ls.err;
  EXPECT_EQ(ls.Lines()[0], json::parse(R"({"alias": "c", "collection": "c_v1"})"));
  auto drop = Run({"drop", db_, "--collection", "c_v1"});
  EXPECT_EQ(drop.code, 1);
  EXPECT_NE(drop.err.find("alias"), std::string::npos) << drop.err;
  al = Run({"alias", db_, "c", "--drop"});
  ASSERT_EQ(al.code, 0) << al.err;
  EXPECT_EQ(al.Lines()[0], json::parse(R"({"dropped_alias": "c"})"));
  auto check = Run({"check", db_});
  EXPECT_EQ(check.code, 0) << check.out << check.err;
}

TEST_F(CliTest, RowCommandsTakeTheSameIdFormsAndRefuseBlankFiltersAndNegativeIds) {
  CreateAndIngest("l2", 20);  // ids 1000, 1007, ..., 1133
  auto r = Run({"get", db_, "--collection", "c", "--id", "1000", "1007", "5"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto lines = r.Lines();
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(lines[0]["id"], 1000);
  EXPECT_EQ(lines[0]["found"], true);
  EXPECT_EQ(lines[1]["id"], 1007);
  EXPECT_EQ(lines[2]["found"], false);

  {
    std::ofstream text(dir_.Join("ids.txt"));
    text << "1014\n1021\n";
  }
  r = Run({"get", db_, "--collection", "c", "--ids", dir_.Join("ids.txt")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.Lines().size(), 2u);
  r = Run({"delete", db_, "--collection", "c", "--ids", dir_.Join("ids.txt")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.Lines()[0]["deleted"], 2);
  r = Run({"delete", db_, "--collection", "c", "--id", "1028", "1035"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.Lines()[0]["deleted"], 2);
  r = Run({"delete", db_, "--collection", "c", "--id", "1042", "--id", "1049"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.Lines()[0]["deleted"], 2);
  r = Run({"delete", db_, "--collection", "c", "--id", "1056", "--filter", "cat = 1"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("exactly one"), std::string::npos) << r.err;

  for (const std::string blank : {"", "  "}) {
    r = Run({"update", db_, "--collection", "c", "--filter", blank, "--set", "cat = 77"});
    EXPECT_EQ(r.code, 1) << "'" << blank << "': " << r.out;
    EXPECT_NE(r.err.find("update: the filter is empty"), std::string::npos) << r.err;
    r = Run({"delete", db_, "--collection", "c", "--filter", blank});
    EXPECT_EQ(r.code, 1) << "'" << blank << "': " << r.out;
    EXPECT_NE(r.err.find("delete: the filter is empty"), std::string::npos) << r.err;
  }
  r = Run({"count", db_, "--collection", "c", "--filter", "cat = 77"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.Lines()[0]["count"], 0) << "a refused update changed rows";
  r = Run({"stats", db_, "--collection", "c"});
  EXPECT_EQ(r.Lines()[0]["rows"], 20 - 6);

  const std::vector<int64_t> ids = {5000, -5};
  ASSERT_TRUE(io::WriteNpyInt64(dir_.Join("neg.npy"), ids.data(), ids.size()).ok());
  ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("neg_vectors.npy"), vectors_.data(), 2, kDim).ok());
  r = Run({"ingest", db_, "--collection", "c", "--vectors", dir_.Join("neg_vectors.npy"),
           "--ids", dir_.Join("neg.npy")});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("row 1: id -5 is negative"), std::string::npos) << r.err;
  r = Run({"stats", db_, "--collection", "c"});
  EXPECT_EQ(r.Lines()[0]["rows"], 20 - 6);
}

// Issue 32 item 8f and 8g: `sieve --version`, and the example's --help.
TEST_F(CliTest, VersionAndTheExamplesHelp) {
  auto r = Run({"--version"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, std::string("sieve ") + SIEVE_VERSION + "\n");

  // The example is built beside the CLI: BUILD/tools/example/embed_example.
  std::string example = CliPath();
  example = example.substr(0, example.rfind('/')) + "/example/embed_example";
  ASSERT_EQ(access(example.c_str(), X_OK), 0) << example;
  const std::string in_dir = "cd " + ShellQuote(dir_.path()) + " && " + ShellQuote(example);
  int status = std::system((in_dir + " --help >" + ShellQuote(dir_.Join("help.txt"))).c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_NE(ReadFile(dir_.Join("help.txt")).find("usage: embed_example DB_PATH"),
            std::string::npos);
  status = std::system((in_dir + " -h >/dev/null").c_str());
  EXPECT_EQ(WEXITSTATUS(status), 0);
  status = std::system((in_dir + " --bogus 2>/dev/null").c_str());
  EXPECT_EQ(WEXITSTATUS(status), 2);
  for (const char* name : {"--help", "-h", "--bogus"}) {
    EXPECT_NE(access(dir_.Join(name).c_str(), F_OK), 0) << name << " was created";
  }
}

}  // namespace
// A dropped collection's name re-created with another dim: ingest and query use the new dim
// (each reads the schema through the collection handle) and answer as the float64 oracle.
TEST_F(CliTest, DropAndRecreateWithAnotherDimQueriesTheNewOne) {
  CreateAndIngest("l2", 200);
  ASSERT_EQ(Run({"drop", db_, "--collection", "c"}).code, 0);
  ASSERT_EQ(Run({"create", db_, "--collection", "c", "--dim", "3"}).code, 0);
  const std::vector<float> rows = test::RandomVectors(50, 3, 5);
  const std::vector<float> queries = test::RandomVectors(2, 3, 6);
  ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("v3.npy"), rows.data(), 50, 3).ok());
  ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("q3.npy"), queries.data(), 2, 3).ok());
  auto in = Run({"ingest", db_, "--collection", "c", "--vectors", dir_.Join("v3.npy")});
  ASSERT_EQ(in.code, 0) << in.err;
  auto r = Run({"query", db_, "--collection", "c", "--queries", dir_.Join("q3.npy"), "--k", "5"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto lines = r.Lines();
  ASSERT_EQ(lines.size(), 2u);
  for (size_t q = 0; q < 2; ++q) {
    auto want = test::OracleTopK(Metric::kL2, queries.data() + 3 * q, rows.data(), 50, 3, 5,
                                 [](uint32_t) { return true; });
    ASSERT_EQ(lines[q]["ids"].size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(lines[q]["ids"][i].get<int64_t>(), static_cast<int64_t>(want[i].first));
      EXPECT_NEAR(lines[q]["distances"][i].get<double>(), want[i].second,
                  1e-4 * (1 + want[i].second));
    }
  }
  // Queries of the old dim are refused, naming the new one.
  auto old = Run({"query", db_, "--collection", "c", "--queries", dir_.Join("all_vectors.npy"),
                  "--k", "1"});
  EXPECT_NE(old.code, 0);
  EXPECT_NE(old.err.find("has dim 3"), std::string::npos) << old.err;
}

}  // namespace sieve
