// Copyright 2026 The Sieve Authors.
//
// threshold_select_bench: times the threshold select pipeline (gpu/threshold_select/threshold_select.h) over
// paged float16 keys, with CUDA events after warm-up, and prints medians.
//
// Default shape (issue): 10M × 128 float16 keys in a PagePool, 100 queries, k = 64, l2;
// nothing filtered, then a random bitset passing 10 % of the keys. The pipeline:
//   (a) thresholds from a sample: ThresholdSelect over the first --sample-pages pages
//       (thresholds -inf, capacity = every sampled key, no repair) → TopKFromCandidates(k) →
//       ThresholdsFromTopK (the sample's k-th best lets about k · keys / sampled keys through);
//   (b) ThresholdSelect over every page with the repair on (arrivals, ranges), capacity C;
//   (c) TopKFromCandidates(k).
// Reported: median ms of the whole pipeline, of (a), (b) and (c) alone, and of (b) with
// thresholds of known quality: exact (the k-th best), 2× loose (the 2k-th best), far too loose
// (the k-th best of 1/32 of the sample: candidates overflow C → repair) and far too tight
// (+inf: nothing is a candidate → repair), with candidate counts and repaired rows. Every
// variant's top-k must equal the pipeline's; the pipeline's top-k of two queries must equal a
// host brute force (float64 over the same float16 values) over all keys.
// Floors: bytes = keys · dim · 2 B over 4.8 TB/s (datasheet; about 4.3 measured here), flops
// = 2 · queries · keys · dim over ~989 TFLOP/s dense fp16.
//
// Usage: threshold_select_bench [--rows N] [--dim D] [--queries Q] [--k K] [--reps R]
//                               [--warmup W] [--sample-pages S] [--capacity C] [--slab-mb M]
//                               [--repair-reps R]  (reps of the far-too-loose/tight cases)
// Output: a table on stderr and one JSON line per case on stdout.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <queue>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tools/bench/bench_data.h"
#include "tools/bench/bench_flags.h"
#include "gpu/page_pool.h"
#include "gpu/threshold_select/threshold_select.h"

namespace {

using sieve::Metric;
using sieve::Status;
using sieve::gpu::KeyType;
using sieve::gpu::kPageRows;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr double kDatasheetBytesPerS = 4.8e12;
constexpr double kDatasheetFlopsPerS = 989e12;

[[noreturn]] void Die(const std::string& msg) {
  std::fprintf(stderr, "threshold_select_bench: %s\n", msg.c_str());
  std::exit(1);
}

#define CUDA_CHECK(expr)                                                            \
  do {                                                                              \
    cudaError_t e_ = (expr);                                                        \
    if (e_ != cudaSuccess) Die(std::string(#expr) + ": " + cudaGetErrorString(e_)); \
  } while (0)

void Check(const Status& s, const char* what) {
  if (!s.ok()) Die(std::string(what) + ": " + s.ToString());
}

struct Options {
  uint64_t rows = 10'000'000;
  uint32_t dim = 128;
  uint32_t queries = 100;
  uint32_t k = 64;
  int reps = 20;
  int warmup = 3;
  uint32_t sample_pages = 2048;  // 131,072 keys: about k · 76 candidates per row in (b)
  uint32_t capacity = 16384;
  uint32_t slab_mb = 256;
  int repair_reps = 2;  // reps of the two cases that repair every row (0: skip them)
};

Options Parse(int argc, char** argv) {
  sieve::bench::BenchFlags f(
      "threshold_select_bench",
      "usage: threshold_select_bench [--rows N] [--dim D] [--queries Q] [--k K] [--reps R]\n"
      "         [--warmup W] [--sample-pages P] [--capacity C] [--repair-reps R] [--slab-mb M]\n",
      {"rows", "dim", "queries", "k", "reps", "warmup", "sample-pages", "capacity", "repair-reps",
       "slab-mb"});
  f.Parse(argc, argv);
  Options o;
  o.rows = f.Uint("rows", o.rows);
  o.dim = static_cast<uint32_t>(f.Uint("dim", o.dim));
  o.queries = static_cast<uint32_t>(f.Uint("queries", o.queries));
  o.k = static_cast<uint32_t>(f.Uint("k", o.k));
  o.reps = f.Int("reps", o.reps);
  o.warmup = f.Int("warmup", o.warmup);
  o.sample_pages = static_cast<uint32_t>(f.Uint("sample-pages", o.sample_pages));
  o.capacity = static_cast<uint32_t>(f.Uint("capacity", o.capacity));
  o.repair_reps = f.Int("repair-reps", o.repair_reps);
  o.slab_mb = static_cast<uint32_t>(f.Uint("slab-mb", o.slab_mb));
  if (o.rows == 0 || o.rows > (1ull << 31) - 1) Die("--rows must be in [1, 2^31)");
  if (o.dim == 0 || o.dim >= 65536 || o.queries == 0 || o.k == 0 || o.reps <= 0) Die("bad shape");
  if (2 * o.k > 4096) Die("--k must be <= 2048 (the 2k-th best is read through TopK)");
  if (o.capacity < o.k) Die("--capacity must be >= k");
  return o;
}

// Deterministic values in [-1, 1) (bench_data.h's stream; dims below 2^16), rounded to float16.
float Value(uint64_t seed, uint64_t row, uint32_t d) {
  const float u = sieve::bench::UniformValue(seed, (row << 16) + d);
  return static_cast<float>(static_cast<_Float16>(u));
}
bool Keeps10Percent(uint64_t row) { return sieve::bench::Mix(row ^ 0x5bd1e995ull) % 10 == 0; }

template <typename T>
struct DeviceBuffer {
  T* p = nullptr;
  size_t n = 0;
  explicit DeviceBuffer(size_t count) : n(count) {
    CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&p), std::max<size_t>(count, 1) * sizeof(T)));
  }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void Upload(const std::vector<T>& v) {
    CUDA_CHECK(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> Download() const {
    std::vector<T> v(n);
    CUDA_CHECK(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
    return v;
  }
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// A host top-k (score, key), best first.
using Scored = std::pair<double, int64_t>;
struct WorseFirst {
  bool operator()(const Scored& a, const Scored& b) const {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  }
};
using TopHeap = std::priority_queue<Scored, std::vector<Scored>, WorseFirst>;
void Push(TopHeap* h, uint32_t k, double s, int64_t key) {
  if (h->size() < k) {
    h->push({s, key});
  } else if (WorseFirst()({s, key}, h->top())) {
    h->pop();
    h->push({s, key});
  }
}
std::vector<Scored> Drain(TopHeap h) {
  std::vector<Scored> v;
  while (!h.empty()) {
    v.push_back(h.top());
    h.pop();
  }
  std::reverse(v.begin(), v.end());
  return v;
}

struct Timer {
  cudaEvent_t start, stop;
  Timer() {
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~Timer() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
};

// Runs `setup` (untimed) and `body` (timed) warmup + reps times; returns the ms of each rep.
std::vector<double> TimeIt(const Options& o, cudaStream_t stream,
                           const std::function<void()>& setup, const std::function<void()>& body) {
  Timer t;
  std::vector<double> ms;
  for (int i = 0; i < o.warmup + o.reps; ++i) {
    setup();
    CUDA_CHECK(cudaEventRecord(t.start, stream));
    body();
    CUDA_CHECK(cudaEventRecord(t.stop, stream));
    CUDA_CHECK(cudaEventSynchronize(t.stop));
    CUDA_CHECK(cudaGetLastError());
    float e = 0;
    CUDA_CHECK(cudaEventElapsedTime(&e, t.start, t.stop));
    if (i >= o.warmup) ms.push_back(e);
  }
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) Die("no CUDA device");
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));

  const uint64_t n = o.rows;
  const uint32_t dim = o.dim, nq = o.queries, k = o.k;
  const uint32_t num_pages = static_cast<uint32_t>((n + kPageRows - 1) / kPageRows);
  const uint32_t sample_pages = std::min(o.sample_pages, num_pages);
  const uint32_t loose_pages = std::max(1u, sample_pages / 32);
  const uint32_t tiles = (nq + sieve::gpu::kQueryTileRows - 1) / sieve::gpu::kQueryTileRows;
  const uint32_t kCheckQueries[2] = {0, nq - 1};

  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  // --- data: pool, queries, filter; the host brute force for two queries on the way ---
  std::unique_ptr<sieve::gpu::PagePool> pool;
  Check(sieve::gpu::PagePool::Create(KeyType::kFloat16, dim, size_t{o.slab_mb} << 20, &pool),
        "PagePool::Create");
  std::vector<int32_t> pages;
  Check(pool->Allocate(num_pages, &pages), "PagePool::Allocate");

  std::vector<float> queries(size_t{nq} * dim);
  std::vector<_Float16> queries_h(queries.size());
  for (uint32_t r = 0; r < nq; ++r) {
    for (uint32_t d = 0; d < dim; ++d) {
      queries[size_t{r} * dim + d] = Value(7, r, d);
      queries_h[size_t{r} * dim + d] = static_cast<_Float16>(queries[size_t{r} * dim + d]);
    }
  }
  const uint64_t words = (n + 31) / 32;
  std::vector<uint32_t> bitset(words, 0);
  uint64_t kept = 0;
  for (uint64_t j = 0; j < n; ++j) {
    if (Keeps10Percent(j)) {
      bitset[j / 32] |= 1u << (j % 32);
      ++kept;
    }
  }

  TopHeap heaps[2][2];  // [check query][filtered]
  double qn[2];
  for (int c = 0; c < 2; ++c) {
    qn[c] = 0;
    for (uint32_t d = 0; d < dim; ++d) {
      const double v = queries[size_t{kCheckQueries[c]} * dim + d];
      qn[c] += v * v;
    }
  }
  {
    const uint64_t chunk = std::max<uint64_t>(1, (64ull << 20) / (size_t{dim} * 4));
    std::vector<float> rows(chunk * dim);
    std::vector<double> scores(2 * chunk);
    const unsigned threads = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
    const auto t0 = std::chrono::steady_clock::now();
    for (uint64_t first = 0; first < n; first += chunk) {
      const uint64_t m = std::min(chunk, n - first);
      std::vector<std::thread> pool_threads;
      for (unsigned t = 0; t < threads; ++t) {
        pool_threads.emplace_back([&, t] {
          for (uint64_t i = t; i < m; i += threads) {
            float* x = &rows[i * dim];
            double xn = 0, dot[2] = {0, 0};
            for (uint32_t d = 0; d < dim; ++d) {
              x[d] = Value(1, first + i, d);
              xn += double{x[d]} * x[d];
              dot[0] += double{x[d]} * queries[size_t{kCheckQueries[0]} * dim + d];
              dot[1] += double{x[d]} * queries[size_t{kCheckQueries[1]} * dim + d];
            }
            for (int c = 0; c < 2; ++c) scores[2 * i + c] = -(qn[c] + xn - 2 * dot[c]);
          }
        });
      }
      for (auto& th : pool_threads) th.join();
      for (uint64_t i = 0; i < m; ++i) {
        const uint64_t j = first + i;
        for (int c = 0; c < 2; ++c) {
          Push(&heaps[c][0], k, scores[2 * i + c], static_cast<int64_t>(j));
          if (Keeps10Percent(j)) Push(&heaps[c][1], k, scores[2 * i + c], static_cast<int64_t>(j));
        }
      }
      Check(pool->Write(pages, first, rows.data(), m, stream), "PagePool::Write");
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "generated and wrote %llu keys × %u (float16) in %.1f s; pool %.2f GB\n",
                 static_cast<unsigned long long>(n), dim, s, pool->device_bytes() / 1e9);
  }
  std::vector<Scored> host_top[2][2];
  for (int c = 0; c < 2; ++c) {
    for (int f = 0; f < 2; ++f) host_top[c][f] = Drain(heaps[c][f]);
  }

  // --- device inputs and outputs ---
  const uint32_t ref_k = 2 * k;  // the exact top-2k, for the thresholds of known quality
  DeviceBuffer<_Float16> d_queries(queries_h.size());
  d_queries.Upload(queries_h);
  DeviceBuffer<int32_t> d_table(num_pages);
  d_table.Upload(pages);
  DeviceBuffer<int32_t> d_tile_requests(tiles);
  d_tile_requests.Upload(std::vector<int32_t>(tiles, 0));
  DeviceBuffer<int32_t> d_row_ends(nq), d_sample_ends(nq), d_loose_ends(nq);
  d_row_ends.Upload(std::vector<int32_t>(nq, static_cast<int32_t>(n)));
  d_sample_ends.Upload(std::vector<int32_t>(
      nq, static_cast<int32_t>(std::min<uint64_t>(n, uint64_t{sample_pages} * kPageRows))));
  d_loose_ends.Upload(std::vector<int32_t>(
      nq, static_cast<int32_t>(std::min<uint64_t>(n, uint64_t{loose_pages} * kPageRows))));
  DeviceBuffer<uint32_t> d_bitset(words);
  d_bitset.Upload(bitset);
  DeviceBuffer<float> d_plus_inf(nq), d_thr(nq), d_thr_saved(nq), d_thr_sample(nq);
  d_thr_sample.Upload(std::vector<float>(nq, -kInf));  // (a) never repairs: stays -inf
  d_plus_inf.Upload(std::vector<float>(nq, kInf));
  const uint32_t sample_cap = sample_pages * kPageRows;
  DeviceBuffer<int32_t> d_counters(2 * nq), d_sample_counters(2 * nq);
  DeviceBuffer<int32_t> d_candidates(size_t{nq} * (k + o.capacity) * 2);
  DeviceBuffer<int32_t> d_sample_candidates(size_t{nq} * (k + sample_cap) * 2);
  DeviceBuffer<int32_t> d_ref_candidates(size_t{nq} * (2 * ref_k) * 2);
  DeviceBuffer<int32_t> d_arrivals(tiles), d_ranges(2 * nq);
  CUDA_CHECK(cudaMemset(d_arrivals.p, 0, tiles * sizeof(int32_t)));
  DeviceBuffer<int32_t> d_sample_keys(size_t{nq} * k), d_keys(size_t{nq} * k),
      d_ref_keys(size_t{nq} * ref_k);
  DeviceBuffer<float> d_sample_scores(size_t{nq} * k), d_scores(size_t{nq} * k),
      d_ref_scores(size_t{nq} * ref_k);
  CUDA_CHECK(cudaDeviceSynchronize());

  auto base_args = [&](bool filtered) {
    sieve::gpu::ThresholdSelectArgs a;
    a.keys = pool->view();
    a.metric = Metric::kL2;
    a.queries = d_queries.p;
    a.num_rows = nq;
    a.row_ends = d_row_ends.p;
    a.tile_requests = d_tile_requests.p;
    a.block_table = d_table.p;
    a.blocks_per_request = num_pages;
    a.max_context = static_cast<uint32_t>(n);
    a.filter = filtered ? d_bitset.p : nullptr;
    a.filter_stride = 0;
    a.top_k = k;
    return a;
  };
  // (a) over the first `pages_used` pages, thresholds -inf, no repair.
  auto sample_args = [&](bool filtered, uint32_t pages_used, const int32_t* ends) {
    sieve::gpu::ThresholdSelectArgs a = base_args(filtered);
    a.row_ends = ends;
    a.blocks_per_request = pages_used;
    a.max_context = static_cast<uint32_t>(std::min<uint64_t>(n, uint64_t{pages_used} * kPageRows));
    a.thresholds = d_thr_sample.p;
    a.counters = d_sample_counters.p;
    a.candidates = d_sample_candidates.p;
    a.capacity = pages_used * kPageRows;
    return a;
  };
  // (b) over every page with the repair on.
  auto full_args = [&](bool filtered) {
    sieve::gpu::ThresholdSelectArgs a = base_args(filtered);
    a.thresholds = d_thr.p;
    a.counters = d_counters.p;
    a.candidates = d_candidates.p;
    a.capacity = o.capacity;
    a.arrivals = d_arrivals.p;
    a.ranges = d_ranges.p;
    return a;
  };
  auto copy = [&](float* dst, const float* src) {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, nq * sizeof(float), cudaMemcpyDeviceToDevice, stream));
  };
  auto zero = [&](int32_t* p) {
    CUDA_CHECK(cudaMemsetAsync(p, 0, 2 * nq * sizeof(int32_t), stream));
  };
  auto stage_a = [&](bool filtered, uint32_t pages_used, const int32_t* ends) {
    Check(sieve::gpu::ThresholdSelect(sample_args(filtered, pages_used, ends), stream),
          "ThresholdSelect (sample)");
    Check(sieve::gpu::TopKFromCandidates(d_sample_candidates.p, d_sample_counters.p, nullptr,
                                         d_thr_sample.p, nq, k, pages_used * kPageRows, k,
                                         d_sample_keys.p, d_sample_scores.p, stream),
          "TopKFromCandidates (sample)");
    Check(sieve::gpu::ThresholdsFromTopK(d_sample_scores.p, nq, k, nullptr, d_thr.p, d_counters.p,
                                         stream),
          "ThresholdsFromTopK");
  };
  auto stage_b = [&](bool filtered) {
    Check(sieve::gpu::ThresholdSelect(full_args(filtered), stream), "ThresholdSelect");
  };
  auto stage_c = [&]() {
    Check(sieve::gpu::TopKFromCandidates(d_candidates.p, d_counters.p, d_ranges.p, d_thr.p, nq, k,
                                         o.capacity, k, d_keys.p, d_scores.p, stream),
          "TopKFromCandidates");
  };

  const double bytes = double(n) * dim * 2;
  const double flops = 2.0 * nq * double(n) * dim;
  const double bytes_floor_ms = bytes / kDatasheetBytesPerS * 1e3;
  const double flops_floor_ms = flops / kDatasheetFlopsPerS * 1e3;
  std::fprintf(stderr,
               "device %s; %llu keys × %u f16 (%u pages of %u), %u queries, k %u, l2, capacity "
               "%u, sample %u pages, kernel %s\n",
               prop.name, static_cast<unsigned long long>(n), dim, num_pages, kPageRows, nq, k,
               o.capacity, sample_pages, sieve::gpu::ThresholdSelectKernelName(pool->view()));
  std::fprintf(stderr,
               "floors: bytes %.3f GB / 4.8 TB/s = %.3f ms; flops %.3f TFLOP / 989 TFLOP/s = "
               "%.3f ms\n",
               bytes / 1e9, bytes_floor_ms, flops / 1e12, flops_floor_ms);
  std::fprintf(stderr, "%-8s %-22s %9s %9s %8s %8s %10s %10s %8s %s\n", "filter", "case",
               "median_ms", "min_ms", "GB/s", "TFLOP/s", "cand_mean", "cand_max", "repaired",
               "check");
  bool all_ok = true;

  for (bool filtered : {false, true}) {
    const char* fname = filtered ? "bitset10" : "none";
    const double pass = filtered ? double(kept) : double(n);
    auto report = [&](const std::string& name, const std::vector<double>& ms, bool full_pass,
                      double cand_mean, int64_t cand_max, int64_t repaired, const char* check) {
      const double med = Median(ms);
      const double mn = ms.empty() ? 0 : *std::min_element(ms.begin(), ms.end());
      const double gbps = full_pass ? bytes / (med * 1e-3) / 1e9 : 0;
      const double tflops = full_pass ? flops / (med * 1e-3) / 1e12 : 0;
      std::fprintf(stderr, "%-8s %-22s %9.3f %9.3f %8.0f %8.1f %10.1f %10lld %8lld %s\n", fname,
                   name.c_str(), med, mn, gbps, tflops, cand_mean, static_cast<long long>(cand_max),
                   static_cast<long long>(repaired), check);
      std::printf(
          "{\"bench\":\"threshold_select\",\"filter\":\"%s\",\"case\":\"%s\",\"rows\":%llu,"
          "\"dim\":%u,\"queries\":%u,\"k\":%u,\"capacity\":%u,\"sample_pages\":%u,"
          "\"passing\":%.0f,\"median_ms\":%.4f,\"min_ms\":%.4f,\"reps\":%zu,\"gbps\":%.1f,"
          "\"tflops\":%.2f,\"bytes_floor_ms\":%.4f,\"flops_floor_ms\":%.4f,"
          "\"cand_mean\":%.1f,\"cand_max\":%lld,\"repaired_rows\":%lld,\"check\":\"%s\"}\n",
          fname, name.c_str(), static_cast<unsigned long long>(n), dim, nq, k, o.capacity,
          sample_pages, pass, med, mn, ms.size(), gbps, tflops, bytes_floor_ms, flops_floor_ms,
          cand_mean, static_cast<long long>(cand_max), static_cast<long long>(repaired), check);
      std::fflush(stdout);
    };
    // Candidates per row (counters) and rows whose threshold (b) changed.
    auto stats = [&](const std::vector<float>& before, double* mean, int64_t* mx,
                     int64_t* repaired) {
      const std::vector<int32_t> cnt = d_counters.Download();
      const std::vector<float> after = d_thr.Download();
      *mean = 0;
      *mx = 0;
      *repaired = 0;
      for (uint32_t r = 0; r < nq; ++r) {
        *mean += cnt[2 * r];
        *mx = std::max<int64_t>(*mx, cnt[2 * r]);
        uint32_t a, b;
        std::memcpy(&a, &after[r], 4);
        std::memcpy(&b, &before[r], 4);
        *repaired += a != b;
      }
      *mean /= nq;
    };

    // The whole pipeline, then its result checked against the host brute force.
    auto pipeline = [&]() {
      zero(d_sample_counters.p);
      stage_a(filtered, sample_pages, d_sample_ends.p);
      stage_b(filtered);
      stage_c();
    };
    std::vector<double> ms = TimeIt(
        o, stream, [] {}, pipeline);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::vector<int32_t> keys = d_keys.Download();
    const std::vector<float> scores = d_scores.Download();
    bool ok = true;
    int keys_equal = 0;
    for (int c = 0; c < 2; ++c) {
      const uint32_t r = kCheckQueries[c];
      const std::vector<Scored>& want = host_top[c][filtered];
      ok &= want.size() == std::min<uint64_t>(k, filtered ? kept : n);
      // The host score of each returned key, recomputed from the generator.
      std::vector<double> got;
      std::vector<int64_t> got_keys;
      for (uint32_t i = 0; i < k; ++i) {
        const int32_t key = keys[size_t{r} * k + i];
        if (i >= want.size()) {
          ok &= key == -1;
          continue;
        }
        if (key < 0 || static_cast<uint64_t>(key) >= n || (filtered && !Keeps10Percent(key))) {
          std::fprintf(stderr, "  query %u rank %u: bad key %d\n", r, i, key);
          ok = false;
          continue;
        }
        double xn = 0, dot = 0;
        for (uint32_t d = 0; d < dim; ++d) {
          const double x = Value(1, key, d);
          xn += x * x;
          dot += x * queries[size_t{r} * dim + d];
        }
        const double host = -(qn[c] + xn - 2 * dot);
        // float32 accumulation bound: a few 1e-6 of the terms' magnitudes.
        const double tol = 2e-5 * (qn[c] + xn + 2 * std::sqrt(qn[c] * xn)) + 1e-4;
        if (!(std::fabs(scores[size_t{r} * k + i] - host) <= tol)) {
          std::fprintf(stderr, "  query %u rank %u key %d: score %.6f, host %.6f\n", r, i, key,
                       scores[size_t{r} * k + i], host);
          ok = false;
        }
        got.push_back(host);
        got_keys.push_back(key);
      }
      std::sort(got.rbegin(), got.rend());
      std::sort(got_keys.begin(), got_keys.end());
      ok &= std::adjacent_find(got_keys.begin(), got_keys.end()) == got_keys.end();
      std::vector<int64_t> want_keys;
      for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
        want_keys.push_back(want[i].second);
        if (!(std::fabs(got[i] - want[i].first) <= 1e-3)) {
          std::fprintf(stderr, "  query %u rank %zu: host score of returned %.6f, best %.6f\n", r,
                       i, got[i], want[i].first);
          ok = false;
        }
      }
      std::sort(want_keys.begin(), want_keys.end());
      keys_equal += want_keys == got_keys;
    }
    std::fprintf(stderr,
                 "  host brute force (2 queries, all keys): scores %s, key sets equal %d/2\n",
                 ok ? "match" : "MISMATCH", keys_equal);
    all_ok &= ok;
    const char* pipeline_check = ok ? "host_ok" : "HOST_MISMATCH";
    {
      std::vector<float> before(nq);
      CUDA_CHECK(cudaMemsetAsync(d_sample_counters.p, 0, 2 * nq * 4, stream));
      stage_a(filtered, sample_pages, d_sample_ends.p);
      CUDA_CHECK(cudaStreamSynchronize(stream));
      before = d_thr.Download();
      CUDA_CHECK(cudaMemcpy(d_thr_saved.p, d_thr.p, nq * 4, cudaMemcpyDeviceToDevice));
      stage_b(filtered);
      CUDA_CHECK(cudaStreamSynchronize(stream));
      double mean;
      int64_t mx, rep;
      stats(before, &mean, &mx, &rep);
      report("pipeline", ms, true, mean, mx, rep, pipeline_check);
      // (a) alone.
      ms = TimeIt(
          o, stream, [&] { zero(d_sample_counters.p); },
          [&] { stage_a(filtered, sample_pages, d_sample_ends.p); });
      report("a_sample_thresholds", ms, false, 0, 0, 0, "-");
      // (b) alone with the sample's thresholds; (c) alone after it.
      ms = TimeIt(
          o, stream,
          [&] {
            copy(d_thr.p, d_thr_saved.p);
            zero(d_counters.p);
          },
          [&] { stage_b(filtered); });
      report("b_select", ms, true, mean, mx, rep, "-");
      ms = TimeIt(
          o, stream, [] {}, stage_c);
      CUDA_CHECK(cudaStreamSynchronize(stream));
      report("c_topk", ms, false, 0, 0, 0, d_keys.Download() == keys ? "same" : "DIFFERENT");
    }

    // The exact top-2k (from +inf thresholds: every row repaired), for the thresholds of
    // known quality.
    {
      sieve::gpu::ThresholdSelectArgs a = full_args(filtered);
      a.top_k = ref_k;
      a.capacity = ref_k;
      a.candidates = d_ref_candidates.p;
      copy(d_thr.p, d_plus_inf.p);
      zero(d_counters.p);
      Check(sieve::gpu::ThresholdSelect(a, stream), "ThresholdSelect (reference)");
      Check(
          sieve::gpu::TopKFromCandidates(d_ref_candidates.p, d_counters.p, d_ranges.p, d_thr.p, nq,
                                         ref_k, ref_k, ref_k, d_ref_keys.p, d_ref_scores.p, stream),
          "TopKFromCandidates (reference)");
      CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    const std::vector<int32_t> ref_keys = d_ref_keys.Download();
    const std::vector<float> ref_scores = d_ref_scores.Download();
    bool ref_ok = true;
    for (uint32_t r = 0; r < nq; ++r) {
      for (uint32_t i = 0; i < k; ++i) {
        ref_ok &= ref_keys[size_t{r} * ref_k + i] == keys[size_t{r} * k + i];
      }
    }
    if (!ref_ok) {
      std::fprintf(stderr, "  the top-2k's first k differ from the pipeline's top-k\n");
      all_ok = false;
    }
    // Thresholds of each quality.
    std::vector<float> good(nq), loose2(nq), tight(nq, kInf);
    for (uint32_t r = 0; r < nq; ++r) {
      good[r] = ref_scores[size_t{r} * ref_k + k - 1];
      loose2[r] = ref_scores[size_t{r} * ref_k + ref_k - 1];
    }
    std::vector<float> far_loose;
    {
      CUDA_CHECK(cudaMemsetAsync(d_sample_counters.p, 0, 2 * nq * 4, stream));
      stage_a(filtered, loose_pages, d_loose_ends.p);
      CUDA_CHECK(cudaStreamSynchronize(stream));
      far_loose = d_thr.Download();
    }
    const std::pair<const char*, const std::vector<float>*> variants[] = {
        {"b_exact_kth", &good},
        {"b_2x_loose", &loose2},
        {"b_far_too_loose", &far_loose},
        {"b_far_too_tight", &tight}};
    for (const auto& [name, thr] : variants) {
      // The repairing cases re-sweep a tile in one CTA: far slower, so fewer reps.
      const bool repairs = thr == &far_loose || thr == &tight;
      if (repairs && o.repair_reps <= 0) continue;
      Options oo = o;
      if (repairs) {
        oo.reps = o.repair_reps;
        oo.warmup = 1;
      }
      d_thr_saved.Upload(*thr);
      ms = TimeIt(
          oo, stream,
          [&] {
            copy(d_thr.p, d_thr_saved.p);
            zero(d_counters.p);
          },
          [&] { stage_b(filtered); });
      double mean;
      int64_t mx, rep;
      // Counts of one more untimed run (the timed ones leave the same state).
      copy(d_thr.p, d_thr_saved.p);
      zero(d_counters.p);
      stage_b(filtered);
      CUDA_CHECK(cudaStreamSynchronize(stream));
      stats(*thr, &mean, &mx, &rep);
      stage_c();
      CUDA_CHECK(cudaStreamSynchronize(stream));
      const bool same = d_keys.Download() == keys;
      all_ok &= same;
      report(name, ms, true, mean, mx, rep, same ? "same_topk" : "DIFFERENT_TOPK");
    }
  }
  std::fprintf(stderr, "%s\n", all_ok ? "all checks passed" : "CHECKS FAILED");
  cudaStreamDestroy(stream);
  return all_ok ? 0 : 2;
}
