// Copyright 2026 The Sieve Authors.

#include "engine/device_fanout.h"

#include <system_error>
#include <thread>
#include <vector>

namespace sieve {

void RunConcurrently(size_t n, const std::function<void(size_t)>& task) {
  if (n == 0) return;
  std::vector<std::thread> threads;
  std::vector<size_t> inline_tasks;
  threads.reserve(n);
  for (size_t i = 1; i < n; ++i) {
    try {
      threads.emplace_back(task, i);
    } catch (const std::system_error&) {
      inline_tasks.push_back(i);  // no thread to be had: run it here
    }
  }
  task(0);
  for (size_t i : inline_tasks) task(i);
  for (auto& t : threads) t.join();
}

}  // namespace sieve
