// Copyright 2026 The Sieve Authors.
//
// Executors: the backends one process searches with, as two DeviceSets (engine/device_set.h),
// and the one rule that turns a Device into one of them. The CPU set always exists; the GPU set
// is created on the first request that may use it (kAuto or kGpu) and kept, or its failure
// remembered.
//
//   kCpu  → the CPU executors (Options::cpu_executors of them, one by default);
//   kGpu  → one GPU executor per entry of Options::devices (empty: every CUDA device present),
//           or Unavailable saying why there is none;
//   kAuto → the GPU executors when they could be created, else the CPU executors.
//
// Thread-safety: Resolve may be called from many threads; the executors it returns outlive the
// Executors object's callers as long as the object itself.

#ifndef SIEVE_ENGINE_EXECUTORS_H_
#define SIEVE_ENGINE_EXECUTORS_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/device_set.h"
#include "query/executor.h"
#include "sieve/db.h"
#include "sieve/gpu_options.h"
#include "sieve/status.h"

namespace sieve {

class Executors {
 public:
  // The executors of a DB opened with `options` (its gpu, devices, cpu_executors and
  // device_memory_bytes). REQUIRES: ValidateDeviceOptions(options) is OK.
  explicit Executors(const Options& options);
  // One CPU executor, and one GPU executor on gpu_options.device.
  explicit Executors(const GpuExecutorOptions& gpu_options = GpuExecutorOptions());
  // Exactly these executors, standing in for devices (tests): `cpu` for kCpu (at least one),
  // `gpu` for kGpu and kAuto (none: kGpu is Unavailable, kAuto the CPU), each device holding
  // `memory_bytes` of resident shards (0: each executor's own figure).
  Executors(std::vector<std::unique_ptr<Executor>> cpu, std::vector<std::unique_ptr<Executor>> gpu,
            uint64_t memory_bytes = 0);
  ~Executors();
  Executors(const Executors&) = delete;
  Executors& operator=(const Executors&) = delete;

  // *set = the executors `device` names (see above); *resolved (may be null) = kCpu or kGpu.
  // Unavailable for kGpu without a usable GPU, naming the device that failed.
  Status ResolveSet(Device device, DeviceSet** set, Device* resolved = nullptr);
  // The first executor of that set (calibration, thresholds).
  Status Resolve(Device device, Executor** executor, Device* resolved = nullptr);

  // Has every executor created so far drop what it caches of shards' rows (after a shard's
  // rows were rewritten or its collection dropped).
  void ClearCaches();
  // Forgets where collection `collection_id`'s shards were placed (it was dropped).
  void Forget(uint32_t collection_id);

 private:
  Status CreateGpuSet();  // REQUIRES: mu_ held

  std::mutex mu_;
  GpuExecutorOptions gpu_options_;
  std::vector<int> devices_;
  uint64_t memory_bytes_ = 0;
  std::unique_ptr<DeviceSet> cpu_;
  std::unique_ptr<DeviceSet> gpu_;
  Status gpu_status_;  // why gpu_ is null, once tried
  bool gpu_tried_ = false;
};

// InvalidArgument naming the first of Options::devices, cpu_executors and
// first_use_calibration out of range.
Status ValidateDeviceOptions(const Options& options);

}  // namespace sieve

#endif  // SIEVE_ENGINE_EXECUTORS_H_
