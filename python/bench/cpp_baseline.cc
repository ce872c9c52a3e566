// Copyright 2026 The Sieve Authors.
//
// The C++ side of python/bench/bench.py, loaded into the same Python process with ctypes: the
// same ingest and searches through the C++ API (its own DB, its own copy of the engine), timed
// in C++, so that bench.py can alternate a C++ call and a Python call and take both figures
// under the same conditions.
//
//   void*  bench_open(path)                 DB::Open (create_if_missing); nullptr on error
//   void   bench_close(db)
//   double bench_ingest_s(db, vectors, n, dim, cat, cents, color)
//          creates collection "bench" (cat int, price float = cents / 100, color string =
//          "color" + color) and times DB::Ingest alone (the rows of values are built before
//          the clock starts); -1 on error
//   double bench_search_ms(db, queries, nq, k, filter)   one DB::Search; -1 on error
// Errors are printed on stderr.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "sieve/db.h"

namespace {

using Clock = std::chrono::steady_clock;

bool Ok(const sieve::Status& s, const char* what) {
  if (!s.ok()) std::fprintf(stderr, "cpp_baseline: %s: %s\n", what, s.ToString().c_str());
  return s.ok();
}

}  // namespace

extern "C" {

void* bench_open(const char* path) {
  std::unique_ptr<sieve::DB> db;
  if (!Ok(sieve::DB::Open(sieve::Options(), path, &db), "open")) return nullptr;
  return db.release();
}

void bench_close(void* db) { delete static_cast<sieve::DB*>(db); }

double bench_ingest_s(void* handle, const float* vectors, size_t n, uint32_t dim,
                      const int64_t* cat, const int64_t* cents, const int64_t* color) {
  auto* db = static_cast<sieve::DB*>(handle);
  sieve::CollectionSpec spec;
  spec.name = "bench";
  spec.dim = dim;
  spec.attributes = {{"cat", sieve::AttrType::kInt},
                     {"price", sieve::AttrType::kFloat},
                     {"color", sieve::AttrType::kString}};
  if (!Ok(db->CreateCollection(spec), "create")) return -1;
  std::vector<std::vector<sieve::Value>> rows(n);
  for (size_t r = 0; r < n; ++r) {
    rows[r] = {sieve::Value(cat[r]), sieve::Value(static_cast<double>(cents[r]) / 100.0),
               sieve::Value("color" + std::to_string(color[r]))};
  }
  sieve::RowBatch batch;
  batch.num_rows = n;
  batch.dim = dim;
  batch.vectors = vectors;
  batch.attributes = rows.data();
  sieve::IngestResult result;
  const auto t0 = Clock::now();
  const bool ok = Ok(db->Ingest("bench", batch, sieve::IngestOptions(), &result), "ingest");
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  return ok ? s : -1;
}

double bench_search_ms(void* handle, const float* queries, size_t nq, int k,
                       const char* filter) {
  auto* db = static_cast<sieve::DB*>(handle);
  sieve::CollectionStats stats;  // the queries' dim, outside the timed call
  if (!Ok(db->GetStats("bench", &stats), "stats")) return -1;
  const auto t0 = Clock::now();
  sieve::SearchRequest req;
  req.queries = queries;
  req.num_queries = nq;
  req.dim = stats.spec.dim;
  req.k = k;
  req.filter = filter;
  sieve::SearchResult result;
  const bool ok = Ok(db->Search("bench", req, sieve::SearchOptions(), &result), "search");
  result = sieve::SearchResult();
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  return ok ? ms : -1;
}

}  // extern "C"
