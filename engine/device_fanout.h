// Copyright 2026 The Sieve Authors.
//
// RunConcurrently: runs one task per device at once, each in a thread of its own (the first on
// the calling thread), and returns when all have returned. A device's executor is driven by
// one thread, as the GPU executor needs; tasks must not throw.

#ifndef SIEVE_ENGINE_DEVICE_FANOUT_H_
#define SIEVE_ENGINE_DEVICE_FANOUT_H_

#include <cstddef>
#include <functional>

namespace sieve {

// Calls task(0), …, task(n - 1) concurrently. Where a thread cannot be started, its task runs
// on the calling thread after the others were started, so every task runs exactly once.
void RunConcurrently(size_t n, const std::function<void(size_t)>& task);

}  // namespace sieve

#endif  // SIEVE_ENGINE_DEVICE_FANOUT_H_
