// Copyright 2026 The Sieve Authors.

#include "engine/memory_budget.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>

#include "sieve/db.h"

namespace sieve {

MemoryBudget::Reservation& MemoryBudget::Reservation::operator=(Reservation&& other) noexcept {
  if (this != &other) {
    if (budget_ != nullptr) budget_->Release(bytes_);
    budget_ = other.budget_;
    bytes_ = other.bytes_;
    other.budget_ = nullptr;
  }
  return *this;
}

MemoryBudget::Reservation::~Reservation() {
  if (budget_ != nullptr) budget_->Release(bytes_);
}

uint64_t MemoryBudget::reserved() const {
  std::lock_guard<std::mutex> l(mu_);
  return reserved_;
}

MemoryBudget::Reservation MemoryBudget::Reserve(uint64_t bytes) {
  std::unique_lock<std::mutex> l(mu_);
  const uint64_t ticket = next_ticket_++;
  cv_.wait(l, [&] { return ticket == serving_ticket_ && reserved_ + bytes <= bytes_; });
  reserved_ += bytes;
  ++serving_ticket_;
  // The next ticket may fit beside this one.
  cv_.notify_all();
  return Reservation(this, bytes);
}

void MemoryBudget::Release(uint64_t bytes) {
  {
    std::lock_guard<std::mutex> l(mu_);
    reserved_ -= bytes;
  }
  cv_.notify_all();
}

std::string DescribeBytes(uint64_t bytes) {
  static const char* kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  size_t u = 0;
  while (v >= 1024 && u + 1 < sizeof(kUnits) / sizeof(kUnits[0])) {
    v /= 1024;
    ++u;
  }
  char buf[64];
  if (u == 0) {
    std::snprintf(buf, sizeof(buf), "%llu bytes", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f %s (%llu bytes)", v, kUnits[u],
                  static_cast<unsigned long long>(bytes));
  }
  return buf;
}

uint64_t DefaultMemoryBudget() {
  uint64_t limit = std::numeric_limits<uint64_t>::max();
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) limit = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
  for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    rlimit rl{};
    if (getrlimit(resource, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
      limit = std::min<uint64_t>(limit, rl.rlim_cur);
    }
  }
  // cgroup v2, as a container sees its own group at the root of /sys/fs/cgroup; "max" (no
  // limit) and a missing file leave the limit alone.
  std::ifstream cgroup("/sys/fs/cgroup/memory.max");
  unsigned long long cg = 0;
  if (cgroup >> cg && cg > 0) limit = std::min<uint64_t>(limit, cg);
  constexpr uint64_t kFloor = 64ull << 20;
  return std::max(limit / 2, kFloor);
}

}  // namespace sieve
