// Copyright 2026 The Sieve Authors.
//
// The page pipeline of the shared-memory cores: pages of a block table stream through a
// core's stages, each copied by one warp, handed over through shared-memory barriers.

#ifndef SIEVE_GPU_THRESHOLD_SELECT_PIPELINE_CUH_
#define SIEVE_GPU_THRESHOLD_SELECT_PIPELINE_CUH_

#include <cstddef>
#include <cstdint>

#include "gpu/threshold_select/ptx.cuh"
#include "gpu/threshold_select/select_state.cuh"

namespace sieve::gpu::detail::ts {

// Calls f(i, key, c) for the 16-byte chunks i = lane, lane + 32, ... of a page of 64 keys of
// `vecs` chunks each (vecs <= 32), chunk c of its key, without a division a chunk (the copies of
// a page by one warp when the dim is not the kernel's DMAX).
template <typename F>
__device__ __forceinline__ void ForLaneChunks(int vecs, int lane, F&& f) {
  const int dk = 32 / vecs, dc = 32 - dk * vecs;  // 32 chunks: dk keys and dc chunks
  int key = lane / vecs, c = lane - key * vecs;
  for (int i = lane; i < kKeys * vecs; i += 32) {
    f(i, key, c);
    key += dk;
    c += dc;
    if (c >= vecs) {
      c -= vecs;
      ++key;
    }
  }
}

// A page's source as the page pipeline keeps it in shared memory (PipelineSweep).
struct __align__(16) PageEntry {
  const void* rows;
  int32_t page;
};
constexpr int kLookup = 32;  // pages looked up at a time (one warp's lanes)
constexpr size_t kEntriesBytes = 2 * kLookup * sizeof(PageEntry);

// Lane l of the calling warp looks up page first + l (if below p1) into dst[l].
template <typename T>
__device__ __forceinline__ void LookupBlock(const KernelArgs& a, const int32_t* table, int first,
                                            int p1, PageEntry* dst) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  if (first + lane < p1) {
    const PageSrc<T> src = PageSrcOf<T>(a, table, first + lane);
    dst[lane] = PageEntry{src.rows, src.page};
  }
}

// The page pipeline of the shared-memory cores (MmaCore): pages [p0, p1) of `table`
// stream through the core's kStages stages, each copied by one warp
// (core.IssueWarp(a, src, stage, lane, full), which also arrives on the stage's full barrier,
// core.FullArrivals(a) arrivals a phase); on_page(p, stage) runs in every warp once page p is in
// its stage, and must call ReleaseStage as soon as the warp has read the stage.
//
// Stages are handed over through shared-memory barriers, not a barrier of the whole CTA per
// page: a warp waits for its page's copies (full) and, before copying a page into a stage,
// for every warp to have read that stage's previous page (empty); a warp releases a stage as
// soon as it has its operands and norms, before it classifies the scores. A warp held up by a
// page with a hit (the exact classification and staging, several hundred cycles) then delays
// the others only once they are kStages - 1 pages ahead, instead of at the next page.
template <typename Core, typename OnPage>
__device__ __forceinline__ void PipelineSweep(Core& core, const KernelArgs& a, const int32_t* table,
                                              int p0, int p1, OnPage&& on_page) {
  using T = typename Core::Type;
  constexpr int kStages = Core::kStages;
  if (p0 >= p1) return;
  // Page p0 + n is copied by warp n mod 8 alone (IssueWarp), so a stage's full barrier counts
  // that warp's 32 threads (cp.async) or the one lane that issues its TMA copies: a warp waits
  // for a stage to be free at one page in eight, not at every page.
  constexpr int kWarps = kThreads / 32;
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const int lane = static_cast<int>(threadIdx.x & 31);
  if (threadIdx.x == 0) {
#pragma unroll
    for (int s = 0; s < kStages; ++s) {
      MbarInit(core.full + s, core.FullArrivals(a));
      MbarInit(core.empty + s, kWarps);
    }
  }
  // Page p0 + n's source is entry n mod 32 of block (n / 32) mod 2 of the core's two blocks of
  // PageEntry, looked up 32 pages at a time by warp 0, one block ahead. Looked up a page at a
  // time where it is copied, the two dependent global loads (the table, then the slab's
  // address) put two L2 round trips in front of every copy: the L1 keeps little of them, the
  // copies stream through it. A block is read only after the barrier that starts it, and
  // refilled only after the one that starts the next.
  if (threadIdx.x < 32) {
    LookupBlock<T>(a, table, p0, p1, core.entries[0]);
    LookupBlock<T>(a, table, p0 + 32, p1, core.entries[1]);
  }
  __syncthreads();
  auto issue = [&](int n, int stage) {  // page p0 + n into `stage`, by its warp
    const PageEntry e = core.entries[(n >> 5) & 1][n & 31];
    core.IssueWarp(a, PageSrc<T>{static_cast<const T*>(e.rows), e.page}, stage, lane,
                   core.full + stage);
  };
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (p0 + s < p1 && warp == s % kWarps) issue(s, s);
  }
  int stage = 0;       // of page p
  uint32_t phase = 0;  // parity of page p's use of its stage
  for (int p = p0; p < p1; ++p) {
    // Page p + kStages - 1 goes into the stage of page p - 1, once every warp has read it.
    const int next = p + kStages - 1;
    if (next < p1) {
      const int n = next - p0;
      if ((n & 31) == 0) {
        // n = 32, 64, ... (the loop starts at n = kStages - 1): every warp has issued the pages
        // of the previous block, and warp 0 refills it with the block after this one.
        __syncthreads();
        if (threadIdx.x < 32) {
          LookupBlock<T>(a, table, next + 32, p1, core.entries[((n >> 5) + 1) & 1]);
        }
      }
      if (warp == n % kWarps) {
        const int prev = stage == 0 ? kStages - 1 : stage - 1;
        if (p > p0) MbarWait(core.empty + prev, stage == 0 ? phase ^ 1u : phase);
        issue(n, prev);
      }
    }
    MbarWait(core.full + stage, phase);  // page p is in
    on_page(p, stage);
    if (++stage == kStages) {
      stage = 0;
      phase ^= 1u;
    }
  }
  // Every copy issued has been waited for through its full barrier.
  __syncthreads();
}

// Called by every lane of a warp that has read `stage` (every shared-memory read of it has
// returned its registers): the warp's arrival on the stage's empty barrier.
__device__ __forceinline__ void ReleaseStage(uint64_t* empty, int stage, int lane) {
  __syncwarp();
  if (lane == 0) MbarArrive(empty + stage);
}

}  // namespace sieve::gpu::detail::ts

#endif  // SIEVE_GPU_THRESHOLD_SELECT_PIPELINE_CUH_
