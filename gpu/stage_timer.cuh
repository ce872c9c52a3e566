// Copyright 2026 The Sieve Authors.
//
// StageTimer: the device time between named points of a run of a search, from CUDA events
// recorded in its stream. Off, it records nothing (searches pay nothing for it).
//
// Thread-safety: none; one per executor, used under its lock.

#ifndef SIEVE_GPU_STAGE_TIMER_CUH_
#define SIEVE_GPU_STAGE_TIMER_CUH_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "sieve/status.h"

namespace sieve::gpu::detail {

class StageTimer {
 public:
  StageTimer() = default;
  ~StageTimer();
  StageTimer(const StageTimer&) = delete;
  StageTimer& operator=(const StageTimer&) = delete;

  // Starts a run; records its stages only when `on`.
  void Start(bool on) {
    on_ = on;
    failed_ = false;
    used_ = 0;
  }
  // Marks the end of stage `name` (a string literal) in `stream`.
  void Record(const char* name, cudaStream_t stream);
  // After the run has synchronized: (stage, device milliseconds since the previous mark, the
  // first since `start`). Internal when an event could not be created, recorded or read.
  Status Read(cudaEvent_t start, std::vector<std::pair<std::string, double>>* out) const;

 private:
  bool on_ = false;
  bool failed_ = false;
  std::vector<cudaEvent_t> events_;
  std::vector<const char*> names_;
  size_t used_ = 0;
};

}  // namespace sieve::gpu::detail

#endif  // SIEVE_GPU_STAGE_TIMER_CUH_
