// Copyright 2026 The Sieve Authors.
//
// The GPU entry points of a build without the CUDA backend: every request for the GPU answers
// Unavailable, saying why, and GpuExecutor can never be created (its other members exist only
// so that code naming them links).

#include "gpu/gpu_backend.h"
#include "gpu/gpu_executor.h"

#ifndef SIEVE_GPU_UNAVAILABLE_REASON
#define SIEVE_GPU_UNAVAILABLE_REASON "this build of Sieve has no CUDA backend"
#endif

namespace sieve::gpu {

Status CreateGpuExecutor(std::unique_ptr<Executor>* executor) {
  executor->reset();
  return Status::Unavailable(SIEVE_GPU_UNAVAILABLE_REASON);
}

struct GpuExecutor::State {};

Status GpuExecutor::Create(int /*device*/, std::unique_ptr<GpuExecutor>* out) {
  out->reset();
  return Status::Unavailable(SIEVE_GPU_UNAVAILABLE_REASON);
}

GpuExecutor::GpuExecutor(std::unique_ptr<State> state) : state_(std::move(state)) {}
GpuExecutor::~GpuExecutor() = default;
std::string GpuExecutor::name() const { return "gpu:unavailable"; }
Status GpuExecutor::Search(const ShardView&, const BatchFilters&, const ExecRequest&,
                           ExecResult*) {
  return Status::Unavailable(SIEVE_GPU_UNAVAILABLE_REASON);
}
GpuPathCounts GpuExecutor::path_counts() const { return {}; }
uint64_t GpuExecutor::resident_bytes() const { return 0; }
uint64_t GpuExecutor::uploaded_rows() const { return 0; }
void GpuExecutor::ClearCache() {}
Status GpuExecutor::TimeDevicePart(const ShardView&, const BatchFilters&, const ExecRequest&, int,
                                   int, std::vector<double>*, ExecResult*) {
  return Status::Unavailable(SIEVE_GPU_UNAVAILABLE_REASON);
}
Status GpuExecutor::Run(const ShardView&, const BatchFilters&, const ExecRequest&, int, int,
                        std::vector<double>*, ExecResult*) {
  return Status::Unavailable(SIEVE_GPU_UNAVAILABLE_REASON);
}

}  // namespace sieve::gpu
