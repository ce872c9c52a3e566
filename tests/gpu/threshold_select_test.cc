// Copyright 2026 The Sieve Authors.
//
// The threshold select (gpu/threshold_select/threshold_select.h) against a float64 oracle computed from the
// values as stored: the slot contract (counters, ranges, candidate and tie slots, thresholds
// left alone or repaired), TopKFromCandidates against the oracle's top-k, and
// ThresholdsFromTopK. Two kinds of data: small integers, whose l2 and ip scores are exact in
// float32 so every count and score must equal the oracle's, and uniform random values,
// checked within the float32 accumulation bound. Covers float16, bfloat16 and float32 keys on
// both kernels ("mma" (with TMA or cp.async page copies) and "simt", asserted per case), the
// three metrics, top_k 1 .. 1024,
// capacity top_k - 1, ties past top_k, NaN keys, thresholds above and below every score,
// per-row row_ends, empty rows, several requests with permuted and shared pages in one launch,
// bitset and bitmap filters, the no-repair mode and a CUDA graph replay. Skipped without a
// CUDA device.

#if SIEVE_GPU_BACKEND

#include "gpu/page_pool.h"
#include "gpu/threshold_select/threshold_select.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "tests/testutil.h"

namespace sieve {
namespace {

using gpu::KeyType;
using gpu::kPageRows;
using gpu::kQueryTileRows;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr size_t kSlabBytes = 64 << 10;  // small, so every case spans several slabs

#define CUDA_OK(expr)                                                      \
  do {                                                                     \
    cudaError_t e_ = (expr);                                               \
    ASSERT_EQ(e_, cudaSuccess) << #expr << ": " << cudaGetErrorString(e_); \
  } while (0)

bool HaveDevice() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

// Whether the tensor-core kernel copies pages with TMA here: a build with sm_90 code and a compute
// capability 9 device. The pool's view then carries page maps (asserted through the kernel's
// name) unless the harness drops them (Harness::page_maps).
bool TmaApplies() {
  int dev = 0, major = 0;
  if (!gpu::ThresholdSelectHasTma() || cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) {
    return false;
  }
  return major == 9;
}

const char* TypeStr(KeyType t) {
  switch (t) {
    case KeyType::kFloat16:
      return "f16";
    case KeyType::kBFloat16:
      return "bf16";
    default:
      return "f32";
  }
}
const char* MetricStr(Metric m) {
  switch (m) {
    case Metric::kL2:
      return "l2";
    case Metric::kInnerProduct:
      return "ip";
    default:
      return "cosine";
  }
}

uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Round-to-nearest-even to bfloat16, returned as the float it represents.
float RoundBf16(float x) {
  if (std::isnan(x)) return BitsFloat(0x7fc00000u);
  uint32_t u = FloatBits(x);
  u += 0x7fffu + ((u >> 16) & 1u);
  return BitsFloat(u & 0xffff0000u);
}

float RoundTo(KeyType t, float x) {
  switch (t) {
    case KeyType::kFloat16:
      return static_cast<float>(static_cast<_Float16>(x));
    case KeyType::kBFloat16:
      return RoundBf16(x);
    default:
      return x;
  }
}

// Values already representable in `t` → their device bytes.
std::vector<uint8_t> ToDeviceBytes(KeyType t, const std::vector<float>& v) {
  std::vector<uint8_t> out(v.size() * gpu::KeyTypeBytes(t));
  for (size_t i = 0; i < v.size(); ++i) {
    if (t == KeyType::kFloat32) {
      std::memcpy(&out[4 * i], &v[i], 4);
    } else if (t == KeyType::kFloat16) {
      _Float16 h = static_cast<_Float16>(v[i]);
      std::memcpy(&out[2 * i], &h, 2);
    } else {
      uint16_t b = static_cast<uint16_t>(FloatBits(RoundBf16(v[i])) >> 16);
      std::memcpy(&out[2 * i], &b, 2);
    }
  }
  return out;
}

// A device buffer of n T's (freed by the destructor).
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t n) { Resize(n); }
  ~DeviceBuffer() { Reset(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void Resize(size_t n) {
    Reset();
    n_ = n;
    if (n > 0 && cudaMalloc(reinterpret_cast<void**>(&p_), n * sizeof(T)) != cudaSuccess) {
      p_ = nullptr;
      n_ = 0;
      ADD_FAILURE() << "cudaMalloc of " << n * sizeof(T) << " bytes failed";
    }
  }
  void Reset() {
    if (p_ != nullptr) cudaFree(p_);
    p_ = nullptr;
    n_ = 0;
  }
  void Upload(const std::vector<T>& v) {
    Resize(v.size());
    if (!v.empty()) {
      EXPECT_EQ(cudaMemcpy(p_, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice),
                cudaSuccess);
    }
  }
  std::vector<T> Download() const {
    std::vector<T> v(n_);
    if (n_ > 0) {
      EXPECT_EQ(cudaMemcpy(v.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    }
    return v;
  }
  void Fill(uint8_t byte, cudaStream_t stream) {
    if (n_ > 0) {
      EXPECT_EQ(cudaMemsetAsync(p_, byte, n_ * sizeof(T), stream), cudaSuccess);
    }
  }
  T* get() const { return p_; }
  size_t size() const { return n_; }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
};

enum class FilterKind { kNone, kBitset, kBitmap };

struct OracleEntry {
  int32_t key;
  double score;  // NaN for a key with a NaN component
  double tol;    // bound on |kernel score - score|
};

// One ThresholdSelect problem: a pool, queries, requests, filter and thresholds; the float64
// oracle; the device run; and the checks. Tests set the public fields, call Build(), then
// adjust per-row fields, then Oracle(), Run(), Check().
class Harness {
 public:
  // --- configuration ---
  KeyType type = KeyType::kFloat16;
  uint32_t dim = 128;
  Metric metric = Metric::kL2;
  bool integer = true;  // small-integer data (exact l2/ip scores) or uniform [-1, 1)
  uint64_t seed = 1;
  uint32_t pool_pages = 16;
  // Applied to pool row i (in write order) and to query row r before rounding to `type`.
  std::function<void(uint32_t, float*)> edit_key;
  std::function<void(uint32_t, float*)> edit_query;
  uint32_t num_rows = 200;
  uint32_t num_requests = 1;
  uint32_t blocks_per_request = 0;  // 0: pool_pages
  FilterKind filter = FilterKind::kNone;
  double pass_fraction = 0.7;
  bool use_scales = false;
  bool use_sq_norms = false;
  uint32_t top_k = 16;
  uint32_t capacity = 32;
  uint32_t k = 0;  // for TopKFromCandidates; 0: top_k
  bool repair = true;
  // The pool's page maps are passed on (TMA copies where they apply); false: cp.async copies.
  bool page_maps = true;

  // --- filled by Build(), adjustable before Oracle() ---
  std::vector<std::vector<int32_t>> tables;  // per request, blocks_per_request pages
  std::vector<int32_t> tile_requests;
  std::vector<int32_t> row_ends;
  uint32_t max_context = 0;
  std::vector<uint32_t> filter_words;
  int64_t filter_stride = 0;
  std::vector<float> query_scales, query_sq_norms;
  std::vector<float> queries;  // num_rows × dim, as stored
  std::vector<float> thresholds;

  // --- device state (kept for the graph test) ---
  std::unique_ptr<gpu::PagePool> pool;
  cudaStream_t stream = nullptr;
  DeviceBuffer<uint8_t> d_queries;
  DeviceBuffer<float> d_scales, d_sq_norms, d_thresholds, d_thresholds_in, d_out_scores;
  DeviceBuffer<int32_t> d_row_ends, d_tile_requests, d_table, d_counters, d_candidates, d_arrivals,
      d_ranges, d_out_keys;
  DeviceBuffer<uint32_t> d_filter;

  // --- results of the last Run() ---
  std::vector<float> thresholds_out, out_scores;
  std::vector<int32_t> counters, candidates, ranges, out_keys;
  bool ran_topk = false;

  Harness() { EXPECT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess); }
  ~Harness() {
    if (stream != nullptr) cudaStreamDestroy(stream);
  }

  bool exact() const { return integer && metric != Metric::kCosine; }
  uint32_t kk() const { return k == 0 ? top_k : k; }
  uint32_t tiles() const { return (num_rows + kQueryTileRows - 1) / kQueryTileRows; }
  const float* KeyRow(int32_t page, uint32_t slot) const {
    return &key_rows_[(size_t{page_index_.at(page)} * kPageRows + slot) * dim];
  }
  const float* Key(uint32_t r, int32_t j) const {
    const auto& t = tables[tile_requests[r / kQueryTileRows]];
    return KeyRow(t[j / kPageRows], j % kPageRows);
  }
  bool Passes(uint32_t r, int32_t j) const {
    if (filter == FilterKind::kNone) return true;
    const uint32_t w = filter_words[r * filter_stride + j / 32];
    return (w >> (j % 32)) & 1u;
  }

  void Build() {
    std::mt19937_64 rng(seed);
    if (blocks_per_request == 0) blocks_per_request = pool_pages;
    // Pages: a first batch, two of them released and taken again by the second batch.
    ASSERT_TRUE(gpu::PagePool::Create(type, dim, kSlabBytes, &pool).ok());
    std::vector<int32_t> first;
    const uint32_t n1 = pool_pages / 2 + 2;
    ASSERT_TRUE(pool->Allocate(n1, &first).ok());
    ASSERT_EQ(first.size(), n1);
    std::vector<int32_t> released(first.end() - 2, first.end());
    first.resize(n1 - 2);
    pool->Release(released);
    pages_ = first;
    ASSERT_TRUE(pool->Allocate(pool_pages - (n1 - 2), &pages_).ok());
    ASSERT_EQ(pages_.size(), pool_pages);
    EXPECT_EQ(pool->allocated_pages(), pool_pages);
    EXPECT_GE(pool->capacity_pages(), pool_pages);
    EXPECT_EQ(pool->type(), type);
    EXPECT_EQ(pool->dim(), dim);
    for (uint32_t i = 0; i < pool_pages; ++i) {
      ASSERT_TRUE(page_index_.emplace(pages_[i], i).second) << "page " << pages_[i] << " twice";
    }

    auto value = [&](std::mt19937_64& g) {
      if (integer) return static_cast<float>(static_cast<int>(g() % 7) - 3);
      return std::uniform_real_distribution<float>(-1.0f, 1.0f)(g);
    };
    const uint32_t nkeys = pool_pages * kPageRows;
    key_rows_.resize(size_t{nkeys} * dim);
    for (auto& v : key_rows_) v = value(rng);
    if (!integer && nkeys > 10) {  // an exact duplicate: two keys with one score
      std::copy_n(&key_rows_[size_t{3} * dim], dim, &key_rows_[size_t{9} * dim]);
    }
    for (uint32_t i = 0; i < nkeys; ++i) {
      if (edit_key) edit_key(i, &key_rows_[size_t{i} * dim]);
    }
    for (auto& v : key_rows_) v = RoundTo(type, v);
    // Written in two pieces, the second starting inside a page.
    const uint64_t split = std::min<uint64_t>(nkeys, 100);
    ASSERT_TRUE(pool->Write(pages_, 0, key_rows_.data(), split, stream).ok());
    ASSERT_TRUE(
        pool->Write(pages_, split, key_rows_.data() + split * dim, nkeys - split, stream).ok());

    queries.resize(size_t{num_rows} * dim);
    for (auto& v : queries) v = value(rng);
    for (uint32_t r = 0; r < num_rows; ++r) {
      if (edit_query) edit_query(r, &queries[size_t{r} * dim]);
    }
    for (auto& v : queries) v = RoundTo(type, v);

    // Requests: permutations of the pool's pages (request 0 in write order reversed).
    tables.assign(num_requests, {});
    for (uint32_t q = 0; q < num_requests; ++q) {
      std::vector<int32_t> perm = pages_;
      if (q == 0) {
        std::reverse(perm.begin(), perm.end());
      } else {
        std::shuffle(perm.begin(), perm.end(), rng);
      }
      for (uint32_t b = 0; b < blocks_per_request; ++b) tables[q].push_back(perm[b % perm.size()]);
    }
    tile_requests.assign(tiles(), 0);
    for (uint32_t t = 0; t < tiles(); ++t) tile_requests[t] = (t + 1) % num_requests;
    max_context = blocks_per_request * kPageRows;
    row_ends.assign(num_rows, static_cast<int32_t>(max_context));

    const uint32_t words = (max_context + 31) / 32;
    if (filter == FilterKind::kBitset) {
      filter_stride = 0;
      filter_words.assign(words, 0);
    } else if (filter == FilterKind::kBitmap) {
      filter_stride = words + 1;
      filter_words.assign(size_t{num_rows} * filter_stride, 0);
    }
    std::bernoulli_distribution pass(pass_fraction);
    for (auto& w : filter_words) {
      for (int b = 0; b < 32; ++b) w |= pass(rng) ? (1u << b) : 0u;
    }

    query_scales.clear();
    query_sq_norms.clear();
    if (use_scales) {
      for (uint32_t r = 0; r < num_rows; ++r) query_scales.push_back(r % 3 == 0 ? 2.0f : 0.5f);
    }
    if (use_sq_norms) {
      for (uint32_t r = 0; r < num_rows; ++r) {
        double s = use_scales ? query_scales[r] : 1.0;
        double acc = 0;
        for (uint32_t d = 0; d < dim; ++d)
          acc += double{queries[size_t{r} * dim + d]} * queries[size_t{r} * dim + d];
        query_sq_norms.push_back(static_cast<float>(s * s * acc));
      }
    }
    thresholds.assign(num_rows, -kInf);

    const bool mma = type != KeyType::kFloat32 && dim % 8 == 0 && dim <= 256;
    EXPECT_STREQ(gpu::ThresholdSelectKernelName(Keys()),
                 mma ? (TmaApplies() && page_maps ? "mma-tma" : "mma") : "simt");
  }

  // The pool's view, without its page maps unless page_maps.
  gpu::PagedKeys Keys() const {
    gpu::PagedKeys keys = pool->view();
    if (!page_maps) keys.page_maps = nullptr;
    return keys;
  }

  // The oracle rows: every visible passing key of each row with its float64 score.
  void Oracle() {
    oracle_.assign(num_rows, {});
    slot_of_.assign(num_rows, std::vector<int32_t>(max_context, -1));
    const double u = std::ldexp(1.0, -24) * (dim + 16);
    for (uint32_t r = 0; r < num_rows; ++r) {
      const float* q = &queries[size_t{r} * dim];
      const double s = query_scales.empty() ? 1.0 : query_scales[r];
      double qq = 0;
      for (uint32_t d = 0; d < dim; ++d) qq += double{q[d]} * q[d];
      const double qn = query_sq_norms.empty() ? s * s * qq : query_sq_norms[r];
      for (int32_t j = 0; j < row_ends[r]; ++j) {
        if (!Passes(r, j)) continue;
        const float* x = Key(r, j);
        double dot = 0, xn = 0, abs_dot = 0;
        for (uint32_t d = 0; d < dim; ++d) {
          dot += double{q[d]} * x[d];
          abs_dot += std::fabs(double{q[d]} * x[d]);
          xn += double{x[d]} * x[d];
        }
        dot *= s;
        abs_dot *= std::fabs(s);
        double score, tol;
        if (metric == Metric::kInnerProduct) {
          score = dot;
          tol = u * abs_dot;
        } else if (metric == Metric::kL2) {
          score = -(qn + xn - 2 * dot);
          tol = u * (2 * abs_dot + qn + xn);
        } else {
          score = (qn == 0 || xn == 0) ? -1.0 : dot / (std::sqrt(qn) * std::sqrt(xn)) - 1.0;
          tol = 3 * u * 2 + 1e-6;
        }
        if (exact()) tol = 0;
        slot_of_[r][j] = static_cast<int32_t>(oracle_[r].size());
        oracle_[r].push_back({j, score, tol});
      }
    }
  }

  size_t Passing(uint32_t r) const { return oracle_[r].size(); }

  // Scores of row r best first, NaN last.
  std::vector<double> Sorted(uint32_t r) const {
    std::vector<double> v;
    for (const auto& e : oracle_[r]) v.push_back(e.score);
    std::sort(v.begin(), v.end(), [](double a, double b) {
      if (std::isnan(a)) return false;
      if (std::isnan(b)) return true;
      return a > b;
    });
    return v;
  }
  // The n-th best non-NaN score of row r (n >= 1), -inf when it has fewer.
  float Kth(uint32_t r, size_t n) const {
    std::vector<double> v = Sorted(r);
    if (n == 0 || n > v.size() || std::isnan(v[n - 1])) return -kInf;
    return static_cast<float>(v[n - 1]);
  }
  double MaxTol(uint32_t r) const {
    double m = 0;
    for (const auto& e : oracle_[r]) m = std::max(m, e.tol);
    return m;
  }
  // Oracle candidates and ties of row r at threshold t (NaN scores are ties unless
  // include_nan is false: a repaired row with a real threshold leaves them out).
  std::pair<int64_t, int64_t> Counts(uint32_t r, float t, bool include_nan = true) const {
    int64_t c = 0, ties = 0;
    for (const auto& e : oracle_[r]) {
      const float s = static_cast<float>(e.score);
      if (std::isnan(s)) {
        if (include_nan) ++ties;
      } else if (s == t) {
        ++ties;
      } else if (s > t) {
        ++c;
      }
    }
    return {c, ties};
  }
  // Whether row r fits at t. Only real (not NaN) ties count towards fitting; for a row with
  // NaN keys the kernel counts the real ties among its stored tie slots, which depends on
  // which ties took the slots, so HasNaN rows are not predicted.
  bool FitsAt(uint32_t r, float t) const {
    // At -inf (fewer than K keys are not NaN) NaN keys fill the row.
    auto [c, ties] = Counts(r, t, t == -kInf);
    return c <= int64_t{capacity} &&
           c + std::min<int64_t>(ties, top_k) >= std::min<int64_t>(Passing(r), top_k);
  }
  bool HasNaN(uint32_t r) const {
    for (const auto& e : oracle_[r]) {
      if (std::isnan(e.score)) return true;
    }
    return false;
  }

  // Uploads every input (thresholds from `thresholds`) and sizes the outputs.
  void Upload() {
    d_queries.Upload(ToDeviceBytes(type, queries));
    d_scales.Upload(query_scales);
    d_sq_norms.Upload(query_sq_norms);
    d_row_ends.Upload(row_ends);
    d_tile_requests.Upload(tile_requests);
    std::vector<int32_t> flat;
    for (const auto& t : tables) flat.insert(flat.end(), t.begin(), t.end());
    d_table.Upload(flat);
    d_filter.Upload(filter_words);
    d_thresholds.Upload(thresholds);
    d_thresholds_in.Upload(thresholds);
    d_counters.Resize(size_t{num_rows} * 2);
    d_candidates.Resize(size_t{num_rows} * (top_k + capacity) * 2);
    if (d_arrivals.size() != tiles()) {
      d_arrivals.Resize(tiles());
      d_arrivals.Fill(0, stream);  // zeroed once; every call must leave it zeroed
    }
    d_ranges.Resize(size_t{num_rows} * 2);
    d_out_keys.Resize(size_t{num_rows} * kk());
    d_out_scores.Resize(size_t{num_rows} * kk());
  }

  gpu::ThresholdSelectArgs Args() const {
    gpu::ThresholdSelectArgs a;
    a.keys = Keys();
    a.metric = metric;
    a.queries = d_queries.get();
    a.num_rows = num_rows;
    a.query_scales = query_scales.empty() ? nullptr : d_scales.get();
    a.query_sq_norms = query_sq_norms.empty() ? nullptr : d_sq_norms.get();
    a.row_ends = d_row_ends.get();
    a.tile_requests = d_tile_requests.get();
    a.block_table = d_table.get();
    a.blocks_per_request = blocks_per_request;
    a.max_context = max_context;
    a.filter = filter == FilterKind::kNone ? nullptr : d_filter.get();
    a.filter_stride = filter_stride;
    a.thresholds = d_thresholds.get();
    a.counters = d_counters.get();
    a.candidates = d_candidates.get();
    a.top_k = top_k;
    a.capacity = capacity;
    a.arrivals = repair ? d_arrivals.get() : nullptr;
    a.ranges = repair ? d_ranges.get() : nullptr;
    return a;
  }

  Status TopK() const {
    return gpu::TopKFromCandidates(
        d_candidates.get(), d_counters.get(), repair ? d_ranges.get() : nullptr, d_thresholds.get(),
        num_rows, top_k, capacity, kk(), d_out_keys.get(), d_out_scores.get(), stream);
  }

  // Uploads, poisons the outputs, runs ThresholdSelect (and TopKFromCandidates when `topk`)
  // and downloads every result.
  void Run(bool topk, bool upload = true) {
    if (upload) Upload();
    if (::testing::Test::HasFatalFailure()) return;
    // A pageable cudaMemcpy may return before its DMA lands; `stream` does not wait on it.
    CUDA_OK(cudaDeviceSynchronize());
    d_counters.Fill(0, stream);
    d_candidates.Fill(0xA5, stream);
    d_ranges.Fill(0xA5, stream);
    d_out_keys.Fill(0x5A, stream);
    d_out_scores.Fill(0x5A, stream);
    Status st = gpu::ThresholdSelect(Args(), stream);
    ASSERT_TRUE(st.ok()) << st.ToString();
    if (topk) {
      st = TopK();
      ASSERT_TRUE(st.ok()) << st.ToString();
    }
    CUDA_OK(cudaStreamSynchronize(stream));
    CUDA_OK(cudaGetLastError());
    Download(topk);
  }

  void Download(bool topk) {
    ran_topk = topk;
    thresholds_out = d_thresholds.Download();
    counters = d_counters.Download();
    candidates = d_candidates.Download();
    ranges = d_ranges.Download();
    out_keys = d_out_keys.Download();
    out_scores = d_out_scores.Download();
    for (int32_t a : d_arrivals.Download()) {
      EXPECT_EQ(a, 0) << "arrivals left non-zero";
    }
  }

  // The slot contract for every row, and the top-k for every row that fits.
  void Check() {
    const uint32_t slots = top_k + capacity;
    for (uint32_t r = 0; r < num_rows; ++r) {
      SCOPED_TRACE("row " + std::to_string(r) + " passing " + std::to_string(Passing(r)) +
                   " row_end " + std::to_string(row_ends[r]));
      const float t0 = thresholds[r];
      const float t = thresholds_out[r];
      const bool changed = FloatBits(t) != FloatBits(t0);
      if (!repair) {
        EXPECT_FALSE(changed) << "threshold changed without repair";
      }
      if (exact() && repair && !HasNaN(r)) {
        EXPECT_EQ(changed, !FitsAt(r, t0)) << "t0 " << t0 << " t " << t;
      }
      // A row repaired at a real threshold leaves its NaN keys out.
      const auto [c, ties] = Counts(r, t, !changed || t == -kInf);
      int64_t lo, hi;
      const int64_t cnt_c = counters[2 * r], cnt_t = counters[2 * r + 1];
      if (!changed) {
        EXPECT_GE(cnt_c, 0);
        EXPECT_GE(cnt_t, 0);
      }
      if (repair) {
        lo = ranges[r];
        hi = ranges[num_rows + r];
        if (!changed) {
          EXPECT_EQ(lo, int64_t{top_k} - std::min<int64_t>(cnt_t, top_k));
          EXPECT_EQ(hi, int64_t{top_k} + std::min<int64_t>(cnt_c, capacity));
        }
      } else {
        lo = int64_t{top_k} - std::min<int64_t>(cnt_t, top_k);
        hi = int64_t{top_k} + std::min<int64_t>(cnt_c, capacity);
      }
      ASSERT_LE(0, lo);
      ASSERT_LE(lo, int64_t{top_k});
      ASSERT_LE(int64_t{top_k}, hi);
      ASSERT_LE(hi, int64_t{slots});
      if (exact()) {
        // A row with NaN keys may have been repaired at its own threshold (NaN ties had taken
        // the slots of real ones); it then holds its real ties only.
        const int64_t real_ties = Counts(r, t, false).second;
        const bool nan_dropped = HasNaN(r) && !changed && t != -kInf &&
                                 int64_t{top_k} - lo == std::min<int64_t>(real_ties, top_k);
        const int64_t want_ties = nan_dropped ? real_ties : ties;
        EXPECT_EQ(lo, int64_t{top_k} - std::min<int64_t>(want_ties, top_k)) << "t " << t;
        EXPECT_EQ(hi, int64_t{top_k} + std::min<int64_t>(c, capacity)) << "t " << t;
        if (!changed) {
          EXPECT_EQ(cnt_c, c) << "candidates at t " << t;
          EXPECT_EQ(cnt_t, want_ties) << "ties at t " << t;
        }
      }
      std::vector<char> seen(max_context, 0);
      for (int64_t slot = lo; slot < hi; ++slot) {
        const int32_t* p = &candidates[(size_t{r} * slots + slot) * 2];
        const int32_t key = p[0];
        const float stored = BitsFloat(static_cast<uint32_t>(p[1]));
        ASSERT_TRUE(key >= 0 && key < row_ends[r]) << "slot " << slot << " key " << key;
        EXPECT_TRUE(Passes(r, key)) << "filtered key " << key << " in slot " << slot;
        EXPECT_FALSE(seen[key]) << "key " << key << " in two slots";
        seen[key] = 1;
        const int32_t o = slot_of_[r][key];
        if (o < 0) continue;
        const OracleEntry& e = oracle_[r][o];
        const float decoded = gpu::DecodeScore(stored, t);
        if (slot >= top_k) {
          EXPECT_GT(decoded, t) << "candidate slot " << slot << " key " << key;
        } else {
          EXPECT_TRUE(decoded == t || std::isnan(decoded))
              << "tie slot " << slot << " key " << key << " score " << decoded << " t " << t;
        }
        if (std::isnan(e.score)) {
          EXPECT_TRUE(std::isnan(decoded)) << "key " << key;
        } else {
          EXPECT_LE(std::fabs(double{decoded} - e.score), e.tol)
              << "slot " << slot << " key " << key << " kernel " << decoded;
        }
      }
      const bool fits = exact() ? FitsAt(r, t) : true;
      if (repair && exact()) {
        EXPECT_TRUE(fits) << "row does not fit after the repair";
      }
      if (ran_topk && fits) CheckTopK(r);
    }
  }

  void CheckTopK(uint32_t r) {
    const uint32_t k = kk();
    const size_t n = std::min<size_t>(Passing(r), k);
    std::vector<char> seen(max_context, 0);
    std::vector<double> got;
    for (uint32_t i = 0; i < k; ++i) {
      const int32_t key = out_keys[size_t{r} * k + i];
      const float s = out_scores[size_t{r} * k + i];
      if (i >= n) {
        EXPECT_EQ(key, -1) << "position " << i << " past the row's " << n << " keys";
        EXPECT_EQ(s, -kInf) << "position " << i;
        continue;
      }
      ASSERT_TRUE(key >= 0 && key < row_ends[r]) << "position " << i << " key " << key;
      EXPECT_TRUE(Passes(r, key)) << "filtered key " << key << " returned";
      EXPECT_FALSE(seen[key]) << "key " << key << " returned twice";
      seen[key] = 1;
      const int32_t o = slot_of_[r][key];
      ASSERT_GE(o, 0);
      const OracleEntry& e = oracle_[r][o];
      if (std::isnan(e.score)) {
        EXPECT_TRUE(std::isnan(s)) << "key " << key;
      } else {
        EXPECT_LE(std::fabs(double{s} - e.score), e.tol) << "key " << key << " kernel " << s;
      }
      got.push_back(e.score);
      if (i > 0 && !std::isnan(s)) {
        const float prev = out_scores[size_t{r} * k + i - 1];
        EXPECT_FALSE(std::isnan(prev)) << "NaN before a real score at " << i;
        EXPECT_GE(prev, s) << "not best first at " << i;
        if (prev == s) {
          EXPECT_LT(out_keys[size_t{r} * k + i - 1], key) << "equal scores not by key at " << i;
        }
      }
    }
    std::sort(got.begin(), got.end(), [](double a, double b) {
      if (std::isnan(a)) return false;
      if (std::isnan(b)) return true;
      return a > b;
    });
    const std::vector<double> want = Sorted(r);
    const double tol = 2 * MaxTol(r);
    for (size_t i = 0; i < got.size(); ++i) {
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(got[i])) << "rank " << i;
      } else {
        EXPECT_FALSE(std::isnan(got[i])) << "a NaN key displaced a real one at rank " << i;
        EXPECT_LE(std::fabs(got[i] - want[i]), tol)
            << "rank " << i << " got " << got[i] << " want " << want[i];
      }
    }
  }

  // Row ends spread over [0, max_context] (some 0, some max_context).
  void RandomRowEnds(std::mt19937_64& rng) {
    for (uint32_t r = 0; r < num_rows; ++r) {
      switch (r % 6) {
        case 0:
          row_ends[r] = max_context;
          break;
        case 1:
          row_ends[r] = 0;
          break;
        case 2:
          row_ends[r] = static_cast<int32_t>(rng() % 40);
          break;  // fewer than top_k
        default:
          row_ends[r] = static_cast<int32_t>(rng() % (max_context + 1));
          break;
      }
    }
  }

  // Per-row thresholds of every kind: exact k-th best, 2k-th best, below and above every
  // score, and the k-th best nudged up or down.
  void MixedThresholds() {
    for (uint32_t r = 0; r < num_rows; ++r) {
      switch (r % 6) {
        case 0:
          thresholds[r] = Kth(r, top_k);
          break;
        case 1:
          thresholds[r] = Kth(r, 2 * top_k);
          break;
        case 2:
          thresholds[r] = -kInf;
          break;
        case 3:
          thresholds[r] = 3.0e38f;
          break;
        case 4:
          thresholds[r] = kInf;
          break;
        default: {
          const float kth = Kth(r, top_k);
          thresholds[r] = kth == -kInf ? -1.0e30f : kth + (r % 4 == 1 ? 0.5f : -0.5f);
        }
      }
    }
  }

  // The usual round after Build(): the oracle, mixed thresholds, one launch with the final
  // top-k, and every check (skipped after a fatal failure in the launch).
  void RunMixedAndCheck() {
    Oracle();
    MixedThresholds();
    Run(true);
    if (::testing::Test::HasFatalFailure()) return;
    Check();
  }

 private:
  std::vector<int32_t> pages_;
  std::unordered_map<int32_t, uint32_t> page_index_;
  std::vector<float> key_rows_;  // pool rows in write order, as stored
  std::vector<std::vector<OracleEntry>> oracle_;
  std::vector<std::vector<int32_t>> slot_of_;  // [row][key] → index in oracle_[row], or -1
};

class ThresholdSelectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveDevice()) GTEST_SKIP() << "no CUDA device";
  }
};

// --- the sweep over key type × dim × metric, on both kinds of data ---

using SweepParam = std::tuple<KeyType, uint32_t, Metric>;

class ThresholdSelectSweep : public ::testing::TestWithParam<SweepParam> {
 protected:
  void SetUp() override {
    if (!HaveDevice()) GTEST_SKIP() << "no CUDA device";
  }
};

void RunSweepCase(KeyType type, uint32_t dim, Metric metric, bool page_maps = true) {
  const uint32_t index =
      static_cast<uint32_t>(dim * 7 + static_cast<int>(type) * 3 + static_cast<int>(metric));
  constexpr uint32_t kTopKs[] = {1, 16, 64};
  for (bool integer : {true, false}) {
    SCOPED_TRACE(std::string(integer ? "integer" : "random") + " " + TypeStr(type) + " dim " +
                 std::to_string(dim) + " " + MetricStr(metric));
    Harness h;
    h.type = type;
    h.dim = dim;
    h.metric = metric;
    h.integer = integer;
    h.seed = index * 2 + integer;
    h.pool_pages = dim > 128 ? 10 : 16;
    h.blocks_per_request = h.pool_pages + 2;  // entries past the context repeat pages
    h.num_rows = 200;
    h.num_requests = 2;
    h.filter = static_cast<FilterKind>(index % 3);
    h.top_k = kTopKs[(index + integer) % 3];
    const uint32_t caps[] = {h.top_k - 1, 2 * h.top_k, h.top_k + 7};
    h.capacity = caps[(index / 3 + integer) % 3];
    h.use_scales = index % 4 == 1;
    h.use_sq_norms = index % 5 == 2;
    h.page_maps = page_maps;
    if (metric == Metric::kCosine) {  // a zero key and a zero query: score -1
      h.edit_key = [dim](uint32_t i, float* v) {
        if (i == 5) std::fill_n(v, dim, 0.0f);
      };
      h.edit_query = [dim](uint32_t r, float* v) {
        if (r == 7) std::fill_n(v, dim, 0.0f);
      };
    }
    h.Build();
    ASSERT_FALSE(::testing::Test::HasFatalFailure());
    h.max_context = h.pool_pages * kPageRows - 37;
    std::mt19937_64 rng(h.seed);
    h.RandomRowEnds(rng);
    h.RunMixedAndCheck();
  }
}

TEST_P(ThresholdSelectSweep, MixedThresholdsAndFilters) {
  const auto [type, dim, metric] = GetParam();
  RunSweepCase(type, dim, metric);
}

// The same cases on the tensor-core kernel copying pages with cp.async (keys without page maps)
// where it would copy them with TMA: the same swizzled stages, written by the other path.
TEST_P(ThresholdSelectSweep, MixedThresholdsAndFiltersCpAsync) {
  const auto [type, dim, metric] = GetParam();
  if (type == KeyType::kFloat32 || dim % 8 != 0 || dim > 256 || !TmaApplies()) {
    GTEST_SKIP() << "no TMA copies here: MixedThresholdsAndFilters covers the cp.async ones";
  }
  RunSweepCase(type, dim, metric, /*page_maps=*/false);
}

std::string SweepName(const ::testing::TestParamInfo<SweepParam>& info) {
  return std::string(TypeStr(std::get<0>(info.param))) + "_d" +
         std::to_string(std::get<1>(info.param)) + "_" + MetricStr(std::get<2>(info.param));
}

INSTANTIATE_TEST_SUITE_P(
    All, ThresholdSelectSweep,
    ::testing::Combine(::testing::Values(KeyType::kFloat16, KeyType::kBFloat16, KeyType::kFloat32),
                       ::testing::Values(8u, 40u, 96u, 128u, 256u, 1u, 3u, 130u, 300u),
                       ::testing::Values(Metric::kL2, Metric::kInnerProduct, Metric::kCosine)),
    SweepName);

// --- edge cases ---

// The case compute-sanitizer's racecheck and synccheck run (tools/bench/device_run.sh sanitize):
// the smallest launch that still takes every branch that shares memory or barriers — one tile
// of 40 rows over 2 pages of 16-dim float16 keys with a per-row bitmap, thresholds mixed (the
// k-th and 2k-th best, -inf, above every score, +inf, half a unit off the k-th), capacity
// top_k - 1, so rows overflow and the last CTA repairs them. The larger cases take racecheck
// far too long (tools/bench/results/2026-11-30-kernel-notes.md).
TEST_F(ThresholdSelectTest, SanitizerSmall) {
  Harness h;
  h.type = KeyType::kFloat16;
  h.dim = 16;
  h.pool_pages = 2;
  h.num_rows = 40;
  h.filter = FilterKind::kBitmap;
  h.top_k = 8;
  h.capacity = 7;
  h.Build();
  ASSERT_FALSE(HasFatalFailure());
  h.RunMixedAndCheck();
}

// Every key and query equal: every score is one value, far more ties than top_k.
TEST_F(ThresholdSelectTest, AllScoresEqual) {
  for (float t_kind : {0.0f, 1.0f, 2.0f}) {  // at the score, below it, above it
    for (KeyType type : {KeyType::kFloat16, KeyType::kFloat32}) {
      SCOPED_TRACE(std::string(TypeStr(type)) + " threshold kind " + std::to_string(t_kind));
      Harness h;
      h.type = type;
      h.dim = 128;
      h.pool_pages = 8;
      h.num_rows = 130;
      h.top_k = 16;
      h.capacity = 20;
      h.edit_key = [](uint32_t, float* v) { std::fill_n(v, 128, 1.0f); };
      h.edit_query = [](uint32_t, float* v) { std::fill_n(v, 128, 2.0f); };
      h.Build();
      ASSERT_FALSE(HasFatalFailure());
      h.Oracle();
      const float s = h.Kth(0, 1);
      for (uint32_t r = 0; r < h.num_rows; ++r) {
        h.thresholds[r] = t_kind == 0.0f ? s : t_kind == 1.0f ? s - 1.0f : s + 1.0f;
      }
      h.Run(true);
      ASSERT_FALSE(HasFatalFailure());
      h.Check();
      for (uint32_t r = 0; r < h.num_rows; ++r) {
        EXPECT_EQ(h.thresholds_out[r], s) << "row " << r;
        for (uint32_t i = 0; i < 16; ++i) {
          EXPECT_EQ(h.out_scores[r * 16 + i], s);
        }
      }
    }
  }
}

// Keys with a NaN component: NaN scores count as ties and never displace real keys; rows with
// fewer real keys than k are filled with NaN keys.
TEST_F(ThresholdSelectTest, NaNScores) {
  for (KeyType type : {KeyType::kFloat16, KeyType::kBFloat16, KeyType::kFloat32}) {
    for (uint32_t dim : {128u, 3u}) {
      for (Metric metric : {Metric::kL2, Metric::kInnerProduct, Metric::kCosine}) {
        SCOPED_TRACE(std::string(TypeStr(type)) + " dim " + std::to_string(dim) + " " +
                     MetricStr(metric));
        Harness h;
        h.type = type;
        h.dim = dim;
        h.metric = metric;
        h.pool_pages = 6;
        h.num_rows = 140;
        h.top_k = 16;
        h.capacity = 24;
        h.edit_key = [dim](uint32_t i, float* v) {
          if (i % 5 == 2 || (i >= 64 && i < 96)) v[i % 3 == 0 ? 0 : dim - 1] = std::nanf("");
        };
        h.Build();
        ASSERT_FALSE(HasFatalFailure());
        std::mt19937_64 rng(7);
        h.RandomRowEnds(rng);
        h.RunMixedAndCheck();
      }
    }
  }
}

// capacity = top_k - 1 (the least the repair allows) with every kind of threshold.
TEST_F(ThresholdSelectTest, CapacityTopKMinusOne) {
  for (uint32_t top_k : {1u, 16u, 64u}) {
    for (uint32_t dim : {256u, 130u}) {
      SCOPED_TRACE("top_k " + std::to_string(top_k) + " dim " + std::to_string(dim));
      Harness h;
      h.type = KeyType::kBFloat16;
      h.dim = dim;
      h.pool_pages = 12;
      h.num_rows = 129;
      h.top_k = top_k;
      h.capacity = top_k - 1;
      h.filter = FilterKind::kBitmap;
      h.Build();
      ASSERT_FALSE(HasFatalFailure());
      h.RunMixedAndCheck();
    }
  }
}

// top_k = 1024 on both kernels, with row_ends below max_context and thresholds that overflow.
TEST_F(ThresholdSelectTest, TopK1024) {
  for (auto [type, dim] : {std::pair{KeyType::kFloat16, 128u}, std::pair{KeyType::kFloat32, 3u},
                           std::pair{KeyType::kBFloat16, 8u}}) {
    for (bool integer : {true, false}) {
      SCOPED_TRACE(std::string(TypeStr(type)) + " dim " + std::to_string(dim));
      Harness h;
      h.type = type;
      h.dim = dim;
      h.integer = integer;
      h.pool_pages = 40;
      h.num_rows = 150;
      h.top_k = 1024;
      h.capacity = 1100;
      h.filter = FilterKind::kBitset;
      h.pass_fraction = 0.8;
      h.Build();
      ASSERT_FALSE(HasFatalFailure());
      std::mt19937_64 rng(11);
      h.max_context = 40 * kPageRows - 5;
      h.RandomRowEnds(rng);
      h.RunMixedAndCheck();
    }
  }
}

// Three tiles of two requests whose block tables permute and share one pool's pages;
// num_rows not a multiple of 128; k below top_k.
TEST_F(ThresholdSelectTest, SeveralRequestsOneLaunch) {
  for (FilterKind f : {FilterKind::kBitset, FilterKind::kBitmap, FilterKind::kNone}) {
    SCOPED_TRACE("filter " + std::to_string(static_cast<int>(f)));
    Harness h;
    h.type = KeyType::kFloat16;
    h.dim = 128;
    h.pool_pages = 20;
    h.num_requests = 2;
    h.blocks_per_request = 14;  // each request sees 14 of the 20 pages, in its own order
    h.num_rows = 300;
    h.top_k = 64;
    h.capacity = 100;
    h.k = 40;
    h.filter = f;
    h.Build();
    ASSERT_FALSE(HasFatalFailure());
    h.tile_requests = {1, 0, 1};
    h.tables[1][3] = h.tables[0][5];  // one page seen by both requests
    h.max_context = 14 * kPageRows - 10;
    std::mt19937_64 rng(3);
    h.RandomRowEnds(rng);
    h.RunMixedAndCheck();
  }
}

// A bitmap row with no bit set returns nothing; a bitset keeping one key returns it alone.
TEST_F(ThresholdSelectTest, FilteredRowsNeverReturned) {
  for (KeyType type : {KeyType::kFloat16, KeyType::kFloat32}) {
    Harness h;
    h.type = type;
    h.dim = 128;
    h.pool_pages = 8;
    h.num_rows = 64;
    h.top_k = 16;
    h.capacity = 16;
    h.filter = FilterKind::kBitmap;
    h.pass_fraction = 0.02;
    h.Build();
    ASSERT_FALSE(HasFatalFailure());
    for (uint32_t r = 0; r < h.num_rows; r += 4) {
      std::fill_n(&h.filter_words[r * h.filter_stride], h.filter_stride, 0u);
    }
    h.RunMixedAndCheck();
    for (uint32_t r = 0; r < h.num_rows; r += 4) {
      EXPECT_EQ(h.out_keys[r * 16], -1);
    }
  }
}

// Without arrivals and ranges nothing is repaired: the counters and slots still obey the
// contract (for rows that overflow too), and TopKFromCandidates reads the counters.
TEST_F(ThresholdSelectTest, NoRepair) {
  for (auto [type, dim] :
       {std::pair{KeyType::kFloat16, 128u}, std::pair{KeyType::kFloat32, 130u}}) {
    SCOPED_TRACE(TypeStr(type));
    Harness h;
    h.type = type;
    h.dim = dim;
    h.pool_pages = 10;
    h.num_rows = 260;
    h.top_k = 16;
    h.capacity = 40;
    h.repair = false;
    h.filter = FilterKind::kBitset;
    h.Build();
    ASSERT_FALSE(HasFatalFailure());
    std::mt19937_64 rng(5);
    h.RandomRowEnds(rng);
    h.Oracle();
    // Rows that fit: the exact top_k-th score (and -inf for rows with few keys).
    for (uint32_t r = 0; r < h.num_rows; ++r) h.thresholds[r] = h.Kth(r, h.top_k);
    for (uint32_t r = 0; r < h.num_rows; ++r) {
      ASSERT_TRUE(h.FitsAt(r, h.thresholds[r]));
    }
    h.Run(true);
    ASSERT_FALSE(HasFatalFailure());
    h.Check();
    // Rows that overflow or find nothing: counters and slots only.
    h.MixedThresholds();
    h.Run(false);
    ASSERT_FALSE(HasFatalFailure());
    h.Check();
  }
}

// query_scales and query_sq_norms with a float32 sweep of the CUDA-core kernel.
TEST_F(ThresholdSelectTest, ScalesAndSquaredNorms) {
  for (Metric metric : {Metric::kL2, Metric::kInnerProduct, Metric::kCosine}) {
    for (uint32_t dim : {1u, 256u}) {
      Harness h;
      h.type = dim == 1 ? KeyType::kFloat32 : KeyType::kFloat16;
      h.dim = dim;
      h.metric = metric;
      h.pool_pages = 6;
      h.num_rows = 100;
      h.use_scales = true;
      h.use_sq_norms = dim == 256;
      h.Build();
      ASSERT_FALSE(HasFatalFailure());
      h.RunMixedAndCheck();
    }
  }
}

// thresholds[r] = out_scores[r k + k - 1] - margin[r]; counters zeroed.
TEST_F(ThresholdSelectTest, ThresholdsFromTopK) {
  const uint32_t rows = 3, k = 4;
  const std::vector<float> scores = {5, 4, 3, 2, 9, 8, 7, -kInf, -1, -2, -3, -4};
  const std::vector<float> margin = {0.5f, 1.0f, 0.25f};
  DeviceBuffer<float> d_scores, d_margin, d_thr(rows);
  DeviceBuffer<int32_t> d_counters;
  d_scores.Upload(scores);
  d_margin.Upload(margin);
  d_counters.Upload(std::vector<int32_t>(2 * rows, 7));
  ASSERT_TRUE(gpu::ThresholdsFromTopK(d_scores.get(), rows, k, d_margin.get(), d_thr.get(),
                                      d_counters.get(), nullptr)
                  .ok());
  CUDA_OK(cudaDeviceSynchronize());
  EXPECT_EQ(d_thr.Download(), (std::vector<float>{1.5f, -kInf, -4.25f}));
  EXPECT_EQ(d_counters.Download(), std::vector<int32_t>(2 * rows, 0));
  ASSERT_TRUE(gpu::ThresholdsFromTopK(d_scores.get(), rows, k, nullptr, d_thr.get(),
                                      d_counters.get(), nullptr)
                  .ok());
  CUDA_OK(cudaDeviceSynchronize());
  EXPECT_EQ(d_thr.Download(), (std::vector<float>{2.0f, -kInf, -4.0f}));
}

// The pipeline of the bench: thresholds from a sample of pages (no repair, capacity = every
// sampled key), then the whole context with the repair on.
TEST_F(ThresholdSelectTest, SampleThenSelect) {
  for (bool integer : {true, false}) {
    Harness h;
    h.type = KeyType::kFloat16;
    h.dim = 128;
    h.integer = integer;
    h.pool_pages = 24;
    h.num_rows = 200;
    h.top_k = 64;
    h.filter = FilterKind::kBitset;
    h.pass_fraction = 0.5;
    h.Build();
    ASSERT_FALSE(HasFatalFailure());
    const uint32_t sample = 4;
    const uint32_t full_context = h.max_context;
    const std::vector<int32_t> full_ends = h.row_ends;
    h.max_context = sample * kPageRows;
    for (auto& e : h.row_ends) e = std::min<int32_t>(e, h.max_context);
    h.capacity = sample * kPageRows;
    h.repair = false;
    h.Oracle();
    h.Run(true);
    ASSERT_FALSE(HasFatalFailure());
    h.Check();
    ASSERT_TRUE(gpu::ThresholdsFromTopK(h.d_out_scores.get(), h.num_rows, h.top_k, nullptr,
                                        h.d_thresholds.get(), h.d_counters.get(), h.stream)
                    .ok());
    CUDA_OK(cudaStreamSynchronize(h.stream));
    const std::vector<float> thr = h.d_thresholds.Download();
    for (uint32_t r = 0; r < h.num_rows; ++r) {
      EXPECT_EQ(FloatBits(thr[r]), FloatBits(h.out_scores[r * h.top_k + h.top_k - 1]));
    }
    h.max_context = full_context;
    h.row_ends = full_ends;
    h.capacity = 4 * h.top_k;
    h.repair = true;
    h.thresholds = thr;
    h.Oracle();
    h.Run(true);
    ASSERT_FALSE(HasFatalFailure());
    h.Check();
  }
}

// ThresholdSelect + TopKFromCandidates captured in a CUDA graph (thresholds restored and
// counters zeroed by nodes of the graph) and replayed twice: the direct call's result.
TEST_F(ThresholdSelectTest, GraphCapture) {
  for (auto [type, dim] : {std::pair{KeyType::kFloat16, 128u}, std::pair{KeyType::kFloat32, 3u}}) {
    SCOPED_TRACE(TypeStr(type));
    Harness h;
    h.type = type;
    h.dim = dim;
    h.integer = false;
    h.pool_pages = 12;
    h.num_rows = 300;
    h.num_requests = 2;
    h.top_k = 16;
    h.capacity = 24;
    h.filter = FilterKind::kBitmap;
    h.Build();
    ASSERT_FALSE(HasFatalFailure());
    std::mt19937_64 rng(9);
    h.RandomRowEnds(rng);
    h.Oracle();
    h.MixedThresholds();
    h.Run(true);  // the direct call (also the "run once" before capturing)
    ASSERT_FALSE(HasFatalFailure());
    h.Check();
    const std::vector<int32_t> keys = h.out_keys;
    const std::vector<float> scores = h.out_scores;

    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    CUDA_OK(cudaStreamBeginCapture(h.stream, cudaStreamCaptureModeGlobal));
    CUDA_OK(cudaMemcpyAsync(h.d_thresholds.get(), h.d_thresholds_in.get(),
                            h.num_rows * sizeof(float), cudaMemcpyDeviceToDevice, h.stream));
    CUDA_OK(
        cudaMemsetAsync(h.d_counters.get(), 0, h.d_counters.size() * sizeof(int32_t), h.stream));
    Status st1 = gpu::ThresholdSelect(h.Args(), h.stream);
    Status st2 = h.TopK();
    CUDA_OK(cudaStreamEndCapture(h.stream, &graph));
    ASSERT_TRUE(st1.ok()) << st1.ToString();
    ASSERT_TRUE(st2.ok()) << st2.ToString();
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    for (int rep = 0; rep < 2; ++rep) {
      SCOPED_TRACE("replay " + std::to_string(rep));
      h.d_out_keys.Fill(0x5A, h.stream);
      h.d_out_scores.Fill(0x5A, h.stream);
      h.d_candidates.Fill(0xA5, h.stream);
      CUDA_OK(cudaGraphLaunch(exec, h.stream));
      CUDA_OK(cudaStreamSynchronize(h.stream));
      h.Download(true);
      EXPECT_EQ(h.out_keys, keys);
      for (size_t i = 0; i < scores.size(); ++i) {
        ASSERT_EQ(FloatBits(h.out_scores[i]), FloatBits(scores[i])) << "position " << i;
      }
      h.Check();
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
}

}  // namespace
}  // namespace sieve

#endif  // SIEVE_GPU_BACKEND
