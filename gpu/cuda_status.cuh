// Copyright 2026 The Sieve Authors.
//
// CUDA and cuBLAS errors as Status: ResourceExhausted when device memory ran out, Internal
// otherwise, the message naming the call. Every runtime call, cuBLAS call and kernel launch of
// the backend goes through one of the macros below.

#ifndef SIEVE_GPU_CUDA_STATUS_CUH_
#define SIEVE_GPU_CUDA_STATUS_CUH_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <string>

#include "sieve/status.h"

namespace sieve::gpu::detail {

inline Status FromCuda(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return Status::OK();
  std::string msg =
      std::string(what) + ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
  if (err == cudaErrorMemoryAllocation) return Status::ResourceExhausted(msg);
  return Status::Internal(msg);
}

inline Status FromCublas(cublasStatus_t st, const char* what) {
  if (st == CUBLAS_STATUS_SUCCESS) return Status::OK();
  std::string msg = std::string(what) + ": " + cublasGetStatusName(st) + " (" +
                    cublasGetStatusString(st) + ")";
  if (st == CUBLAS_STATUS_ALLOC_FAILED) return Status::ResourceExhausted(msg);
  return Status::Internal(msg);
}

}  // namespace sieve::gpu::detail

#define SIEVE_CUDA_TRY(call) SIEVE_RETURN_IF_ERROR(::sieve::gpu::detail::FromCuda((call), #call))
#define SIEVE_CUBLAS_TRY(call) \
  SIEVE_RETURN_IF_ERROR(::sieve::gpu::detail::FromCublas((call), #call))
// After every kernel launch: launch-configuration errors and earlier asynchronous faults.
#define SIEVE_CUDA_CHECK_LAUNCH(name) \
  SIEVE_RETURN_IF_ERROR(::sieve::gpu::detail::FromCuda(cudaGetLastError(), "launch " name))

#endif  // SIEVE_GPU_CUDA_STATUS_CUH_
