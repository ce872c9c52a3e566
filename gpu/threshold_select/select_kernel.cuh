// Copyright 2026 The Sieve Authors.
//
// The threshold-select kernel over one core (MmaCore or SimtCore): the first sweep emits
// candidates and ties; the last CTA of a tile to finish repairs the rows that do not fit.
//
// Layout of the work. Grid (x: CTAs per query tile, y: tiles). A CTA owns one tile of 128
// query rows and a contiguous run of its request's pages; 8 warps split the 128 x 64 score
// tile of a page (Lane).
//
// Repair. Each CTA, when done, adds one to arrivals[tile]; the CTA that makes it gridDim.x is
// last: every counter of its tile is final. It resets arrivals[tile] to 0, finds the rows that
// do not fit, and repairs them 8 at a time: four sweeps over the tile's pages build 8-bit
// histograms of the rows' order-preserving score keys (radix select of the K-th largest, K =
// min(visible passing keys, top_k)), then the rows' counters are reset, the K-th largest score
// becomes the threshold and a fifth sweep selects them again. A sweep recomputes the tile's
// scores with the same code as the first pass, so every score is bit-identical.

#ifndef SIEVE_GPU_THRESHOLD_SELECT_SELECT_KERNEL_CUH_
#define SIEVE_GPU_THRESHOLD_SELECT_SELECT_KERNEL_CUH_

#include <cstddef>
#include <cstdint>

#include "gpu/radix_select.cuh"
#include "gpu/threshold_select/classify.cuh"
#include "gpu/threshold_select/scores.cuh"
#include "gpu/threshold_select/select_state.cuh"

namespace sieve::gpu::detail::ts {

// Stored ties of `row` (there are `ties` of them) whose scores are not NaN.
__device__ int32_t RealTies(const KernelArgs& a, int64_t row, int32_t ties) {
  const int32_t n = min(ties, a.top_k);
  const int2* slots = reinterpret_cast<const int2*>(a.candidates) +
                      row * static_cast<int64_t>(a.top_k + a.capacity);
  int32_t real = 0;
  for (int32_t i = a.top_k - n; i < a.top_k; ++i) {
    real += isnan(__int_as_float(__ldcg(&slots[i].y))) ? 0 : 1;
  }
  return real;
}

__device__ uint32_t BlockSum(RowState& st, uint32_t x) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) x += __shfl_xor_sync(kFull, x, d);
  __syncthreads();
  if ((threadIdx.x & 31) == 0) st.reduce[threadIdx.x >> 5] = x;
  __syncthreads();
  uint32_t total = 0;
#pragma unroll
  for (int w = 0; w < kThreads / 32; ++w) total += st.reduce[w];
  return total;
}

// Keys j < rend of row r that pass its filter.
__device__ uint32_t VisiblePassing(const KernelArgs& a, RowState& st, int64_t row, int32_t rend) {
  const uint32_t* words = a.filter + row * a.filter_stride;
  const int32_t full = rend / 32;
  uint32_t n = 0;
  for (int32_t w = threadIdx.x; w < full; w += blockDim.x) n += __popc(__ldcg(words + w));
  if (threadIdx.x == 0 && (rend & 31) != 0) {
    n += __popc(__ldcg(words + full) & ((1u << (rend & 31)) - 1u));
  }
  return BlockSum(st, n);
}

constexpr size_t kRowStateBytes = (sizeof(RowState) + 127) / 128 * 128;

// Every row's RowConst from its mode, threshold, end, |q|^2 and scale, before a sweep (after a
// barrier that made them final); ends with a barrier.
__device__ __forceinline__ void PrepareScreen(const KernelArgs& a, RowState& st) {
  if (threadIdx.x < kRows) {
    const int r = threadIdx.x;
    const float mult = a.metric == static_cast<int>(Metric::kL2) ? __fmul_rn(2.0f, st.scale[r])
                                                                 : st.scale[r];
    st.rc[r] = RowConst{st.mode[r] == kEmit ? st.thr[r] : INFINITY, st.rend[r], st.qn[r], mult};
  }
  __syncthreads();
}

template <typename Core>
__global__ void __launch_bounds__(kThreads, Core::kMinBlocks) SelectKernel(KernelArgs a) {
  extern __shared__ __align__(128) unsigned char smem[];
  RowState& st = *reinterpret_cast<RowState*>(smem);
  const Lane L(Core::kWarpRows);
  const int tile = blockIdx.y;
  const int32_t* table =
      a.block_table + static_cast<int64_t>(__ldg(a.tile_requests + tile)) * a.blocks_per_request;

  if (threadIdx.x == 0) {
    st.max_rend = 0;
    st.n_repair = 0;
    st.is_last = 0;
  }
  __syncthreads();
  if (threadIdx.x < kRows) {
    const int r = threadIdx.x;
    const int64_t row = static_cast<int64_t>(tile) * kRows + r;
    const bool valid = row < a.num_rows;
    const int32_t rend = valid ? min(max(__ldg(a.row_ends + row), 0), a.max_context) : 0;
    st.rend[r] = rend;
    st.thr[r] = valid ? a.thresholds[row] : 0.0f;
    st.scale[r] = valid && a.query_scales != nullptr ? __ldg(a.query_scales + row) : 1.0f;
    st.mode[r] = kEmit;
    st.skip_nan[r] = 0;
    st.group[r] = -1;
    st.qn[r] = valid && a.query_sq_norms != nullptr ? __ldg(a.query_sq_norms + row) : 0.0f;
    if (rend > 0) atomicMax(&st.max_rend, rend);
  }
  __syncthreads();
  if (a.query_sq_norms == nullptr) {
    // |q|^2 of the stored query, times the scale squared; one warp per row, fixed order.
    for (int r = L.warp; r < kRows; r += kThreads / 32) {
      const int64_t row = static_cast<int64_t>(tile) * kRows + r;
      float acc = 0.0f;
      if (row < a.num_rows) {
        for (int d = L.lane; d < a.dim; d += 32) {
          using T = typename Core::Type;
          const float x = Elem<T>::ToFloat(static_cast<const T*>(a.queries)[row * a.dim + d]);
          acc = __fmaf_rn(x, x, acc);
        }
      }
#pragma unroll
      for (int d = 16; d > 0; d >>= 1) acc = __fadd_rn(acc, __shfl_xor_sync(kFull, acc, d));
      if (L.lane == 0) st.qn[r] = __fmul_rn(acc, __fmul_rn(st.scale[r], st.scale[r]));
    }
  }
  __syncthreads();

  Core core;
  core.Init(a, smem + kRowStateBytes, tile, L);
  PrepareScreen(a, st);
  const int tile_pages = (st.max_rend + kKeys - 1) / kKeys;
  const int p0 = static_cast<int>(blockIdx.x) * a.pages_per_cta;
  const int p1 = min(p0 + a.pages_per_cta, tile_pages);
  Stager sg{0};
  auto emit = [&](int p, float(&v)[2][4][4], const auto& xn) {
    RowConst rc[2][2];
    LoadRowConsts(st, L, rc);
    ToScores(a, rc, v, xn);
    Classify(a, st, L, tile, rc, static_cast<int64_t>(p) * kKeys, v, sg);
  };
  core.Sweep(a, table, p0, p1, L, emit);
  Flush(a, st, tile, L, sg);
  if (a.arrivals == nullptr) return;

  // Arrival: the last CTA of the tile repairs it.
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    const int prev = atomicAdd(a.arrivals + tile, 1);
    st.is_last = prev == static_cast<int>(gridDim.x) - 1;
  }
  __syncthreads();
  if (!st.is_last) return;
  __threadfence();
  if (threadIdx.x == 0) atomicExch(a.arrivals + tile, 0);

  // Rows that do not fit. need[r]: -1 fits; -2 needs its visible passing count; else K.
  // Only real ties count towards fitting: NaN keys rank below every other key, so a row whose
  // tie slots hold NaN keys may have lost real ties to them.
  if (threadIdx.x < kRows) {
    const int r = threadIdx.x;
    const int64_t row = static_cast<int64_t>(tile) * kRows + r;
    int32_t need = -1;
    if (row < a.num_rows) {
      const int32_t c = __ldcg(a.counters + 2 * row);
      const int32_t t = __ldcg(a.counters + 2 * row + 1);
      const int32_t real_ties = RealTies(a, row, t);
      st.real_ties[r] = real_ties;
      const int32_t reach = c + real_ties;
      const int32_t bound = min(st.rend[r], a.top_k);  // K <= bound
      if (c > a.capacity || reach < bound) need = a.filter != nullptr ? -2 : bound;
    }
    st.need[r] = need;
  }
  __syncthreads();
  if (a.filter != nullptr) {
    int32_t last_rend = -1;
    uint32_t last_count = 0;
    for (int r = 0; r < kRows; ++r) {
      if (st.need[r] != -2) continue;  // uniform: st.need is stable here
      const int64_t row = static_cast<int64_t>(tile) * kRows + r;
      uint32_t count;
      if (a.filter_stride == 0 && st.rend[r] == last_rend) {
        count = last_count;
      } else {
        count = VisiblePassing(a, st, row, st.rend[r]);
        last_rend = st.rend[r];
        last_count = count;
      }
      __syncthreads();
      if (threadIdx.x == 0)
        st.need[r] = static_cast<int32_t>(min(count, static_cast<uint32_t>(a.top_k)));
      __syncthreads();
    }
  }
  if (threadIdx.x < kRows && st.need[threadIdx.x] >= 0) {
    const int r = threadIdx.x;
    const int64_t row = static_cast<int64_t>(tile) * kRows + r;
    const int32_t c = __ldcg(a.counters + 2 * row);
    const int32_t k = st.need[r];
    if (c <= a.capacity && c + st.real_ties[r] >= k) st.need[r] = -1;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    int n = 0;
    for (int r = 0; r < kRows; ++r) {
      if (st.need[r] >= 0) st.rows[n++] = r;
    }
    st.n_repair = n;
  }
  __syncthreads();

  const int n_repair = st.n_repair;
  for (int g0 = 0; g0 < n_repair; g0 += kGroup) {
    const int gn = min(kGroup, n_repair - g0);
    if (threadIdx.x < kRows) {
      st.mode[threadIdx.x] = kSkip;
      st.group[threadIdx.x] = -1;
    }
    if (threadIdx.x == 0) st.max_rend = 0;
    __syncthreads();
    if (threadIdx.x < gn) {
      const int r = st.rows[g0 + threadIdx.x];
      st.mode[r] = kHist;
      st.group[r] = static_cast<int8_t>(threadIdx.x);
      st.prefix[threadIdx.x] = 0;
      st.remaining[threadIdx.x] = st.need[r];
      atomicMax(&st.max_rend, st.rend[r]);
    }
    __syncthreads();
    const int pages = (st.max_rend + kKeys - 1) / kKeys;
    for (int pass = 0; pass < 4; ++pass) {
      for (int t = threadIdx.x; t < kGroup * 256; t += blockDim.x) (&st.hist[0][0])[t] = 0u;
      __syncthreads();
      auto hist = [&](int p, float(&v)[2][4][4], const auto& xn) {
        RowConst rc[2][2];
        LoadRowConsts(st, L, rc);
        ToScores(a, rc, v, xn);
        Histogram(a, st, L, tile, static_cast<int64_t>(p) * kKeys, v, pass);
      };
      core.Sweep(a, table, 0, pages, L, hist);
      __syncthreads();
      if (threadIdx.x < gn) {
        const int grp = threadIdx.x;
        const int32_t want = st.remaining[grp];
        uint32_t cum = 0;
        uint32_t digit = 0;
        for (int d = 255; d >= 0; --d) {
          const uint32_t h = st.hist[grp][d];
          if (cum + h >= static_cast<uint32_t>(want)) {
            digit = static_cast<uint32_t>(d);
            break;
          }
          cum += h;
        }
        st.remaining[grp] = want - static_cast<int32_t>(cum);
        st.prefix[grp] = (st.prefix[grp] << 8) | digit;
      }
      __syncthreads();
    }
    // The K-th largest score is the new threshold (-inf when it is NaN: fewer than K keys
    // are not NaN); the rows are selected again from empty counters.
    if (threadIdx.x < gn) {
      const int r = st.rows[g0 + threadIdx.x];
      const int64_t row = static_cast<int64_t>(tile) * kRows + r;
      const uint32_t u = st.prefix[threadIdx.x];
      const float t = u == 0u ? -INFINITY : FromOrderedKey(u);
      st.thr[r] = t;
      a.thresholds[row] = t;
      a.counters[2 * row] = 0;
      a.counters[2 * row + 1] = 0;
      st.mode[r] = kEmit;
      // With a real K-th largest score, K keys score at least t: NaN keys are not needed and
      // must not take tie slots from real ties. With t = -inf (fewer than K keys are not NaN)
      // NaN keys fill the row up to K.
      st.skip_nan[r] = u != 0u;
    }
    __syncthreads();
    PrepareScreen(a, st);
    core.Sweep(a, table, 0, pages, L, emit);
    Flush(a, st, tile, L, sg);
    __syncthreads();
  }

  if (a.ranges != nullptr && threadIdx.x < kRows) {
    const int64_t row = static_cast<int64_t>(tile) * kRows + threadIdx.x;
    if (row < a.num_rows) {
      const int32_t c = __ldcg(a.counters + 2 * row);
      const int32_t t = __ldcg(a.counters + 2 * row + 1);
      a.ranges[row] = a.top_k - min(t, a.top_k);
      a.ranges[a.num_rows + row] = a.top_k + min(c, a.capacity);
    }
  }
}

}  // namespace sieve::gpu::detail::ts

#endif  // SIEVE_GPU_THRESHOLD_SELECT_SELECT_KERNEL_CUH_
