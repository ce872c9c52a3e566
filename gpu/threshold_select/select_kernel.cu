// Copyright 2026 The Sieve Authors.
//
// ThresholdSelect: validates its arguments, picks the kernel for the keys and launches it.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>

#include "gpu/cuda_status.cuh"
#include "gpu/threshold_select/mma_core.cuh"
#include "gpu/threshold_select/select_kernel.cuh"
#include "gpu/threshold_select/select_state.cuh"
#include "gpu/threshold_select/simt_core.cuh"
#include "gpu/threshold_select/threshold_select.h"

namespace sieve::gpu {
namespace detail::ts {

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
enum class Kernel { kSimt, kMma, kMmaTma };

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

// Which kernel takes these keys: the tensor-core keys go to MmaCore, which copies pages with
// the keys' page maps where they are given, this file carries sm_90 code (SIEVE_TS_TMA, see
// gpu/CMakeLists.txt) and the device is compute capability 9.x; else with cp.async.
Kernel ChooseKernel(const PagedKeys& keys) {
  if (!ThresholdSelectUsesTensorCores(keys.type, keys.dim)) return Kernel::kSimt;
#ifdef SIEVE_TS_TMA
  if (keys.page_maps != nullptr && ComputeCapability() / 10 == 9) return Kernel::kMmaTma;
#endif
  return Kernel::kMma;
}

template <typename T>
Status LaunchMma(const KernelArgs& k, uint32_t tiles, cudaStream_t stream) {
  if (k.dim <= 32) return Launch<MmaCore<T, 32>>(k, tiles, stream);
  if (k.dim <= 64) return Launch<MmaCore<T, 64>>(k, tiles, stream);
  if (k.dim <= 128) return Launch<MmaCore<T, 128>>(k, tiles, stream);
  return Launch<MmaCore<T, 256>>(k, tiles, stream);
}

}  // namespace detail::ts

using detail::ts::ChooseKernel;
using detail::ts::Kernel;
using detail::ts::KernelArgs;
using detail::ts::kRows;
using detail::ts::Launch;
using detail::ts::LaunchMma;
using detail::ts::SimtCore;

const char* ThresholdSelectKernelName(const PagedKeys& keys) {
  switch (ChooseKernel(keys)) {
    case Kernel::kSimt:
      return "simt";
    case Kernel::kMmaTma:
      return "mma-tma";
    default:
      return "mma";
  }
}

bool ThresholdSelectHasTma() {
#ifdef SIEVE_TS_TMA
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
    if (x.keys.type == KeyType::kFloat16) return LaunchMma<__half>(k, tiles, s);
    return LaunchMma<__nv_bfloat16>(k, tiles, s);
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

}  // namespace sieve::gpu
