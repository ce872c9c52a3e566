// Copyright 2026 The Sieve Authors.
//
// The tensor-core (mma.sync) core of the threshold select.

#ifndef SIEVE_GPU_THRESHOLD_SELECT_MMA_CORE_CUH_
#define SIEVE_GPU_THRESHOLD_SELECT_MMA_CORE_CUH_

#include <cstddef>
#include <cstdint>

#include "gpu/page_pool.h"
#include "gpu/threshold_select/pipeline.cuh"
#include "gpu/threshold_select/ptx.cuh"
#include "gpu/threshold_select/scores.cuh"
#include "gpu/threshold_select/select_state.cuh"

namespace sieve::gpu::detail::ts {

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
// 16-byte chunks with cp.async to the same places.

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

}  // namespace sieve::gpu::detail::ts

#endif  // SIEVE_GPU_THRESHOLD_SELECT_MMA_CORE_CUH_
