// Copyright 2026 The Sieve Authors.
//
// What a newcomer hit in the CLI's files, each held: an npy export ingests back as it is;
// CSV text values are trimmed as headers and numbers are (`color = 'red'` finds " red"), quoted
// ones kept; blank lines at the end of a JSON Lines file hold no row.

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/e2e/cli_run.h"
#include "tests/testutil.h"
#include "tools/io/npy.h"

namespace sieve {
namespace {

using json = nlohmann::json;

using Result = test::CliRun;

class NewcomerTest : public ::testing::Test {
 protected:
  Result Run(const std::vector<std::string>& args) { return test::RunCli(args, dir_); }

  void Create(const std::string& name) {
    Result r = Run({"create", db_, "--collection", name, "--dim", "4", "--attr", "cat:int",
                    "--attr", "color:string", "--attr", "labels:tags"});
    ASSERT_EQ(r.code, 0) << r.err;
  }

  void WriteVectors(size_t n) {
    const std::vector<float> v = test::RandomVectors(n, 4, 5);
    ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("v.npy"), v.data(), n, 4).ok());
  }

  uint64_t Count(const std::string& collection, const std::string& filter) {
    Result r = Run({"count", db_, "--collection", collection, "--filter", filter});
    EXPECT_EQ(r.code, 0) << r.err;
    return r.code == 0 ? json::parse(r.out)["count"].get<uint64_t>() : 0;
  }

  test::ScratchDir dir_;
  const std::string db_ = dir_.Join("db");
};

TEST_F(NewcomerTest, AnNpyExportIngestsBack) {
  Create("a");
  WriteVectors(50);
  {
    std::ofstream f(dir_.Join("a.jsonl"));
    for (int i = 0; i < 50; ++i) {
      f << json{{"cat", i % 4}, {"color", i % 3 ? json("c" + std::to_string(i)) : json()},
                {"labels", {"x", std::to_string(i)}}}
                  .dump()
        << "\n";
    }
  }
  Result r = Run({"ingest", db_, "--collection", "a", "--vectors", dir_.Join("v.npy"),
                  "--attributes", dir_.Join("a.jsonl")});
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(Run({"delete", db_, "--collection", "a", "--filter", "cat = 3"}).code, 0);
  r = Run({"export", db_, "--collection", "a", "--format", "npy", "--output", dir_.Join("x")});
  ASSERT_EQ(r.code, 0) << r.err;
  Create("b");
  r = Run({"ingest", db_, "--collection", "b", "--vectors", dir_.Join("x.vectors.npy"), "--ids",
           dir_.Join("x.ids.npy"), "--attributes", dir_.Join("x.attributes.jsonl")});
  ASSERT_EQ(r.code, 0) << r.err;
  // Both collections hold the same rows: ids, vectors and attributes.
  Result a = Run({"export", db_, "--collection", "a", "--include", "*,vector"});
  Result b = Run({"export", db_, "--collection", "b", "--include", "*,vector"});
  ASSERT_EQ(a.code, 0);
  ASSERT_EQ(b.code, 0);
  EXPECT_EQ(std::count(a.out.begin(), a.out.end(), '\n'), 50 - 12);
  EXPECT_EQ(a.out, b.out);
}

TEST_F(NewcomerTest, CsvTextIsTrimmedUnlessQuoted) {
  Create("c");
  WriteVectors(4);
  std::ofstream(dir_.Join("a.csv")) << "cat, color ,labels\n"
                                       "1, red, a | b\n"
                                       "2,red  ,\n"
                                       "3,\"  red \",\" a | b\"\n"
                                       "4,  ,  \n";
  Result r = Run({"ingest", db_, "--collection", "c", "--vectors", dir_.Join("v.npy"),
                  "--attributes", dir_.Join("a.csv")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Count("c", "color = 'red'"), 2u);
  EXPECT_EQ(Count("c", "color = '  red '"), 1u);
  EXPECT_EQ(Count("c", "color IS NULL"), 1u);
  EXPECT_EQ(Count("c", "labels CONTAINS 'a' AND labels CONTAINS 'b'"), 1u);
  EXPECT_EQ(Count("c", "labels CONTAINS ' a '"), 1u);
  EXPECT_EQ(Count("c", "labels IS NULL"), 2u);
}

TEST_F(NewcomerTest, BlankLinesAtTheEndOfJsonLinesHoldNoRow) {
  Create("j");
  WriteVectors(2);
  std::ofstream(dir_.Join("a.jsonl")) << "{\"cat\": 1}\n{\"cat\": 2}\n\n  \r\n\n";
  Result r = Run({"ingest", db_, "--collection", "j", "--vectors", dir_.Join("v.npy"),
                  "--attributes", dir_.Join("a.jsonl")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Count("j", "cat >= 1"), 2u);
  // A blank line before a row still is one: the rows after it would not be the vectors' rows.
  std::ofstream(dir_.Join("b.jsonl")) << "{\"cat\": 1}\n\n{\"cat\": 2}\n";
  r = Run({"ingest", db_, "--collection", "j", "--vectors", dir_.Join("v.npy"), "--attributes",
           dir_.Join("b.jsonl"), "--auto-ids"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("line 2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("blank line"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sieve
