// Copyright 2026 The Sieve Authors.
//
// PagePool: pages of kPageRows rows in slabs that never move (see page_pool.h).
//
// What moves, and when. Slabs are separate cudaMalloc allocations and are never copied or
// freed before the pool is. Two small arrays are reallocated as the pool grows, so a PagedKeys
// view is valid only until the next Allocate that adds a slab:
//   * the device slab table (one pointer per slab), re-uploaded whole when a slab is added,
//     and beside it, for keys the tensor-core kernel reads, one tensor map a slab (its TMA
//     copies; see PagedKeys::page_maps);
//   * the squared norms (one float per page slot), grown geometrically by a device-to-device
//     copy. They are 1/(64 · dim) of the vectors' elements, so this is the only data that ever
//     moves.
// Growth synchronizes the device before freeing the old arrays, so work in flight on any
// stream that still reads them finishes first.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpu/cuda_status.cuh"
#include "gpu/page_pool.h"
#include "gpu/threshold_select/threshold_select.h"

namespace sieve::gpu {
namespace detail {

// Write staging: host rows are sent in chunks of at most this many float32 bytes.
constexpr size_t kPoolStagingBytes = size_t{64} << 20;

__device__ __forceinline__ float PoolToFloat(float x) { return x; }
__device__ __forceinline__ float PoolToFloat(__half x) { return __half2float(x); }
__device__ __forceinline__ float PoolToFloat(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T>
__device__ __forceinline__ T PoolFromFloat(float x);
template <>
__device__ __forceinline__ float PoolFromFloat<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __half PoolFromFloat<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 PoolFromFloat<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

// Converts `n` float32 rows (key indices first + i) to T and writes each to its page slot,
// with its squared norm (of the converted values, in float32). One warp per row. table[j] is
// the page of key block page0 + j.
template <typename T>
__global__ void WritePagesKernel(const float* __restrict__ src, int64_t n, int dim, uint64_t first,
                                 uint64_t page0, const int32_t* __restrict__ table,
                                 void* const* slabs, uint32_t slab_pages_log2,
                                 float* __restrict__ sq_norms) {
  const int lane = threadIdx.x & 31;
  const int64_t warp = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const int64_t n_warps = (static_cast<int64_t>(gridDim.x) * blockDim.x) >> 5;
  const uint64_t page_mask = (uint64_t{1} << slab_pages_log2) - 1;
  for (int64_t r = warp; r < n; r += n_warps) {
    const uint64_t key = first + static_cast<uint64_t>(r);
    const uint64_t page = static_cast<uint64_t>(table[(key / kPageRows) - page0]);
    const uint64_t slot = key % kPageRows;
    T* d = static_cast<T*>(slabs[page >> slab_pages_log2]) +
           static_cast<int64_t>(((page & page_mask) * kPageRows + slot) * dim);
    const float* s = src + r * dim;
    float acc = 0.0f;
    for (int j = lane; j < dim; j += 32) {
      const T v = PoolFromFloat<T>(s[j]);
      d[j] = v;
      const float f = PoolToFloat(v);
      acc = fmaf(f, f, acc);
    }
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
    if (lane == 0) sq_norms[page * kPageRows + slot] = acc;
  }
}

// A stream-ordered scratch allocation, freed (stream-ordered) on every exit path.
class StreamScratch {
 public:
  explicit StreamScratch(cudaStream_t stream) : stream_(stream) {}
  ~StreamScratch() {
    if (ptr_ != nullptr) (void)cudaFreeAsync(ptr_, stream_);
  }
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;
  Status Allocate(size_t bytes) {
    cudaError_t err = cudaMallocAsync(&ptr_, std::max<size_t>(bytes, 1), stream_);
    if (err != cudaSuccess) {
      ptr_ = nullptr;
      (void)cudaGetLastError();
      return FromCuda(err, "cudaMallocAsync (page pool staging)");
    }
    return Status::OK();
  }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  cudaStream_t stream_;
  void* ptr_ = nullptr;
};

}  // namespace detail

struct PagePool::Rep {
  KeyType type = KeyType::kFloat16;
  uint32_t dim = 0;
  uint32_t slab_pages_log2 = 0;
  size_t slab_bytes = 0;        // one slab, exactly (pages_per_slab pages)
  std::vector<void*> slabs;     // device addresses, in slab order
  void** d_slabs = nullptr;     // device copy of `slabs`
  size_t d_slabs_capacity = 0;  // entries (of d_slabs and d_maps)
  // Page maps (PagedKeys::page_maps): kept while `maps` holds, which starts true for the
  // tensor-core kernel's keys and ends for good if the driver cannot encode one (the kernel
  // then copies with cp.async).
  bool maps = false;
  std::vector<PageMap> host_maps;   // one a slab
  unsigned char* d_maps = nullptr;  // device copy of host_maps
  float* sq_norms = nullptr;        // page p, slot i: sq_norms[p * 64 + i]
  uint64_t norms_pages = 0;         // pages `sq_norms` has room for (>= capacity_pages())
  uint64_t next_page = 0;           // pages [0, next_page) have been handed out at least once
  uint64_t allocated = 0;           // pages held by callers
  std::vector<int32_t> free_pages;

  uint64_t pages_per_slab() const { return uint64_t{1} << slab_pages_log2; }
  uint64_t capacity_pages() const { return uint64_t{slabs.size()} << slab_pages_log2; }

  ~Rep() {
    for (void* s : slabs) (void)cudaFree(s);
    if (d_slabs != nullptr) (void)cudaFree(d_slabs);
    if (d_maps != nullptr) (void)cudaFree(d_maps);
    if (sq_norms != nullptr) (void)cudaFree(sq_norms);
  }
};

Status PagePool::Create(KeyType type, uint32_t dim, size_t slab_bytes,
                        std::unique_ptr<PagePool>* out) {
  out->reset();
  if (type != KeyType::kFloat16 && type != KeyType::kBFloat16 && type != KeyType::kFloat32) {
    return Status::InvalidArgument("PagePool: unknown key type " +
                                   std::to_string(static_cast<int>(type)));
  }
  if (dim == 0) return Status::InvalidArgument("PagePool: dim is 0");
  auto rep = std::make_unique<Rep>();
  rep->type = type;
  rep->dim = dim;
  const size_t page_bytes = size_t{kPageRows} * dim * KeyTypeBytes(type);
  // Rounded down, so a slab never exceeds slab_bytes (unless one page does). Page ids are
  // int32, so a slab never needs more than 2^30 pages.
  const uint64_t pages = std::max<uint64_t>(1, slab_bytes / page_bytes);
  uint32_t log2 = 0;
  while (log2 < 30 && (uint64_t{2} << log2) <= pages) ++log2;
  rep->slab_pages_log2 = log2;
  rep->slab_bytes = (size_t{1} << log2) * page_bytes;
  rep->maps = ThresholdSelectUsesTensorCores(type, dim);
  out->reset(new PagePool(std::move(rep)));
  return Status::OK();
}

PagePool::PagePool(std::unique_ptr<Rep> rep) : rep_(std::move(rep)) {}
PagePool::~PagePool() = default;

Status PagePool::Allocate(uint32_t n, std::vector<int32_t>* pages) {
  Rep& r = *rep_;
  if (pages == nullptr) return Status::InvalidArgument("PagePool::Allocate: pages is null");
  if (n == 0) return Status::OK();
  const uint64_t reuse = std::min<uint64_t>(n, r.free_pages.size());
  const uint64_t fresh = n - reuse;
  const uint64_t want_pages = r.next_page + fresh;
  if (want_pages > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
    return Status::ResourceExhausted("PagePool: more than 2^31 - 1 pages");
  }

  if (want_pages > r.capacity_pages()) {
    // Everything new is allocated before anything is committed, so a failure takes nothing.
    const uint64_t want_slabs = (want_pages + r.pages_per_slab() - 1) >> r.slab_pages_log2;
    std::vector<void*> new_slabs;
    void** new_table = nullptr;
    unsigned char* new_maps = nullptr;
    size_t new_table_capacity = r.d_slabs_capacity;
    float* new_norms = nullptr;
    uint64_t new_norms_pages = r.norms_pages;
    auto undo = [&](cudaError_t err, const char* what) {
      for (void* s : new_slabs) (void)cudaFree(s);
      if (new_table != nullptr) (void)cudaFree(new_table);
      if (new_maps != nullptr) (void)cudaFree(new_maps);
      if (new_norms != nullptr) (void)cudaFree(new_norms);
      (void)cudaGetLastError();
      return detail::FromCuda(err, what).WithContext("PagePool: growing to " +
                                                     std::to_string(want_slabs) + " slabs of " +
                                                     std::to_string(r.slab_bytes) + " bytes");
    };
    for (uint64_t s = r.slabs.size(); s < want_slabs; ++s) {
      void* p = nullptr;
      cudaError_t err = cudaMalloc(&p, r.slab_bytes);
      if (err != cudaSuccess) return undo(err, "cudaMalloc (slab)");
      new_slabs.push_back(p);
    }
    if (want_slabs > r.d_slabs_capacity) {
      new_table_capacity = std::max<size_t>({want_slabs, 2 * r.d_slabs_capacity, 8});
      cudaError_t err = cudaMalloc(&new_table, new_table_capacity * sizeof(void*));
      if (err != cudaSuccess) return undo(err, "cudaMalloc (slab table)");
      if (r.maps) {
        err = cudaMalloc(&new_maps, new_table_capacity * kPageMapBytes);
        if (err != cudaSuccess) return undo(err, "cudaMalloc (page maps)");
      }
    }
    const uint64_t want_norm_pages = want_slabs << r.slab_pages_log2;
    if (want_norm_pages > r.norms_pages) {
      new_norms_pages = std::max<uint64_t>(want_norm_pages, r.norms_pages + r.norms_pages / 2);
      cudaError_t err = cudaMalloc(&new_norms, new_norms_pages * kPageRows * sizeof(float));
      if (err != cudaSuccess) return undo(err, "cudaMalloc (squared norms)");
    }

    std::vector<void*> table = r.slabs;
    table.insert(table.end(), new_slabs.begin(), new_slabs.end());
    void** table_dst = new_table != nullptr ? new_table : r.d_slabs;
    cudaError_t err =
        cudaMemcpy(table_dst, table.data(), table.size() * sizeof(void*), cudaMemcpyHostToDevice);
    if (err != cudaSuccess) return undo(err, "cudaMemcpy (slab table)");
    std::vector<PageMap> maps;
    bool maps_ok = r.maps;
    if (maps_ok) {
      maps = r.host_maps;
      maps.resize(table.size());
      for (size_t i = r.host_maps.size(); i < table.size() && maps_ok; ++i) {
        maps_ok =
            EncodePageMap(r.type, r.dim, table[i], kPageRows * r.pages_per_slab(), maps[i].bytes)
                .ok();
      }
    }
    if (maps_ok) {
      unsigned char* maps_dst = new_maps != nullptr ? new_maps : r.d_maps;
      err = cudaMemcpy(maps_dst, maps.data(), maps.size() * kPageMapBytes, cudaMemcpyHostToDevice);
      if (err != cudaSuccess) return undo(err, "cudaMemcpy (page maps)");
    }
    if (new_norms != nullptr && r.sq_norms != nullptr) {
      // Only pages handed out so far have norms worth keeping.
      err = cudaMemcpy(new_norms, r.sq_norms, r.next_page * kPageRows * sizeof(float),
                       cudaMemcpyDeviceToDevice);
      if (err != cudaSuccess) return undo(err, "cudaMemcpy (squared norms)");
    }
    // The copies above may still be in flight (a host-to-device copy from pageable memory
    // returns once staged); work on other streams may still read the old arrays.
    err = cudaDeviceSynchronize();
    if (err != cudaSuccess) return undo(err, "cudaDeviceSynchronize (page pool growth)");

    r.slabs = std::move(table);
    if (new_table != nullptr) {
      if (r.d_slabs != nullptr) (void)cudaFree(r.d_slabs);
      r.d_slabs = new_table;
      r.d_slabs_capacity = new_table_capacity;
      if (r.d_maps != nullptr) (void)cudaFree(r.d_maps);
      r.d_maps = new_maps;
    }
    if (maps_ok) {
      r.host_maps = std::move(maps);
    } else if (r.maps) {
      // The driver could not encode a map: cp.async copies from now on.
      r.maps = false;
      r.host_maps.clear();
      if (r.d_maps != nullptr) (void)cudaFree(r.d_maps);
      r.d_maps = nullptr;
    }
    if (new_norms != nullptr) {
      if (r.sq_norms != nullptr) (void)cudaFree(r.sq_norms);
      r.sq_norms = new_norms;
      r.norms_pages = new_norms_pages;
    }
  }

  pages->reserve(pages->size() + n);
  for (uint64_t i = 0; i < reuse; ++i) {
    pages->push_back(r.free_pages.back());
    r.free_pages.pop_back();
  }
  for (uint64_t i = 0; i < fresh; ++i) pages->push_back(static_cast<int32_t>(r.next_page++));
  r.allocated += n;
  return Status::OK();
}

void PagePool::Release(const std::vector<int32_t>& pages) {
  Rep& r = *rep_;
  for (int32_t p : pages) {
    if (p < 0 || static_cast<uint64_t>(p) >= r.next_page) continue;  // never handed out
    r.free_pages.push_back(p);
    if (r.allocated > 0) --r.allocated;
  }
}

Status PagePool::Write(const std::vector<int32_t>& table, uint64_t first, const float* rows,
                       uint64_t n, void* stream) {
  const Rep& r = *rep_;
  if (n == 0) return Status::OK();
  if (rows == nullptr) return Status::InvalidArgument("PagePool::Write: rows are null");
  if (first + n < first || table.size() * uint64_t{kPageRows} < first + n) {
    return Status::InvalidArgument("PagePool::Write: a table of " + std::to_string(table.size()) +
                                   " pages does not cover rows [" + std::to_string(first) + ", " +
                                   std::to_string(first + n) + ")");
  }
  const uint64_t page_begin = first / kPageRows;
  const uint64_t page_end = (first + n + kPageRows - 1) / kPageRows;
  for (uint64_t i = page_begin; i < page_end; ++i) {
    if (table[i] < 0 || static_cast<uint64_t>(table[i]) >= r.next_page) {
      return Status::InvalidArgument("PagePool::Write: table entry " + std::to_string(i) +
                                     " is page " + std::to_string(table[i]) +
                                     ", which this pool never handed out");
    }
  }

  cudaStream_t s = static_cast<cudaStream_t>(stream);
  const uint32_t dim = r.dim;
  // Whole pages per chunk, so each chunk's table slice is its own.
  const uint64_t chunk_rows = std::max<uint64_t>(
      kPageRows, detail::kPoolStagingBytes / (size_t{4} * dim) / kPageRows * kPageRows);
  const uint64_t max_rows = std::min<uint64_t>(chunk_rows, n);
  const uint64_t max_pages = (max_rows + kPageRows - 1) / kPageRows + 1;
  detail::StreamScratch staging(s), d_table(s);
  SIEVE_RETURN_IF_ERROR(staging.Allocate(max_rows * dim * sizeof(float)));
  SIEVE_RETURN_IF_ERROR(d_table.Allocate(max_pages * sizeof(int32_t)));
  for (uint64_t done = 0; done < n;) {
    const uint64_t key0 = first + done;
    // The first chunk may start mid-page; later ones start on a page boundary.
    const uint64_t to_page_end = kPageRows - key0 % kPageRows;
    const uint64_t cn = std::min<uint64_t>(
        n - done, chunk_rows - (to_page_end == kPageRows ? 0 : kPageRows - to_page_end));
    const uint64_t p0 = key0 / kPageRows;
    const uint64_t p1 = (key0 + cn + kPageRows - 1) / kPageRows;
    SIEVE_CUDA_TRY(cudaMemcpyAsync(d_table.as<int32_t>(), table.data() + p0,
                                   (p1 - p0) * sizeof(int32_t), cudaMemcpyHostToDevice, s));
    SIEVE_CUDA_TRY(cudaMemcpyAsync(staging.as<float>(), rows + done * dim, cn * dim * sizeof(float),
                                   cudaMemcpyHostToDevice, s));
    const int64_t warps = static_cast<int64_t>(cn);
    const unsigned grid =
        static_cast<unsigned>(std::min<int64_t>((warps * 32 + 255) / 256, 65535LL * 16));
    void* const* slabs = const_cast<void* const*>(r.d_slabs);
    switch (r.type) {
      case KeyType::kFloat16:
        detail::WritePagesKernel<__half><<<grid, 256, 0, s>>>(
            staging.as<float>(), static_cast<int64_t>(cn), static_cast<int>(dim), key0, p0,
            d_table.as<int32_t>(), slabs, r.slab_pages_log2, r.sq_norms);
        break;
      case KeyType::kBFloat16:
        detail::WritePagesKernel<__nv_bfloat16><<<grid, 256, 0, s>>>(
            staging.as<float>(), static_cast<int64_t>(cn), static_cast<int>(dim), key0, p0,
            d_table.as<int32_t>(), slabs, r.slab_pages_log2, r.sq_norms);
        break;
      case KeyType::kFloat32:
        detail::WritePagesKernel<float><<<grid, 256, 0, s>>>(
            staging.as<float>(), static_cast<int64_t>(cn), static_cast<int>(dim), key0, p0,
            d_table.as<int32_t>(), slabs, r.slab_pages_log2, r.sq_norms);
        break;
    }
    SIEVE_CUDA_CHECK_LAUNCH("WritePagesKernel");
    done += cn;
  }
  SIEVE_CUDA_TRY(cudaStreamSynchronize(s));
  return Status::OK();
}

PagedKeys PagePool::view() const {
  PagedKeys v;
  v.type = rep_->type;
  v.dim = rep_->dim;
  v.slabs = const_cast<const void* const*>(rep_->d_slabs);
  v.slab_pages_log2 = rep_->slab_pages_log2;
  v.sq_norms = rep_->sq_norms;
  v.page_maps = rep_->maps ? rep_->d_maps : nullptr;
  return v;
}

KeyType PagePool::type() const { return rep_->type; }
uint32_t PagePool::dim() const { return rep_->dim; }
uint32_t PagePool::pages_per_slab() const { return static_cast<uint32_t>(rep_->pages_per_slab()); }
uint64_t PagePool::allocated_pages() const { return rep_->allocated; }
uint64_t PagePool::capacity_pages() const { return rep_->capacity_pages(); }
size_t PagePool::device_bytes() const {
  const Rep& r = *rep_;
  return r.slabs.size() * r.slab_bytes + r.norms_pages * kPageRows * sizeof(float) +
         r.d_slabs_capacity * (sizeof(void*) + (r.d_maps != nullptr ? kPageMapBytes : 0));
}

}  // namespace sieve::gpu
