// Copyright 2026 The Sieve Authors.
//
// RaftSelectK wraps raft::matrix::select_k for float values and uint32 positions, the only
// instantiation Sieve compiles (in raft_select_k.cu, kept apart because it is the slowest
// translation unit to build). No RAFT type appears here, and no exception leaves it.
//
// Thread-safety: one object per stream; not for concurrent use.

#ifndef SIEVE_GPU_RAFT_SELECT_K_CUH_
#define SIEVE_GPU_RAFT_SELECT_K_CUH_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "sieve/status.h"

namespace sieve::gpu::detail {

class RaftSelectK {
 public:
  // Works on `stream`; RAFT's temporary buffers come from a pool of at most `workspace_bytes`.
  static Status Create(cudaStream_t stream, size_t workspace_bytes,
                       std::unique_ptr<RaftSelectK>* out);
  ~RaftSelectK();

  // For each of `rows` rows of `len` values (row-major, contiguous), writes the k best values
  // (smallest when select_min) and their positions in [0, len), in no particular order.
  // REQUIRES: 1 <= k <= len. Asynchronous on the stream. ResourceExhausted when the device is
  // out of memory; Internal for other failures.
  Status Select(const float* in, size_t rows, size_t len, int k, bool select_min,
                float* out_val, uint32_t* out_pos);

 private:
  struct Impl;
  RaftSelectK();
  std::unique_ptr<Impl> impl_;
};

}  // namespace sieve::gpu::detail

#endif  // SIEVE_GPU_RAFT_SELECT_K_CUH_
