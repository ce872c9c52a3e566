// Copyright 2026 The Sieve Authors.
//
// Classification of one page's scores into candidates and ties (Classify), their staging and
// emission into the slots (Stager, Flush, EmitSlot), and the repair's histograms (Histogram).
//
// A key is interesting when its score is not below the threshold (one compare, done for every
// score); only then are visibility and the filter tested, per row slot (the 8 rows a warp
// holds in one fragment half) behind its own vote, with the slot's filter word loaded once. A
// warp with nothing to emit skips the rest. Otherwise the warp stages its candidates and ties
// in its shared-memory buffer (Stager) and reserves their global slots in batches (Flush).

#ifndef SIEVE_GPU_THRESHOLD_SELECT_CLASSIFY_CUH_
#define SIEVE_GPU_THRESHOLD_SELECT_CLASSIFY_CUH_

#include <cstdint>

#include "gpu/radix_select.cuh"
#include "gpu/threshold_select/scores.cuh"
#include "gpu/threshold_select/select_state.cuh"

namespace sieve::gpu::detail::ts {

// key_base below: the key index of the page's slot 0.

__device__ __forceinline__ bool Passes(const KernelArgs& a, int tile, int r, int64_t key) {
  return a.filter == nullptr ||
         TestBit(a.filter + static_cast<int64_t>(tile * kRows + r) * a.filter_stride,
                 static_cast<uint32_t>(key));
}

// Emission staging. A candidate or tie of a page is first written to its warp's buffer in shared
// memory (kStageCap entries: positions by a warp prefix sum, no atomic); the warp reserves slots
// for the whole buffer at once when it would overflow and at the end of each sweep (Flush).
// Emitting straight from the page would put a returned global atomic (an L2 round trip) behind
// every page with a hit, and the warps waiting at the next hand-over behind it. A page whose hits
// exceed the buffer is emitted straight. Slot order within a row is not part of the contract;
// counters end the same. Only the count lives in a register (the buffers are found from the warp index when used: two
// more live registers pushed the tensor-core kernel's page loop into spilling).
struct Stager {
  int n;  // entries staged (warp-uniform)
};

// Reserves the slots of every staged entry (one atomic per row and kind among 32 entries,
// kFlushBatch rounds in flight) and writes them; the buffer is empty afterwards. Called by every
// lane of the warp.
__device__ __forceinline__ void Flush(const KernelArgs& a, RowState& st, int tile, const Lane& L,
                                      Stager& sg) {
  __syncwarp();
  const int2* items = st.staged[L.warp];
  const uint8_t* tags = st.staged_tag[L.warp];
  int2* const base = reinterpret_cast<int2*>(a.candidates);
  const int64_t ld = static_cast<int64_t>(a.top_k) + a.capacity;
  for (int e0 = 0; e0 < sg.n; e0 += kFlushBatch * 32) {
    // Entries of one row and kind among the warp's 32 share one atomic (its leader's): dense
    // pages stage several a row.
    int32_t at[kFlushBatch];
    uint32_t tag[kFlushBatch];
#pragma unroll
    for (int u = 0; u < kFlushBatch; ++u) {
      const int e = e0 + u * 32 + L.lane;
      const bool valid = e < sg.n;
      tag[u] = valid ? tags[e] : 0x100u + L.lane;  // invalid lanes match nobody
      const uint32_t peers = __match_any_sync(kFull, tag[u]);
      const int leader = __ffs(peers) - 1;
      int32_t first = 0;
      if (valid && L.lane == leader) {
        const int32_t row = tile * kRows + static_cast<int32_t>(tag[u] & 0x7fu);
        first = atomicAdd(a.counters + 2 * row + static_cast<int32_t>(tag[u] >> 7),
                          __popc(peers));
      }
      at[u] = __shfl_sync(kFull, first, leader) + __popc(peers & ((1u << L.lane) - 1u));
      if (!valid) at[u] = -1;
    }
#pragma unroll
    for (int u = 0; u < kFlushBatch; ++u) {
      if (at[u] < 0) continue;
      const int2 item = items[e0 + u * 32 + L.lane];
      const int64_t row = static_cast<int64_t>(tile) * kRows + (tag[u] & 0x7fu);
      if ((tag[u] & 0x80u) == 0) {
        if (at[u] < a.capacity) base[row * ld + a.top_k + at[u]] = item;
      } else if (at[u] < a.top_k) {
        base[row * ld + a.top_k - 1 - at[u]] = item;
      }
    }
  }
  __syncwarp();
  sg.n = 0;
}

// The filter word of row slot (i, h) that holds its 32 keys of the page (key_base is a multiple
// of 64; the slot's keys are key_base + L.KeyBlock(i) + [0, 32)), all ones without a filter.
// Loaded once per slot that the screen hit, all four together, instead of one dependent load
// per key inside the classification.
__device__ __forceinline__ uint32_t FilterWord(const KernelArgs& a, const RowState& st,
                                               const Lane& L, int tile, int i, int r,
                                               int64_t key_base, bool hit) {
  const int64_t first = key_base + L.KeyBlock(i);
  if (a.filter == nullptr || !hit || first >= st.rend[r]) return kFull;
  return __ldg(a.filter + static_cast<int64_t>(tile * kRows + r) * a.filter_stride + (first >> 5));
}

// Classifies and emits row slot (I, H) of this page (8 rows of the warp, 4 lanes each) into the
// warp's staging buffer; past its capacity, straight to the slots with one atomic per kind, row
// and quad. fw: the slot's filter word (FilterWord).
template <int I, int H>
__device__ __forceinline__ void EmitSlot(const KernelArgs& a, RowState& st, const Lane& L,
                                         int tile, int64_t key_base, const float (&s)[2][4][4],
                                         uint32_t fw, Stager& sg) {
  const int r = L.Row(I, H);
  const int64_t row = static_cast<int64_t>(tile) * kRows + r;
  const float t = st.thr[r];
  const bool emit = st.mode[r] == kEmit;
  const int32_t rend = st.rend[r];
  uint32_t cm = 0, tm = 0;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      const float v = s[I][j][2 * H + c];
      if (emit && !(v < t)) {
        const int64_t key = key_base + L.Col(I, j, c);
        // Bit j 8 + 2 q + c of the slot's word: KeyBlock is a multiple of 32.
        if (key < rend && !(isnan(v) && st.skip_nan[r]) && ((fw >> (j * 8 + L.q * 2 + c)) & 1u)) {
          if (v > t) {
            cm |= 1u << (j * 2 + c);
          } else {
            tm |= 1u << (j * 2 + c);
          }
        }
      }
    }
  }
  // Staged: this lane's entries (0 to 8) go after those of the lanes below it. The prefix sum
  // comes from one ballot per bit of the count, independent of each other, instead of a chain
  // of five shuffles: this path is the latency a page with a hit adds to its warp, and the other
  // warps wait for it once they are a few pages ahead (PipelineSweep).
  const int mine = __popc(cm | tm);
  const uint32_t b0 = __ballot_sync(kFull, mine & 1), b1 = __ballot_sync(kFull, mine & 2);
  const uint32_t b2 = __ballot_sync(kFull, mine & 4), b3 = __ballot_sync(kFull, mine & 8);
  if ((b0 | b1 | b2 | b3) == 0) return;
  const uint32_t lt = (1u << L.lane) - 1u;
  const int below = __popc(b0 & lt) + 2 * __popc(b1 & lt) + 4 * __popc(b2 & lt) +
                    8 * __popc(b3 & lt);
  const int total = __popc(b0) + 2 * __popc(b1) + 4 * __popc(b2) + 8 * __popc(b3);
  // The slot of score (j, c): its key and its stored score (static indexes only: a dynamic one
  // would put the scores in local memory).
  auto item = [&](int j, int c) {
    return make_int2(static_cast<int32_t>(key_base + L.Col(I, j, c)),
                     __float_as_int(Stored(s[I][j][2 * H + c], t)));
  };
  if (sg.n + total > kStageCap) Flush(a, st, tile, L, sg);
  if (total <= kStageCap) {
    int at = sg.n + below;
    const uint8_t tag = static_cast<uint8_t>(r);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        const uint32_t bit = 1u << (j * 2 + c);
        if ((cm | tm) & bit) {
          st.staged[L.warp][at] = item(j, c);
          st.staged_tag[L.warp][at] = (tm & bit) ? static_cast<uint8_t>(tag | 0x80u) : tag;
          ++at;
        }
      }
    }
    sg.n += total;
    return;
  }
  // More than the buffer holds (the buffer is empty now): straight to the slots.
  const int nc = __popc(cm), nt = __popc(tm);
  // Inclusive scans over the quad (lanes 4g .. 4g + 3).
  int ic = nc, it = nt;
#pragma unroll
  for (int d = 1; d < 4; d <<= 1) {
    const int xc = __shfl_up_sync(kFull, ic, d, 4);
    const int xt = __shfl_up_sync(kFull, it, d, 4);
    if (L.q >= d) {
      ic += xc;
      it += xt;
    }
  }
  const int total_c = __shfl_sync(kFull, ic, 3, 4);
  const int total_t = __shfl_sync(kFull, it, 3, 4);
  int base_c = 0, base_t = 0;
  if (L.q == 0) {
    if (total_c > 0) base_c = atomicAdd(a.counters + 2 * row, total_c);
    if (total_t > 0) base_t = atomicAdd(a.counters + 2 * row + 1, total_t);
  }
  base_c = __shfl_sync(kFull, base_c, 0, 4);
  base_t = __shfl_sync(kFull, base_t, 0, 4);
  if ((cm | tm) == 0) return;
  int2* slots =
      reinterpret_cast<int2*>(a.candidates) + row * static_cast<int64_t>(a.top_k + a.capacity);
  int nc_at = base_c + ic - nc;
  int nt_at = base_t + it - nt;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      const uint32_t bit = 1u << (j * 2 + c);
      if ((cm | tm) & bit) {
        const int2 slot = item(j, c);
        if (cm & bit) {
          if (nc_at < a.capacity) slots[a.top_k + nc_at] = slot;
          ++nc_at;
        } else {
          if (nt_at < a.top_k) slots[a.top_k - 1 - nt_at] = slot;
          ++nt_at;
        }
      }
    }
  }
}

// Emits the candidates and ties of the rows in kEmit mode. Called by every lane of the warp.
// First a screen without branches: one unordered compare per score (NaN passes it), against
// +inf for rows that cannot emit on this page. Almost every page ends there; the exact
// classification runs only for the row slots (8 rows of the warp each) with a score not below
// its row's threshold.
__device__ __forceinline__ void Classify(const KernelArgs& a, RowState& st, const Lane& L, int tile,
                                         const RowConst (&rc)[2][2], int64_t key_base,
                                         const float (&s)[2][4][4], Stager& sg) {
  bool hit[2][2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      // key_base < max_context <= INT32_MAX: a 32-bit compare.
      const float t = static_cast<int32_t>(key_base) < rc[i][h].end ? rc[i][h].thr : INFINITY;
      bool x = false;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
#pragma unroll
        for (int c = 0; c < 2; ++c) x |= !(s[i][j][2 * h + c] < t);
      }
      hit[i][h] = x;
    }
  }
  if (!__any_sync(kFull, hit[0][0] | hit[0][1] | hit[1][0] | hit[1][1])) return;
  uint32_t fw[2][2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      fw[i][h] = FilterWord(a, st, L, tile, i, L.Row(i, h), key_base, hit[i][h]);
    }
  }
  if (__any_sync(kFull, hit[0][0])) EmitSlot<0, 0>(a, st, L, tile, key_base, s, fw[0][0], sg);
  if (__any_sync(kFull, hit[0][1])) EmitSlot<0, 1>(a, st, L, tile, key_base, s, fw[0][1], sg);
  if (__any_sync(kFull, hit[1][0])) EmitSlot<1, 0>(a, st, L, tile, key_base, s, fw[1][0], sg);
  if (__any_sync(kFull, hit[1][1])) EmitSlot<1, 1>(a, st, L, tile, key_base, s, fw[1][1], sg);
}

// Adds the rows in kHist mode to their histograms: pass b looks at bits [24 - 8b, 32 - 8b) of
// the keys whose higher bits equal the row's prefix.
__device__ __forceinline__ void Histogram(const KernelArgs& a, RowState& st, const Lane& L,
                                          int tile, int64_t key_base, const float (&s)[2][4][4],
                                          int pass) {
  const int shift = 24 - 8 * pass;
#pragma unroll
  for (int i = 0; i < 2; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = L.Row(i, h);
      if (st.mode[r] != kHist) continue;
      const int grp = st.group[r];
      const uint32_t prefix = st.prefix[grp];
      const int32_t rend = st.rend[r];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          const int64_t key = key_base + L.Col(i, j, c);
          if (key >= rend || !Passes(a, tile, r, key)) continue;
          const uint32_t u = OrderedKey(s[i][j][2 * h + c]);
          if (pass == 0 || (u >> (shift + 8)) == prefix) {
            atomicAdd(&st.hist[grp][(u >> shift) & 255u], 1u);
          }
        }
      }
    }
  }
}

}  // namespace sieve::gpu::detail::ts

#endif  // SIEVE_GPU_THRESHOLD_SELECT_CLASSIFY_CUH_
