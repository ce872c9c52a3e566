// Copyright 2026 The Sieve Authors.

#include "query/cpu_executor.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <vector>

#include "query/topk.h"

namespace sieve {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Queries are handled in blocks of this many lanes: the selection pass and the SDDMM kernel
// use fixed-width inner loops that g++ -O2 vectorizes (its cheap cost model only vectorizes
// loops of known trip count).
// GCC clones function templates for each target; clang (14) clones only plain functions, so
// a clang build (the sanitized one) runs the templates' default version.
#if defined(__clang__)
#define SIEVE_TEMPLATE_CLONES
#else
#define SIEVE_TEMPLATE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif

constexpr uint32_t kLanes = 16;
// Rows per work item in the SDDMM path.
constexpr uint32_t kSddmmChunk = 256;
// Below this many multiply-adds per worker a thread costs more than it saves: a second worker
// may wait a scheduler slice for a core.
constexpr double kMinWorkPerThread = 1 << 23;
// The score tile is kept near this many floats (256 KiB: well inside L2).
constexpr uint32_t kTileFloats = 1 << 16;

inline bool TestBit(const uint32_t* bits, uint32_t o) { return (bits[o >> 5] >> (o & 31)) & 1u; }

// Everything a worker reads about one search.
struct Context {
  const float* vectors = nullptr;
  const float* sq_norms = nullptr;
  uint32_t rows = 0;
  uint32_t dim = 0;
  const float* queries = nullptr;
  uint32_t nq = 0;
  uint32_t ldc = 0;  // nq rounded up to kLanes: the row stride of every score tile
  uint32_t k = 0;
  Metric metric = Metric::kL2;
  std::vector<float> q_sq;   // ldc: |q|², 0 in padded lanes
  std::vector<float> q_inv;  // ldc: 1/|q| (0 for a zero query and padded lanes)
  std::vector<float> qt;     // [ldc / kLanes][dim][kLanes]: queries transposed, zero-padded
};

// What one worker owns.
struct Worker {
  std::vector<TopK> topk;     // one per query
  std::vector<float> worst;   // ldc: topk[q].worst_key(); -inf in padded lanes (never hit)
  std::vector<float> tile;    // tile_rows × ldc scores; padded lanes stay 0
  std::vector<uint8_t> hits;  // tile_rows: rows that may enter some query's top-k
  std::vector<float> block;   // gather: tile_rows × dim
  std::vector<float> norms;   // gather: tile_rows
  double gather_ms = 0, compute_ms = 0, select_ms = 0;

  Worker(const Context& c, size_t tile_rows, size_t block_rows)
      : worst(c.ldc, -std::numeric_limits<float>::infinity()),
        tile(tile_rows * c.ldc, 0.0f),
        hits(std::max(tile_rows, block_rows)),
        block(block_rows * c.dim),
        norms(block_rows) {
    topk.reserve(c.nq);
    for (uint32_t q = 0; q < c.nq; ++q) {
      topk.emplace_back(c.k, c.metric);
      worst[q] = topk[q].worst_key();
    }
  }
};

// Runs fn(worker_index, item) for item in [0, n_items) on `threads` threads (the caller is
// worker 0), handing items out dynamically so a busy core does not hold the others back. An
// exception thrown by fn (std::bad_alloc) stops the handing out, and is rethrown here once
// every thread has joined: leaving a std::thread by an exception would std::terminate.
template <typename Fn>
void ParallelFor(size_t threads, size_t n_items, Fn&& fn) {
  std::atomic<size_t> next{0};
  std::mutex error_mu;
  std::exception_ptr error;
  auto loop = [&](size_t w) {
    try {
      for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n_items;) fn(w, i);
    } catch (...) {
      next.store(n_items, std::memory_order_relaxed);
      std::lock_guard<std::mutex> l(error_mu);
      if (!error) error = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  try {
    pool.reserve(threads > 0 ? threads - 1 : 0);
    for (size_t w = 1; w < threads; ++w) pool.emplace_back(loop, w);
  } catch (const std::exception&) {
    // Fewer threads (none could be created, or memory ran out): the remaining items are still
    // taken by those running.
  }
  loop(0);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

size_t ChooseThreads(int configured, double work, size_t n_items) {
  size_t max_threads = configured > 0 ? configured : std::thread::hardware_concurrency();
  if (max_threads == 0) max_threads = 1;
  size_t by_work = static_cast<size_t>(work / kMinWorkPerThread);
  return std::max<size_t>(1, std::min({max_threads, by_work, n_items}));
}

template <Metric M>
inline float KeyOf(float dot, float q_sq, float q_inv, float x_sq, float x_inv) {
  if constexpr (M == Metric::kL2) {
    const float d = q_sq + x_sq - 2.0f * dot;
    return d > 0.0f ? d : 0.0f;
  } else if constexpr (M == Metric::kInnerProduct) {
    return -dot;
  } else {
    return 1.0f - dot * q_inv * x_inv;
  }
}

inline float InvNorm(float sq) { return sq > 0.0f ? 1.0f / std::sqrt(sq) : 0.0f; }

// Turns the dot products of `n` rows (row j at tile + j * ldc) into keys in place and sets
// hits[j] when some query's key is within its current k-th (a superset of the rows to offer:
// thresholds only tighten). Padded lanes stay finite (their query terms are 0) and never hit.
template <Metric M>
SIEVE_TEMPLATE_CLONES
void KeysAndHits(float* tile, size_t n, uint32_t ldc, const float* x_sq, const float* q_sq,
                 const float* q_inv, const float* worst, uint8_t* hits) {
  for (size_t j = 0; j < n; ++j) {
    float* kr = tile + j * ldc;
    const float xs = x_sq[j];
    const float xi = M == Metric::kCosine ? InvNorm(xs) : 0.0f;
    int any = 0;
    for (uint32_t b = 0; b < ldc; b += kLanes) {
      int hit = 0;
      for (uint32_t l = 0; l < kLanes; ++l) {
        const float key = KeyOf<M>(kr[b + l], q_sq[b + l], q_inv[b + l], xs, xi);
        kr[b + l] = key;
        hit |= key <= worst[b + l];
      }
      any |= hit;
    }
    hits[j] = static_cast<uint8_t>(any);
  }
}

// Converts a tile of dot products to keys and offers them to the worker's selectors.
// ordinal(j) maps a tile row to its shard ordinal and x_sq[j] is its squared norm. row_bits,
// when set, is a filter every query shares; query_bits[q], when set, is query q's own filter.
template <Metric M, typename OrdinalFn>
void SelectRows(const Context& c, Worker* w, float* tile, size_t n, const float* x_sq,
                OrdinalFn ordinal, const uint32_t* row_bits,
                const uint32_t* const* query_bits) {
  float* worst = w->worst.data();
  uint8_t* hits = w->hits.data();
  KeysAndHits<M>(tile, n, c.ldc, x_sq, c.q_sq.data(), c.q_inv.data(), worst, hits);
  for (size_t j = 0; j < n; ++j) {
    if (!hits[j]) continue;
    const uint32_t o = ordinal(j);
    if (row_bits != nullptr && !TestBit(row_bits, o)) continue;
    const float* keys = tile + j * c.ldc;
    for (uint32_t q = 0; q < c.nq; ++q) {
      if (keys[q] <= worst[q] && (query_bits == nullptr || TestBit(query_bits[q], o))) {
        w->topk[q].PushKey(keys[q], o);
        worst[q] = w->topk[q].worst_key();
      }
    }
  }
}

// out[r * ldc + l] = dot(x_r, query b*16 + l) for 4 rows and one block of kLanes queries
// (qt: that block, [dim][kLanes]). Broadcasting a row element against kLanes queries needs no
// horizontal sum, and four rows give four independent accumulator chains.
__attribute__((target_clones("avx512f", "avx2", "default")))
void DotRows4xLanes(const float* x0, const float* x1, const float* x2, const float* x3,
                    const float* qt, uint32_t dim, float* out, uint32_t ldc) {
  // Even and odd dimensions go to separate accumulators: eight independent add chains.
  float a0[kLanes] = {}, a1[kLanes] = {}, a2[kLanes] = {}, a3[kLanes] = {};
  float b0[kLanes] = {}, b1[kLanes] = {}, b2[kLanes] = {}, b3[kLanes] = {};
  uint32_t d = 0;
  for (; d + 2 <= dim; d += 2) {
    const float* qd = qt + static_cast<size_t>(d) * kLanes;
    const float* qe = qd + kLanes;
    const float v0 = x0[d], v1 = x1[d], v2 = x2[d], v3 = x3[d];
    const float w0 = x0[d + 1], w1 = x1[d + 1], w2 = x2[d + 1], w3 = x3[d + 1];
    for (uint32_t l = 0; l < kLanes; ++l) {
      a0[l] += v0 * qd[l];
      a1[l] += v1 * qd[l];
      a2[l] += v2 * qd[l];
      a3[l] += v3 * qd[l];
      b0[l] += w0 * qe[l];
      b1[l] += w1 * qe[l];
      b2[l] += w2 * qe[l];
      b3[l] += w3 * qe[l];
    }
  }
  if (d < dim) {
    const float* qd = qt + static_cast<size_t>(d) * kLanes;
    const float v0 = x0[d], v1 = x1[d], v2 = x2[d], v3 = x3[d];
    for (uint32_t l = 0; l < kLanes; ++l) {
      a0[l] += v0 * qd[l];
      a1[l] += v1 * qd[l];
      a2[l] += v2 * qd[l];
      a3[l] += v3 * qd[l];
    }
  }
  for (uint32_t l = 0; l < kLanes; ++l) {
    out[l] = a0[l] + b0[l];
    out[ldc + l] = a1[l] + b1[l];
    out[2 * ldc + l] = a2[l] + b2[l];
    out[3 * ldc + l] = a3[l] + b3[l];
  }
}

// out[r] = dot(q, x_r) for 4 rows, with kLanes partial sums along the dimension.
__attribute__((target_clones("avx512f", "avx2", "default")))
void DotQuery1x4(const float* q, const float* x0, const float* x1, const float* x2,
                 const float* x3, uint32_t dim, float* out) {
  float a0[kLanes] = {}, a1[kLanes] = {}, a2[kLanes] = {}, a3[kLanes] = {};
  uint32_t d = 0;
  for (; d + kLanes <= dim; d += kLanes) {
    for (uint32_t l = 0; l < kLanes; ++l) {
      const float qv = q[d + l];
      a0[l] += qv * x0[d + l];
      a1[l] += qv * x1[d + l];
      a2[l] += qv * x2[d + l];
      a3[l] += qv * x3[d + l];
    }
  }
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (uint32_t l = 0; l < kLanes; ++l) {
    s0 += a0[l];
    s1 += a1[l];
    s2 += a2[l];
    s3 += a3[l];
  }
  for (; d < dim; ++d) {
    s0 += q[d] * x0[d];
    s1 += q[d] * x1[d];
    s2 += q[d] * x2[d];
    s3 += q[d] * x3[d];
  }
  out[0] = s0;
  out[1] = s1;
  out[2] = s2;
  out[3] = s3;
}

// Dot products of n ≤ kSddmmChunk rows (given by ordinals) with every query into w->tile.
// Every row goes through the same kernel (a tail group repeats its last row and writes past
// n, inside the tile), so equal rows get bit-identical scores and ties stay exact.
void SddmmRows(const Context& c, Worker* w, const uint32_t* ords, size_t n) {
  float* tile = w->tile.data();
  const size_t dim = c.dim;
  // Few queries: padding them to a lane block would waste most of the broadcast kernel.
  const bool broadcast = c.nq >= kLanes / 2;
  for (size_t j = 0; j < n; j += 4) {
    const float* x[4];
    for (size_t r = 0; r < 4; ++r) x[r] = c.vectors + ords[std::min(j + r, n - 1)] * dim;
    if (broadcast) {
      for (uint32_t b = 0; b < c.ldc; b += kLanes) {
        DotRows4xLanes(x[0], x[1], x[2], x[3], c.qt.data() + static_cast<size_t>(b) * dim,
                       c.dim, tile + j * c.ldc + b, c.ldc);
      }
    } else {
      float out[4];
      for (uint32_t q = 0; q < c.nq; ++q) {
        DotQuery1x4(c.queries + q * dim, x[0], x[1], x[2], x[3], c.dim, out);
        for (size_t r = 0; r < 4; ++r) tile[(j + r) * c.ldc + q] = out[r];
      }
    }
  }
}

// Sorted per-query results from the workers' selectors.
void MergeWorkers(const Context& c, std::vector<Worker>& workers, ExecResult* result) {
  for (uint32_t q = 0; q < c.nq; ++q) {
    TopK& into = workers[0].topk[q];
    for (size_t w = 1; w < workers.size(); ++w) into.Merge(workers[w].topk[q]);
    into.AppendSorted(&result->neighbors[q]);
  }
}

void AddWorkerStages(const std::vector<Worker>& workers, const char* gather_name,
                     const char* compute_name, ExecResult* result) {
  double g = 0, cmp = 0, s = 0;
  for (const Worker& w : workers) {
    g += w.gather_ms;
    cmp += w.compute_ms;
    s += w.select_ms;
  }
  const double n = static_cast<double>(workers.size());
  if (gather_name != nullptr) result->stage_ms.emplace_back(gather_name, g / n);
  result->stage_ms.emplace_back(compute_name, cmp / n);
  result->stage_ms.emplace_back("select", s / n);
}

std::vector<Worker> MakeWorkers(const Context& c, size_t n, size_t tile_rows,
                                size_t block_rows) {
  std::vector<Worker> workers;
  workers.reserve(n);
  for (size_t i = 0; i < n; ++i) workers.emplace_back(c, tile_rows, block_rows);
  return workers;
}

// Ascending ordinals of `set` below `rows`.
std::vector<uint32_t> Enumerate(const RowSet& set, uint32_t rows) {
  std::vector<uint32_t> ords(set.Cardinality());
  set.ToArray(ords.data());
  ords.erase(std::lower_bound(ords.begin(), ords.end(), rows), ords.end());
  return ords;
}

// A dense bitset of `set` over [0, rows).
std::vector<uint32_t> Bitset(const RowSet& set, uint32_t rows) {
  const size_t n_words = (static_cast<size_t>(rows) + 31) / 32;
  std::vector<uint32_t> words(n_words);
  set.ToBitset(words.data(), n_words);
  if (rows % 32 != 0) words.back() &= (1u << (rows % 32)) - 1;
  return words;
}

// Per-query bitsets, shared between queries that point at the same RowSet.
void PerQueryBitsets(const BatchFilters& filters, uint32_t rows,
                     std::vector<std::vector<uint32_t>>* storage,
                     std::vector<const uint32_t*>* bits) {
  std::unordered_map<const RowSet*, size_t> seen;
  bits->resize(filters.sets.size());
  for (size_t q = 0; q < filters.sets.size(); ++q) {
    auto [it, inserted] = seen.emplace(filters.sets[q], storage->size());
    if (inserted) storage->push_back(Bitset(*filters.sets[q], rows));
    (*bits)[q] = (*storage)[it->second].data();
  }
}

uint32_t TileRows(const CpuExecutorOptions& o, uint32_t ldc) {
  uint32_t t = o.tile_rows != 0 ? o.tile_rows : std::max<uint32_t>(64, kTileFloats / ldc);
  return std::max<uint32_t>(32, t / 32 * 32);
}

template <Metric M>
void RunSddmm(const CpuExecutorOptions& opt, const Context& c, const BatchFilters& filters,
              ExecResult* result) {
  auto t0 = Clock::now();
  if (!filters.per_query()) {
    std::vector<uint32_t> ords = Enumerate(*filters.sets[0], c.rows);
    result->stage_ms.emplace_back("enumerate", MsSince(t0));
    const size_t items = (ords.size() + kSddmmChunk - 1) / kSddmmChunk;
    const size_t threads =
        ChooseThreads(opt.threads, static_cast<double>(ords.size()) * c.nq * c.dim, items);
    static_assert(kSddmmChunk % 4 == 0, "SddmmRows writes whole groups of 4 rows");
    std::vector<Worker> workers = MakeWorkers(c, threads, kSddmmChunk, 0);
    std::vector<float> x_sq(kSddmmChunk * threads);
    ParallelFor(threads, items, [&](size_t wi, size_t item) {
      Worker& w = workers[wi];
      const size_t begin = item * kSddmmChunk;
      const size_t n = std::min<size_t>(kSddmmChunk, ords.size() - begin);
      const uint32_t* o = ords.data() + begin;
      auto t1 = Clock::now();
      SddmmRows(c, &w, o, n);
      float* xs = x_sq.data() + wi * kSddmmChunk;
      for (size_t j = 0; j < n; ++j) xs[j] = c.sq_norms[o[j]];
      auto t2 = Clock::now();
      SelectRows<M>(c, &w, w.tile.data(), n, xs, [o](size_t j) { return o[j]; }, nullptr,
                    nullptr);
      w.compute_ms += std::chrono::duration<double, std::milli>(t2 - t1).count();
      w.select_ms += MsSince(t2);
    });
    AddWorkerStages(workers, nullptr, "sddmm", result);
    auto t3 = Clock::now();
    MergeWorkers(c, workers, result);
    result->stage_ms.emplace_back("merge", MsSince(t3));
    return;
  }

  // A filter per query: each query walks its own rows; work items are (query, chunk).
  std::vector<std::vector<uint32_t>> ords(c.nq);
  std::unordered_map<const RowSet*, uint32_t> seen;  // set → first query that uses it
  std::vector<size_t> first_item(c.nq + 1, 0);
  double pairs = 0;
  for (uint32_t q = 0; q < c.nq; ++q) {
    auto [it, inserted] = seen.emplace(filters.sets[q], q);
    ords[q] = inserted ? Enumerate(*filters.sets[q], c.rows) : ords[it->second];
    pairs += static_cast<double>(ords[q].size());
    first_item[q + 1] = first_item[q] + (ords[q].size() + kSddmmChunk - 1) / kSddmmChunk;
  }
  result->stage_ms.emplace_back("enumerate", MsSince(t0));
  const size_t items = first_item[c.nq];
  const size_t threads = ChooseThreads(opt.threads, pairs * c.dim, items);
  std::vector<Worker> workers = MakeWorkers(c, threads, 0, 0);
  ParallelFor(threads, items, [&](size_t wi, size_t item) {
    Worker& w = workers[wi];
    const uint32_t q =
        static_cast<uint32_t>(std::upper_bound(first_item.begin(), first_item.end(), item) -
                              first_item.begin() - 1);
    const size_t begin = (item - first_item[q]) * kSddmmChunk;
    const size_t n = std::min<size_t>(kSddmmChunk, ords[q].size() - begin);
    const uint32_t* o = ords[q].data() + begin;
    const float* qv = c.queries + static_cast<size_t>(q) * c.dim;
    const float qs = c.q_sq[q], qi = c.q_inv[q];
    TopK& topk = w.topk[q];
    auto t1 = Clock::now();
    float dots[4];
    for (size_t j = 0; j < n; j += 4) {
      const float* x[4];
      for (size_t r = 0; r < 4; ++r) {
        x[r] = c.vectors + static_cast<size_t>(o[std::min(j + r, n - 1)]) * c.dim;
      }
      DotQuery1x4(qv, x[0], x[1], x[2], x[3], c.dim, dots);
      for (size_t r = 0; r < 4 && j + r < n; ++r) {
        const float xs = c.sq_norms[o[j + r]];
        const float key =
            KeyOf<M>(dots[r], qs, qi, xs, M == Metric::kCosine ? InvNorm(xs) : 0.0f);
        topk.PushKey(key, o[j + r]);
      }
    }
    w.compute_ms += MsSince(t1);  // dots and selection are interleaved here
  });
  AddWorkerStages(workers, nullptr, "sddmm", result);
  auto t3 = Clock::now();
  MergeWorkers(c, workers, result);
  result->stage_ms.emplace_back("merge", MsSince(t3));
}

void Gemm(const Context& c, const float* rows, size_t n, float* tile) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n),
              static_cast<int>(c.nq), static_cast<int>(c.dim), 1.0f, rows,
              static_cast<int>(c.dim), c.queries, static_cast<int>(c.dim), 0.0f, tile,
              static_cast<int>(c.ldc));
}

template <Metric M>
void RunGather(const CpuExecutorOptions& opt, const Context& c, const BatchFilters& filters,
               ExecResult* result) {
  auto t0 = Clock::now();
  std::vector<uint32_t> ords;
  std::vector<std::vector<uint32_t>> bit_storage;
  std::vector<const uint32_t*> query_bits;
  if (!filters.per_query()) {
    ords = Enumerate(*filters.sets[0], c.rows);
    result->stage_ms.emplace_back("enumerate", MsSince(t0));
  } else {
    ords = filters.union_set != nullptr
               ? Enumerate(*filters.union_set, c.rows)
               : Enumerate(RowSet::Union(filters.sets.data(), filters.sets.size()), c.rows);
    result->stage_ms.emplace_back("enumerate", MsSince(t0));
    t0 = Clock::now();
    PerQueryBitsets(filters, c.rows, &bit_storage, &query_bits);
    result->stage_ms.emplace_back("bitset", MsSince(t0));
  }
  const uint32_t tile_rows = TileRows(opt, c.ldc);
  const size_t items = (ords.size() + tile_rows - 1) / tile_rows;
  const size_t threads =
      ChooseThreads(opt.threads, static_cast<double>(ords.size()) * c.nq * c.dim, items);
  std::vector<Worker> workers = MakeWorkers(c, threads, tile_rows, tile_rows);
  const uint32_t* const* qbits = filters.per_query() ? query_bits.data() : nullptr;
  ParallelFor(threads, items, [&](size_t wi, size_t item) {
    Worker& w = workers[wi];
    const size_t begin = item * tile_rows;
    const size_t n = std::min<size_t>(tile_rows, ords.size() - begin);
    const uint32_t* o = ords.data() + begin;
    auto t1 = Clock::now();
    float* block = w.block.data();
    for (size_t j = 0; j < n; ++j) {
      std::copy_n(c.vectors + static_cast<size_t>(o[j]) * c.dim, c.dim, block + j * c.dim);
      w.norms[j] = c.sq_norms[o[j]];
    }
    auto t2 = Clock::now();
    Gemm(c, block, n, w.tile.data());
    auto t3 = Clock::now();
    SelectRows<M>(c, &w, w.tile.data(), n, w.norms.data(), [o](size_t j) { return o[j]; },
                  nullptr, qbits);
    w.gather_ms += std::chrono::duration<double, std::milli>(t2 - t1).count();
    w.compute_ms += std::chrono::duration<double, std::milli>(t3 - t2).count();
    w.select_ms += MsSince(t3);
  });
  AddWorkerStages(workers, "gather", "gemm", result);
  auto t4 = Clock::now();
  MergeWorkers(c, workers, result);
  result->stage_ms.emplace_back("merge", MsSince(t4));
}

template <Metric M>
void RunDense(const CpuExecutorOptions& opt, const Context& c, const BatchFilters& filters,
              ExecResult* result) {
  auto t0 = Clock::now();
  // row_bits: the rows any query wants (null when every row passes for every query).
  std::vector<uint32_t> row_storage;
  const uint32_t* row_bits = nullptr;
  std::vector<std::vector<uint32_t>> bit_storage;
  std::vector<const uint32_t*> query_bits;
  bool filtered = false;
  if (!filters.per_query()) {
    if (filters.sets[0]->Cardinality() < c.rows || filters.sets[0]->End() > c.rows) {
      row_storage = Bitset(*filters.sets[0], c.rows);
      row_bits = row_storage.data();
      filtered = true;
    }
  } else {
    PerQueryBitsets(filters, c.rows, &bit_storage, &query_bits);
    filtered = true;
    if (bit_storage.size() > 1) {
      row_storage = bit_storage[0];
      for (size_t s = 1; s < bit_storage.size(); ++s) {
        for (size_t i = 0; i < row_storage.size(); ++i) row_storage[i] |= bit_storage[s][i];
      }
      row_bits = row_storage.data();
    } else {
      row_bits = bit_storage[0].data();
    }
  }
  if (filtered) result->stage_ms.emplace_back("bitset", MsSince(t0));
  const uint32_t tile_rows = TileRows(opt, c.ldc);
  const size_t items = (static_cast<size_t>(c.rows) + tile_rows - 1) / tile_rows;
  const size_t threads =
      ChooseThreads(opt.threads, static_cast<double>(c.rows) * c.nq * c.dim, items);
  std::vector<Worker> workers = MakeWorkers(c, threads, tile_rows, 0);
  const uint32_t* const* qbits = filters.per_query() ? query_bits.data() : nullptr;
  ParallelFor(threads, items, [&](size_t wi, size_t item) {
    Worker& w = workers[wi];
    const uint32_t begin = static_cast<uint32_t>(item) * tile_rows;
    const size_t n = std::min<size_t>(tile_rows, c.rows - begin);
    if (row_bits != nullptr) {
      // Skip a tile no query wants.
      bool any = false;
      for (size_t i = begin / 32; i < (begin + n + 31) / 32 && !any; ++i) any = row_bits[i] != 0;
      if (!any) return;
    }
    auto t1 = Clock::now();
    Gemm(c, c.vectors + static_cast<size_t>(begin) * c.dim, n, w.tile.data());
    auto t2 = Clock::now();
    SelectRows<M>(c, &w, w.tile.data(), n, c.sq_norms + begin,
                  [begin](size_t j) { return begin + static_cast<uint32_t>(j); }, row_bits,
                  qbits);
    w.compute_ms += std::chrono::duration<double, std::milli>(t2 - t1).count();
    w.select_ms += MsSince(t2);
  });
  AddWorkerStages(workers, nullptr, "gemm", result);
  auto t3 = Clock::now();
  MergeWorkers(c, workers, result);
  result->stage_ms.emplace_back("merge", MsSince(t3));
}

template <Metric M>
void Run(SearchPath path, const CpuExecutorOptions& opt, const Context& c,
         const BatchFilters& filters, ExecResult* result) {
  switch (path) {
    case SearchPath::kSddmm:
      return RunSddmm<M>(opt, c, filters, result);
    case SearchPath::kGather:
      return RunGather<M>(opt, c, filters, result);
    case SearchPath::kDense:
    case SearchPath::kAuto:
      return RunDense<M>(opt, c, filters, result);
  }
}

Status Validate(const ShardView& shard, const BatchFilters& filters,
                const ExecRequest& request) {
  SIEVE_RETURN_IF_ERROR(ValidateExecRequest(shard, filters, request));
  if (shard.rows > 0 && shard.sq_norms == nullptr) {
    return Status::InvalidArgument("shard view has no norms");
  }
  // Its one strategy; a request planned for nothing (kNone) takes it too.
  const TopKStrategy s = request.topk.strategy;
  if (s != TopKStrategy::kNone && s != TopKStrategy::kHeap) {
    return Status::InvalidArgument(std::string("the CPU executor selects the top-k with a heap; "
                                               "the request was planned for ") +
                                   TopKStrategyName(s));
  }
  return Status::OK();
}

// Capacity of a std::vector reserved to `reserved` after `size` push_backs (libstdc++ doubles).
uint64_t GrownCapacity(uint64_t reserved, uint64_t size) {
  uint64_t cap = std::max<uint64_t>(reserved, 1);
  while (cap < size) cap *= 2;
  return size == 0 ? reserved : cap;
}

// Everything Search allocates at once for this request, by the same sizes Run* choose. Worker
// heaps are counted as if every worker saw every passing row of every query; tiles, blocks and
// bitsets exactly; containers' own headers are included.
uint64_t CpuSearchBytes(const CpuExecutorOptions& opt, const ShardView& shard,
                        const BatchFilters& filters, const ExecRequest& request) {
  const uint64_t nq = request.num_queries, dim = shard.dim, rows = shard.rows, k = request.k;
  const bool per_query = filters.per_query();
  auto pass = [&](uint64_t q) {
    return std::min<uint64_t>(filters.passing_rows[per_query ? q : 0], rows);
  };
  bool any_pass = false;
  for (uint64_t q = 0; q < (per_query ? nq : 1); ++q) any_pass = any_pass || pass(q) > 0;
  // The result: one list per query, even when nothing runs.
  uint64_t result = nq * sizeof(std::vector<std::pair<uint32_t, float>>);
  uint64_t most_kept = 0;
  for (uint64_t q = 0; q < nq; ++q) {
    const uint64_t kept = std::min(k, pass(q));
    result += kept * sizeof(std::pair<uint32_t, float>);
    most_kept = std::max(most_kept, kept);
  }
  if (nq == 0 || rows == 0 || !any_pass) return result;

  const uint64_t ldc = (nq + kLanes - 1) / kLanes * kLanes;
  const uint64_t context = 2 * ldc * sizeof(float) + ldc * dim * sizeof(float);
  // Distinct sets (the per-query paths share the work of equal sets) and their counts.
  std::unordered_map<const RowSet*, uint64_t> distinct;
  for (size_t i = 0; i < filters.sets.size(); ++i) {
    distinct.emplace(filters.sets[i], std::min<uint64_t>(filters.passing_rows[i], rows));
  }
  uint64_t distinct_pass = 0;
  for (const auto& [set, n] : distinct) distinct_pass += n;
  const uint64_t map_bytes = distinct.size() * 64;
  const uint64_t bitset_bytes = (rows + 31) / 32 * sizeof(uint32_t) + sizeof(std::vector<uint32_t>);

  uint64_t path_bytes = 0, tile_rows = 0, block_rows = 0, threads = 1;
  const uint64_t tile = TileRows(opt, static_cast<uint32_t>(ldc));
  auto threads_for = [&](double work, uint64_t items) {
    return ChooseThreads(opt.threads, work, std::max<uint64_t>(items, 1));
  };
  switch (request.path) {
    case SearchPath::kSddmm:
      if (!per_query) {
        const uint64_t n = pass(0);
        path_bytes = n * sizeof(uint32_t);
        threads =
            threads_for(static_cast<double>(n) * nq * dim, (n + kSddmmChunk - 1) / kSddmmChunk);
        tile_rows = kSddmmChunk;
        path_bytes += kSddmmChunk * threads * sizeof(float);  // x_sq
      } else {
        uint64_t items = 0;
        double pairs = 0;
        for (uint64_t q = 0; q < nq; ++q) {
          items += (pass(q) + kSddmmChunk - 1) / kSddmmChunk;
          pairs += static_cast<double>(pass(q));
        }
        path_bytes = distinct_pass * sizeof(uint32_t) + nq * sizeof(std::vector<uint32_t>) +
                     map_bytes + (nq + 1) * sizeof(size_t);
        threads = threads_for(pairs * dim, items);
      }
      break;
    case SearchPath::kGather: {
      // Bitmap mode gathers the union, at most every row and at most the sum of the sets.
      const uint64_t n = per_query ? std::min(rows, distinct_pass) : pass(0);
      path_bytes = n * sizeof(uint32_t);
      if (per_query) {
        // The union as a Roaring set (at most a bitset's worth a 2^16-row container, plus
        // headers), then a bitset per distinct set.
        path_bytes += (rows + 65535) / 65536 * (8192 + 64) + distinct.size() * bitset_bytes +
                      nq * sizeof(uint32_t*) + map_bytes;
      }
      tile_rows = block_rows = tile;
      threads = threads_for(static_cast<double>(n) * nq * dim, (n + tile - 1) / tile);
      break;
    }
    case SearchPath::kDense:
    case SearchPath::kAuto:
      if (!per_query) {
        path_bytes = bitset_bytes;
      } else {
        path_bytes =
            distinct.size() * bitset_bytes + bitset_bytes + nq * sizeof(uint32_t*) + map_bytes;
      }
      tile_rows = tile;
      threads = threads_for(static_cast<double>(rows) * nq * dim, (rows + tile - 1) / tile);
      break;
  }

  uint64_t heaps = 0;
  const uint64_t reserved = std::min<uint64_t>(k, 1024);
  for (uint64_t q = 0; q < nq; ++q) {
    heaps += sizeof(TopK) + GrownCapacity(reserved, std::min(k, pass(q))) * 8;
  }
  const uint64_t worker = sizeof(Worker) + heaps + ldc * sizeof(float) +
                          tile_rows * ldc * sizeof(float) + std::max(tile_rows, block_rows) +
                          block_rows * dim * sizeof(float) + block_rows * sizeof(float);
  // Merging sorts one query's heap into a copy before appending it to the result.
  const uint64_t merge = most_kept * 8;
  return result + context + path_bytes + threads * (worker + sizeof(std::thread)) + merge;
}

}  // namespace

CpuExecutor::CpuExecutor(const CpuExecutorOptions& options) : options_(options) {
  if (options_.single_threaded_blas) openblas_set_num_threads(1);
}

uint64_t CpuExecutor::runs(SearchPath path) const {
  return runs_[static_cast<size_t>(path)].load(std::memory_order_relaxed);
}

Status CpuExecutor::EstimateMemory(const ShardView& shard, const BatchFilters& filters,
                                   const ExecRequest& request, MemoryEstimate* estimate) const {
  *estimate = MemoryEstimate();
  SIEVE_RETURN_IF_ERROR(Validate(shard, filters, request));
  estimate->host_bytes = CpuSearchBytes(options_, shard, filters, request);
  return Status::OK();
}

Status CpuExecutor::Search(const ShardView& shard, const BatchFilters& filters,
                           const ExecRequest& request, ExecResult* result) {
  SIEVE_RETURN_IF_ERROR(Validate(shard, filters, request));
  result->neighbors.assign(request.num_queries, {});
  result->select = TopKStrategyName(TopKStrategy::kHeap);
  result->products = ProductsName(Products::kFloat32);
  result->select_plan.clear();
  result->stage_ms.clear();
  try {
    bool any_pass = false;
    for (const RowSet* s : filters.sets) any_pass = any_pass || !s->Empty();
    if (request.num_queries > 0 && shard.rows > 0 && any_pass) {
      Context c;
      c.vectors = shard.vectors;
      c.sq_norms = shard.sq_norms;
      c.rows = shard.rows;
      c.dim = shard.dim;
      c.queries = request.queries;
      c.nq = request.num_queries;
      c.ldc = (c.nq + kLanes - 1) / kLanes * kLanes;
      c.k = request.k;
      c.metric = request.metric;
      c.q_sq.assign(c.ldc, 0.0f);
      c.q_inv.assign(c.ldc, 0.0f);
      c.qt.assign(static_cast<size_t>(c.ldc) * c.dim, 0.0f);
      for (uint32_t q = 0; q < c.nq; ++q) {
        const float* qv = c.queries + static_cast<size_t>(q) * c.dim;
        float s = 0;
        for (uint32_t d = 0; d < c.dim; ++d) {
          s += qv[d] * qv[d];
          c.qt[(static_cast<size_t>(q / kLanes) * c.dim + d) * kLanes + q % kLanes] = qv[d];
        }
        c.q_sq[q] = s;
        c.q_inv[q] = InvNorm(s);
      }
      switch (c.metric) {
        case Metric::kL2:
          Run<Metric::kL2>(request.path, options_, c, filters, result);
          break;
        case Metric::kInnerProduct:
          Run<Metric::kInnerProduct>(request.path, options_, c, filters, result);
          break;
        case Metric::kCosine:
          Run<Metric::kCosine>(request.path, options_, c, filters, result);
          break;
      }
    }
  } catch (const std::bad_alloc&) {
    result->neighbors.clear();
    return Status::ResourceExhausted("host memory exhausted during CPU search");
  } catch (const std::exception& e) {
    result->neighbors.clear();
    return Status::Internal(std::string("CPU search failed: ") + e.what());
  }
  runs_[static_cast<size_t>(request.path)].fetch_add(1, std::memory_order_relaxed);
  return Status::OK();
}

Status CpuExecutor::Profile(const ShardView& shard, const BatchFilters& filters,
                            const ExecRequest& request, const ProfileOptions& options,
                            ExecProfile* profile) {
  if (profile == nullptr) return Status::InvalidArgument("profile is null");
  if (options.warmup < 0 || options.reps < 1) {
    return Status::InvalidArgument("Profile needs warmup >= 0 and reps >= 1");
  }
  *profile = ExecProfile();
  for (int i = 0; i < options.warmup; ++i) {
    ExecResult r;
    SIEVE_RETURN_IF_ERROR(Search(shard, filters, request, &r));
  }
  for (int i = 0; i < options.reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    SIEVE_RETURN_IF_ERROR(Search(shard, filters, request, &profile->result));
    profile->ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return Status::OK();
}

}  // namespace sieve
