// Copyright 2026 The Sieve Authors.
//
// The scores a thread holds for one page: their layout over the CTA (Lane), how dot products
// become scores for each metric, and the stored form of a score in a slot.

#ifndef SIEVE_GPU_THRESHOLD_SELECT_SCORES_CUH_
#define SIEVE_GPU_THRESHOLD_SELECT_SCORES_CUH_

#include <cstdint>

#include "gpu/threshold_select/select_state.cuh"
#include "sieve/types.h"

namespace sieve::gpu::detail::ts {

__device__ __forceinline__ float Score(int metric, float dot, float qn, float xn) {
  if (metric == static_cast<int>(Metric::kInnerProduct)) return dot;
  if (metric == static_cast<int>(Metric::kL2)) {
    // 2 dot - (qn + xn) with one rounding after the product (a fused multiply-add): one
    // instruction fewer per score than a product and a difference, and no less exact.
    return __fmaf_rn(2.0f, dot, -__fadd_rn(qn, xn));
  }
  if (qn == 0.0f || xn == 0.0f) return -1.0f;
  return __fsub_rn(__fdiv_rn(dot, __fmul_rn(__fsqrt_rn(qn), __fsqrt_rn(xn))), 1.0f);
}

// The value stored for score s of a row with threshold t (see the header).
__device__ __forceinline__ float Stored(float s, float t) {
  return (t > 0.0f && s <= __fmul_rn(2.0f, t)) ? __fsub_rn(s, t) : s;
}
__device__ __forceinline__ float Decode(float v, float t) {
  return (t > 0.0f && v <= t) ? __fadd_rn(v, t) : v;
}

__device__ __forceinline__ bool TestBit(const uint32_t* words, uint32_t j) {
  return (__ldg(words + (j >> 5)) >> (j & 31u)) & 1u;
}

// A page's scores: v[i][j][e] of fragment (i, j), element e = 2h + c, is the score of query row
// L.Row(i, h) and key L.Col(i, j, c) of the page. xn[n][j][c]: squared norms of this thread's
// keys, n = i where a core's keys depend on i (kNormSets 2), else 0.

// The 32 scores a thread holds for one page, zeroed.
__device__ __forceinline__ void ZeroTile(float (&v)[2][4][4]) {
#pragma unroll
  for (int i = 0; i < 2; ++i) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) v[i][j][e] = 0.0f;
    }
  }
}

// Which scores of a page a thread holds, in one of two layouts (a core's kWarpRows):
//  - warps 4 (rows) x 2 (keys), each 32 rows x 32 keys (mma.sync, CUDA cores): warp 2 wm + wn
//    holds row 32 wm + 16 i + 8 h + g, key 32 wn + 8 j + 2 q + c;
//  - warp w holds rows 16 w .. 16 w + 15 and all 64 keys (warpgroup MMA, m64n64 a warpgroup):
//    row 16 w + 8 h + g, key 32 i + 8 j + 2 q + c.
// Either way a row slot (i, h) is 8 rows (g) by 32 keys of one aligned 32-key block (KeyBlock).
struct Lane {
  int warp, lane, g, q;
  // Row = row0 + ri i + 8 h + g, Col = col0 + ci i + 8 j + 2 q + c: row0 and col0 are the warp's
  // first row and key.
  int row0, ri, col0, ci;
  __device__ explicit Lane(bool warp_rows) {
    warp = threadIdx.x >> 5;
    lane = threadIdx.x & 31;
    g = lane >> 2;
    q = lane & 3;
    row0 = warp_rows ? warp * 16 : (warp >> 1) * 32;
    ri = warp_rows ? 0 : 16;
    col0 = warp_rows ? 0 : (warp & 1) * 32;
    ci = warp_rows ? 32 : 0;
  }
  __device__ int Row(int i, int h) const { return row0 + i * ri + h * 8 + g; }
  __device__ int KeyBlock(int i) const { return col0 + i * ci; }
  __device__ int Col(int i, int j, int c) const { return KeyBlock(i) + j * 8 + q * 2 + c; }
};

// The squared norms of this thread's keys of a page (xn[n][j][c]: n = i where a core's keys
// depend on i, else 0) from the page's 64 in shared memory, a pair of adjacent keys a load.
template <int NS>
__device__ __forceinline__ void LoadNorms(const float* ns, const Lane& L, float (&xn)[NS][4][2]) {
#pragma unroll
  for (int n = 0; n < NS; ++n) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float2 x = *reinterpret_cast<const float2*>(ns + L.Col(n, j, 0));
      xn[n][j][0] = x.x;
      xn[n][j][1] = x.y;
    }
  }
}

// Turns the dot products of one page into scores, in place. One uniform branch on the metric
// per page, not one per score: the per-score code is straight-line.
template <int kMetric, int NS>
__device__ __forceinline__ void ToScoresOf(const RowConst (&rc)[2][2], float (&v)[2][4][4],
                                           const float (&xn)[NS][4][2]) {
#pragma unroll
  for (int i = 0; i < 2; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float qn = rc[i][h].qn;
      const float m = rc[i][h].mult;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          if constexpr (kMetric == static_cast<int>(Metric::kL2)) {
            // m = 2 scale, and 2 (dot · scale) == dot · (2 scale) exactly, so this is Score's
            // fused form with the scale folded into the product: two instructions a score.
            v[i][j][2 * h + c] =
                __fmaf_rn(v[i][j][2 * h + c], m, -__fadd_rn(qn, xn[NS == 1 ? 0 : i][j][c]));
          } else {
            v[i][j][2 * h + c] = Score(kMetric, __fmul_rn(v[i][j][2 * h + c], m), qn,
                                       xn[NS == 1 ? 0 : i][j][c]);
          }
        }
      }
    }
  }
}

template <int NS>
__device__ __forceinline__ void ToScores(const KernelArgs& a, const RowConst (&rc)[2][2],
                                         float (&v)[2][4][4], const float (&xn)[NS][4][2]) {
  if (a.metric == static_cast<int>(Metric::kL2)) {
    ToScoresOf<static_cast<int>(Metric::kL2)>(rc, v, xn);
  } else if (a.metric == static_cast<int>(Metric::kInnerProduct)) {
    ToScoresOf<static_cast<int>(Metric::kInnerProduct)>(rc, v, xn);
  } else {
    ToScoresOf<static_cast<int>(Metric::kCosine)>(rc, v, xn);
  }
}

// The RowConst of this thread's four row slots, loaded together (before the metric's branch in
// ToScores, so one shared-memory round trip with the page's norms).
__device__ __forceinline__ void LoadRowConsts(const RowState& st, const Lane& L,
                                              RowConst (&rc)[2][2]) {
#pragma unroll
  for (int i = 0; i < 2; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) rc[i][h] = st.rc[L.Row(i, h)];
  }
}

}  // namespace sieve::gpu::detail::ts

#endif  // SIEVE_GPU_THRESHOLD_SELECT_SCORES_CUH_
