// Copyright 2026 The Sieve Authors.
//
// Text attributes through the CLI: MATCH, MATCH_ALL and PHRASE counts against an oracle that
// analyzes the stored values with the same analyzer, the texts coming back through query
// --include, get and export, and the index staying exact through update, upsert, delete,
// compaction, reopening, check, and kill -9 during a text ingest.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
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

struct Doc {
  std::optional<std::string> body;   // english
  std::optional<std::string> title;  // simple
};

const char* kWords[] = {"Red",   "red",  "shoes", "shoe", "running",   "runs", "the",  "of",
                        "boots", "Boot", "new",   "York", "caf\u00e9", "Blue", "trail"};

std::optional<std::string> RandomText(std::mt19937& rng) {
  if (rng() % 9 == 0) return std::nullopt;
  std::string s;
  const size_t words = rng() % 10;
  for (size_t w = 0; w < words; ++w)
    s += std::string(kWords[rng() % 15]) + (rng() % 5 ? " " : ". ");
  return s;
}

std::vector<TextToken> Tokens(const std::string& analyzer, const std::string& text) {
  std::shared_ptr<const TextAnalyzer> a;
  EXPECT_TRUE(TextAnalyzer::Get(analyzer, &a).ok());
  std::vector<TextToken> out;
  EXPECT_TRUE(a->Analyze(text, &out).ok());
  return out;
}

// Whether `fn` (MATCH, MATCH_ALL, PHRASE) of `query` is TRUE for `value`.
bool Holds(const std::string& fn, const std::string& analyzer,
           const std::optional<std::string>& value, const std::string& query) {
  if (!value) return false;
  const auto doc = Tokens(analyzer, *value);
  const auto q = Tokens(analyzer, query);
  if (q.empty()) return false;
  auto at = [&](const std::string& term, int64_t pos) {
    for (const TextToken& t : doc) {
      if (t.term == term && (pos < 0 || t.position == pos)) return true;
    }
    return false;
  };
  if (fn == "MATCH") {
    for (const TextToken& t : q) {
      if (at(t.term, -1)) return true;
    }
    return false;
  }
  if (fn == "MATCH_ALL") {
    for (const TextToken& t : q) {
      if (!at(t.term, -1)) return false;
    }
    return true;
  }
  for (const TextToken& s : doc) {
    if (s.term != q[0].term) continue;
    bool all = true;
    for (const TextToken& t : q) {
      all = all && at(t.term, int64_t{s.position} + t.position - q[0].position);
    }
    if (all) return true;
  }
  return false;
}

class TextCliTest : public ::testing::Test {
 protected:
  static constexpr size_t kDim = 8;

  Result Run(const std::vector<std::string>& args) { return test::RunCli(args, dir_); }

  // Writes vectors, ids and attributes of docs [0, n) with ids first_id + i.
  void WriteInputs(const std::vector<Doc>& docs, int64_t first_id, const std::string& tag) {
    auto vectors = test::RandomVectors(docs.size(), kDim, static_cast<uint64_t>(first_id) + 3);
    ASSERT_TRUE(
        io::WriteNpyMatrix(dir_.Join(tag + ".npy"), vectors.data(), docs.size(), kDim).ok());
    std::vector<int64_t> ids;
    std::ofstream attrs(dir_.Join(tag + ".jsonl"));
    for (size_t i = 0; i < docs.size(); ++i) {
      ids.push_back(first_id + static_cast<int64_t>(i));
      json j = json::object();
      if (docs[i].body) j["body"] = *docs[i].body;
      j["title"] = docs[i].title ? json(*docs[i].title) : json(nullptr);
      j["n"] = static_cast<int64_t>(i % 10);
      attrs << j.dump() << "\n";
    }
    ASSERT_TRUE(io::WriteNpyInt64(dir_.Join(tag + "_ids.npy"), ids.data(), ids.size()).ok());
  }

  uint64_t Count(const std::string& filter) {
    auto r = Run({"count", db_, "--collection", "c", "--filter", filter});
    EXPECT_EQ(r.code, 0) << filter << ": " << r.err;
    return r.code == 0 ? r.Lines()[0]["count"].get<uint64_t>() : UINT64_MAX;
  }

  void ExpectCountsMatchOracle() {
    const std::vector<std::pair<std::string, std::string>> tests = {{"MATCH", "running boots"},
                                                                    {"MATCH_ALL", "red shoes"},
                                                                    {"PHRASE", "new york"},
                                                                    {"PHRASE", "shoes of red"},
                                                                    {"MATCH", "CAF\u00c9 the"}};
    for (const auto& [fn, query] : tests) {
      for (const bool body : {true, false}) {
        const std::string field = body ? "body" : "title";
        uint64_t want = 0, want_not = 0, want_and = 0;
        for (const auto& [id, doc] : docs_) {
          const auto& v = body ? doc.body : doc.title;
          const bool holds = Holds(fn, body ? "english" : "simple", v, query);
          want += holds;
          want_not += v.has_value() && !holds;
          want_and += holds && id % 3 == 0;
        }
        const std::string test = fn + "(" + field + ", '" + query + "')";
        EXPECT_EQ(Count(test), want) << test;
        if (!body) continue;
        EXPECT_EQ(Count("NOT " + test), want_not) << test;
        EXPECT_EQ(Count(test + " AND id IN (" + ThirdIds() + ")"), want_and) << test;
      }
    }
  }

  // Every live id divisible by 3, for an IN list.
  std::string ThirdIds() {
    std::string s;
    for (const auto& [id, doc] : docs_) {
      if (id % 3 == 0) s += (s.empty() ? "" : ",") + std::to_string(id);
    }
    return s.empty() ? "-1" : s;
  }

  test::ScratchDir dir_;
  std::string db_ = dir_.Join("db");
  std::map<int64_t, Doc> docs_;  // the live rows, by id
  std::mt19937 rng_{34};
};

TEST_F(TextCliTest, PredicatesMatchTheOracleThroughEveryWrite) {
  ASSERT_EQ(Run({"create", db_, "--collection", "c", "--dim", std::to_string(kDim), "--attr",
                 "body:text", "--attr", "title:text:simple", "--attr", "n:int", "--shards", "2"})
                .code,
            0);
  std::vector<Doc> docs(800);
  for (size_t i = 0; i < docs.size(); ++i) {
    docs[i] = Doc{RandomText(rng_), RandomText(rng_)};
    docs_[static_cast<int64_t>(i)] = docs[i];
  }
  WriteInputs(docs, 0, "a");
  auto r =
      Run({"ingest", db_, "--collection", "c", "--vectors", dir_.Join("a.npy"), "--ids",
           dir_.Join("a_ids.npy"), "--attributes", dir_.Join("a.jsonl"), "--batch-rows", "400"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto stats = Run({"stats", db_, "--collection", "c"});
  EXPECT_EQ(stats.Lines()[0]["attributes"]["body"], "text:english");
  EXPECT_EQ(stats.Lines()[0]["attributes"]["title"], "text:simple");
  ExpectCountsMatchOracle();

  // The texts come back as strings, nulls as null: get, query --include, export.
  auto got =
      Run({"get", db_, "--collection", "c", "--id", "5", "--id", "6", "--include", "body,title"});
  ASSERT_EQ(got.code, 0) << got.err;
  for (const json& line : got.Lines()) {
    const Doc& d = docs_.at(line["id"].get<int64_t>());
    EXPECT_EQ(line["attributes"]["body"], d.body ? json(*d.body) : json(nullptr)) << line;
    EXPECT_EQ(line["attributes"]["title"], d.title ? json(*d.title) : json(nullptr)) << line;
  }
  auto exported = Run({"export", db_, "--collection", "c", "--filter", "MATCH(body, 'boot')"});
  ASSERT_EQ(exported.code, 0) << exported.err;
  EXPECT_EQ(exported.Lines().size(), Count("MATCH(body, 'boot')"));
  for (const json& line : exported.Lines()) {
    const Doc& d = docs_.at(line["id"].get<int64_t>());
    ASSERT_TRUE(d.body.has_value());
    EXPECT_EQ(line["body"], *d.body);
    EXPECT_EQ(line["title"], d.title ? json(*d.title) : json(nullptr));
  }
  auto q = test::RandomVectors(1, kDim, 5);
  ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("q.npy"), q.data(), 1, kDim).ok());
  auto query = Run({"query", db_, "--collection", "c", "--queries", dir_.Join("q.npy"), "--k", "20",
                    "--filter", "PHRASE(body, 'red shoes') OR MATCH_ALL(title, 'york new')",
                    "--include", "body", "--explain"});
  ASSERT_EQ(query.code, 0) << query.err;
  const json line = query.Lines()[0];
  for (size_t i = 0; i < line["ids"].size(); ++i) {
    const Doc& d = docs_.at(line["ids"][i].get<int64_t>());
    EXPECT_TRUE(Holds("PHRASE", "english", d.body, "red shoes") ||
                Holds("MATCH_ALL", "simple", d.title, "york new"));
    EXPECT_EQ(line["attributes"][i]["body"], d.body ? json(*d.body) : json(nullptr));
  }
  EXPECT_NE(query.err.find("passing_rows"), std::string::npos) << query.err;

  // update by a text filter, then to null and from null.
  auto up = Run({"update", db_, "--collection", "c", "--filter", "MATCH_ALL(body, 'trail boot')",
                 "--set", "body = 'New York trail shoes'"});
  ASSERT_EQ(up.code, 0) << up.err;
  for (auto& [id, d] : docs_) {
    if (Holds("MATCH_ALL", "english", d.body, "trail boot")) d.body = "New York trail shoes";
  }
  ASSERT_EQ(Run({"update", db_, "--collection", "c", "--id", "7", "--set", "title = NULL"}).code,
            0);
  docs_[7].title.reset();
  ASSERT_EQ(Run({"update", db_, "--collection", "c", "--id", "8", "--set",
                 "title = 'red shoes of new york'"})
                .code,
            0);
  docs_[8].title = "red shoes of new york";

  // upsert: rows replaced and rows added.
  std::vector<Doc> more(200);
  for (size_t i = 0; i < more.size(); ++i) {
    more[i] = Doc{RandomText(rng_), RandomText(rng_)};
    docs_[700 + static_cast<int64_t>(i)] = more[i];
  }
  const uint64_t replaced = 100;  // ids 700..799 were live
  WriteInputs(more, 700, "b");
  r = Run({"ingest", db_, "--collection", "c", "--vectors", dir_.Join("b.npy"), "--ids",
           dir_.Join("b_ids.npy"), "--attributes", dir_.Join("b.jsonl"), "--upsert"});
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectCountsMatchOracle();

  // delete by a phrase, compact, and the index after a reopen and a check.
  auto del = Run({"delete", db_, "--collection", "c", "--filter", "PHRASE(body, 'red shoes')"});
  ASSERT_EQ(del.code, 0) << del.err;
  uint64_t gone = 0;
  for (auto it = docs_.begin(); it != docs_.end();) {
    if (Holds("PHRASE", "english", it->second.body, "red shoes")) {
      it = docs_.erase(it);
      ++gone;
    } else {
      ++it;
    }
  }
  EXPECT_EQ(del.Lines()[0]["deleted"], gone);
  ExpectCountsMatchOracle();
  EXPECT_EQ(Run({"check", db_}).code, 0);
  auto compact = Run({"compact", db_, "--force"});
  ASSERT_EQ(compact.code, 0) << compact.err;
  EXPECT_EQ(compact.Lines()[0]["rows_removed"], gone + replaced);
  ExpectCountsMatchOracle();
  auto check = Run({"check", db_});
  EXPECT_EQ(check.code, 0) << check.out << check.err;

  // A schema change keeps the text index and adds another.
  auto alter = Run({"alter", db_, "--collection", "c", "--add-attr", "note:text:stem:french",
                    "--default", "'Les chevaux courent'"});
  ASSERT_EQ(alter.code, 0) << alter.err;
  EXPECT_EQ(Count("MATCH(note, 'cheval')"), docs_.size());
  ExpectCountsMatchOracle();
  EXPECT_EQ(Run({"check", db_}).code, 0);
}

TEST_F(TextCliTest, BadDeclarationsAndValuesAreOneLineErrors) {
  auto bad = Run({"create", db_, "--collection", "c", "--dim", "4", "--attr", "b:text:klingon"});
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("unknown text analyzer 'klingon'"), std::string::npos) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
  ASSERT_EQ(Run({"create", db_, "--collection", "c", "--dim", "4", "--attr", "b:text"}).code, 0);
  auto f = Run({"count", db_, "--collection", "c", "--filter", "b = 'x'"});
  EXPECT_EQ(f.code, 1);
  EXPECT_NE(f.err.find("at position 3"), std::string::npos) << f.err;
  std::ofstream(dir_.Join("bad.jsonl")) << "{\"b\": 3}\n";
  auto v = test::RandomVectors(1, 4, 1);
  ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("v.npy"), v.data(), 1, 4).ok());
  auto in = Run({"ingest", db_, "--collection", "c", "--vectors", dir_.Join("v.npy"),
                 "--attributes", dir_.Join("bad.jsonl")});
  EXPECT_EQ(in.code, 1);
  EXPECT_NE(in.err.find("expected text"), std::string::npos) << in.err;
}

TEST_F(TextCliTest, KillDuringTextIngestLeavesWholeBatchesWithTheirIndex) {
  ASSERT_EQ(Run({"create", db_, "--collection", "c", "--dim", std::to_string(kDim), "--attr",
                 "body:text", "--attr", "title:text:simple", "--attr", "n:int"})
                .code,
            0);
  const size_t n = 120000, batch = 3000;
  std::vector<Doc> docs(n);
  for (size_t i = 0; i < n; ++i) docs[i] = Doc{RandomText(rng_), RandomText(rng_)};
  WriteInputs(docs, 0, "big");
  // The oracle per prefix: how many of docs[0, k) pass, for each k.
  std::vector<uint32_t> phrase(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    phrase[i + 1] = phrase[i] + Holds("PHRASE", "english", docs[i].body, "red shoes");
  }
  std::mt19937 rng(3);
  uint64_t before = 0, want = 0;
  for (int round = 0; round < 3; ++round) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int devnull = open("/dev/null", O_WRONLY);
      dup2(devnull, 1);
      dup2(devnull, 2);
      // Without ids: each round appends the file's rows again under new ids.
      execl(test::CliPath(), "sieve", "ingest", db_.c_str(), "--collection", "c", "--vectors",
            dir_.Join("big.npy").c_str(), "--attributes", dir_.Join("big.jsonl").c_str(),
            "--batch-rows", std::to_string(batch).c_str(), "--auto-ids",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    usleep(200000 + rng() % 1200000);
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    auto chk = Run({"check", db_});
    ASSERT_EQ(chk.code, 0) << chk.out << chk.err;
    auto st = Run({"stats", db_, "--collection", "c"});
    ASSERT_EQ(st.code, 0) << st.err;
    const uint64_t rows = st.Lines()[0]["rows"];
    ASSERT_GE(rows, before);
    EXPECT_EQ((rows - before) % batch, 0u) << "partial batch after kill -9 in round " << round;
    want += phrase[rows - before];
    EXPECT_EQ(Count("PHRASE(body, 'red shoes')"), want) << "round " << round;
    before = rows;
  }
}

}  // namespace
}  // namespace sieve
