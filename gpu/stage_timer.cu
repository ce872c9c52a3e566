// Copyright 2026 The Sieve Authors.

#include "gpu/stage_timer.cuh"

#include <cuda_runtime.h>

#include "gpu/cuda_status.cuh"

namespace sieve::gpu::detail {

StageTimer::~StageTimer() {
  for (cudaEvent_t e : events_) (void)cudaEventDestroy(e);
}

void StageTimer::Record(const char* name, cudaStream_t stream) {
  if (!on_ || failed_) return;
  if (used_ == events_.size()) {
    cudaEvent_t e = nullptr;
    if (cudaEventCreate(&e) != cudaSuccess) {
      (void)cudaGetLastError();
      failed_ = true;
      return;
    }
    events_.push_back(e);
    names_.push_back(nullptr);
  }
  names_[used_] = name;
  if (cudaEventRecord(events_[used_], stream) != cudaSuccess) {
    (void)cudaGetLastError();
    failed_ = true;
    return;
  }
  ++used_;
}

Status StageTimer::Read(cudaEvent_t start,
                        std::vector<std::pair<std::string, double>>* out) const {
  out->clear();
  if (failed_) return Status::Internal("stage timer: a CUDA event could not be recorded");
  float prev = 0;
  for (size_t i = 0; i < used_; ++i) {
    float t = 0;
    SIEVE_CUDA_TRY(cudaEventElapsedTime(&t, start, events_[i]));
    out->emplace_back(names_[i], t - prev);
    prev = t;
  }
  return Status::OK();
}

}  // namespace sieve::gpu::detail
