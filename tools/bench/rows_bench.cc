// Copyright 2026 The Sieve Authors.
//
// rows_bench: the figures of rows in and rows out (issue 22), through the C++ API on this
// machine's CPU. One run builds a store of --rows rows × --dim (ids 0..rows-1, an int, a float
// and a string attribute) and reports, as medians of --reps:
//   get      Get of 1,000 random ids with every attribute (the collection loaded)
//   upsert   Upsert of --upsert-rows rows, half replacing live rows, half new (rows/s)
//   include  100 queries at k = 10 and k = 1,000: Search with include "*" beside without
//   export   Scan of every row in pages of 10,000 with every attribute, written as JSONL lines
//            into memory (rows/s)
//   compact  half the rows deleted, Compact: the store's bytes after it beside those of a store
//            that holds only the live half
// Usage: rows_bench --work DIR [--rows 1000000] [--dim 128] [--upsert-rows 100000] [--reps 5]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "sieve/db.h"
#include "tools/bench/bench_flags.h"
#include "tools/io/rows_json.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void Check(const sieve::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "rows_bench: %s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

std::vector<float> Vectors(size_t n, size_t dim, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> g;
  std::vector<float> v(n * dim);
  for (float& x : v) x = g(rng);
  return v;
}

std::vector<std::vector<sieve::Value>> Attributes(const std::vector<int64_t>& ids) {
  std::vector<std::vector<sieve::Value>> a(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    a[i] = {sieve::Value(ids[i] % 100), sieve::Value(static_cast<double>(ids[i] % 1000) / 10),
            sieve::Value(std::string(ids[i] % 2 ? "red" : "blue"))};
  }
  return a;
}

sieve::CollectionSpec Spec(uint32_t dim) {
  sieve::CollectionSpec spec;
  spec.name = "c";
  spec.dim = dim;
  spec.attributes = {{"cat", sieve::AttrType::kInt},
                     {"price", sieve::AttrType::kFloat},
                     {"color", sieve::AttrType::kString}};
  return spec;
}

void Ingest(sieve::DB* db, size_t first, size_t n, uint32_t dim, uint64_t seed, bool upsert,
            double* seconds) {
  std::vector<int64_t> ids(n);
  std::iota(ids.begin(), ids.end(), static_cast<int64_t>(first));
  auto v = Vectors(n, dim, seed);
  auto attrs = Attributes(ids);
  sieve::RowBatch b;
  b.num_rows = n;
  b.dim = dim;
  b.vectors = v.data();
  b.ids = ids.data();
  b.attributes = attrs.data();
  sieve::IngestResult r;
  auto t0 = Clock::now();
  Check(upsert ? db->Upsert("c", b, sieve::IngestOptions(), &r)
               : db->Ingest("c", b, sieve::IngestOptions(), &r),
        upsert ? "upsert" : "ingest");
  *seconds = Seconds(t0);
}

}  // namespace

int main(int argc, char** argv) {
  sieve::bench::BenchFlags f(
      "rows_bench",
      "usage: rows_bench --work DIR [--rows N] [--dim D] [--upsert-rows N] [--reps R]\n",
      {"work", "rows", "dim", "upsert-rows", "reps"});
  f.Parse(argc, argv);
  const std::string work = f.Str("work", "");
  if (work.empty()) f.Die("--work DIR is required");
  const size_t rows = f.Uint("rows", 1000000), up = f.Uint("upsert-rows", 100000);
  const uint32_t dim = static_cast<uint32_t>(f.Uint("dim", 128));
  const int reps = static_cast<int>(f.Uint("reps", 5));
  std::filesystem::remove_all(work);
  std::filesystem::create_directories(work);

  std::unique_ptr<sieve::DB> db;
  Check(sieve::DB::Open(sieve::Options(), work + "/db", &db), "open");
  Check(db->CreateCollection(Spec(dim)), "create");
  double s = 0;
  Ingest(db.get(), 0, rows, dim, 1, false, &s);
  std::printf("# rows_bench: %zu rows x %u, upsert %zu rows, %d reps (medians)\n\n", rows, dim,
              up, reps);
  std::printf("ingest %zu rows: %.2f s (%.0f rows/s)\n", rows, s, rows / s);

  // get: 1,000 random ids, the collection loaded by the first call (not timed).
  std::mt19937_64 rng(3);
  sieve::Include all;
  all.all_attributes = true;
  std::vector<double> get_ms;
  for (int r = 0; r <= reps; ++r) {
    std::vector<int64_t> ids(1000);
    for (auto& id : ids) id = static_cast<int64_t>(rng() % rows);
    sieve::GetResult g;
    auto t0 = Clock::now();
    Check(db->Get("c", ids.data(), ids.size(), all, &g), "get");
    if (r > 0) get_ms.push_back(Seconds(t0) * 1e3);
  }
  std::printf("get 1000 random ids, every attribute: %.3f ms\n", Median(get_ms));

  // upsert: half replaces live rows, half is new; each rep on fresh ids past the last.
  std::vector<double> up_rate;
  size_t next_first = rows - up / 2;
  for (int r = 0; r < reps; ++r) {
    Ingest(db.get(), next_first, up, dim, 10 + r, true, &s);
    up_rate.push_back(up / s);
    next_first += up / 2;
  }
  std::printf("upsert %zu rows (half replacing): %.0f rows/s\n", up, Median(up_rate));

  // include: the same search with and without every attribute.
  auto q = Vectors(100, dim, 99);
  for (int k : {10, 1000}) {
    std::vector<double> bare, with;
    for (int r = 0; r <= reps; ++r) {
      for (bool inc : {false, true}) {
        sieve::SearchRequest req;
        req.queries = q.data();
        req.num_queries = 100;
        req.dim = dim;
        req.k = k;
        if (inc) req.include = all;
        sieve::SearchOptions o;
        o.device = sieve::Device::kCpu;
        sieve::SearchResult res;
        auto t0 = Clock::now();
        Check(db->Search("c", req, o, &res), "search");
        if (r > 0) (inc ? with : bare).push_back(Seconds(t0) * 1e3);
      }
    }
    std::printf("search 100 queries k=%d: %.1f ms bare, %.1f ms with include '*' (+%.2f %%)\n", k,
                Median(bare), Median(with), 100 * (Median(with) / Median(bare) - 1));
  }

  // export: every live row as JSONL, page by page.
  std::vector<double> export_rate;
  uint64_t live = 0;
  Check(db->Count("c", "", &live), "count");
  for (int r = 0; r < std::max(1, reps / 2); ++r) {
    sieve::ScanRequest req;
    req.include = all;
    req.limit = 10000;
    size_t n = 0;
    std::string out;
    auto t0 = Clock::now();
    for (;;) {
      sieve::ScanResult page;
      Check(db->Scan("c", req, &page), "scan");
      for (const sieve::Row& row : page.rows) {
        out += "{";
        sieve::io::AppendRowJson(row, page.attribute_names, false, &out);
        out += "}\n";
      }
      n += page.rows.size();
      out.clear();
      if (page.done) break;
      req.has_after = true;
      req.after = page.next;
    }
    export_rate.push_back(n / Seconds(t0));
    if (n != live) Check(sieve::Status::Internal("export saw " + std::to_string(n)), "export");
  }
  std::printf("export %llu rows as JSONL (pages of 10000): %.0f rows/s\n",
              static_cast<unsigned long long>(live), Median(export_rate));

  // compact: delete half of the rows, compact; a store with only the live half beside it.
  uint64_t deleted = 0;
  Check(db->DeleteByFilter("c", "id < " + std::to_string(live / 2), &deleted), "delete");
  uint64_t remaining = 0;
  Check(db->Count("c", "", &remaining), "count");
  sieve::CompactResult cr;
  auto t0 = Clock::now();
  Check(db->Compact("c", &cr), "compact");
  const double compact_s = Seconds(t0);
  std::unique_ptr<sieve::DB> half;
  Check(sieve::DB::Open(sieve::Options(), work + "/half", &half), "open half");
  Check(half->CreateCollection(Spec(dim)), "create half");
  Ingest(half.get(), 0, remaining, dim, 5, false, &s);
  sieve::CompactResult hr;
  Check(half->Compact("c", &hr), "flush half");  // nothing to rewrite; flushes and measures
  std::printf(
      "compact after deleting %llu of %llu rows: %.1f s; %.1f MB before, %.1f MB after; a store "
      "of the %llu live rows alone: %.1f MB (after/alone = %.3f)\n",
      static_cast<unsigned long long>(deleted),
      static_cast<unsigned long long>(deleted + remaining), compact_s, cr.bytes_before / 1e6,
      cr.bytes_after / 1e6, static_cast<unsigned long long>(remaining), hr.bytes_after / 1e6,
      static_cast<double>(cr.bytes_after) / hr.bytes_after);
  return 0;
}
