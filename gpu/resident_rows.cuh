// Copyright 2026 The Sieve Authors.
//
// How kernels address a resident shard's rows. A shard's pages are the identity block table
// (row r is slot r % 64 of page r / 64), so row r lies in slab r >> shift at row r & mask of it,
// where a slab holds 64 << slab_pages_log2 rows.

#ifndef SIEVE_GPU_RESIDENT_ROWS_CUH_
#define SIEVE_GPU_RESIDENT_ROWS_CUH_

#include <cstdint>

#include "gpu/page_pool.h"

namespace sieve::gpu::detail {

struct ResidentRows {
  const void* const* slabs = nullptr;  // device slab table (PagedKeys::slabs)
  uint32_t shift = 0;                  // slab_pages_log2 + 6
  uint64_t mask = 0;                   // (64 << slab_pages_log2) - 1
};

inline ResidentRows MakeResidentRows(const PagedKeys& keys) {
  ResidentRows r;
  r.slabs = keys.slabs;
  r.shift = keys.slab_pages_log2 + 6;
  r.mask = (uint64_t{kPageRows} << keys.slab_pages_log2) - 1;
  return r;
}

// Row `row` of `rows`, `row_elems` elements of T per row.
template <typename T>
__device__ __forceinline__ const T* RowAt(const ResidentRows& rows, uint64_t row,
                                          int64_t row_elems) {
  return static_cast<const T*>(rows.slabs[row >> rows.shift]) +
         static_cast<int64_t>(row & rows.mask) * row_elems;
}

}  // namespace sieve::gpu::detail

#endif  // SIEVE_GPU_RESIDENT_ROWS_CUH_
