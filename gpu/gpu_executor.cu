// Copyright 2026 The Sieve Authors.
//
// The CUDA backend: device-resident shards, filter upload and compaction, the SDDMM, gather and
// dense paths. See gpu_executor.h for the contracts.

#include "gpu/gpu_executor.h"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include "gpu/cuda_util.cuh"
#include "gpu/gpu_backend.h"
#include "gpu/radix_select.cuh"
#include "gpu/raft_select_k.cuh"
#include "gpu/threshold_select.h"

namespace sieve::gpu {
namespace detail {

constexpr uint32_t kInvalidId = 0xffffffffu;
// Largest distance buffer one pass materialises (queries × columns × 4 bytes). 1 GiB keeps
// tiles long (1.3M columns at 200 GEMM columns) while leaving room on any data-centre GPU.
constexpr size_t kTileBudgetBytes = size_t{1} << 30;
// Queries per chunk: bounds grid.y and the per-query buffers.
constexpr uint32_t kMaxQueryChunk = 1024;
// Resident shards live in PagePool slabs of this size (rounded down to a power-of-two number
// of pages); SIEVE_GPU_SLAB_KB overrides it (tests use small slabs to cross slab boundaries).
constexpr size_t kResidentSlabBytes = size_t{256} << 20;
// Candidate selection needs at least this many columns. On the H200 at 10,000 passing rows
// (gather path, 0.1 % of 10M) the single-tile exact gather took 0.120 ms and candidate selection
// 0.157 ms; at 100k columns candidates win (tools/bench/results/2026-11-29-h200-tuned/README.md).
constexpr uint64_t kMinCandidateColumns = 65536;
// RAFT select_k workspace pool limit.
constexpr size_t kSelectWorkspaceBytes = size_t{2} << 30;

// ---------------------------------------------------------------------------------------------
// Error translation.

// FromCuda, SIEVE_CUDA_TRY and SIEVE_CUDA_CHECK_LAUNCH come from gpu/cuda_util.cuh.

Status FromCublas(cublasStatus_t st, const char* what) {
  if (st == CUBLAS_STATUS_SUCCESS) return Status::OK();
  std::string msg = std::string(what) + ": " + cublasGetStatusName(st) + " (" +
                    cublasGetStatusString(st) + ")";
  if (st == CUBLAS_STATUS_ALLOC_FAILED) return Status::ResourceExhausted(msg);
  return Status::Internal(msg);
}

#define SIEVE_CUBLAS_TRY(call) \
  SIEVE_RETURN_IF_ERROR(::sieve::gpu::detail::FromCublas((call), #call))

// ---------------------------------------------------------------------------------------------
// Memory.

// A stream-ordered device allocation (cudaMallocAsync from the device's default pool, whose
// release threshold is raised at start so repeated searches reuse memory).
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { Reset(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  Status Allocate(size_t n, cudaStream_t stream) {
    Reset();
    stream_ = stream;
    if (n == 0) return Status::OK();
    void* p = nullptr;
    SIEVE_RETURN_IF_ERROR(FromCuda(cudaMallocAsync(&p, n * sizeof(T), stream), "cudaMallocAsync"));
    ptr_ = static_cast<T*>(p);
    size_ = n;
    return Status::OK();
  }
  void Reset() {
    if (ptr_ != nullptr) (void)cudaFreeAsync(ptr_, stream_);
    ptr_ = nullptr;
    size_ = 0;
  }
  T* get() const { return ptr_; }
  size_t size() const { return size_; }

 private:
  T* ptr_ = nullptr;
  size_t size_ = 0;
  cudaStream_t stream_ = nullptr;
};

// Grow-only pinned host memory.
class PinnedBuffer {
 public:
  ~PinnedBuffer() {
    if (ptr_ != nullptr) (void)cudaFreeHost(ptr_);
  }
  // REQUIRES: nothing in flight reads or writes the old buffer.
  Status Reserve(size_t bytes) {
    if (bytes <= bytes_) return Status::OK();
    const size_t want = std::max(bytes, bytes_ + bytes_ / 2);
    if (ptr_ != nullptr) (void)cudaFreeHost(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
    SIEVE_RETURN_IF_ERROR(FromCuda(cudaHostAlloc(&ptr_, want, cudaHostAllocDefault),
                                   "cudaHostAlloc"));
    bytes_ = want;
    return Status::OK();
  }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Kernels.

__device__ __forceinline__ float ToFloat(float x) { return x; }
__device__ __forceinline__ float ToFloat(__half x) { return __half2float(x); }

// l2: squared Euclidean from the expansion (clamped at 0); ip: the dot; cosine: 1 - cos, and 1
// when either vector is zero (as the float64 oracle defines it).
__device__ __forceinline__ float FinishDistance(int metric, float dot, float qn2, float xn2) {
  if (metric == static_cast<int>(Metric::kL2)) return fmaxf(qn2 + xn2 - 2.0f * dot, 0.0f);
  if (metric == static_cast<int>(Metric::kInnerProduct)) return dot;
  if (qn2 == 0.0f || xn2 == 0.0f) return 1.0f;
  return 1.0f - dot / (sqrtf(qn2) * sqrtf(xn2));
}

__device__ __forceinline__ bool TestBit(const uint32_t* words, uint32_t id) {
  return (words[id >> 5] >> (id & 31u)) & 1u;
}

// A shard's resident rows on the device, by ordinal: the shard's pages are the identity block
// table (row r is slot r % 64 of page r / 64), so row r lies in slab r >> shift at row
// r & mask of it, where a slab holds 64 << slab_pages_log2 rows.
struct ResidentRows {
  const void* const* slabs = nullptr;  // device slab table (PagedKeys::slabs)
  uint32_t shift = 0;                  // slab_pages_log2 + 6
  uint64_t mask = 0;                   // (64 << slab_pages_log2) - 1
};

ResidentRows MakeResidentRows(const PagedKeys& keys) {
  ResidentRows r;
  r.slabs = keys.slabs;
  r.shift = keys.slab_pages_log2 + 6;
  r.mask = (uint64_t{kPageRows} << keys.slab_pages_log2) - 1;
  return r;
}

// Row `row` of `rows`, `row_elems` elements of T per row.
template <typename T>
__device__ __forceinline__ const T* RowAt(const ResidentRows& rows, uint64_t row,
                                          int64_t row_elems) {
  return static_cast<const T*>(rows.slabs[row >> rows.shift]) +
         static_cast<int64_t>(row & rows.mask) * row_elems;
}

// counts[w] = popcount(words[w]), widened so that the in-place scan cannot overflow.
__global__ void PopcountKernel(const uint32_t* __restrict__ words, int64_t n,
                               uint64_t* __restrict__ counts) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    counts[i] = static_cast<uint64_t>(__popc(words[i]));
  }
}

// Writes the ordinal of every set bit at its scanned position. Word w belongs to filter row
// w / words_per_row and covers ordinals (w % words_per_row) * 32 + [0, 32). Positions at or
// past `capacity` are dropped (the host count bounds them).
__global__ void ScatterIdsKernel(const uint32_t* __restrict__ words, int64_t n,
                                 int64_t words_per_row, const uint64_t* __restrict__ offsets,
                                 uint64_t capacity, uint32_t* __restrict__ ids) {
  for (int64_t w = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; w < n;
       w += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    uint32_t bits = words[w];
    if (bits == 0) continue;
    uint64_t pos = offsets[w];
    const uint32_t base = static_cast<uint32_t>((w % words_per_row) * 32);
    while (bits != 0) {
      const int b = __ffs(bits) - 1;
      bits &= bits - 1;
      if (pos < capacity) ids[pos] = base + static_cast<uint32_t>(b);
      ++pos;
    }
  }
}

// Copies resident rows ids[i] of `src` (row_v vector units per row) to row i of `dst`, and their
// squared norms norms[ids[i]] to norms_out[i], zero in [n, n_padded) (n_padded - n <= 256).
template <typename V>
__global__ void GatherRowsKernel(ResidentRows src, int64_t row_v,
                                 const uint32_t* __restrict__ ids, int64_t n,
                                 V* __restrict__ dst, const float* __restrict__ norms,
                                 float* __restrict__ norms_out, int64_t n_padded) {
  // One thread per vector unit, so that short rows keep every lane busy.
  const int64_t total = n * row_v;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = t / row_v;
    const uint32_t id = ids[i];
    const int64_t u = t - i * row_v;
    dst[t] = RowAt<V>(src, id, row_v)[u];
    if (u == 0) norms_out[i] = norms[id];
  }
  if (blockIdx.x == 0 && threadIdx.x < n_padded - n) norms_out[n + threadIdx.x] = 0.0f;
}

struct SddmmArgs {
  ResidentRows rows;            // resident rows (T)
  const float* x_sq_norms;      // by ordinal
  int dim;
  const float* queries;         // m × dim float32
  const float* q_sq_norms;      // m
  int m;
  const uint32_t* ids;          // passing ordinals
  const uint64_t* starts;       // per-query lists: query q's are ids[starts[q], starts[q+1])
  int64_t n_shared;             // one shared list of this length when starts == nullptr
  int64_t ld;                   // output row length
  int metric;
  float sentinel;
  float* out;                   // m × ld; out[q][p] = distance of q to its p-th listed row
};

// One warp per listed row: it reads the row once and takes its dot with QB queries (a group of
// the batch when the list is shared; QB = 1 with per-query lists). Slots past a query's list
// get the sentinel.
template <typename T, int QB>
__global__ void __launch_bounds__(256) SddmmKernel(SddmmArgs a) {
  const int lane = threadIdx.x & 31;
  const int64_t p = static_cast<int64_t>(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (p >= a.ld) return;
  const int q0 = blockIdx.y * QB;
  uint32_t id;
  if (a.starts != nullptr) {
    const uint64_t begin = a.starts[q0];
    const int64_t len = static_cast<int64_t>(a.starts[q0 + 1] - begin);
    if (p >= len) {
      if (lane == 0) a.out[static_cast<int64_t>(q0) * a.ld + p] = a.sentinel;
      return;
    }
    id = a.ids[begin + p];
  } else {
    if (p >= a.n_shared) {
      if (lane < QB && q0 + lane < a.m) a.out[static_cast<int64_t>(q0 + lane) * a.ld + p] = a.sentinel;
      return;
    }
    id = a.ids[p];
  }
  const T* x = RowAt<T>(a.rows, id, a.dim);
  const int nq = min(QB, a.m - q0);
  float acc[QB];
#pragma unroll
  for (int i = 0; i < QB; ++i) acc[i] = 0.0f;
  for (int j = lane; j < a.dim; j += 32) {
    const float xv = ToFloat(x[j]);
#pragma unroll
    for (int i = 0; i < QB; ++i) {
      if (i < nq) acc[i] = fmaf(xv, a.queries[static_cast<int64_t>(q0 + i) * a.dim + j], acc[i]);
    }
  }
#pragma unroll
  for (int i = 0; i < QB; ++i) {
    for (int off = 16; off > 0; off >>= 1) acc[i] += __shfl_xor_sync(0xffffffffu, acc[i], off);
  }
  if (lane == 0) {
    const float xn2 = a.x_sq_norms[id];
#pragma unroll
    for (int i = 0; i < QB; ++i) {
      if (i < nq) {
        a.out[static_cast<int64_t>(q0 + i) * a.ld + p] =
            FinishDistance(a.metric, acc[i], a.q_sq_norms[q0 + i], xn2);
      }
    }
  }
}

struct EpilogueArgs {
  const float* dots;          // GEMM output, query-major: (split ? 2m : m) rows of n_cols
  float* out;                 // m × n_cols distances (may alias dots)
  int64_t n_cols;
  int m;
  bool split;                 // rows m..2m-1 hold the dots with the low halves of the queries
  float scale;                // dots are multiplied by this (the queries were divided by it)
  const float* q_sq_norms;    // m
  const float* x_sq_norms;    // by ordinal
  const uint32_t* col_ids;    // nullable: ordinal of column j is col_ids[col_base + j]
  int64_t col_base;           //           else col_base + j
  const uint32_t* filter;     // nullable: bit words; query q's start at q * filter_stride
  int64_t filter_stride;      // 0 for a bitset shared by the batch
  int metric;
  float sentinel;
};

// The pass that turns dot products into distances also applies the filter: a failing row gets
// the sentinel (+inf for min metrics, -inf for ip), so select_k never prefers it.
__global__ void EpilogueKernel(EpilogueArgs a) {
  const int q = blockIdx.y;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < a.n_cols;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint32_t id =
        a.col_ids != nullptr ? a.col_ids[a.col_base + j] : static_cast<uint32_t>(a.col_base + j);
    float d;
    if (a.filter != nullptr && !TestBit(a.filter + q * a.filter_stride, id)) {
      d = a.sentinel;
    } else {
      float dot = a.dots[static_cast<int64_t>(q) * a.n_cols + j];
      if (a.split) dot += a.dots[static_cast<int64_t>(a.m + q) * a.n_cols + j];
      d = FinishDistance(a.metric, dot * a.scale, a.q_sq_norms[q], a.x_sq_norms[id]);
    }
    a.out[static_cast<int64_t>(q) * a.n_cols + j] = d;
  }
}

struct MapArgs {
  const uint32_t* pos;      // m × kf positions from select_k
  const float* vals;        // m × kf values (copied along when vals_out is set)
  int m;
  int kf;
  const uint32_t* table;    // nullable: id = table[index], else id = index
  int64_t table_stride;     // index = q * table_stride + base + pos (+ starts[q])
  int64_t base;
  const uint64_t* starts;   // nullable: per-query lists; pos >= its length → kInvalidId
  uint32_t* ids_out;        // ids_out[q * out_ld + out_off + i]
  float* vals_out;          // nullable, same layout
  int64_t out_ld;
  int64_t out_off;
};

__global__ void MapPositionsKernel(MapArgs a) {
  const int64_t n = static_cast<int64_t>(a.m) * a.kf;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < n;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t q = t / a.kf;
    const int64_t i = t % a.kf;
    const uint32_t p = a.pos[t];
    uint32_t id;
    if (a.starts != nullptr) {
      const uint64_t len = a.starts[q + 1] - a.starts[q];
      id = p < len ? a.table[a.starts[q] + p] : kInvalidId;
    } else {
      const int64_t index = q * a.table_stride + a.base + p;
      id = a.table != nullptr ? a.table[index] : static_cast<uint32_t>(index);
    }
    const int64_t o = q * a.out_ld + a.out_off + i;
    a.ids_out[o] = id;
    if (a.vals_out != nullptr) a.vals_out[o] = a.vals[t];
  }
}

__global__ void FillKernel(float* p, int64_t n, float v) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    p[i] = v;
  }
}

__global__ void FillIntKernel(int32_t* p, int64_t n, int32_t v) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    p[i] = v;
  }
}

// Threshold-select dense path (see DeviceRun::ThresholdDense). Per query row r: the query
// scale (the float16 high halves were divided by it), a threshold of -inf, and the margin 2E,
// where E bounds |computed - exact| of a score: float16 high halves move a dot product by at
// most 2^-11 |q||x| and float32 accumulation (tensor cores included) by far less; err_rel
// (2^-9 + 2^-13) covers both with room, against the largest resident row norm.
__global__ void ThresholdSetupKernel(int m, float scale, const float* __restrict__ q_sq_norms,
                                     float max_x_sq_norm, int metric, float err_rel,
                                     float* __restrict__ scales, float* __restrict__ thresholds,
                                     float* __restrict__ margin) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= m) return;
  const float qn2 = q_sq_norms[r];
  float e;
  if (metric == static_cast<int>(Metric::kCosine)) {
    e = err_rel + 0x1p-20f;
  } else {
    e = err_rel * sqrtf(qn2) * sqrtf(max_x_sq_norm);
    if (metric == static_cast<int>(Metric::kL2)) e = 2.0f * e + 0x1p-20f * (qn2 + max_x_sq_norm);
  }
  scales[r] = scale;
  thresholds[r] = -INFINITY;
  margin[r] = 2.0f * e * 1.0001f;
}

__global__ void IotaKernel(int32_t* p, int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    p[i] = static_cast<int32_t>(i);
  }
}

// Band lists of positions in a gathered block become resident ordinals: ids[q * cap + i] =
// col_ids[ids[q * cap + i]] for i < min(counts[q], cap). One block per query.
__global__ void PositionsToOrdinalsKernel(uint32_t* __restrict__ ids,
                                          const uint32_t* __restrict__ counts, uint32_t cap,
                                          const uint32_t* __restrict__ col_ids) {
  const int64_t q = blockIdx.x;
  const uint32_t n = min(counts[q], cap);
  for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
    ids[q * cap + i] = col_ids[ids[q * cap + i]];
  }
}

// Overflow bits of one level of the threshold-select path, ORed into why[r]: 1 its candidates
// passed `cap`, 2 its ties passed top_k, 4 its band passed band_cap (band_counts given). With
// `host_cap` set, the last level writes flags[r] = host_cap + why[r] (or 0) for the host.
__global__ void ThresholdOverflowKernel(int m, const int32_t* __restrict__ counters, int32_t cap,
                                        int32_t top_k, const uint32_t* __restrict__ band_counts,
                                        uint32_t band_cap, uint32_t* __restrict__ why,
                                        uint32_t host_cap, uint32_t* __restrict__ flags) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= m) return;
  uint32_t w = why[r] | (counters[2 * r] > cap ? 1u : 0u) |
               (counters[2 * r + 1] > top_k ? 2u : 0u) |
               (band_counts != nullptr && band_counts[r] > band_cap ? 4u : 0u);
  why[r] = w;
  if (flags != nullptr) flags[r] = w != 0 ? host_cap + w : 0u;
}

// Candidate selection (dense and gather over many columns; see DeviceRun::Candidates).
//
// thresh[q] is the k-th best exact distance of query q over a sample of its passing rows (the
// sentinel when the sample holds fewer than k), so it is never better than the true k-th best:
// every row of the true top-k has an exact distance at least as good as thresh[q]. A row is
// kept when its computed distance d could be that good given the error bound e of d:
// d - e <= thresh (min metrics) or d + e >= thresh (ip). Kept rows are appended (warp-aggregated
// atomics) to the query's list of `cap` slots; counts[q] may exceed cap, which the host sees
// (the search then falls back to the full path).
struct CandidateArgs {
  const float* dots;          // m rows of ld dot products (times scale), n_cols used
  int64_t n_cols;
  int64_t ld;
  float scale;
  const float* q_sq_norms;    // m
  const float* x_sq_norms;    // by ordinal
  const float* pos_sq_norms;  // nullable: the norms of a gathered block by position (then the
                              // ordinal is read only for the filter or a candidate)
  const uint32_t* col_ids;    // nullable: ordinal of column j is col_ids[col_base + j]
  int64_t col_base;
  const uint32_t* filter;     // nullable: bit words; query q's start at q * filter_stride
  int64_t filter_stride;
  int metric;                 // CandidateKernel's is its template argument (see its launcher)
  bool select_min;
  float err_rel;              // |d - exact| <= err_rel * |q||x| (× 2 for l2; cosine: err_rel)
  const float* thresh;        // m
  uint32_t* counts;           // m
  uint32_t* cand_ids;         // m × cap ordinals
  float* cand_vals;           // m × cap computed distances
  int64_t cap;
};

// The ordinal of column j of a candidate scan: col_ids[col_base + j], or col_base + j.
__device__ __forceinline__ uint32_t ColumnId(const CandidateArgs& a, int64_t j) {
  return a.col_ids != nullptr ? a.col_ids[a.col_base + j] : static_cast<uint32_t>(a.col_base + j);
}

// The candidate scan was bound by latency, with too few loads in flight. With a thread per group
// of four columns (one float4 of dots, one of positional norms) and one atomic a warp, 100
// queries × 100,000 columns (a 40 MB tile, grid (98, 100)) took 63 µs, 0.63 TB/s (H200,
// 2026-11-30): 9,800 short blocks, 6 resident an SM at 40 registers, some 12 waves (a thread per
// column had been bound the same way by 31 waves). So a thread takes kCandUnroll groups an
// iteration and issues every load of them (dots, positional norms, the ordinals and filter words
// the test needs) before it uses any, and the warp does one scan and one atomic for all of them:
// an SM holds 2× (over col_ids, 3 blocks) to 2.7× (4 blocks) the bytes of dots in flight, and
// that shape is 2,500 blocks. A thread's groups lie a layer apart (a layer: one group for every
// thread of the query's blocks, gridDim.x × kCandLayerCols columns), so each load of a warp is
// one contiguous 512-byte run, and CandidateGridX can widen the grid when few queries would
// leave SMs idle: the extra blocks only leave the last layers empty. The metric is a template
// parameter so that the per-column arithmetic has no branches (sqrtf(qn2) is computed once; about
// 25 instructions a column remain, mostly sqrtf(xn2)). kCandUnroll = 4 (16 columns, 64 bytes of
// dots a thread) is not yet measured against 2 or 8.
constexpr int kCandVec = 4;
constexpr int kCandUnroll = 4;
constexpr int kCandThreads = 256;
constexpr int64_t kCandLayerCols = int64_t{kCandThreads} * kCandVec;
// Blocks an SM holds: the registers are capped for 4 (64 a thread) over ordinals col_base + j
// and 3 (80) over col_ids, which hold more loads in flight (ordinals, scattered filter words).
// Without the cap ptxas took up to 110 registers (2 blocks an SM); with it, at most 8 bytes
// spill, outside the loads (CUDA 13.0, sm_90).
constexpr int kCandBlocksPerSm = 4;
constexpr int kCandGatherBlocksPerSm = 3;

// Launched with kCandThreads threads a block (LaunchCandidateKernel): the layout assumes it.
template <int kMetric, bool kGather>
__global__ void __launch_bounds__(kCandThreads, kGather ? kCandGatherBlocksPerSm : kCandBlocksPerSm)
    CandidateKernel(CandidateArgs a) {
  constexpr int kCols = kCandVec * kCandUnroll;  // a thread's columns an iteration
  const int q = blockIdx.y;
  const int lane = threadIdx.x & 31;
  const float t = a.thresh[q];
  const float qn2 = a.q_sq_norms[q];
  const float* dots = a.dots + static_cast<int64_t>(q) * a.ld;
  const uint32_t* filter = a.filter != nullptr ? a.filter + q * a.filter_stride : nullptr;
  // kGather: column j is ordinal col_ids[col_base + j] (col_ids is set), else col_base + j.
  // Norms by position where they can be: a gathered block's, or the resident rows' when column
  // j is ordinal col_base + j (the same values as by ordinal, read in order). Otherwise by
  // ordinal, and then only for columns that pass the filter (scattered reads).
  const float* norms = a.pos_sq_norms != nullptr ? a.pos_sq_norms + a.col_base
                       : !kGather                ? a.x_sq_norms + a.col_base
                                                 : nullptr;
  const bool vec_norms = norms != nullptr && (reinterpret_cast<uintptr_t>(norms) & 15) == 0;
  const uint32_t* ids = kGather ? a.col_ids + a.col_base : nullptr;
  const bool vec_ids = kGather && (reinterpret_cast<uintptr_t>(ids) & 15) == 0;
  // Ordinals from col_ids are read before the test only for the filter or norms by ordinal;
  // otherwise only those of kept columns, after the atomic.
  const bool early_ids = kGather && (filter != nullptr || norms == nullptr);
  const int64_t layer = static_cast<int64_t>(gridDim.x) * kCandLayerCols;
  // This warp's first column in the first layer of an iteration: the loop test on it is
  // warp-uniform, so every lane takes part in the shuffles.
  const int64_t warp_col =
      static_cast<int64_t>(blockIdx.x) * kCandLayerCols + (threadIdx.x - lane) * kCandVec;
  for (int64_t it = 0; it + warp_col < a.n_cols; it += kCandUnroll * layer) {
    // Column c of this thread (c = u * kCandVec + e: element e of group u).
    auto col = [&](int c) {
      return it + (c / kCandVec) * layer + warp_col + lane * kCandVec + c % kCandVec;
    };
    // The ordinal of column c, where it is not read from col_ids.
    auto ordinal = [&](int c) { return static_cast<uint32_t>(a.col_base + col(c)); };
    float dv[kCols], xv[kCols];
    uint32_t id[kCols];
    uint32_t in = 0;  // bit c: column c lies before n_cols
    // dots rows are 16-byte aligned (ld is a multiple of 32 floats), and so is every group.
#pragma unroll
    for (int u = 0; u < kCandUnroll; ++u) {
      const int c0 = u * kCandVec;
      const int64_t j0 = col(c0);
      const int64_t left = a.n_cols - j0;
      const bool whole = left >= kCandVec;
      in |= (whole ? (1u << kCandVec) - 1 : left > 0 ? (1u << left) - 1 : 0u) << c0;
      if (whole) {
        const float4 d4 = *reinterpret_cast<const float4*>(dots + j0);
        dv[c0] = d4.x; dv[c0 + 1] = d4.y; dv[c0 + 2] = d4.z; dv[c0 + 3] = d4.w;
      } else {
#pragma unroll
        for (int e = 0; e < kCandVec; ++e) dv[c0 + e] = e < left ? dots[j0 + e] : 0.0f;
      }
      if (early_ids) {
        if (whole && vec_ids) {
          const uint4 i4 = *reinterpret_cast<const uint4*>(ids + j0);
          id[c0] = i4.x; id[c0 + 1] = i4.y; id[c0 + 2] = i4.z; id[c0 + 3] = i4.w;
        } else {
#pragma unroll
          for (int e = 0; e < kCandVec; ++e) id[c0 + e] = e < left ? ids[j0 + e] : 0u;
        }
      } else if (!kGather) {
#pragma unroll
        for (int e = 0; e < kCandVec; ++e) id[c0 + e] = ordinal(c0 + e);
      }
      if (norms != nullptr) {
        if (whole && vec_norms) {
          const float4 x4 = *reinterpret_cast<const float4*>(norms + j0);
          xv[c0] = x4.x; xv[c0 + 1] = x4.y; xv[c0 + 2] = x4.z; xv[c0 + 3] = x4.w;
        } else {
#pragma unroll
          for (int e = 0; e < kCandVec; ++e) xv[c0 + e] = e < left ? norms[j0 + e] : 0.0f;
        }
      }
    }
    // Bit c: column c is in range and passes the filter (TestBit of its ordinal). The words
    // are all read before any is used.
    uint32_t pass = in;
    if (!kGather && filter != nullptr) {
      // Ordinals col_base + j: a group's bits lie in the words of its first and last ordinal
      // in range (one word unless the group straddles a word boundary).
      uint32_t lo[kCandUnroll], hi[kCandUnroll];
#pragma unroll
      for (int u = 0; u < kCandUnroll; ++u) {
        const int n_in = __popc((in >> (u * kCandVec)) & ((1u << kCandVec) - 1));
        const uint32_t first = id[u * kCandVec];
        lo[u] = n_in > 0 ? filter[first >> 5] : 0u;
        hi[u] = n_in > 0 ? filter[(first + n_in - 1) >> 5] : 0u;
      }
      uint32_t bits = 0;
#pragma unroll
      for (int u = 0; u < kCandUnroll; ++u) {
        const uint32_t w = __funnelshift_r(lo[u], hi[u], id[u * kCandVec] & 31u);
        bits |= (w & ((1u << kCandVec) - 1)) << (u * kCandVec);
      }
      pass &= bits;
    } else if (kGather && filter != nullptr) {
      uint32_t w[kCols];
#pragma unroll
      for (int c = 0; c < kCols; ++c) w[c] = (in >> c) & 1u ? filter[id[c] >> 5] : 0u;
      uint32_t bits = 0;
#pragma unroll
      for (int c = 0; c < kCols; ++c) bits |= ((w[c] >> (id[c] & 31u)) & 1u) << c;
      pass &= bits;
    }
    if (kGather && norms == nullptr) {
#pragma unroll
      for (int c = 0; c < kCols; ++c) xv[c] = (pass >> c) & 1u ? a.x_sq_norms[id[c]] : 0.0f;
    }
    uint32_t take = 0;
    float d[kCols];
#pragma unroll
    for (int c = 0; c < kCols; ++c) {
      // The products are rounded as written (__fmul_rn), as they were while the metric was a
      // runtime value: with it known, nvcc fused err's product into the test's addition for
      // ip (fma(-|q||x|, err_rel, d) in the SASS), which can flip a column at the margin.
      const float xn2 = xv[c];
      d[c] = FinishDistance(kMetric, __fmul_rn(dv[c], a.scale), qn2, xn2);
      float err = a.err_rel;
      if (kMetric != static_cast<int>(Metric::kCosine)) {
        err = __fmul_rn(err, sqrtf(qn2) * sqrtf(xn2));
      }
      // l2 also rounds qn2 + xn2 - 2·dot: allow a few ulps of the norms' sum.
      if (kMetric == static_cast<int>(Metric::kL2)) err = 2.0f * err + 0x1p-20f * (qn2 + xn2);
      const bool keep = a.select_min ? (d[c] - err <= t) : (d[c] + err >= t);
      take |= (keep ? 1u : 0u) << c;
    }
    take &= pass;
    // One atomic a warp an iteration: the lanes below this one and this lane's earlier columns
    // go first.
    const int mine = __popc(take);
    int below = mine;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
      const int x = __shfl_up_sync(0xffffffffu, below, off);
      if (lane >= off) below += x;
    }
    const int total = __shfl_sync(0xffffffffu, below, 31);
    if (total == 0) continue;
    below -= mine;
    uint32_t base = 0;
    if (lane == 0) base = atomicAdd(a.counts + q, static_cast<uint32_t>(total));
    base = __shfl_sync(0xffffffffu, base, 0) + static_cast<uint32_t>(below);
    if (kGather && !early_ids) {
      // Every ordinal is read before any slot is written, so that the reads overlap.
#pragma unroll
      for (int c = 0; c < kCols; ++c) {
        if ((take >> c) & 1u) id[c] = ids[col(c)];
      }
    }
#pragma unroll
    for (int c = 0; c < kCols; ++c) {
      if (!((take >> c) & 1u)) continue;
      if (base < a.cap) {
        a.cand_ids[static_cast<int64_t>(q) * a.cap + base] = id[c];
        a.cand_vals[static_cast<int64_t>(q) * a.cap + base] = d[c];
      }
      ++base;
    }
  }
}

// Blocks a query for CandidateKernel over n_cols columns and m queries: the fewest whose
// threads cover every column with kCandUnroll groups each, raised (up to one group a thread)
// until the m queries' blocks fill each of sm_count SMs once (as many blocks as an SM holds), so
// that a few queries still spread their loads over the whole GPU. Columns past the grid are
// taken by later iterations. gather: the columns are col_ids (the kernel's kGather).
unsigned CandidateGridX(int64_t n_cols, int64_t m, int sm_count, bool gather) {
  constexpr int64_t kIterCols = kCandUnroll * kCandLayerCols;
  const int64_t fewest = (n_cols + kIterCols - 1) / kIterCols;
  const int64_t most = (n_cols + kCandLayerCols - 1) / kCandLayerCols;
  m = std::max<int64_t>(m, 1);
  const int64_t per_sm = gather ? kCandGatherBlocksPerSm : kCandBlocksPerSm;
  const int64_t fill = (int64_t{sm_count} * per_sm + m - 1) / m;
  const int64_t x = std::max(fewest, std::min(most, fill));
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(x, 65535LL * 16)));
}

// Launches the CandidateKernel for c's metric and columns (col_ids or not).
template <int kMetric>
void LaunchCandidateKernelFor(const CandidateArgs& c, dim3 grid, cudaStream_t stream) {
  if (c.col_ids != nullptr) {
    CandidateKernel<kMetric, true><<<grid, kCandThreads, 0, stream>>>(c);
  } else {
    CandidateKernel<kMetric, false><<<grid, kCandThreads, 0, stream>>>(c);
  }
}
void LaunchCandidateKernel(const CandidateArgs& c, dim3 grid, cudaStream_t stream) {
  switch (static_cast<Metric>(c.metric)) {
    case Metric::kL2:
      return LaunchCandidateKernelFor<static_cast<int>(Metric::kL2)>(c, grid, stream);
    case Metric::kInnerProduct:
      return LaunchCandidateKernelFor<static_cast<int>(Metric::kInnerProduct)>(c, grid, stream);
    default:
      return LaunchCandidateKernelFor<static_cast<int>(Metric::kCosine)>(c, grid, stream);
  }
}

// The float16 candidate scan fused into one kernel: tensor-core dot products of a tile of 128
// rows with every query of the chunk (high halves, scaled; held in shared memory), then in
// registers/shared memory the same test as CandidateKernel. No dot product reaches memory.
// Rows are `rows[j]` for column j: one slab's contiguous rows (a launch never crosses a slab
// end), or the gathered block; column j is ordinal col_base + j (or col_ids[col_base + j]).
// 8 warps; warp w owns rows 16w..16w+15 of a tile and NF fragments of 16 queries.
constexpr int kFusedRows = 128;
constexpr int kFusedMaxDim = 256;

struct FusedArgs {
  const __half* rows;         // n_cols × dim, dim % 8 == 0, contiguous
  int64_t n_cols;
  int dim;
  int dimp;                   // dim rounded up to 16
  const __half* q_hi;         // m × dim
  int m;
  CandidateArgs c;            // everything else as CandidateKernel (dots, n_cols, ld unused)
};

size_t FusedSmemBytes(int nf, int dimp) {
  const size_t ld = static_cast<size_t>(dimp) + 8;
  return (static_cast<size_t>(nf) * 16 + kFusedRows) * ld * 2 + 8 * 256 * 4 +
         static_cast<size_t>(nf) * 16 * 4 * 2;
}

template <int NF>
__global__ void __launch_bounds__(256) FusedCandidateKernel(FusedArgs a) {
  namespace wmma = nvcuda::wmma;
  extern __shared__ __align__(128) unsigned char smem[];
  const int ld = a.dimp + 8;
  __half* qs = reinterpret_cast<__half*>(smem);
  __half* xs = qs + NF * 16 * ld;
  float* scratch = reinterpret_cast<float*>(xs + kFusedRows * ld);
  float* tq = scratch + 8 * 256;
  float* qn = tq + NF * 16;
  const int warp = threadIdx.x >> 5;
  const int lane = threadIdx.x & 31;
  const int vec = a.dimp / 8;
  const int dvec = a.dim / 8;
  const CandidateArgs& c = a.c;
  for (int t = threadIdx.x; t < NF * 16 * vec; t += blockDim.x) {
    const int r = t / vec, k = t % vec;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (r < a.m && k < dvec) v = reinterpret_cast<const uint4*>(a.q_hi + static_cast<int64_t>(r) * a.dim)[k];
    *reinterpret_cast<uint4*>(qs + r * ld + k * 8) = v;
  }
  for (int t = threadIdx.x; t < NF * 16; t += blockDim.x) {
    tq[t] = t < a.m ? c.thresh[t] : 0.0f;
    qn[t] = t < a.m ? c.q_sq_norms[t] : 0.0f;
  }
  float* my = scratch + warp * 256;
  const int64_t n_tiles = (a.n_cols + kFusedRows - 1) / kFusedRows;
  for (int64_t tile = blockIdx.x; tile < n_tiles; tile += gridDim.x) {
    const int64_t row0 = tile * kFusedRows;
    __syncthreads();  // the previous tile's reads of xs are done; queries are loaded
    for (int t = threadIdx.x; t < kFusedRows * vec; t += blockDim.x) {
      const int r = t / vec, k = t % vec;
      uint4 v = make_uint4(0, 0, 0, 0);
      if (row0 + r < a.n_cols && k < dvec) {
        v = reinterpret_cast<const uint4*>(a.rows + (row0 + r) * a.dim)[k];
      }
      *reinterpret_cast<uint4*>(xs + r * ld + k * 8) = v;
    }
    __syncthreads();
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[NF];
#pragma unroll
    for (int f = 0; f < NF; ++f) wmma::fill_fragment(acc[f], 0.0f);
    for (int kk = 0; kk < a.dimp; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
      wmma::load_matrix_sync(fa, xs + warp * 16 * ld + kk, ld);
#pragma unroll
      for (int f = 0; f < NF; ++f) {
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
        wmma::load_matrix_sync(fb, qs + f * 16 * ld + kk, ld);
        wmma::mma_sync(acc[f], fa, fb, acc[f]);
      }
    }
    const int64_t wrow0 = row0 + warp * 16;
#pragma unroll
    for (int f = 0; f < NF; ++f) {
      if (f * 16 >= a.m) break;
      wmma::store_matrix_sync(my, acc[f], 16, wmma::mem_row_major);
      __syncwarp();
      for (int e = lane; e < 256; e += 32) {
        const int q = f * 16 + (e & 15);
        const int64_t j = wrow0 + (e >> 4);
        if (q >= a.m || j >= a.n_cols) continue;
        const bool need_id = c.pos_sq_norms == nullptr || c.filter != nullptr;
        uint32_t id = 0;
        if (need_id) id = ColumnId(c, j);
        if (c.filter != nullptr && !TestBit(c.filter + q * c.filter_stride, id)) continue;
        const float qn2 = qn[q];
        const float xn2 = c.pos_sq_norms != nullptr ? c.pos_sq_norms[c.col_base + j]
                                                    : c.x_sq_norms[id];
        const float d = FinishDistance(c.metric, my[e] * c.scale, qn2, xn2);
        float err = c.err_rel;
        if (c.metric != static_cast<int>(Metric::kCosine)) err *= sqrtf(qn2) * sqrtf(xn2);
        if (c.metric == static_cast<int>(Metric::kL2)) err = 2.0f * err + 0x1p-20f * (qn2 + xn2);
        const float t = tq[q];
        if (c.select_min ? (d - err <= t) : (d + err >= t)) {
          if (!need_id) id = ColumnId(c, j);
          const uint32_t pos = atomicAdd(c.counts + q, 1u);
          if (pos < c.cap) {
            c.cand_ids[static_cast<int64_t>(q) * c.cap + pos] = id;
            c.cand_vals[static_cast<int64_t>(q) * c.cap + pos] = d;
          }
        }
      }
      __syncwarp();
    }
  }
}

// SIEVE_GPU_THRESHOLD=1 / 0 turns the threshold-select dense path on / off (benchmarks compare
// both; read at every search). Default: on.
bool ThresholdSelectEnabled() {
  const char* v = std::getenv("SIEVE_GPU_THRESHOLD");
  return v == nullptr || v[0] != '0';
}

// The gather path over a bitset selects through the threshold select from this many gathered
// rows up. Measured on the H200 (10M x 128 f16, 100 queries, k 64; results/2026-11-30-h200-
// session3/round1): at 100,000 gathered rows the threshold select took 0.348 ms against 0.296
// for candidate selection, at 1,000,000 rows 0.872 against 1.216; the crossover by linear
// interpolation of the difference is near 220,000 rows.
constexpr uint64_t kThresholdGatherMinRows = uint64_t{1} << 18;

// SIEVE_GPU_THRESHOLD_GATHER=1 / 0 forces the gathered threshold select on / off for any
// number of gathered rows (benchmarks and tests; read at every search). Default: from
// kThresholdGatherMinRows gathered rows up.
bool ThresholdGatherEnabled(uint64_t n_cols) {
  const char* v = std::getenv("SIEVE_GPU_THRESHOLD_GATHER");
  if (v != nullptr && (v[0] == '0' || v[0] == '1')) return v[0] == '1';
  return n_cols >= kThresholdGatherMinRows;
}

// SIEVE_GPU_TS_LEVELS=2..6 sets the threshold path's most levels (benchmarks compare them;
// read at every search). Default: 4, the best of 2, 3 and 4 measured on the H200 for dense at
// 10M rows (results/2026-11-30-h200-session3/round2-3); 5 and 6 keep fewer candidates a level
// (a looser threshold costs most in the last, largest level) and are not yet measured.
int ThresholdMaxLevels() {
  const char* v = std::getenv("SIEVE_GPU_TS_LEVELS");
  const int n = v != nullptr ? std::atoi(v) : 4;
  return n >= 2 && n <= 6 ? n : 4;
}

// SIEVE_GPU_FUSED=1 uses FusedCandidateKernel for float16 rows (dim % 8 == 0, dim <= 256,
// chunks of at most 128 queries); otherwise cuBLAS tiles and CandidateKernel.
bool FusedEnabled() {
  static const bool on = [] {
    const char* v = std::getenv("SIEVE_GPU_FUSED");
    return v != nullptr && v[0] == '1';
  }();
  return on;
}

// Better distance, larger key (select_min: smaller distances; else larger); NaN the smallest.
__device__ __forceinline__ uint32_t DistanceKey(float x, bool select_min) {
  if (x != x) return 0u;
  return select_min ? ~OrderedKey(x) : OrderedKey(x);
}

// Keys of a row a radix-select kernel keeps in shared memory (dynamic: KeyCacheBytes), below the
// 48 KB a launch gets without opting in.
constexpr int64_t kKeyCacheMax = 11264;
inline size_t KeyCacheBytes(int64_t n) { return n <= kKeyCacheMax ? static_cast<size_t>(n) * 4 : 0; }

// thresh[q] = the k-th best of the n distances of row q of `dist` (rows n apart): the k-th
// smallest for select_min, else the k-th largest; +inf (select_min) or -inf when the row holds a
// NaN, so that nothing is pruned by it. One CTA a row, four radix passes (the first over the
// row, in L2 after the epilogue wrote it; the others over its keys in shared memory where they
// fit): the sample threshold without select_k's two kernels and ThresholdKernel (0.024 ms for
// 100 queries x 6,144 columns on the H200, 2026-11-30). Launched with KeyCacheBytes(n) of
// dynamic shared memory.
__global__ void __launch_bounds__(256) KthBestKernel(const float* __restrict__ dist, int64_t n,
                                                     int k, bool select_min,
                                                     float* __restrict__ thresh) {
  __shared__ uint32_t hist[256];
  extern __shared__ uint32_t key_cache[];
  __shared__ int s_nan;
  const float* row = dist + static_cast<int64_t>(blockIdx.x) * n;
  if (threadIdx.x == 0) s_nan = 0;
  __syncthreads();
  // Better distance, larger key; NaN the smallest key (and noted).
  auto key = [&](int64_t i) -> uint32_t {
    const float x = row[i];
    if (x != x) s_nan = 1;
    return DistanceKey(x, select_min);
  };
  const uint32_t u = BlockKthLargest(n, k, key, hist, n <= kKeyCacheMax ? key_cache : nullptr);
  if (threadIdx.x == 0) {
    const float v = FromOrderedKey(select_min ? ~u : u);
    thresh[blockIdx.x] = s_nan != 0 ? (select_min ? INFINITY : -INFINITY) : v;
  }
}

// The kf best of the first min(counts[q], ld) slots of row q (vals, ids; rows ld apart), unsorted,
// into out_vals / out_ids (rows kf apart); a row with fewer slots is padded with `sentinel` and
// kInvalidId. One CTA a row: the kf-th best key by radix select, then every slot above it and
// as many equal to it as fit. Replaces select_k (two kernels) and MapPositionsKernel at the end
// of candidate selection and of the threshold path (0.024 ms for 100 rows of 4,096 slots on the
// H200, 2026-11-30). Launched with KeyCacheBytes(ld) of dynamic shared memory: the keys of the
// slots, once read, serve the radix select's later passes and both collecting passes.
__global__ void __launch_bounds__(256) SelectRowsKernel(
    const float* __restrict__ vals, const uint32_t* __restrict__ ids, int64_t ld,
    const uint32_t* __restrict__ counts, int kf, bool select_min, float sentinel,
    float* __restrict__ out_vals, uint32_t* __restrict__ out_ids) {
  __shared__ uint32_t hist[256];
  extern __shared__ uint32_t key_cache[];
  __shared__ int s_above, s_equal;
  const int64_t q = blockIdx.x;
  const int64_t n = counts != nullptr ? min(static_cast<int64_t>(counts[q]), ld) : ld;
  const float* v = vals + q * ld;
  const uint32_t* id = ids + q * ld;
  float* ov = out_vals + q * kf;
  uint32_t* oi = out_ids + q * kf;
  if (n <= kf) {
    for (int64_t i = threadIdx.x; i < kf; i += blockDim.x) {
      ov[i] = i < n ? v[i] : sentinel;
      oi[i] = i < n ? id[i] : kInvalidId;
    }
    return;
  }
  uint32_t* cache = ld <= kKeyCacheMax ? key_cache : nullptr;
  const uint32_t kth = BlockKthLargest(
      n, kf, [&](int64_t i) { return DistanceKey(v[i], select_min); }, hist, cache);
  auto key = [&](int64_t i) {
    return cache != nullptr ? cache[i] : DistanceKey(v[i], select_min);
  };
  if (threadIdx.x == 0) {
    s_above = 0;
    s_equal = 0;
  }
  __syncthreads();
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    if (key(i) > kth) {
      const int at = atomicAdd(&s_above, 1);
      ov[at] = v[i];
      oi[at] = id[i];
    }
  }
  __syncthreads();
  const int above = s_above;  // < kf: the kf-th best key itself is not above kth
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    if (key(i) == kth) {
      const int at = above + atomicAdd(&s_equal, 1);
      if (at < kf) {
        ov[at] = v[i];
        oi[at] = id[i];
      }
    }
  }
}

// Packs each query's candidates into rows of `ld` slots: slot i < counts[q] gets the candidate's
// exact distance (recomputed from the float32 query and the resident row when `rows.slabs` is
// set, else its computed value) and ordinal; the other slots get the sentinel and kInvalidId.
// Blocks of grid.x stride over a query's slots: threads fill, warps rescore one slot each.
template <typename T>
__global__ void __launch_bounds__(256) RescoreKernel(
    const uint32_t* __restrict__ cand_ids, const float* __restrict__ cand_vals, int64_t cap,
    const uint32_t* __restrict__ counts, ResidentRows rows, int dim,
    const float* __restrict__ queries, const float* __restrict__ q_sq_norms,
    const float* __restrict__ x_sq_norms, int metric, float sentinel, int64_t ld,
    float* __restrict__ out_vals, uint32_t* __restrict__ out_ids) {
  const int lane = threadIdx.x & 31;
  const int q = blockIdx.y;
  const int64_t cnt = min(static_cast<int64_t>(counts[q]), ld);
  const int64_t thread = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t n_threads = static_cast<int64_t>(gridDim.x) * blockDim.x;
  float* vals_q = out_vals + static_cast<int64_t>(q) * ld;
  uint32_t* ids_q = out_ids + static_cast<int64_t>(q) * ld;
  const uint32_t* cids = cand_ids + static_cast<int64_t>(q) * cap;
  for (int64_t i = cnt + thread; i < ld; i += n_threads) {
    vals_q[i] = sentinel;
    ids_q[i] = 0xffffffffu;
  }
  if (rows.slabs == nullptr) {
    const float* cvals = cand_vals + static_cast<int64_t>(q) * cap;
    for (int64_t i = thread; i < cnt; i += n_threads) {
      vals_q[i] = cvals[i];
      ids_q[i] = cids[i];
    }
    return;
  }
  const float* qv = queries + static_cast<int64_t>(q) * dim;
  const int64_t warp = thread >> 5;
  const int64_t n_warps = n_threads >> 5;
  if constexpr (sizeof(T) == 2) {
    if (dim % 8 == 0 && (reinterpret_cast<uintptr_t>(qv) & 15) == 0) {
      // Four candidates a warp at a time, eight lanes each (16-byte loads of eight halves): the
      // four rows' loads are in flight together, where a warp a candidate waited for one row
      // after another (RescoreKernel took 28 µs for 100 queries of about 1,250 candidates at
      // gather 1 % on the H200, 2026-11-30, mostly dependent load latency).
      const int sub = lane >> 3, sl = lane & 7;
      for (int64_t i0 = warp * 4; i0 < cnt; i0 += n_warps * 4) {
        const int64_t i = i0 + sub;
        const bool valid = i < cnt;
        const uint32_t id = valid ? cids[i] : 0u;
        float acc = 0.0f;
        if (valid) {
          const T* x = RowAt<T>(rows, id, dim);
          for (int j = sl * 8; j < dim; j += 64) {
            const uint4 raw = *reinterpret_cast<const uint4*>(x + j);
            const float4 q0 = *reinterpret_cast<const float4*>(qv + j);
            const float4 q1 = *reinterpret_cast<const float4*>(qv + j + 4);
            const __half2* h = reinterpret_cast<const __half2*>(&raw);
            const float2 a = __half22float2(h[0]), b = __half22float2(h[1]);
            const float2 c = __half22float2(h[2]), d = __half22float2(h[3]);
            acc = fmaf(a.x, q0.x, acc);
            acc = fmaf(a.y, q0.y, acc);
            acc = fmaf(b.x, q0.z, acc);
            acc = fmaf(b.y, q0.w, acc);
            acc = fmaf(c.x, q1.x, acc);
            acc = fmaf(c.y, q1.y, acc);
            acc = fmaf(d.x, q1.z, acc);
            acc = fmaf(d.y, q1.w, acc);
          }
        }
        for (int off = 4; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off, 8);
        if (valid && sl == 0) {
          vals_q[i] = FinishDistance(metric, acc, q_sq_norms[q], x_sq_norms[id]);
          ids_q[i] = id;
        }
      }
      return;
    }
  }
  for (int64_t i = warp; i < cnt; i += n_warps) {
    const uint32_t id = cids[i];
    const T* x = RowAt<T>(rows, id, dim);
    float acc = 0.0f;
    if constexpr (sizeof(T) == 2) {
      if (dim % 4 == 0) {  // 4 halves (8 bytes) and 4 floats per lane and step
        for (int j = lane * 4; j < dim; j += 128) {
          const uint2 raw = *reinterpret_cast<const uint2*>(x + j);
          const float4 qf = *reinterpret_cast<const float4*>(qv + j);
          const float2 a = __half22float2(*reinterpret_cast<const __half2*>(&raw.x));
          const float2 b = __half22float2(*reinterpret_cast<const __half2*>(&raw.y));
          acc = fmaf(a.x, qf.x, acc);
          acc = fmaf(a.y, qf.y, acc);
          acc = fmaf(b.x, qf.z, acc);
          acc = fmaf(b.y, qf.w, acc);
        }
      } else {
        for (int j = lane; j < dim; j += 32) acc = fmaf(ToFloat(x[j]), qv[j], acc);
      }
    } else {
      for (int j = lane; j < dim; j += 32) acc = fmaf(ToFloat(x[j]), qv[j], acc);
    }
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
    if (lane == 0) {
      vals_q[i] = FinishDistance(metric, acc, q_sq_norms[q], x_sq_norms[id]);
      ids_q[i] = id;
    }
  }
}

__global__ void NoopKernel() {}

// Environment knobs for benchmarks: SIEVE_GPU_NO_CANDIDATES=1 turns candidate selection off;
// SIEVE_GPU_CAND_TILE_MB sets its tile (see CandidateTileBytes).
bool CandidatesDisabled() {
  static const bool off = [] {
    const char* v = std::getenv("SIEVE_GPU_NO_CANDIDATES");
    return v != nullptr && v[0] == '1';
  }();
  return off;
}
// SIEVE_GPU_CAND_SAMPLE_X=F scales the candidate scan's exact sample (default 1: sqrt(4 k n)
// columns). A larger sample costs more up front and keeps fewer candidates a query (about
// 4 k n / sample) to rescore and select: for benchmarks to find the balance.
double CandidateSampleFactor() {
  static const double f = [] {
    const char* v = std::getenv("SIEVE_GPU_CAND_SAMPLE_X");
    const double x = v != nullptr ? std::atof(v) : 1.0;
    return x >= 0.25 && x <= 16.0 ? x : 1.0;
  }();
  return f;
}

// The bytes of dot products a candidate tile holds for a block of `block_bytes` of them:
// SIEVE_GPU_CAND_TILE_MB when set; else a gathered block of at most 64 MiB is one tile (at
// 100,000 gathered rows and 100 queries, 40 MB, one tile took 0.247 ms against 0.259 for two
// of 32 MiB: H200, results/2026-11-30-h200-session4/round3); else 32 MiB, to stay in L2.
size_t CandidateTileBytes(bool gathered, size_t block_bytes) {
  static const size_t forced = [] {
    const char* v = std::getenv("SIEVE_GPU_CAND_TILE_MB");
    const long mb = v != nullptr ? std::atol(v) : 0;
    return mb > 0 ? static_cast<size_t>(mb) << 20 : size_t{0};
  }();
  constexpr size_t kGatheredTileBytes = size_t{64} << 20;
  if (forced > 0) return forced;
  if (gathered && block_bytes <= kGatheredTileBytes) return kGatheredTileBytes;
  return size_t{32} << 20;
}
// SIEVE_GPU_STAGES=1: the last timed run of TimeDevicePart prints, on stderr, the device
// milliseconds between stage marks (CUDA events recorded in the stream).
struct StageMarks {
  bool on = [] {
    const char* v = std::getenv("SIEVE_GPU_STAGES");
    return v != nullptr && v[0] == '1';
  }();
  std::vector<cudaEvent_t> events;
  std::vector<const char*> names;
  size_t used = 0;
  void Record(const char* name, cudaStream_t stream) {
    if (!on) return;
    if (used == events.size()) {
      cudaEvent_t e = nullptr;
      if (cudaEventCreate(&e) != cudaSuccess) return;
      events.push_back(e);
      names.push_back(nullptr);
    }
    names[used] = name;
    (void)cudaEventRecord(events[used], stream);
    ++used;
  }
  void Print(const char* what, cudaEvent_t start) {
    float prev = 0;
    std::fprintf(stderr, "stages %s:", what);
    for (size_t i = 0; i < used; ++i) {
      float t = 0;
      (void)cudaEventElapsedTime(&t, start, events[i]);
      std::fprintf(stderr, " %s=%.4f", names[i], t - prev);
      prev = t;
    }
    std::fprintf(stderr, "\n");
  }
};
StageMarks g_marks;

// Searches that fell back from candidate selection to the full path (tests read it).
std::atomic<uint64_t> g_candidate_chunks{0};
std::atomic<uint64_t> g_candidate_fallbacks{0};
std::atomic<uint64_t> g_threshold_chunks{0};

unsigned GridFor(int64_t n, int block, int64_t cap = 65535LL * 16) {
  int64_t g = (n + block - 1) / block;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(g, cap)));
}

// ---------------------------------------------------------------------------------------------
// Device-resident shards.

// A shard's rows live in its own PagePool, in pages taken in order: row r is slot r % 64 of
// page r / 64, so `pages` is the identity and one page table row serves every request. Slabs
// never move, so appends upload only the new rows; the norms array of the pool is indexed by
// row.
struct DeviceShard {
  uint64_t generation = 0;
  uint32_t rows = 0;
  uint32_t dim = 0;
  DType dtype = DType::kFloat32;
  std::unique_ptr<PagePool> pool;
  std::vector<int32_t> pages;    // page of each block of 64 rows, in row order (pages[i] == i)
  int32_t* d_pages = nullptr;    // device copy of `pages` (a one-row block table)
  size_t d_pages_capacity = 0;   // entries
  std::vector<const char*> slab_bases;  // host copy of the pool's slab table (for cuBLAS)
  float max_sq_norm = 0.0f;      // the largest squared norm of a resident row (error bounds)

  size_t elem() const { return dtype == DType::kFloat16 ? 2 : 4; }
  PagedKeys keys() const { return pool != nullptr ? pool->view() : PagedKeys{}; }
  ResidentRows resident() const { return MakeResidentRows(keys()); }
  const float* sq_norms() const { return keys().sq_norms; }
  // Rows per slab.
  uint64_t slab_rows() const {
    return pool != nullptr ? uint64_t{kPageRows} * pool->pages_per_slab() : 0;
  }
  uint64_t device_bytes() const {
    return (pool != nullptr ? pool->device_bytes() : 0) + d_pages_capacity * sizeof(int32_t);
  }
  void Free() {
    pool.reset();
    if (d_pages != nullptr) (void)cudaFree(d_pages);
    d_pages = nullptr;
    d_pages_capacity = 0;
    pages.clear();
    slab_bases.clear();
    rows = 0;
  }
};

// The slab size of new resident shards: kResidentSlabBytes, or SIEVE_GPU_SLAB_KB KiB.
size_t ResidentSlabBytes() {
  const char* v = std::getenv("SIEVE_GPU_SLAB_KB");
  const long kb = v != nullptr ? std::atol(v) : 0;
  return kb > 0 ? static_cast<size_t>(kb) << 10 : kResidentSlabBytes;
}

}  // namespace detail

using detail::DeviceBuffer;
using detail::DeviceShard;
using detail::FromCuda;
using detail::kInvalidId;

struct GpuExecutor::State {
  int device = 0;
  std::string name;
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  std::unique_ptr<detail::RaftSelectK> select;
  cudaEvent_t ev_start = nullptr;
  cudaEvent_t ev_stop = nullptr;

  mutable std::mutex mu;
  std::unordered_map<uint64_t, DeviceShard> shards;
  GpuPathCounts counts;
  uint64_t uploaded_rows = 0;

  detail::PinnedBuffer pinned_filter;   // bitset or bitmap words (+ union bitset)
  detail::PinnedBuffer pinned_queries;  // float32 queries, split half queries, norms, starts
  detail::PinnedBuffer pinned_results;  // values and ids

  ~State() {
    for (auto& [key, s] : shards) s.Free();
    select.reset();
    if (cublas != nullptr) (void)cublasDestroy(cublas);
    if (ev_start != nullptr) (void)cudaEventDestroy(ev_start);
    if (ev_stop != nullptr) (void)cudaEventDestroy(ev_stop);
    if (stream != nullptr) (void)cudaStreamDestroy(stream);
  }

  Status EnsureResident(const ShardView& view, DeviceShard** out);
  // *out = the largest of n device floats (synchronizes the stream).
  Status MaxOnDevice(const float* values, size_t n, float* out);
  Status GrowPages(DeviceShard* s, uint32_t rows);
};

namespace {

size_t WordsFor(uint32_t rows) { return (static_cast<size_t>(rows) + 31) / 32; }

// What one search needs on the host side, prepared once (TimeDevicePart re-runs the device part).
struct Prepared {
  uint32_t nq = 0;
  uint32_t dim = 0;
  uint32_t k = 0;
  int metric = 0;
  bool select_min = true;
  float sentinel = 0;
  bool per_query = false;
  SearchPath path = SearchPath::kDense;
  const DeviceShard* shard = nullptr;
  uint32_t rows = 0;              // the snapshot's rows (the resident copy may hold more)
  size_t words = 0;               // per filter row
  size_t filter_words = 0;        // words in the pinned filter (bitset: words; bitmap: nq*words)
  size_t union_offset_words = 0;  // gather over a bitmap: the union bitset follows the bitmap
  size_t upload_words = 0;        // filter_words, plus the union bitset when there is one
  bool no_candidates = false;     // set after a candidate list overflowed: use the full path
  bool no_filter = false;         // dense with every row passing every query's filter: none
                                  // is uploaded or tested
  bool ids_direct = false;        // sddmm/gather over a sparse bitset: the pinned buffer holds
                                  // the passing ordinals (fewer words than the bitset), which
                                  // are uploaded as the compacted list
  uint64_t union_count = 0;
  uint64_t total_passing = 0;     // bitset: n_pass; bitmap: sum over queries
  std::vector<uint64_t> starts;   // bitmap: prefix sums of per-query counts (nq + 1)
  uint64_t max_passing = 0;       // bitmap: largest per-query count
  bool split = false;             // float16 GEMM with hi/lo query halves
  float scale = 1.0f;
  // Offsets (bytes) into pinned_queries.
  size_t off_queries = 0, off_split = 0, off_qnorms = 0, off_starts = 0, queries_bytes = 0;
};

const char* PathName(SearchPath p) {
  switch (p) {
    case SearchPath::kSddmm: return "sddmm";
    case SearchPath::kGather: return "gather";
    case SearchPath::kDense: return "dense";
    default: return "auto";
  }
}

bool NeedsCompaction(SearchPath p) { return p == SearchPath::kSddmm || p == SearchPath::kGather; }

}  // namespace

// Gives `s` pages for `rows` rows (in order: the identity table), its device page table and
// the host copy of the slab table. On failure the shard may hold pages it has not recorded:
// the caller drops it.
Status GpuExecutor::State::GrowPages(DeviceShard* s, uint32_t rows) {
  const size_t want = (size_t{rows} + kPageRows - 1) / kPageRows;
  const size_t have = s->pages.size();
  if (want <= have) return Status::OK();
  std::vector<int32_t> fresh;
  SIEVE_RETURN_IF_ERROR(
      s->pool->Allocate(static_cast<uint32_t>(want - have), &fresh)
          .WithContext("resident shard of " + std::to_string(rows) + " rows x " +
                       std::to_string(s->dim)));
  for (size_t i = 0; i < fresh.size(); ++i) {
    if (fresh[i] != static_cast<int32_t>(have + i)) {
      return Status::Internal("page pool of a resident shard returned page " +
                              std::to_string(fresh[i]) + " for rows from " +
                              std::to_string((have + i) * kPageRows) + " (expected page " +
                              std::to_string(have + i) + ")");
    }
  }
  s->pages.insert(s->pages.end(), fresh.begin(), fresh.end());
  if (want > s->d_pages_capacity) {
    // Geometric, like the rows it indexes; it is 1/16 of a float32 norm per row.
    const size_t cap = std::max<size_t>({want, s->d_pages_capacity * 2, 64});
    int32_t* d = nullptr;
    cudaError_t err = cudaMalloc(&d, cap * sizeof(int32_t));
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      return FromCuda(err, "cudaMalloc (resident page table)");
    }
    if (have > 0) {
      err = cudaMemcpyAsync(d, s->d_pages, have * sizeof(int32_t), cudaMemcpyDeviceToDevice,
                            stream);
      if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
      if (err != cudaSuccess) {
        (void)cudaFree(d);
        return FromCuda(err, "copying the resident page table");
      }
    }
    if (s->d_pages != nullptr) (void)cudaFree(s->d_pages);
    s->d_pages = d;
    s->d_pages_capacity = cap;
  }
  SIEVE_CUDA_TRY(cudaMemcpyAsync(s->d_pages + have, s->pages.data() + have,
                                 (want - have) * sizeof(int32_t), cudaMemcpyHostToDevice,
                                 stream));
  SIEVE_CUDA_TRY(cudaStreamSynchronize(stream));
  // cuBLAS takes row pointers from the host: keep the slab addresses here too.
  const size_t n_slabs = s->pool->capacity_pages() / s->pool->pages_per_slab();
  if (n_slabs != s->slab_bases.size()) {
    std::vector<const char*> bases(n_slabs);
    SIEVE_CUDA_TRY(cudaMemcpy(bases.data(), s->keys().slabs, n_slabs * sizeof(void*),
                              cudaMemcpyDeviceToHost));
    s->slab_bases = std::move(bases);
  }
  return Status::OK();
}

Status GpuExecutor::State::MaxOnDevice(const float* values, size_t n, float* out) {
  DeviceBuffer<float> result;
  SIEVE_RETURN_IF_ERROR(result.Allocate(1, stream));
  size_t temp_bytes = 0;
  SIEVE_CUDA_TRY(cub::DeviceReduce::Max(nullptr, temp_bytes, values, result.get(),
                                        static_cast<int64_t>(n), stream));
  DeviceBuffer<unsigned char> temp;
  SIEVE_RETURN_IF_ERROR(temp.Allocate(std::max<size_t>(temp_bytes, 1), stream));
  SIEVE_CUDA_TRY(cub::DeviceReduce::Max(temp.get(), temp_bytes, values, result.get(),
                                        static_cast<int64_t>(n), stream));
  SIEVE_CUDA_TRY(cudaMemcpyAsync(out, result.get(), sizeof(float), cudaMemcpyDeviceToHost,
                                 stream));
  SIEVE_CUDA_TRY(cudaStreamSynchronize(stream));
  return Status::OK();
}

Status GpuExecutor::State::EnsureResident(const ShardView& view, DeviceShard** out) {
  auto it = shards.find(view.key);
  DeviceShard* s = it == shards.end() ? nullptr : &it->second;
  if (s != nullptr) {
    const bool same_layout = s->dim == view.dim && s->dtype == view.dtype;
    if (same_layout && s->generation == view.generation && view.rows <= s->rows) {
      *out = s;  // the same or an older snapshot: a prefix of what is resident
      return Status::OK();
    }
    if (!same_layout || view.rows < s->rows) {
      s->Free();
      shards.erase(it);
      s = nullptr;
    }
  }
  if (s == nullptr) {
    DeviceShard fresh;
    fresh.dim = view.dim;
    fresh.dtype = view.dtype;
    const KeyType type = view.dtype == DType::kFloat16 ? KeyType::kFloat16 : KeyType::kFloat32;
    SIEVE_RETURN_IF_ERROR(
        PagePool::Create(type, view.dim, detail::ResidentSlabBytes(), &fresh.pool));
    s = &shards.emplace(view.key, std::move(fresh)).first->second;
  }
  const uint32_t from = s->rows;
  if (view.rows > from) {
    const size_t pages_before = s->pages.size();
    auto grow_and_write = [&]() -> Status {
      SIEVE_RETURN_IF_ERROR(GrowPages(s, view.rows));
      // Only the new rows travel; resident rows never move.
      return s->pool->Write(s->pages, from, view.vectors + size_t{from} * view.dim,
                            view.rows - from, stream);
    };
    Status st = grow_and_write();
    if (!st.ok()) {
      // Nothing half-updated stays cached. A pool that only failed to grow took nothing, and
      // the shard keeps its rows.
      if (st.IsResourceExhausted() && s->rows > 0 && s->pages.size() == pages_before &&
          s->pool->allocated_pages() == pages_before) {
        return st;
      }
      s->Free();
      shards.erase(view.key);
      return st;
    }
    uploaded_rows += view.rows - from;
    // The largest squared norm of the new rows, as stored (error bounds of the threshold path).
    float new_max = std::numeric_limits<float>::infinity();
    if (MaxOnDevice(s->sq_norms() + from, view.rows - from, &new_max).ok()) {
      s->max_sq_norm = std::max(s->max_sq_norm, new_max);
    } else {
      (void)cudaGetLastError();
      s->max_sq_norm = std::numeric_limits<float>::infinity();  // the path then never fits
    }
  }
  s->rows = std::max(s->rows, view.rows);
  s->generation = view.generation;
  *out = s;
  return Status::OK();
}

GpuExecutor::GpuExecutor(std::unique_ptr<State> state) : state_(std::move(state)) {}
GpuExecutor::~GpuExecutor() = default;

Status GpuExecutor::Create(int device, std::unique_ptr<GpuExecutor>* out) {
  out->reset();
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return Status::Unavailable(std::string("no usable CUDA device: cudaGetDeviceCount failed: ") +
                               cudaGetErrorString(err));
  }
  if (count == 0) return Status::Unavailable("no CUDA device is present");
  if (device < 0 || device >= count) {
    return Status::Unavailable("CUDA device " + std::to_string(device) + " does not exist (" +
                               std::to_string(count) + " present)");
  }
  auto state = std::make_unique<State>();
  state->device = device;
  cudaDeviceProp prop{};
  err = cudaGetDeviceProperties(&prop, device);
  if (err != cudaSuccess) {
    return Status::Unavailable(std::string("cannot query CUDA device: ") + cudaGetErrorString(err));
  }
  state->name = std::string("gpu:") + prop.name;
  err = cudaSetDevice(device);
  if (err != cudaSuccess) {
    return Status::Unavailable(std::string("cannot use CUDA device: ") + cudaGetErrorString(err));
  }
  // The kernels are built for one architecture (sm_90 by default): prove they load here.
  detail::NoopKernel<<<1, 1>>>();
  err = cudaDeviceSynchronize();
  if (err == cudaSuccess) err = cudaGetLastError();
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return Status::Unavailable(std::string("CUDA device ") + prop.name + " (sm_" +
                               std::to_string(prop.major) + std::to_string(prop.minor) +
                               ") cannot run this build's kernels: " + cudaGetErrorString(err));
  }
  // Keep freed stream-ordered memory in the pool: searches allocate their workspaces per call.
  cudaMemPool_t pool;
  SIEVE_CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool, device));
  uint64_t threshold = std::numeric_limits<uint64_t>::max();
  SIEVE_CUDA_TRY(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));

  SIEVE_CUDA_TRY(cudaStreamCreateWithFlags(&state->stream, cudaStreamNonBlocking));
  SIEVE_CUDA_TRY(cudaEventCreate(&state->ev_start));
  SIEVE_CUDA_TRY(cudaEventCreate(&state->ev_stop));
  SIEVE_CUBLAS_TRY(cublasCreate(&state->cublas));
  SIEVE_CUBLAS_TRY(cublasSetStream(state->cublas, state->stream));
  SIEVE_CUBLAS_TRY(cublasSetMathMode(state->cublas, CUBLAS_DEFAULT_MATH));
  SIEVE_RETURN_IF_ERROR(detail::RaftSelectK::Create(state->stream, detail::kSelectWorkspaceBytes,
                                                     &state->select));
  out->reset(new GpuExecutor(std::move(state)));
  return Status::OK();
}

std::string GpuExecutor::name() const { return state_->name; }

GpuPathCounts GpuExecutor::path_counts() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  GpuPathCounts c = state_->counts;
  c.candidate_chunks = detail::g_candidate_chunks.load();
  c.candidate_fallbacks = detail::g_candidate_fallbacks.load();
  c.threshold_chunks = detail::g_threshold_chunks.load();
  return c;
}

uint64_t GpuExecutor::resident_bytes() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  uint64_t total = 0;
  for (const auto& [key, s] : state_->shards) total += s.device_bytes();
  return total;
}

uint64_t GpuExecutor::uploaded_rows() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->uploaded_rows;
}

void GpuExecutor::ClearCache() {
  std::lock_guard<std::mutex> lock(state_->mu);
  (void)cudaStreamSynchronize(state_->stream);
  for (auto& [key, s] : state_->shards) s.Free();
  state_->shards.clear();
}

Status GpuExecutor::Search(const ShardView& shard, const BatchFilters& filters,
                           const ExecRequest& request, ExecResult* result) {
  return Run(shard, filters, request, 0, 0, nullptr, result);
}

Status GpuExecutor::TimeDevicePart(const ShardView& shard, const BatchFilters& filters,
                                   const ExecRequest& request, int warmup, int reps,
                                   std::vector<double>* ms, ExecResult* result) {
  if (warmup < 0 || reps < 1 || ms == nullptr) {
    return Status::InvalidArgument("TimeDevicePart needs warmup >= 0, reps >= 1 and an output");
  }
  return Run(shard, filters, request, warmup, reps, ms, result);
}

namespace {

// Device rows for cuBLAS, which takes plain row-major blocks: resident rows are contiguous only
// within a slab, so a GEMM over rows [off, off + n) is issued in pieces that never cross a
// block end. The gathered block of the gather path is one block.
struct RowBlocks {
  const char* const* bases = nullptr;  // block b holds rows [b * block_rows, (b + 1) * block_rows)
  uint64_t block_rows = std::numeric_limits<uint64_t>::max();
  size_t row_bytes = 0;

  const char* At(uint64_t row) const {
    return bases[row / block_rows] + (row % block_rows) * row_bytes;
  }
  // Rows from `row` to the end of its block.
  uint64_t ToEnd(uint64_t row) const { return block_rows - row % block_rows; }
};

// The device part of one search: uploads, compaction, the path, top-k and the download of
// nq × k (value, id) pairs into pinned memory (slots a path left empty hold kInvalidId).
class DeviceRun {
 public:
  DeviceRun(cudaStream_t stream, cublasHandle_t cublas,
            detail::RaftSelectK* select, const Prepared& p, const uint32_t* h_filter,
            const char* h_queries, float* h_vals, uint32_t* h_ids, uint32_t* h_counts)
      : stream_(stream),
        cublas_(cublas),
        select_(select),
        p_(p),
        h_filter_(h_filter),
        h_queries_(h_queries),
        h_vals_(h_vals),
        h_ids_(h_ids),
        h_counts_(h_counts) {}

  // The candidate list length of the chunks that ran candidate selection (0: none did).
  uint64_t candidate_cap() const { return cand_cap_; }
  // Whether a chunk selected through the threshold select.
  bool used_threshold() const { return used_threshold_; }

  Status Run() {
    const Prepared& p = p_;
    const size_t nk = size_t{p.nq} * p.k;
    std::fill(h_ids_, h_ids_ + nk, kInvalidId);
    std::fill(h_vals_, h_vals_ + nk, p.sentinel);
    std::fill(h_counts_, h_counts_ + p.nq, 0u);
    if (p.total_passing == 0 || p.rows == 0) return Status::OK();

    // Uploads: filter words, queries (float32 and split halves), query norms, list starts.
    if (p.ids_direct) {
      SIEVE_RETURN_IF_ERROR(d_ids_.Allocate(p.upload_words, stream_));
      SIEVE_CUDA_TRY(cudaMemcpyAsync(d_ids_.get(), h_filter_, p.upload_words * 4,
                                     cudaMemcpyHostToDevice, stream_));
      n_ids_ = p.total_passing;
    } else if (!p.no_filter) {
      SIEVE_RETURN_IF_ERROR(d_filter_.Allocate(p.upload_words, stream_));
      SIEVE_CUDA_TRY(cudaMemcpyAsync(d_filter_.get(), h_filter_, p.upload_words * 4,
                                     cudaMemcpyHostToDevice, stream_));
    }
    SIEVE_RETURN_IF_ERROR(d_queries_.Allocate(p.queries_bytes, stream_));
    SIEVE_CUDA_TRY(cudaMemcpyAsync(d_queries_.get(), h_queries_, p.queries_bytes,
                                   cudaMemcpyHostToDevice, stream_));
    queries_ = reinterpret_cast<const float*>(d_queries_.get() + p.off_queries);
    split_ = reinterpret_cast<const __half*>(d_queries_.get() + p.off_split);
    qnorms_ = reinterpret_cast<const float*>(d_queries_.get() + p.off_qnorms);
    starts_ = reinterpret_cast<const uint64_t*>(d_queries_.get() + p.off_starts);

    Mark("upload");
    if (NeedsCompaction(p.path) && !p.ids_direct) {
      const bool list_per_query = p.path == SearchPath::kSddmm && p.per_query;
      const uint32_t* words = d_filter_.get();
      int64_t n_words = static_cast<int64_t>(p.words);
      uint64_t count = p.total_passing;
      if (p.path == SearchPath::kGather && p.per_query) {
        words += p.union_offset_words;
        count = p.union_count;
      } else if (list_per_query) {
        n_words = static_cast<int64_t>(p.filter_words);
      }
      SIEVE_RETURN_IF_ERROR(Compact(words, n_words, count));
      n_ids_ = count;
      Mark("compact");
    }

    for (uint32_t q0 = 0; q0 < p.nq; q0 += chunk()) {
      const uint32_t m = std::min(chunk(), p.nq - q0);
      SIEVE_RETURN_IF_ERROR(RunChunk(q0, m));
    }
    return Status::OK();
  }

 private:
  uint32_t chunk() const {
    const Prepared& p = p_;
    if (p.path == SearchPath::kSddmm) {
      const uint64_t ld = std::max<uint64_t>(1, p.per_query ? p.max_passing : p.total_passing);
      const uint64_t fit = detail::kTileBudgetBytes / (ld * 4);
      return static_cast<uint32_t>(std::clamp<uint64_t>(fit, 1, detail::kMaxQueryChunk));
    }
    return detail::kMaxQueryChunk;
  }

  Status Compact(const uint32_t* words, int64_t n_words, uint64_t count) {
    DeviceBuffer<uint64_t> offsets;
    SIEVE_RETURN_IF_ERROR(offsets.Allocate(n_words, stream_));
    detail::PopcountKernel<<<detail::GridFor(n_words, 256), 256, 0, stream_>>>(words, n_words,
                                                                             offsets.get());
    SIEVE_CUDA_CHECK_LAUNCH("PopcountKernel");
    size_t temp_bytes = 0;
    SIEVE_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, offsets.get(),
                                                 offsets.get(), n_words, stream_));
    DeviceBuffer<unsigned char> temp;
    SIEVE_RETURN_IF_ERROR(temp.Allocate(std::max<size_t>(temp_bytes, 1), stream_));
    SIEVE_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp.get(), temp_bytes, offsets.get(),
                                                 offsets.get(), n_words, stream_));
    SIEVE_RETURN_IF_ERROR(d_ids_.Allocate(std::max<uint64_t>(count, 1), stream_));
    const int64_t words_per_row = static_cast<int64_t>(p_.words);
    detail::ScatterIdsKernel<<<detail::GridFor(n_words, 256), 256, 0, stream_>>>(
        words, n_words, words_per_row, offsets.get(), count, d_ids_.get());
    SIEVE_CUDA_CHECK_LAUNCH("ScatterIdsKernel");
    return Status::OK();
  }

  // Writes the chunk's final (value, id) pairs, kf per query, into the pinned results.
  Status Download(uint32_t q0, uint32_t m, int kf, const float* d_vals, const uint32_t* d_ids) {
    const size_t k = p_.k;
    SIEVE_CUDA_TRY(cudaMemcpy2DAsync(h_vals_ + size_t{q0} * k, k * sizeof(float), d_vals,
                                     kf * sizeof(float), kf * sizeof(float), m,
                                     cudaMemcpyDeviceToHost, stream_));
    SIEVE_CUDA_TRY(cudaMemcpy2DAsync(h_ids_ + size_t{q0} * k, k * sizeof(uint32_t), d_ids,
                                     kf * sizeof(uint32_t), kf * sizeof(uint32_t), m,
                                     cudaMemcpyDeviceToHost, stream_));
    return Status::OK();
  }

  Status Map(const detail::MapArgs& a) {
    detail::MapPositionsKernel<<<detail::GridFor(int64_t{a.m} * a.kf, 256), 256, 0, stream_>>>(a);
    SIEVE_CUDA_CHECK_LAUNCH("MapPositionsKernel");
    return Status::OK();
  }

  // The filter words that the chunk of queries starting at q0 tests, or null: columns gathered
  // through a shared bitset all pass it, so only a bitmap needs testing there; and without a
  // filter (no_filter) every row passes.
  const uint32_t* ChunkFilter(uint32_t q0, const uint32_t* col_ids) const {
    if ((col_ids != nullptr && !p_.per_query) || p_.no_filter) return nullptr;
    return d_filter_.get() + (p_.per_query ? size_t{q0} * p_.words : 0);
  }
  int64_t FilterStride() const { return p_.per_query ? static_cast<int64_t>(p_.words) : 0; }

  // Turns the m × n_cols dot products in `dots` into distances in place, the sentinel where
  // the chunk's filter fails. Columns are col_ids[col_base + j] (or col_base + j without ids).
  Status Epilogue(float* dots, uint32_t q0, uint32_t m, uint64_t n_cols, const uint32_t* col_ids,
                  int64_t col_base) {
    detail::EpilogueArgs e;
    e.dots = dots;
    e.out = dots;
    e.n_cols = static_cast<int64_t>(n_cols);
    e.m = static_cast<int>(m);
    e.split = p_.split;
    e.scale = p_.scale;
    e.q_sq_norms = qnorms_ + q0;
    e.x_sq_norms = p_.shard->sq_norms();
    e.col_ids = col_ids;
    e.col_base = col_base;
    e.filter = ChunkFilter(q0, col_ids);
    e.filter_stride = FilterStride();
    e.metric = p_.metric;
    e.sentinel = p_.sentinel;
    dim3 grid(detail::GridFor(static_cast<int64_t>(n_cols), 256, 4096), m);
    detail::EpilogueKernel<<<grid, 256, 0, stream_>>>(e);
    SIEVE_CUDA_CHECK_LAUNCH("EpilogueKernel");
    return Status::OK();
  }

  // dots (query-major, gemm_cols rows of n_tile) = B · Aᵀ for n_tile rows of A (row-major,
  // dim wide, of the shard's dtype) and gemm_cols query rows of B (float16 rows with float16
  // queries, else float32).
  Status Gemm(const void* A, uint64_t n_tile, const void* B, int gemm_cols, float* dots,
              uint64_t ld = 0) {
    if (ld == 0) ld = n_tile;
    const Prepared& p = p_;
    const float alpha = 1.0f, beta = 0.0f;
    const bool half = p.shard->dtype == DType::kFloat16;
    const cudaDataType_t t = half ? CUDA_R_16F : CUDA_R_32F;
    SIEVE_CUBLAS_TRY(cublasGemmEx(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n_tile),
                                  gemm_cols, static_cast<int>(p.dim), &alpha, A, t,
                                  static_cast<int>(p.dim), B, t, static_cast<int>(p.dim), &beta,
                                  dots, CUDA_R_32F, static_cast<int>(ld), CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT));
    return Status::OK();
  }

  // Candidate selection sizes for n_cols columns: the exact sample is the first `sample`
  // columns; each query keeps at most `cap` candidates (about 4× the expected k·n/sample).
  void CandidateSizes(uint64_t n_cols, uint64_t* sample, uint64_t* cap) const {
    const double k = p_.k;
    uint64_t s = static_cast<uint64_t>(std::ceil(detail::CandidateSampleFactor() *
                                                 std::sqrt(4.0 * k * static_cast<double>(n_cols))));
    s = std::max<uint64_t>((s + 1023) / 1024 * 1024, std::max<uint64_t>(p_.k, 1024));
    uint64_t c = static_cast<uint64_t>(std::ceil(4.0 * k * static_cast<double>(n_cols) / s));
    c = std::max<uint64_t>((c + 1023) / 1024 * 1024, 4 * uint64_t{p_.k});
    *sample = s;
    *cap = std::min<uint64_t>(c, n_cols);
  }

  bool UseCandidates(uint32_t m, uint64_t n_cols) const {
    if (detail::CandidatesDisabled() || p_.no_candidates) return false;
    uint64_t sample = 0, cap = 0;
    CandidateSizes(n_cols, &sample, &cap);
    const uint64_t gemm_cols = p_.split ? 2 * m : m;
    return n_cols >= detail::kMinCandidateColumns && n_cols >= 4 * sample &&
           n_cols <= std::numeric_limits<int32_t>::max() &&
           gemm_cols * sample * 4 <= detail::kTileBudgetBytes &&
           size_t{m} * cap * 16 <= detail::kTileBudgetBytes;
  }

  // thresh[q] = the k-th best exact distance of query q over the first `sample` columns (the
  // sentinel when they hold fewer than k passing rows): never better than its true k-th best.
  Status SampleThresholds(uint32_t q0, uint32_t m, const RowBlocks& rows, const uint32_t* col_ids,
                          uint64_t sample, float* thresh) {
    const Prepared& p = p_;
    const int gemm_cols = static_cast<int>(p.split ? 2 * m : m);
    DeviceBuffer<float> dots;
    SIEVE_RETURN_IF_ERROR(dots.Allocate(size_t{static_cast<uint32_t>(gemm_cols)} * sample,
                                        stream_));
    const void* B = p.split ? static_cast<const void*>(split_ + size_t{2} * q0 * p.dim)
                            : static_cast<const void*>(queries_ + size_t{q0} * p.dim);
    for (uint64_t off = 0; off < sample;) {
      const uint64_t n = std::min<uint64_t>(sample - off, rows.ToEnd(off));
      SIEVE_RETURN_IF_ERROR(Gemm(rows.At(off), n, B, gemm_cols, dots.get() + off, sample));
      off += n;
    }
    SIEVE_RETURN_IF_ERROR(Epilogue(dots.get(), q0, m, sample, col_ids, 0));
    detail::KthBestKernel<<<m, 256, detail::KeyCacheBytes(static_cast<int64_t>(sample)),
                            stream_>>>(dots.get(), static_cast<int64_t>(sample),
                                       static_cast<int>(p.k), p.select_min, thresh);
    SIEVE_CUDA_CHECK_LAUNCH("KthBestKernel");
    return Status::OK();
  }

  // Exact top-k over n_cols columns without materialising every distance: (1) the exact path on
  // the first `sample` columns gives each query a threshold no better than its true k-th best;
  // (2) L2-sized tiles: GEMM (for float16 rows only the high halves of the queries: the low
  // halves move a dot by at most 2^-11 |q||x|, covered by the error bound) and one pass that
  // finishes distances, applies the filter and keeps the rows that can beat the threshold;
  // (3) the kept rows are rescored exactly (float16: float32 query against the row, as SDDMM
  // does) and select_k picks the k best. The per-query counts go to the host with the results;
  // a count above `cap` (a list overflowed) makes GpuExecutor::Run rerun with the full path.
  Status Candidates(uint32_t q0, uint32_t m, const RowBlocks& rows, const uint32_t* col_ids,
                    uint64_t n_cols) {
    const Prepared& p = p_;
    const bool half = p.shard->dtype == DType::kFloat16;
    uint64_t sample = 0, cap = 0;
    CandidateSizes(n_cols, &sample, &cap);
    const int kf = static_cast<int>(std::min<uint64_t>(p.k, n_cols));
    const uint32_t* filter = ChunkFilter(q0, col_ids);
    const int64_t filter_stride = FilterStride();

    // (1) Thresholds from the exact path on the first `sample` columns.
    DeviceBuffer<float> thresh;
    SIEVE_RETURN_IF_ERROR(thresh.Allocate(m, stream_));
    SIEVE_RETURN_IF_ERROR(SampleThresholds(q0, m, rows, col_ids, sample, thresh.get()));
    Mark("cand.threshold");

    // (2) Candidates, tile by tile.
    DeviceBuffer<uint32_t> counts, cand_ids;
    DeviceBuffer<float> cand_vals;
    SIEVE_RETURN_IF_ERROR(counts.Allocate(m, stream_));
    SIEVE_RETURN_IF_ERROR(cand_ids.Allocate(size_t{m} * cap, stream_));
    SIEVE_RETURN_IF_ERROR(cand_vals.Allocate(size_t{m} * cap, stream_));
    SIEVE_CUDA_TRY(cudaMemsetAsync(counts.get(), 0, size_t{m} * 4, stream_));
    const int gemm_cols = static_cast<int>(m);
    const void* B = half ? static_cast<const void*>(split_ + size_t{2} * q0 * p.dim)
                         : static_cast<const void*>(queries_ + size_t{q0} * p.dim);
    detail::CandidateArgs c{};
    c.scale = half ? p.scale : 1.0f;
    c.q_sq_norms = qnorms_ + q0;
    c.x_sq_norms = p.shard->sq_norms();
    if (col_ids != nullptr) {
      // A gathered block: its norms by position, read in order (by ordinal they are scattered
      // reads, 8.4 M of them for 100 queries over 84k rows: 0.1 ms on the H200, 2026-11-30).
      SIEVE_RETURN_IF_ERROR(GatheredNorms());
      c.pos_sq_norms = gathered_norms_.get();
    }
    c.col_ids = col_ids;
    c.filter = filter;
    c.filter_stride = filter_stride;
    c.metric = p.metric;
    c.select_min = p.select_min;
    // float16: the low query halves (2^-11 relative) and float32 accumulation; both: the
    // difference between two float32 summation orders (the threshold's and this pass's).
    c.err_rel = half ? 0x1p-9f + 0x1p-13f : 0x1p-13f;
    c.thresh = thresh.get();
    c.counts = counts.get();
    c.cand_ids = cand_ids.get();
    c.cand_vals = cand_vals.get();
    c.cap = static_cast<int64_t>(cap);
    const bool fused = half && detail::FusedEnabled() && p.dim % 8 == 0 &&
                       p.dim <= detail::kFusedMaxDim && m <= 128;
    if (fused) {
      detail::FusedArgs fa;
      fa.dim = static_cast<int>(p.dim);
      fa.dimp = static_cast<int>((p.dim + 15) / 16 * 16);
      fa.q_hi = split_ + size_t{2} * q0 * p.dim;
      fa.m = static_cast<int>(m);
      fa.c = c;
      const int nf = m <= 32 ? 2 : m <= 64 ? 4 : 8;
      const size_t smem = detail::FusedSmemBytes(nf, fa.dimp);
      auto launch = [&](auto kernel) -> Status {
        SIEVE_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(smem)));
        // One launch per slab piece: the kernel reads its rows as one contiguous block.
        for (uint64_t off = 0; off < n_cols;) {
          const uint64_t n = std::min<uint64_t>(n_cols - off, rows.ToEnd(off));
          fa.rows = reinterpret_cast<const __half*>(rows.At(off));
          fa.n_cols = static_cast<int64_t>(n);
          fa.c.col_base = static_cast<int64_t>(off);
          const int64_t n_tiles =
              static_cast<int64_t>((n + detail::kFusedRows - 1) / detail::kFusedRows);
          const unsigned grid =
              static_cast<unsigned>(std::min<int64_t>(n_tiles, int64_t{sm_count_} * 4));
          kernel<<<grid, 256, smem, stream_>>>(fa);
          SIEVE_CUDA_CHECK_LAUNCH("FusedCandidateKernel");
          off += n;
        }
        return Status::OK();
      };
      if (nf == 2) {
        SIEVE_RETURN_IF_ERROR(launch(detail::FusedCandidateKernel<2>));
      } else if (nf == 4) {
        SIEVE_RETURN_IF_ERROR(launch(detail::FusedCandidateKernel<4>));
      } else {
        SIEVE_RETURN_IF_ERROR(launch(detail::FusedCandidateKernel<8>));
      }
    } else {
      // Tiles of a multiple of 256 columns, and dot rows padded to 32 floats: cuBLAS picks its
      // tensor-core kernels only for aligned leading dimensions.
      const size_t tile_bytes =
          detail::CandidateTileBytes(col_ids != nullptr, size_t{4} * gemm_cols * n_cols);
      const uint64_t tile_cols = std::min<uint64_t>(
          n_cols, std::max<uint64_t>(4096, tile_bytes / (size_t{4} * gemm_cols)) / 256 * 256);
      DeviceBuffer<float> dots;
      SIEVE_RETURN_IF_ERROR(dots.Allocate(size_t{m} * ((tile_cols + 31) / 32 * 32), stream_));
      c.dots = dots.get();
      for (uint64_t off = 0; off < n_cols;) {
        // Tiles end at slab ends too (cuBLAS reads one contiguous block).
        const uint64_t n_tile = std::min<uint64_t>({tile_cols, n_cols - off, rows.ToEnd(off)});
        const uint64_t ld = (n_tile + 31) / 32 * 32;
        SIEVE_RETURN_IF_ERROR(Gemm(rows.At(off), n_tile, B, gemm_cols, dots.get(), ld));
        c.n_cols = static_cast<int64_t>(n_tile);
        c.ld = static_cast<int64_t>(ld);
        c.col_base = static_cast<int64_t>(off);
        dim3 grid(detail::CandidateGridX(c.n_cols, m, sm_count_, col_ids != nullptr), m);
        detail::LaunchCandidateKernel(c, grid, stream_);
        SIEVE_CUDA_CHECK_LAUNCH("CandidateKernel");
        off += n_tile;
      }
    }
    Mark("cand.scan");

    // The host checks the counts after the search (no sync here): a count above `cap` means
    // this chunk's lists are incomplete, and GpuExecutor::Run reruns with the full path.
    SIEVE_CUDA_TRY(cudaMemcpyAsync(h_counts_ + q0, counts.get(), size_t{m} * 4,
                                   cudaMemcpyDeviceToHost, stream_));
    cand_cap_ = cap;

    // (3) Exact rescoring of the kept rows, then top-k.
    return RescoreAndSelect(q0, m, cand_ids.get(), half ? nullptr : cand_vals.get(),
                            static_cast<int64_t>(cap), counts.get(), kf, "cand.rescore",
                            "cand.select");
  }

  // The last stage of candidate selection and of the threshold path: lists of `cap` slots a
  // query (ordinals, counts[q] of them) are rescored exactly — float16 rows: float32 query
  // against the resident row; float32 rows: `vals` holds the exact distances already — and
  // SelectRowsKernel keeps the kf best, downloaded with their ordinals.
  Status RescoreAndSelect(uint32_t q0, uint32_t m, const uint32_t* ids_in, const float* vals_in,
                          int64_t cap, const uint32_t* counts, int kf, const char* rescore_mark,
                          const char* select_mark) {
    const Prepared& p = p_;
    const int64_t ld = cap;
    DeviceBuffer<float> vals, final_vals;
    DeviceBuffer<uint32_t> ids, final_ids;
    SIEVE_RETURN_IF_ERROR(vals.Allocate(size_t{m} * ld, stream_));
    SIEVE_RETURN_IF_ERROR(ids.Allocate(size_t{m} * ld, stream_));
    SIEVE_RETURN_IF_ERROR(final_vals.Allocate(size_t{m} * kf, stream_));
    SIEVE_RETURN_IF_ERROR(final_ids.Allocate(size_t{m} * kf, stream_));
    dim3 grid(static_cast<unsigned>(std::min<int64_t>((ld + 255) / 256, 64)), m);
    if (vals_in == nullptr) {
      detail::RescoreKernel<__half><<<grid, 256, 0, stream_>>>(
          ids_in, nullptr, cap, counts, p.shard->resident(), static_cast<int>(p.dim),
          queries_ + size_t{q0} * p.dim, qnorms_ + q0, p.shard->sq_norms(), p.metric,
          p.sentinel, ld, vals.get(), ids.get());
    } else {
      detail::RescoreKernel<float><<<grid, 256, 0, stream_>>>(
          ids_in, vals_in, cap, counts, detail::ResidentRows{}, static_cast<int>(p.dim),
          nullptr, nullptr, nullptr, p.metric, p.sentinel, ld, vals.get(), ids.get());
    }
    SIEVE_CUDA_CHECK_LAUNCH("RescoreKernel");
    Mark(rescore_mark);
    detail::SelectRowsKernel<<<m, 256, detail::KeyCacheBytes(ld), stream_>>>(
        vals.get(), ids.get(), ld, counts, kf, p.select_min, p.sentinel, final_vals.get(),
        final_ids.get());
    SIEVE_CUDA_CHECK_LAUNCH("SelectRowsKernel");
    Mark(select_mark);
    return Download(q0, m, kf, final_vals.get(), final_ids.get());
  }

  // The levels of the threshold-select dense path over n_cols rows: each level's rows are a
  // prefix of the next one's, the last is every row. Level 0 keeps every key of its prefix; a
  // later level keeps the keys above the previous level's k-th best score less 2E, about
  // k · (its rows) / (the previous level's rows) a query. With L levels each keeps about
  // e = (k^(L-1) · n)^(1/L) a query when the prefixes grow by e / k: as many levels as fit
  // (up to ThresholdMaxLevels(), 4 by default) with every prefix at most a quarter of the
  // rows. caps[i]: the slots a query has at level i (8× the expected count, at least 16,384:
  // small k has a wide spread).
  void ThresholdLevels(uint64_t n_cols, std::vector<uint64_t>* ends,
                       std::vector<uint64_t>* caps) const {
    const double k = p_.k, n = static_cast<double>(n_cols);
    auto pages = [](double x) {
      return (static_cast<uint64_t>(std::ceil(x)) + kPageRows - 1) / kPageRows * kPageRows;
    };
    ends->clear();
    caps->clear();
    for (int levels = detail::ThresholdMaxLevels(); levels >= 2; --levels) {
      const double e = std::pow(std::pow(k, levels - 1) * n, 1.0 / levels);
      std::vector<uint64_t> prefix = {std::max(pages(e), pages(4 * k))};
      for (int i = 1; i < levels - 1; ++i) {
        prefix.push_back(pages(static_cast<double>(prefix.back()) * e / k));
      }
      bool ok = true;
      for (size_t i = 0; i < prefix.size(); ++i) {
        ok = ok && prefix[i] * 4 <= n_cols && (i == 0 || prefix[i] > prefix[i - 1]);
      }
      if (!ok) continue;
      *ends = prefix;
      ends->push_back(n_cols);
      caps->push_back(prefix[0]);
      for (size_t i = 1; i < ends->size(); ++i) {
        const double expect = k * static_cast<double>((*ends)[i]) / (*ends)[i - 1];
        caps->push_back(std::min<uint64_t>((*ends)[i], std::max<uint64_t>(pages(8 * expect),
                                                                          16384)));
      }
      return;
    }
  }

  // The threshold-select dense path: float16 rows the tensor-core kernel takes, k within what
  // its final top-k sorts, enough columns for sampling to pay, buffers within the budget.
  bool UseThreshold(uint32_t m, uint64_t n_cols) const {
    if (!detail::ThresholdSelectEnabled() || detail::CandidatesDisabled() || p_.no_candidates) {
      return false;
    }
    if (p_.shard->dtype != DType::kFloat16 || !p_.split) return false;
    if (std::strcmp(ThresholdSelectKernelName(p_.shard->keys()), "simt") == 0) return false;
    if (p_.k > 4096 || n_cols < detail::kMinCandidateColumns ||
        n_cols > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
      return false;
    }
    std::vector<uint64_t> ends, caps;
    ThresholdLevels(n_cols, &ends, &caps);
    const uint64_t most = *std::max_element(caps.begin(), caps.end());
    return ends.size() > 1 && size_t{m} * (p_.k + most) * 8 <= detail::kTileBudgetBytes;
  }

  // Exact top-k over every resident row through gpu::ThresholdSelect, without a score matrix.
  // E bounds |computed - exact| of a score (float16 high halves of the queries, float32
  // accumulation; see ThresholdSetupKernel).
  // (1) Levels (ThresholdLevels): level 0 keeps every key of a prefix of the rows; its k-th best
  //     computed score s less 2E is the next level's threshold, and so on: a row of a prefix's
  //     exact top-k scores at least s - 2E, so every level keeps the top-k of its rows, and the
  //     last level keeps every row of the exact top-k among all rows.
  // (2) The k-th best computed score c of the last level bounds the band: a row of the exact
  //     top-k has a computed score of at least c - 2E. Only the band is rescored exactly
  //     (float32 query against the row) and select_k takes the k best.
  // Overflow at any level (candidates past its cap, ties past k, or a band past its list) goes
  // to the host with the results, and GpuExecutor::Run reruns the search on the full path.
  // What the threshold select reads: pages (the resident shard's, or a gathered block's), the
  // block table (one row), the filter (none for a block gathered through a bitset: every row of
  // it passes), and for a gathered block the ordinal of each position.
  struct ThresholdKeys {
    PagedKeys keys;
    const int32_t* table = nullptr;
    uint32_t blocks = 0;
    const uint32_t* filter = nullptr;
    int64_t filter_stride = 0;
    const uint32_t* col_ids = nullptr;
  };

  // gathered_norms_: the squared norms of the gathered block by position, zero up to the end of
  // its last page; written by GatherRowsKernel with the rows (Dense), once per search.
  Status GatheredNorms() const {
    return gathered_norms_ready_ ? Status::OK()
                                 : Status::Internal("gathered norms used before the gather");
  }

  // The gathered block (whole pages) as one slab of pages, with its norms by position and an
  // identity block table; built once per search.
  Status GatheredPages(const uint32_t* col_ids, uint64_t n_cols, ThresholdKeys* out) {
    const Prepared& p = p_;
    const uint64_t pages = (n_cols + kPageRows - 1) / kPageRows;
    if (!gathered_pages_ready_) {
      SIEVE_RETURN_IF_ERROR(GatheredNorms());
      SIEVE_RETURN_IF_ERROR(gathered_table_.Allocate(pages, stream_));
      detail::IotaKernel<<<detail::GridFor(static_cast<int64_t>(pages), 256), 256, 0, stream_>>>(
          gathered_table_.get(), static_cast<int64_t>(pages));
      SIEVE_CUDA_CHECK_LAUNCH("IotaKernel");
      SIEVE_RETURN_IF_ERROR(gathered_slab_.Allocate(1, stream_));
      gathered_slab_host_ = gathered_rows_.get();
      SIEVE_CUDA_TRY(cudaMemcpyAsync(gathered_slab_.get(), &gathered_slab_host_, sizeof(void*),
                                     cudaMemcpyHostToDevice, stream_));
      // Its page map (TMA copies in the threshold select), where the driver encodes one; else
      // the kernel copies with cp.async.
      gathered_map_ok_ = PageMapsApply(KeyType::kFloat16, p.dim) &&
                         EncodePageMap(KeyType::kFloat16, p.dim, gathered_rows_.get(),
                                       pages * kPageRows, gathered_map_host_.bytes)
                             .ok();
      if (gathered_map_ok_) {
        SIEVE_RETURN_IF_ERROR(gathered_map_.Allocate(kPageMapBytes, stream_));
        SIEVE_CUDA_TRY(cudaMemcpyAsync(gathered_map_.get(), gathered_map_host_.bytes, kPageMapBytes,
                                       cudaMemcpyHostToDevice, stream_));
      }
      gathered_pages_ready_ = true;
    }
    uint32_t log2 = 0;
    while ((uint64_t{1} << log2) < pages) ++log2;
    out->keys.type = KeyType::kFloat16;
    out->keys.dim = p.dim;
    out->keys.slabs = gathered_slab_.get();
    out->keys.slab_pages_log2 = log2;
    out->keys.sq_norms = gathered_norms_.get();
    out->keys.page_maps = gathered_map_ok_ ? gathered_map_.get() : nullptr;
    out->table = gathered_table_.get();
    out->blocks = static_cast<uint32_t>(pages);
    out->col_ids = col_ids;
    return Status::OK();
  }

  Status ThresholdDense(uint32_t q0, uint32_t m, uint64_t n_cols, const ThresholdKeys& tk) {
    const Prepared& p = p_;
    std::vector<uint64_t> ends, caps;
    ThresholdLevels(n_cols, &ends, &caps);
    const uint64_t most = *std::max_element(caps.begin(), caps.end());
    const uint32_t k = p.k;
    const uint32_t kf = static_cast<uint32_t>(std::min<uint64_t>(k, n_cols));
    const uint32_t band_cap = std::max<uint32_t>(4 * k, 1024);
    const uint32_t tiles = (m + kQueryTileRows - 1) / kQueryTileRows;

    DeviceBuffer<float> scales, thresholds, margin, kth_scores;
    DeviceBuffer<int32_t> row_ends, requests, counters, slots, kth_keys;
    DeviceBuffer<uint32_t> band_ids, band_counts, why, flags;
    SIEVE_RETURN_IF_ERROR(scales.Allocate(m, stream_));
    SIEVE_RETURN_IF_ERROR(thresholds.Allocate(m, stream_));
    SIEVE_RETURN_IF_ERROR(margin.Allocate(m, stream_));
    SIEVE_RETURN_IF_ERROR(row_ends.Allocate(m, stream_));
    SIEVE_RETURN_IF_ERROR(requests.Allocate(tiles, stream_));
    SIEVE_RETURN_IF_ERROR(counters.Allocate(size_t{2} * m, stream_));
    SIEVE_RETURN_IF_ERROR(slots.Allocate(size_t{m} * (k + most) * 2, stream_));
    SIEVE_RETURN_IF_ERROR(kth_keys.Allocate(size_t{m} * k, stream_));
    SIEVE_RETURN_IF_ERROR(kth_scores.Allocate(size_t{m} * k, stream_));
    SIEVE_RETURN_IF_ERROR(why.Allocate(m, stream_));
    SIEVE_RETURN_IF_ERROR(flags.Allocate(m, stream_));
    SIEVE_RETURN_IF_ERROR(band_ids.Allocate(size_t{m} * band_cap, stream_));
    SIEVE_RETURN_IF_ERROR(band_counts.Allocate(m, stream_));
    SIEVE_CUDA_TRY(cudaMemsetAsync(requests.get(), 0, size_t{tiles} * 4, stream_));
    SIEVE_CUDA_TRY(cudaMemsetAsync(counters.get(), 0, size_t{m} * 8, stream_));
    SIEVE_CUDA_TRY(cudaMemsetAsync(why.get(), 0, size_t{m} * 4, stream_));
    detail::ThresholdSetupKernel<<<(m + 255) / 256, 256, 0, stream_>>>(
        static_cast<int>(m), p.scale, qnorms_ + q0, p.shard->max_sq_norm, p.metric,
        0x1p-9f + 0x1p-13f, scales.get(), thresholds.get(), margin.get());
    SIEVE_CUDA_CHECK_LAUNCH("ThresholdSetupKernel");

    ThresholdSelectArgs a;
    a.keys = tk.keys;
    a.metric = static_cast<Metric>(p.metric);
    a.queries = split_ + size_t{2} * q0 * p.dim;  // the chunk's m high halves
    a.num_rows = m;
    a.query_scales = scales.get();
    a.query_sq_norms = qnorms_ + q0;
    a.row_ends = row_ends.get();
    a.tile_requests = requests.get();
    a.block_table = tk.table;
    a.blocks_per_request = tk.blocks;
    a.filter = tk.filter;
    a.filter_stride = tk.filter_stride;
    a.thresholds = thresholds.get();
    a.counters = counters.get();
    a.candidates = slots.get();
    a.top_k = k;

    // (1) The levels; after each, its top-k (whose k-th best is the next threshold, and after
    // the last, the top of the band). Every row sees every column; a level's prefix is its
    // max_context (the kernel sees min(row end, max_context)).
    detail::FillIntKernel<<<(m + 255) / 256, 256, 0, stream_>>>(
        row_ends.get(), m, static_cast<int32_t>(ends.back()));
    SIEVE_CUDA_CHECK_LAUNCH("FillIntKernel");
    for (size_t level = 0; level < ends.size(); ++level) {
      a.max_context = static_cast<uint32_t>(ends[level]);
      a.capacity = static_cast<uint32_t>(caps[level]);
      SIEVE_RETURN_IF_ERROR(ThresholdSelect(a, stream_));
      SIEVE_RETURN_IF_ERROR(TopKFromCandidates(slots.get(), counters.get(), nullptr,
                                               thresholds.get(), m, k, a.capacity, k,
                                               kth_keys.get(), kth_scores.get(), stream_));
      const bool last = level + 1 == ends.size();
      if (last) {
        SIEVE_RETURN_IF_ERROR(CollectBand(slots.get(), counters.get(), nullptr, thresholds.get(),
                                          m, k, a.capacity, kth_scores.get(), k, margin.get(),
                                          band_cap, band_ids.get(), band_counts.get(), stream_));
      }
      detail::ThresholdOverflowKernel<<<(m + 255) / 256, 256, 0, stream_>>>(
          static_cast<int>(m), counters.get(), static_cast<int32_t>(a.capacity),
          static_cast<int32_t>(k), last ? band_counts.get() : nullptr, band_cap, why.get(),
          static_cast<uint32_t>(most), last ? flags.get() : nullptr);
      SIEVE_CUDA_CHECK_LAUNCH("ThresholdOverflowKernel");
      if (!last) {
        SIEVE_RETURN_IF_ERROR(ThresholdsFromTopK(kth_scores.get(), m, k, margin.get(),
                                                 thresholds.get(), counters.get(), stream_));
        Mark("ts.level");
      }
    }
    SIEVE_CUDA_TRY(cudaMemcpyAsync(h_counts_ + q0, flags.get(), size_t{m} * 4,
                                   cudaMemcpyDeviceToHost, stream_));
    cand_cap_ = most;
    Mark("ts.select");

    // (2) The band, rescored exactly; the k best of it.
    if (tk.col_ids != nullptr) {
      detail::PositionsToOrdinalsKernel<<<m, 256, 0, stream_>>>(band_ids.get(), band_counts.get(),
                                                                band_cap, tk.col_ids);
      SIEVE_CUDA_CHECK_LAUNCH("PositionsToOrdinalsKernel");
    }
    return RescoreAndSelect(q0, m, band_ids.get(), nullptr, band_cap, band_counts.get(),
                            static_cast<int>(kf), "ts.rescore", "ts.final");
  }

  void Mark(const char* name) { detail::g_marks.Record(name, stream_); }

  Status RunChunk(uint32_t q0, uint32_t m) {
    switch (p_.path) {
      case SearchPath::kSddmm:
        return Sddmm(q0, m);
      case SearchPath::kGather:
        return Dense(q0, m, d_ids_.get(), n_ids_);
      case SearchPath::kDense:
        return Dense(q0, m, nullptr, p_.rows);
      default:
        return Status::InvalidArgument("no path chosen");
    }
  }

  Status Sddmm(uint32_t q0, uint32_t m) {
    const Prepared& p = p_;
    const uint64_t* starts = p.per_query ? starts_ + q0 : nullptr;
    const int64_t ld = static_cast<int64_t>(p.per_query ? p.max_passing : p.total_passing);
    if (ld == 0) return Status::OK();
    DeviceBuffer<float> dist;
    SIEVE_RETURN_IF_ERROR(dist.Allocate(size_t{m} * ld, stream_));
    detail::SddmmArgs a;
    a.rows = p.shard->resident();
    a.x_sq_norms = p.shard->sq_norms();
    a.dim = static_cast<int>(p.dim);
    a.queries = queries_ + size_t{q0} * p.dim;
    a.q_sq_norms = qnorms_ + q0;
    a.m = static_cast<int>(m);
    a.ids = d_ids_.get();
    a.starts = starts;
    a.n_shared = ld;
    a.ld = ld;
    a.metric = p.metric;
    a.sentinel = p.sentinel;
    a.out = dist.get();
    constexpr int kWarps = 8;
    constexpr int kQb = 4;
    const bool half = p.shard->dtype == DType::kFloat16;
    dim3 block(32 * kWarps);
    if (p.per_query) {
      dim3 grid(static_cast<unsigned>((ld + kWarps - 1) / kWarps), m);
      if (half) {
        detail::SddmmKernel<__half, 1><<<grid, block, 0, stream_>>>(a);
      } else {
        detail::SddmmKernel<float, 1><<<grid, block, 0, stream_>>>(a);
      }
    } else {
      dim3 grid(static_cast<unsigned>((ld + kWarps - 1) / kWarps), (m + kQb - 1) / kQb);
      if (half) {
        detail::SddmmKernel<__half, kQb><<<grid, block, 0, stream_>>>(a);
      } else {
        detail::SddmmKernel<float, kQb><<<grid, block, 0, stream_>>>(a);
      }
    }
    SIEVE_CUDA_CHECK_LAUNCH("SddmmKernel");
    Mark("sddmm");

    const int kf = static_cast<int>(std::min<int64_t>(p.k, ld));
    DeviceBuffer<float> vals;
    DeviceBuffer<uint32_t> pos, ids;
    SIEVE_RETURN_IF_ERROR(vals.Allocate(size_t{m} * kf, stream_));
    SIEVE_RETURN_IF_ERROR(pos.Allocate(size_t{m} * kf, stream_));
    SIEVE_RETURN_IF_ERROR(ids.Allocate(size_t{m} * kf, stream_));
    SIEVE_RETURN_IF_ERROR(
        select_->Select(dist.get(), m, ld, kf, p.select_min, vals.get(), pos.get()));
    detail::MapArgs map{};
    map.pos = pos.get();
    map.m = static_cast<int>(m);
    map.kf = kf;
    map.table = d_ids_.get();
    map.starts = starts;
    map.ids_out = ids.get();
    map.out_ld = kf;
    SIEVE_RETURN_IF_ERROR(Map(map));
    return Download(q0, m, kf, vals.get(), ids.get());
  }

  // Dense over the resident rows (col_ids == nullptr) or over a gathered copy of the rows
  // listed in col_ids.
  Status Dense(uint32_t q0, uint32_t m, const uint32_t* col_ids, uint64_t n_cols) {
    const Prepared& p = p_;
    if (n_cols == 0) return Status::OK();
    const bool half = p.shard->dtype == DType::kFloat16;
    const size_t elem = half ? 2 : 4;
    RowBlocks rows;
    rows.bases = p.shard->slab_bases.data();
    rows.block_rows = p.shard->slab_rows();
    rows.row_bytes = size_t{p.dim} * elem;

    if (col_ids != nullptr) {
      if (!gathered_ready_) {
        // Whole pages of 64 rows: the threshold select reads pages whole.
        SIEVE_RETURN_IF_ERROR(gathered_rows_.Allocate(
            (n_cols + kPageRows - 1) / kPageRows * kPageRows * p.dim * elem, stream_));
        const size_t row_bytes = size_t{p.dim} * elem;
        const int64_t units = static_cast<int64_t>(n_cols) *
                              (row_bytes % 16 == 0 ? row_bytes / 16
                                                   : row_bytes % 4 == 0 ? row_bytes / 4
                                                                        : row_bytes / 2);
        const unsigned grid = detail::GridFor(units, 256);
        const detail::ResidentRows src = p.shard->resident();
        // The block's norms by position come with it (candidate selection and the threshold
        // select read them in order), zero up to the end of its last page.
        const uint64_t padded = (n_cols + kPageRows - 1) / kPageRows * kPageRows;
        SIEVE_RETURN_IF_ERROR(gathered_norms_.Allocate(padded, stream_));
        const float* norms = p.shard->sq_norms();
        float* norms_out = gathered_norms_.get();
        const int64_t n = static_cast<int64_t>(n_cols), np = static_cast<int64_t>(padded);
        if (row_bytes % 16 == 0) {
          detail::GatherRowsKernel<uint4><<<grid, 256, 0, stream_>>>(
              src, row_bytes / 16, col_ids, n, reinterpret_cast<uint4*>(gathered_rows_.get()),
              norms, norms_out, np);
        } else if (row_bytes % 4 == 0) {
          detail::GatherRowsKernel<uint32_t><<<grid, 256, 0, stream_>>>(
              src, row_bytes / 4, col_ids, n, reinterpret_cast<uint32_t*>(gathered_rows_.get()),
              norms, norms_out, np);
        } else {
          detail::GatherRowsKernel<uint16_t><<<grid, 256, 0, stream_>>>(
              src, row_bytes / 2, col_ids, n, reinterpret_cast<uint16_t*>(gathered_rows_.get()),
              norms, norms_out, np);
        }
        SIEVE_CUDA_CHECK_LAUNCH("GatherRowsKernel");
        gathered_ready_ = true;
        gathered_norms_ready_ = true;
        Mark("gather");
      }
      // The gathered block is one contiguous block.
      gathered_base_ = gathered_rows_.get();
      rows.bases = &gathered_base_;
      rows.block_rows = std::numeric_limits<uint64_t>::max();
    }

    if (col_ids == nullptr && UseThreshold(m, n_cols)) {
      ++detail::g_candidate_chunks;
      ++detail::g_threshold_chunks;
      used_threshold_ = true;
      ThresholdKeys keys;
      keys.keys = p.shard->keys();
      keys.table = p.shard->d_pages;
      keys.blocks = static_cast<uint32_t>(p.shard->pages.size());
      keys.filter = ChunkFilter(q0, nullptr);
      keys.filter_stride = FilterStride();
      return ThresholdDense(q0, m, n_cols, keys);
    }
    if (col_ids != nullptr && !p.per_query && detail::ThresholdGatherEnabled(n_cols) &&
        UseThreshold(m, n_cols)) {
      ThresholdKeys keys;
      SIEVE_RETURN_IF_ERROR(GatheredPages(col_ids, n_cols, &keys));
      ++detail::g_candidate_chunks;
      ++detail::g_threshold_chunks;
      used_threshold_ = true;
      return ThresholdDense(q0, m, n_cols, keys);
    }
    if (UseCandidates(m, n_cols)) {
      ++detail::g_candidate_chunks;
      return Candidates(q0, m, rows, col_ids, n_cols);
    }

    const int gemm_cols = static_cast<int>(p.split ? 2 * m : m);
    const uint64_t budget_cols = detail::kTileBudgetBytes / (size_t{4} * gemm_cols);
    const uint64_t tile_cols =
        std::min<uint64_t>(n_cols, std::max<uint64_t>({budget_cols / 256 * 256, p.k, 1}));
    // Tiles of tile_cols columns, cut at slab ends too (cuBLAS reads one contiguous block).
    std::vector<std::pair<uint64_t, uint64_t>> tiles;  // (first column, columns)
    for (uint64_t off = 0; off < n_cols;) {
      const uint64_t n = std::min<uint64_t>({tile_cols, n_cols - off, rows.ToEnd(off)});
      tiles.emplace_back(off, n);
      off += n;
    }
    const uint64_t n_tiles = tiles.size();
    const int k_tile = static_cast<int>(std::min<uint64_t>(p.k, tile_cols));
    const int kf = static_cast<int>(std::min<uint64_t>(p.k, n_cols));
    const int64_t merge_ld = static_cast<int64_t>(n_tiles) * k_tile;

    DeviceBuffer<float> dots, tile_vals, merge_vals, final_vals;
    DeviceBuffer<uint32_t> tile_pos, merge_ids, final_pos, final_ids;
    SIEVE_RETURN_IF_ERROR(dots.Allocate(size_t{static_cast<uint32_t>(gemm_cols)} * tile_cols,
                                        stream_));
    SIEVE_RETURN_IF_ERROR(tile_vals.Allocate(size_t{m} * k_tile, stream_));
    SIEVE_RETURN_IF_ERROR(tile_pos.Allocate(size_t{m} * k_tile, stream_));
    SIEVE_RETURN_IF_ERROR(final_vals.Allocate(size_t{m} * kf, stream_));
    SIEVE_RETURN_IF_ERROR(final_ids.Allocate(size_t{m} * kf, stream_));
    if (n_tiles > 1) {
      SIEVE_RETURN_IF_ERROR(merge_vals.Allocate(size_t{m} * merge_ld, stream_));
      SIEVE_RETURN_IF_ERROR(merge_ids.Allocate(size_t{m} * merge_ld, stream_));
      SIEVE_RETURN_IF_ERROR(final_pos.Allocate(size_t{m} * kf, stream_));
      detail::FillKernel<<<detail::GridFor(int64_t{m} * merge_ld, 256), 256, 0, stream_>>>(
          merge_vals.get(), int64_t{m} * merge_ld, p.sentinel);
      SIEVE_CUDA_CHECK_LAUNCH("FillKernel");
      SIEVE_CUDA_TRY(
          cudaMemsetAsync(merge_ids.get(), 0xff, size_t{m} * merge_ld * 4, stream_));
    }

    const float alpha = 1.0f, beta = 0.0f;
    for (uint64_t t = 0; t < n_tiles; ++t) {
      const uint64_t off = tiles[t].first;
      const uint64_t n_tile = tiles[t].second;
      const void* A = rows.At(off);
      if (half) {
        // Split queries: B holds, for this chunk, m hi rows then m lo rows. They are laid out
        // per chunk (see Prepare), so the chunk's 2m rows are contiguous.
        SIEVE_CUBLAS_TRY(cublasGemmEx(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n_tile),
                                      gemm_cols, static_cast<int>(p.dim), &alpha, A, CUDA_R_16F,
                                      static_cast<int>(p.dim),
                                      split_ + size_t{2} * q0 * p.dim, CUDA_R_16F,
                                      static_cast<int>(p.dim), &beta, dots.get(), CUDA_R_32F,
                                      static_cast<int>(n_tile), CUBLAS_COMPUTE_32F,
                                      CUBLAS_GEMM_DEFAULT));
      } else {
        SIEVE_CUBLAS_TRY(cublasGemmEx(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n_tile),
                                      gemm_cols, static_cast<int>(p.dim), &alpha, A, CUDA_R_32F,
                                      static_cast<int>(p.dim), queries_ + size_t{q0} * p.dim,
                                      CUDA_R_32F,
                                      static_cast<int>(p.dim), &beta, dots.get(), CUDA_R_32F,
                                      static_cast<int>(n_tile), CUBLAS_COMPUTE_32F,
                                      CUBLAS_GEMM_DEFAULT));
      }
      SIEVE_RETURN_IF_ERROR(
          Epilogue(dots.get(), q0, m, n_tile, col_ids, static_cast<int64_t>(off)));

      const int kt = static_cast<int>(std::min<uint64_t>(k_tile, n_tile));
      SIEVE_RETURN_IF_ERROR(select_->Select(dots.get(), m, n_tile, kt, p.select_min,
                                            tile_vals.get(), tile_pos.get()));
      detail::MapArgs map{};
      map.pos = tile_pos.get();
      map.vals = tile_vals.get();
      map.m = static_cast<int>(m);
      map.kf = kt;
      map.table = col_ids;
      map.base = static_cast<int64_t>(off);
      if (n_tiles == 1) {
        map.ids_out = final_ids.get();
        map.out_ld = kf;
        SIEVE_RETURN_IF_ERROR(Map(map));
        Mark("tile");
        return Download(q0, m, kf, tile_vals.get(), final_ids.get());
      }
      map.ids_out = merge_ids.get();
      map.vals_out = merge_vals.get();
      map.out_ld = merge_ld;
      map.out_off = static_cast<int64_t>(t) * k_tile;
      SIEVE_RETURN_IF_ERROR(Map(map));
    }
    Mark("tiles");
    SIEVE_RETURN_IF_ERROR(select_->Select(merge_vals.get(), m, merge_ld, kf, p.select_min,
                                          final_vals.get(), final_pos.get()));
    detail::MapArgs map{};
    map.pos = final_pos.get();
    map.m = static_cast<int>(m);
    map.kf = kf;
    map.table = merge_ids.get();
    map.table_stride = merge_ld;
    map.ids_out = final_ids.get();
    map.out_ld = kf;
    SIEVE_RETURN_IF_ERROR(Map(map));
    return Download(q0, m, kf, final_vals.get(), final_ids.get());
  }

  cudaStream_t stream_;
  cublasHandle_t cublas_;
  detail::RaftSelectK* select_;
  const Prepared& p_;
  const uint32_t* h_filter_;
  const char* h_queries_;
  float* h_vals_;
  uint32_t* h_ids_;
  uint32_t* h_counts_;
  uint64_t cand_cap_ = 0;
  bool used_threshold_ = false;
  int sm_count_ = [] {
    int dev = 0, n = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
      return 132;
    }
    return n;
  }();

  DeviceBuffer<uint32_t> d_filter_;
  DeviceBuffer<char> d_queries_;
  DeviceBuffer<uint32_t> d_ids_;
  uint64_t n_ids_ = 0;
  DeviceBuffer<char> gathered_rows_;
  const char* gathered_base_ = nullptr;
  bool gathered_ready_ = false;
  // The gathered block as pages (threshold select over a bitset's gather).
  DeviceBuffer<float> gathered_norms_;
  DeviceBuffer<int32_t> gathered_table_;
  DeviceBuffer<const void*> gathered_slab_;
  const void* gathered_slab_host_ = nullptr;
  DeviceBuffer<unsigned char> gathered_map_;
  PageMap gathered_map_host_;
  bool gathered_map_ok_ = false;
  bool gathered_pages_ready_ = false;
  bool gathered_norms_ready_ = false;
  const float* queries_ = nullptr;
  const __half* split_ = nullptr;
  const float* qnorms_ = nullptr;
  const uint64_t* starts_ = nullptr;
};

size_t AlignUp(size_t x) { return (x + 255) & ~size_t{255}; }

}  // namespace

Status GpuExecutor::Run(const ShardView& shard, const BatchFilters& filters,
                        const ExecRequest& request, int warmup, int reps,
                        std::vector<double>* ms, ExecResult* result) {
  if (result == nullptr) return Status::InvalidArgument("result is null");
  const uint32_t nq = request.num_queries;
  if (request.k == 0) return Status::InvalidArgument("k must be at least 1");
  if (request.path != SearchPath::kSddmm && request.path != SearchPath::kGather &&
      request.path != SearchPath::kDense) {
    return Status::InvalidArgument("the GPU executor needs a chosen path (sddmm, gather or dense)");
  }
  if (request.metric != Metric::kL2 && request.metric != Metric::kInnerProduct &&
      request.metric != Metric::kCosine) {
    return Status::NotSupported("unknown metric");
  }
  if (shard.dtype != DType::kFloat32 && shard.dtype != DType::kFloat16) {
    return Status::NotSupported("unknown vector dtype");
  }
  if (shard.dim == 0) return Status::InvalidArgument("shard dim is 0");
  if (shard.rows > 0 && shard.vectors == nullptr) {
    return Status::InvalidArgument("shard has rows but no vectors");
  }
  if (nq > 0 && request.queries == nullptr) return Status::InvalidArgument("queries are null");
  if (filters.sets.empty() || (filters.sets.size() != 1 && filters.sets.size() != nq) ||
      filters.passing_rows.size() != filters.sets.size()) {
    return Status::InvalidArgument("filters must be one set, or one per query, with their counts");
  }
  for (size_t i = 0; i < filters.sets.size(); ++i) {
    const RowSet* set = filters.sets[i];
    if (set == nullptr) return Status::InvalidArgument("filter set is null");
    if (set->End() > shard.rows) {
      return Status::InvalidArgument("filter " + std::to_string(i) + " holds row " +
                                     std::to_string(set->End() - 1) + " of a shard of " +
                                     std::to_string(shard.rows) + " rows");
    }
    if (set->Cardinality() != filters.passing_rows[i]) {
      return Status::InvalidArgument("filter " + std::to_string(i) + " passing_rows " +
                                     std::to_string(filters.passing_rows[i]) +
                                     " differs from its cardinality " +
                                     std::to_string(set->Cardinality()));
    }
  }

  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mu);
  SIEVE_CUDA_TRY(cudaSetDevice(s.device));
  const auto t_host0 = std::chrono::steady_clock::now();
  result->neighbors.assign(nq, {});
  result->select = "select_k";
  result->stage_ms.clear();

  DeviceShard* dev = nullptr;
  SIEVE_RETURN_IF_ERROR(s.EnsureResident(shard, &dev));

  switch (request.path) {
    case SearchPath::kSddmm: ++s.counts.sddmm; break;
    case SearchPath::kGather: ++s.counts.gather; break;
    default: ++s.counts.dense; break;
  }
  if (nq == 0) return Status::OK();

  // Host preparation.
  Prepared p;
  p.nq = nq;
  p.dim = shard.dim;
  p.k = request.k;
  p.metric = static_cast<int>(request.metric);
  p.select_min = request.metric != Metric::kInnerProduct;
  p.sentinel = p.select_min ? std::numeric_limits<float>::infinity()
                            : -std::numeric_limits<float>::infinity();
  p.per_query = filters.per_query();
  p.path = request.path;
  p.shard = dev;
  p.rows = shard.rows;
  p.words = WordsFor(shard.rows);
  const size_t n_filter_rows = p.per_query ? nq : 1;
  p.filter_words = n_filter_rows * p.words;
  std::unique_ptr<RowSet> union_set;
  if (p.per_query) {
    p.starts.assign(nq + 1, 0);
    for (uint32_t q = 0; q < nq; ++q) {
      p.starts[q + 1] = p.starts[q] + filters.passing_rows[q];
      p.max_passing = std::max(p.max_passing, filters.passing_rows[q]);
    }
    p.total_passing = p.starts[nq];
    if (p.path == SearchPath::kGather && p.total_passing > 0) {
      union_set = std::make_unique<RowSet>(RowSet::Union(filters.sets.data(), nq));
      p.union_count = union_set->Cardinality();
      p.union_offset_words = p.filter_words;
    }
  } else {
    p.total_passing = filters.passing_rows[0];
    p.max_passing = p.total_passing;
  }
  p.upload_words = p.filter_words + (union_set ? p.words : 0);
  p.no_filter = p.path == SearchPath::kDense &&
                std::all_of(filters.passing_rows.begin(), filters.passing_rows.end(),
                            [&](uint64_t n) { return n == shard.rows; });
  if (p.no_filter) p.upload_words = 0;
  p.ids_direct = !p.per_query && NeedsCompaction(p.path) && p.total_passing < p.words;
  if (p.ids_direct) p.upload_words = p.total_passing;
  SIEVE_RETURN_IF_ERROR(s.pinned_filter.Reserve(std::max<size_t>(p.upload_words, 1) * 4));
  uint32_t* h_filter = s.pinned_filter.as<uint32_t>();
  if (p.ids_direct) {
    if (p.total_passing > 0) filters.sets[0]->ToArray(h_filter);
  } else if (p.total_passing > 0 && !p.no_filter) {
    for (size_t i = 0; i < n_filter_rows; ++i) {
      filters.sets[i]->ToBitset(h_filter + i * p.words, p.words);
    }
    if (union_set) union_set->ToBitset(h_filter + p.union_offset_words, p.words);
  }

  // Queries: float32 (SDDMM, norms), and for float16 GEMMs each query q/s = hi + lo in halves,
  // laid out per chunk of kMaxQueryChunk queries as [hi rows of the chunk, lo rows of the chunk]
  // so one GEMM of 2m columns serves a chunk. s is a power of two ≥ max |q|, so the division is
  // exact and hi + lo carries 22 of float32's 24 significant bits.
  const bool gemm_path = p.path != SearchPath::kSddmm;
  p.split = gemm_path && shard.dtype == DType::kFloat16;
  const size_t qn = size_t{nq} * shard.dim;
  p.off_queries = 0;
  p.off_split = AlignUp(qn * 4);
  p.off_qnorms = p.off_split + AlignUp(p.split ? 2 * qn * 2 : 0);
  p.off_starts = p.off_qnorms + AlignUp(size_t{nq} * 4);
  p.queries_bytes = p.off_starts + AlignUp(p.per_query ? (size_t{nq} + 1) * 8 : 0);
  SIEVE_RETURN_IF_ERROR(s.pinned_queries.Reserve(p.queries_bytes));
  char* hq = s.pinned_queries.as<char>();
  std::memcpy(hq + p.off_queries, request.queries, qn * 4);
  float* h_qnorms = reinterpret_cast<float*>(hq + p.off_qnorms);
  float max_abs = 0.0f;
  for (uint32_t q = 0; q < nq; ++q) {
    double acc = 0;
    for (uint32_t j = 0; j < shard.dim; ++j) {
      const double v = request.queries[size_t{q} * shard.dim + j];
      acc += v * v;
      max_abs = std::max(max_abs, static_cast<float>(std::fabs(v)));
    }
    h_qnorms[q] = static_cast<float>(acc);
  }
  if (p.split) {
    int e = 0;
    std::frexp(max_abs, &e);  // max_abs < 2^e
    p.scale = max_abs > 0 ? std::ldexp(1.0f, e) : 1.0f;
    if (!(p.scale >= std::ldexp(1.0f, -100))) p.scale = 1.0f;  // denormal queries: keep finite
    const float inv = 1.0f / p.scale;
    __half* h_split = reinterpret_cast<__half*>(hq + p.off_split);
    for (uint32_t c0 = 0; c0 < nq; c0 += detail::kMaxQueryChunk) {
      const uint32_t m = std::min(detail::kMaxQueryChunk, nq - c0);
      for (uint32_t i = 0; i < m; ++i) {
        const float* src = request.queries + size_t{c0 + i} * shard.dim;
        __half* hi = h_split + (size_t{2} * c0 + i) * shard.dim;
        __half* lo = h_split + (size_t{2} * c0 + m + i) * shard.dim;
        for (uint32_t j = 0; j < shard.dim; ++j) {
          const float v = src[j] * inv;
          const __half h = __float2half_rn(v);
          hi[j] = h;
          lo[j] = __float2half_rn(v - __half2float(h));
        }
      }
    }
  }
  if (p.per_query) {
    std::memcpy(hq + p.off_starts, p.starts.data(), (size_t{nq} + 1) * 8);
  }

  const size_t nk = size_t{nq} * p.k;
  SIEVE_RETURN_IF_ERROR(s.pinned_results.Reserve(nk * 8 + size_t{nq} * 4));
  float* h_vals = s.pinned_results.as<float>();
  uint32_t* h_ids = reinterpret_cast<uint32_t*>(h_vals + nk);
  uint32_t* h_counts = h_ids + nk;  // candidate counts per query (see DeviceRun::Candidates)
  const auto t_host1 = std::chrono::steady_clock::now();

  uint64_t cand_cap = 0;
  bool used_threshold = false;
  auto run_once = [&]() -> Status {
    DeviceRun run(s.stream, s.cublas, s.select.get(), p, h_filter, hq, h_vals, h_ids, h_counts);
    Status st = run.Run();
    cand_cap = run.candidate_cap();
    used_threshold = run.used_threshold();
    // Buffers are freed (stream-ordered) as `run` goes; wait for the results either way.
    return st;
  };
  auto sync = [&]() -> Status {
    SIEVE_CUDA_TRY(cudaStreamSynchronize(s.stream));
    return Status::OK();
  };
  // After a run has synchronized: did a query keep more candidates than its list holds? Then
  // its results are incomplete, and this search (and its later repetitions) use the full path.
  auto overflowed = [&]() -> bool {
    if (cand_cap == 0) return false;
    for (uint32_t q = 0; q < nq; ++q) {
      if (h_counts[q] > cand_cap) {
        if (std::getenv("SIEVE_GPU_DEBUG") != nullptr) {
          std::fprintf(stderr, "sieve gpu: query %u overflowed its candidate lists (%s, code %llu)\n",
                       q, used_threshold ? "threshold select" : "candidate scan",
                       static_cast<unsigned long long>(h_counts[q] - cand_cap));
        }
        p.no_candidates = true;
        ++detail::g_candidate_fallbacks;
        return true;
      }
    }
    return false;
  };
  for (int i = 0; i < warmup; ++i) {
    Status st = run_once();
    Status st2 = sync();
    SIEVE_RETURN_IF_ERROR(st);
    SIEVE_RETURN_IF_ERROR(st2);
    if (overflowed()) {
      Status st3 = run_once();
      Status st4 = sync();
      SIEVE_RETURN_IF_ERROR(st3);
      SIEVE_RETURN_IF_ERROR(st4);
    }
  }
  const int timed = std::max(reps, 1);
  float last_ms = 0;
  for (int i = 0; i < timed; ++i) {
    detail::g_marks.used = 0;
    SIEVE_CUDA_TRY(cudaEventRecord(s.ev_start, s.stream));
    Status st = run_once();
    detail::g_marks.Record("download", s.stream);
    SIEVE_CUDA_TRY(cudaEventRecord(s.ev_stop, s.stream));
    Status st2 = sync();
    SIEVE_RETURN_IF_ERROR(st);
    SIEVE_RETURN_IF_ERROR(st2);
    SIEVE_CUDA_TRY(cudaEventElapsedTime(&last_ms, s.ev_start, s.ev_stop));
    if (overflowed()) {  // the full path, timed too
      SIEVE_CUDA_TRY(cudaEventRecord(s.ev_start, s.stream));
      Status st3 = run_once();
      SIEVE_CUDA_TRY(cudaEventRecord(s.ev_stop, s.stream));
      Status st4 = sync();
      SIEVE_RETURN_IF_ERROR(st3);
      SIEVE_RETURN_IF_ERROR(st4);
      float again = 0;
      SIEVE_CUDA_TRY(cudaEventElapsedTime(&again, s.ev_start, s.ev_stop));
      last_ms += again;
    }
    if (ms != nullptr && i == timed - 1 && detail::g_marks.on) {
      const std::string what = std::string(PathName(request.path)) + " n=" +
                               std::to_string(p.total_passing);
      detail::g_marks.Print(what.c_str(), s.ev_start);
    }
    if (ms != nullptr) ms->push_back(last_ms);
  }

  // How the last run selected its top-k (a fallback to the full path uses select_k).
  if (used_threshold) result->select = "threshold";

  // Host check and assembly: drop sentinels and empty slots; anything else must pass.
  const auto t_host2 = std::chrono::steady_clock::now();
  const bool larger_better = request.metric == Metric::kInnerProduct;
  for (uint32_t q = 0; q < nq; ++q) {
    const RowSet* set = filters.sets[p.per_query ? q : 0];
    auto& out = result->neighbors[q];
    out.reserve(std::min<uint64_t>(p.k, filters.passing_rows[p.per_query ? q : 0]));
    for (uint32_t i = 0; i < p.k; ++i) {
      const uint32_t id = h_ids[size_t{q} * p.k + i];
      const float v = h_vals[size_t{q} * p.k + i];
      if (id == kInvalidId || !std::isfinite(v)) continue;
      if (id >= shard.rows || !set->Contains(id)) {
        return Status::Internal("GPU " + std::string(PathName(request.path)) +
                                " path returned row " + std::to_string(id) +
                                ", which fails the filter of query " + std::to_string(q));
      }
      out.emplace_back(id, v);
    }
    std::sort(out.begin(), out.end(), [larger_better](const auto& a, const auto& b) {
      if (a.second != b.second) return larger_better ? a.second > b.second : a.second < b.second;
      return a.first < b.first;
    });
    for (size_t i = 1; i < out.size(); ++i) {
      if (out[i].first == out[i - 1].first && out[i].second == out[i - 1].second) {
        return Status::Internal("GPU path returned row " + std::to_string(out[i].first) +
                                " twice for query " + std::to_string(q));
      }
    }
  }
  const auto t_host3 = std::chrono::steady_clock::now();
  auto ms_between = [](auto a, auto b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  const std::string path_name = std::string("gpu.") + PathName(request.path);
  result->stage_ms.emplace_back("gpu.prepare", ms_between(t_host0, t_host1));
  result->stage_ms.emplace_back(path_name, last_ms);
  result->stage_ms.emplace_back("gpu.assemble", ms_between(t_host2, t_host3));
  return Status::OK();
}

Status CreateGpuExecutor(std::unique_ptr<Executor>* executor) {
  executor->reset();
  std::unique_ptr<GpuExecutor> gpu;
  SIEVE_RETURN_IF_ERROR(GpuExecutor::Create(0, &gpu));
  *executor = std::move(gpu);
  return Status::OK();
}

}  // namespace sieve::gpu
