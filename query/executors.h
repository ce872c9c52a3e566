// Copyright 2026 The Sieve Authors.
//
// Executors: the backends one process searches with, and the one rule that turns a Device into
// one of them. The CPU executor always exists; the GPU executor is created on the first request
// that may use it (kAuto or kGpu) and kept, or its failure remembered.
//
//   kCpu  → the CPU executor;
//   kGpu  → the GPU executor, or Unavailable saying why there is none;
//   kAuto → the GPU executor when one could be created, else the CPU executor.
//
// Thread-safety: Resolve may be called from many threads; the executors it returns outlive the
// Executors object's callers as long as the object itself.

#ifndef SIEVE_QUERY_EXECUTORS_H_
#define SIEVE_QUERY_EXECUTORS_H_

#include <memory>
#include <mutex>

#include "query/executor.h"
#include "sieve/db.h"
#include "sieve/gpu_options.h"
#include "sieve/status.h"

namespace sieve {

class Executors {
 public:
  explicit Executors(const GpuExecutorOptions& gpu_options = GpuExecutorOptions());
  ~Executors();
  Executors(const Executors&) = delete;
  Executors& operator=(const Executors&) = delete;

  // *executor = the executor `device` names (see above); *resolved (may be null) = kCpu or
  // kGpu. Unavailable for kGpu without a usable GPU.
  Status Resolve(Device device, Executor** executor, Device* resolved = nullptr);

  // Has every executor created so far drop what it caches of shards' rows (after a shard's
  // rows were rewritten or its collection dropped).
  void ClearCaches();

 private:
  std::mutex mu_;
  GpuExecutorOptions gpu_options_;
  std::unique_ptr<Executor> cpu_;
  std::unique_ptr<Executor> gpu_;
  Status gpu_status_;  // why gpu_ is null, once tried
  bool gpu_tried_ = false;
};

}  // namespace sieve

#endif  // SIEVE_QUERY_EXECUTORS_H_
