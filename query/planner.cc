// Copyright 2026 The Sieve Authors.

#include "query/planner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <limits>
#include <string>

namespace sieve {

PlannerRule PlannerRule::CpuDefaults() {
  PlannerRule t;
  // Crossovers of tools/bench/cpu_paths_bench on the dev VM (its sweeps are in
  // tools/bench/results/). Bitset: SDDMM wins or ties gather up to tens of thousands of rows.
  t.sddmm_max_rows = 20000;
  t.sddmm_dim_exponent = 0;  // no fall with dim measured on the CPU
  t.sddmm_max_fraction = 1.0;
  // On a CPU dense is no faster than compacting first, so the cap alone decides (cuVS's form
  // with no amortization and an unbounded scale): gather while sel < 0.5 at any rows and dim.
  t.gather_min_rows = 0;
  t.gather_scale = 1e9;
  t.gather_max_fraction = 0.5;
  // Bitmap: per-query SDDMM while the largest per-query count is small (uniform filters there).
  t.bitmap_sddmm_max_rows = 2000;
  t.bitmap_sddmm_max_fraction = 1.0;
  t.bitmap_sddmm_base_rows = 0;
  t.bitmap_sddmm_max_share = 1.0;
  // The union gather wins until the union nears most of the rows.
  t.bitmap_union_gather = true;
  t.bitmap_gather_max_fraction = 0.6;
  t.source = "defaults: cpu_paths_bench on the 2-core dev VM, 2026-11-29";
  return t;
}

PlannerRule Cuvs2610Thresholds() {
  PlannerRule t;
  // Exactly cuVS 26.10's constants (cpp/src/neighbors/detail/knn_brute_force.cuh, NVIDIA/cuvs
  // PR #2321): kSddmmMaxPassingRows 2000, kSddmmMaxSelectivity 0.03, kGatherSelectivityScale
  // 5.5, kGatherMaxSelectivity 0.5, kGatherMinDataset 200000. They were fitted on an RTX 5090
  // (fp16, L2, k=64, 100 queries, 200K-10M rows × dim 128-1024, shared bitset).
  t.sddmm_max_rows = 2000;
  t.sddmm_dim_exponent = 0;
  t.sddmm_max_fraction = 0.03;
  t.gather_min_rows = 200000;
  t.gather_scale = 5.5;
  t.gather_max_fraction = 0.5;
  // cuVS 26.10 for bitmaps: SDDMM iff selectivity < 0.03, else dense (never measured there);
  // no union gather.
  t.bitmap_sddmm_max_rows = UINT64_MAX;
  t.bitmap_sddmm_max_fraction = 0.03;
  t.bitmap_sddmm_base_rows = 0;
  t.bitmap_sddmm_max_share = 1.0;
  t.bitmap_union_gather = false;
  t.bitmap_gather_max_fraction = 0;
  t.source = "cuVS 26.10's rule and constants (RTX 5090 fit)";
  return t;
}

PlannerRule PlannerRule::GpuDefaults() {
  // cuVS 26.10's rule (until `sieve calibrate` stores this device's own), its SDDMM bound taken
  // at dim 128 and scaled by (128 / dim)^0.5: the crossover falls with the dim, but a steeper
  // fall sends small shards (never gathered by cuVS's rule) from SDDMM to dense.
  PlannerRule t = Cuvs2610Thresholds();
  t.sddmm_dim_exponent = 0.5;
  t.source =
      "defaults: cuVS 26.10's rule and constants (RTX 5090 fit), SDDMM bound x (128/dim)^0.5; "
      "not calibrated here";
  return t;
}

std::string DescribeThresholds(const PlannerRule& t) {
  char gather[256], union_gather[256], line[768];
  std::snprintf(gather, sizeof(gather),
                "min_rows %.0f scale %.3g cap %.3g x (1e6/rows)^(%.3g x (128/dim)^%.3g) past 1e6 "
                "rows",
                t.gather_min_rows, t.gather_scale, t.gather_max_fraction, t.gather_rows_exponent,
                t.gather_rows_dim_exponent);
  if (!t.bitmap_union_gather) {
    std::snprintf(union_gather, sizeof(union_gather), "off");
  } else if (t.bitmap_gather_scale > 0) {
    std::snprintf(union_gather, sizeof(union_gather),
                  "< min(%.3g, %.3g x (dim/128)^%.3g x (1e6/rows)^%.3g)",
                  t.bitmap_gather_max_fraction, t.bitmap_gather_scale,
                  t.bitmap_gather_dim_exponent, t.bitmap_gather_rows_exponent);
  } else {
    std::snprintf(union_gather, sizeof(union_gather), "< %.3g", t.bitmap_gather_max_fraction);
  }
  std::snprintf(line, sizeof(line),
                "sddmm_max_rows %llu at dim 128 x (128/dim)^%.2f, gather %s, bitmap sddmm: share "
                "%.3g, base %.0f + fraction %.3g x (1e6/rows)^%.2f x (128/dim)^%.2f, union "
                "gather %s",
                static_cast<unsigned long long>(t.sddmm_max_rows), t.sddmm_dim_exponent, gather,
                t.bitmap_sddmm_max_share, t.bitmap_sddmm_base_rows, t.bitmap_sddmm_max_fraction,
                t.bitmap_sddmm_rows_exponent, t.bitmap_sddmm_dim_exponent, union_gather);
  return line;
}

bool HasShippedThresholds(const std::string& executor_name) {
  return executor_name.rfind("gpu", 0) == 0 && executor_name.find("H200") != std::string::npos;
}

PlannerRule PlannerRule::DefaultsFor(const std::string& executor_name) {
  if (executor_name.rfind("gpu", 0) != 0) return CpuDefaults();
  if (!HasShippedThresholds(executor_name)) return GpuDefaults();
  // Shipped for the H200: its own `sieve calibrate --quick`, refitted (tools/bench/results/).
  PlannerRule t;
  t.sddmm_max_rows = 5276;
  t.sddmm_dim_exponent = 0.845;
  t.sddmm_max_fraction = 1.0;
  t.gather_min_rows = 5623;
  t.gather_scale = 12.59;
  t.gather_max_fraction = 0.708;
  t.gather_rows_exponent = 0.2;
  t.gather_rows_dim_exponent = 0.25;
  t.bitmap_sddmm_max_rows = UINT64_MAX;
  t.bitmap_sddmm_max_fraction = 0.0794;
  t.bitmap_sddmm_base_rows = 355;
  t.bitmap_sddmm_max_share = 0.158;
  t.bitmap_sddmm_rows_exponent = 0.2;
  t.bitmap_sddmm_dim_exponent = 0.6;
  t.bitmap_union_gather = true;
  t.bitmap_gather_max_fraction = 1.0;
  t.bitmap_gather_scale = 0.551;
  t.bitmap_gather_dim_exponent = 0;
  t.bitmap_gather_rows_exponent = 0.0886;
  t.source =
      "shipped for the NVIDIA H200: sieve calibrate --quick on an H200, 2026-12-02 (the "
      "per-query SDDMM bound against dense 2026-12-03), refitted; not calibrated here";
  return t;
}

double SddmmMaxRows(const PlannerRule& t, uint32_t dim) {
  if (t.sddmm_max_rows == UINT64_MAX) return std::numeric_limits<double>::infinity();
  const double at_reference = static_cast<double>(t.sddmm_max_rows);
  if (t.sddmm_dim_exponent == 0) return at_reference;
  return at_reference *
         std::pow(kReferenceDim / std::max(dim, 1u), t.sddmm_dim_exponent);
}

double GatherMaxSelectivity(const PlannerRule& t, uint64_t rows, uint32_t dim) {
  if (rows == 0) return 0;
  const double amortized = 1.0 - t.gather_min_rows / static_cast<double>(rows);
  if (amortized <= 0) return 0;
  const double by_dim = t.gather_scale / std::sqrt(static_cast<double>(std::max(dim, 1u)));
  double cap = t.gather_max_fraction;
  if (t.gather_rows_exponent != 0 && static_cast<double>(rows) > kReferenceRows) {
    double e = t.gather_rows_exponent;
    if (t.gather_rows_dim_exponent != 0) {
      e *= std::pow(kReferenceDim / std::max(dim, 1u), t.gather_rows_dim_exponent);
    }
    cap *= std::pow(kReferenceRows / static_cast<double>(rows), e);
  }
  return amortized * std::min(by_dim, cap);
}

double BitmapGatherMaxFraction(const PlannerRule& t, uint64_t rows, uint32_t dim) {
  if (!t.bitmap_union_gather || rows == 0) return 0;
  double bound = t.bitmap_gather_max_fraction;
  if (t.bitmap_gather_scale > 0) {
    bound = std::min(bound, t.bitmap_gather_scale *
                                std::pow(std::max(dim, 1u) / kReferenceDim,
                                         t.bitmap_gather_dim_exponent) *
                                std::pow(kReferenceRows / static_cast<double>(rows),
                                         t.bitmap_gather_rows_exponent));
  }
  return bound;
}

double BitmapSddmmMaxFraction(const PlannerRule& t, uint64_t rows, uint32_t dim) {
  double f = t.bitmap_sddmm_max_fraction;
  if (t.bitmap_sddmm_rows_exponent != 0 && rows > 0) {
    f *= std::pow(kReferenceRows / static_cast<double>(rows), t.bitmap_sddmm_rows_exponent);
  }
  if (t.bitmap_sddmm_dim_exponent != 0 && dim > 0) {
    f *= std::pow(kReferenceDim / dim, t.bitmap_sddmm_dim_exponent);
  }
  return f;
}

namespace {

// sel < bound, where a bound of 1 (or more) means no bound at all (even everything passing).
bool BelowFraction(double sel, double bound) { return bound >= 1.0 || sel < bound; }

}  // namespace

bool SameSetForEveryQuery(const PlanInput& in) {
  // Every set is within the union, so the mean reaches the union's size only when each does.
  return in.per_query && in.passing_rows > 0 && in.passing_rows == in.union_rows &&
         in.max_passing_rows <= in.union_rows;
}

SearchPath ChoosePath(const PlannerRule& t, const PlanInput& in) {
  if (in.rows == 0 || in.passing_rows == 0) return SearchPath::kSddmm;
  const double rows = static_cast<double>(in.rows);
  if (!in.per_query || SameSetForEveryQuery(in)) {
    const double sel = static_cast<double>(in.passing_rows) / rows;
    if (static_cast<double>(in.passing_rows) < SddmmMaxRows(t, in.dim) &&
        BelowFraction(sel, t.sddmm_max_fraction)) {
      return SearchPath::kSddmm;
    }
    if (in.passing_rows > in.k && sel < GatherMaxSelectivity(t, in.rows, in.dim)) {
      return SearchPath::kGather;
    }
    return SearchPath::kDense;
  }
  // Per-query SDDMM's cost follows the largest per-query list (every list is padded to it);
  // the union gather's the union; dense's the rows. Compare SDDMM with the one alternative
  // that would run instead.
  const uint64_t most = std::max(in.max_passing_rows, in.passing_rows);
  const double union_rows = static_cast<double>(std::max(in.union_rows, most));
  const SearchPath alternative =
      union_rows < BitmapGatherMaxFraction(t, in.rows, in.dim) * rows ? SearchPath::kGather
                                                                      : SearchPath::kDense;
  if (most >= t.bitmap_sddmm_max_rows) return alternative;
  const double m = static_cast<double>(most);
  if (alternative == SearchPath::kGather) {
    const bool sddmm = t.bitmap_sddmm_max_share >= 1.0 || m < t.bitmap_sddmm_max_share * union_rows;
    return sddmm ? SearchPath::kSddmm : alternative;
  }
  const bool sddmm =
      t.bitmap_sddmm_max_fraction >= 1.0 ||
      m < t.bitmap_sddmm_base_rows + BitmapSddmmMaxFraction(t, in.rows, in.dim) * rows;
  return sddmm ? SearchPath::kSddmm : alternative;
}

SearchPath ChooseOldCuvsPath(const PlanInput& in) {
  if (in.rows == 0 || in.passing_rows == 0) return SearchPath::kSddmm;
  const double sel = static_cast<double>(in.passing_rows) / static_cast<double>(in.rows);
  return 1.0 - sel < 0.9 ? SearchPath::kDense : SearchPath::kSddmm;
}

uint32_t CandidateCount(uint32_t k) {
  return k + std::min<uint32_t>(std::max<uint32_t>(k, 8), 64);
}

ShardDecision PlanShard(const PlannerRule& t, const PlanInput& in, SearchPath forced,
                        uint64_t max_passing_rows) {
  ShardDecision d;
  d.path = forced == SearchPath::kAuto ? ChoosePath(t, in) : forced;
  d.candidates =
      static_cast<uint32_t>(std::min<uint64_t>(CandidateCount(in.k), max_passing_rows));
  return d;
}

const char* FilterModeName(size_t distinct_filters, bool matches_all) {
  if (distinct_filters > 1) return "bitmap";
  return matches_all ? "none" : "bitset";
}

}  // namespace sieve
