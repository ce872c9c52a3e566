// Copyright 2026 The Sieve Authors.

#include "query/window_plan.h"

#include <algorithm>

namespace sieve {

namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();
}  // namespace

uint64_t FirstRangeWindow(uint64_t limit) { return std::min(limit + 1, kFirstRangeWindow); }

uint64_t NextRangeWindow(uint64_t window, uint64_t limit) {
  const uint64_t next =
      window < limit + 1 ? std::min(window * kRangeGrowth, limit + 1) : window * 2;
  return next > kMaxSearchWindow ? 0 : next;
}

uint64_t FirstPageWindow(uint64_t rows_before, uint64_t k) {
  const uint64_t w = rows_before + k;
  return w > kMaxSearchWindow ? 0 : w;
}

uint64_t NextPageWindow(uint64_t window) { return window * 2 > kMaxSearchWindow ? 0 : window * 2; }

float ShardCoverBound(const double* sorted_keys, size_t n, uint64_t asked, uint64_t window,
                      uint64_t passing) {
  if (asked >= passing) return kInf;
  const uint64_t margin = asked > window ? asked - window : 0;
  if (n <= margin) return -kInf;  // nothing proven: a list shorter than asked
  return static_cast<float>(sorted_keys[n - margin]);
}

WindowOutcome DecideRange(const double* keys, size_t n, double radius_key, uint64_t limit,
                          float bound) {
  WindowOutcome out;
  const size_t within = static_cast<size_t>(std::upper_bound(keys, keys + n, radius_key) - keys);
  if (within > limit) {
    // The (limit + 1)-th row within the radius proven in place proves the first limit too.
    if (Covered(keys[limit], bound)) {
      out.verdict = WindowVerdict::kLimitReached;
      out.end = static_cast<size_t>(limit);
    }
    return out;
  }
  // Every row within the radius rounds to at most the radius's float32, below the bound.
  if (static_cast<float>(radius_key) < bound) {
    out.verdict = WindowVerdict::kDone;
    out.end = within;
  }
  return out;
}

WindowOutcome DecidePage(const double* keys, size_t n, size_t start, uint64_t k, float bound) {
  WindowOutcome out;
  const uint64_t want = start + k;
  if (bound == kInf) {
    // Every passing row is in the list.
    out.verdict = WindowVerdict::kDone;
    out.begin = std::min(start, n);
    out.end = static_cast<size_t>(std::min<uint64_t>(want, n));
    return out;
  }
  if (want <= n && Covered(keys[want - 1], bound)) {
    out.verdict = WindowVerdict::kDone;
    out.begin = start;
    out.end = static_cast<size_t>(want);
  }
  return out;
}

}  // namespace sieve
