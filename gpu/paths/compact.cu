// Copyright 2026 The Sieve Authors.
//
// Compaction: the passing ordinals of a bitset or bitmap as a list (one list per filter row,
// in row order), by a popcount per word, an exclusive scan and a scatter.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include <cub/device/device_scan.cuh>

#include "gpu/cuda_status.cuh"
#include "gpu/device_run.cuh"
#include "gpu/memory.cuh"

namespace sieve::gpu::detail {

// counts[w] = popcount(words[w]), widened so that the in-place scan cannot overflow.
__global__ void PopcountKernel(const uint32_t* __restrict__ words, int64_t n,
                               uint64_t* __restrict__ counts) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    counts[i] = static_cast<uint64_t>(__popc(words[i]));
  }
}

// Writes the ordinal of every set bit at its scanned position. Word w belongs to filter row
// w / words_per_row and covers ordinals (w % words_per_row) * 32 + [0, 32). Positions at or
// past `capacity` are dropped (the host count bounds them).
__global__ void ScatterIdsKernel(const uint32_t* __restrict__ words, int64_t n,
                                 int64_t words_per_row, const uint64_t* __restrict__ offsets,
                                 uint64_t capacity, uint32_t* __restrict__ ids) {
  for (int64_t w = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; w < n;
       w += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    uint32_t bits = words[w];
    if (bits == 0) continue;
    uint64_t pos = offsets[w];
    const uint32_t base = static_cast<uint32_t>((w % words_per_row) * 32);
    while (bits != 0) {
      const int b = __ffs(bits) - 1;
      bits &= bits - 1;
      if (pos < capacity) ids[pos] = base + static_cast<uint32_t>(b);
      ++pos;
    }
  }
}

Status DeviceRun::Compact(const uint32_t* words, int64_t n_words, uint64_t count,
                          DeviceBuffer<uint32_t>* out) {
  DeviceBuffer<uint64_t> offsets;
  SIEVE_RETURN_IF_ERROR(offsets.Allocate(n_words, stream_));
  PopcountKernel<<<GridFor(n_words, 256), 256, 0, stream_>>>(words, n_words,
                                                                           offsets.get());
  SIEVE_CUDA_CHECK_LAUNCH("PopcountKernel");
  size_t temp_bytes = 0;
  SIEVE_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, offsets.get(),
                                               offsets.get(), n_words, stream_));
  DeviceBuffer<unsigned char> temp;
  SIEVE_RETURN_IF_ERROR(temp.Allocate(std::max<size_t>(temp_bytes, 1), stream_));
  SIEVE_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp.get(), temp_bytes, offsets.get(),
                                               offsets.get(), n_words, stream_));
  SIEVE_RETURN_IF_ERROR(out->Allocate(std::max<uint64_t>(count, 1), stream_));
  const int64_t words_per_row = static_cast<int64_t>(p_.words);
  ScatterIdsKernel<<<GridFor(n_words, 256), 256, 0, stream_>>>(
      words, n_words, words_per_row, offsets.get(), count, out->get());
  SIEVE_CUDA_CHECK_LAUNCH("ScatterIdsKernel");
  return Status::OK();
}

}  // namespace sieve::gpu::detail
