// Copyright 2026 The Sieve Authors.

#include "engine/executors.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "gpu/gpu_backend.h"
#include "query/cpu_executor.h"

namespace sieve {

namespace {

// More than any host has; probing for "every device" stops at the first that fails.
constexpr int kMaxDevices = 1024;
constexpr uint32_t kMaxCpuExecutors = 1024;

std::unique_ptr<DeviceSet> CpuSet(uint32_t n, uint64_t memory_bytes) {
  CpuExecutorOptions o;
  if (n > 1) {
    // The executors run at once, one per device thread: they share the cores.
    o.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency() / n));
  }
  std::vector<DeviceSet::Member> members;
  for (uint32_t i = 0; i < n; ++i) {
    members.push_back({"cpu" + std::to_string(i), std::make_unique<CpuExecutor>(o)});
  }
  return std::make_unique<DeviceSet>(std::move(members), memory_bytes);
}

std::vector<DeviceSet::Member> Members(const char* kind,
                                       std::vector<std::unique_ptr<Executor>> executors) {
  std::vector<DeviceSet::Member> out;
  for (size_t i = 0; i < executors.size(); ++i) {
    out.push_back({kind + std::to_string(i), std::move(executors[i])});
  }
  return out;
}

}  // namespace

Status ValidateDeviceOptions(const Options& options) {
  for (size_t i = 0; i < options.devices.size(); ++i) {
    if (options.devices[i] < 0 || options.devices[i] >= kMaxDevices) {
      return Status::InvalidArgument(
          "devices[" + std::to_string(i) + "]: " + std::to_string(options.devices[i]) +
          " is not a CUDA device number (0 to " + std::to_string(kMaxDevices - 1) + ")");
    }
  }
  if (options.devices.size() > static_cast<size_t>(kMaxDevices)) {
    return Status::InvalidArgument("devices: more than " + std::to_string(kMaxDevices) +
                                   " entries");
  }
  const FirstUseCalibration& f = options.first_use_calibration;
  if (f.mode != FirstUseCalibration::Mode::kUnknownDevices &&
      f.mode != FirstUseCalibration::Mode::kOff && f.mode != FirstUseCalibration::Mode::kAlways) {
    return Status::InvalidArgument("first_use_calibration.mode: not a mode (" +
                                   std::to_string(static_cast<int>(f.mode)) + ")");
  }
  if (!std::isfinite(f.time_limit_s) || f.time_limit_s < 0) {
    return Status::InvalidArgument("first_use_calibration.time_limit_s must be finite and >= 0");
  }
  if (f.max_rows < 1 || f.max_rows > UINT32_MAX) {
    return Status::InvalidArgument("first_use_calibration.max_rows must be 1 to 2^32 - 1, got " +
                                   std::to_string(f.max_rows));
  }
  // Checked here as well as where a GPU executor is made, so that a bad GPU option fails at
  // Open on a machine without a GPU too, instead of at the first GPU search elsewhere.
  SIEVE_RETURN_IF_ERROR(options.gpu.Validate().WithContext("gpu"));
  if (options.cpu_executors < 1 || options.cpu_executors > kMaxCpuExecutors) {
    return Status::InvalidArgument("cpu_executors must be 1 to " +
                                   std::to_string(kMaxCpuExecutors) + ", got " +
                                   std::to_string(options.cpu_executors));
  }
  return Status::OK();
}

Executors::Executors(const Options& options)
    : gpu_options_(options.gpu),
      devices_(options.devices),
      memory_bytes_(options.device_memory_bytes),
      cpu_(CpuSet(options.cpu_executors, options.device_memory_bytes)) {}

Executors::Executors(const GpuExecutorOptions& gpu_options)
    : gpu_options_(gpu_options), devices_{gpu_options.device}, cpu_(CpuSet(1, 0)) {}

Executors::Executors(std::vector<std::unique_ptr<Executor>> cpu,
                     std::vector<std::unique_ptr<Executor>> gpu, uint64_t memory_bytes)
    : memory_bytes_(memory_bytes),
      cpu_(std::make_unique<DeviceSet>(Members("cpu", std::move(cpu)), memory_bytes)),
      gpu_tried_(true) {
  if (gpu.empty()) {
    gpu_status_ = Status::Unavailable("no GPU executor was given");
  } else {
    gpu_ = std::make_unique<DeviceSet>(Members("gpu", std::move(gpu)), memory_bytes);
  }
}

Executors::~Executors() = default;

Status Executors::CreateGpuSet() {
  std::vector<DeviceSet::Member> members;
  std::map<int, int> seen;  // device → executors on it so far
  auto add = [&](int device) {
    GpuExecutorOptions o = gpu_options_;
    o.device = device;
    std::unique_ptr<Executor> e;
    Status s = gpu::CreateGpuExecutor(o, &e);
    if (!s.ok()) return s;
    const int n = seen[device]++;
    members.push_back(
        {"gpu" + std::to_string(device) + (n ? "/" + std::to_string(n) : ""), std::move(e)});
    return Status::OK();
  };
  if (devices_.empty()) {
    // Every device present: 0, 1, … up to the first that cannot be used.
    for (int d = 0; d < kMaxDevices; ++d) {
      Status s = add(d);
      if (!s.ok()) {
        if (d == 0) return s;
        break;
      }
    }
  } else {
    for (int d : devices_) {
      Status s = add(d);
      if (!s.ok())
        return Status::Unavailable("CUDA device " + std::to_string(d) + ": " + s.message());
    }
  }
  gpu_ = std::make_unique<DeviceSet>(std::move(members), memory_bytes_);
  return Status::OK();
}

void Executors::ClearCaches() {
  std::lock_guard<std::mutex> lock(mu_);
  if (cpu_ != nullptr) cpu_->ClearCaches();
  if (gpu_ != nullptr) gpu_->ClearCaches();
}

void Executors::Forget(uint32_t collection_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cpu_ != nullptr) cpu_->Forget(collection_id);
  if (gpu_ != nullptr) gpu_->Forget(collection_id);
}

Status Executors::ResolveSet(Device device, DeviceSet** set, Device* resolved) {
  std::lock_guard<std::mutex> l(mu_);
  if (device != Device::kCpu && !gpu_tried_) {
    gpu_tried_ = true;
    gpu_status_ = CreateGpuSet();
  }
  if (device == Device::kGpu && gpu_ == nullptr) {
    return Status::Unavailable("device gpu requested: " + gpu_status_.message());
  }
  const bool gpu = device != Device::kCpu && gpu_ != nullptr;
  *set = gpu ? gpu_.get() : cpu_.get();
  if (resolved != nullptr) *resolved = gpu ? Device::kGpu : Device::kCpu;
  return Status::OK();
}

Status Executors::Resolve(Device device, Executor** executor, Device* resolved) {
  DeviceSet* set = nullptr;
  SIEVE_RETURN_IF_ERROR(ResolveSet(device, &set, resolved));
  *executor = set->executor(0);
  return Status::OK();
}

}  // namespace sieve
