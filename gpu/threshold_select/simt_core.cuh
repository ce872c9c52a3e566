// Copyright 2026 The Sieve Authors.
//
// The CUDA-core core of the threshold select: any key type and dim.

#ifndef SIEVE_GPU_THRESHOLD_SELECT_SIMT_CORE_CUH_
#define SIEVE_GPU_THRESHOLD_SELECT_SIMT_CORE_CUH_

#include <cstddef>
#include <cstdint>

#include "gpu/threshold_select/scores.cuh"
#include "gpu/threshold_select/select_state.cuh"

namespace sieve::gpu::detail::ts {

// The CUDA-core core: any key type and dim. Pages and query rows pass through shared memory in
// steps of 32 dims as float32; each thread accumulates its 32 scores with fmaf in dim order.

template <typename T>
struct SimtCore {
  using Type = T;
  static constexpr bool kWarpRows = false;
  static constexpr int kNormSets = 1;
  static constexpr int kMinBlocks = 1;
  static constexpr int kLd = kSimtChunk + 1;
  static size_t SmemBytes() { return static_cast<size_t>(kRows + kKeys) * kLd * sizeof(float); }

  float* qs;
  float* ks;

  __device__ void Init(const KernelArgs&, unsigned char* smem, int, const Lane&) {
    qs = reinterpret_cast<float*>(smem);
    ks = qs + kRows * kLd;
  }

  template <typename F>
  __device__ void Sweep(const KernelArgs& a, const int32_t* table, int p0, int p1, const Lane& L,
                        F&& f) {
    const int tile = blockIdx.y;
    const T* q = static_cast<const T*>(a.queries);
    for (int p = p0; p < p1; ++p) {
      const int32_t page = __ldg(table + p);
      const T* src = PagePtr<T>(a, page);
      float v[2][4][4];
      ZeroTile(v);
      for (int d0 = 0; d0 < a.dim; d0 += kSimtChunk) {
        __syncthreads();
        for (int t = threadIdx.x; t < kRows * kSimtChunk; t += blockDim.x) {
          const int r = t / kSimtChunk, d = t % kSimtChunk;
          const int64_t row = static_cast<int64_t>(tile) * kRows + r;
          qs[r * kLd + d] = (row < a.num_rows && d0 + d < a.dim)
                                ? Elem<T>::ToFloat(q[row * a.dim + d0 + d])
                                : 0.0f;
        }
        for (int t = threadIdx.x; t < kKeys * kSimtChunk; t += blockDim.x) {
          const int k = t / kSimtChunk, d = t % kSimtChunk;
          ks[k * kLd + d] = d0 + d < a.dim
                                ? Elem<T>::ToFloat(src[static_cast<int64_t>(k) * a.dim + d0 + d])
                                : 0.0f;
        }
        __syncthreads();
        const int dn = min(kSimtChunk, a.dim - d0);
        for (int d = 0; d < dn; ++d) {
          float kv[4][2];
#pragma unroll
          for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int c = 0; c < 2; ++c) kv[j][c] = ks[L.Col(0, j, c) * kLd + d];
#pragma unroll
          for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const float qv = qs[L.Row(i, h) * kLd + d];
#pragma unroll
              for (int j = 0; j < 4; ++j)
#pragma unroll
                for (int c = 0; c < 2; ++c) {
                  v[i][j][2 * h + c] = __fmaf_rn(qv, kv[j][c], v[i][j][2 * h + c]);
                }
            }
        }
      }
      float xn[kNormSets][4][2];
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          xn[0][j][c] = __ldg(a.key_norms + static_cast<int64_t>(page) * kKeys + L.Col(0, j, c));
        }
      f(p, v, xn);
    }
    __syncthreads();
  }
};

}  // namespace sieve::gpu::detail::ts

#endif  // SIEVE_GPU_THRESHOLD_SELECT_SIMT_CORE_CUH_
