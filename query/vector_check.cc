// Copyright 2026 The Sieve Authors.
//
// CheckVector (include/sieve/types.h): the float range every stored row and every query obeys.

#include <cmath>
#include <cstdio>
#include <string>

#include "sieve/types.h"

namespace sieve {

namespace {

std::string Sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

}  // namespace

Status CheckVector(const float* v, uint32_t dim) {
  // float64 holds every float32 square and their sum exactly enough for the bound (2^-120 ..
  // 2^120 is far inside its range), so the test itself cannot overflow or underflow.
  double sq = 0;
  uint32_t largest = 0;
  for (uint32_t j = 0; j < dim; ++j) {
    const float x = v[j];
    if (!std::isfinite(x)) {
      return Status::InvalidArgument("component " + std::to_string(j) + " is " +
                                     (std::isnan(x) ? "NaN" : "infinite"));
    }
    sq += static_cast<double>(x) * x;
    if (std::fabs(x) > std::fabs(v[largest])) largest = j;
  }
  if (sq == 0) return Status::OK();
  const double norm = std::sqrt(sq);
  if (norm >= kMinVectorNorm && norm <= kMaxVectorNorm) return Status::OK();
  return Status::InvalidArgument(
      "vector norm " + Sci(norm) + " is " + (norm > kMaxVectorNorm ? "above" : "below") +
      " the supported range (0, or 2^-60 to 2^60, about 8.7e-19 to 1.15e18, so that every "
      "distance stays finite in float32); its largest component is " +
      std::to_string(largest) + " = " + Sci(v[largest]));
}

}  // namespace sieve
