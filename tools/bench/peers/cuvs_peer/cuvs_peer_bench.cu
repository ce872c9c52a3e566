// Copyright 2026 The Sieve Authors.
//
// cuvs_peer_bench: the peer for gpu_paths_bench — cuVS's own filtered exact kNN
// (cuvs::neighbors::brute_force::build + search with a bitset_filter and a bitmap_filter) on the
// same data, timed the same way (CUDA events after warm-up, medians).
//
// Data (identical to tools/bench/gpu_paths_bench.cc, same generator and seeds): rows × dim values
// uniform in [-1, 1), float16-rounded (--dtype f32: float32); queries from seed 2 (rounded to
// float16 for f16 here, because a cuVS half index takes half queries); per case exactly
// `passing` rows chosen by the same Bernoulli-then-top-up rule. Default: 10M × 128 f16, 100
// queries, k = 64, L2 (L2Expanded, squared distances as Sieve's l2), fractions 0.0001 .. 1 plus
// 1,000 rows.
//
// Filters: "bitset" — one bit per row, shared by every query (the case Sieve's bench times);
// "bitmap" — one row of `rows` bits per query, tightly packed, where query q keeps its own random
// set of the same size (seed differs per query); "bitmap-same" — a bitmap whose every row is the
// bitset (same answer as the bitset, cost of the per-query layout). Both are LSB-first uint32
// words, 1 = keep, as cuVS requires.
//
// Timed per repetition on the handle's stream, with CUDA events:
//   search_ms  brute_force::search alone (filter and queries already on the device);
//   e2e_ms     upload of the filter and the queries from pinned memory + search + download of
//              the ids and distances — the same span gpu_paths_bench's device part covers.
// wall_ms is the host-side median of the whole repetition (cuVS syncs inside search to count
// the filter). Each case checks that every returned id passes its filter and, while the passing
// rows are few, that the best distance per query matches a CPU scan (double precision).
//
// Usage: cuvs_peer_bench [--rows N] [--dim D] [--queries Q] [--k K] [--warmup W] [--reps R]
//                        [--fractions 0.0001,...] [--extra-rows 1000,...]
//                        [--filters bitset,bitmap,bitmap-same] [--dtype f16|f32]
//                        [--pool async|none]
// Output: a table on stderr and one JSON line per (case, filter) on stdout.

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <cuvs/neighbors/brute_force.hpp>
#include <cuvs/neighbors/common.hpp>
#include <raft/core/bitmap.hpp>
#include <raft/core/bitset.hpp>
#include <raft/core/device_mdspan.hpp>
#include <raft/core/device_resources.hpp>
#include <raft/core/resource/cuda_stream.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>

#include "tools/bench/bench_data.h"

namespace {

#define CHECK_CUDA(call)                                                                    \
  do {                                                                                      \
    cudaError_t err_ = (call);                                                              \
    if (err_ != cudaSuccess) {                                                              \
      std::fprintf(stderr, "cuvs_peer_bench: %s failed: %s (%s:%d)\n", #call,             \
                   cudaGetErrorString(err_), __FILE__, __LINE__);                          \
      std::exit(3);                                                                         \
    }                                                                                       \
  } while (0)

struct Options : sieve::bench::SweepOptions {
  std::vector<std::string> filters = {"bitset", "bitmap"};
  std::string pool = "async";
  std::string dtype = "f16";
};

using sieve::bench::Mix;
using sieve::bench::ParallelFor;
using sieve::bench::Split;

[[noreturn]] void Usage(const std::string& msg) {
  std::fprintf(stderr, "cuvs_peer_bench: %s\n", msg.c_str());
  std::exit(1);
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage("missing value after " + a);
      return argv[++i];
    };
    if (sieve::bench::ParseSweepOption(a, value, &o)) continue;
    if (a == "--filters") {
      o.filters = Split(value());
      for (auto& f : o.filters) {
        if (f != "bitset" && f != "bitmap" && f != "bitmap-same") {
          Usage("--filters takes bitset,bitmap,bitmap-same");
        }
      }
    } else if (a == "--dtype") {
      o.dtype = value();
      if (o.dtype != "f16" && o.dtype != "f32") Usage("--dtype is f16 or f32");
    } else if (a == "--pool") {
      o.pool = value();
      if (o.pool != "async" && o.pool != "none") Usage("--pool is async or none");
    } else {
      Usage("unknown option " + a);
    }
  }
  if (o.reps < 1 || o.warmup < 0 || o.k == 0 || o.rows == 0 || o.queries == 0) {
    Usage("need --reps >= 1, --warmup >= 0 and non-zero rows, queries and k");
  }
  return o;
}

// Uniform [-1, 1) values as gpu_paths_bench's shard holds them: rounded to float16 (T = half),
// or float32.
float ToFloat(half x) { return __half2float(x); }
float ToFloat(float x) { return x; }
template <typename T>
std::vector<T> MakeVectors(size_t n, uint32_t dim, uint64_t seed) {
  std::vector<T> v(n * dim);
  ParallelFor(v.size(), [&](size_t i) { v[i] = T(sieve::bench::UniformValue(seed, i)); });
  return v;
}

// Exactly `n_pass` distinct rows (gpu_paths_bench's MakeBitset), set in `words` (LSB-first),
// starting at bit `base`. Returns the rows picked.
uint64_t FillBits(uint32_t rows, uint64_t n_pass, uint64_t seed, uint32_t* words, uint64_t base) {
  auto set = [&](uint64_t r) {
    const uint64_t b = base + r;
    words[b >> 5] |= uint32_t{1} << (b & 31);
  };
  // The same rows as gpu_paths_bench's filter (a row listed twice is set once).
  const std::vector<uint32_t> ords = sieve::bench::PassingRows(rows, n_pass, seed);
  for (uint32_t r : ords) set(r);
  return ords.size();
}

bool TestBit(const std::vector<uint32_t>& words, uint64_t b) {
  return (words[b >> 5] >> (b & 31)) & 1u;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Case {
  std::string filter;         // bitset | bitmap | bitmap-same
  std::vector<uint32_t> bits; // host copy, pinned copy made per case
  uint64_t bits_len = 0;      // logical length in bits
};

}  // namespace

template <typename T>
int Run(const Options& o) {
  int dev = 0;
  CHECK_CUDA(cudaSetDevice(dev));
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, dev));
  if (o.pool == "async") {
    // Stream-ordered pool that keeps freed memory: search allocates its workspaces per call.
    rmm::mr::set_current_device_resource(rmm::mr::cuda_async_memory_resource(
        std::nullopt, std::numeric_limits<std::size_t>::max()));
  }
  raft::device_resources res;
  cudaStream_t stream = raft::resource::get_cuda_stream(res).get();
  std::fprintf(stderr,
               "device %s; cuVS brute_force; %u rows x %u %s, %u queries, k=%u, warmup %d, "
               "reps %d, pool %s\n",
               prop.name, o.rows, o.dim, o.dtype.c_str(), o.queries, o.k, o.warmup, o.reps,
               o.pool.c_str());

  auto t0 = std::chrono::steady_clock::now();
  const std::vector<T> data = MakeVectors<T>(size_t{o.rows}, o.dim, 1);
  const std::vector<T> queries = MakeVectors<T>(o.queries, o.dim, 2);
  std::fprintf(stderr, "data generated in %.1f s\n",
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());

  const size_t n_data = size_t{o.rows} * o.dim;
  const size_t n_query = size_t{o.queries} * o.dim;
  const size_t n_out = size_t{o.queries} * o.k;
  T* d_data = nullptr;
  T* d_queries = nullptr;
  int64_t* d_ids = nullptr;
  float* d_dist = nullptr;
  CHECK_CUDA(cudaMalloc(&d_data, n_data * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&d_queries, n_query * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&d_ids, n_out * sizeof(int64_t)));
  CHECK_CUDA(cudaMalloc(&d_dist, n_out * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(d_data, data.data(), n_data * sizeof(T), cudaMemcpyHostToDevice));
  T* h_queries = nullptr;  // pinned, as Sieve uploads from pinned memory
  int64_t* h_ids = nullptr;
  float* h_dist = nullptr;
  CHECK_CUDA(cudaMallocHost(&h_queries, n_query * sizeof(T)));
  CHECK_CUDA(cudaMallocHost(&h_ids, n_out * sizeof(int64_t)));
  CHECK_CUDA(cudaMallocHost(&h_dist, n_out * sizeof(float)));
  std::memcpy(h_queries, queries.data(), n_query * sizeof(T));
  CHECK_CUDA(cudaMemcpy(d_queries, h_queries, n_query * sizeof(T), cudaMemcpyHostToDevice));

  cuvs::neighbors::brute_force::index_params index_params;
  index_params.metric = cuvs::distance::DistanceType::L2Expanded;
  auto data_view = raft::make_device_matrix_view<const T, int64_t>(d_data, o.rows, o.dim);
  auto h0 = std::chrono::steady_clock::now();
  auto index = cuvs::neighbors::brute_force::build(res, index_params, data_view);
  raft::resource::sync_stream(res);
  std::fprintf(stderr, "brute_force::build (norms) in %.1f ms\n",
               std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - h0)
                   .count());
  auto query_view =
      raft::make_device_matrix_view<const T, int64_t>(d_queries, o.queries, o.dim);
  auto ids_view = raft::make_device_matrix_view<int64_t, int64_t>(d_ids, o.queries, o.k);
  auto dist_view = raft::make_device_matrix_view<float, int64_t>(d_dist, o.queries, o.k);
  cuvs::neighbors::brute_force::search_params search_params;

  std::vector<uint64_t> counts;
  for (double f : o.fractions) counts.push_back(static_cast<uint64_t>(std::llround(f * o.rows)));
  for (uint64_t n : o.extra_rows) counts.push_back(n);

  cudaEvent_t ev[4];
  for (auto& e : ev) CHECK_CUDA(cudaEventCreate(&e));

  const uint64_t set_words = (uint64_t{o.rows} + 31) / 32;
  const uint64_t map_bits = uint64_t{o.queries} * o.rows;
  const uint64_t map_words = (map_bits + 31) / 32;
  std::fprintf(stderr, "%-10s %-10s %-12s %10s %10s %10s %10s %8s\n", "fraction", "passing",
               "filter", "search_ms", "s_min_ms", "e2e_ms", "wall_ms", "check");
  int failures = 0;
  for (uint64_t n_pass : counts) {
    n_pass = std::min<uint64_t>(n_pass, o.rows);
    for (const std::string& kind : o.filters) {
      Case c;
      c.filter = kind;
      const uint64_t seed = 3 + n_pass;  // gpu_paths_bench's seed for this case
      auto g0 = std::chrono::steady_clock::now();
      if (kind == "bitset") {
        c.bits.assign(set_words, 0);
        c.bits_len = o.rows;
        FillBits(o.rows, n_pass, seed, c.bits.data(), 0);
      } else {
        // Tightly packed rows (not word-aligned), so the per-query rows are filled one query at
        // a time into a private aligned buffer and then shifted in.
        c.bits.assign(map_words, 0);
        c.bits_len = map_bits;
        std::vector<std::vector<uint32_t>> per_query(o.queries);
        ParallelFor(o.queries, [&](size_t q) {
          per_query[q].assign(set_words, 0);
          const uint64_t qseed = kind == "bitmap-same" ? seed : seed ^ Mix(q + 1);
          FillBits(o.rows, n_pass, qseed, per_query[q].data(), 0);
        });
        for (uint32_t q = 0; q < o.queries; ++q) {
          const uint64_t base = uint64_t{q} * o.rows;
          const auto& w = per_query[q];
          for (uint64_t i = 0; i < set_words; ++i) {
            uint32_t v = w[i];
            while (v) {
              const int b = __builtin_ctz(v);
              v &= v - 1;
              const uint64_t bit = base + i * 32 + b;
              c.bits[bit >> 5] |= uint32_t{1} << (bit & 31);
            }
          }
        }
      }
      const double gen_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - g0).count();
      const size_t filter_bytes = c.bits.size() * sizeof(uint32_t);
      uint32_t* h_bits = nullptr;
      uint32_t* d_bits = nullptr;
      CHECK_CUDA(cudaMallocHost(&h_bits, filter_bytes));
      CHECK_CUDA(cudaMalloc(&d_bits, filter_bytes));
      std::memcpy(h_bits, c.bits.data(), filter_bytes);
      CHECK_CUDA(cudaMemcpy(d_bits, h_bits, filter_bytes, cudaMemcpyHostToDevice));

      auto run_search = [&]() {
        if (kind == "bitset") {
          cuvs::core::bitset_view<uint32_t, int64_t> view(d_bits, int64_t{o.rows});
          cuvs::neighbors::filtering::bitset_filter<uint32_t, int64_t> filter(view);
          cuvs::neighbors::brute_force::search(res, search_params, index, query_view, ids_view,
                                               dist_view, filter);
        } else {
          cuvs::core::bitmap_view<uint32_t, int64_t> view(d_bits, int64_t{o.queries},
                                                         int64_t{o.rows});
          cuvs::neighbors::filtering::bitmap_filter<uint32_t, int64_t> filter(view);
          cuvs::neighbors::brute_force::search(res, search_params, index, query_view, ids_view,
                                               dist_view, filter);
        }
      };

      std::vector<double> search_ms, e2e_ms, wall_ms;
      std::string error;
      try {
        for (int rep = 0; rep < o.warmup + o.reps; ++rep) {
          auto w0 = std::chrono::steady_clock::now();
          CHECK_CUDA(cudaEventRecord(ev[0], stream));
          CHECK_CUDA(cudaMemcpyAsync(d_bits, h_bits, filter_bytes, cudaMemcpyHostToDevice, stream));
          CHECK_CUDA(cudaMemcpyAsync(d_queries, h_queries, n_query * sizeof(T),
                                     cudaMemcpyHostToDevice, stream));
          CHECK_CUDA(cudaEventRecord(ev[1], stream));
          run_search();
          CHECK_CUDA(cudaEventRecord(ev[2], stream));
          CHECK_CUDA(cudaMemcpyAsync(h_ids, d_ids, n_out * sizeof(int64_t),
                                     cudaMemcpyDeviceToHost, stream));
          CHECK_CUDA(cudaMemcpyAsync(h_dist, d_dist, n_out * sizeof(float),
                                     cudaMemcpyDeviceToHost, stream));
          CHECK_CUDA(cudaEventRecord(ev[3], stream));
          CHECK_CUDA(cudaEventSynchronize(ev[3]));
          CHECK_CUDA(cudaGetLastError());
          const double wall = std::chrono::duration<double, std::milli>(
                                  std::chrono::steady_clock::now() - w0).count();
          if (rep < o.warmup) continue;
          float s = 0, e = 0;
          CHECK_CUDA(cudaEventElapsedTime(&s, ev[1], ev[2]));
          CHECK_CUDA(cudaEventElapsedTime(&e, ev[0], ev[3]));
          search_ms.push_back(s);
          e2e_ms.push_back(e);
          wall_ms.push_back(wall);
        }
      } catch (const std::exception& ex) {
        error = ex.what();
        for (char& ch : error) {
          if (ch == '"' || ch == '\\' || ch == '\n') ch = ' ';
        }
      }

      // Checks on the last repetition's output: every id passes its query's filter; with at most
      // 100k passing rows, the best distance per query (first two queries) matches a CPU scan.
      std::string check = error.empty() ? "ok" : "error";
      uint64_t bad_ids = 0, found = 0;
      if (error.empty()) {
        for (uint32_t q = 0; q < o.queries; ++q) {
          for (uint32_t j = 0; j < o.k; ++j) {
            const int64_t id = h_ids[size_t{q} * o.k + j];
            const float d = h_dist[size_t{q} * o.k + j];
            // Empty slot (fewer than k rows pass): cuVS leaves an out-of-range id or a
            // non-finite / max-float distance.
            if (id < 0 || id >= o.rows || !std::isfinite(d) ||
                d >= 0.5f * std::numeric_limits<float>::max()) {
              continue;
            }
            ++found;
            const uint64_t bit = (kind == "bitset" ? 0 : uint64_t{q} * o.rows) + id;
            if (!TestBit(c.bits, bit)) ++bad_ids;
          }
        }
        if (bad_ids) check = "BAD_IDS";
        if (n_pass <= 100000 && !bad_ids) {
          for (uint32_t q = 0; q < std::min<uint32_t>(2, o.queries); ++q) {
            double best = std::numeric_limits<double>::infinity();
            const uint64_t base = kind == "bitset" ? 0 : uint64_t{q} * o.rows;
            for (uint64_t w = 0; w < set_words; ++w) {
              for (int b = 0; b < 32; ++b) {
                const uint64_t r = w * 32 + b;
                if (r >= o.rows || !TestBit(c.bits, base + r)) continue;
                double acc = 0;
                for (uint32_t j = 0; j < o.dim; ++j) {
                  const double diff = double(ToFloat(data[r * o.dim + j])) -
                                      double(ToFloat(queries[size_t{q} * o.dim + j]));
                  acc += diff * diff;
                }
                best = std::min(best, acc);
              }
            }
            float got = std::numeric_limits<float>::infinity();
            for (uint32_t j = 0; j < o.k; ++j) got = std::min(got, h_dist[size_t{q} * o.k + j]);
            if (std::fabs(got - best) > 1e-2 * (1 + best)) check = "BAD_DIST";
          }
        }
      }
      if (check != "ok") ++failures;

      const double frac = static_cast<double>(n_pass) / o.rows;
      if (!error.empty()) {
        std::fprintf(stderr, "%-10g %-10llu %-12s failed: %s\n", frac,
                     static_cast<unsigned long long>(n_pass), kind.c_str(), error.c_str());
        std::printf("{\"peer\": \"cuvs\", \"passing\": %llu, \"filter\": \"%s\", "
                    "\"error\": \"%s\"}\n",
                    static_cast<unsigned long long>(n_pass), kind.c_str(), error.c_str());
      } else {
        const double s_med = Median(search_ms), e_med = Median(e2e_ms), w_med = Median(wall_ms);
        const double s_min = *std::min_element(search_ms.begin(), search_ms.end());
        std::fprintf(stderr, "%-10g %-10llu %-12s %10.4f %10.4f %10.4f %10.3f %8s\n", frac,
                     static_cast<unsigned long long>(n_pass), kind.c_str(), s_med, s_min, e_med,
                     w_med, check.c_str());
        std::printf(
            "{\"peer\": \"cuvs\", \"cuvs_version\": \"26.10\", \"rows\": %u, \"dim\": %u, "
            "\"dtype\": \"%s\", \"queries\": %u, \"k\": %u, \"metric\": \"l2\", "
            "\"passing\": %llu, \"fraction\": %g, \"filter\": \"%s\", \"search_ms\": %.5f, "
            "\"search_min_ms\": %.5f, \"e2e_ms\": %.5f, \"wall_ms\": %.3f, \"reps\": %d, "
            "\"filter_bytes\": %zu, \"filter_gen_s\": %.2f, \"results\": %llu, "
            "\"check\": \"%s\"}\n",
            o.rows, o.dim, o.dtype.c_str(), o.queries, o.k,
            static_cast<unsigned long long>(n_pass), frac,
            kind.c_str(), s_med, s_min, e_med, w_med, o.reps, filter_bytes, gen_s,
            static_cast<unsigned long long>(found), check.c_str());
      }
      std::fflush(stdout);
      CHECK_CUDA(cudaFree(d_bits));
      CHECK_CUDA(cudaFreeHost(h_bits));
    }
  }
  for (auto& e : ev) CHECK_CUDA(cudaEventDestroy(e));
  CHECK_CUDA(cudaFreeHost(h_queries));
  CHECK_CUDA(cudaFreeHost(h_ids));
  CHECK_CUDA(cudaFreeHost(h_dist));
  CHECK_CUDA(cudaFree(d_ids));
  CHECK_CUDA(cudaFree(d_dist));
  CHECK_CUDA(cudaFree(d_queries));
  CHECK_CUDA(cudaFree(d_data));
  return failures ? 2 : 0;
}

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  return o.dtype == "f32" ? Run<float>(o) : Run<half>(o);
}
