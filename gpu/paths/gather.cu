// Copyright 2026 The Sieve Authors.
//
// The gather path's block: the passing rows (of the union, for a bitmap) copied into one
// dense block with their squared norms by position, and the same block seen as pages by the
// threshold select.

#include <cuda_runtime.h>

#include <cstdint>
#include <limits>

#include "gpu/cuda_status.cuh"
#include "gpu/device_run.cuh"
#include "gpu/memory.cuh"
#include "gpu/resident_rows.cuh"
#include "gpu/threshold_select/threshold_select.h"

namespace sieve::gpu::detail {

// Copies resident rows ids[i] of `src` (row_v vector units per row) to row i of `dst`, and their
// squared norms norms[ids[i]] to norms_out[i], zero in [n, n_padded) (n_padded - n <= 256).
template <typename V>
__global__ void GatherRowsKernel(ResidentRows src, int64_t row_v,
                                 const uint32_t* __restrict__ ids, int64_t n,
                                 V* __restrict__ dst, const float* __restrict__ norms,
                                 float* __restrict__ norms_out, int64_t n_padded) {
  // One thread per vector unit, so that short rows keep every lane busy.
  const int64_t total = n * row_v;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = t / row_v;
    const uint32_t id = ids[i];
    const int64_t u = t - i * row_v;
    dst[t] = RowAt<V>(src, id, row_v)[u];
    if (u == 0) norms_out[i] = norms[id];
  }
  if (blockIdx.x == 0 && threadIdx.x < n_padded - n) norms_out[n + threadIdx.x] = 0.0f;
}

__global__ void IotaKernel(int32_t* p, int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    p[i] = static_cast<int32_t>(i);
  }
}

// Gathers the rows listed in col_ids into one block (once per search) and points *rows at it.
Status DeviceRun::GatherBlock(const uint32_t* col_ids, uint64_t n_cols, RowBlocks* rows) {
  const Prepared& p = p_;
  const bool half = p.shard->dtype == DType::kFloat16;
  const size_t elem = half ? 2 : 4;
  if (!gathered_ready_) {
    // Whole pages of 64 rows: the threshold select reads pages whole.
    SIEVE_RETURN_IF_ERROR(gathered_rows_.Allocate(
        (n_cols + kPageRows - 1) / kPageRows * kPageRows * p.dim * elem, stream_));
    const size_t row_bytes = size_t{p.dim} * elem;
    const int64_t units = static_cast<int64_t>(n_cols) *
                          (row_bytes % 16 == 0 ? row_bytes / 16
                                               : row_bytes % 4 == 0 ? row_bytes / 4
                                                                    : row_bytes / 2);
    const unsigned grid = GridFor(units, 256);
    const ResidentRows src = p.shard->resident();
    // The block's norms by position come with it (candidate selection and the threshold
    // select read them in order), zero up to the end of its last page.
    const uint64_t padded = (n_cols + kPageRows - 1) / kPageRows * kPageRows;
    SIEVE_RETURN_IF_ERROR(gathered_norms_.Allocate(padded, stream_));
    const float* norms = p.shard->sq_norms();
    float* norms_out = gathered_norms_.get();
    const int64_t n = static_cast<int64_t>(n_cols), np = static_cast<int64_t>(padded);
    if (row_bytes % 16 == 0) {
      GatherRowsKernel<uint4><<<grid, 256, 0, stream_>>>(
          src, row_bytes / 16, col_ids, n, reinterpret_cast<uint4*>(gathered_rows_.get()),
          norms, norms_out, np);
    } else if (row_bytes % 4 == 0) {
      GatherRowsKernel<uint32_t><<<grid, 256, 0, stream_>>>(
          src, row_bytes / 4, col_ids, n, reinterpret_cast<uint32_t*>(gathered_rows_.get()),
          norms, norms_out, np);
    } else {
      GatherRowsKernel<uint16_t><<<grid, 256, 0, stream_>>>(
          src, row_bytes / 2, col_ids, n, reinterpret_cast<uint16_t*>(gathered_rows_.get()),
          norms, norms_out, np);
    }
    SIEVE_CUDA_CHECK_LAUNCH("GatherRowsKernel");
    gathered_ready_ = true;
    gathered_norms_ready_ = true;
    Mark("gather");
  }
  // The gathered block is one contiguous block.
  gathered_base_ = gathered_rows_.get();
  rows->bases = &gathered_base_;
  rows->block_rows = std::numeric_limits<uint64_t>::max();
  return Status::OK();
}

// gathered_norms_: the squared norms of the gathered block by position, zero up to the end of
// its last page; written by GatherRowsKernel with the rows (Dense), once per search.
Status DeviceRun::GatheredNorms() const {
  return gathered_norms_ready_ ? Status::OK()
                               : Status::Internal("gathered norms used before the gather");
}

// The gathered block (whole pages) as one slab of pages, with its norms by position and an
// identity block table; built once per search.
Status DeviceRun::GatheredPages(const uint32_t* col_ids, uint64_t n_cols, ThresholdKeys* out) {
  const Prepared& p = p_;
  const uint64_t pages = (n_cols + kPageRows - 1) / kPageRows;
  if (!gathered_pages_ready_) {
    SIEVE_RETURN_IF_ERROR(GatheredNorms());
    SIEVE_RETURN_IF_ERROR(gathered_table_.Allocate(pages, stream_));
    IotaKernel<<<GridFor(static_cast<int64_t>(pages), 256), 256, 0, stream_>>>(
        gathered_table_.get(), static_cast<int64_t>(pages));
    SIEVE_CUDA_CHECK_LAUNCH("IotaKernel");
    SIEVE_RETURN_IF_ERROR(gathered_slab_.Allocate(1, stream_));
    gathered_slab_host_ = gathered_rows_.get();
    SIEVE_CUDA_TRY(cudaMemcpyAsync(gathered_slab_.get(), &gathered_slab_host_, sizeof(void*),
                                   cudaMemcpyHostToDevice, stream_));
    // Its page map (TMA copies in the threshold select), where the driver encodes one; else
    // the kernel copies with cp.async.
    gathered_map_ok_ = options_.tma_page_copies &&
                       ThresholdSelectUsesTensorCores(KeyType::kFloat16, p.dim) &&
                       EncodePageMap(KeyType::kFloat16, p.dim, gathered_rows_.get(),
                                     pages * kPageRows, gathered_map_host_.bytes)
                           .ok();
    if (gathered_map_ok_) {
      SIEVE_RETURN_IF_ERROR(gathered_map_.Allocate(kPageMapBytes, stream_));
      SIEVE_CUDA_TRY(cudaMemcpyAsync(gathered_map_.get(), gathered_map_host_.bytes, kPageMapBytes,
                                     cudaMemcpyHostToDevice, stream_));
    }
    gathered_pages_ready_ = true;
  }
  uint32_t log2 = 0;
  while ((uint64_t{1} << log2) < pages) ++log2;
  out->keys.type = KeyType::kFloat16;
  out->keys.dim = p.dim;
  out->keys.slabs = gathered_slab_.get();
  out->keys.slab_pages_log2 = log2;
  out->keys.sq_norms = gathered_norms_.get();
  out->keys.page_maps = gathered_map_ok_ ? gathered_map_.get() : nullptr;
  out->table = gathered_table_.get();
  out->blocks = static_cast<uint32_t>(pages);
  out->col_ids = col_ids;
  return Status::OK();
}

}  // namespace sieve::gpu::detail
