// Copyright 2026 The Sieve Authors.
//
// Device residency. The first search of a shard (ShardView::key) uploads its vectors (float32,
// or float16 when ShardView::dtype says so) into its own PagePool and computes their squared
// norms on the device; both stay there. Pages are taken in order, so row r is slot r % 64 of
// page r / 64 (the shard's block table is the identity). A later search whose generation
// changed and whose rows grew takes more pages and uploads only the new rows: resident rows
// never move (slabs are never reallocated; only the pool's squared norms and its small slab
// table are copied device to device as the pool grows). A snapshot with fewer rows than are
// resident, same generation, uses a prefix. A shard whose dim or dtype changed, or whose
// generation changed while its rows shrank, is reloaded in full. Nothing half-updated stays
// cached: a failed upload drops the shard (or, when only its growth failed, keeps its rows).
// With int8 codes on (GpuExecutorOptions::candidate_int8), the shard also keeps one int8 code a
// row and its float4 of terms (query/int8_codes.h), built on the device from the rows as they
// are uploaded, in one buffer that grows geometrically (codes are rebuilt for new rows only; a
// failed build drops the codes, and searches then multiply in float: see Int8Codes).

#ifndef SIEVE_GPU_DEVICE_SHARD_CUH_
#define SIEVE_GPU_DEVICE_SHARD_CUH_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "gpu/page_pool.h"
#include "gpu/resident_rows.cuh"
#include "query/executor.h"
#include "sieve/status.h"
#include "sieve/types.h"

namespace sieve::gpu::detail {

// One resident shard.
struct DeviceShard {
  uint64_t generation = 0;
  uint64_t lineage = 0;  // ShardView::lineage of the rows held
  uint32_t rows = 0;
  uint32_t dim = 0;
  DType dtype = DType::kFloat32;
  std::unique_ptr<PagePool> pool;
  std::vector<int32_t> pages;    // page of each block of 64 rows, in row order (pages[i] == i)
  int32_t* d_pages = nullptr;    // device copy of `pages` (a one-row block table)
  size_t d_pages_capacity = 0;   // entries
  std::vector<const char*> slab_bases;  // host copy of the pool's slab table (for cuBLAS)
  float max_sq_norm = 0.0f;      // the largest squared norm of a resident row (error bounds)
  bool page_maps = true;         // the pool's page maps are passed on (TMA page copies)
  // Int8 codes of rows [0, code_rows): row r's code at codes + r * code_dim (zero past dim), its
  // terms at code_terms[r] = {scale, s|q| rounded up, |x - s q| rounded up, stored squared norm}.
  // The buffers hold code_capacity rows (a multiple of 256; codes past code_rows are zero).
  int8_t* codes = nullptr;
  float4* code_terms = nullptr;
  uint32_t code_dim = 0;
  uint64_t code_rows = 0;
  uint64_t code_capacity = 0;

  size_t elem() const { return dtype == DType::kFloat16 ? 2 : 4; }
  PagedKeys keys() const {
    PagedKeys k = pool != nullptr ? pool->view() : PagedKeys{};
    if (!page_maps) k.page_maps = nullptr;
    return k;
  }
  ResidentRows resident() const { return MakeResidentRows(keys()); }
  const float* sq_norms() const { return keys().sq_norms; }
  // Rows per slab.
  uint64_t slab_rows() const {
    return pool != nullptr ? uint64_t{kPageRows} * pool->pages_per_slab() : 0;
  }
  uint64_t device_bytes() const {
    return (pool != nullptr ? pool->device_bytes() : 0) + d_pages_capacity * sizeof(int32_t) +
           code_capacity * (uint64_t{code_dim} + sizeof(float4));
  }
  // Whether the codes cover the first `n` rows.
  bool has_codes(uint64_t n) const { return codes != nullptr && code_rows >= n; }
  void FreeCodes();
  void Free();
};

// The resident shards of one executor, by ShardView::key. Uploads run on `stream`.
//
// Thread-safety: none; the executor serializes its calls.
class ResidentShards {
 public:
  // New shards' pools take slabs of `slab_bytes`; their page maps are passed on to the
  // threshold select when `page_maps`; `int8_codes`: shards keep int8 codes of their rows.
  ResidentShards(cudaStream_t stream, size_t slab_bytes, bool page_maps, bool int8_codes = false)
      : stream_(stream), slab_bytes_(slab_bytes), page_maps_(page_maps), int8_codes_(int8_codes) {}
  ~ResidentShards() { Clear(); }
  ResidentShards(const ResidentShards&) = delete;
  ResidentShards& operator=(const ResidentShards&) = delete;

  // Makes `view`'s rows resident (see above) and points *out at them. ResourceExhausted when
  // device memory runs out; Internal for other CUDA failures.
  Status EnsureResident(const ShardView& view, DeviceShard** out);
  // Frees every shard. REQUIRES: nothing in flight reads them.
  void Clear();

  // Bytes of device memory held (pools, norms, slab tables and page tables, at capacity).
  uint64_t device_bytes() const;
  // Rows uploaded from the host since creation.
  uint64_t uploaded_rows() const { return uploaded_rows_; }

 private:
  // Gives `s` pages for `rows` rows (in order: the identity table), its device page table and
  // the host copy of the slab table. On failure the shard may hold pages it has not recorded:
  // the caller drops it.
  Status GrowPages(DeviceShard* s, uint32_t rows);
  // *out = the largest of n device floats (synchronizes the stream).
  Status MaxOnDevice(const float* values, size_t n, float* out);
  // Codes for rows [s->code_rows, s->rows) (growing the buffers as needed). On failure the
  // shard keeps no codes.
  Status GrowCodes(DeviceShard* s);

  cudaStream_t stream_;
  size_t slab_bytes_;
  bool page_maps_;
  bool int8_codes_;
  std::unordered_map<uint64_t, DeviceShard> shards_;
  uint64_t uploaded_rows_ = 0;
};

// Writes the int8 codes and terms of rows [from, to) of `rows` (float16 or float32 rows of dim,
// squared norms by row in sq_norms) into codes (code_dim a row) and terms, on `stream`
// (paths/int8_scan.cu).
Status BuildRowCodes(const ResidentRows& rows, DType dtype, uint32_t dim, const float* sq_norms,
                     uint64_t from, uint64_t to, int8_t* codes, uint32_t code_dim, float4* terms,
                     cudaStream_t stream);

}  // namespace sieve::gpu::detail

#endif  // SIEVE_GPU_DEVICE_SHARD_CUH_
