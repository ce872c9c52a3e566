// Copyright 2026 The Sieve Authors.
//
// The full path of gather and dense: cuBLAS tiles of dot products, an epilogue that turns them
// into distances and applies the filter, select_k per tile and a second select_k over the
// tiles' candidates. Also the GEMM and the epilogue the candidate scan reuses.

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "gpu/cuda_status.cuh"
#include "gpu/device_run.cuh"
#include "gpu/memory.cuh"
#include "gpu/paths/distance.cuh"

namespace sieve::gpu::detail {

struct EpilogueArgs {
  const float* dots;          // GEMM output, query-major: (split ? 2m : m) rows of n_cols
  float* out;                 // m × n_cols distances (may alias dots)
  int64_t n_cols;
  int m;
  bool split;                 // rows m..2m-1 hold the dots with the low halves of the queries
  float scale;                // dots are multiplied by this (the queries were divided by it)
  const float* q_sq_norms;    // m
  const float* x_sq_norms;    // by ordinal
  const uint32_t* col_ids;    // nullable: ordinal of column j is col_ids[col_base + j]
  int64_t col_base;           //           else col_base + j
  const uint32_t* filter;     // nullable: bit words; query q's start at q * filter_stride
  int64_t filter_stride;      // 0 for a bitset shared by the batch
  int metric;
  float sentinel;
};

// The pass that turns dot products into distances also applies the filter: a failing row gets
// the sentinel (+inf for min metrics, -inf for ip), so select_k never prefers it.
__global__ void EpilogueKernel(EpilogueArgs a) {
  const int q = blockIdx.y;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < a.n_cols;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint32_t id =
        a.col_ids != nullptr ? a.col_ids[a.col_base + j] : static_cast<uint32_t>(a.col_base + j);
    float d;
    if (a.filter != nullptr && !TestBit(a.filter + q * a.filter_stride, id)) {
      d = a.sentinel;
    } else {
      float dot = a.dots[static_cast<int64_t>(q) * a.n_cols + j];
      if (a.split) dot += a.dots[static_cast<int64_t>(a.m + q) * a.n_cols + j];
      d = FinishDistance(a.metric, dot * a.scale, a.q_sq_norms[q], a.x_sq_norms[id]);
    }
    a.out[static_cast<int64_t>(q) * a.n_cols + j] = d;
  }
}

__global__ void MapPositionsKernel(MapArgs a) {
  const int64_t n = static_cast<int64_t>(a.m) * a.kf;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < n;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t q = t / a.kf;
    const int64_t i = t % a.kf;
    const uint32_t p = a.pos != nullptr ? a.pos[t] : static_cast<uint32_t>(i);
    uint32_t id;
    if (a.starts != nullptr) {
      const uint64_t len = a.starts[q + 1] - a.starts[q];
      id = p < len ? a.table[a.starts[q] + p] : kInvalidId;
    } else {
      const int64_t index = q * a.table_stride + a.base + p;
      id = a.table != nullptr ? a.table[index] : static_cast<uint32_t>(index);
    }
    const int64_t o = q * a.out_ld + a.out_off + i;
    a.ids_out[o] = id;
    if (a.vals_out != nullptr) a.vals_out[o] = a.vals[t];
  }
}

__global__ void FillKernel(float* p, int64_t n, float v) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    p[i] = v;
  }
}

Status DeviceRun::Map(const MapArgs& a) {
  MapPositionsKernel<<<GridFor(int64_t{a.m} * a.kf, 256), 256, 0, stream_>>>(a);
  SIEVE_CUDA_CHECK_LAUNCH("MapPositionsKernel");
  return Status::OK();
}

// Turns the m × n_cols dot products in `dots` into distances in place, the sentinel where
// the chunk's filter fails. Columns are col_ids[col_base + j] (or col_base + j without ids).
Status DeviceRun::Epilogue(float* dots, uint32_t q0, uint32_t m, uint64_t n_cols, const uint32_t* col_ids,
                int64_t col_base) {
  EpilogueArgs e;
  e.dots = dots;
  e.out = dots;
  e.n_cols = static_cast<int64_t>(n_cols);
  e.m = static_cast<int>(m);
  e.split = p_.split;
  e.scale = p_.scale;
  e.q_sq_norms = qnorms_ + q0;
  e.x_sq_norms = p_.shard->sq_norms();
  e.col_ids = col_ids;
  e.col_base = col_base;
  e.filter = ChunkFilter(q0, col_ids);
  e.filter_stride = FilterStride();
  e.metric = p_.metric;
  e.sentinel = p_.sentinel;
  dim3 grid(GridFor(static_cast<int64_t>(n_cols), 256, 4096), m);
  EpilogueKernel<<<grid, 256, 0, stream_>>>(e);
  SIEVE_CUDA_CHECK_LAUNCH("EpilogueKernel");
  return Status::OK();
}

// dots (query-major, gemm_cols rows of n_tile) = B · Aᵀ for n_tile rows of A (row-major,
// dim wide, of the shard's dtype) and gemm_cols query rows of B (float16 rows with float16
// queries, else float32), accumulated in float32 and written as `out` (CUDA_R_32F, or
// CUDA_R_16F: each product rounded once). `compute`: CUBLAS_COMPUTE_32F, or for float32 rows
// CUBLAS_COMPUTE_32F_FAST_TF32 (inputs rounded to TF32 on the tensor cores).
Status DeviceRun::Gemm(const void* A, uint64_t n_tile, const void* B, int gemm_cols, void* dots,
                       uint64_t ld, cudaDataType_t out, cublasComputeType_t compute) {
  if (ld == 0) ld = n_tile;
  const Prepared& p = p_;
  const float alpha = 1.0f, beta = 0.0f;
  const bool half = p.shard->dtype == DType::kFloat16;
  const cudaDataType_t t = half ? CUDA_R_16F : CUDA_R_32F;
  SIEVE_CUBLAS_TRY(cublasGemmEx(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n_tile),
                                gemm_cols, static_cast<int>(p.dim), &alpha, A, t,
                                static_cast<int>(p.dim), B, t, static_cast<int>(p.dim), &beta,
                                dots, out, static_cast<int>(ld), compute,
                                CUBLAS_GEMM_DEFAULT));
  return Status::OK();
}

// The full path over n_cols columns of `rows` (col_ids: their ordinals, else col_base + j).
Status DeviceRun::Tiles(uint32_t q0, uint32_t m, const RowBlocks& rows, const uint32_t* col_ids,
                        uint64_t n_cols) {
  const Prepared& p = p_;
  const bool half = p.shard->dtype == DType::kFloat16;
  const int gemm_cols = static_cast<int>(p.split ? 2 * m : m);
  const uint64_t budget_cols = kTileBudgetBytes / (size_t{4} * gemm_cols);
  const uint64_t tile_cols =
      std::min<uint64_t>(n_cols, std::max<uint64_t>({budget_cols / 256 * 256, p.k, 1}));
  // Tiles of tile_cols columns, cut at slab ends too (cuBLAS reads one contiguous block).
  std::vector<std::pair<uint64_t, uint64_t>> tiles;  // (first column, columns)
  for (uint64_t off = 0; off < n_cols;) {
    const uint64_t n = std::min<uint64_t>({tile_cols, n_cols - off, rows.ToEnd(off)});
    tiles.emplace_back(off, n);
    off += n;
  }
  const uint64_t n_tiles = tiles.size();
  const int k_tile = static_cast<int>(std::min<uint64_t>(p.k, tile_cols));
  const int kf = static_cast<int>(std::min<uint64_t>(p.k, n_cols));
  const int64_t merge_ld = static_cast<int64_t>(n_tiles) * k_tile;

  DeviceBuffer<float> dots, tile_vals, merge_vals, final_vals;
  DeviceBuffer<uint32_t> tile_pos, merge_ids, final_pos, final_ids;
  SIEVE_RETURN_IF_ERROR(dots.Allocate(size_t{static_cast<uint32_t>(gemm_cols)} * tile_cols,
                                      stream_));
  SIEVE_RETURN_IF_ERROR(tile_vals.Allocate(size_t{m} * k_tile, stream_));
  SIEVE_RETURN_IF_ERROR(tile_pos.Allocate(size_t{m} * k_tile, stream_));
  SIEVE_RETURN_IF_ERROR(final_vals.Allocate(size_t{m} * kf, stream_));
  SIEVE_RETURN_IF_ERROR(final_ids.Allocate(size_t{m} * kf, stream_));
  if (n_tiles > 1) {
    SIEVE_RETURN_IF_ERROR(merge_vals.Allocate(size_t{m} * merge_ld, stream_));
    SIEVE_RETURN_IF_ERROR(merge_ids.Allocate(size_t{m} * merge_ld, stream_));
    SIEVE_RETURN_IF_ERROR(final_pos.Allocate(size_t{m} * kf, stream_));
    FillKernel<<<GridFor(int64_t{m} * merge_ld, 256), 256, 0, stream_>>>(
        merge_vals.get(), int64_t{m} * merge_ld, p.sentinel);
    SIEVE_CUDA_CHECK_LAUNCH("FillKernel");
    SIEVE_CUDA_TRY(
        cudaMemsetAsync(merge_ids.get(), 0xff, size_t{m} * merge_ld * 4, stream_));
  }

  const float alpha = 1.0f, beta = 0.0f;
  for (uint64_t t = 0; t < n_tiles; ++t) {
    const uint64_t off = tiles[t].first;
    const uint64_t n_tile = tiles[t].second;
    const void* A = rows.At(off);
    if (half) {
      // Split queries: B holds, for this chunk, m hi rows then m lo rows. They are laid out
      // per chunk (see Prepare), so the chunk's 2m rows are contiguous.
      SIEVE_CUBLAS_TRY(cublasGemmEx(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n_tile),
                                    gemm_cols, static_cast<int>(p.dim), &alpha, A, CUDA_R_16F,
                                    static_cast<int>(p.dim),
                                    split_ + size_t{2} * q0 * p.dim, CUDA_R_16F,
                                    static_cast<int>(p.dim), &beta, dots.get(), CUDA_R_32F,
                                    static_cast<int>(n_tile), CUBLAS_COMPUTE_32F,
                                    CUBLAS_GEMM_DEFAULT));
    } else {
      SIEVE_CUBLAS_TRY(cublasGemmEx(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n_tile),
                                    gemm_cols, static_cast<int>(p.dim), &alpha, A, CUDA_R_32F,
                                    static_cast<int>(p.dim), queries_ + size_t{q0} * p.dim,
                                    CUDA_R_32F,
                                    static_cast<int>(p.dim), &beta, dots.get(), CUDA_R_32F,
                                    static_cast<int>(n_tile), CUBLAS_COMPUTE_32F,
                                    CUBLAS_GEMM_DEFAULT));
    }
    SIEVE_RETURN_IF_ERROR(
        Epilogue(dots.get(), q0, m, n_tile, col_ids, static_cast<int64_t>(off)));

    const int kt = static_cast<int>(std::min<uint64_t>(k_tile, n_tile));
    SIEVE_RETURN_IF_ERROR(select_->Select(dots.get(), m, n_tile, kt, p.select_min,
                                          tile_vals.get(), tile_pos.get()));
    MapArgs map{};
    map.pos = tile_pos.get();
    map.vals = tile_vals.get();
    map.m = static_cast<int>(m);
    map.kf = kt;
    map.table = col_ids;
    map.base = static_cast<int64_t>(off);
    if (n_tiles == 1) {
      map.ids_out = final_ids.get();
      map.out_ld = kf;
      SIEVE_RETURN_IF_ERROR(Map(map));
      Mark("tile");
      return Download(q0, m, kf, tile_vals.get(), final_ids.get());
    }
    map.ids_out = merge_ids.get();
    map.vals_out = merge_vals.get();
    map.out_ld = merge_ld;
    map.out_off = static_cast<int64_t>(t) * k_tile;
    SIEVE_RETURN_IF_ERROR(Map(map));
  }
  Mark("tiles");
  SIEVE_RETURN_IF_ERROR(select_->Select(merge_vals.get(), m, merge_ld, kf, p.select_min,
                                        final_vals.get(), final_pos.get()));
  MapArgs map{};
  map.pos = final_pos.get();
  map.m = static_cast<int>(m);
  map.kf = kf;
  map.table = merge_ids.get();
  map.table_stride = merge_ld;
  map.ids_out = final_ids.get();
  map.out_ld = kf;
  SIEVE_RETURN_IF_ERROR(Map(map));
  return Download(q0, m, kf, final_vals.get(), final_ids.get());
}

}  // namespace sieve::gpu::detail
