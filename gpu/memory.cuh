// Copyright 2026 The Sieve Authors.
//
// Device and pinned host buffers of the backend. Searches allocate their workspaces per call
// from the device's stream-ordered pool (GpuExecutor::Create raises its release threshold, so
// freed memory stays in the pool and the next search reuses it).

#ifndef SIEVE_GPU_MEMORY_CUH_
#define SIEVE_GPU_MEMORY_CUH_

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>

#include "gpu/cuda_status.cuh"
#include "sieve/status.h"

namespace sieve::gpu::detail {

// A stream-ordered device allocation of n elements of T (cudaMallocAsync), freed on the same
// stream when reset or destroyed.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { Reset(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  Status Allocate(size_t n, cudaStream_t stream) {
    Reset();
    stream_ = stream;
    if (n == 0) return Status::OK();
    void* p = nullptr;
    SIEVE_RETURN_IF_ERROR(FromCuda(cudaMallocAsync(&p, n * sizeof(T), stream), "cudaMallocAsync"));
    ptr_ = static_cast<T*>(p);
    size_ = n;
    return Status::OK();
  }
  void Reset() {
    if (ptr_ != nullptr) (void)cudaFreeAsync(ptr_, stream_);
    ptr_ = nullptr;
    size_ = 0;
  }
  T* get() const { return ptr_; }
  size_t size() const { return size_; }

 private:
  T* ptr_ = nullptr;
  size_t size_ = 0;
  cudaStream_t stream_ = nullptr;
};

// Grow-only pinned host memory (uploads and downloads from it are truly asynchronous).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer() {
    if (ptr_ != nullptr) (void)cudaFreeHost(ptr_);
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  // REQUIRES: nothing in flight reads or writes the old buffer.
  Status Reserve(size_t bytes) {
    if (bytes <= bytes_) return Status::OK();
    const size_t want = std::max(bytes, bytes_ + bytes_ / 2);
    if (ptr_ != nullptr) (void)cudaFreeHost(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
    SIEVE_RETURN_IF_ERROR(FromCuda(cudaHostAlloc(&ptr_, want, cudaHostAllocDefault),
                                   "cudaHostAlloc"));
    bytes_ = want;
    return Status::OK();
  }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace sieve::gpu::detail

#endif  // SIEVE_GPU_MEMORY_CUH_
