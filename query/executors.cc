// Copyright 2026 The Sieve Authors.

#include "query/executors.h"

#include <memory>

#include "gpu/gpu_backend.h"
#include "query/cpu_executor.h"

namespace sieve {

Executors::Executors(const GpuExecutorOptions& gpu_options)
    : gpu_options_(gpu_options), cpu_(std::make_unique<CpuExecutor>()) {}

Executors::~Executors() = default;

void Executors::ClearCaches() {
  std::lock_guard<std::mutex> lock(mu_);
  if (cpu_ != nullptr) cpu_->ClearCache();
  if (gpu_ != nullptr) gpu_->ClearCache();
}

Status Executors::Resolve(Device device, Executor** executor, Device* resolved) {
  std::lock_guard<std::mutex> l(mu_);
  if (device != Device::kCpu && !gpu_tried_) {
    gpu_tried_ = true;
    gpu_status_ = gpu::CreateGpuExecutor(gpu_options_, &gpu_);
  }
  if (device == Device::kGpu && gpu_ == nullptr) {
    return Status::Unavailable("device gpu requested: " + gpu_status_.message());
  }
  const bool gpu = device != Device::kCpu && gpu_ != nullptr;
  *executor = gpu ? gpu_.get() : cpu_.get();
  if (resolved != nullptr) *resolved = gpu ? Device::kGpu : Device::kCpu;
  return Status::OK();
}

}  // namespace sieve
