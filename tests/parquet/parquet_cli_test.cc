// Copyright 2026 The Sieve Authors.
//
// `sieve ingest` from Parquet and `sieve export --format parquet`, end to end through the real
// binary: a round trip that searches the same as the rows it came from, inputs mixed with the
// other formats, and refusals that name the column and leave the store unchanged even when
// the bad row comes after many good batches.

#include <algorithm>
#include <fstream>
#include <iomanip>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/e2e/cli_run.h"
#include "tests/parquet/parquet_files.h"
#include "tests/testutil.h"
#include "tools/io/npy.h"

namespace sieve {
namespace {

using json = nlohmann::json;
using test::Arr;
using test::WriteParquet;

constexpr int kDim = 8;
constexpr size_t kRows = 1000;

class ParquetCliTest : public ::testing::Test {
 protected:
  test::CliRun Run(const std::vector<std::string>& args) { return test::RunCli(args, dir_); }

  void Create(const std::string& db) {
    auto r =
        Run({"create", db, "--collection", "c", "--dim", std::to_string(kDim), "--attr",
             "color:string", "--attr", "price:float", "--attr", "n:int", "--attr", "tags:tags"});
    ASSERT_EQ(r.code, 0) << r.err;
  }

  uint64_t Count(const std::string& db, const std::string& filter = "") {
    std::vector<std::string> args = {"count", db, "--collection", "c"};
    if (!filter.empty()) args.insert(args.end(), {"--filter", filter});
    auto r = Run(args);
    EXPECT_EQ(r.code, 0) << r.err;
    return r.code == 0 ? json::parse(r.out)["count"].get<uint64_t>() : ~uint64_t{0};
  }

  // kRows rows: ids 3i, colors cycling red/blue/null, price i/4 (null every 7th), n i % 5,
  // tags {"t<i%3>"}; vectors from seed 7, as fixed_size_list<float>, or as list<float> with
  // row `bad_row`'s vector null when bad_row >= 0 (Arrow writes no null fixed_size_list).
  void WriteRows(const std::string& path, int64_t bad_row = -1) {
    vectors_ = test::RandomVectors(kRows, kDim, 7);
    std::ostringstream ids, colors, prices, ns, tags, emb;
    emb << std::setprecision(9);
    for (size_t i = 0; i < kRows; ++i) {
      const char* sep = i ? "," : "[";
      ids << sep << 3 * i;
      colors << sep << (i % 3 == 0 ? "\"red\"" : i % 3 == 1 ? "\"blue\"" : "null");
      prices << sep;
      if (i % 7 == 0) {
        prices << "null";
      } else {
        prices << i / 4.0;
      }
      ns << sep << i % 5;
      tags << sep << "[\"t" << i % 3 << "\"]";
      emb << sep;
      if (static_cast<int64_t>(i) == bad_row) {
        emb << "null";
        continue;
      }
      emb << "[";
      for (int d = 0; d < kDim; ++d) emb << (d ? "," : "") << vectors_[i * kDim + d];
      emb << "]";
    }
    for (auto* s : {&ids, &colors, &prices, &ns, &tags, &emb}) *s << "]";
    WriteParquet(path,
                 {{"id", Arr(arrow::int64(), ids.str())},
                  {"embedding", Arr(bad_row >= 0 ? arrow::list(arrow::float32())
                                                 : arrow::fixed_size_list(arrow::float32(), kDim),
                                    emb.str())},
                  {"color", Arr(arrow::utf8(), colors.str())},
                  {"price", Arr(arrow::float64(), prices.str())},
                  {"n", Arr(arrow::int32(), ns.str())},
                  {"tags", Arr(arrow::list(arrow::utf8()), tags.str())}},
                 /*group_rows=*/128, parquet::Compression::SNAPPY);
  }

  test::ScratchDir dir_;
  std::vector<float> vectors_;
};

TEST_F(ParquetCliTest, IngestExportIngestRoundTrip) {
  const std::string file = dir_.Join("rows.parquet"), db = dir_.Join("db");
  WriteRows(file);
  Create(db);
  // Batches of 300 rows over row groups of 128: chunks and row groups do not line up.
  auto r = Run({"ingest", db, "--collection", "c", "--vectors", file + ":embedding", "--attributes",
                file, "--id-field", "id", "--batch-rows", "300"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["ingested"], kRows);
  EXPECT_NE(r.err.find("1000 of 1000 rows committed"), std::string::npos) << r.err;
  EXPECT_EQ(Count(db, "color = 'red'"), (kRows + 2) / 3);
  EXPECT_EQ(Count(db, "price IS NULL"), (kRows + 6) / 7);
  EXPECT_EQ(Count(db, "tags CONTAINS 't1' AND n = 4"), 67u);

  r = Run({"get", db, "--collection", "c", "--id", "30", "--include", "*,vector"});
  ASSERT_EQ(r.code, 0) << r.err;
  json row = json::parse(r.out);
  EXPECT_EQ(row["attributes"]["color"], "blue");  // row 10
  EXPECT_EQ(row["attributes"]["price"], 2.5);
  EXPECT_EQ(row["attributes"]["n"], 0);
  EXPECT_EQ(row["vector"][3].get<float>(), vectors_[10 * kDim + 3]);

  const std::string out = dir_.Join("export.parquet"), db2 = dir_.Join("db2");
  r = Run({"export", db, "--collection", "c", "--format", "parquet", "--output", out, "--page-rows",
           "333"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("{\"exported\": 1000}"), std::string::npos) << r.err;
  Create(db2);
  r = Run({"ingest", db2, "--collection", "c", "--vectors", out + ":vector", "--attributes", out,
           "--id-field", "id"});
  ASSERT_EQ(r.code, 0) << r.err;
  // Both stores hold the same rows: their JSON Lines exports, vectors included, are equal.
  std::string exports[2];
  for (int i = 0; i < 2; ++i) {
    r = Run({"export", i ? db2 : db, "--collection", "c", "--include", "*,vector"});
    ASSERT_EQ(r.code, 0) << r.err;
    exports[i] = r.out;
  }
  EXPECT_EQ(std::count(exports[0].begin(), exports[0].end(), '\n'), 1000);
  EXPECT_EQ(exports[0], exports[1]);

  // And they search the same: the nearest neighbours of a stored vector.
  ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("q.npy"), vectors_.data() + 5 * kDim, 1, kDim).ok());
  for (int i = 0; i < 2; ++i) {
    r = Run({"query", i ? db2 : db, "--collection", "c", "--queries", dir_.Join("q.npy"), "--k",
             "3", "--filter", "color = 'blue' OR color IS NULL"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(json::parse(r.out)["ids"][0], 15) << r.out;  // row 5 (null color) itself
  }
}

TEST_F(ParquetCliTest, ParquetBesideTheOtherFormats) {
  const std::string file = dir_.Join("rows.parquet"), db = dir_.Join("db");
  WriteRows(file);
  Create(db);
  // Vectors from .npy, attributes and ids from the Parquet file.
  ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("v.npy"), vectors_.data(), kRows, kDim).ok());
  auto r = Run({"ingest", db, "--collection", "c", "--vectors", dir_.Join("v.npy"), "--attributes",
                file + ":color,n", "--id-field", "id", "--batch-rows", "256"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Count(db, "n = 2 AND color = 'blue'"), 67u);
  EXPECT_EQ(Count(db, "price IS NULL"), kRows);  // not taken
  // Vectors from the Parquet file, attributes from JSON Lines, ids assigned.
  const std::string db2 = dir_.Join("db2");
  Create(db2);
  {
    std::ofstream attrs(dir_.Join("a.jsonl"));
    for (size_t i = 0; i < kRows; ++i) attrs << "{\"n\": " << i << "}\n";
  }
  r = Run({"ingest", db2, "--collection", "c", "--vectors", file + ":embedding", "--attributes",
           dir_.Join("a.jsonl"), "--batch-rows", "100"});
  ASSERT_EQ(r.code, 0) << r.err;
  r = Run({"get", db2, "--collection", "c", "--id", "999"});
  EXPECT_EQ(json::parse(r.out)["attributes"]["n"], 999) << r.out;
  // A second ingest without ids into a collection with rows is refused, as for .npy.
  r = Run({"ingest", db2, "--collection", "c", "--vectors", file + ":embedding"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("already has 1000 live rows"), std::string::npos) << r.err;
}

TEST_F(ParquetCliTest, BadColumnsAreNamedAndNothingIsWritten) {
  const std::string file = dir_.Join("rows.parquet"), db = dir_.Join("db");
  WriteRows(file);
  Create(db);
  struct Case {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"--vectors", file + ":emb"},
       "no column 'emb' (the vectors); the file's columns: id, "
       "embedding, color, price, n, tags"},
      {{"--vectors", file}, "name the column that holds the vectors, as FILE.parquet:COLUMN"},
      {{"--vectors", file + ":color"}, "column 'color' has Arrow type string; a vector column"},
      {{"--vectors", file + ":embedding", "--attributes", file},
       "column 'id' is not an attribute of the collection"},
      {{"--vectors", file + ":embedding", "--attributes", file + ":color,nope"},
       "column 'nope' is not an attribute of the collection"},
      {{"--vectors", file + ":embedding", "--attributes", file, "--id-field", "color"},
       "column 'color' has Arrow type string; ids are an integer column"},
      {{"--vectors", file + ":embedding", "--attributes", file + ":price", "--id-field", "idx"},
       "no column 'idx' (the ids)"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"ingest", db, "--collection", "c"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = Run(args);
    EXPECT_EQ(r.code, 1) << c.message;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  // A column of the wrong type for its attribute.
  WriteParquet(dir_.Join("typed.parquet"),
               {{"v", test::FloatVectors(std::vector<float>(2 * kDim, 0.5f), kDim)},
                {"price", Arr(arrow::utf8(), R"(["1.5", "2"])")}});
  auto r = Run({"ingest", db, "--collection", "c", "--vectors", dir_.Join("typed.parquet") + ":v",
                "--attributes", dir_.Join("typed.parquet")});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("column 'price' has Arrow type string, which attribute 'price' (float) "
                       "cannot take"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(Count(db), 0u);
}

TEST_F(ParquetCliTest, ANullVectorLateInTheFileLeavesTheStoreUnchanged) {
  const std::string file = dir_.Join("rows.parquet"), db = dir_.Join("db");
  WriteRows(file, /*bad_row=*/917);
  Create(db);
  auto r = Run({"ingest", db, "--collection", "c", "--vectors", file + ":embedding", "--attributes",
                file, "--id-field", "id", "--batch-rows", "100"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("rows.parquet: column 'embedding', row 917: the vector is null; every row "
                       "needs a vector"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(Count(db), 0u);  // nine good batches came first; none was committed
}

TEST_F(ParquetCliTest, RepeatedIdsAcrossBatchesAndEngineErrorsNameFileRows) {
  const std::string file = dir_.Join("dup.parquet"), db = dir_.Join("db");
  Create(db);
  std::vector<float> v = test::RandomVectors(300, kDim, 3);
  std::ostringstream ids;
  for (int i = 0; i < 300; ++i) ids << (i ? "," : "[") << (i == 250 ? 20 : i);
  ids << "]";
  WriteParquet(file,
               {{"id", Arr(arrow::int64(), ids.str())}, {"embedding", test::FloatVectors(v, kDim)}},
               64);
  auto r = Run({"ingest", db, "--collection", "c", "--vectors", file + ":embedding", "--attributes",
                file + ":", "--id-field", "id", "--batch-rows", "100"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("no column named after the ':'"), std::string::npos) << r.err;
  r = Run({"ingest", db, "--collection", "c", "--vectors", file + ":embedding", "--attributes",
           file + ":id", "--id-field", "id", "--batch-rows", "100"});
  EXPECT_EQ(r.code, 1);
  // The id column is not an attribute; with only the id named there is nothing else to take.
  EXPECT_NE(r.err.find("column 'id' is not an attribute"), std::string::npos) << r.err;

  std::vector<int64_t> npy_ids(300);
  for (int i = 0; i < 300; ++i) npy_ids[i] = i == 250 ? 20 : i;
  ASSERT_TRUE(io::WriteNpyInt64(dir_.Join("ids.npy"), npy_ids.data(), npy_ids.size()).ok());
  r = Run({"ingest", db, "--collection", "c", "--vectors", file + ":embedding", "--ids",
           dir_.Join("ids.npy"), "--batch-rows", "100"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("ids.npy: row 250: id 20 repeats the id of row 20"), std::string::npos)
      << r.err;
  EXPECT_EQ(Count(db), 0u);

  // An engine check (an id already live) names the file's row, not the batch's.
  for (int i = 0; i < 300; ++i) npy_ids[i] = 1000 + i;
  npy_ids[0] = 0;
  npy_ids[1] = 1;
  ASSERT_TRUE(io::WriteNpyInt64(dir_.Join("ids2.npy"), npy_ids.data(), 2).ok());
  ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("two.npy"), v.data(), 2, kDim).ok());
  r = Run({"ingest", db, "--collection", "c", "--vectors", dir_.Join("two.npy"), "--ids",
           dir_.Join("ids2.npy")});
  ASSERT_EQ(r.code, 0) << r.err;
  npy_ids[0] = 5000;
  npy_ids[1] = 5001;
  npy_ids[150] = 1;
  ASSERT_TRUE(io::WriteNpyInt64(dir_.Join("ids3.npy"), npy_ids.data(), npy_ids.size()).ok());
  r = Run({"ingest", db, "--collection", "c", "--vectors", file + ":embedding", "--ids",
           dir_.Join("ids3.npy"), "--batch-rows", "100"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("row 150: id 1 already exists in collection 'c'"), std::string::npos)
      << r.err;
  EXPECT_EQ(Count(db), 2u);
}

TEST_F(ParquetCliTest, ExportRefusals) {
  const std::string db = dir_.Join("db");
  Create(db);
  auto r = Run({"export", db, "--collection", "c", "--format", "parquet"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("--format parquet writes a file: give --output FILE"), std::string::npos);
  r = Run({"export", db, "--collection", "c", "--format", "parquet", "--output",
           dir_.Join("x.parquet"), "--vector-column", "color"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("the vector column 'color' has the name of another column"),
            std::string::npos)
      << r.err;
  r = Run({"export", db, "--collection", "c", "--format", "jsonl", "--vector-column", "v"});
  EXPECT_EQ(r.code, 1);
  r = Run({"export", db, "--collection", "c", "--format", "parquet", "--output",
           dir_.Join("no/such/dir/x.parquet")});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("cannot be created"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sieve
