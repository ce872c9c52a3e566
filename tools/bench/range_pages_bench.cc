// Copyright 2026 The Sieve Authors.
//
// range_pages_bench: range search and deep pages (issue 37 items 2-3) through the C++ API, beside
// the naive way (one top-k with k large, then post-processing) and, for range search, FAISS's
// CPU range search (IndexFlatL2::range_search, when the build found FAISS) over the same rows.
// The C++ twin of range_pages_bench.py, for machines without the Python module.
//
// One collection of --rows Gaussian rows × --dim (l2, one shard, ids 0 .. rows - 1), ingested
// through DB::Ingest in calls of --ingest-rows rows; one query per search, --queries queries,
// each case timed as the median of --reps runs after one untimed warm-up (steady clock):
//   range  n in --passing: the radius lies midway between the query's n-th and (n+1)-th float64
//          distances, so exactly n rows pass; limit = --limit. naive: a top-k with k = n (the
//          count a user would have to guess right), keeping d <= r. FAISS: range_search with the
//          same radius (both are squared l2; widened by 1e-6 relative, as FAISS compares float32
//          distances and keeps d < radius).
//   page   p in --pages: rows (p-1)·k .. p·k - 1 by offset, and by the cursor of page p - 1
//          (Neighbors::next); naive: a top-k with k = p·k, sliced.
// Every answer is checked, not only timed: Sieve's against a float64 brute force over the same
// rows (range: the same set of ids; pages: the same ids in order), the naive way's and FAISS's
// against Sieve's (FAISS's float32 slack — rows past r by less than its rounding — is counted
// apart). Mismatches are counted and the first few printed on stderr.
// Output: one JSON line per case on stdout as it finishes, then a markdown table; progress and
// the ingest and load times on stderr.
// Usage: range_pages_bench --work DIR [--rows 200000] [--dim 64] [--queries 3] [--reps 3]
//          [--device auto|cpu|gpu] [--passing 10,10000,100000] [--pages 1,10,100] [--k 100]
//          [--limit 1000000] [--ingest-rows 1000000] [--batch-rows 0] [--no-faiss]

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "sieve/db.h"
#include "tools/bench/bench_flags.h"

#ifdef SIEVE_BENCH_FAISS
#include <faiss/IndexFlat.h>
#include <faiss/impl/AuxIndexStructures.h>
#include <omp.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void Check(const sieve::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "range_pages_bench: %s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

unsigned Threads() { return std::max(1u, std::thread::hardware_concurrency()); }

// Runs fn(begin, end) over [0, n) split among the machine's cores.
template <typename Fn>
void ParallelFor(size_t n, Fn fn) {
  const size_t t = std::min<size_t>(Threads(), std::max<size_t>(1, n));
  std::vector<std::thread> pool;
  for (size_t i = 0; i < t; ++i) {
    pool.emplace_back([&fn, i, t, n] { fn(n * i / t, n * (i + 1) / t); });
  }
  for (auto& th : pool) th.join();
}

// Gaussian rows, seeded per block of kBlock rows so that the data does not depend on the number
// of threads that drew it.
constexpr size_t kBlock = 65536;
std::vector<float> Gaussian(size_t n, size_t dim, uint64_t seed) {
  std::vector<float> v(n * dim);
  ParallelFor((n + kBlock - 1) / kBlock, [&](size_t b0, size_t b1) {
    for (size_t b = b0; b < b1; ++b) {
      std::mt19937_64 rng(seed * 1000003 + b);
      std::normal_distribution<float> g;
      const size_t end = std::min(n, (b + 1) * kBlock) * dim;
      for (size_t i = b * kBlock * dim; i < end; ++i) v[i] = g(rng);
    }
  });
  return v;
}

// Squared l2 distances of every row to q, in float64.
void Distances(const std::vector<float>& x, size_t rows, size_t dim, const float* q,
               std::vector<double>* d) {
  d->resize(rows);
  ParallelFor(rows, [&](size_t r0, size_t r1) {
    for (size_t r = r0; r < r1; ++r) {
      const float* row = x.data() + r * dim;
      double s = 0;
      for (size_t j = 0; j < dim; ++j) {
        const double t = static_cast<double>(row[j]) - static_cast<double>(q[j]);
        s += t * t;
      }
      (*d)[r] = s;
    }
  });
}

// A search that fails ends its query's part of the case (printed and counted), not the run, so
// that one shape failing in a device call leaves the other shapes' figures.
size_t g_failures = 0;
bool Ok(const sieve::Status& s, const std::string& what) {
  if (s.ok()) return true;
  if (g_failures++ < 20) {
    std::fprintf(stderr, "range_pages_bench: FAILED %s: %s\n", what.c_str(), s.ToString().c_str());
  }
  return false;
}

// Times fn (which returns false when it failed): one untimed warm-up, then reps runs, their
// times appended to *ms. False when a run failed.
template <typename Fn>
bool Time(int reps, Fn fn, std::vector<double>* ms) {
  if (!fn()) return false;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    if (!fn()) return false;
    ms->push_back(Ms(t0));
  }
  return true;
}

// Ids in a but not in b (both sorted).
std::vector<int64_t> Minus(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

std::vector<int64_t> Sorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::string Join(const std::vector<double>& v) {
  std::string s;
  for (double x : v) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%s%.3f", s.empty() ? "" : ",", x);
    s += buf;
  }
  return "[" + s + "]";
}

std::string Join(const std::vector<uint64_t>& v) {
  std::string s;
  for (uint64_t x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return "[" + s + "]";
}

// Reports up to a few mismatching ids of one comparison on stderr; returns how many there are.
size_t Report(const char* what, const std::string& where, const std::vector<int64_t>& ids,
              const std::vector<double>& dist, double r) {
  for (size_t i = 0; i < ids.size() && i < 5; ++i) {
    const bool known = ids[i] >= 0 && static_cast<size_t>(ids[i]) < dist.size();
    std::fprintf(stderr, "range_pages_bench: MISMATCH %s (%s): id %lld, float64 distance %.17g, "
                 "radius %.17g\n", what, where.c_str(), static_cast<long long>(ids[i]),
                 known ? dist[static_cast<size_t>(ids[i])] : NAN, r);
  }
  return ids.size();
}

struct Row {
  std::string label;
  std::string n;
  double sieve_ms = 0;
  std::string sieve_extra;
  size_t rounds = 0;
  double naive_ms = 0;
  std::string faiss_ms = "-";
  std::string checks;
};

}  // namespace

int main(int argc, char** argv) {
  sieve::bench::BenchFlags f(
      "range_pages_bench",
      "usage: range_pages_bench --work DIR [--rows N] [--dim D] [--queries Q] [--reps R]\n"
      "         [--device auto|cpu|gpu] [--passing 10,10000,100000] [--pages 1,10,100]\n"
      "         [--k 100] [--limit 1000000] [--ingest-rows 1000000] [--batch-rows 0]\n"
      "         [--no-faiss]\n",
      {"work", "rows", "dim", "queries", "reps", "device", "passing", "pages", "k", "limit",
       "ingest-rows", "batch-rows"},
      {"no-faiss"});
  f.Parse(argc, argv);
  const std::string work = f.Str("work", "");
  if (work.empty()) f.Die("--work DIR is required");
  const size_t rows = f.Uint("rows", 200000);
  const size_t dim = f.Uint("dim", 64);
  const size_t nq = f.Uint("queries", 3);
  const int reps = static_cast<int>(f.Uint("reps", 3));
  const int k = static_cast<int>(f.Uint("k", 100));
  const int limit = static_cast<int>(f.Uint("limit", sieve::kMaxSearchK));
  const size_t ingest_rows = std::max<size_t>(1, f.Uint("ingest-rows", 1000000));
  sieve::IngestOptions ingest_options;
  ingest_options.batch_rows = f.Uint("batch-rows", 0);
  std::vector<size_t> passing, pages;
  for (const std::string& s : f.List("passing", {"10", "10000", "100000"})) {
    passing.push_back(std::min<size_t>({std::stoull(s), rows, sieve::kMaxSearchK}));
  }
  for (const std::string& s : f.List("pages", {"1", "10", "100"})) pages.push_back(std::stoull(s));
  if (rows == 0 || dim == 0 || nq == 0 || reps < 1 || k < 1) {
    f.Die("--rows, --dim, --queries, --reps and --k must be at least 1");
  }
  for (size_t p : pages) {
    if (p < 1 || p * k > static_cast<size_t>(sieve::kMaxSearchK)) {
      f.Die("--pages: each page p needs 1 <= p and p * k <= " +
            std::to_string(sieve::kMaxSearchK));
    }
  }
  sieve::SearchOptions options;
  Check(sieve::ParseDevice(f.Str("device", "auto"), &options.device), "--device");
  bool use_faiss = !f.Bool("no-faiss");
#ifndef SIEVE_BENCH_FAISS
  if (use_faiss) std::fprintf(stderr, "range_pages_bench: built without FAISS: no FAISS column\n");
  use_faiss = false;
#endif

  auto t0 = Clock::now();
  const std::vector<float> x = Gaussian(rows, dim, 1);
  const std::vector<float> queries = Gaussian(nq, dim, 2);
  std::fprintf(stderr, "range_pages_bench: generated %zu x %zu in %.0f ms (%u threads)\n", rows,
               dim, Ms(t0), Threads());

  std::filesystem::remove_all(work);
  std::filesystem::create_directories(work);
  std::unique_ptr<sieve::DB> db;
  Check(sieve::DB::Open(sieve::Options(), work + "/db", &db), "open");
  sieve::CollectionSpec spec;
  spec.name = "c";
  spec.dim = static_cast<uint32_t>(dim);
  Check(db->CreateCollection(spec), "create");
  std::vector<int64_t> ids(rows);
  for (size_t i = 0; i < rows; ++i) ids[i] = static_cast<int64_t>(i);
  t0 = Clock::now();
  for (size_t first = 0; first < rows; first += ingest_rows) {
    sieve::RowBatch b;
    b.num_rows = std::min(ingest_rows, rows - first);
    b.dim = static_cast<uint32_t>(dim);
    b.vectors = x.data() + first * dim;
    b.ids = ids.data() + first;
    sieve::IngestResult r;
    Check(db->Ingest("c", b, ingest_options, &r), "ingest");
  }
  const double ingest_ms = Ms(t0);
  std::string device;
  double load_ms = 0;
  {
    sieve::SearchRequest one;
    one.queries = queries.data();
    one.num_queries = 1;
    one.dim = static_cast<uint32_t>(dim);
    one.k = 1;
    sieve::SearchResult res;
    t0 = Clock::now();
    Check(db->Search("c", one, options, &res), "first search");
    load_ms = Ms(t0);
    device = res.explain.device;
  }
  std::fprintf(stderr, "range_pages_bench: ingest %.0f ms (%.0f rows/s; calls of %zu rows, "
               "batch_rows %zu), first search (load) %.0f ms on %s\n", ingest_ms,
               rows / (ingest_ms / 1e3), ingest_rows, ingest_options.batch_rows, load_ms,
               device.c_str());
  std::printf("{\"case\": \"setup\", \"rows\": %zu, \"dim\": %zu, \"device\": \"%s\", "
              "\"ingest_ms\": %.1f, \"load_ms\": %.1f, \"ingest_rows\": %zu, \"batch_rows\": %zu",
              rows, dim, device.c_str(), ingest_ms, load_ms, ingest_rows,
              ingest_options.batch_rows);

#ifdef SIEVE_BENCH_FAISS
  faiss::IndexFlatL2 index(static_cast<int>(dim));
  if (use_faiss) {
    t0 = Clock::now();
    index.add(static_cast<faiss::Index::idx_t>(rows), x.data());
    std::printf(", \"faiss_add_ms\": %.1f, \"faiss_threads\": %d", Ms(t0), omp_get_max_threads());
  }
#endif
  std::printf("}\n");
  std::fflush(stdout);

  std::vector<Row> table;
  size_t total_mismatches = 0;
  std::vector<std::vector<double>> dist(nq);
  for (size_t q = 0; q < nq; ++q) Distances(x, rows, dim, queries.data() + q * dim, &dist[q]);

  auto request = [&](size_t q) {
    sieve::SearchRequest req;
    req.queries = queries.data() + q * dim;
    req.num_queries = 1;
    req.dim = static_cast<uint32_t>(dim);
    return req;
  };

  for (size_t n : passing) {
    const size_t failures_before = g_failures;
    std::vector<double> sieve_ms, naive_ms, faiss_ms;
    std::vector<uint64_t> returned, naive_returned, faiss_returned, faiss_slack, windows;
    size_t limit_reached = 0, bad_oracle = 0, bad_naive = 0, bad_faiss = 0, bad_order = 0;
    for (size_t q = 0; q < nq; ++q) {
      const std::vector<double>& d = dist[q];
      // The radius midway between the n-th and (n+1)-th distances: exactly n rows pass, and
      // no row lies within the float64 rounding of the radius.
      std::vector<uint32_t> order(rows);
      for (size_t i = 0; i < rows; ++i) order[i] = static_cast<uint32_t>(i);
      double r;
      if (n < rows) {
        std::nth_element(order.begin(), order.begin() + n, order.end(),
                         [&d](uint32_t a, uint32_t b) { return d[a] < d[b]; });
        double nth = 0;
        for (size_t i = 0; i < n; ++i) nth = std::max(nth, d[order[i]]);
        r = (nth + d[order[n]]) / 2;
      } else {
        r = *std::max_element(d.begin(), d.end()) + 1;
      }
      std::vector<int64_t> oracle;
      for (size_t i = 0; i < rows; ++i) {
        if (d[i] <= r) oracle.push_back(static_cast<int64_t>(i));
      }
      const std::string where = "range n=" + std::to_string(n) + " query " + std::to_string(q);

      sieve::SearchRequest req = request(q);
      req.radius = r;
      req.limit = limit;
      sieve::SearchResult res;
      if (!Time(reps, [&] { return Ok(db->Search("c", req, options, &res), where); },
                &sieve_ms)) {
        continue;
      }
      const sieve::Neighbors& got = res.results[0];
      returned.push_back(got.ids.size());
      limit_reached += got.limit_reached;
      windows = res.explain.windows;
      for (size_t i = 1; i < got.distances.size(); ++i) bad_order += got.distances[i] < got.distances[i - 1];
      const std::vector<int64_t> sieve_ids = Sorted(got.ids);
      if (oracle.size() <= static_cast<size_t>(limit)) {
        bad_oracle += Report("sieve range lacks", where, Minus(oracle, sieve_ids), d, r);
        bad_oracle += Report("sieve range has extra", where, Minus(sieve_ids, oracle), d, r);
      } else {
        // Over the limit: the best `limit` rows of the oracle's.
        std::vector<int64_t> best = oracle;
        std::sort(best.begin(), best.end(), [&d](int64_t a, int64_t b) {
          return d[a] != d[b] ? d[a] < d[b] : a < b;
        });
        best.resize(limit);
        best = Sorted(best);
        bad_oracle += Report("sieve range (limited) lacks", where, Minus(best, sieve_ids), d, r);
        bad_oracle += Report("sieve range (limited) has extra", where, Minus(sieve_ids, best), d, r);
      }

      sieve::SearchRequest plain = request(q);
      plain.k = static_cast<int>(std::min<size_t>(n, sieve::kMaxSearchK));
      std::vector<int64_t> naive_ids, naive_top;
      const bool naive_ok = Time(reps, [&] {
        sieve::SearchResult nres;
        if (!Ok(db->Search("c", plain, options, &nres), where + " naive")) return false;
        const sieve::Neighbors& nb = nres.results[0];
        naive_ids.clear();
        for (size_t i = 0; i < nb.ids.size(); ++i) {
          if (static_cast<double>(nb.distances[i]) <= r) naive_ids.push_back(nb.ids[i]);
        }
        naive_top = nb.ids;
        return true;
      }, &naive_ms);
      if (naive_ok) {
        naive_returned.push_back(naive_ids.size());
        // Over the limit Sieve returns the best `limit` rows: compare those.
        if (got.limit_reached && naive_top.size() > static_cast<size_t>(limit)) {
          naive_top.resize(limit);
        }
        naive_top = Sorted(naive_top);
        bad_naive += Report("naive top-n lacks", where, Minus(sieve_ids, naive_top), d, r);
        bad_naive += Report("naive top-n has extra", where, Minus(naive_top, sieve_ids), d, r);
      }

#ifdef SIEVE_BENCH_FAISS
      if (use_faiss) {
        const float fr = std::nextafter(static_cast<float>(r) * (1 + 1e-6f), INFINITY);
        std::vector<int64_t> faiss_ids;
        Time(reps, [&] {
          faiss::RangeSearchResult rr(1);
          index.range_search(1, queries.data() + q * dim, fr, &rr);
          faiss_ids.assign(rr.labels, rr.labels + rr.lims[1]);
          return true;
        }, &faiss_ms);
        faiss_returned.push_back(faiss_ids.size());
        faiss_ids = Sorted(faiss_ids);
        std::vector<int64_t> within;  // FAISS's rows that truly lie within r
        for (int64_t id : faiss_ids) {
          if (id >= 0 && d[static_cast<size_t>(id)] <= r) within.push_back(id);
        }
        faiss_slack.push_back(faiss_ids.size() - within.size());
        if (!got.limit_reached) {
          bad_faiss += Report("faiss lacks", where, Minus(sieve_ids, faiss_ids), d, r);
          bad_faiss += Report("faiss has extra", where, Minus(within, sieve_ids), d, r);
        }
      }
#endif
    }
    const size_t bad = bad_oracle + bad_naive + bad_faiss + bad_order;
    total_mismatches += bad;
    std::printf("{\"case\": \"range\", \"rows\": %zu, \"dim\": %zu, \"device\": \"%s\", "
                "\"passing\": %zu, \"queries\": %zu, \"reps\": %d, \"limit\": %d, "
                "\"sieve_ms\": %.3f, \"returned\": %s, \"limit_reached\": %zu, \"windows\": %s, "
                "\"naive_k\": %zu, \"naive_ms\": %.3f, \"naive_returned\": %s",
                rows, dim, device.c_str(), n, nq, reps, limit, Median(sieve_ms),
                Join(returned).c_str(), limit_reached, Join(windows).c_str(), n,
                Median(naive_ms), Join(naive_returned).c_str());
    Row row;
    row.label = "range";
    row.n = std::to_string(n);
    row.sieve_ms = Median(sieve_ms);
    row.rounds = windows.size();
    row.naive_ms = Median(naive_ms);
    if (use_faiss) {
      std::printf(", \"faiss_ms\": %.3f, \"faiss_returned\": %s, \"faiss_slack\": %s",
                  Median(faiss_ms), Join(faiss_returned).c_str(), Join(faiss_slack).c_str());
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.2f", Median(faiss_ms));
      row.faiss_ms = buf;
    }
    std::printf(", \"mismatch_oracle\": %zu, \"mismatch_naive\": %zu, \"mismatch_faiss\": %zu, "
                "\"misordered\": %zu, \"failed_searches\": %zu, \"sieve_ms_all\": %s}\n",
                bad_oracle, bad_naive, bad_faiss, bad_order, g_failures - failures_before,
                Join(sieve_ms).c_str());
    std::fflush(stdout);
    row.checks = std::to_string(bad_oracle) + " / " + std::to_string(bad_naive) + " / " +
                 (use_faiss ? std::to_string(bad_faiss) : "-");
    if (g_failures > failures_before) {
      row.checks += ", " + std::to_string(g_failures - failures_before) + " searches FAILED";
    }
    table.push_back(row);
  }

  // Pages: the oracle is each query's first max(pages)·k rows in (distance, id) order.
  const size_t deepest = *std::max_element(pages.begin(), pages.end()) * k;
  std::vector<std::vector<int64_t>> best(nq);
  for (size_t q = 0; q < nq; ++q) {
    const std::vector<double>& d = dist[q];
    std::vector<int64_t> order(rows);
    for (size_t i = 0; i < rows; ++i) order[i] = static_cast<int64_t>(i);
    const size_t m = std::min(deepest, rows);
    std::partial_sort(order.begin(), order.begin() + m, order.end(), [&d](int64_t a, int64_t b) {
      return d[a] != d[b] ? d[a] < d[b] : a < b;
    });
    order.resize(m);
    best[q] = std::move(order);
  }
  for (size_t p : pages) {
    const size_t failures_before = g_failures;
    const int64_t offset = static_cast<int64_t>((p - 1) * k);
    std::vector<double> offset_ms, cursor_ms, naive_ms;
    std::vector<uint64_t> windows;
    size_t bad_oracle = 0, bad_cursor = 0, bad_naive = 0;
    for (size_t q = 0; q < nq; ++q) {
      const std::vector<int64_t> want(
          best[q].begin() + std::min<size_t>(offset, best[q].size()),
          best[q].begin() + std::min<size_t>(offset + k, best[q].size()));
      auto differ = [](const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
        size_t n = std::max(a.size(), b.size());
        for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) n -= a[i] == b[i];
        return n;
      };
      const std::string where = "page " + std::to_string(p) + " query " + std::to_string(q);

      sieve::SearchRequest req = request(q);
      req.k = k;
      req.offset = offset;
      sieve::SearchResult res;
      if (!Time(reps, [&] { return Ok(db->Search("c", req, options, &res), where + " offset"); },
                &offset_ms)) {
        continue;
      }
      windows = res.explain.windows;
      const size_t o = differ(res.results[0].ids, want);
      if (o) std::fprintf(stderr, "range_pages_bench: MISMATCH offset page (%s): %zu positions\n",
                          where.c_str(), o);
      bad_oracle += o;

      std::string cursor;
      if (p > 1) {
        sieve::SearchRequest prev = request(q);
        prev.k = k;
        prev.offset = offset - k;
        sieve::SearchResult pres;
        if (!Ok(db->Search("c", prev, options, &pres), where + " page before")) continue;
        cursor = pres.results[0].next;
      }
      sieve::SearchRequest after = request(q);
      after.k = k;
      after.after = {cursor};
      sieve::SearchResult cres;
      if (Time(reps, [&] { return Ok(db->Search("c", after, options, &cres), where + " cursor"); },
               &cursor_ms)) {
        const size_t c = differ(cres.results[0].ids, res.results[0].ids);
        if (c) std::fprintf(stderr, "range_pages_bench: MISMATCH cursor page (%s): %zu positions\n",
                            where.c_str(), c);
        bad_cursor += c;
      }

      sieve::SearchRequest plain = request(q);
      plain.k = static_cast<int>(p * k);
      std::vector<int64_t> slice;
      if (!Time(reps, [&] {
            sieve::SearchResult nres;
            if (!Ok(db->Search("c", plain, options, &nres), where + " naive")) return false;
            const std::vector<int64_t>& all = nres.results[0].ids;
            slice.assign(all.begin() + std::min<size_t>(offset, all.size()), all.end());
            return true;
          }, &naive_ms)) {
        continue;
      }
      const size_t nv = differ(slice, res.results[0].ids);
      if (nv) std::fprintf(stderr, "range_pages_bench: MISMATCH naive page (%s): %zu positions\n",
                           where.c_str(), nv);
      bad_naive += nv;
    }
    total_mismatches += bad_oracle + bad_cursor + bad_naive;
    std::printf("{\"case\": \"page\", \"rows\": %zu, \"dim\": %zu, \"device\": \"%s\", "
                "\"page\": %zu, \"k\": %d, \"queries\": %zu, \"reps\": %d, \"offset_ms\": %.3f, "
                "\"cursor_ms\": %.3f, \"windows\": %s, \"naive_k\": %zu, \"naive_ms\": %.3f, "
                "\"mismatch_oracle\": %zu, \"mismatch_cursor\": %zu, \"mismatch_naive\": %zu, "
                "\"failed_searches\": %zu}\n",
                rows, dim, device.c_str(), p, k, nq, reps, Median(offset_ms), Median(cursor_ms),
                Join(windows).c_str(), p * k, Median(naive_ms), bad_oracle, bad_cursor,
                bad_naive, g_failures - failures_before);
    std::fflush(stdout);
    Row row;
    row.label = "page " + std::to_string(p) + " (offset / cursor)";
    row.n = std::to_string(k);
    row.sieve_ms = Median(offset_ms);
    char buf[32];
    std::snprintf(buf, sizeof(buf), " / %.2f", Median(cursor_ms));
    row.sieve_extra = buf;
    row.rounds = windows.size();
    row.naive_ms = Median(naive_ms);
    row.checks = std::to_string(bad_oracle) + " / " + std::to_string(bad_naive) + " / " +
                 std::to_string(bad_cursor) + " (cursor)";
    if (g_failures > failures_before) {
      row.checks += ", " + std::to_string(g_failures - failures_before) + " searches FAILED";
    }
    table.push_back(row);
  }

  std::printf("\n# range_pages_bench: %zu rows x %zu (l2), device %s, %zu queries (one per "
              "search), medians of %d runs each, ms; mismatches: Sieve vs float64 oracle / naive "
              "vs Sieve / FAISS vs Sieve (range) or cursor vs offset (pages)\n\n",
              rows, dim, device.c_str(), nq, reps);
  std::printf("| case | n | Sieve ms | rounds | naive ms | FAISS ms | mismatches |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- |\n");
  for (const Row& row : table) {
    std::printf("| %s | %s | %.2f%s | %zu | %.2f | %s | %s |\n", row.label.c_str(),
                row.n.c_str(), row.sieve_ms, row.sieve_extra.c_str(), row.rounds, row.naive_ms,
                row.faiss_ms.c_str(), row.checks.c_str());
  }
  std::printf("\nmismatches in all: %zu; failed searches: %zu\n", total_mismatches, g_failures);
  return total_mismatches == 0 && g_failures == 0 ? 0 : 3;
}
