// Copyright 2026 The Sieve Authors.
//
// Paged keys on the device: a collection's vectors live in pages of kPageRows (64) rows drawn
// from a PagePool; a block table (int32, one row per request) lists the pages a request sees, in
// key order: key j of a request is slot j % 64 of page table[j / 64]. Pools grow by whole slabs
// of 2^slab_pages_log2 pages that never move, so a collection grows without reallocating or
// copying its vectors. Each page also has the squared L2 norms of its rows (of the values as
// stored), kept in a pool-wide array indexed by page * 64 + slot. Host-only header: no CUDA
// type appears (streams are passed as `void*` holding a cudaStream_t, device buffers as plain
// pointers).

#ifndef SIEVE_GPU_PAGE_POOL_H_
#define SIEVE_GPU_PAGE_POOL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "sieve/status.h"

namespace sieve::gpu {

enum class KeyType : int { kFloat16 = 0, kBFloat16 = 1, kFloat32 = 2 };

inline constexpr uint32_t kPageRows = 64;

// Bytes of one element of `type`.
inline size_t KeyTypeBytes(KeyType type) { return type == KeyType::kFloat32 ? 4 : 2; }

// A device view of a pool's pages (all pointers are device pointers). Valid until the next
// PagePool::Allocate that adds a slab.
struct PagedKeys {
  KeyType type = KeyType::kFloat16;
  uint32_t dim = 0;
  const void* const* slabs = nullptr;  // slab s holds pages [s << log2, (s + 1) << log2)
  uint32_t slab_pages_log2 = 0;
  const float* sq_norms = nullptr;  // page p, slot i: sq_norms[p * 64 + i]
  // Optional: one kPageMapBytes tensor map a slab (EncodePageMap in
  // threshold_select/threshold_select.h), 64-byte aligned. With them the threshold select's
  // tensor-core kernel copies a page with the tensor memory accelerator; without them, or where
  // the device or build has no TMA, with cp.async. Same results either way.
  const void* page_maps = nullptr;
};

// Bytes of one page map (a CUtensorMap), and a page map in host memory with its alignment.
inline constexpr size_t kPageMapBytes = 128;
struct alignas(64) PageMap {
  unsigned char bytes[kPageMapBytes];
};

// A pool of pages on the current CUDA device.
//
// Thread-safety: none; one owner.
class PagePool {
 public:
  // `slab_bytes` is rounded down to a power-of-two number of pages (at least one).
  // InvalidArgument for an unknown type or dim 0. Nothing is allocated until Allocate.
  static Status Create(KeyType type, uint32_t dim, size_t slab_bytes,
                       std::unique_ptr<PagePool>* out);
  ~PagePool();
  PagePool(const PagePool&) = delete;
  PagePool& operator=(const PagePool&) = delete;

  // Takes `n` pages (free pages first, then new ones, adding slabs as needed) and appends
  // their ids to *pages. ResourceExhausted when device memory runs out (nothing is taken).
  Status Allocate(uint32_t n, std::vector<int32_t>* pages);
  // Returns pages to the pool; their contents are unspecified from then on.
  void Release(const std::vector<int32_t>& pages);

  // Writes host float32 rows [first, first + n) of a collection whose pages are `table` (in key
  // order; it must cover first + n rows), converting them to the pool's type on the device and
  // writing their squared norms. `stream` is a cudaStream_t; the call returns once the rows are
  // on the device. InvalidArgument when the table does not cover the rows or names pages this
  // pool never handed out.
  Status Write(const std::vector<int32_t>& table, uint64_t first, const float* rows, uint64_t n,
               void* stream);

  PagedKeys view() const;
  KeyType type() const;
  uint32_t dim() const;
  uint32_t pages_per_slab() const;
  uint64_t allocated_pages() const;  // pages held by callers
  uint64_t capacity_pages() const;   // pages in all slabs
  size_t device_bytes() const;       // slabs, norms, the slab table and the page maps

 private:
  struct Rep;
  explicit PagePool(std::unique_ptr<Rep> rep);
  std::unique_ptr<Rep> rep_;
};

}  // namespace sieve::gpu

#endif  // SIEVE_GPU_PAGE_POOL_H_
