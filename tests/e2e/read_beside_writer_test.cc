// Copyright 2026 The Sieve Authors.
//
// Read-only work beside a writer in another process (issue 33, item 6): a read-only DB sees one
// version of the store, and check, search, count and scan (export) read it whole while `sieve
// ingest`, `sieve delete` and `sieve compact` run on the same store and delete the files that
// version is made of.

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sieve/db.h"
#include "tests/e2e/cli_run.h"
#include "tests/testutil.h"
#include "tools/io/npy.h"

namespace sieve {
namespace {

using test::CliPath;
using test::ShellQuote;

constexpr size_t kDim = 16;
// Rows per ingest: their vectors (25.6 KB) go through the memtable and a flush writes them to a
// blob file, which a later compaction deletes.
constexpr int64_t kBatch = 400;
constexpr int kRounds = 6;

class ReadBesideWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.Join("db");
    vectors_ = test::RandomVectors(static_cast<size_t>((kRounds + 1) * kBatch), kDim, 33);
    for (int b = 0; b <= kRounds; ++b) {
      std::vector<int64_t> ids, even;
      for (int64_t i = b * kBatch; i < (b + 1) * kBatch; ++i) {
        ids.push_back(i);
        if (i % 2 == 0) even.push_back(i);
      }
      const std::string n = std::to_string(b);
      ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("v" + n + ".npy"), Vector(b * kBatch), kBatch,
                                     kDim)
                      .ok());
      ASSERT_TRUE(io::WriteNpyInt64(dir_.Join("i" + n + ".npy"), ids.data(), ids.size()).ok());
      ASSERT_TRUE(io::WriteNpyInt64(dir_.Join("e" + n + ".npy"), even.data(), even.size()).ok());
    }
    ASSERT_EQ(
        Sh(Cli() + " create " + ShellQuote(db_) + " --collection c --dim 16 --attr b:int"), 0);
    ASSERT_EQ(Sh(Round(0)), 0);
  }

  const float* Vector(int64_t id) const { return vectors_.data() + id * kDim; }
  std::string Cli() const { return ShellQuote(CliPath()); }

  int Sh(const std::string& script) {
    const std::string cmd =
        "(" + script + ") >>" + ShellQuote(dir_.Join("writer.log")) + " 2>&1";
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // The writer's round `b`: ingest batch b; delete the even ids of batch b - 1; compact (forced:
  // a few deleted rows are otherwise left in place), which flushes, rewrites the shard into new
  // files and deletes the old ones.
  std::string Round(int b) const {
    const std::string n = std::to_string(b);
    std::string s = Cli() + " ingest " + ShellQuote(db_) + " --collection c --vectors " +
                    ShellQuote(dir_.Join("v" + n + ".npy")) + " --ids " +
                    ShellQuote(dir_.Join("i" + n + ".npy"));
    if (b > 0) {
      s += " && " + Cli() + " delete " + ShellQuote(db_) + " --collection c --ids " +
           ShellQuote(dir_.Join("e" + std::to_string(b - 1) + ".npy"));
    }
    return s + " && " + Cli() + " compact " + ShellQuote(db_) + " --force";
  }

  std::unique_ptr<DB> OpenReadOnly(bool fixed_view) {
    Options o;
    o.read_only = true;
    o.read_only_fixed_view = fixed_view;
    std::unique_ptr<DB> db;
    Status s = DB::Open(o, db_, &db);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return db;
  }

  // Reads the whole view through `db` and checks it is one state the writer committed: every
  // batch is whole or holds its odd ids only (all but the last), the vectors are the ones
  // ingested, count and scan agree, searches find rows at distance 0, and check passes.
  // Returns the live ids.
  std::set<int64_t> ExpectOneCommittedState(DB* db) {
    std::set<int64_t> live;
    std::vector<std::string> report;
    Status s = db->Check(&report);
    EXPECT_TRUE(s.ok()) << s.ToString() << (report.empty() ? "" : "\n" + report[0]);
    uint64_t count = 0;
    s = db->Count("c", "", &count);
    EXPECT_TRUE(s.ok()) << s.ToString();
    ScanRequest scan;
    scan.include.vector = true;
    scan.limit = 333;
    while (true) {
      ScanResult page;
      s = db->Scan("c", scan, &page);
      EXPECT_TRUE(s.ok()) << s.ToString();
      if (!s.ok()) return live;
      for (const Row& row : page.rows) {
        live.insert(row.id);
        EXPECT_EQ(row.vector, std::vector<float>(Vector(row.id), Vector(row.id) + kDim))
            << "id " << row.id;
      }
      if (page.done) break;
      scan.has_after = true;
      scan.after = page.next;
    }
    EXPECT_EQ(live.size(), count);
    std::map<int64_t, std::pair<int64_t, int64_t>> batches;  // batch → (rows, odd rows)
    for (int64_t id : live) {
      auto& [rows, odd] = batches[id / kBatch];
      ++rows;
      odd += id % 2;
    }
    for (const auto& [b, rows_odd] : batches) {
      const bool whole = rows_odd.first == kBatch;
      const bool odd_only = rows_odd.first == kBatch / 2 && rows_odd.second == kBatch / 2;
      EXPECT_TRUE(whole || (odd_only && b < batches.rbegin()->first))
          << "batch " << b << " holds " << rows_odd.first << " rows";
    }
    if (!live.empty()) {
      const int64_t first = *live.begin(), last = *live.rbegin();
      std::vector<float> queries(Vector(first), Vector(first) + kDim);
      queries.insert(queries.end(), Vector(last), Vector(last) + kDim);
      SearchRequest req;
      req.queries = queries.data();
      req.num_queries = 2;
      req.dim = kDim;
      req.k = 1;
      SearchOptions o;
      o.device = Device::kCpu;
      SearchResult r;
      s = db->Search("c", req, o, &r);
      EXPECT_TRUE(s.ok()) << s.ToString();
      if (s.ok()) {
        EXPECT_EQ(r.results[0].ids, std::vector<int64_t>{first});
        EXPECT_EQ(r.results[1].ids, std::vector<int64_t>{last});
        EXPECT_EQ(r.results[0].distances, std::vector<float>{0.0f});
      }
    }
    return live;
  }

  test::ScratchDir dir_;
  std::string db_;
  std::vector<float> vectors_;
};

// Each round opens the store read-only, lets the writer finish a whole round (so every file
// the view was opened on is replaced), and only then reads: the view is still the state at
// open. RocksDB's plain read-only mode, opened at the same moment, fails its check (a file
// the compaction deleted), which shows the round really pulls files from under the reader.
TEST_F(ReadBesideWriterTest, AViewOpenedBeforeAWriterRoundReadsTheStateAtOpen) {
  for (int b = 1; b <= 3; ++b) {
    std::unique_ptr<DB> fixed = OpenReadOnly(true);
    std::unique_ptr<DB> plain = OpenReadOnly(false);
    ASSERT_TRUE(fixed != nullptr && plain != nullptr);
    ASSERT_EQ(Sh(Round(b)), 0) << test::ReadFile(dir_.Join("writer.log"));
    // Before round b: batches 0 .. b - 2 hold their odd ids, batch b - 1 is whole.
    std::set<int64_t> want;
    for (int64_t i = 0; i < b * kBatch; ++i) {
      if (i / kBatch == b - 1 || i % 2 == 1) want.insert(i);
    }
    EXPECT_EQ(ExpectOneCommittedState(fixed.get()), want) << "round " << b;
    std::vector<std::string> report;
    EXPECT_FALSE(plain->Check(&report).ok()) << "round " << b;
  }
}

// Readers loop over fresh read-only opens while a writer process runs round after round: no
// read reports a problem, and every view is one committed state. However the two interleave.
TEST_F(ReadBesideWriterTest, ReadsInALoopBesideIngestsAndCompactionsSeeNoFalseCorruption) {
  std::string script = "true";
  for (int b = 1; b <= kRounds; ++b) script += " && " + Round(b);
  const pid_t writer = fork();
  ASSERT_GE(writer, 0);
  if (writer == 0) {
    const std::string log = dir_.Join("writer.log");
    const int fd = open(log.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int reads = 0;
  int status = 0;
  bool writing = true;
  // At least a few views whatever the pace; then until the writer is done.
  while (writing || reads < 3) {
    if (writing && waitpid(writer, &status, WNOHANG) == writer) writing = false;
    std::unique_ptr<DB> db = OpenReadOnly(true);
    ASSERT_TRUE(db != nullptr);
    ExpectOneCommittedState(db.get());
    ++reads;
    if (::testing::Test::HasFailure()) break;
  }
  if (writing) waitpid(writer, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << test::ReadFile(dir_.Join("writer.log"));
  // The last view, after the writer: every round landed.
  std::set<int64_t> live = ExpectOneCommittedState(OpenReadOnly(true).get());
  EXPECT_EQ(live.size(), static_cast<size_t>(kBatch + kRounds * kBatch / 2));
}

}  // namespace
}  // namespace sieve
