// Copyright 2026 The Sieve Authors.
//
// Page maps: the tensor map of a slab of keys, as the tensor-core kernel's TMA copies read it.

#include <cuda.h>  // CUtensorMap and its enums (the encoder comes through the runtime)
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <cstdint>
#include <string>

#include "gpu/threshold_select/threshold_select.h"

namespace sieve::gpu {

Status EncodePageMap(KeyType type, uint32_t dim, const void* slab, uint64_t rows, void* out) {
  if (!ThresholdSelectUsesTensorCores(type, dim)) {
    return Status::InvalidArgument("page map: keys of type " +
                                   std::to_string(static_cast<int>(type)) + " and dim " +
                                   std::to_string(dim) + " do not use the tensor-core kernel");
  }
  if (slab == nullptr || out == nullptr || rows == 0 || rows > (uint64_t{1} << 32)) {
    return Status::InvalidArgument("page map: no slab, no output, or a slab of " +
                                   std::to_string(rows) + " rows");
  }
  if (reinterpret_cast<uintptr_t>(slab) % 16 != 0 || reinterpret_cast<uintptr_t>(out) % 64 != 0) {
    return Status::InvalidArgument("page map: slab must be 16-byte and out 64-byte aligned");
  }
  static_assert(sizeof(CUtensorMap) == kPageMapBytes, "kPageMapBytes is a CUtensorMap");
  static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      fn = nullptr;
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  if (encode == nullptr) {
    return Status::Internal("page map: the driver has no cuTensorMapEncodeTiled");
  }
  // MmaCore's boxes: 64 keys by 64 dims with a 128-byte swizzle, or by 32 dims with a 64-byte
  // one where its DMAX is 32 (dim <= 32).
  const bool narrow = dim <= 32;
  const cuuint64_t global_dim[2] = {dim, rows};
  const cuuint64_t global_stride[1] = {uint64_t{dim} * KeyTypeBytes(type)};
  const cuuint32_t box[2] = {narrow ? 32u : 64u, kPageRows};
  const cuuint32_t element_stride[2] = {1, 1};
  const CUtensorMapDataType data_type = type == KeyType::kFloat16
                                            ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                            : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  const CUresult r =
      encode(static_cast<CUtensorMap*>(out), data_type, 2, const_cast<void*>(slab), global_dim,
             global_stride, box, element_stride, CU_TENSOR_MAP_INTERLEAVE_NONE,
             narrow ? CU_TENSOR_MAP_SWIZZLE_64B : CU_TENSOR_MAP_SWIZZLE_128B,
             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    return Status::Internal("page map: cuTensorMapEncodeTiled failed with CUresult " +
                            std::to_string(static_cast<int>(r)));
  }
  return Status::OK();
}

}  // namespace sieve::gpu
