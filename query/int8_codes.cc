// Copyright 2026 The Sieve Authors.

#include "query/int8_codes.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace sieve {

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// The float32 at or above v (v >= 0), as __double2float_ru.
float RoundUp(double v) {
  if (!(v <= std::numeric_limits<float>::max())) return kInf;  // and NaN
  float f = static_cast<float>(v);
  if (static_cast<double>(f) < v) f = std::nextafter(f, kInf);
  return f;
}

// a - b rounded down / a + b rounded up, as __fsub_rd and __fadd_ru.
float SubDown(float a, float b) {
  float r = a - b;
  if (std::isfinite(r) && static_cast<double>(r) > static_cast<double>(a) - b) {
    r = std::nextafter(r, -kInf);
  }
  return r;
}
float AddUp(float a, float b) {
  float r = a + b;
  if (std::isfinite(r) && static_cast<double>(r) < static_cast<double>(a) + b) {
    r = std::nextafter(r, kInf);
  }
  return r;
}

// Widening of the float64 terms for their own rounding (dim · 2^-53 < 2^-36 at kInt8MaxDim).
constexpr double kTermWiden = 1.0 + 0x1p-30;

}  // namespace

uint32_t Int8CodeDim(uint32_t dim) {
  return (dim + kInt8CodeMultiple - 1) / kInt8CodeMultiple * kInt8CodeMultiple;
}

uint64_t Int8CodeBytesPerRow(uint32_t dim) { return uint64_t{Int8CodeDim(dim)} + 16; }

Int8Terms QuantizeInt8(const float* x, uint32_t dim, uint32_t code_dim, int8_t* codes) {
  float max_abs = 0;
  for (uint32_t j = 0; j < dim; ++j) max_abs = std::max(max_abs, std::fabs(x[j]));
  Int8Terms t;
  t.scale = max_abs / 127.0f;
  double qq = 0, rr = 0, xx = 0;
  for (uint32_t j = 0; j < dim; ++j) {
    int q = 0;
    if (t.scale > 0) {
      const float v = std::nearbyint(x[j] / t.scale);  // round half to even, as rintf
      q = static_cast<int>(std::clamp(v, -127.0f, 127.0f));
    }
    codes[j] = static_cast<int8_t>(q);
    const double r = static_cast<double>(x[j]) - static_cast<double>(t.scale) * q;
    qq += static_cast<double>(q) * q;
    rr += r * r;
    xx += static_cast<double>(x[j]) * x[j];
  }
  for (uint32_t j = dim; j < code_dim; ++j) codes[j] = 0;
  t.code_norm = RoundUp(static_cast<double>(t.scale) * std::sqrt(qq) * kTermWiden);
  t.residual_norm = RoundUp(std::sqrt(rr) * kTermWiden);
  t.norm = RoundUp(std::sqrt(xx) * kTermWiden);
  return t;
}

Int8QueryTerms QueryTerms(const Int8Terms& y) {
  Int8QueryTerms q;
  q.scale = y.scale;
  q.a = RoundUp((static_cast<double>(y.residual_norm) + 0x1p-22 * y.code_norm) * kTermWiden);
  q.b = y.norm;
  return q;
}

float Int8Estimate(int32_t dot, float row_scale, float query_scale) {
  volatile float d = static_cast<float>(dot);  // no contraction or excess precision
  volatile float p = row_scale * query_scale;
  return d * p;
}

float Int8DotError(float row_a, float row_b, const Int8QueryTerms& q) {
  volatile float t1 = row_a * q.a;
  volatile float t2 = row_b * q.b;
  volatile float s = t1 + t2;
  volatile float e = s + 0x1p-118f;
  return e * (1.0f + 0x1p-20f);
}

float Int8ReferenceError(uint32_t dim) {
  const double nu = static_cast<double>(dim) * 0x1p-24;
  return RoundUp(2.0 * nu / (1.0 - nu) + 0x1p-21);
}

float Int8DistanceError(Metric metric, float dot_err, float ref_rel, float qn2, float xn2) {
  const float qn = std::sqrt(qn2), xn = std::sqrt(xn2);
  volatile float qx = qn * xn;
  volatile float ref = ref_rel * qx;
  volatile float e = dot_err + ref;
  switch (metric) {
    case Metric::kInnerProduct:
      return e;
    case Metric::kL2: {
      volatile float norms = qn2 + xn2;
      volatile float two = 2.0f * e;
      return two + 0x1p-20f * norms;
    }
    default: {
      if (qn2 == 0.0f || xn2 == 0.0f) return 0.0f;
      volatile float rel = e / qx;
      return rel + 0x1p-20f;
    }
  }
}

int32_t Int8Dot(const int8_t* a, const int8_t* b, uint32_t code_dim) {
  int32_t s = 0;
  for (uint32_t j = 0; j < code_dim; ++j) s += int32_t{a[j]} * b[j];
  return s;
}

float FinishDistanceHost(Metric metric, float dot, float qn2, float xn2) {
  switch (metric) {
    case Metric::kL2: {
      volatile float n = qn2 + xn2;
      volatile float d = n - 2.0f * dot;
      return std::max(static_cast<float>(d), 0.0f);
    }
    case Metric::kInnerProduct:
      return dot;
    default: {
      if (qn2 == 0.0f || xn2 == 0.0f) return 1.0f;
      volatile float den = std::sqrt(qn2) * std::sqrt(xn2);
      volatile float r = dot / den;
      return 1.0f - r;
    }
  }
}

float SquaredNormHost(const float* x, uint32_t dim) {
  float s = 0;
  for (uint32_t j = 0; j < dim; ++j) s += x[j] * x[j];
  return s;
}

void Int8ScanEmulation(const float* rows, uint64_t n, uint32_t dim, const float* query,
                       Metric metric, float thresh, std::vector<Int8ScanRow>* keep) {
  keep->clear();
  const uint32_t cd = Int8CodeDim(dim);
  std::vector<int8_t> qc(cd), xc(cd);
  const Int8QueryTerms qt = QueryTerms(QuantizeInt8(query, dim, cd, qc.data()));
  const float qn2 = SquaredNormHost(query, dim);
  const float ref = Int8ReferenceError(dim);
  const bool select_min = metric != Metric::kInnerProduct;
  for (uint64_t i = 0; i < n; ++i) {
    const float* x = rows + i * dim;
    const Int8Terms xt = QuantizeInt8(x, dim, cd, xc.data());
    const float xn2 = SquaredNormHost(x, dim);
    const float est = Int8Estimate(Int8Dot(xc.data(), qc.data(), cd), xt.scale, qt.scale);
    const float d = FinishDistanceHost(metric, est, qn2, xn2);
    const float e =
        Int8DistanceError(metric, Int8DotError(xt.code_norm, xt.residual_norm, qt), ref, qn2, xn2);
    const bool kept = select_min ? SubDown(d, e) <= thresh : AddUp(d, e) >= thresh;
    if (kept) keep->push_back({static_cast<uint32_t>(i), d, e});
  }
}

std::vector<uint32_t> Int8Band(const std::vector<Int8ScanRow>& kept, uint32_t kf, Metric metric) {
  std::vector<uint32_t> out;
  if (kept.size() <= kf) {
    for (const Int8ScanRow& r : kept) out.push_back(r.row);
    return out;
  }
  const bool select_min = metric != Metric::kInnerProduct;
  // Worst cases as "smaller is better" keys.
  std::vector<float> worst;
  worst.reserve(kept.size());
  for (const Int8ScanRow& r : kept) {
    worst.push_back(select_min ? AddUp(r.dist, r.err) : -SubDown(r.dist, r.err));
  }
  std::nth_element(worst.begin(), worst.begin() + (kf - 1), worst.end());
  const float u = worst[kf - 1];
  for (const Int8ScanRow& r : kept) {
    const float best = select_min ? SubDown(r.dist, r.err) : -AddUp(r.dist, r.err);
    if (best <= u || u != u) out.push_back(r.row);
  }
  return out;
}

}  // namespace sieve
