// Copyright 2026 The Sieve Authors.

#include "gpu/raft_select_k.cuh"

#include <exception>
#include <optional>
#include <string>

#include <raft/core/device_mdspan.hpp>
#include <raft/core/resource/cuda_stream.hpp>
#include <raft/core/resource/device_memory_resource.hpp>
#include <raft/core/resources.hpp>
#include <raft/matrix/select_k.cuh>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>

namespace sieve::gpu::detail {

struct RaftSelectK::Impl {
  raft::resources res;
};

RaftSelectK::RaftSelectK() = default;
RaftSelectK::~RaftSelectK() = default;

Status RaftSelectK::Create(cudaStream_t stream, size_t workspace_bytes,
                           std::unique_ptr<RaftSelectK>* out) {
  try {
    std::unique_ptr<RaftSelectK> s(new RaftSelectK());
    s->impl_ = std::make_unique<Impl>();
    raft::resource::set_cuda_stream(s->impl_->res, rmm::cuda_stream_view(stream));
    raft::resource::set_workspace_to_pool_resource(s->impl_->res, workspace_bytes);
    *out = std::move(s);
    return Status::OK();
  } catch (const rmm::bad_alloc& e) {
    return Status::ResourceExhausted(std::string("RAFT workspace: ") + e.what());
  } catch (const std::exception& e) {
    return Status::Internal(std::string("RAFT resources: ") + e.what());
  }
}

Status RaftSelectK::Select(const float* in, size_t rows, size_t len, int k, bool select_min,
                           float* out_val, uint32_t* out_pos) {
  if (k < 1 || static_cast<size_t>(k) > len) {
    return Status::Internal("select_k called with k outside [1, len]");
  }
  try {
    auto in_view = raft::make_device_matrix_view<const float, int64_t, raft::row_major>(
        in, static_cast<int64_t>(rows), static_cast<int64_t>(len));
    auto val_view = raft::make_device_matrix_view<float, int64_t, raft::row_major>(
        out_val, static_cast<int64_t>(rows), static_cast<int64_t>(k));
    auto pos_view = raft::make_device_matrix_view<uint32_t, int64_t, raft::row_major>(
        out_pos, static_cast<int64_t>(rows), static_cast<int64_t>(k));
    raft::matrix::select_k<float, uint32_t>(impl_->res, in_view, std::nullopt, val_view,
                                            pos_view, select_min, /*sorted=*/false);
  } catch (const rmm::bad_alloc& e) {
    return Status::ResourceExhausted(std::string("select_k: ") + e.what());
  } catch (const std::exception& e) {
    return Status::Internal(std::string("select_k: ") + e.what());
  }
  cudaError_t err = cudaGetLastError();
  if (err == cudaErrorMemoryAllocation) {
    return Status::ResourceExhausted(std::string("select_k: ") + cudaGetErrorString(err));
  }
  if (err != cudaSuccess) {
    return Status::Internal(std::string("select_k: ") + cudaGetErrorString(err));
  }
  return Status::OK();
}

}  // namespace sieve::gpu::detail
