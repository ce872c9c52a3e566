// Copyright 2026 The Sieve Authors.
//
// What every part of the threshold-select kernel shares: its launch constants, its arguments
// (passed by value), the per-CTA state in shared memory, the element types and where a page's
// rows lie. Device code; included by the kernel's translation units only.

#ifndef SIEVE_GPU_THRESHOLD_SELECT_SELECT_STATE_CUH_
#define SIEVE_GPU_THRESHOLD_SELECT_SELECT_STATE_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>

#include "sieve/types.h"

namespace sieve::gpu::detail::ts {

constexpr int kThreads = 256;
constexpr int kRows = 128;      // query rows per tile
constexpr int kKeys = 64;       // keys per page
constexpr int kGroup = 8;       // rows repaired together
constexpr int kSimtChunk = 32;  // dims per step of the CUDA-core kernel
constexpr int kStageCap = 128;  // emissions a warp stages in shared memory (see Stager)
constexpr int kFlushBatch = 2;  // slot reservations in flight a lane while flushing
constexpr uint32_t kFull = 0xffffffffu;

enum RowMode : uint8_t { kSkip = 0, kEmit = 1, kHist = 2 };
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

}  // namespace sieve::gpu::detail::ts

#endif  // SIEVE_GPU_THRESHOLD_SELECT_SELECT_STATE_CUH_
