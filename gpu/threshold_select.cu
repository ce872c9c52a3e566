// Copyright 2026 The Sieve Authors.
//
// The threshold select (see threshold_select.h for the contract), its final top-k and its
// threshold helper.
//
// Layout of the work. Grid (x: CTAs per query tile, y: tiles). A CTA owns one tile of 128 query
// rows and a contiguous run of its request's pages; 8 warps split the 128 × 64 score tile of a
// page as 4 (rows) × 2 (keys), each warp 32 × 32: two m16 × four n8 fragments, so every thread
// holds 32 scores — rows wm·32 + i·16 + h·8 + lane/4 (i, h ∈ {0, 1}) by keys wn·32 + j·8 +
// 2·(lane%4) + c (j < 4, c ∈ {0, 1}) for warp 2·wm + wn. The mma.sync and CUDA-core kernels
// produce scores in that layout, the warpgroup-MMA kernel in a second one (warp w: 16 rows by
// all 64 keys); Lane names both, so classification, emission and repair are shared.
//
// Emission. A key is interesting when its score is not below the threshold (one compare, done
// for every score); only then are visibility and the filter tested, per row slot (the 8 rows a
// warp holds in one fragment half) behind its own vote, with the slot's filter word loaded once.
// A warp with nothing to emit skips the rest. Otherwise the warp stages its candidates and ties
// in its shared-memory buffer (Stager) and reserves their global slots in batches (Flush).
//
// Repair. Each CTA, when done, adds one to arrivals[tile]; the CTA that makes it gridDim.x is
// last: every counter of its tile is final. It resets arrivals[tile] to 0, finds the rows that
// do not fit, and repairs them 16 at a time: four sweeps over the tile's pages build 8-bit
// histograms of the rows' order-preserving score keys (radix select of the K-th largest, K =
// min(visible passing keys, top_k)), then the rows' counters are reset, the K-th largest score
// becomes the threshold and a fifth sweep selects them again. A sweep recomputes the tile's
// scores with the same code as the first pass, so every score is bit-identical.

#include <cuda.h>  // CUtensorMap and its enums (the encoder comes through the runtime)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>

#include "gpu/cuda_util.cuh"
#include "gpu/radix_select.cuh"
#include "gpu/threshold_select.h"

namespace sieve::gpu {
namespace {

using detail::FromCuda;
using detail::FromOrderedKey;
using detail::OrderedKey;

constexpr int kThreads = 256;
constexpr int kRows = 128;      // query rows per tile
constexpr int kKeys = 64;       // keys per page
constexpr int kGroup = 8;       // rows repaired together
constexpr int kSimtChunk = 32;  // dims per step of the CUDA-core kernel
constexpr int kStageCap = 128;  // emissions a warp stages in shared memory (see Stager)
constexpr int kFlushBatch = 2;  // slot reservations in flight a lane while flushing
constexpr uint32_t kFull = 0xffffffffu;

enum RowMode : uint8_t { kSkip = 0, kEmit = 1, kHist = 2 };

// ---------------------------------------------------------------------------------------------
// Scores and their order.

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

// ---------------------------------------------------------------------------------------------
// Element types.

template <typename T>
struct Elem;
template <>
struct Elem<__half> {
  static __device__ __forceinline__ float ToFloat(__half x) { return __half2float(x); }
};
template <>
struct Elem<__nv_bfloat16> {
  static __device__ __forceinline__ float ToFloat(__nv_bfloat16 x) { return __bfloat162float(x); }
};
template <>
struct Elem<float> {
  static __device__ __forceinline__ float ToFloat(float x) { return x; }
};

// ---------------------------------------------------------------------------------------------
// PTX wrappers (sm_80+).

__device__ __forceinline__ uint32_t SmemAddr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void CpAsync16(void* smem, const void* gmem) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(SmemAddr(smem)), "l"(gmem));
}
__device__ __forceinline__ void LdMatrixX4At(uint32_t (&r)[4], uint32_t smem_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr));
}
__device__ __forceinline__ void LdMatrixX4(uint32_t (&r)[4], const void* smem) {
  LdMatrixX4At(r, SmemAddr(smem));
}
// Shared-memory barriers (sm_80+): a stage's "full" barrier completes when the copies of its
// page have landed, its "empty" barrier when every warp has read it (PipelineSweep).
__device__ __forceinline__ void MbarInit(uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(SmemAddr(bar)), "r"(count));
}
// Arrives on bar once this thread's earlier cp.async copies have completed.
__device__ __forceinline__ void MbarArriveOnCopies(uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(SmemAddr(bar))
               : "memory");
}
__device__ __forceinline__ void MbarArrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(SmemAddr(bar)) : "memory");
}
// Waits until the phase of bar with this parity has completed.
__device__ __forceinline__ void MbarWait(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred done;\nwait:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait;\n}\n" ::"r"(SmemAddr(bar)),
      "r"(parity)
      : "memory");
}

// The tensor memory accelerator (sm_90): bulk copies into shared memory that complete a
// transaction count on a shared-memory barrier. Elsewhere these trap; the host passes page maps
// only for a compute capability 9 device and a build with sm_90 code (ChooseKernel).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define SIEVE_TMA_DEVICE 1
#endif
// Arrives on bar and adds `bytes` to the transactions its phase waits for.
__device__ __forceinline__ void MbarArriveExpectTx(uint64_t* bar, uint32_t bytes) {
#ifdef SIEVE_TMA_DEVICE
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(SmemAddr(bar)),
               "r"(bytes)
               : "memory");
#else
  __trap();
#endif
}
// Box (x, y) of the tensor map at `map` (a global address) into dst, completing on bar.
__device__ __forceinline__ void TmaLoad2d(void* dst, const void* map, int x, int y, uint64_t* bar) {
#ifdef SIEVE_TMA_DEVICE
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(SmemAddr(dst)),
      "l"(map), "r"(x), "r"(y), "r"(SmemAddr(bar))
      : "memory");
#else
  __trap();
#endif
}
// `bytes` (a multiple of 16) contiguous bytes from global src into dst, completing on bar.
__device__ __forceinline__ void BulkLoad(void* dst, const void* src, uint32_t bytes,
                                         uint64_t* bar) {
#ifdef SIEVE_TMA_DEVICE
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
      ::"r"(SmemAddr(dst)), "l"(src), "r"(bytes), "r"(SmemAddr(bar))
      : "memory");
#else
  __trap();
#endif
}
// Orders this thread's shared-memory accesses so far (generic proxy) before later ones of the
// async proxy: TMA writes over the stages Init zeroed, wgmma reading a stage whose cp.async
// copies its full barrier observed.
__device__ __forceinline__ void FenceProxyAsync() {
#ifdef SIEVE_TMA_DEVICE
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

template <typename T>
__device__ __forceinline__ void Mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                    uint32_t b1) {
  if constexpr (std::is_same_v<T, __half>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// Warpgroup MMA (sm_90a only: this file is compiled for it where the project builds for sm_90,
// see gpu/CMakeLists.txt; elsewhere these wrappers trap and WgmmaCore is never launched).
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define SIEVE_WGMMA_DEVICE 1
#endif

// A shared-memory matrix descriptor without swizzle: the operand is made of 8 × 16-byte core
// matrices (128 contiguous bytes each); lbo: bytes between core matrices adjacent in K, sbo:
// between those adjacent in N.
__device__ __forceinline__ uint64_t WgmmaDesc(uint32_t smem_addr, uint32_t lbo, uint32_t sbo) {
  return static_cast<uint64_t>((smem_addr & 0x3ffffu) >> 4) |
         (static_cast<uint64_t>(lbo >> 4) << 16) | (static_cast<uint64_t>(sbo >> 4) << 32);
}

// Keeps the compiler from moving accesses of the accumulators across wgmma's asynchrony.
__device__ __forceinline__ void FenceAccumulators(float (&d)[32]) {
#pragma unroll
  for (int i = 0; i < 32; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

__device__ __forceinline__ void WgmmaFence() {
#ifdef SIEVE_WGMMA_DEVICE
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void WgmmaCommitAndWait() {
#ifdef SIEVE_WGMMA_DEVICE
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#endif
}

// d (64 × 64 float32, this thread's 32) = A · Bᵀ (+ d when accumulate): A 64 × 16 from registers
// (this warp's 16 rows as an m16k16 mma.sync A fragment), B 64 × 16 K-major in shared memory
// (descriptor db).
template <typename T>
__device__ __forceinline__ void WgmmaM64N64K16(float (&d)[32], const uint32_t (&a)[4],
                                               uint64_t db, int accumulate) {
#ifdef SIEVE_WGMMA_DEVICE
#define SIEVE_WGMMA_ASM(TYPE)                                                                    \
  asm volatile(                                                                                  \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"                                                \
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE " "                            \
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "    \
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "                        \
      "{%32, %33, %34, %35}, %36, p, 1, 1, 0;\n}\n"                                               \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),     \
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]),               \
        "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]),            \
        "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),            \
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]),            \
        "+f"(d[31])                                                                               \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(accumulate))
  if constexpr (std::is_same_v<T, __half>) {
    SIEVE_WGMMA_ASM("f16");
  } else {
    SIEVE_WGMMA_ASM("bf16");
  }
#undef SIEVE_WGMMA_ASM
#else
  __trap();
#endif
}

// ---------------------------------------------------------------------------------------------
// Kernel arguments (by value) and per-CTA shared state.

struct KernelArgs {
  const void* const* slabs;
  uint32_t slab_pages_log2;
  const float* key_norms;
  int dim;
  int metric;
  const void* queries;
  uint32_t num_rows;
  const float* query_scales;
  const float* query_sq_norms;
  const int32_t* row_ends;
  const int32_t* tile_requests;
  const int32_t* block_table;
  int64_t blocks_per_request;
  int32_t max_context;
  const uint32_t* filter;
  int64_t filter_stride;
  float* thresholds;
  int32_t* counters;
  int32_t* candidates;
  int32_t top_k;
  int32_t capacity;
  int32_t* arrivals;
  int32_t* ranges;
  int32_t pages_per_cta;
  const unsigned char* page_maps;  // MmaCore's TMA copies (one kPageMapBytes map a slab), or null
};

// What a page's scores of one row need, in one 16-byte load a row slot and page: the threshold
// of the emitting sweep under way where the row emits (+inf where it does not), its key end
// (both for Classify's screen), |q|^2 and the factor of the dot products (ToScores: the
// query's scale, twice it for l2). Built by PrepareScreen.
struct __align__(16) RowConst {
  float thr;
  int32_t end;
  float qn;
  float mult;
};

struct RowState {
  RowConst rc[kRows];
  float thr[kRows];
  float qn[kRows];
  float scale[kRows];
  int32_t rend[kRows];
  uint8_t mode[kRows];
  uint8_t skip_nan[kRows];  // a repaired row with a real threshold leaves NaN keys out
  int8_t group[kRows];
  // Repair.
  uint32_t hist[kGroup][256];
  uint32_t prefix[kGroup];
  int32_t remaining[kGroup];
  int32_t rows[kRows];       // tile-local rows to repair
  int32_t need[kRows];       // their K
  int32_t real_ties[kRows];  // stored ties that are not NaN
  int32_t n_repair;
  int32_t max_rend;
  int32_t is_last;
  uint32_t reduce[kThreads / 32];
  // Staged emissions of each warp (Stager): (key, stored score) and the tile row, 0x80 for a tie.
  int2 staged[kThreads / 32][kStageCap];
  uint8_t staged_tag[kThreads / 32][kStageCap];
};

template <typename T>
__device__ __forceinline__ const T* PagePtr(const KernelArgs& a, int32_t page) {
  const uint32_t slab = static_cast<uint32_t>(page) >> a.slab_pages_log2;
  const uint32_t in = static_cast<uint32_t>(page) & ((1u << a.slab_pages_log2) - 1u);
  return static_cast<const T*>(a.slabs[slab]) + static_cast<int64_t>(in) * kKeys * a.dim;
}

// The source of page p of a block table: its rows, and its index in the pool (its norms are at
// a.key_norms + page * 64).
template <typename T>
struct PageSrc {
  const T* rows;
  int32_t page;
};
template <typename T>
__device__ __forceinline__ PageSrc<T> PageSrcOf(const KernelArgs& a, const int32_t* table, int p) {
  const int32_t page = __ldg(table + p);
  return PageSrc<T>{PagePtr<T>(a, page), page};
}

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

// The page pipeline of the shared-memory cores (MmaCore, WgmmaCore): pages [p0, p1) of `table`
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
// the others only once they are kStages - 1 pages ahead, instead of at the next page: with a
// barrier per page, the dense path's last level (about 1,270 candidates a row over 10M keys)
// took 1.67 ms against 1.37 ms for an exact threshold (H200, 2026-11-30).
template <typename Core, typename OnPage>
__device__ __forceinline__ void PipelineSweep(Core& core, const KernelArgs& a, const int32_t* table,
                                              int p0, int p1, OnPage&& on_page) {
  using T = typename Core::Type;
  constexpr int kStages = Core::kStages;
  if (p0 >= p1) return;
  // Page p0 + n is copied by warp n mod 8 alone (IssueWarp), so a stage's full barrier counts
  // that warp's 32 threads (cp.async) or the one lane that issues its TMA copies. With every
  // thread copying a share of every page, every warp waited at every page for the slowest one
  // to release the stage the page goes into: that wait was the kernel's most sampled stall
  // (6.5 %, H200, 2026-11-30). Now a warp waits there at one page in eight, and the other seven
  // skip the copy's instructions.
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

// ---------------------------------------------------------------------------------------------
// Classification of one page's scores (shared by both kernels).
//
// dots[i][j][e]: fragment (i, j), element e = 2h + c, the score of query row L.Row(i, h) and key
// L.Col(i, j, c) of the page. key_base: the key index of the page's slot 0. xn[n][j][c]: squared
// norms of this thread's keys, n = i where a core's keys depend on i (kNormSets 2), else 0.

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

__device__ __forceinline__ bool Passes(const KernelArgs& a, int tile, int r, int64_t key) {
  return a.filter == nullptr ||
         TestBit(a.filter + static_cast<int64_t>(tile * kRows + r) * a.filter_stride,
                 static_cast<uint32_t>(key));
}

// Emission staging. A candidate or tie of a page is first written to its warp's buffer in shared
// memory (kStageCap entries: positions by a warp prefix sum, no atomic); the warp reserves slots
// for the whole buffer at once when it would overflow and at the end of each sweep (Flush).
// Emitting straight from the page, as before, put a returned global atomic (an L2 round trip)
// behind every page with a hit, and the CTA's next barrier made all eight warps wait for it: the
// dense path's last level, about 1,270 candidates a row over 10M keys, took 1.86 ms against the
// 1.40 of an exact threshold (H200, 2026-11-30). A page whose hits exceed the buffer is emitted
// straight. Slot order within a row is not part of the contract; counters end the same.
// Only the count lives in a register (the buffers are found from the warp index when used: two
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

// ---------------------------------------------------------------------------------------------
// The tensor-core core: float16 / bfloat16 keys, dim % 8 == 0, dim <= DMAX. The tile's 128 query
// rows stay in shared memory; pages stream through kStages shared buffers; A and B fragments
// come from shared memory with ldmatrix. Up to DMAX = 128 a CTA needs under 128 registers a
// thread and about 100 KB of shared memory, so two CTAs (16 warps) share an SM.
//
// A stage holds a page as DMAX / kBoxCols boxes of 64 keys by kBoxCols dims (kRowBytes = 128 a
// key, 64 at DMAX 32), each swizzled as the tensor memory accelerator writes it with a 128-byte
// (64-byte) swizzle: the 16-byte chunk c of a key row n sits at chunk c ^ sw(n) of its row,
// sw(n) = bits 7.. of n · kRowBytes (n mod 8 at 128 bytes), so the eight rows an ldmatrix reads
// at one chunk fall on eight different 16-byte bank groups. With page maps (KernelArgs::
// page_maps) one lane of the copying warp copies the page with one TMA instruction a box: a
// 16 KB page in two instructions, written to shared memory whole; without them the warp copies
// 16-byte chunks with cp.async to the same places. (The cp.async copies into the padded rows
// this layout replaced cost ncu 10.5 shared-memory wavefronts an instruction for 4 ideal, a
// fifth of the kernel's shared-memory traffic, H200, 2026-11-30.)

template <typename T, int DMAX>
struct MmaCore {
  using Type = T;
  static constexpr bool kWarpRows = false;  // Lane layout: warps 4 (rows) x 2 (keys)
  static constexpr int kNormSets = 1;       // a thread's keys are the same for i = 0, 1
  static constexpr int kStages = 3;
  static constexpr int kMinBlocks = DMAX <= 128 ? 2 : 1;
  static constexpr int kLd = DMAX + 8;  // query tile: elements per row (conflict-free)
  static constexpr int kBoxCols = DMAX < 64 ? DMAX : 64;
  static constexpr int kRowBytes = kBoxCols * static_cast<int>(sizeof(T));  // 128, or 64
  static constexpr int kRowChunks = kRowBytes / 16;
  static constexpr int kBoxes = DMAX / kBoxCols;
  static constexpr int kBoxBytes = kKeys * kRowBytes;
  static constexpr int kStageBytes = kBoxes * kBoxBytes;
  static constexpr int kSteps = DMAX / 16;
  static constexpr int kAlign = 1024;  // the swizzle's period: stages start at a multiple
  static_assert(kRowBytes == 64 || kRowBytes == 128, "64- or 128-byte swizzle");
  static size_t SmemBytes() {
    return kEntriesBytes + static_cast<size_t>(kRows) * kLd * sizeof(T) + kAlign +
           kStages * (static_cast<size_t>(kStageBytes) + kKeys * sizeof(float) +
                      2 * sizeof(uint64_t));
  }

  PageEntry (*entries)[kLookup];  // [2]: pages looked up ahead (PipelineSweep)
  T* qs;
  unsigned char* keys;  // kStages stages of kStageBytes, kAlign-aligned
  float* norms;
  uint64_t* full;   // [kStages]: the stage's page has landed
  uint64_t* empty;  // [kStages]: every warp has read the stage (its fragments and norms)

  // The swizzle of key row n: its chunk c sits at chunk c ^ Swizzle(n) of the row.
  static __device__ __forceinline__ int Swizzle(int n) {
    return ((n * kRowBytes) >> 7) & (kRowChunks - 1);
  }
  // Byte offset in a stage of the 16-byte chunk c (dims 8c .. 8c + 7) of key n.
  static __device__ __forceinline__ int Offset(int n, int c) {
    return (c / kRowChunks) * kBoxBytes + n * kRowBytes + (((c % kRowChunks) ^ Swizzle(n)) << 4);
  }

  __device__ void Init(const KernelArgs& a, unsigned char* smem, int tile, const Lane&) {
    entries = reinterpret_cast<PageEntry(*)[kLookup]>(smem);
    qs = reinterpret_cast<T*>(smem + kEntriesBytes);
    unsigned char* after_qs = reinterpret_cast<unsigned char*>(qs + kRows * kLd);
    keys = after_qs + ((kAlign - (SmemAddr(after_qs) & (kAlign - 1))) & (kAlign - 1));
    norms = reinterpret_cast<float*>(keys + kStages * kStageBytes);
    full = reinterpret_cast<uint64_t*>(norms + kStages * kKeys);
    empty = full + kStages;
    // Chunks [dim / 8, DMAX / 8) of every key of every stage are zero: cp.async never writes
    // them, nor does TMA where a box lies wholly past dim (IssueWarp skips it); the boxes it
    // copies it fills with zeros past dim itself.
    const int vecs = a.dim / 8;
    const int pad = DMAX / 8 - vecs;
    if (pad > 0) {
      for (int t = threadIdx.x; t < kStages * kKeys * pad; t += blockDim.x) {
        const int n = (t / pad) % kKeys, c = vecs + t % pad;
        *reinterpret_cast<uint4*>(keys + (t / pad / kKeys) * kStageBytes + Offset(n, c)) =
            make_uint4(0, 0, 0, 0);
      }
      // TMA writes zeros over some of these too: the two proxies' writes in order.
      if (a.page_maps != nullptr) FenceProxyAsync();
    }
    // The query tile, zero past num_rows and dim, 16 bytes at a time.
    const T* q = static_cast<const T*>(a.queries);
    constexpr int kVecs = DMAX / 8;
    for (int t = threadIdx.x; t < kRows * kVecs; t += blockDim.x) {
      const int r = t / kVecs, v = t % kVecs;
      const int64_t row = static_cast<int64_t>(tile) * kRows + r;
      uint4 x = make_uint4(0, 0, 0, 0);
      if (row < a.num_rows && v < vecs) {
        x = *reinterpret_cast<const uint4*>(q + row * a.dim + v * 8);
      }
      *reinterpret_cast<uint4*>(qs + r * kLd + v * 8) = x;
    }
  }

  // Arrivals a phase of a full barrier: the copying warp's lane 0 (TMA) or its 32 lanes.
  __device__ int FullArrivals(const KernelArgs& a) const { return a.page_maps != nullptr ? 1 : 32; }

  // Copies a page into a stage, by one warp (PipelineSweep), and arrives on the stage's full
  // barrier. The page's rows are one contiguous block of 64 x dim elements.
  __device__ void IssueWarp(const KernelArgs& a, PageSrc<T> from, int stage, int lane,
                            uint64_t* full_bar) {
    unsigned char* dst = keys + stage * kStageBytes;
    float* norms_dst = norms + stage * kKeys;
    const float* norms_src = a.key_norms + static_cast<int64_t>(from.page) * kKeys;
    if (a.page_maps != nullptr) {
      // The page is rows [64 (page mod slab pages), +64) of its slab's tensor map; boxes wholly
      // past dim stay as Init zeroed them.
      if (lane == 0) {
        const uint32_t page = static_cast<uint32_t>(from.page);
        const unsigned char* map =
            a.page_maps + static_cast<size_t>(page >> a.slab_pages_log2) * kPageMapBytes;
        const int y = static_cast<int>(page & ((1u << a.slab_pages_log2) - 1u)) * kKeys;
        const int boxes = min(kBoxes, (a.dim + kBoxCols - 1) / kBoxCols);
        MbarArriveExpectTx(full_bar, boxes * kBoxBytes + kKeys * sizeof(float));
#pragma unroll
        for (int b = 0; b < kBoxes; ++b) {
          if (b < boxes) TmaLoad2d(dst + b * kBoxBytes, map, b * kBoxCols, y, full_bar);
        }
        BulkLoad(norms_dst, norms_src, kKeys * sizeof(float), full_bar);
      }
      return;
    }
    // 16-byte chunk i of the page is chunk i mod (dim / 8) of key i / (dim / 8). An instruction
    // of the warp copies the 512 contiguous bytes of kKpi whole keys.
    if (a.dim == DMAX) {
      // Lane l writes the same place of every instruction's keys (key h = l / kVecs of them,
      // position l mod kVecs of its row) and reads the chunk the swizzle puts there. That chunk
      // depends on the key's swizzle, which repeats every 8 keys: kPeriod source addresses, and
      // every other offset fixed (the compiler folds them into the instructions).
      constexpr int kVecs = DMAX / 8;
      static_assert(kVecs <= 32 && 32 % kVecs == 0, "a warp's 32 chunks are whole rows");
      constexpr int kKpi = 32 / kVecs;                   // keys an instruction
      constexpr int kPeriod = kKpi >= 8 ? 1 : 8 / kKpi;  // instructions a swizzle period
      const int h = lane / kVecs, box = lane % kVecs / kRowChunks, slot = lane % kRowChunks;
      unsigned char* d = dst + box * kBoxBytes + h * kRowBytes + slot * 16;
      const T* src[kPeriod];
#pragma unroll
      for (int j = 0; j < kPeriod; ++j) {
        const int n = j * kKpi + h;
        src[j] = from.rows + n * DMAX + (box * kRowChunks + (slot ^ Swizzle(n))) * 8;
      }
#pragma unroll
      for (int u = 0; u < kKeys / kKpi; ++u) {
        CpAsync16(d + u * kKpi * kRowBytes,
                  src[u % kPeriod] + (u / kPeriod) * kPeriod * kKpi * DMAX);
      }
    } else {
      ForLaneChunks(a.dim / 8, lane, [&](int i, int n, int c) {
        CpAsync16(dst + Offset(n, c), from.rows + static_cast<int64_t>(i) * 8);
      });
    }
    if (lane < kKeys / 4) CpAsync16(norms_dst + lane * 4, norms_src + lane * 4);
    MbarArriveOnCopies(full_bar);
  }

  // Calls f(p, v, xn) for every page p in [p0, p1): v holds the page's dot products
  // (PipelineSweep).
  template <typename F>
  __device__ void Sweep(const KernelArgs& a, const int32_t* table, int p0, int p1, const Lane& L,
                        F&& f) {
    const T* aptr = qs + (L.row0 + (L.lane & 15)) * kLd + (L.lane >> 4) * 8;
    // B: this lane's row address of its 8 x 8 matrix in each ldmatrix: key row key_row (and
    // key_row + 16), chunk 2 s + x at step s. key_row's swizzle does not change with the + 16,
    // and the chunk's bits are zero in the row's offset, so a step's address is the row's with
    // its chunk bits XORed: (2 s + x) ^ sw = 2 (s mod kRowChunks / 2) ^ (x ^ sw) within a box.
    const int key_row = L.col0 + ((L.lane >> 4) & 1) * 8 + (L.lane & 7);
    const int x = (L.lane >> 3) & 1;
    const uint32_t b_lane = SmemAddr(keys) + key_row * kRowBytes + ((x ^ Swizzle(key_row)) << 4);
    constexpr int kHalf = kRowChunks / 2;  // steps a box
    PipelineSweep(*this, a, table, p0, p1, [&](int p, int stage) {
      const uint32_t b_stage = b_lane + stage * kStageBytes;
      float v[2][4][4];
      ZeroTile(v);
      // Fragments of step s + 1 are loaded before the products of step s (two buffers), so
      // the shared-memory latency hides behind the tensor cores.
      uint32_t af[2][2][4], bf[2][2][4];
      auto load = [&](int s, int b) {
        LdMatrixX4(af[b][0], aptr + s * 16);
        LdMatrixX4(af[b][1], aptr + 16 * kLd + s * 16);
        const uint32_t bs = (b_stage + (s / kHalf) * kBoxBytes) ^ ((2 * (s % kHalf)) << 4);
        LdMatrixX4At(bf[b][0], bs);
        LdMatrixX4At(bf[b][1], bs + 16 * kRowBytes);
      };
      // Every step, also those past dim: the query tile and the stages are zero there, so they
      // add nothing, and without a branch a step the products need no zeroed accumulators.
      load(0, 0);
#pragma unroll
      for (int s = 0; s < kSteps; ++s) {
        if (s + 1 < kSteps) load(s + 1, (s + 1) & 1);
        const int b = s & 1;
#pragma unroll
        for (int jj = 0; jj < 2; ++jj) {
#pragma unroll
          for (int i = 0; i < 2; ++i) {
            Mma<T>(v[i][2 * jj], af[b][i], bf[b][jj][0], bf[b][jj][1]);
            Mma<T>(v[i][2 * jj + 1], af[b][i], bf[b][jj][2], bf[b][jj][3]);
          }
        }
      }
      float xn[kNormSets][4][2];
      LoadNorms(norms + stage * kKeys, L, xn);
      ReleaseStage(empty, stage, L.lane);
      f(p, v, xn);
    });
  }
};

// ---------------------------------------------------------------------------------------------
// The warpgroup-MMA core (sm_90a): float16 / bfloat16 keys, dim % 8 == 0, dim <= DMAX <= 128.
// MmaCore's pages and barriers, but its products from wgmma: warpgroup w (warps 4w .. 4w + 3)
// multiplies query rows 64w .. 64w + 63 by the whole page with one m64n64k16 a k-step, A from
// registers (each warp's 16 rows, loaded from global memory once a sweep: DMAX/4 registers), B
// (the page) read by the tensor cores from shared memory. A page then costs the CTA 32 KB of
// shared-memory reads, against MmaCore's 128 KB of ldmatrix traffic, which ncu found 73 % busy
// (the tensor pipe 41 %) at 1.27 ms for 10M keys (H200, 2026-11-30). With no query tile in
// shared memory, the space holds more stages: kStages - 1 pages in flight a CTA (MmaCore: 2).
// Scores come in Lane's warp-rows layout: accumulator 16i + 4j + 2h + c is row 16 warp + 8h + g,
// key 32i + 8j + 2q + c, which is v[i][j][2h + c].
//
// The stages hold each page K-major as 8 × 16-byte core matrices without swizzle: the 16-byte
// chunk c (dims 8c .. 8c + 7) of key n sits at ((n / 8) · DMAX/8 + c) · 128 + (n % 8) · 16, so
// core matrices adjacent in K are 128 bytes apart (LBO) and 8-key blocks DMAX · 2 bytes (SBO).
// A full page is copied by one warp with chunk i going to byte 16 i (IssueWarp); an
// instruction writes 512 contiguous bytes.
template <typename T, int DMAX>
struct WgmmaCore {
  using Type = T;
  static constexpr bool kWarpRows = true;
  static constexpr int kNormSets = 2;  // a thread's keys differ with i
  static constexpr int kStages = DMAX == 128 ? 5 : 8;  // two CTAs an SM (about 110 KB each)
  static constexpr int kMinBlocks = 2;
  static constexpr int kChunks = DMAX / 8;
  static constexpr int kBlockBytes = kChunks * 128;
  static constexpr int kStageBytes = kKeys * DMAX * static_cast<int>(sizeof(T));
  static constexpr int kSteps = DMAX / 16;
  static_assert(DMAX == 64 || DMAX == 128, "64 or 128 dims");
  static size_t SmemBytes() {
    return kEntriesBytes + kStages * (static_cast<size_t>(kStageBytes) + kKeys * sizeof(float) +
                                      2 * sizeof(uint64_t));
  }

  PageEntry (*entries)[kLookup];  // [2]: pages looked up ahead (PipelineSweep)
  const T* queries;  // the tile's first row
  int num_rows;      // of the tile
  unsigned char* keys;
  float* norms;
  uint64_t* full;
  uint64_t* empty;

  // Byte offset of chunk c of key n in a stage.
  static __device__ __forceinline__ int Offset(int n, int c) {
    return ((n >> 3) * kChunks + c) * 128 + (n & 7) * 16;
  }

  __device__ void Init(const KernelArgs& a, unsigned char* smem, int tile, const Lane&) {
    queries = static_cast<const T*>(a.queries) + static_cast<int64_t>(tile) * kRows * a.dim;
    num_rows = min(static_cast<int64_t>(kRows),
                   static_cast<int64_t>(a.num_rows) - static_cast<int64_t>(tile) * kRows);
    entries = reinterpret_cast<PageEntry(*)[kLookup]>(smem);
    keys = smem + kEntriesBytes;
    norms = reinterpret_cast<float*>(keys + kStages * kStageBytes);
    full = reinterpret_cast<uint64_t*>(norms + kStages * kKeys);
    empty = full + kStages;
    const int vecs = a.dim / 8;
    // Chunks [dim / 8, DMAX / 8) of every stage are zero (cp.async never writes them).
    if (vecs < kChunks) {
      const int pad = kChunks - vecs;
      for (int t = threadIdx.x; t < kStages * kKeys * pad; t += blockDim.x) {
        const int n = (t / pad) % kKeys, c = vecs + t % pad;
        *reinterpret_cast<uint4*>(keys + (t / pad / kKeys) * kStageBytes + Offset(n, c)) =
            make_uint4(0, 0, 0, 0);
      }
    }
  }

  __device__ int FullArrivals(const KernelArgs&) const { return 32; }

  // Copies a page into a stage, by one warp (PipelineSweep), and arrives on its full barrier.
  __device__ void IssueWarp(const KernelArgs& a, PageSrc<T> from, int stage, int lane,
                            uint64_t* full_bar) {
    unsigned char* dst = keys + stage * kStageBytes;
    if (a.dim == DMAX) {
      // Chunk i = lane + 32 u goes to byte 16 i: key 8 (i / (8 kChunks)) + i mod 8, chunk
      // (i / 8) mod kChunks. With lane < 32 and 8 kChunks a multiple of 32 that is key
      // 8 (u / (kChunks / 4)) + lane mod 8, chunk lane / 8 + 4 (u mod (kChunks / 4)): every
      // offset but the page's and the lane's is fixed.
      constexpr int kPer = kChunks / 4;
      const T* src = from.rows + (lane & 7) * DMAX + (lane >> 3) * 8;
      unsigned char* d = dst + 16 * lane;
#pragma unroll
      for (int u = 0; u < kKeys * kChunks / 32; ++u) {
        CpAsync16(d + 512 * u, src + (u / kPer) * 8 * DMAX + 4 * (u % kPer) * 8);
      }
    } else {
      ForLaneChunks(a.dim / 8, lane, [&](int i, int n, int c) {
        CpAsync16(dst + Offset(n, c), from.rows + static_cast<int64_t>(i) * 8);
      });
    }
    if (lane < kKeys / 4) {
      CpAsync16(norms + stage * kKeys + lane * 4,
                a.key_norms + static_cast<int64_t>(from.page) * kKeys + lane * 4);
    }
    MbarArriveOnCopies(full_bar);
  }

  // Calls f(p, v, xn) for every page p in [p0, p1) (PipelineSweep); a warp's wgmma have read the
  // stage once they are waited for, so it releases the stage then.
  template <typename F>
  __device__ void Sweep(const KernelArgs& a, const int32_t* table, int p0, int p1, const Lane& L,
                        F&& f) {
    if (p0 >= p1) return;
    // This warp's A fragments of every step, an m16k16 mma.sync A fragment each: register e
    // holds row 16 warp + g + 8 (e & 1), dims 16 s + 2q + 8 (e >> 1) and the next (zero past
    // the tile's rows and dim; dim % 8 == 0, so a pair is wholly inside or outside).
    uint32_t aq[kSteps][4];
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int r = L.warp * 16 + L.g + 8 * (e & 1);
        const int d = 16 * s + 2 * L.q + 8 * (e >> 1);
        aq[s][e] = r < num_rows && d < a.dim
                       ? __ldg(reinterpret_cast<const uint32_t*>(queries +
                                                                 static_cast<int64_t>(r) * a.dim + d))
                       : 0u;
      }
    }
    const uint32_t k_addr = SmemAddr(keys);
    PipelineSweep(*this, a, table, p0, p1, [&](int p, int stage) {
      FenceProxyAsync();
      const uint64_t db = WgmmaDesc(k_addr + stage * kStageBytes, 128, kBlockBytes);
      float v[2][4][4];
      float(&d)[32] = reinterpret_cast<float(&)[32]>(v);
      FenceAccumulators(d);
      WgmmaFence();
      // Every step, also those past dim (zero A and B chunks): a branch between two wgmma
      // makes the compiler fence each of them. 16 dims are two core matrices in K, 256 bytes,
      // 16 in the descriptor's address field.
#pragma unroll
      for (int s = 0; s < kSteps; ++s) WgmmaM64N64K16<T>(d, aq[s], db + 16 * s, s);
      WgmmaCommitAndWait();
      FenceAccumulators(d);
      float xn[kNormSets][4][2];
      LoadNorms(norms + stage * kKeys, L, xn);
      ReleaseStage(empty, stage, L.lane);
      f(p, v, xn);
    });
  }
};

// ---------------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------------
// The kernel.

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

// ---------------------------------------------------------------------------------------------
// Final top-k from the slots: one CTA per row. Items are ranked by a 64-bit key, the ordered
// stored score above the complement of the key index (unique within a row), radix-selected
// (8 bits a pass, stopping as soon as the prefix holds exactly the remaining count), then
// bitonic-sorted best first.

// The filled slots [lo, hi) of a row: from `ranges`, else from its counters (rows that fit).
__device__ __forceinline__ void SlotRange(const int32_t* ranges, const int32_t* counters,
                                          uint32_t num_rows, int64_t row, int top_k, int capacity,
                                          int* lo, int* hi) {
  if (ranges != nullptr) {
    *lo = ranges[row];
    *hi = ranges[num_rows + row];
  } else {
    *lo = top_k - min(counters[2 * row + 1], top_k);
    *hi = top_k + min(counters[2 * row], capacity);
  }
}

constexpr int kTopKMax = 4096;

__global__ void __launch_bounds__(kThreads)
    TopKKernel(const int2* __restrict__ slots, const int32_t* __restrict__ counters,
               const int32_t* __restrict__ ranges, const float* __restrict__ thresholds,
               uint32_t num_rows, int top_k, int capacity, int k, int32_t* __restrict__ out_keys,
               float* __restrict__ out_scores) {
  __shared__ uint32_t hist[256];
  __shared__ unsigned long long buf[kTopKMax];
  __shared__ int s_count;
  __shared__ unsigned long long s_prefix;
  __shared__ int s_shift;
  __shared__ int s_remaining;
  __shared__ int s_done;
  const int64_t row = blockIdx.x;
  int lo, hi;
  SlotRange(ranges, counters, num_rows, row, top_k, capacity, &lo, &hi);
  const int n = max(hi - lo, 0);
  const int2* items = slots + row * static_cast<int64_t>(top_k + capacity) + lo;
  auto key_of = [&](int i) -> unsigned long long {
    const int2 it = items[i];
    const uint32_t u = OrderedKey(__int_as_float(it.y));
    return (static_cast<unsigned long long>(u) << 32) | static_cast<uint32_t>(~it.x);
  };
  const int take = min(n, k);
  if (threadIdx.x == 0) {
    s_count = 0;
    s_prefix = 0;
    s_shift = 64;
    s_remaining = take;
    s_done = n <= k;
  }
  __syncthreads();
  // Radix select: after it, the chosen items are those whose top (64 - s_shift) bits are above
  // s_prefix, plus all of those equal to it.
  for (int pass = 0; pass < 8 && !s_done; ++pass) {
    for (int t = threadIdx.x; t < 256; t += blockDim.x) hist[t] = 0;
    __syncthreads();
    const int shift = s_shift - 8;
    const unsigned long long prefix = s_prefix;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
      const unsigned long long key = key_of(i);
      if (pass == 0 || (key >> (shift + 8)) == prefix) atomicAdd(&hist[(key >> shift) & 255u], 1u);
    }
    __syncthreads();
    if (threadIdx.x < 32) {
      const int want = s_remaining;
      int digit = 0, cum = 0;
      detail::HighDigit(hist, want, &digit, &cum);
      if (threadIdx.x == 0) {
        s_remaining = want - cum;
        s_prefix = (prefix << 8) | static_cast<unsigned long long>(digit);
        s_shift = shift;
        if (static_cast<int>(hist[digit]) == s_remaining || shift == 0) s_done = 1;
      }
    }
    __syncthreads();
  }
  const int P = take <= 1 ? 1 : 1 << (32 - __clz(take - 1));
  for (int t = threadIdx.x; t < P; t += blockDim.x) buf[t] = 0ull;
  __syncthreads();
  {
    const int shift = s_shift;
    const unsigned long long prefix = s_prefix;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
      const unsigned long long key = key_of(i);
      if (n <= k || shift >= 64 || (key >> shift) >= prefix) {
        const int pos = atomicAdd(&s_count, 1);
        if (pos < take) buf[pos] = key;
      }
    }
  }
  __syncthreads();
  // Bitonic sort, descending.
  for (int size = 2; size <= P; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int t = threadIdx.x; t < P; t += blockDim.x) {
        const int o = t ^ stride;
        if (o > t) {
          const bool desc = (t & size) == 0;
          const unsigned long long x = buf[t], y = buf[o];
          if (desc ? (x < y) : (x > y)) {
            buf[t] = y;
            buf[o] = x;
          }
        }
      }
      __syncthreads();
    }
  }
  const float thr = thresholds[row];
  for (int i = threadIdx.x; i < k; i += blockDim.x) {
    int32_t key = -1;
    float score = -INFINITY;
    if (i < take) {
      const unsigned long long x = buf[i];
      key = static_cast<int32_t>(~static_cast<uint32_t>(x & 0xffffffffu));
      const uint32_t u = static_cast<uint32_t>(x >> 32);
      score = u == 0u ? __int_as_float(0x7fc00000) : Decode(FromOrderedKey(u), thr);
    }
    out_keys[row * k + i] = key;
    out_scores[row * k + i] = score;
  }
}

__global__ void ThresholdsKernel(const float* __restrict__ scores, uint32_t num_rows, int k,
                                 const float* __restrict__ margin, float* __restrict__ thresholds,
                                 int32_t* __restrict__ counters) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= num_rows) return;
  float s = scores[r * k + k - 1];
  if (isnan(s)) s = -INFINITY;
  if (margin != nullptr && s != -INFINITY) s = __fsub_rn(s, margin[r]);
  thresholds[r] = s;
  counters[2 * r] = 0;
  counters[2 * r + 1] = 0;
}

// One CTA per row: keys whose decoded score is at least the row's floor.
__global__ void __launch_bounds__(kThreads)
    BandKernel(const int2* __restrict__ slots, const int32_t* __restrict__ counters,
               const int32_t* __restrict__ ranges, const float* __restrict__ thresholds,
               uint32_t num_rows, int top_k, int capacity, const float* __restrict__ kth_scores,
               int k, const float* __restrict__ margin, uint32_t out_cap,
               uint32_t* __restrict__ out_ids, uint32_t* __restrict__ out_counts) {
  __shared__ uint32_t s_count;
  const int64_t row = blockIdx.x;
  int lo, hi;
  SlotRange(ranges, counters, num_rows, row, top_k, capacity, &lo, &hi);
  float floor_score = kth_scores[row * k + k - 1];
  if (isnan(floor_score) || floor_score == -INFINITY) {
    floor_score = -INFINITY;
  } else if (margin != nullptr) {
    floor_score = __fsub_rn(floor_score, margin[row]);
  }
  const float thr = thresholds[row];
  if (threadIdx.x == 0) s_count = 0;
  __syncthreads();
  const int2* items = slots + row * static_cast<int64_t>(top_k + capacity);
  for (int i = lo + static_cast<int>(threadIdx.x); i < hi; i += blockDim.x) {
    const int2 it = items[i];
    const float s = Decode(__int_as_float(it.y), thr);
    if (floor_score == -INFINITY || s >= floor_score) {
      const uint32_t pos = atomicAdd(&s_count, 1u);
      if (pos < out_cap) out_ids[row * out_cap + pos] = static_cast<uint32_t>(it.x);
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) out_counts[row] = s_count;
}

// ---------------------------------------------------------------------------------------------
// Host side.

struct LaunchInfo {
  size_t smem = 0;
  int blocks_per_sm = 0;
  int sms = 0;
};

template <typename Core>
Status Prepare(LaunchInfo* info) {
  static std::mutex mu;
  static LaunchInfo cache[64];
  static bool ready[64] = {};
  int dev = 0;
  if (Status st = FromCuda(cudaGetDevice(&dev), "cudaGetDevice"); !st.ok()) return st;
  if (dev < 0 || dev >= 64) return Status::Internal("CUDA device index out of range");
  std::lock_guard<std::mutex> lock(mu);
  if (!ready[dev]) {
    LaunchInfo li;
    li.smem = kRowStateBytes + Core::SmemBytes();
    auto kernel = SelectKernel<Core>;
    if (Status st =
            FromCuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(li.smem)),
                     "threshold select: shared memory attribute");
        !st.ok()) {
      return st;
    }
    if (Status st = FromCuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                                 &li.blocks_per_sm, kernel, kThreads, li.smem),
                             "threshold select: occupancy");
        !st.ok()) {
      return st;
    }
    if (Status st = FromCuda(cudaDeviceGetAttribute(&li.sms, cudaDevAttrMultiProcessorCount, dev),
                             "threshold select: SM count");
        !st.ok()) {
      return st;
    }
    if (li.blocks_per_sm < 1) return Status::Internal("threshold select kernel cannot launch");
    cache[dev] = li;
    ready[dev] = true;
  }
  *info = cache[dev];
  return Status::OK();
}

template <typename Core>
Status Launch(KernelArgs k, uint32_t tiles, cudaStream_t stream) {
  LaunchInfo li;
  if (Status st = Prepare<Core>(&li); !st.ok()) return st;
  const int64_t pages = (static_cast<int64_t>(k.max_context) + kKeys - 1) / kKeys;
  const int64_t target = std::max<int64_t>(1, int64_t{li.sms} * li.blocks_per_sm / tiles);
  const int64_t per_cta = std::max<int64_t>(1, (pages + target - 1) / target);
  const int64_t ctas = std::max<int64_t>(1, (pages + per_cta - 1) / per_cta);
  k.pages_per_cta = static_cast<int32_t>(per_cta);
  dim3 grid(static_cast<unsigned>(ctas), tiles);
  SelectKernel<Core><<<grid, kThreads, li.smem, stream>>>(k);
  return FromCuda(cudaGetLastError(), "launch threshold select");
}

// The kernel ThresholdSelect launches for some keys (ChooseKernel).
enum class Kernel { kSimt, kMma, kMmaTma, kWgmma };

// The tensor-core kernels' keys: float16 or bfloat16, dim % 8 == 0, dim <= 256.
bool UsesMma(KeyType type, uint32_t dim) {
  return type != KeyType::kFloat32 && dim % 8 == 0 && dim <= 256;
}

// The current device's compute capability as 10 major + minor; 0 where it cannot be read (no
// sticky error is left behind for the caller's next check).
int ComputeCapability() {
  int dev = 0, major = 0, minor = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return 10 * major + minor;
}

// Whether an environment switch is set to `value` (read at every launch: tests and benchmarks
// compare kernels in one process).
bool EnvIs(const char* name, const char* value) {
  const char* env = std::getenv(name);
  return env != nullptr && std::strcmp(env, value) == 0;
}

// Which kernel takes these keys now. The tensor-core keys go to WgmmaCore at 33..128 dims when
// SIEVE_GPU_WGMMA is 1, this file carries sm_90a code (SIEVE_TS_SM90A, see gpu/CMakeLists.txt)
// and the device is compute capability 9.0; else to MmaCore, which copies pages with the keys'
// page maps where they are given, this file carries sm_90 code, the device is compute
// capability 9.x and SIEVE_GPU_TMA is not 0.
Kernel ChooseKernel(const PagedKeys& keys) {
  if (!UsesMma(keys.type, keys.dim)) return Kernel::kSimt;
#ifdef SIEVE_TS_SM90A
  const bool wgmma = keys.dim > 32 && keys.dim <= 128 && EnvIs("SIEVE_GPU_WGMMA", "1");
  const bool tma = keys.page_maps != nullptr && !EnvIs("SIEVE_GPU_TMA", "0");
  if (wgmma || tma) {
    const int cc = ComputeCapability();
    if (wgmma && cc == 90) return Kernel::kWgmma;
    if (tma && cc / 10 == 9) return Kernel::kMmaTma;
  }
#endif
  return Kernel::kMma;
}

template <typename T>
Status LaunchMma(const KernelArgs& k, Kernel kernel, uint32_t tiles, cudaStream_t stream) {
#ifdef SIEVE_TS_SM90A
  if (kernel == Kernel::kWgmma) {
    if (k.dim <= 64) return Launch<WgmmaCore<T, 64>>(k, tiles, stream);
    return Launch<WgmmaCore<T, 128>>(k, tiles, stream);
  }
#else
  (void)kernel;
#endif
  if (k.dim <= 32) return Launch<MmaCore<T, 32>>(k, tiles, stream);
  if (k.dim <= 64) return Launch<MmaCore<T, 64>>(k, tiles, stream);
  if (k.dim <= 128) return Launch<MmaCore<T, 128>>(k, tiles, stream);
  return Launch<MmaCore<T, 256>>(k, tiles, stream);
}

}  // namespace

const char* ThresholdSelectKernelName(const PagedKeys& keys) {
  switch (ChooseKernel(keys)) {
    case Kernel::kSimt:
      return "simt";
    case Kernel::kWgmma:
      return "wgmma";
    case Kernel::kMmaTma:
      return "mma-tma";
    default:
      return "mma";
  }
}

bool PageMapsApply(KeyType type, uint32_t dim) { return UsesMma(type, dim); }

Status EncodePageMap(KeyType type, uint32_t dim, const void* slab, uint64_t rows, void* out) {
  if (!PageMapsApply(type, dim)) {
    return Status::InvalidArgument("page map: keys of type " +
                                   std::to_string(static_cast<int>(type)) + " and dim " +
                                   std::to_string(dim) + " do not use the tensor-core kernel");
  }
  if (slab == nullptr || out == nullptr || rows == 0 || rows > (uint64_t{1} << 32)) {
    return Status::InvalidArgument("page map: no slab, no output, or a slab of " +
                                   std::to_string(rows) + " rows");
  }
  if (reinterpret_cast<uintptr_t>(slab) % 16 != 0 || reinterpret_cast<uintptr_t>(out) % 64 != 0) {
    return Status::InvalidArgument("page map: slab must be 16-byte and out 64-byte aligned");
  }
  static_assert(sizeof(CUtensorMap) == kPageMapBytes, "kPageMapBytes is a CUtensorMap");
  static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      fn = nullptr;
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  if (encode == nullptr) {
    return Status::Internal("page map: the driver has no cuTensorMapEncodeTiled");
  }
  // MmaCore's boxes: 64 keys by 64 dims with a 128-byte swizzle, or by 32 dims with a 64-byte
  // one where its DMAX is 32 (dim <= 32).
  const bool narrow = dim <= 32;
  const cuuint64_t global_dim[2] = {dim, rows};
  const cuuint64_t global_stride[1] = {uint64_t{dim} * KeyTypeBytes(type)};
  const cuuint32_t box[2] = {narrow ? 32u : 64u, kPageRows};
  const cuuint32_t element_stride[2] = {1, 1};
  const CUtensorMapDataType data_type = type == KeyType::kFloat16
                                            ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                            : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  const CUresult r =
      encode(static_cast<CUtensorMap*>(out), data_type, 2, const_cast<void*>(slab), global_dim,
             global_stride, box, element_stride, CU_TENSOR_MAP_INTERLEAVE_NONE,
             narrow ? CU_TENSOR_MAP_SWIZZLE_64B : CU_TENSOR_MAP_SWIZZLE_128B,
             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    return Status::Internal("page map: cuTensorMapEncodeTiled failed with CUresult " +
                            std::to_string(static_cast<int>(r)));
  }
  return Status::OK();
}

bool ThresholdSelectHasWgmma() {
#ifdef SIEVE_TS_SM90A
  return true;
#else
  return false;
#endif
}

Status ThresholdSelect(const ThresholdSelectArgs& x, void* stream) {
  const auto bad = [](const std::string& what) {
    return Status::InvalidArgument("threshold select: " + what);
  };
  if (x.num_rows == 0) return Status::OK();
  if (x.keys.dim == 0) return bad("keys.dim is 0");
  if (x.keys.slabs == nullptr || x.keys.sq_norms == nullptr) return bad("keys have no pages");
  if (x.keys.slab_pages_log2 > 24) return bad("keys.slab_pages_log2 above 24");
  if (x.queries == nullptr) return bad("queries is null");
  if (x.row_ends == nullptr || x.tile_requests == nullptr || x.block_table == nullptr) {
    return bad("row_ends, tile_requests and block_table are required");
  }
  if (x.thresholds == nullptr || x.counters == nullptr || x.candidates == nullptr) {
    return bad("thresholds, counters and candidates are required");
  }
  if (x.top_k == 0) return bad("top_k is 0");
  if (x.top_k > static_cast<uint32_t>(std::numeric_limits<int32_t>::max()) ||
      x.capacity > static_cast<uint32_t>(std::numeric_limits<int32_t>::max()) - x.top_k) {
    return bad("top_k + capacity exceeds int32");
  }
  if (x.max_context > static_cast<uint32_t>(std::numeric_limits<int32_t>::max())) {
    return bad("max_context exceeds int32");
  }
  if (uint64_t{x.max_context} > uint64_t{x.blocks_per_request} * kPageRows) {
    return bad("max_context " + std::to_string(x.max_context) + " exceeds the block table's " +
               std::to_string(uint64_t{x.blocks_per_request} * kPageRows) + " keys");
  }
  if ((x.arrivals == nullptr) != (x.ranges == nullptr)) {
    return bad("arrivals and ranges go together (repair needs both)");
  }
  if (x.arrivals != nullptr && x.capacity + 1 < x.top_k) {
    return bad("repair needs capacity >= top_k - 1");
  }
  const uint32_t tiles = (x.num_rows + kRows - 1) / kRows;
  if (tiles > 65535) return bad("more than 65535 query tiles");
  const int metric = static_cast<int>(x.metric);
  if (metric < 0 || metric > 2) return bad("unknown metric");

  const Kernel kernel = ChooseKernel(x.keys);
  if (kernel != Kernel::kSimt && reinterpret_cast<uintptr_t>(x.queries) % 16 != 0) {
    return bad("queries must be 16-byte aligned for the tensor-core kernel");
  }
  if (kernel == Kernel::kMmaTma && reinterpret_cast<uintptr_t>(x.keys.page_maps) % 64 != 0) {
    return bad("keys.page_maps must be 64-byte aligned");
  }

  KernelArgs k{};
  k.slabs = x.keys.slabs;
  k.slab_pages_log2 = x.keys.slab_pages_log2;
  k.key_norms = x.keys.sq_norms;
  k.dim = static_cast<int>(x.keys.dim);
  k.metric = metric;
  k.queries = x.queries;
  k.num_rows = x.num_rows;
  k.query_scales = x.query_scales;
  k.query_sq_norms = x.query_sq_norms;
  k.row_ends = x.row_ends;
  k.tile_requests = x.tile_requests;
  k.block_table = x.block_table;
  k.blocks_per_request = x.blocks_per_request;
  k.max_context = static_cast<int32_t>(x.max_context);
  k.filter = x.filter;
  k.filter_stride = x.filter_stride;
  k.thresholds = x.thresholds;
  k.counters = x.counters;
  k.candidates = x.candidates;
  k.top_k = static_cast<int32_t>(x.top_k);
  k.capacity = static_cast<int32_t>(x.capacity);
  k.arrivals = x.arrivals;
  k.ranges = x.ranges;
  k.page_maps =
      kernel == Kernel::kMmaTma ? static_cast<const unsigned char*>(x.keys.page_maps) : nullptr;
  auto s = static_cast<cudaStream_t>(stream);
  if (kernel != Kernel::kSimt) {
    if (x.keys.type == KeyType::kFloat16) return LaunchMma<__half>(k, kernel, tiles, s);
    return LaunchMma<__nv_bfloat16>(k, kernel, tiles, s);
  }
  switch (x.keys.type) {
    case KeyType::kFloat16:
      return Launch<SimtCore<__half>>(k, tiles, s);
    case KeyType::kBFloat16:
      return Launch<SimtCore<__nv_bfloat16>>(k, tiles, s);
    default:
      return Launch<SimtCore<float>>(k, tiles, s);
  }
}

Status TopKFromCandidates(const int32_t* candidates, const int32_t* counters, const int32_t* ranges,
                          const float* thresholds, uint32_t num_rows, uint32_t top_k,
                          uint32_t capacity, uint32_t k, int32_t* out_keys, float* out_scores,
                          void* stream) {
  if (num_rows == 0) return Status::OK();
  if (candidates == nullptr || thresholds == nullptr || out_keys == nullptr ||
      out_scores == nullptr || (ranges == nullptr && counters == nullptr)) {
    return Status::InvalidArgument("top-k from candidates: a required buffer is null");
  }
  if (k == 0 || k > kTopKMax || uint64_t{k} > uint64_t{top_k} + capacity) {
    return Status::InvalidArgument(
        "top-k from candidates: k must be in [1, min(4096, top_k + "
        "capacity)], got " +
        std::to_string(k));
  }
  TopKKernel<<<num_rows, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      reinterpret_cast<const int2*>(candidates), counters, ranges, thresholds, num_rows,
      static_cast<int>(top_k), static_cast<int>(capacity), static_cast<int>(k), out_keys,
      out_scores);
  return FromCuda(cudaGetLastError(), "launch top-k from candidates");
}

Status ThresholdsFromTopK(const float* out_scores, uint32_t num_rows, uint32_t k,
                          const float* margin, float* thresholds, int32_t* counters, void* stream) {
  if (num_rows == 0) return Status::OK();
  if (out_scores == nullptr || thresholds == nullptr || counters == nullptr || k == 0) {
    return Status::InvalidArgument("thresholds from top-k: bad arguments");
  }
  ThresholdsKernel<<<(num_rows + 255) / 256, 256, 0, static_cast<cudaStream_t>(stream)>>>(
      out_scores, num_rows, static_cast<int>(k), margin, thresholds, counters);
  return FromCuda(cudaGetLastError(), "launch thresholds from top-k");
}

Status CollectBand(const int32_t* candidates, const int32_t* counters, const int32_t* ranges,
                   const float* thresholds, uint32_t num_rows, uint32_t top_k, uint32_t capacity,
                   const float* kth_scores, uint32_t k, const float* margin, uint32_t out_cap,
                   uint32_t* out_ids, uint32_t* out_counts, void* stream) {
  if (num_rows == 0) return Status::OK();
  if (candidates == nullptr || thresholds == nullptr || kth_scores == nullptr || k == 0 ||
      out_counts == nullptr || (out_cap > 0 && out_ids == nullptr) ||
      (ranges == nullptr && counters == nullptr)) {
    return Status::InvalidArgument("collect band: bad arguments");
  }
  BandKernel<<<num_rows, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      reinterpret_cast<const int2*>(candidates), counters, ranges, thresholds, num_rows,
      static_cast<int>(top_k), static_cast<int>(capacity), kth_scores, static_cast<int>(k), margin,
      out_cap, out_ids, out_counts);
  return FromCuda(cudaGetLastError(), "launch collect band");
}

}  // namespace sieve::gpu
