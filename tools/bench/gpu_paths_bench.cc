// Copyright 2026 The Sieve Authors.
//
// gpu_paths_bench: times each GPU path (SDDMM, gather, dense) on one shard and one filter per
// selectivity (one bitset for the batch, or a filter per query), with CUDA events after
// warm-up, and prints medians.
//
// Default shape (issue 3): 10M × 128 float16 rows, 100 queries, k = 64, l2, bitsets passing
// 0.01 %, 0.1 %, 1 %, 10 %, 100 % of rows, plus exactly 1,000 rows (the SDDMM goal).
// What is timed: Executor::Profile on the GPU executor — filter and query upload from pinned memory,
// compaction, distances, top-k and the download of the results. Roaring → bitset on the host
// and result assembly are not timed (they are reported once per case as host_ms).
//
// Usage: gpu_paths_bench [--rows N] [--dim D] [--queries Q] [--k K] [--dtype f16|f32]
//                        [--metric l2|ip|cosine] [--warmup W] [--reps R]
//                        [--fractions 0.0001,0.001,...] [--extra-rows 1000,...]
//                        [--paths sddmm,gather,dense] [--stages]
//                        [--filters bitset,bitmap,bitmap-same]
//                        GpuExecutorOptions: [--threshold 0|1] [--threshold-gather-min-rows N]
//                        [--ts-levels 2..6] [--candidates 0|1] [--cand-sample-x F]
//                        [--cand-tile-mb N] [--tma 0|1] [--slab-kb N] [--list-groups N]
//                        [--pack-threads N] [--int8 0|1|both]
//                        [--data uniform|clustered]
// --int8 1: GpuExecutorOptions::candidate_int8 (the dense candidate scan over int8 codes);
// both: each case on an executor without it and on one with it (the products column tells them
// apart, and their answers are compared like the paths').
// --data clustered: rows and queries drawn around 256 centres (0.8 of a centre's uniform values
// plus 0.2 of a row's own), where the distances crowd and the candidate bands widen.
// --filters: "bitset", one set for the batch; "bitmap", a filter per query, each query its own
// random set of the same size (the seed differs per query, as the cuVS peer's); "bitmap-same", a
// filter per query whose sets are equal copies of one set.
// Output: a table on stderr and one JSON line per (case, path) on stdout; with --stages the
// device time of each stage of the last timed run on stderr ("stages PATH n=N: name=ms ...").

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gpu/gpu_executor.h"
#include "index/row_set.h"
#include "sieve/gpu_options.h"
#include "tools/bench/bench_data.h"
#include "tools/bench/bench_flags.h"

namespace {

using sieve::DType;
using sieve::Metric;
using sieve::SearchPath;

struct Options : sieve::bench::SweepOptions {
  sieve::GpuExecutorOptions gpu;
  bool stages = false;
  DType dtype = DType::kFloat16;
  Metric metric = Metric::kL2;
  std::vector<SearchPath> paths = {SearchPath::kSddmm, SearchPath::kGather, SearchPath::kDense};
  std::vector<std::string> filters = {"bitset"};
  bool clustered = false;
  bool int8_both = false;  // every case on a second executor with candidate_int8 too
};

const char kUsage[] =
    "usage: gpu_paths_bench [--rows N] [--dim D] [--queries Q] [--k K] [--dtype f16|f32]\n"
    "         [--metric l2|ip|cosine] [--warmup W] [--reps R] [--fractions F,...]\n"
    "         [--extra-rows N,...] [--paths sddmm,gather,dense] [--stages]\n"
    "         [--filters bitset,bitmap,bitmap-same]\n"
    "         [--threshold 0|1] [--threshold-gather-min-rows N] [--ts-levels 2..6]\n"
    "         [--candidates 0|1] [--cand-sample-x F] [--cand-tile-mb N] [--cand-tf32 0|1]\n"
    "         [--tma 0|1] [--slab-kb N]\n"
    "         [--list-groups N] [--pack-threads N] [--int8 0|1|both]\n"
    "         [--data uniform|clustered]\n";

Options Parse(int argc, char** argv) {
  sieve::bench::BenchFlags f("gpu_paths_bench", kUsage,
                             {"rows", "dim", "queries", "k", "dtype", "metric", "warmup", "reps",
                              "fractions", "extra-rows", "paths", "threshold",
                              "threshold-gather-min-rows", "ts-levels", "candidates",
                              "cand-sample-x", "cand-tile-mb", "cand-tf32", "tma", "slab-kb",
                              "filters", "list-groups", "pack-threads", "int8", "data"},
                             {"stages"});
  f.Parse(argc, argv);
  Options o;
  o.rows = static_cast<uint32_t>(f.Uint("rows", o.rows));
  o.dim = static_cast<uint32_t>(f.Uint("dim", o.dim));
  o.queries = static_cast<uint32_t>(f.Uint("queries", o.queries));
  o.k = static_cast<uint32_t>(f.Uint("k", o.k));
  o.warmup = f.Int("warmup", o.warmup);
  o.reps = f.Int("reps", o.reps);
  o.fractions = f.Doubles("fractions", o.fractions);
  o.extra_rows = f.Uints("extra-rows", o.extra_rows);
  o.stages = f.Has("stages");
  sieve::GpuExecutorOptions& g = o.gpu;
  g.threshold_select = f.Uint("threshold", 1) != 0;
  g.threshold_gather_min_rows = f.Uint("threshold-gather-min-rows", g.threshold_gather_min_rows);
  g.threshold_max_levels = static_cast<uint32_t>(f.Uint("ts-levels", g.threshold_max_levels));
  g.candidate_selection = f.Uint("candidates", 1) != 0;
  g.candidate_sample_factor = f.Double("cand-sample-x", g.candidate_sample_factor);
  g.candidate_tile_bytes = static_cast<size_t>(f.Uint("cand-tile-mb", 0)) << 20;
  g.candidate_tf32 = f.Uint("cand-tf32", 1) != 0;
  const std::string int8 = f.Str("int8", "0");
  if (int8 != "0" && int8 != "1" && int8 != "both") f.Die("--int8 is 0, 1 or both");
  g.candidate_int8 = int8 == "1";
  o.int8_both = int8 == "both";
  const std::string data = f.Str("data", "uniform");
  if (data != "uniform" && data != "clustered") f.Die("--data is uniform or clustered");
  o.clustered = data == "clustered";
  g.tma_page_copies = f.Uint("tma", 1) != 0;
  g.list_upload_groups = static_cast<uint32_t>(f.Uint("list-groups", g.list_upload_groups));
  g.filter_pack_threads = static_cast<uint32_t>(f.Uint("pack-threads", g.filter_pack_threads));
  if (f.Has("slab-kb")) g.resident_slab_bytes = static_cast<size_t>(f.Uint("slab-kb", 0)) << 10;
  const std::string dtype = f.Str("dtype", "f16");
  if (dtype == "f16") {
    o.dtype = DType::kFloat16;
  } else if (dtype == "f32") {
    o.dtype = DType::kFloat32;
  } else {
    f.Die("--dtype is f16 or f32");
  }
  if (f.Has("metric") && !sieve::ParseMetric(f.Str("metric", ""), &o.metric).ok()) {
    f.Die("--metric is l2, ip or cosine");
  }
  if (f.Has("paths")) {
    o.paths.clear();
    for (const std::string& p : f.List("paths", {})) {
      SearchPath path;
      if (!sieve::ParseSearchPath(p, &path).ok() || path == SearchPath::kAuto) {
        f.Die("--paths takes sddmm,gather,dense");
      }
      o.paths.push_back(path);
    }
  }
  if (f.Has("filters")) {
    o.filters = f.List("filters", {});
    for (const std::string& kind : o.filters) {
      if (kind != "bitset" && kind != "bitmap" && kind != "bitmap-same") {
        f.Die("--filters takes bitset,bitmap,bitmap-same");
      }
    }
  }
  if (o.rows == 0 || o.dim == 0 || o.queries == 0 || o.k == 0 || o.reps < 1 || o.warmup < 0) {
    f.Die("rows, dim, queries, k and reps must be positive");
  }
  const sieve::Status valid = o.gpu.Validate();
  if (!valid.ok()) f.Die(valid.message());
  return o;
}

// Uniform [-1, 1) values (bench_data.h), float16-rounded when asked, filled on every core.
// clustered: 0.8 of one of 256 centres' values (the same for rows and queries) plus 0.2 of the
// row's own.
std::vector<float> MakeVectors(size_t n, uint32_t dim, bool round_half, uint64_t seed,
                               bool clustered = false) {
  std::vector<float> v(n * dim);
  sieve::bench::ParallelFor(v.size(), [&](size_t i) {
    float x = sieve::bench::UniformValue(seed, i);
    if (clustered) {
      const size_t row = i / dim, j = i % dim;
      // The centre of row r is r's hash mod 256, so that centres do not follow row order.
      const size_t centre = (row * 0x9E3779B97F4A7C15ull >> 32) % 256;
      x = 0.8f * sieve::bench::UniformValue(7777, centre * dim + j) + 0.2f * x;
    }
    v[i] = round_half ? static_cast<float>(static_cast<_Float16>(x)) : x;
  });
  return v;
}

// The filter of `n_pass` rows (bench_data.h's PassingRows).
sieve::RowSet MakeBitset(uint32_t rows, uint64_t n_pass, uint64_t seed) {
  if (n_pass >= rows) return sieve::RowSet::Range(0, rows);
  const std::vector<uint32_t> ords = sieve::bench::PassingRows(rows, n_pass, seed);
  return sieve::RowSet::Of(ords.data(), ords.size());
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

const char* PathName(SearchPath p) {
  switch (p) {
    case SearchPath::kSddmm: return "sddmm";
    case SearchPath::kGather: return "gather";
    case SearchPath::kDense: return "dense";
    default: return "auto";
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  std::unique_ptr<sieve::gpu::GpuExecutor> exec;
  sieve::Status st = sieve::gpu::GpuExecutor::Create(o.gpu, &exec);
  if (!st.ok()) {
    std::fprintf(stderr, "gpu_paths_bench: %s\n", st.ToString().c_str());
    return 1;
  }
  std::vector<sieve::gpu::GpuExecutor*> execs = {exec.get()};
  std::unique_ptr<sieve::gpu::GpuExecutor> exec_int8;
  if (o.int8_both) {
    sieve::GpuExecutorOptions g = o.gpu;
    g.candidate_int8 = true;
    st = sieve::gpu::GpuExecutor::Create(g, &exec_int8);
    if (!st.ok()) {
      std::fprintf(stderr, "gpu_paths_bench: %s\n", st.ToString().c_str());
      return 1;
    }
    execs.push_back(exec_int8.get());
  }
  const bool half = o.dtype == DType::kFloat16;
  std::fprintf(stderr, "device %s; %u rows x %u %s, %u queries, k=%u, warmup %d, reps %d%s%s\n",
               exec->name().c_str(), o.rows, o.dim, half ? "f16" : "f32", o.queries, o.k,
               o.warmup, o.reps, o.gpu.Changed().empty() ? "" : "; options ",
               o.gpu.Changed().c_str());
  auto t0 = std::chrono::steady_clock::now();
  const std::vector<float> data = MakeVectors(size_t{o.rows}, o.dim, half, 1, o.clustered);
  const std::vector<float> queries = MakeVectors(o.queries, o.dim, false, 2, o.clustered);
  sieve::ShardView view;
  view.key = 1;
  view.generation = 1;
  view.vectors = data.data();
  view.rows = o.rows;
  view.dim = o.dim;
  view.dtype = o.dtype;
  // The largest squared norm of a row, as VectorArena keeps it (the top-k plan's products
  // depend on it; the GPU computes the norms themselves).
  view.max_sq_norm = 0;
  for (size_t r = 0; r < o.rows; ++r) {
    double sum = 0;
    for (size_t j = 0; j < o.dim; ++j) {
      const double v = data[r * o.dim + j];
      sum += v * v;
    }
    view.max_sq_norm = std::max(view.max_sq_norm, static_cast<double>(static_cast<float>(sum)));
  }
  std::fprintf(stderr, "data generated in %.1f s\n",
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());

  std::vector<uint64_t> counts;
  for (double f : o.fractions) counts.push_back(static_cast<uint64_t>(std::llround(f * o.rows)));
  for (uint64_t n : o.extra_rows) counts.push_back(n);

  // Bytes and flops each path cannot avoid: reading the rows it scores, and 2·dim flops per
  // (query, scored row). H200: ~4.8 TB/s HBM3e; the floor below uses bandwidth only.
  const double elem = half ? 2.0 : 4.0;
  const double hbm_bytes_per_ms = 4.8e9;
  std::fprintf(stderr, "%-11s %-10s %-10s %-7s %10s %10s %10s %12s %12s %10s %10s %10s %8s\n",
               "filter", "fraction", "passing", "path", "median_ms", "min_ms", "host_ms", "bytes",
               "flops", "floor_ms", "kept/q", "band/q", "products");
  std::vector<std::pair<std::string, uint64_t>> cases;  // (filter kind, passing rows)
  for (const std::string& kind : o.filters) {
    for (uint64_t n : counts) cases.emplace_back(kind, std::min<uint64_t>(n, o.rows));
  }
  for (const auto& [kind, n_pass] : cases) {
    const uint32_t n_sets = kind == "bitset" ? 1 : o.queries;
    std::vector<sieve::RowSet> sets(n_sets);
    if (kind == "bitmap") {
      sieve::bench::ParallelFor(n_sets, [&](size_t q) {
        sets[q] = MakeBitset(o.rows, n_pass, 3 + n_pass + 7919 * (q + 1));
      });
    } else {
      sets[0] = MakeBitset(o.rows, n_pass, 3 + n_pass);
      for (uint32_t q = 1; q < n_sets; ++q) sets[q] = sets[0];
    }
    sieve::BatchFilters filters;
    for (const sieve::RowSet& set : sets) {
      filters.sets.push_back(&set);
      filters.passing_rows.push_back(set.Cardinality());
    }
    std::vector<std::vector<std::pair<uint32_t, float>>> first;
    for (SearchPath path : o.paths) {
      for (sieve::gpu::GpuExecutor* exec : execs) {
        sieve::ExecRequest req;
        req.queries = queries.data();
        req.num_queries = o.queries;
        req.k = o.k;
        req.metric = o.metric;
        req.path = path;
        sieve::PlanRequest(*exec, view, filters, &req);
        sieve::ProfileOptions po;
        po.warmup = o.warmup;
        po.reps = o.reps;
        po.stages = o.stages;
        sieve::ExecProfile profile;
        auto h0 = std::chrono::steady_clock::now();
        const sieve::gpu::GpuPathCounts before = exec->path_counts();
        st = exec->Profile(view, filters, req, po, &profile);
        const sieve::gpu::GpuPathCounts after = exec->path_counts();
        // The rows a query's candidate scan kept and rescored, a run (0 without a scan).
        const uint64_t chunks = after.candidate_chunks - before.candidate_chunks;
        const double per = chunks > 0 ? 1.0 / (static_cast<double>(chunks) * o.queries) : 0.0;
        const double kept = per * static_cast<double>(after.candidate_rows_kept -
                                                      before.candidate_rows_kept);
        const double band = per * static_cast<double>(after.candidate_band_rows -
                                                      before.candidate_band_rows);
        const uint64_t fallbacks = after.candidate_fallbacks - before.candidate_fallbacks;
        const std::vector<double>& ms = profile.ms;
        const sieve::ExecResult& result = profile.result;
        const double wall = std::chrono::duration<double, std::milli>(
                                std::chrono::steady_clock::now() - h0).count();
        if (!st.ok()) {
          std::fprintf(stderr, "%-11s %-10g %-10llu %-7s failed: %s\n", kind.c_str(),
                       static_cast<double>(n_pass) / o.rows,
                       static_cast<unsigned long long>(n_pass), PathName(path),
                       st.ToString().c_str());
          std::printf("{\"filter\": \"%s\", \"passing\": %llu, \"path\": \"%s\", "
                      "\"error\": \"%s\"}\n",
                      kind.c_str(), static_cast<unsigned long long>(n_pass), PathName(path),
                      st.message().c_str());
          continue;
        }
        // Host time of one search beyond its device part (prepare + assemble), from the stages.
        double host_ms = 0;
        for (const auto& [name, v] : result.stage_ms) {
          if (name == "gpu.prepare" || name == "gpu.assemble") host_ms += v;
        }
        // The paths must agree: same number of results and the same best distance per query.
        if (first.empty()) {
          first = result.neighbors;
        } else {
          for (size_t q = 0; q < first.size(); ++q) {
            const auto& a = first[q];
            const auto& b = result.neighbors[q];
            if (a.size() != b.size() ||
                (!a.empty() && std::fabs(a[0].second - b[0].second) >
                                   1e-3 * (1 + std::fabs(a[0].second)))) {
              std::fprintf(stderr, "MISMATCH between paths at query %zu (%zu vs %zu results)\n", q,
                           a.size(), b.size());
              return 2;
            }
          }
        }
        if (o.stages) {
          std::fprintf(stderr, "stages %s %s n=%llu:", kind.c_str(), PathName(path),
                       static_cast<unsigned long long>(n_pass));
          for (const auto& [name, v] : profile.stages) std::fprintf(stderr, " %s=%.4f", name.c_str(), v);
          std::fprintf(stderr, "\n");
        }
        const double scored = path == SearchPath::kDense ? o.rows : static_cast<double>(n_pass);
        const double bytes = scored * o.dim * elem;
        const double flops = 2.0 * o.queries * scored * o.dim;
        const double floor_ms = bytes / hbm_bytes_per_ms;
        const double med = Median(ms);
        const double mn = *std::min_element(ms.begin(), ms.end());
        std::fprintf(stderr,
                     "%-11s %-10g %-10llu %-7s %10.4f %10.4f %10.2f %12.4g %12.4g %10.4f %10.0f "
                     "%10.0f %8s%s\n",
                     kind.c_str(), static_cast<double>(n_pass) / o.rows, static_cast<unsigned long long>(n_pass),
                     PathName(path), med, mn, host_ms, bytes, flops, floor_ms, kept, band,
                     result.products.c_str(), fallbacks > 0 ? " (fell back)" : "");
        std::printf(
            "{\"filter\": \"%s\", \"rows\": %u, \"dim\": %u, \"dtype\": \"%s\", \"queries\": %u, \"k\": %u, "
            "\"passing\": %llu, \"fraction\": %g, \"path\": \"%s\", \"median_ms\": %.5f, "
            "\"min_ms\": %.5f, \"reps\": %d, \"host_ms\": %.3f, \"wall_ms\": %.1f, "
            "\"floor_bytes\": %.6g, \"floor_flops\": %.6g, \"floor_ms\": %.5f, "
            "\"select\": \"%s\", \"products\": \"%s\", \"select_plan\": \"%s\", "
            "\"data\": \"%s\", \"kept_per_query\": %.1f, \"band_per_query\": %.1f, "
            "\"fallbacks\": %llu}\n",
            kind.c_str(), o.rows, o.dim, half ? "f16" : "f32", o.queries, o.k,
            static_cast<unsigned long long>(n_pass), static_cast<double>(n_pass) / o.rows,
            PathName(path), med, mn, o.reps, host_ms, wall, bytes, flops, floor_ms,
            result.select.c_str(), result.products.c_str(), result.select_plan.c_str(),
            o.clustered ? "clustered" : "uniform", kept, band,
            static_cast<unsigned long long>(fallbacks));
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
