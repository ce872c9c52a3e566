// Copyright 2026 The Sieve Authors.
//
// The C++ side of python/bench/bench.py: the same ingest and searches through the C++ API, on
// the files bench.py wrote, so the Python package's overhead is measured as a ratio in one run.
//
//   py_bench_cpp ingest DATA_DIR DB        → {"rows", "build_rows_s", "ingest_s"}
//   py_bench_cpp search DATA_DIR DB REPS FILTER...   → {"FILTER": median ms, ...}
//
// DATA_DIR holds vectors.npy (float32 [n, dim]), queries.npy, cat.npy, cents.npy, color.npy
// (int64 [n]); the attributes are cat (int) = cat, price (float) = cents / 100 and color
// (string) = "color" + color, as bench.py builds them. Ingest times DB::Ingest alone (the rows
// of values are built before the clock starts).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "sieve/db.h"
#include "tools/io/npy.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void Check(const sieve::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "py_bench_cpp: %s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

int Ingest(const std::string& dir, const std::string& path) {
  sieve::io::NpyMatrix vectors;
  Check(sieve::io::ReadNpyMatrix(dir + "/vectors.npy", &vectors), "vectors.npy");
  std::vector<int64_t> cat, cents, color;
  Check(sieve::io::ReadNpyInt64Vector(dir + "/cat.npy", &cat), "cat.npy");
  Check(sieve::io::ReadNpyInt64Vector(dir + "/cents.npy", &cents), "cents.npy");
  Check(sieve::io::ReadNpyInt64Vector(dir + "/color.npy", &color), "color.npy");
  std::unique_ptr<sieve::DB> db;
  Check(sieve::DB::Open(sieve::Options(), path, &db), "open");
  sieve::CollectionSpec spec;
  spec.name = "bench";
  spec.dim = static_cast<uint32_t>(vectors.cols);
  spec.attributes = {{"cat", sieve::AttrType::kInt},
                     {"price", sieve::AttrType::kFloat},
                     {"color", sieve::AttrType::kString}};
  Check(db->CreateCollection(spec), "create");
  auto t0 = Clock::now();
  std::vector<std::vector<sieve::Value>> rows(vectors.rows);
  for (size_t r = 0; r < vectors.rows; ++r) {
    rows[r] = {sieve::Value(cat[r]), sieve::Value(static_cast<double>(cents[r]) / 100.0),
               sieve::Value("color" + std::to_string(color[r]))};
  }
  const double build_s = Seconds(t0);
  sieve::RowBatch batch;
  batch.num_rows = vectors.rows;
  batch.vectors = vectors.data.data();
  batch.attributes = rows.data();
  sieve::IngestResult result;
  t0 = Clock::now();
  Check(db->Ingest("bench", batch, sieve::IngestOptions(), &result), "ingest");
  const double ingest_s = Seconds(t0);
  std::printf("{\"rows\": %zu, \"build_rows_s\": %.4f, \"ingest_s\": %.4f}\n", result.ingested,
              build_s, ingest_s);
  return 0;
}

int Search(const std::string& dir, const std::string& path, int reps,
           const std::vector<std::string>& filters) {
  sieve::io::NpyMatrix queries;
  Check(sieve::io::ReadNpyMatrix(dir + "/queries.npy", &queries), "queries.npy");
  std::unique_ptr<sieve::DB> db;
  sieve::Options options;
  options.create_if_missing = false;
  Check(sieve::DB::Open(options, path, &db), "open");
  sieve::SearchRequest req;
  req.queries = queries.data.data();
  req.num_queries = queries.rows;
  req.k = 10;
  sieve::SearchResult result;
  Check(db->Search("bench", req, sieve::SearchOptions(), &result), "load");  // loads the image
  std::printf("{");
  for (size_t f = 0; f < filters.size(); ++f) {
    req.filter = filters[f];
    std::vector<double> ms;
    for (int i = 0; i < reps + 1; ++i) {
      auto t0 = Clock::now();
      Check(db->Search("bench", req, sieve::SearchOptions(), &result), "search");
      if (i > 0) ms.push_back(Seconds(t0) * 1e3);  // the first is a warm-up
    }
    std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
    std::printf("%s\"%s\": %.4f", f ? ", " : "", filters[f].c_str(), ms[ms.size() / 2]);
  }
  std::printf("}\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "ingest" && argc == 4) return Ingest(argv[2], argv[3]);
  if (mode == "search" && argc >= 6) {
    return Search(argv[2], argv[3], std::atoi(argv[4]), std::vector<std::string>(argv + 5, argv + argc));
  }
  std::fprintf(stderr,
               "usage: py_bench_cpp ingest DATA_DIR DB | search DATA_DIR DB REPS FILTER...\n");
  return 1;
}
