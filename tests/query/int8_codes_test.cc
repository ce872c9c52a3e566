// Copyright 2026 The Sieve Authors.
//
// The int8 codes' contract (query/int8_codes.h): the dot bound holds for every kind of row, and
// a scan of codes that keeps the band and rescores it exactly finds the float64 oracle's top-k.

#include "query/int8_codes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tests/testutil.h"

namespace sieve {
namespace {

enum class Kind { kRandom, kClustered, kLarge, kTiny, kDenormal, kZero, kSpike, kInteger };

const char* KindName(Kind k) {
  switch (k) {
    case Kind::kRandom:
      return "random";
    case Kind::kClustered:
      return "clustered";
    case Kind::kLarge:
      return "large";
    case Kind::kTiny:
      return "tiny";
    case Kind::kDenormal:
      return "denormal";
    case Kind::kZero:
      return "zero";
    case Kind::kSpike:
      return "spike";
    case Kind::kInteger:
      return "integer";
  }
  return "?";
}

// n rows of dim floats of the kind.
std::vector<float> Rows(Kind kind, size_t n, uint32_t dim, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n * dim);
  std::vector<float> centers(8 * size_t{dim});
  for (float& c : centers) c = normal(rng);
  for (size_t i = 0; i < n; ++i) {
    float* x = v.data() + i * dim;
    for (uint32_t j = 0; j < dim; ++j) {
      switch (kind) {
        case Kind::kRandom:
          x[j] = normal(rng);
          break;
        case Kind::kClustered:
          x[j] = centers[(i % 8) * dim + j] + 0.01f * normal(rng);
          break;
        case Kind::kLarge:
          x[j] = 1e15f * normal(rng);
          break;
        case Kind::kTiny:
          x[j] = 1e-20f * normal(rng);
          break;
        case Kind::kDenormal:
          x[j] = 1e-39f * normal(rng);
          break;
        case Kind::kZero:
          x[j] = 0.0f;
          break;
        case Kind::kSpike:
          x[j] = j == i % dim ? 1000.0f : 1e-3f * normal(rng);
          break;
        case Kind::kInteger:
          x[j] = static_cast<float>(static_cast<int>(rng() % 255) - 127);
          break;
      }
    }
  }
  return v;
}

long double ExactDot(const float* a, const float* b, uint32_t dim) {
  long double s = 0;
  for (uint32_t j = 0; j < dim; ++j) s += static_cast<long double>(a[j]) * b[j];
  return s;
}

// The distance of the exact dot with the stored float32 squared norms, in long double.
double FinishExact(Metric m, long double dot, float qn2, float xn2) {
  switch (m) {
    case Metric::kL2:
      return static_cast<double>(
          std::max<long double>(static_cast<long double>(qn2) + xn2 - 2 * dot, 0));
    case Metric::kInnerProduct:
      return static_cast<double>(dot);
    default:
      if (qn2 == 0 || xn2 == 0) return 1.0;
      return static_cast<double>(1 - dot / (std::sqrt(static_cast<long double>(qn2)) *
                                            std::sqrt(static_cast<long double>(xn2))));
  }
}

TEST(Int8CodesTest, CodeDimAndBytes) {
  EXPECT_EQ(Int8CodeDim(1), 16u);
  EXPECT_EQ(Int8CodeDim(16), 16u);
  EXPECT_EQ(Int8CodeDim(17), 32u);
  EXPECT_EQ(Int8CodeDim(1536), 1536u);
  EXPECT_EQ(Int8CodeBytesPerRow(100), 112u + 16u);
}

TEST(Int8CodesTest, QuantizeCodesAndPads) {
  const float x[3] = {1.0f, -0.5f, 0.25f};
  int8_t codes[16];
  std::fill(codes, codes + 16, int8_t{99});
  const Int8Terms t = QuantizeInt8(x, 3, 16, codes);
  EXPECT_FLOAT_EQ(t.scale, 1.0f / 127.0f);
  EXPECT_EQ(codes[0], 127);
  EXPECT_EQ(codes[1], -64);  // -63.5 to even
  EXPECT_EQ(codes[2], 32);   // 31.75
  for (int j = 3; j < 16; ++j) EXPECT_EQ(codes[j], 0) << j;
  EXPECT_GE(t.norm, std::sqrt(1.3125f));
  EXPECT_GT(t.residual_norm, 0.0f);
  const float zero[4] = {0, 0, 0, 0};
  const Int8Terms z = QuantizeInt8(zero, 4, 16, codes);
  EXPECT_EQ(z.scale, 0.0f);
  EXPECT_EQ(z.code_norm, 0.0f);
  EXPECT_EQ(z.residual_norm, 0.0f);
  EXPECT_EQ(z.norm, 0.0f);
}

// |x·y - est| <= Int8DotError for every pair, and the distance bound against the float64
// distance, over every kind of row and dims 1..1536.
TEST(Int8CodesTest, BoundHolds) {
  const std::vector<uint32_t> dims = {1, 2, 3, 5, 16, 17, 31, 64, 96, 128, 255, 384, 768, 1536};
  const std::vector<Kind> kinds = {Kind::kRandom,   Kind::kClustered, Kind::kLarge, Kind::kTiny,
                                   Kind::kDenormal, Kind::kZero,      Kind::kSpike, Kind::kInteger};
  uint64_t checked = 0, nonzero_err = 0;
  double worst_ratio = 0;
  for (uint32_t dim : dims) {
    const uint32_t cd = Int8CodeDim(dim);
    for (Kind rk : kinds) {
      // Queries of every magnitude against every kind of row (tiny or denormal rows against
      // large queries: the scales' product is normal while a row's alone is not).
      for (Kind qk : {Kind::kRandom, Kind::kClustered, Kind::kLarge, Kind::kDenormal, rk}) {
        const size_t n = dim >= 768 ? 12 : 40;
        const std::vector<float> rows = Rows(rk, n, dim, 7 + dim);
        const std::vector<float> queries = Rows(qk, 4, dim, 1000 + dim);
        std::vector<int8_t> xc(cd), qc(cd);
        for (size_t qi = 0; qi < 4; ++qi) {
          const float* y = queries.data() + qi * dim;
          const Int8QueryTerms qt = QueryTerms(QuantizeInt8(y, dim, cd, qc.data()));
          const float qn2 = SquaredNormHost(y, dim);
          for (size_t i = 0; i < n; ++i) {
            const float* x = rows.data() + i * dim;
            const Int8Terms xt = QuantizeInt8(x, dim, cd, xc.data());
            const float est = Int8Estimate(Int8Dot(xc.data(), qc.data(), cd), xt.scale, qt.scale);
            const float err = Int8DotError(xt.code_norm, xt.residual_norm, qt);
            const long double exact = ExactDot(x, y, dim);
            const long double diff = std::fabs(exact - static_cast<long double>(est));
            ASSERT_LE(diff, static_cast<long double>(err))
                << KindName(rk) << "/" << KindName(qk) << " dim " << dim << " row " << i;
            ++checked;
            if (diff > 0) {
              ++nonzero_err;
              worst_ratio = std::max(worst_ratio, static_cast<double>(diff / err));
            }
            // Distances: the estimate's against the one of the exact dot and the stored norms
            // (the device's reference is within the reference allowance of it).
            const float xn2 = SquaredNormHost(x, dim);
            for (Metric m : {Metric::kL2, Metric::kInnerProduct, Metric::kCosine}) {
              const float d = FinishDistanceHost(m, est, qn2, xn2);
              const float e = Int8DistanceError(m, err, Int8ReferenceError(dim), qn2, xn2);
              const double oracle = FinishExact(m, exact, qn2, xn2);
              ASSERT_LE(std::fabs(oracle - d), static_cast<double>(e) * (1 + 1e-6) + 1e-300)
                  << KindName(rk) << "/" << KindName(qk) << " dim " << dim << " row " << i
                  << " metric " << MetricName(m);
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 10000u);
  EXPECT_GT(nonzero_err, checked / 2);  // the estimates are not exact: the bound was exercised
  EXPECT_LT(worst_ratio, 1.0);
}

// The bound is not vacuous: on random rows it is a small fraction of |x| |y|.
TEST(Int8CodesTest, BoundIsTight) {
  const uint32_t dim = 128, cd = Int8CodeDim(dim);
  const std::vector<float> rows = Rows(Kind::kRandom, 100, dim, 3);
  const std::vector<float> q = Rows(Kind::kRandom, 1, dim, 4);
  std::vector<int8_t> xc(cd), qc(cd);
  const Int8Terms qraw = QuantizeInt8(q.data(), dim, cd, qc.data());
  const Int8QueryTerms qt = QueryTerms(qraw);
  for (size_t i = 0; i < 100; ++i) {
    const Int8Terms xt = QuantizeInt8(rows.data() + i * dim, dim, cd, xc.data());
    const float err = Int8DotError(xt.code_norm, xt.residual_norm, qt);
    EXPECT_LT(err, 0.03f * xt.norm * qraw.norm) << i;
  }
}

struct ScanCase {
  Kind kind;
  uint32_t dim;
  Metric metric;
  uint32_t k;
  bool near_ties;
};

// Emulates the GPU: a float32 sample threshold over the first `sample` rows, the int8 scan, the
// band, the exact rescore (float64 here), and compares the k best with the oracle.
void CheckScan(const ScanCase& c) {
  const size_t n = 20000, sample = 4096;
  std::vector<float> rows = Rows(c.kind, n, c.dim, 11 + c.dim + c.k);
  std::vector<float> queries =
      Rows(c.kind == Kind::kClustered ? Kind::kClustered : Kind::kRandom, 3, c.dim, 99 + c.k);
  if (c.near_ties) {
    // Rows that differ from a query's near neighbour below int8 resolution (one coordinate by
    // about 2^-20 of its magnitude), and exact duplicates: identical codes, distinct or tied
    // distances.
    std::mt19937_64 rng(5);
    for (size_t i = 0; i < n; ++i) {
      if (i % 7 != 0) continue;
      const float* y = queries.data() + (i % 3) * c.dim;
      float* x = rows.data() + i * c.dim;
      for (uint32_t j = 0; j < c.dim; ++j) x[j] = y[j] + 0.05f;
      if (i % 14 == 0) {
        const uint32_t j = static_cast<uint32_t>(rng() % c.dim);
        x[j] = std::nextafter(x[j] * (1 + 0x1p-20f), 1e30f);
      }
    }
  }
  const bool select_min = c.metric != Metric::kInnerProduct;
  uint64_t kept_total = 0;
  for (size_t qi = 0; qi < 3; ++qi) {
    const float* y = queries.data() + qi * c.dim;
    // The sample threshold as the device computes it: float32 dots and distances.
    const float qn2 = SquaredNormHost(y, c.dim);
    std::vector<float> sd(sample);
    for (size_t i = 0; i < sample; ++i) {
      const float* x = rows.data() + i * c.dim;
      float dot = 0;
      for (uint32_t j = 0; j < c.dim; ++j) dot += y[j] * x[j];
      sd[i] = FinishDistanceHost(c.metric, dot, qn2, SquaredNormHost(x, c.dim));
    }
    if (select_min) {
      std::nth_element(sd.begin(), sd.begin() + (c.k - 1), sd.end());
    } else {
      std::nth_element(sd.begin(), sd.begin() + (c.k - 1), sd.end(), std::greater<float>());
    }
    const float thresh = sd[c.k - 1];
    std::vector<Int8ScanRow> kept;
    Int8ScanEmulation(rows.data(), n, c.dim, y, c.metric, thresh, &kept);
    kept_total += kept.size();
    const std::vector<uint32_t> band = Int8Band(kept, c.k, c.metric);
    ASSERT_LE(band.size(), kept.size());
    // Exact rescore of the band, (distance, row) order.
    std::vector<std::pair<double, uint32_t>> scored;
    for (uint32_t r : band) {
      double d = test::OracleDistance(c.metric, y, rows.data() + size_t{r} * c.dim, c.dim);
      scored.push_back({select_min ? d : -d, r});
    }
    std::sort(scored.begin(), scored.end());
    scored.resize(std::min<size_t>(scored.size(), c.k));
    const auto oracle =
        test::OracleTopK(c.metric, y, rows.data(), n, c.dim, c.k, [](uint32_t) { return true; });
    ASSERT_EQ(scored.size(), oracle.size());
    for (size_t i = 0; i < oracle.size(); ++i) {
      ASSERT_EQ(scored[i].second, oracle[i].first)
          << KindName(c.kind) << " dim " << c.dim << " " << MetricName(c.metric) << " k " << c.k
          << (c.near_ties ? " near ties" : "") << " query " << qi << " rank " << i;
    }
  }
  // The scan pruned: a scan that kept every row would pass the comparison above trivially.
  if (!c.near_ties) {
    EXPECT_LT(kept_total, 3 * n / 2) << KindName(c.kind) << " dim " << c.dim;
  }
}

TEST(Int8CodesTest, BandAndRescoreEqualOracle) {
  for (Kind kind : {Kind::kRandom, Kind::kClustered}) {
    for (uint32_t dim : {7u, 64u, 128u}) {
      for (Metric m : {Metric::kL2, Metric::kInnerProduct, Metric::kCosine}) {
        for (uint32_t k : {1u, 10u, 100u}) {
          for (bool near : {false, true}) CheckScan({kind, dim, m, k, near});
        }
      }
    }
  }
}

}  // namespace
}  // namespace sieve
