// Copyright 2026 The Sieve Authors.

#include "gpu/device_shard.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include <cub/device/device_reduce.cuh>

#include "gpu/cuda_status.cuh"
#include "gpu/memory.cuh"
#include "query/int8_codes.h"

namespace sieve::gpu::detail {

void DeviceShard::FreeCodes() {
  if (codes != nullptr) (void)cudaFree(codes);
  if (code_terms != nullptr) (void)cudaFree(code_terms);
  codes = nullptr;
  code_terms = nullptr;
  code_rows = 0;
  code_capacity = 0;
}

void DeviceShard::Free() {
  FreeCodes();
  pool.reset();
  if (d_pages != nullptr) (void)cudaFree(d_pages);
  d_pages = nullptr;
  d_pages_capacity = 0;
  pages.clear();
  slab_bases.clear();
  rows = 0;
}

void ResidentShards::Clear() {
  for (auto& [key, s] : shards_) s.Free();
  shards_.clear();
}

uint64_t ResidentShards::device_bytes() const {
  uint64_t total = 0;
  for (const auto& [key, s] : shards_) total += s.device_bytes();
  return total;
}

Status ResidentShards::GrowPages(DeviceShard* s, uint32_t rows) {
  const size_t want = (size_t{rows} + kPageRows - 1) / kPageRows;
  const size_t have = s->pages.size();
  if (want <= have) return Status::OK();
  std::vector<int32_t> fresh;
  SIEVE_RETURN_IF_ERROR(
      s->pool->Allocate(static_cast<uint32_t>(want - have), &fresh)
          .WithContext("resident shard of " + std::to_string(rows) + " rows x " +
                       std::to_string(s->dim)));
  for (size_t i = 0; i < fresh.size(); ++i) {
    if (fresh[i] != static_cast<int32_t>(have + i)) {
      return Status::Internal("page pool of a resident shard returned page " +
                              std::to_string(fresh[i]) + " for rows from " +
                              std::to_string((have + i) * kPageRows) + " (expected page " +
                              std::to_string(have + i) + ")");
    }
  }
  s->pages.insert(s->pages.end(), fresh.begin(), fresh.end());
  if (want > s->d_pages_capacity) {
    // Geometric, like the rows it indexes; it is 1/16 of a float32 norm per row.
    const size_t cap = std::max<size_t>({want, s->d_pages_capacity * 2, 64});
    int32_t* d = nullptr;
    cudaError_t err = cudaMalloc(&d, cap * sizeof(int32_t));
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      return FromCuda(err, "cudaMalloc (resident page table)");
    }
    if (have > 0) {
      err = cudaMemcpyAsync(d, s->d_pages, have * sizeof(int32_t), cudaMemcpyDeviceToDevice,
                            stream_);
      if (err == cudaSuccess) err = cudaStreamSynchronize(stream_);
      if (err != cudaSuccess) {
        (void)cudaFree(d);
        return FromCuda(err, "copying the resident page table");
      }
    }
    if (s->d_pages != nullptr) (void)cudaFree(s->d_pages);
    s->d_pages = d;
    s->d_pages_capacity = cap;
  }
  SIEVE_CUDA_TRY(cudaMemcpyAsync(s->d_pages + have, s->pages.data() + have,
                                 (want - have) * sizeof(int32_t), cudaMemcpyHostToDevice,
                                 stream_));
  SIEVE_CUDA_TRY(cudaStreamSynchronize(stream_));
  // cuBLAS takes row pointers from the host: keep the slab addresses here too.
  const size_t n_slabs = s->pool->capacity_pages() / s->pool->pages_per_slab();
  if (n_slabs != s->slab_bases.size()) {
    std::vector<const char*> bases(n_slabs);
    SIEVE_CUDA_TRY(cudaMemcpy(bases.data(), s->keys().slabs, n_slabs * sizeof(void*),
                              cudaMemcpyDeviceToHost));
    s->slab_bases = std::move(bases);
  }
  return Status::OK();
}

Status ResidentShards::MaxOnDevice(const float* values, size_t n, float* out) {
  DeviceBuffer<float> result;
  SIEVE_RETURN_IF_ERROR(result.Allocate(1, stream_));
  size_t temp_bytes = 0;
  SIEVE_CUDA_TRY(cub::DeviceReduce::Max(nullptr, temp_bytes, values, result.get(),
                                        static_cast<int64_t>(n), stream_));
  DeviceBuffer<unsigned char> temp;
  SIEVE_RETURN_IF_ERROR(temp.Allocate(std::max<size_t>(temp_bytes, 1), stream_));
  SIEVE_CUDA_TRY(cub::DeviceReduce::Max(temp.get(), temp_bytes, values, result.get(),
                                        static_cast<int64_t>(n), stream_));
  SIEVE_CUDA_TRY(cudaMemcpyAsync(out, result.get(), sizeof(float), cudaMemcpyDeviceToHost,
                                 stream_));
  SIEVE_CUDA_TRY(cudaStreamSynchronize(stream_));
  return Status::OK();
}

Status ResidentShards::GrowCodes(DeviceShard* s) {
  auto grow = [&]() -> Status {
    s->code_dim = Int8CodeDim(s->dim);
    if (s->rows > s->code_capacity) {
      // Geometric, in whole 256-row tiles: the scan's GEMM may read up to the next tile end.
      const uint64_t cap =
          (std::max<uint64_t>(s->rows, s->code_capacity + s->code_capacity / 2) + 255) / 256 * 256;
      int8_t* codes = nullptr;
      float4* terms = nullptr;
      cudaError_t err = cudaMalloc(&codes, cap * s->code_dim);
      if (err == cudaSuccess) err = cudaMalloc(&terms, cap * sizeof(float4));
      if (err == cudaSuccess) {
        err = cudaMemsetAsync(codes, 0, cap * s->code_dim, stream_);
      }
      if (err == cudaSuccess && s->code_rows > 0) {
        err = cudaMemcpyAsync(codes, s->codes, s->code_rows * s->code_dim,
                              cudaMemcpyDeviceToDevice, stream_);
        if (err == cudaSuccess) {
          err = cudaMemcpyAsync(terms, s->code_terms, s->code_rows * sizeof(float4),
                                cudaMemcpyDeviceToDevice, stream_);
        }
      }
      if (err == cudaSuccess) err = cudaStreamSynchronize(stream_);
      if (err != cudaSuccess) {
        (void)cudaGetLastError();
        if (codes != nullptr) (void)cudaFree(codes);
        if (terms != nullptr) (void)cudaFree(terms);
        return FromCuda(err, "int8 codes of a resident shard");
      }
      const uint64_t rows = s->code_rows;
      s->FreeCodes();
      s->codes = codes;
      s->code_terms = terms;
      s->code_capacity = cap;
      s->code_rows = rows;
    }
    SIEVE_RETURN_IF_ERROR(BuildRowCodes(s->resident(), s->dtype, s->dim, s->sq_norms(),
                                        s->code_rows, s->rows, s->codes, s->code_dim,
                                        s->code_terms, stream_));
    SIEVE_CUDA_TRY(cudaStreamSynchronize(stream_));
    s->code_rows = s->rows;
    return Status::OK();
  };
  Status st = grow();
  if (!st.ok()) s->FreeCodes();
  return st;
}

Status ResidentShards::EnsureResident(const ShardView& view, DeviceShard** out) {
  auto it = shards_.find(view.key);
  DeviceShard* s = it == shards_.end() ? nullptr : &it->second;
  if (s != nullptr) {
    // Rows of another lineage (a compacted shard, a snapshot's older image) are no prefix.
    const bool same_layout =
        s->dim == view.dim && s->dtype == view.dtype && s->lineage == view.lineage;
    if (same_layout && s->generation == view.generation && view.rows <= s->rows) {
      *out = s;  // the same or an older snapshot: a prefix of what is resident
      return Status::OK();
    }
    if (!same_layout || view.rows < s->rows) {
      s->Free();
      shards_.erase(it);
      s = nullptr;
    }
  }
  if (s == nullptr) {
    DeviceShard fresh;
    fresh.dim = view.dim;
    fresh.dtype = view.dtype;
    fresh.lineage = view.lineage;
    fresh.page_maps = page_maps_;
    const KeyType type = view.dtype == DType::kFloat16 ? KeyType::kFloat16 : KeyType::kFloat32;
    SIEVE_RETURN_IF_ERROR(
        PagePool::Create(type, view.dim, slab_bytes_, &fresh.pool));
    s = &shards_.emplace(view.key, std::move(fresh)).first->second;
  }
  const uint32_t from = s->rows;
  if (view.rows > from) {
    const size_t pages_before = s->pages.size();
    auto grow_and_write = [&]() -> Status {
      SIEVE_RETURN_IF_ERROR(GrowPages(s, view.rows));
      // Only the new rows travel; resident rows never move.
      return s->pool->Write(s->pages, from, view.vectors + size_t{from} * view.dim,
                            view.rows - from, stream_);
    };
    Status st = grow_and_write();
    if (!st.ok()) {
      // Nothing half-updated stays cached. A pool that only failed to grow took nothing, and
      // the shard keeps its rows.
      if (st.IsResourceExhausted() && s->rows > 0 && s->pages.size() == pages_before &&
          s->pool->allocated_pages() == pages_before) {
        return st;
      }
      s->Free();
      shards_.erase(view.key);
      return st;
    }
    uploaded_rows_ += view.rows - from;
    // The largest squared norm of the new rows, as stored (error bounds of the threshold path).
    float new_max = std::numeric_limits<float>::infinity();
    if (MaxOnDevice(s->sq_norms() + from, view.rows - from, &new_max).ok()) {
      s->max_sq_norm = std::max(s->max_sq_norm, new_max);
    } else {
      (void)cudaGetLastError();
      s->max_sq_norm = std::numeric_limits<float>::infinity();  // the path then never fits
    }
  }
  s->rows = std::max(s->rows, view.rows);
  s->generation = view.generation;
  if (int8_codes_ && s->code_rows < s->rows && s->dim <= kInt8MaxDim) {
    // Without codes the shard still searches (in float products); the error is not the search's.
    if (!GrowCodes(s).ok()) (void)cudaGetLastError();
  }
  *out = s;
  return Status::OK();
}

}  // namespace sieve::gpu::detail
