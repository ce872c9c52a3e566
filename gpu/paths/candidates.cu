// Copyright 2026 The Sieve Authors.
//
// Candidate selection for gather and dense over many columns: an exact sample threshold per
// query, then a scan of L2-sized GEMM tiles that keeps only the rows that can beat it, of which
// those that can still be in the top-k are rescored exactly (rescore.cu).

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "gpu/cuda_status.cuh"
#include "gpu/device_run.cuh"
#include "gpu/memory.cuh"
#include "gpu/paths/distance.cuh"
#include "gpu/radix_select.cuh"

namespace sieve::gpu::detail {

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
  const void* dots;           // m rows of ld dot products (times scale), n_cols used: float, or
                              // __half for the kernel's half_dots variant
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
  float err_rel;              // |d - exact| <= err_rel * |q||x| + err_abs (× 2 for l2;
  float err_abs;              // cosine: err_rel, and err_abs is 0)
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

// The candidate scan is bound by load latency: a thread takes kCandUnroll groups of kCandVec
// columns an iteration and issues every load of them (dots, positional norms, the ordinals and
// filter words the test needs) before it uses any, and the warp does one scan and one atomic for
// all of them. A thread's groups lie a layer apart (a layer: one group for every thread of the
// query's blocks, gridDim.x × kCandLayerCols columns), so each load of a warp is one contiguous
// 512-byte run, and CandidateGridX can widen the grid when few queries would leave SMs idle: the
// extra blocks only leave the last layers empty. The metric is a template parameter so that the
// per-column arithmetic has no branches (tools/bench/results/2026-11-30-kernel-notes.md).
constexpr int kCandVec = 4;
constexpr int kCandUnroll = 4;
constexpr int kCandThreads = 256;
constexpr int64_t kCandLayerCols = int64_t{kCandThreads} * kCandVec;
// Blocks an SM holds: the registers are capped for 4 (64 a thread) over ordinals col_base + j
// and 3 (80) over col_ids, which hold more loads in flight (ordinals, scattered filter words);
// uncapped, ptxas halves the blocks an SM for a few spilled bytes saved.
constexpr int kCandBlocksPerSm = 4;
constexpr int kCandGatherBlocksPerSm = 3;

// Launched with kCandThreads threads a block (LaunchCandidateKernel): the layout assumes it.
// D: the type of the dot products (float, or __half).
template <int kMetric, bool kGather, typename D>
__global__ void __launch_bounds__(kCandThreads, kGather ? kCandGatherBlocksPerSm : kCandBlocksPerSm)
    CandidateKernel(CandidateArgs a) {
  constexpr int kCols = kCandVec * kCandUnroll;  // a thread's columns an iteration
  const int q = blockIdx.y;
  const int lane = threadIdx.x & 31;
  const float t = a.thresh[q];
  const float qn2 = a.q_sq_norms[q];
  const D* dots = static_cast<const D*>(a.dots) + static_cast<int64_t>(q) * a.ld;
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
    // dots rows are aligned to 32 elements (ld is a multiple of 32), and every group to its
    // size (16 bytes of floats, 8 of halves).
#pragma unroll
    for (int u = 0; u < kCandUnroll; ++u) {
      const int c0 = u * kCandVec;
      const int64_t j0 = col(c0);
      const int64_t left = a.n_cols - j0;
      const bool whole = left >= kCandVec;
      in |= (whole ? (1u << kCandVec) - 1 : left > 0 ? (1u << left) - 1 : 0u) << c0;
      if (whole) {
        if constexpr (sizeof(D) == 4) {
          const float4 d4 = *reinterpret_cast<const float4*>(dots + j0);
          dv[c0] = d4.x; dv[c0 + 1] = d4.y; dv[c0 + 2] = d4.z; dv[c0 + 3] = d4.w;
        } else {
          const uint2 h4 = *reinterpret_cast<const uint2*>(dots + j0);
          const float2 lo = __half22float2(*reinterpret_cast<const __half2*>(&h4.x));
          const float2 hi = __half22float2(*reinterpret_cast<const __half2*>(&h4.y));
          dv[c0] = lo.x; dv[c0 + 1] = lo.y; dv[c0 + 2] = hi.x; dv[c0 + 3] = hi.y;
        }
      } else {
#pragma unroll
        for (int e = 0; e < kCandVec; ++e) dv[c0 + e] = e < left ? ToFloat(dots[j0 + e]) : 0.0f;
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
        err = __fadd_rn(__fmul_rn(err, sqrtf(qn2) * sqrtf(xn2)), a.err_abs);
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

// Launches the CandidateKernel for c's metric, columns (col_ids or not) and dot products
// (half_dots: __half; cosine takes float only).
template <int kMetric, typename D>
void LaunchCandidateKernelFor(const CandidateArgs& c, dim3 grid, cudaStream_t stream) {
  if (c.col_ids != nullptr) {
    CandidateKernel<kMetric, true, D><<<grid, kCandThreads, 0, stream>>>(c);
  } else {
    CandidateKernel<kMetric, false, D><<<grid, kCandThreads, 0, stream>>>(c);
  }
}
void LaunchCandidateKernel(const CandidateArgs& c, bool half_dots, dim3 grid,
                           cudaStream_t stream) {
  constexpr int kL2 = static_cast<int>(Metric::kL2);
  constexpr int kIp = static_cast<int>(Metric::kInnerProduct);
  constexpr int kCos = static_cast<int>(Metric::kCosine);
  switch (static_cast<Metric>(c.metric)) {
    case Metric::kL2:
      return half_dots ? LaunchCandidateKernelFor<kL2, __half>(c, grid, stream)
                       : LaunchCandidateKernelFor<kL2, float>(c, grid, stream);
    case Metric::kInnerProduct:
      return half_dots ? LaunchCandidateKernelFor<kIp, __half>(c, grid, stream)
                       : LaunchCandidateKernelFor<kIp, float>(c, grid, stream);
    default:
      return LaunchCandidateKernelFor<kCos, float>(c, grid, stream);
  }
}

// thresh[q] = the k-th best of the n distances of row q of `dist` (rows n apart): the k-th
// smallest for select_min, else the k-th largest; +inf (select_min) or -inf when the row holds a
// NaN, so that nothing is pruned by it. One CTA a row, four radix passes (the first over the
// row, in L2 after the epilogue wrote it; the others over its keys in shared memory where they
// fit): the sample threshold without select_k's two kernels and a threshold kernel. Launched
// with kKthBestThreads threads, and `cached`: with KeyCacheBytes(n) of dynamic shared memory
// (not 0).
constexpr int kKthBestThreads = 1024;
__global__ void __launch_bounds__(kKthBestThreads) KthBestKernel(const float* __restrict__ dist,
                                                                 int64_t n, int k,
                                                                 bool select_min, bool cached,
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
  const uint32_t u = BlockKthLargest(n, k, key, hist, cached ? key_cache : nullptr);
  if (threadIdx.x == 0) {
    const float v = FromOrderedKey(select_min ? ~u : u);
    thresh[blockIdx.x] = s_nan != 0 ? (select_min ? INFINITY : -INFINITY) : v;
  }
}

// The band of each query's candidate list (float16 rows): of its first min(counts[q], cap) slots,
// the ids of those whose computed distance d lies within `margin` = 2E of the kf-th best computed
// distance c of the list (d <= c + 2E; ip: d >= c - 2E), E bounding |computed - rescored| of
// every resident row (ScoreErrorBound). The kf slots no worse than c have rescored distances no
// worse than c + E, so neither is the rescored kf-th best; a row of the rescored top-kf thus has
// d within 2E of c, and the rest of the list need not be rescored. A list of at most kf slots
// (or whose kf-th best is NaN) is kept whole. One CTA a query; `cached`: KeyCacheBytes(cap) of
// dynamic shared memory (not 0). The band's order is arbitrary.
__global__ void __launch_bounds__(256) CandidateBandKernel(
    const float* __restrict__ vals, const uint32_t* __restrict__ ids, int64_t cap,
    const uint32_t* __restrict__ counts, int kf, bool select_min, int metric, float err_rel,
    float err_abs, const float* __restrict__ q_sq_norms, float max_x_sq_norm, bool cached,
    uint32_t* __restrict__ band_ids, uint32_t* __restrict__ band_counts) {
  __shared__ uint32_t hist[256];
  extern __shared__ uint32_t key_cache[];
  __shared__ uint32_t s_kept;
  const int64_t q = blockIdx.x;
  const int64_t n = min(static_cast<int64_t>(counts[q]), cap);
  const float* v = vals + q * cap;
  const uint32_t* id = ids + q * cap;
  uint32_t* out = band_ids + q * cap;
  uint32_t* cache = cached ? key_cache : nullptr;
  uint32_t edge = 0;  // keep slots whose key is at least this (0: every slot)
  if (n > kf) {
    const uint32_t kth = BlockKthLargest(
        n, kf, [&](int64_t i) { return DistanceKey(v[i], select_min); }, hist, cache);
    if (kth != 0) {
      const float c = FromOrderedKey(select_min ? ~kth : kth);
      const float band =
          2.0f * ScoreErrorBound(metric, err_rel, err_abs, q_sq_norms[q], max_x_sq_norm) * 1.0001f;
      edge = DistanceKey(select_min ? c + band : c - band, select_min);
    }
  }
  if (threadIdx.x == 0) s_kept = 0;
  __syncthreads();
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const uint32_t key =
        cache != nullptr && n > kf ? cache[i] : DistanceKey(v[i], select_min);
    if (edge == 0 || key >= edge) out[atomicAdd(&s_kept, 1u)] = id[i];
  }
  __syncthreads();
  if (threadIdx.x == 0) band_counts[q] = s_kept;
}

// What the kernels keeping keys hold statically (the histogram and a few words), with room.
constexpr int kKeyCacheReserveBytes = 4096;

int64_t KeyCacheKeys() {
  int dev = 0, optin = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) !=
          cudaSuccess) {
    (void)cudaGetLastError();
    optin = 0;
  }
  return (std::max(optin, 48 << 10) - kKeyCacheReserveBytes) / 4;
}

cudaError_t EnableKeyCaches(int64_t cache_keys) {
  const int bytes = static_cast<int>(cache_keys * 4);
  cudaError_t err =
      cudaFuncSetAttribute(KthBestKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  if (err == cudaSuccess) {
    err = cudaFuncSetAttribute(CandidateBandKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               bytes);
  }
  if (err == cudaSuccess) err = EnableSelectRowsKeyCache(bytes);
  return err;
}

// thresh[q] = the k-th best exact distance of query q over the first `sample` columns (the
// sentinel when they hold fewer than k passing rows): never better than its true k-th best.
Status DeviceRun::SampleThresholds(uint32_t q0, uint32_t m, const RowBlocks& rows, const uint32_t* col_ids,
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
  const size_t cache_bytes = KeyCacheBytes(static_cast<int64_t>(sample), key_cache_keys_);
  KthBestKernel<<<m, kKthBestThreads, cache_bytes, stream_>>>(
      dots.get(), static_cast<int64_t>(sample), static_cast<int>(p.k), p.select_min,
      cache_bytes > 0, thresh);
  SIEVE_CUDA_CHECK_LAUNCH("KthBestKernel");
  return Status::OK();
}

// Exact top-k over n_cols columns without materialising every distance: (1) the exact path on
// the first `sample` columns gives each query a threshold no better than its true k-th best;
// (2) L2-sized tiles: GEMM (for float16 rows only the high halves of the queries: the low
// halves move a dot by at most 2^-11 |q||x|, covered by the error bound; float32 rows on TF32
// tensor cores where the plan says tf32) and one pass that finishes distances, applies the
// filter and keeps the rows that can beat the threshold; (3) float16 rows and TF32 scans: the
// band of the kept rows that can hold the exact top-k (within twice the error bound of the
// k-th best computed distance; CandidateBandKernel) is rescored exactly (float32 query against
// the row, as SDDMM does); the k best are kept. The per-query counts go to the host with the
// results; a count above `cap` (a list overflowed) makes GpuExecutor::Run rerun with the full
// path.
Status DeviceRun::Candidates(uint32_t q0, uint32_t m, const RowBlocks& rows, const uint32_t* col_ids,
                             uint64_t n_cols, const TopKPlan& planned) {
  const Prepared& p = p_;
  TopKPlan plan = planned;
  if (plan.products == Products::kInt8) {
    if (col_ids == nullptr && p.shard->has_codes(n_cols)) {
      return Int8Candidates(q0, m, rows, n_cols, plan);
    }
    // The shard's codes could not be built (device memory): float products, and explain says so.
    ++counts_->candidate_products_refused;
    NotePlan(plan.ToString() + "; int8 codes not resident: float products");
    plan.products = Products::kFloat32;
  }
  const bool half = p.shard->dtype == DType::kFloat16;
  const uint64_t sample = plan.sample, cap = plan.cap;
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
  CandidateArgs c{};
  c.scale = half ? p.scale : 1.0f;
  c.q_sq_norms = qnorms_ + q0;
  c.x_sq_norms = p.shard->sq_norms();
  if (col_ids != nullptr) {
    // A gathered block: its norms by position, read in order (by ordinal they would be one
    // scattered read a query and column).
    SIEVE_RETURN_IF_ERROR(GatheredNorms());
    c.pos_sq_norms = gathered_norms_.get();
  }
  c.col_ids = col_ids;
  c.filter = filter;
  c.filter_stride = filter_stride;
  c.metric = p.metric;
  c.select_min = p.select_min;
  // float16: the low query halves (2^-11 relative) and float32 accumulation; both: the
  // difference between two float32 summation orders (the threshold's and this pass's). Dot
  // products rounded once to float16 (half_dots) add at most 2^-11 of |q_hi . x|, itself at most
  // (1 + 2^-11) |q||x| after the scale (taken as 2^-11 (1 + 2^-8) |q||x|), and, below float16's
  // normal range, 2^-25 absolute before the scale (taken as 2^-24).
  // float32 rows on TF32 tensor cores (tf32): each input rounded to 10 mantissa bits (2^-10 of
  // it, whether cuBLAS rounds or truncates), so each product is off by at most 2^-9 + 2^-20 of
  // |q_j x_j| and the dot by as much of |q||x| (Cauchy-Schwarz; taken as 2^-9 + 2^-19), plus
  // Tf32AbsoluteError for values below float32's normal range. The products are the plan's,
  // unless the resident rows' norms (which the planner's bound covers) refuse them: then
  // float32, and explain says so.
  const Metric metric = static_cast<Metric>(p.metric);
  const double row_norm = p.shard->max_sq_norm;
  const bool half_dots = plan.products == Products::kFloat16 && half &&
                         Float16ProductsFit(metric, p.max_q_sq_norm, p.scale, row_norm);
  const bool tf32 = plan.products == Products::kTf32 && !half &&
                    Tf32ProductsFit(metric, p.dim, p.max_q_sq_norm, row_norm);
  const float tf32_abs = tf32 ? Tf32AbsoluteError(p.dim, p.max_q_sq_norm, row_norm) : 0.0f;
  ran_products_ = half_dots ? Products::kFloat16 : tf32 ? Products::kTf32 : Products::kFloat32;
  if (half_dots) ++counts_->candidate_half_dots;
  if (tf32) ++counts_->candidate_tf32;
  NotePlan(plan.ToString());
  if (ran_products_ != plan.products) {
    ++counts_->candidate_products_refused;
    NotePlan(std::string(ProductsName(plan.products)) +
             " products refused by the resident rows' norms: float32");
  }
  c.err_rel = half_dots ? 0x1p-9f + 0x1p-13f + 0x1.01p-11f
              : half    ? 0x1p-9f + 0x1p-13f
              : tf32    ? 0x1p-9f + 0x1p-13f + 0x1p-19f
                        : 0x1p-13f;
  c.err_abs = half_dots ? 0x1p-24f * p.scale : tf32 ? tf32_abs : 0.0f;
  c.thresh = thresh.get();
  c.counts = counts.get();
  c.cand_ids = cand_ids.get();
  c.cand_vals = cand_vals.get();
  c.cap = static_cast<int64_t>(cap);
  {
    // Tiles of a multiple of 256 columns, and dot rows padded to 32 elements: cuBLAS picks its
    // tensor-core kernels only for aligned leading dimensions.
    const size_t tile_bytes = plan.tile_bytes;
    const size_t dot_bytes = half_dots ? 2 : 4;
    const cudaDataType_t dot_type = half_dots ? CUDA_R_16F : CUDA_R_32F;
    const uint64_t tile_cols = std::min<uint64_t>(
        n_cols, std::max<uint64_t>(4096, tile_bytes / (dot_bytes * gemm_cols)) / 256 * 256);
    DeviceBuffer<unsigned char> dots;
    SIEVE_RETURN_IF_ERROR(
        dots.Allocate(size_t{m} * ((tile_cols + 31) / 32 * 32) * dot_bytes, stream_));
    c.dots = dots.get();
    for (uint64_t off = 0; off < n_cols;) {
      // Tiles end at slab ends too (cuBLAS reads one contiguous block).
      const uint64_t n_tile = std::min<uint64_t>({tile_cols, n_cols - off, rows.ToEnd(off)});
      const uint64_t ld = (n_tile + 31) / 32 * 32;
      SIEVE_RETURN_IF_ERROR(Gemm(rows.At(off), n_tile, B, gemm_cols, dots.get(), ld, dot_type,
                                 tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F));
      c.n_cols = static_cast<int64_t>(n_tile);
      c.ld = static_cast<int64_t>(ld);
      c.col_base = static_cast<int64_t>(off);
      dim3 grid(CandidateGridX(c.n_cols, m, sm_count_, col_ids != nullptr), m);
      LaunchCandidateKernel(c, half_dots, grid, stream_);
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

  // (3) float32 rows scanned in float32: the kept rows' distances are exact already; their k
  // best. Otherwise the band of each list that can hold its exact top-k, rescored exactly, then
  // its k best.
  if (!half && !tf32) {
    return RescoreAndSelect(q0, m, cand_ids.get(), cand_vals.get(), static_cast<int64_t>(cap),
                            counts.get(), kf, "cand.rescore", "cand.select");
  }
  DeviceBuffer<uint32_t> band_ids, band_counts;
  SIEVE_RETURN_IF_ERROR(band_ids.Allocate(size_t{m} * cap, stream_));
  SIEVE_RETURN_IF_ERROR(band_counts.Allocate(m, stream_));
  const size_t cache_bytes = KeyCacheBytes(static_cast<int64_t>(cap), key_cache_keys_);
  CandidateBandKernel<<<m, 256, cache_bytes, stream_>>>(
      cand_vals.get(), cand_ids.get(), static_cast<int64_t>(cap), counts.get(), kf,
      p.select_min, p.metric, c.err_rel, c.err_abs, qnorms_ + q0, p.shard->max_sq_norm,
      cache_bytes > 0, band_ids.get(), band_counts.get());
  SIEVE_CUDA_CHECK_LAUNCH("CandidateBandKernel");
  SIEVE_CUDA_TRY(cudaMemcpyAsync(h_counts_ + p.nq + q0, band_counts.get(), size_t{m} * 4,
                                 cudaMemcpyDeviceToHost, stream_));
  Mark("cand.band");
  return RescoreAndSelect(q0, m, band_ids.get(), nullptr, static_cast<int64_t>(cap),
                          band_counts.get(), kf, "cand.rescore", "cand.select");
}

}  // namespace sieve::gpu::detail
