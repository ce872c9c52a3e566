// Copyright 2026 The Sieve Authors.
//
// The last stage of candidate selection and of the threshold path: each query's list is
// rescored exactly and its k best kept, without select_k.

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "gpu/cuda_status.cuh"
#include "gpu/device_run.cuh"
#include "gpu/memory.cuh"
#include "gpu/paths/distance.cuh"
#include "gpu/radix_select.cuh"
#include "gpu/resident_rows.cuh"

namespace sieve::gpu::detail {

// The kf best of the first min(counts[q], ld) slots of row q (vals, ids; rows ld apart), unsorted,
// into out_vals / out_ids (rows kf apart); a row with fewer slots is padded with `sentinel` and
// kInvalidId. One CTA a row: the kf-th best key by radix select, then every slot above it and
// as many equal to it as fit. Replaces select_k (two kernels) and MapPositionsKernel at the end
// of candidate selection and of the threshold path. `cached`: launched with KeyCacheBytes(ld)
// of dynamic shared memory (not 0), where the keys of the slots, once read, serve the radix
// select's later passes and both collecting passes.
__global__ void __launch_bounds__(256) SelectRowsKernel(
    const float* __restrict__ vals, const uint32_t* __restrict__ ids, int64_t ld,
    const uint32_t* __restrict__ counts, int kf, bool select_min, float sentinel, bool cached,
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
  uint32_t* cache = cached ? key_cache : nullptr;
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

cudaError_t EnableSelectRowsKeyCache(int bytes) {
  return cudaFuncSetAttribute(SelectRowsKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              bytes);
}

// The elements of one 16-byte load of a resident row (16-byte aligned), as floats: eight halves
// or four floats.
__device__ __forceinline__ void LoadWide(const __half* x, float* out) {
  const uint4 raw = *reinterpret_cast<const uint4*>(x);
  const __half2* h = reinterpret_cast<const __half2*>(&raw);
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float2 f = __half22float2(h[k]);
    out[2 * k] = f.x;
    out[2 * k + 1] = f.y;
  }
}
__device__ __forceinline__ void LoadWide(const float* x, float* out) {
  const float4 f = *reinterpret_cast<const float4*>(x);
  out[0] = f.x;
  out[1] = f.y;
  out[2] = f.z;
  out[3] = f.w;
}

// Packs each query's candidates into rows of `ld` slots: slot i < counts[q] gets the candidate's
// exact distance (recomputed from the float32 query and the resident row when `rows.slabs` is
// set, else its computed value) and ordinal; the other slots get the sentinel and kInvalidId.
// Blocks of grid.x stride over a query's slots: threads fill, warps rescore four slots at a
// time (one where the dim does not split into 16-byte loads).
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
  // Four candidates a warp at a time, eight lanes each, a lane reading 16 bytes of its row a
  // step (eight halves or four floats): the four rows' loads are in flight together, where a
  // warp a candidate waited for one row after another (dependent load latency was most of this
  // kernel's time).
  constexpr int kVec = 16 / sizeof(T);
  if (dim % kVec == 0 && (reinterpret_cast<uintptr_t>(qv) & 15) == 0) {
    const int sub = lane >> 3, sl = lane & 7;
    for (int64_t i0 = warp * 4; i0 < cnt; i0 += n_warps * 4) {
      const int64_t i = i0 + sub;
      const bool valid = i < cnt;
      const uint32_t id = valid ? cids[i] : 0u;
      float acc = 0.0f;
      if (valid) {
        const T* x = RowAt<T>(rows, id, dim);
        for (int j = sl * kVec; j < dim; j += 8 * kVec) {
          float xf[kVec];
          LoadWide(x + j, xf);
#pragma unroll
          for (int e = 0; e < kVec; e += 4) {
            const float4 qf = *reinterpret_cast<const float4*>(qv + j + e);
            acc = fmaf(xf[e], qf.x, acc);
            acc = fmaf(xf[e + 1], qf.y, acc);
            acc = fmaf(xf[e + 2], qf.z, acc);
            acc = fmaf(xf[e + 3], qf.w, acc);
          }
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

// The last stage of candidate selection and of the threshold path: lists of `cap` slots a
// query (ordinals, counts[q] of them) are rescored exactly — without `vals`: the float32 query
// against the resident row (float16 rows, and float32 rows scanned on TF32); with it: the exact
// distances the scan computed (float32 rows scanned in float32) — and SelectRowsKernel keeps
// the kf best, downloaded with their ordinals.
Status DeviceRun::RescoreAndSelect(uint32_t q0, uint32_t m, const uint32_t* ids_in, const float* vals_in,
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
    // From the resident rows, as the shard stores them.
    const auto rescore =
        p.shard->dtype == DType::kFloat16 ? &RescoreKernel<__half> : &RescoreKernel<float>;
    rescore<<<grid, 256, 0, stream_>>>(
        ids_in, nullptr, cap, counts, p.shard->resident(), static_cast<int>(p.dim),
        queries_ + size_t{q0} * p.dim, qnorms_ + q0, p.shard->sq_norms(), p.metric,
        p.sentinel, ld, vals.get(), ids.get());
  } else {
    RescoreKernel<float><<<grid, 256, 0, stream_>>>(
        ids_in, vals_in, cap, counts, ResidentRows{}, static_cast<int>(p.dim),
        nullptr, nullptr, nullptr, p.metric, p.sentinel, ld, vals.get(), ids.get());
  }
  SIEVE_CUDA_CHECK_LAUNCH("RescoreKernel");
  Mark(rescore_mark);
  const size_t cache_bytes = KeyCacheBytes(ld, key_cache_keys_);
  SelectRowsKernel<<<m, 256, cache_bytes, stream_>>>(
      vals.get(), ids.get(), ld, counts, kf, p.select_min, p.sentinel, cache_bytes > 0,
      final_vals.get(), final_ids.get());
  SIEVE_CUDA_CHECK_LAUNCH("SelectRowsKernel");
  Mark(select_mark);
  return Download(q0, m, kf, final_vals.get(), final_ids.get());
}

}  // namespace sieve::gpu::detail
