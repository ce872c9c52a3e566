// Copyright 2026 The Sieve Authors.

#include "query/planner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace sieve {
namespace {

// A flat rule: SDDMM below 2,000 rows, gather below 3% at every size, bitmaps by count.
PlannerRule Fixed() {
  PlannerRule t;
  t.sddmm_max_rows = 2000;
  t.sddmm_max_fraction = 1.0;
  t.gather_min_rows = 0;
  t.gather_scale = 1e9;
  t.gather_max_fraction = 0.03;
  t.bitmap_sddmm_max_rows = 1000;
  t.bitmap_sddmm_max_fraction = 1.0;
  t.bitmap_union_gather = true;
  t.bitmap_gather_max_fraction = 0.05;
  t.source = "test";
  return t;
}

PlanInput Bitset(uint64_t rows, uint64_t pass, uint32_t dim = 128, uint32_t k = 10) {
  PlanInput in;
  in.rows = rows;
  in.dim = dim;
  in.num_queries = 16;
  in.k = k;
  in.passing_rows = pass;
  return in;
}

PlanInput Bitmap(uint64_t rows, uint64_t mean_pass, uint64_t union_rows,
                 uint64_t max_pass = 0) {
  PlanInput in = Bitset(rows, mean_pass);
  in.per_query = true;
  in.union_rows = union_rows;
  in.max_passing_rows = max_pass;
  return in;
}

TEST(PlannerTest, BitsetBoundaries) {
  const PlannerRule t = Fixed();
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 1)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 1999)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 2000)), SearchPath::kGather);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 29999)), SearchPath::kGather);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 30000)), SearchPath::kDense);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 1000000)), SearchPath::kDense);
  // The SDDMM bound is absolute: in a small shard it covers everything.
  EXPECT_EQ(ChoosePath(t, Bitset(1500, 1500)), SearchPath::kSddmm);
  // Above the SDDMM bound but over the gather fraction: dense, never gather.
  EXPECT_EQ(ChoosePath(t, Bitset(10000, 5000)), SearchPath::kDense);
}

TEST(PlannerTest, BitmapBoundaries) {
  const PlannerRule t = Fixed();
  EXPECT_EQ(ChoosePath(t, Bitmap(1000000, 999, 16000)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitmap(1000000, 1000, 16000)), SearchPath::kGather);
  EXPECT_EQ(ChoosePath(t, Bitmap(1000000, 1001, 49999)), SearchPath::kGather);
  EXPECT_EQ(ChoosePath(t, Bitmap(1000000, 1001, 50000)), SearchPath::kDense);
  // The bitset thresholds do not apply to bitmaps.
  EXPECT_EQ(ChoosePath(t, Bitmap(1000000, 1500, 40000)), SearchPath::kGather);
  // A share bound: SDDMM only while the mean set is a small part of the union.
  PlannerRule share = t;
  share.bitmap_sddmm_max_share = 0.2;
  EXPECT_EQ(ChoosePath(share, Bitmap(1000000, 999, 16000)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(share, Bitmap(1000000, 999, 4000)), SearchPath::kGather);
  // Without the union gather a bitmap is SDDMM or dense.
  PlannerRule no_union = t;
  no_union.bitmap_union_gather = false;
  EXPECT_EQ(ChoosePath(no_union, Bitmap(1000000, 1500, 40000)), SearchPath::kDense);
}

TEST(PlannerTest, EmptyShardOrNothingPassingIsSddmm) {
  const PlannerRule t = Fixed();
  EXPECT_EQ(ChoosePath(t, Bitset(0, 0)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 0)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitmap(1000000, 0, 0)), SearchPath::kSddmm);
  PlannerRule zero;  // even with every threshold 0
  EXPECT_EQ(ChoosePath(zero, Bitset(1000000, 0)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(zero, Bitset(1000000, 1)), SearchPath::kDense);
  EXPECT_EQ(ChoosePath(zero, Bitmap(1000000, 1, 16)), SearchPath::kDense);
}

// The SDDMM bound as a budget that falls with dim: sddmm_max_rows at dim 128, scaled by
// (128 / dim)^sddmm_dim_exponent.
TEST(PlannerTest, SddmmBoundScalesWithDim) {
  PlannerRule t = Fixed();
  t.gather_max_fraction = 0.5;
  t.sddmm_dim_exponent = 1.0;  // a budget on passing rows × dim of 256,000
  EXPECT_DOUBLE_EQ(SddmmMaxRows(t, 128), 2000);
  EXPECT_DOUBLE_EQ(SddmmMaxRows(t, 512), 500);
  EXPECT_DOUBLE_EQ(SddmmMaxRows(t, 32), 8000);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 1999, 128)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 2000, 128)), SearchPath::kGather);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 499, 512)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 500, 512)), SearchPath::kGather);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 1999, 512)), SearchPath::kGather);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 7999, 32)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 8000, 32)), SearchPath::kGather);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 249, 1024)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 250, 1024)), SearchPath::kGather);
  // A fractional exponent: 4× the dim halves the bound at 0.5.
  t.sddmm_dim_exponent = 0.5;
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 999, 512)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 1000, 512)), SearchPath::kGather);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 3999, 32)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 4000, 32)), SearchPath::kGather);
  // Exponent 0 is one count at every dim (a calibration stored before the exponent existed).
  t.sddmm_dim_exponent = 0;
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 1999, 2048)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 2000, 8)), SearchPath::kGather);
  // No count bound at all.
  t.sddmm_max_rows = UINT64_MAX;
  t.sddmm_dim_exponent = 1.0;
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 900000, 4096)), SearchPath::kSddmm);
}

// A filter per query whose sets are all one set (the mean count is the union's) is planned as
// that set, by the bitset rule, whatever the bitmap bounds say; a set just short of the union
// is not.
TEST(PlannerTest, OneSetForEveryQueryIsPlannedAsABitset) {
  PlannerRule t = Fixed();
  t.bitmap_sddmm_max_rows = 0;  // the bitmap rule would never choose SDDMM
  t.bitmap_union_gather = false;
  t.bitmap_gather_max_fraction = 0;
  for (uint64_t rows : {100000ull, 10000000ull}) {
    for (uint64_t n : std::vector<uint64_t>{1, 500, 5000, rows / 10, rows / 2, rows - 1}) {
      for (uint32_t dim : {64u, 1024u}) {
        PlanInput same = Bitmap(rows, n, n, n);
        same.dim = dim;
        EXPECT_TRUE(SameSetForEveryQuery(same));
        EXPECT_EQ(ChoosePath(t, same), ChoosePath(t, Bitset(rows, n, dim)))
            << rows << " rows, " << n << " passing, dim " << dim;
      }
    }
  }
  EXPECT_EQ(ChoosePath(t, Bitmap(10000000, 500, 500, 500)), SearchPath::kSddmm);
  EXPECT_FALSE(SameSetForEveryQuery(Bitmap(10000000, 500, 501, 500)));
  EXPECT_EQ(ChoosePath(t, Bitmap(10000000, 500, 501, 500)), SearchPath::kDense);
  EXPECT_FALSE(SameSetForEveryQuery(Bitset(10000000, 500)));
}

// The defaults a device plans with before any calibration: the CPU's, the thresholds shipped
// for the H200, and the cuVS-form GPU defaults for any other GPU. The H200's pick the path that
// was fastest on an H200 at each of these points (tools/bench/results/2026-12-02-h200-filters).
TEST(PlannerTest, DefaultsByDeviceName) {
  EXPECT_EQ(PlannerRule::DefaultsFor("cpu").source, PlannerRule::CpuDefaults().source);
  EXPECT_EQ(PlannerRule::DefaultsFor("gpu:NVIDIA A100-SXM4-80GB").source,
            PlannerRule::GpuDefaults().source);
  EXPECT_EQ(PlannerRule::DefaultsFor("gpu").source, PlannerRule::GpuDefaults().source);
  const PlannerRule h200 = PlannerRule::DefaultsFor("gpu:NVIDIA H200");
  EXPECT_EQ(h200.source.rfind("shipped for the NVIDIA H200", 0), 0u) << h200.source;
  EXPECT_EQ(PlannerRule::DefaultsFor("gpu:NVIDIA H200 NVL").source, h200.source);
  // The shipped thresholds survive the stored form.
  PlannerRule parsed;
  ASSERT_TRUE(PlannerRule::FromJson(h200.ToJson(), &parsed).ok());
  EXPECT_EQ(parsed.ToJson(), h200.ToJson());
  const uint64_t rows = 10000000;
  auto bitset = [&](uint64_t n) { return Bitset(rows, n, 128, 64); };
  auto independent = [&](uint64_t n, uint64_t union_rows) {
    PlanInput in = Bitmap(rows, n, union_rows, n + n / 20);
    in.k = 64;
    return in;
  };
  EXPECT_EQ(ChoosePath(h200, bitset(1000)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(h200, bitset(10000)), SearchPath::kGather);
  EXPECT_EQ(ChoosePath(h200, bitset(100000)), SearchPath::kGather);
  EXPECT_EQ(ChoosePath(h200, bitset(1000000)), SearchPath::kGather);
  EXPECT_EQ(ChoosePath(h200, bitset(rows)), SearchPath::kDense);
  EXPECT_EQ(ChoosePath(h200, independent(1000, 99500)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(h200, independent(10000, 951000)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(h200, independent(100000, 6340000)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(h200, independent(1000000, 9999700)), SearchPath::kDense);
  // 200k rows, 5 % a query: both recorded H200 sweeps timed SDDMM well ahead of dense there.
  PlanInput small = Bitmap(200000, 10000, 198800, 10500);
  small.k = 64;
  EXPECT_EQ(ChoosePath(h200, small), SearchPath::kSddmm);
  // The gather cap falls past 10^6 rows, less so at larger dims, as the recorded sweeps'
  // fastest paths do.
  EXPECT_EQ(ChoosePath(h200, Bitset(1000000, 600000, 128, 64)), SearchPath::kGather);
  EXPECT_EQ(ChoosePath(h200, Bitset(10000000, 6000000, 128, 64)), SearchPath::kDense);
  EXPECT_EQ(ChoosePath(h200, Bitset(10000000, 4500000, 128, 64)), SearchPath::kDense);
  EXPECT_EQ(ChoosePath(h200, Bitset(10000000, 4500000, 512, 64)), SearchPath::kGather);
  EXPECT_EQ(ChoosePath(h200, Bitset(10000000, 3000000, 128, 64)), SearchPath::kGather);
}

// gather_rows_exponent scales the gather cap past 10^6 rows only; bitmap_sddmm_rows_exponent
// the per-query SDDMM fraction at every size; both 0 leave the rule as it was.
TEST(PlannerTest, RowsExponents) {
  PlannerRule t;
  t.gather_min_rows = 0;
  t.gather_scale = 1e9;
  t.gather_max_fraction = 0.8;
  EXPECT_DOUBLE_EQ(GatherMaxSelectivity(t, 10000000, 128), 0.8);
  t.gather_rows_exponent = 0.5;
  EXPECT_DOUBLE_EQ(GatherMaxSelectivity(t, 200000, 128), 0.8);
  EXPECT_DOUBLE_EQ(GatherMaxSelectivity(t, 1000000, 128), 0.8);
  EXPECT_NEAR(GatherMaxSelectivity(t, 4000000, 128), 0.4, 1e-12);
  EXPECT_NEAR(GatherMaxSelectivity(t, 100000000, 128), 0.08, 1e-12);
  // The dim term still bounds it where it is lower.
  t.gather_scale = 0.3 * std::sqrt(512.0);
  EXPECT_NEAR(GatherMaxSelectivity(t, 1000000, 512), 0.3, 1e-12);
  EXPECT_NEAR(GatherMaxSelectivity(t, 100000000, 512), 0.08, 1e-12);
  EXPECT_EQ(ChoosePath(t, Bitset(4000000, 1500000, 128, 64)), SearchPath::kGather);
  EXPECT_EQ(ChoosePath(t, Bitset(4000000, 1700000, 128, 64)), SearchPath::kDense);
  // The fall weakens with dim: exponent 0.5 at dim 128, 0.25 at 512.
  t.gather_scale = 1e9;
  t.gather_rows_dim_exponent = 0.5;
  EXPECT_NEAR(GatherMaxSelectivity(t, 4000000, 128), 0.4, 1e-12);
  EXPECT_NEAR(GatherMaxSelectivity(t, 4000000, 512), 0.8 * std::pow(0.25, 0.25), 1e-12);
  EXPECT_DOUBLE_EQ(GatherMaxSelectivity(t, 1000000, 512), 0.8);
  t.gather_rows_dim_exponent = 0;

  t.bitmap_sddmm_max_rows = UINT64_MAX;
  t.bitmap_sddmm_max_fraction = 0.05;
  t.bitmap_sddmm_base_rows = 0;
  EXPECT_DOUBLE_EQ(BitmapSddmmMaxFraction(t, 10000000, 128), 0.05);
  t.bitmap_sddmm_rows_exponent = 0.5;
  EXPECT_NEAR(BitmapSddmmMaxFraction(t, 250000, 128), 0.1, 1e-12);
  EXPECT_NEAR(BitmapSddmmMaxFraction(t, 1000000, 128), 0.05, 1e-12);
  EXPECT_NEAR(BitmapSddmmMaxFraction(t, 4000000, 128), 0.025, 1e-12);
  // No dim term: the same at every dim.
  EXPECT_NEAR(BitmapSddmmMaxFraction(t, 4000000, 1024), 0.025, 1e-12);
  // Independent sets over 4M rows (dense the alternative): SDDMM below 2.5 % a query.
  EXPECT_EQ(ChoosePath(t, Bitmap(4000000, 90000, 3900000, 95000)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitmap(4000000, 100000, 3900000, 105000)), SearchPath::kDense);
  // And above 5 % of 250k rows it is 10 %.
  EXPECT_EQ(ChoosePath(t, Bitmap(250000, 20000, 249000, 24000)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitmap(250000, 25000, 249000, 26000)), SearchPath::kDense);
}

// bitmap_sddmm_dim_exponent lowers the per-query SDDMM fraction against dense as the dim grows
// past 128 (and raises it below): (128 / dim)^exponent.
TEST(PlannerTest, BitmapSddmmFractionFallsWithDim) {
  PlannerRule t;
  t.bitmap_sddmm_max_rows = UINT64_MAX;
  t.bitmap_sddmm_max_fraction = 0.05;
  t.bitmap_sddmm_dim_exponent = 0.5;
  EXPECT_DOUBLE_EQ(BitmapSddmmMaxFraction(t, 1000000, 128), 0.05);
  EXPECT_NEAR(BitmapSddmmMaxFraction(t, 1000000, 512), 0.025, 1e-12);
  EXPECT_NEAR(BitmapSddmmMaxFraction(t, 1000000, 32), 0.1, 1e-12);
  t.bitmap_sddmm_rows_exponent = 0.5;
  EXPECT_NEAR(BitmapSddmmMaxFraction(t, 4000000, 512), 0.0125, 1e-12);
  // Independent sets over 1M rows (dense the alternative): 4 % a query is SDDMM at dim 128,
  // dense at dim 512 (bound 2.5 %).
  auto bitmap = [](uint32_t dim) {
    PlanInput in = Bitmap(1000000, 40000, 990000, 41000);
    in.dim = dim;
    return in;
  };
  t.bitmap_sddmm_rows_exponent = 0;
  EXPECT_EQ(ChoosePath(t, bitmap(128)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, bitmap(512)), SearchPath::kDense);
}

// Per-query SDDMM against the alternative that would run instead: with independent filters
// the union is ~queries times a query's set and SDDMM wins; with shared (overlapping) ones the
// union gather does, at the same per-query count.
TEST(PlannerTest, BitmapIndependentAgainstShared) {
  PlannerRule t = Fixed();
  t.bitmap_sddmm_max_rows = UINT64_MAX;
  t.bitmap_sddmm_max_share = 0.1;
  t.bitmap_sddmm_max_fraction = 0.03;
  t.bitmap_sddmm_base_rows = 5000;
  t.bitmap_gather_max_fraction = 0.8;
  const uint64_t rows = 10000000;
  // The union gather is the alternative (union < 80%): SDDMM iff most < 0.1 · union.
  EXPECT_EQ(ChoosePath(t, Bitmap(rows, 100000, 6341500)), SearchPath::kSddmm);  // independent
  EXPECT_EQ(ChoosePath(t, Bitmap(rows, 30000, 2595730)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitmap(rows, 100000, 100010)), SearchPath::kGather);  // overlapping
  EXPECT_EQ(ChoosePath(t, Bitmap(rows, 1000, 1010)), SearchPath::kGather);
  EXPECT_EQ(ChoosePath(t, Bitmap(rows, 99999, 1000000)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitmap(rows, 100000, 1000000)), SearchPath::kGather);
  // Dense is the alternative (union ≥ 80%): SDDMM iff most < 5000 + 0.03 · rows = 305,000,
  // however large the union.
  EXPECT_EQ(ChoosePath(t, Bitmap(rows, 200000, 8673580)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitmap(rows, 304999, 9900000)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitmap(rows, 305000, 9900000)), SearchPath::kDense);
  // The base count matters on small shards: 5000 + 0.03 · 100,000 = 8,000.
  EXPECT_EQ(ChoosePath(t, Bitmap(100000, 7999, 100000)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitmap(100000, 8000, 100000)), SearchPath::kDense);
  // The largest per-query count, not the mean, is what SDDMM pays for (lists are padded to
  // it): one large filter among small ones tips it to the alternative.
  EXPECT_EQ(ChoosePath(t, Bitmap(rows, 1000, 300000)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitmap(rows, 1000, 300000, 200000)), SearchPath::kGather);
  EXPECT_EQ(ChoosePath(t, Bitmap(rows, 1000, 9000000, 400000)), SearchPath::kDense);
  // A count bound still caps SDDMM when set.
  t.bitmap_sddmm_max_rows = 50000;
  EXPECT_EQ(ChoosePath(t, Bitmap(rows, 100000, 6341500)), SearchPath::kGather);
}

// The GPU defaults: cuVS 26.10's, with the SDDMM bound taken at dim 128 and scaled by
// (128 / dim)^0.5.
TEST(PlannerTest, GpuDefaultsAreCuvs2610WithDimScaledSddmm) {
  const PlannerRule t = PlannerRule::GpuDefaults();
  EXPECT_EQ(t.source.rfind("defaults", 0), 0u);
  EXPECT_DOUBLE_EQ(t.sddmm_dim_exponent, 0.5);
  EXPECT_EQ(ChoosePath(t, Bitset(10000000, 1999, 128)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitset(10000000, 2000, 128)), SearchPath::kGather);
  EXPECT_EQ(ChoosePath(t, Bitset(10000000, 999, 512)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitset(10000000, 1000, 512)), SearchPath::kGather);
  // Everything else is cuVS's.
  const PlannerRule c = Cuvs2610Thresholds();
  EXPECT_EQ(t.sddmm_max_rows, c.sddmm_max_rows);
  EXPECT_EQ(t.sddmm_max_fraction, c.sddmm_max_fraction);
  EXPECT_EQ(t.gather_min_rows, c.gather_min_rows);
  EXPECT_EQ(t.gather_scale, c.gather_scale);
  EXPECT_EQ(t.gather_max_fraction, c.gather_max_fraction);
  EXPECT_EQ(t.bitmap_sddmm_max_rows, c.bitmap_sddmm_max_rows);
  EXPECT_EQ(t.bitmap_sddmm_max_fraction, c.bitmap_sddmm_max_fraction);
  EXPECT_EQ(t.bitmap_sddmm_base_rows, c.bitmap_sddmm_base_rows);
  EXPECT_EQ(t.bitmap_sddmm_max_share, c.bitmap_sddmm_max_share);
  EXPECT_EQ(t.bitmap_union_gather, c.bitmap_union_gather);
  EXPECT_EQ(t.bitmap_gather_max_fraction, c.bitmap_gather_max_fraction);
}

// cuVS 26.10's rule, checked against its own worked examples (research notes §1.3).
TEST(PlannerTest, Cuvs2610ThresholdsAreCuvs) {
  const PlannerRule t = Cuvs2610Thresholds();
  EXPECT_DOUBLE_EQ(t.sddmm_dim_exponent, 0);
  EXPECT_EQ(t.sddmm_max_rows, 2000u);
  EXPECT_DOUBLE_EQ(t.sddmm_max_fraction, 0.03);
  EXPECT_DOUBLE_EQ(t.gather_min_rows, 200000);
  EXPECT_DOUBLE_EQ(t.gather_scale, 5.5);
  EXPECT_DOUBLE_EQ(t.gather_max_fraction, 0.5);
  EXPECT_DOUBLE_EQ(t.bitmap_sddmm_max_fraction, 0.03);
  EXPECT_FALSE(t.bitmap_union_gather);
  EXPECT_NE(t.source.find("cuVS 26.10"), std::string::npos);

  // n = 300,000, dim 128: gather iff sel < (1/3)·min(5.5/√128, 0.5) = 0.162.
  EXPECT_NEAR(GatherMaxSelectivity(t, 300000, 128), 0.1620, 1e-4);
  EXPECT_EQ(ChoosePath(t, Bitset(300000, 48000)), SearchPath::kGather);  // 16%
  EXPECT_EQ(ChoosePath(t, Bitset(300000, 49000)), SearchPath::kDense);   // 16.3%
  // n = 10M, dim 128: 0.98 · 0.486 = 0.476; dim 1024: 0.98 · 0.172.
  EXPECT_NEAR(GatherMaxSelectivity(t, 10000000, 128), 0.98 * 5.5 / std::sqrt(128.0), 1e-9);
  EXPECT_NEAR(GatherMaxSelectivity(t, 10000000, 1024), 0.98 * 5.5 / 32, 1e-9);
  EXPECT_EQ(ChoosePath(t, Bitset(10000000, 4000000, 128)), SearchPath::kGather);
  EXPECT_EQ(ChoosePath(t, Bitset(10000000, 4000000, 1024)), SearchPath::kDense);
  // Small dims hit the 0.5 cap.
  EXPECT_NEAR(GatherMaxSelectivity(t, 10000000, 8), 0.98 * 0.5, 1e-9);
  // At or below 200,000 rows gather never amortizes.
  EXPECT_EQ(GatherMaxSelectivity(t, 200000, 128), 0.0);
  EXPECT_EQ(ChoosePath(t, Bitset(200000, 5000)), SearchPath::kDense);
  EXPECT_EQ(ChoosePath(t, Bitset(8192, 2500)), SearchPath::kDense);
  // SDDMM needs both n_pass < 2000 and sel < 3%.
  EXPECT_EQ(ChoosePath(t, Bitset(10000000, 1999)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitset(10000000, 2000)), SearchPath::kGather);
  EXPECT_EQ(ChoosePath(t, Bitset(8192, 300)), SearchPath::kDense);  // 3.7%
  EXPECT_EQ(ChoosePath(t, Bitset(8192, 200)), SearchPath::kSddmm);  // 2.4%
  // Gather needs more than k passing rows.
  EXPECT_EQ(ChoosePath(t, Bitset(10000000, 2100, 128, 4096)), SearchPath::kDense);
  // Bitmaps: SDDMM iff selectivity < 3%, else dense, at any count.
  EXPECT_EQ(ChoosePath(t, Bitmap(10000000, 299999, 10000000)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitmap(10000000, 300000, 4000000)), SearchPath::kDense);
}

TEST(PlannerTest, CpuDefaultsGatherToHalfAtAnySize) {
  const PlannerRule t = PlannerRule::CpuDefaults();
  EXPECT_EQ(t.source.rfind("defaults", 0), 0u);
  for (uint64_t rows : {8192ull, 200000ull, 10000000ull}) {
    for (uint32_t dim : {1u, 128u, 2052u}) {
      EXPECT_NEAR(GatherMaxSelectivity(t, rows, dim), 0.5, 1e-9) << rows << " " << dim;
    }
  }
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 19999)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 20000)), SearchPath::kGather);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 499999)), SearchPath::kGather);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 500000)), SearchPath::kDense);
  EXPECT_EQ(ChoosePath(t, Bitmap(1000000, 1999, 30000)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitmap(1000000, 2000, 30000)), SearchPath::kGather);
  EXPECT_EQ(ChoosePath(t, Bitmap(1000000, 2000, 600000)), SearchPath::kDense);
  // The three paths are all reachable on a 1M-row shard.
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 100)), SearchPath::kSddmm);
  EXPECT_EQ(ChoosePath(t, Bitset(1000000, 1000000)), SearchPath::kDense);
}

TEST(PlannerTest, BitmapGatherBoundFollowsRowsAndDim) {
  PlannerRule t = PlannerRule::CpuDefaults();
  t.bitmap_sddmm_max_rows = 0;  // never SDDMM: the gather-or-dense choice alone
  t.bitmap_union_gather = true;
  t.bitmap_gather_max_fraction = 0.75;
  // Without a scale the cap holds at every shape.
  EXPECT_DOUBLE_EQ(BitmapGatherMaxFraction(t, 10000000, 128), 0.75);
  t.bitmap_gather_scale = 0.5;
  t.bitmap_gather_dim_exponent = 0.5;
  t.bitmap_gather_rows_exponent = 0.25;
  // 0.5 · (512 / 128)^0.5 · (10^6 / 10^4)^0.25 = 3.16, capped; 0.5 · 1 · 10^-0.25 = 0.281.
  EXPECT_DOUBLE_EQ(BitmapGatherMaxFraction(t, 10000, 512), 0.75);
  EXPECT_NEAR(BitmapGatherMaxFraction(t, 10000000, 128), 0.5 * std::pow(0.1, 0.25), 1e-12);
  EXPECT_NEAR(BitmapGatherMaxFraction(t, 1000000, 32), 0.25, 1e-12);
  PlanInput in;
  in.rows = 10000000;
  in.dim = 128;
  in.num_queries = 100;
  in.k = 64;
  in.per_query = true;
  in.passing_rows = 2000000;
  in.union_rows = 2700000;  // 0.27 of the rows: below 0.281
  EXPECT_EQ(ChoosePath(t, in), SearchPath::kGather);
  in.union_rows = 2900000;  // 0.29: above
  EXPECT_EQ(ChoosePath(t, in), SearchPath::kDense);
  in.dim = 512;  // the bound doubles
  EXPECT_EQ(ChoosePath(t, in), SearchPath::kGather);
  t.bitmap_union_gather = false;
  EXPECT_EQ(BitmapGatherMaxFraction(t, 10000, 512), 0);
  EXPECT_EQ(ChoosePath(t, in), SearchPath::kDense);
}

TEST(PlannerTest, OldCuvsRuleIsTenPercent) {
  EXPECT_EQ(ChooseOldCuvsPath(Bitset(1000000, 100000)), SearchPath::kSddmm);
  EXPECT_EQ(ChooseOldCuvsPath(Bitset(1000000, 100001)), SearchPath::kDense);
  EXPECT_EQ(ChooseOldCuvsPath(Bitset(1000000, 1)), SearchPath::kSddmm);
}

}  // namespace
}  // namespace sieve
