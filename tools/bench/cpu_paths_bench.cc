// Copyright 2026 The Sieve Authors.
//
// cpu_paths_bench: times the CPU executor's SDDMM, gather and dense paths on random in-memory
// data across passing fractions, to find where each path wins (the CPU planner thresholds).
//
//   cpu_paths_bench --rows 1000000 --dim 128 --queries 16 --k 10
//       --fractions 0.0001,0.001,0.01,0.1,1 [--reps 5] [--metric l2] [--mode bitset|bitmap]
//       [--threads 0] [--tile-rows 0] [--stages 1]
//
// Every path runs on the same data and filter in one process; each cell is the median of
// --reps timed runs after one warm-up. In bitmap mode each query gets its own random set of
// the given fraction (independent draws), so the union is larger than any one set.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "index/row_set.h"
#include "query/cpu_executor.h"
#include "tools/bench/bench_flags.h"

namespace {

struct Flags {
  uint32_t rows = 1000000;
  uint32_t dim = 128;
  uint32_t queries = 16;
  uint32_t k = 10;
  int reps = 5;
  int threads = 0;
  uint32_t tile_rows = 0;
  std::string metric = "l2";
  std::string mode = "bitset";
  bool stages = false;
  std::vector<double> fractions = {0.0001, 0.0005, 0.001, 0.002, 0.005, 0.01,
                                   0.02,   0.05,   0.1,   0.2,   0.5,   1.0};
};

const char kUsage[] =
    "usage: cpu_paths_bench [--rows N] [--dim D] [--queries Q] [--k K] [--fractions F,...]\n"
    "         [--reps R] [--metric l2|ip|cosine] [--mode bitset|bitmap] [--threads T]\n"
    "         [--tile-rows N] [--stages 0|1]\n";

[[noreturn]] void Usage(const char* msg) {
  std::fprintf(stderr, "cpu_paths_bench: %s\n%s", msg, kUsage);
  std::exit(2);
}

Flags ParseFlags(int argc, char** argv) {
  sieve::bench::BenchFlags b("cpu_paths_bench", kUsage,
                             {"rows", "dim", "queries", "k", "reps", "threads", "tile-rows",
                              "metric", "stages", "mode", "fractions"});
  b.Parse(argc, argv);
  Flags f;
  f.rows = static_cast<uint32_t>(b.Uint("rows", f.rows));
  f.dim = static_cast<uint32_t>(b.Uint("dim", f.dim));
  f.queries = static_cast<uint32_t>(b.Uint("queries", f.queries));
  f.k = static_cast<uint32_t>(b.Uint("k", f.k));
  f.reps = b.Int("reps", f.reps);
  f.threads = b.Int("threads", f.threads);
  f.tile_rows = static_cast<uint32_t>(b.Uint("tile-rows", f.tile_rows));
  f.metric = b.Str("metric", f.metric);
  f.stages = b.Bool("stages", f.stages);
  f.mode = b.Str("mode", f.mode);
  f.fractions = b.Doubles("fractions", f.fractions);
  if (f.rows == 0 || f.dim == 0 || f.queries == 0 || f.k == 0 || f.reps < 1) {
    Usage("rows, dim, queries, k and reps must be positive");
  }
  if (f.mode != "bitset" && f.mode != "bitmap") Usage("--mode must be bitset or bitmap");
  return f;
}

sieve::RowSet RandomSet(uint32_t rows, double fraction, std::mt19937_64& rng) {
  if (fraction >= 1.0) return sieve::RowSet::Range(0, rows);
  // Exactly round(fraction * rows) distinct rows, uniformly spread.
  const uint32_t n = static_cast<uint32_t>(fraction * rows + 0.5);
  std::vector<uint32_t> ords;
  ords.reserve(n);
  if (n * 4 < rows) {
    std::uniform_int_distribution<uint32_t> u(0, rows - 1);
    sieve::RowSet s;
    while (s.Cardinality() < n) {
      ords.clear();
      for (uint32_t i = 0; i < n; ++i) ords.push_back(u(rng));
      s.AddMany(ords.data(), ords.size());
      if (s.Cardinality() > n) {  // trim the excess from the top
        std::vector<uint32_t> all(s.Cardinality());
        s.ToArray(all.data());
        std::shuffle(all.begin(), all.end(), rng);
        all.resize(n);
        s = sieve::RowSet::Of(all.data(), all.size());
      }
    }
    return s;
  }
  std::vector<uint32_t> all(rows);
  for (uint32_t r = 0; r < rows; ++r) all[r] = r;
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(n);
  return sieve::RowSet::Of(all.data(), all.size());
}

}  // namespace

int main(int argc, char** argv) {
  using Clock = std::chrono::steady_clock;
  const Flags f = ParseFlags(argc, argv);
  sieve::Metric metric;
  if (!sieve::ParseMetric(f.metric, &metric).ok()) Usage("--metric must be l2, ip or cosine");

  std::mt19937_64 rng(42);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> vectors(static_cast<size_t>(f.rows) * f.dim);
  for (float& x : vectors) x = u(rng);
  std::vector<float> norms(f.rows);
  for (uint32_t r = 0; r < f.rows; ++r) {
    double s = 0;
    for (uint32_t d = 0; d < f.dim; ++d) {
      const double x = vectors[static_cast<size_t>(r) * f.dim + d];
      s += x * x;
    }
    norms[r] = static_cast<float>(s);
  }
  std::vector<float> queries(static_cast<size_t>(f.queries) * f.dim);
  for (float& x : queries) x = u(rng);

  sieve::ShardView shard;
  shard.vectors = vectors.data();
  shard.sq_norms = norms.data();
  shard.rows = f.rows;
  shard.dim = f.dim;

  sieve::CpuExecutorOptions options;
  options.threads = f.threads;
  options.tile_rows = f.tile_rows;
  sieve::CpuExecutor exec(options);

  std::printf("# cpu_paths_bench rows=%u dim=%u queries=%u k=%u metric=%s mode=%s reps=%d "
              "threads=%d\n",
              f.rows, f.dim, f.queries, f.k, f.metric.c_str(), f.mode.c_str(), f.reps,
              f.threads);
  std::printf("%10s %10s %10s %11s %11s %11s %7s\n", "fraction", "n_pass", "union",
              "sddmm_ms", "gather_ms", "dense_ms", "best");
  const sieve::SearchPath paths[] = {sieve::SearchPath::kSddmm, sieve::SearchPath::kGather,
                                     sieve::SearchPath::kDense};
  for (double fraction : f.fractions) {
    std::vector<sieve::RowSet> sets;
    const size_t n_sets = f.mode == "bitmap" ? f.queries : 1;
    for (size_t i = 0; i < n_sets; ++i) sets.push_back(RandomSet(f.rows, fraction, rng));
    sieve::BatchFilters filters;
    uint64_t total = 0;
    for (const auto& s : sets) {
      filters.sets.push_back(&s);
      filters.passing_rows.push_back(s.Cardinality());
      total += s.Cardinality();
    }
    std::vector<const sieve::RowSet*> ptrs(filters.sets.begin(), filters.sets.end());
    const uint64_t union_rows =
        sieve::RowSet::Union(ptrs.data(), ptrs.size()).Cardinality();
    double ms[3];
    for (int p = 0; p < 3; ++p) {
      sieve::ExecRequest req;
      req.queries = queries.data();
      req.num_queries = f.queries;
      req.k = f.k;
      req.metric = metric;
      req.path = paths[p];
      std::vector<double> times;
      for (int rep = 0; rep <= f.reps; ++rep) {
        sieve::ExecResult result;
        auto t0 = Clock::now();
        sieve::Status s = exec.Search(shard, filters, req, &result);
        const double t = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        if (!s.ok()) {
          std::fprintf(stderr, "search failed: %s\n", s.ToString().c_str());
          return 1;
        }
        if (rep > 0) times.push_back(t);  // rep 0 warms up
        if (f.stages && rep == f.reps) {
          std::fprintf(stderr, "  %s %.5f:", sieve::SearchPathName(paths[p]), fraction);
          for (const auto& [name, v] : result.stage_ms) std::fprintf(stderr, " %s=%.3f", name.c_str(), v);
          std::fprintf(stderr, "\n");
        }
      }
      std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
      ms[p] = times[times.size() / 2];
    }
    const int best = static_cast<int>(std::min_element(ms, ms + 3) - ms);
    std::printf("%10.5f %10llu %10llu %11.3f %11.3f %11.3f %7s\n", fraction,
                static_cast<unsigned long long>(total / n_sets),
                static_cast<unsigned long long>(union_rows), ms[0], ms[1], ms[2],
                sieve::SearchPathName(paths[best]));
    std::fflush(stdout);
  }
  return 0;
}
