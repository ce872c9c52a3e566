// Copyright 2026 The Sieve Authors.
//
// The candidate scan over int8 codes (Products::kInt8): the resident rows' codes built at upload
// (BuildRowCodes), the queries' codes a chunk, int32 dot products on the int8 tensor cores over
// L2-sized tiles, a pass that keeps every row whose distance can still reach the sample threshold
// within that row's own error bound, the band of kept rows that can hold the exact top-k, and
// its exact rescore (rescore.cu). The bound and every operation that computes it are those of
// query/int8_codes.h, whose CPU tests check the contract on the host emulation.

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "gpu/cuda_status.cuh"
#include "gpu/device_run.cuh"
#include "gpu/device_shard.cuh"
#include "gpu/memory.cuh"
#include "gpu/paths/distance.cuh"
#include "gpu/radix_select.cuh"
#include "gpu/resident_rows.cuh"
#include "query/int8_codes.h"

namespace sieve::gpu::detail {

namespace {

__device__ __forceinline__ float LoadElem(const float* p) { return *p; }
__device__ __forceinline__ float LoadElem(const __half* p) { return __half2float(*p); }

// The code of one vector of dim elements (x), by one warp: codes into out[0, code_dim), and
// *terms = {s, s|q| up, |x - s q| up, |x| up} on lane 0 (QuantizeInt8's operations: the scale
// and codes in float32, the terms in float64, widened by 2^-30 and rounded up).
template <typename T>
__device__ void WarpQuantize(const T* x, uint32_t dim, uint32_t code_dim, int8_t* out,
                             float4* terms) {
  const int lane = threadIdx.x & 31;
  float max_abs = 0.0f;
  for (uint32_t j = lane; j < dim; j += 32) max_abs = fmaxf(max_abs, fabsf(LoadElem(x + j)));
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    max_abs = fmaxf(max_abs, __shfl_xor_sync(0xffffffffu, max_abs, off));
  }
  const float s = __fdiv_rn(max_abs, 127.0f);
  double qq = 0, rr = 0, xx = 0;
  for (uint32_t j = lane; j < code_dim; j += 32) {
    int q = 0;
    if (j < dim) {
      const float v = LoadElem(x + j);
      if (s > 0.0f) q = static_cast<int>(fminf(fmaxf(rintf(__fdiv_rn(v, s)), -127.0f), 127.0f));
      const double r = static_cast<double>(v) - static_cast<double>(s) * q;
      qq += static_cast<double>(q) * q;
      rr += r * r;
      xx += static_cast<double>(v) * v;
    }
    out[j] = static_cast<int8_t>(q);
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    qq += __shfl_xor_sync(0xffffffffu, qq, off);
    rr += __shfl_xor_sync(0xffffffffu, rr, off);
    xx += __shfl_xor_sync(0xffffffffu, xx, off);
  }
  if (lane == 0) {
    constexpr double kWiden = 1.0 + 0x1p-30;
    *terms =
        make_float4(s, __double2float_ru(static_cast<double>(s) * sqrt(qq) * kWiden),
                    __double2float_ru(sqrt(rr) * kWiden), __double2float_ru(sqrt(xx) * kWiden));
  }
}

constexpr int kCodeWarps = 8;  // warps a block of the code kernels

// Codes of rows [from, to): one warp a row. terms[r].w is the stored squared norm (what the
// distances use), not |x|.
template <typename T>
__global__ void __launch_bounds__(kCodeWarps * 32)
    RowCodesKernel(ResidentRows rows, uint32_t dim, const float* __restrict__ sq_norms,
                   uint64_t from, uint64_t to, int8_t* __restrict__ codes, uint32_t code_dim,
                   float4* __restrict__ terms) {
  const uint64_t warps = static_cast<uint64_t>(gridDim.x) * kCodeWarps;
  for (uint64_t r = from + static_cast<uint64_t>(blockIdx.x) * kCodeWarps + threadIdx.x / 32;
       r < to; r += warps) {
    float4 t;
    WarpQuantize(RowAt<T>(rows, r, dim), dim, code_dim, codes + r * code_dim, &t);
    if ((threadIdx.x & 31) == 0) {
      t.w = sq_norms[r];
      terms[r] = t;
    }
  }
}

// Codes of m queries (float32, dim apart) and their side of the bound: terms[q] =
// {s_y, A_y, B_y, 0} (QueryTerms). Rows m..m_pad-1 of codes are zero (padding for cuBLAS).
__global__ void __launch_bounds__(kCodeWarps * 32)
    QueryCodesKernel(const float* __restrict__ queries, uint32_t m, uint32_t m_pad, uint32_t dim,
                     int8_t* __restrict__ codes, uint32_t code_dim, float4* __restrict__ terms) {
  const uint32_t q = blockIdx.x * kCodeWarps + threadIdx.x / 32;
  if (q >= m_pad) return;
  const int lane = threadIdx.x & 31;
  if (q >= m) {
    for (uint32_t j = lane; j < code_dim; j += 32) codes[size_t{q} * code_dim + j] = 0;
    return;
  }
  float4 t;
  WarpQuantize(queries + size_t{q} * dim, dim, code_dim, codes + size_t{q} * code_dim, &t);
  if (lane == 0) {
    constexpr double kWiden = 1.0 + 0x1p-30;
    const float a =
        __double2float_ru((static_cast<double>(t.z) + 0x1p-22 * static_cast<double>(t.y)) * kWiden);
    terms[q] = make_float4(t.x, a, t.w, 0.0f);
  }
}

// Int8DistanceError's operations (query/int8_codes.h), round to nearest, no contraction.
template <int kMetric>
__device__ __forceinline__ float DistanceError(float row_a, float row_b, float4 qt, float ref,
                                               float qn2, float xn2) {
  const float t1 = __fmul_rn(row_a, qt.y);
  const float t2 = __fmul_rn(row_b, qt.z);
  const float dot_err = __fmul_rn(__fadd_rn(__fadd_rn(t1, t2), 0x1p-118f), 1.0f + 0x1p-20f);
  const float qx = __fmul_rn(sqrtf(qn2), sqrtf(xn2));
  const float e = __fadd_rn(dot_err, __fmul_rn(ref, qx));
  if (kMetric == static_cast<int>(Metric::kInnerProduct)) return e;
  if (kMetric == static_cast<int>(Metric::kL2)) {
    return __fadd_rn(__fmul_rn(2.0f, e), __fmul_rn(0x1p-20f, __fadd_rn(qn2, xn2)));
  }
  if (qn2 == 0.0f || xn2 == 0.0f) return 0.0f;
  return __fadd_rn(__fdiv_rn(e, qx), 0x1p-20f);
}

struct Int8ScanArgs {
  const int32_t* dots;  // m rows of ld int32 dots, n_cols used
  int64_t n_cols;
  int64_t ld;
  int64_t col_base;         // column j is row col_base + j
  const float4* row_terms;  // by row
  const float4* q_terms;    // m
  const float* q_sq_norms;  // m
  const uint32_t* filter;   // nullable: bit words; query q's start at q * filter_stride
  int64_t filter_stride;
  float ref;            // Int8ReferenceError(dim)
  const float* thresh;  // m
  uint32_t* counts;     // m
  uint32_t* cand_ids;   // m × cap
  float* cand_vals;     // m × cap: the estimate's distance
  float* cand_errs;     // m × cap: its bound
  int64_t cap;
};

constexpr int kScanThreads = 256;
constexpr int kScanVec = 4;  // columns a thread an iteration (one int4 of dots)

// Keeps, per query, the rows whose estimate's distance d can reach the threshold: d - E <= t
// rounded down (ip: d + E >= t rounded up), E the row's bound. Appended with warp-aggregated
// atomics; counts[q] may pass cap (the host then reruns the full path).
template <int kMetric>
__global__ void __launch_bounds__(kScanThreads) Int8ScanKernel(Int8ScanArgs a) {
  constexpr bool kMin = kMetric != static_cast<int>(Metric::kInnerProduct);
  const int q = blockIdx.y;
  const int lane = threadIdx.x & 31;
  const float t = a.thresh[q];
  const float qn2 = a.q_sq_norms[q];
  const float4 qt = a.q_terms[q];
  const int32_t* dots = a.dots + static_cast<int64_t>(q) * a.ld;
  const uint32_t* filter = a.filter != nullptr ? a.filter + q * a.filter_stride : nullptr;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kScanThreads * kScanVec;
  // The warp's first column: the loop test is warp-uniform, so every lane takes the shuffles.
  const int64_t warp_col =
      (static_cast<int64_t>(blockIdx.x) * kScanThreads + (threadIdx.x - lane)) * kScanVec;
  for (int64_t base = warp_col; base < a.n_cols; base += stride) {
    const int64_t j0 = base + lane * kScanVec;
    int32_t dv[kScanVec];
    if (j0 + kScanVec <= a.n_cols) {
      const int4 d4 = *reinterpret_cast<const int4*>(dots + j0);
      dv[0] = d4.x;
      dv[1] = d4.y;
      dv[2] = d4.z;
      dv[3] = d4.w;
    } else {
#pragma unroll
      for (int e = 0; e < kScanVec; ++e) dv[e] = j0 + e < a.n_cols ? dots[j0 + e] : 0;
    }
    float d[kScanVec], err[kScanVec];
    uint32_t take = 0;
#pragma unroll
    for (int e = 0; e < kScanVec; ++e) {
      const int64_t j = j0 + e;
      if (j >= a.n_cols) continue;
      const uint64_t row = static_cast<uint64_t>(a.col_base + j);
      if (filter != nullptr && !TestBit(filter, static_cast<uint32_t>(row))) continue;
      const float4 rt = a.row_terms[row];
      const float est = __fmul_rn(__int2float_rn(dv[e]), __fmul_rn(rt.x, qt.x));
      d[e] = FinishDistance(kMetric, est, qn2, rt.w);
      err[e] = DistanceError<kMetric>(rt.y, rt.z, qt, a.ref, qn2, rt.w);
      const bool keep = kMin ? __fsub_rd(d[e], err[e]) <= t : __fadd_ru(d[e], err[e]) >= t;
      take |= (keep ? 1u : 0u) << e;
    }
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
    uint32_t slot = 0;
    if (lane == 0) slot = atomicAdd(a.counts + q, static_cast<uint32_t>(total));
    slot = __shfl_sync(0xffffffffu, slot, 0) + static_cast<uint32_t>(below);
#pragma unroll
    for (int e = 0; e < kScanVec; ++e) {
      if (!((take >> e) & 1u)) continue;
      if (slot < a.cap) {
        const int64_t o = static_cast<int64_t>(q) * a.cap + slot;
        a.cand_ids[o] = static_cast<uint32_t>(a.col_base + j0 + e);
        a.cand_vals[o] = d[e];
        a.cand_errs[o] = err[e];
      }
      ++slot;
    }
  }
}

// The band of each query's list that can hold its exact top-kf (Int8Band): with U the kf-th best
// worst case (d + E rounded up; ip: d - E rounded down), the slots whose best case (d - E down;
// ip: d + E up) is no worse than U. Every row of the rescored top-kf has a rescored distance
// within E of d and no worse than U (kf slots are certainly no worse than U), so it is in the
// band. A list of at most kf slots (or whose U is NaN) is kept whole. One CTA a query.
__global__ void __launch_bounds__(256)
    Int8BandKernel(const float* __restrict__ vals, const float* __restrict__ errs,
                   const uint32_t* __restrict__ ids, int64_t cap,
                   const uint32_t* __restrict__ counts, int kf, bool select_min,
                   uint32_t* __restrict__ band_ids, uint32_t* __restrict__ band_counts) {
  __shared__ uint32_t hist[256];
  __shared__ uint32_t s_kept;
  const int64_t q = blockIdx.x;
  const int64_t n = min(static_cast<int64_t>(counts[q]), cap);
  const float* v = vals + q * cap;
  const float* e = errs + q * cap;
  const uint32_t* id = ids + q * cap;
  uint32_t* out = band_ids + q * cap;
  auto worst = [&](int64_t i) {
    return DistanceKey(select_min ? __fadd_ru(v[i], e[i]) : __fsub_rd(v[i], e[i]), select_min);
  };
  auto best = [&](int64_t i) {
    return DistanceKey(select_min ? __fsub_rd(v[i], e[i]) : __fadd_ru(v[i], e[i]), select_min);
  };
  uint32_t edge = 0;  // keep slots whose best-case key is at least this (0: every slot)
  if (n > kf) edge = BlockKthLargest(n, kf, worst, hist, nullptr);
  if (threadIdx.x == 0) s_kept = 0;
  __syncthreads();
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    if (edge == 0 || best(i) >= edge) out[atomicAdd(&s_kept, 1u)] = id[i];
  }
  __syncthreads();
  if (threadIdx.x == 0) band_counts[q] = s_kept;
}

unsigned ScanGridX(int64_t n_cols, int64_t m, int sm_count) {
  constexpr int64_t kCols = int64_t{kScanThreads} * kScanVec;
  const int64_t most = (n_cols + kCols - 1) / kCols;
  const int64_t fill =
      (int64_t{sm_count} * 8 + std::max<int64_t>(m, 1) - 1) / std::max<int64_t>(m, 1);
  return static_cast<unsigned>(
      std::clamp<int64_t>(std::min(most, std::max<int64_t>(fill, 1)), 1, 65535));
}

}  // namespace

Status BuildRowCodes(const ResidentRows& rows, DType dtype, uint32_t dim, const float* sq_norms,
                     uint64_t from, uint64_t to, int8_t* codes, uint32_t code_dim, float4* terms,
                     cudaStream_t stream) {
  if (to <= from) return Status::OK();
  const unsigned grid = GridFor(static_cast<int64_t>(to - from), kCodeWarps, 65535LL * 4);
  if (dtype == DType::kFloat16) {
    RowCodesKernel<__half><<<grid, kCodeWarps * 32, 0, stream>>>(rows, dim, sq_norms, from, to,
                                                                 codes, code_dim, terms);
  } else {
    RowCodesKernel<float><<<grid, kCodeWarps * 32, 0, stream>>>(rows, dim, sq_norms, from, to,
                                                                codes, code_dim, terms);
  }
  SIEVE_CUDA_CHECK_LAUNCH("RowCodesKernel");
  return Status::OK();
}

// The dense candidate scan in int8 (see the file comment and DeviceRun::Candidates, whose
// sample threshold, list sizes and fallback it shares): n_cols resident rows from row 0.
Status DeviceRun::Int8Candidates(uint32_t q0, uint32_t m, const RowBlocks& rows, uint64_t n_cols,
                                 const TopKPlan& plan) {
  const Prepared& p = p_;
  const DeviceShard& shard = *p.shard;
  const uint64_t sample = plan.sample, cap = plan.cap;
  const int kf = static_cast<int>(std::min<uint64_t>(p.k, n_cols));
  const uint32_t code_dim = shard.code_dim;
  ++counts_->candidate_int8;
  ran_products_ = Products::kInt8;
  NotePlan(plan.ToString());

  // (1) Thresholds from the exact path on the first `sample` rows.
  DeviceBuffer<float> thresh;
  SIEVE_RETURN_IF_ERROR(thresh.Allocate(m, stream_));
  SIEVE_RETURN_IF_ERROR(SampleThresholds(q0, m, rows, nullptr, sample, thresh.get()));
  Mark("cand.threshold");

  // (2) The queries' codes (a multiple of 4 of them for cuBLAS), then the scan, tile by tile.
  const uint32_t m_pad = (m + 3) / 4 * 4;
  DeviceBuffer<int8_t> q_codes;
  DeviceBuffer<float4> q_terms;
  SIEVE_RETURN_IF_ERROR(q_codes.Allocate(size_t{m_pad} * code_dim, stream_));
  SIEVE_RETURN_IF_ERROR(q_terms.Allocate(m, stream_));
  QueryCodesKernel<<<(m_pad + kCodeWarps - 1) / kCodeWarps, kCodeWarps * 32, 0, stream_>>>(
      queries_ + size_t{q0} * p.dim, m, m_pad, p.dim, q_codes.get(), code_dim, q_terms.get());
  SIEVE_CUDA_CHECK_LAUNCH("QueryCodesKernel");

  DeviceBuffer<uint32_t> counts, cand_ids;
  DeviceBuffer<float> cand_vals, cand_errs;
  SIEVE_RETURN_IF_ERROR(counts.Allocate(m, stream_));
  SIEVE_RETURN_IF_ERROR(cand_ids.Allocate(size_t{m} * cap, stream_));
  SIEVE_RETURN_IF_ERROR(cand_vals.Allocate(size_t{m} * cap, stream_));
  SIEVE_RETURN_IF_ERROR(cand_errs.Allocate(size_t{m} * cap, stream_));
  SIEVE_CUDA_TRY(cudaMemsetAsync(counts.get(), 0, size_t{m} * 4, stream_));

  Int8ScanArgs a{};
  a.row_terms = shard.code_terms;
  a.q_terms = q_terms.get();
  a.q_sq_norms = qnorms_ + q0;
  a.filter = ChunkFilter(q0, nullptr);
  a.filter_stride = FilterStride();
  a.ref = Int8ReferenceError(p.dim);
  a.thresh = thresh.get();
  a.counts = counts.get();
  a.cand_ids = cand_ids.get();
  a.cand_vals = cand_vals.get();
  a.cand_errs = cand_errs.get();
  a.cap = static_cast<int64_t>(cap);
  {
    // Tiles of a multiple of 256 rows (the codes buffer holds whole 256-row tiles, zero past
    // the last row), dot rows padded to 32 elements.
    const uint64_t tile_cols = std::min<uint64_t>(
        (n_cols + 255) / 256 * 256,
        std::max<uint64_t>(4096, plan.tile_bytes / (size_t{4} * m_pad)) / 256 * 256);
    DeviceBuffer<int32_t> dots;
    SIEVE_RETURN_IF_ERROR(dots.Allocate(size_t{m_pad} * ((tile_cols + 31) / 32 * 32), stream_));
    a.dots = dots.get();
    const int32_t one = 1, zero = 0;
    for (uint64_t off = 0; off < n_cols;) {
      const uint64_t n_tile = std::min<uint64_t>(tile_cols, n_cols - off);
      const uint64_t gemm_rows =
          std::min<uint64_t>((n_tile + 15) / 16 * 16, shard.code_capacity - off);
      const uint64_t ld = (gemm_rows + 31) / 32 * 32;
      SIEVE_CUBLAS_TRY(cublasGemmEx(
          cublas_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(gemm_rows), static_cast<int>(m_pad),
          static_cast<int>(code_dim), &one, shard.codes + off * code_dim, CUDA_R_8I,
          static_cast<int>(code_dim), q_codes.get(), CUDA_R_8I, static_cast<int>(code_dim), &zero,
          dots.get(), CUDA_R_32I, static_cast<int>(ld), CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT));
      a.n_cols = static_cast<int64_t>(n_tile);
      a.ld = static_cast<int64_t>(ld);
      a.col_base = static_cast<int64_t>(off);
      const dim3 grid(ScanGridX(a.n_cols, m, sm_count_), m);
      switch (static_cast<Metric>(p.metric)) {
        case Metric::kL2:
          Int8ScanKernel<static_cast<int>(Metric::kL2)><<<grid, kScanThreads, 0, stream_>>>(a);
          break;
        case Metric::kInnerProduct:
          Int8ScanKernel<static_cast<int>(Metric::kInnerProduct)>
              <<<grid, kScanThreads, 0, stream_>>>(a);
          break;
        default:
          Int8ScanKernel<static_cast<int>(Metric::kCosine)><<<grid, kScanThreads, 0, stream_>>>(a);
          break;
      }
      SIEVE_CUDA_CHECK_LAUNCH("Int8ScanKernel");
      off += n_tile;
    }
  }
  Mark("cand.scan");

  // The host checks the counts after the search: a count above `cap` reruns the full path.
  SIEVE_CUDA_TRY(cudaMemcpyAsync(h_counts_ + q0, counts.get(), size_t{m} * 4,
                                 cudaMemcpyDeviceToHost, stream_));
  cand_cap_ = cap;

  // (3) The band that can hold the exact top-k, rescored from the stored rows.
  DeviceBuffer<uint32_t> band_ids, band_counts;
  SIEVE_RETURN_IF_ERROR(band_ids.Allocate(size_t{m} * cap, stream_));
  SIEVE_RETURN_IF_ERROR(band_counts.Allocate(m, stream_));
  Int8BandKernel<<<m, 256, 0, stream_>>>(cand_vals.get(), cand_errs.get(), cand_ids.get(),
                                         static_cast<int64_t>(cap), counts.get(), kf, p.select_min,
                                         band_ids.get(), band_counts.get());
  SIEVE_CUDA_CHECK_LAUNCH("Int8BandKernel");
  SIEVE_CUDA_TRY(cudaMemcpyAsync(h_counts_ + p.nq + q0, band_counts.get(), size_t{m} * 4,
                                 cudaMemcpyDeviceToHost, stream_));
  Mark("cand.band");
  return RescoreAndSelect(q0, m, band_ids.get(), nullptr, static_cast<int64_t>(cap),
                          band_counts.get(), kf, "cand.rescore", "cand.select");
}

}  // namespace sieve::gpu::detail
