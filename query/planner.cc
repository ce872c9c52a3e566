// Copyright 2026 The Sieve Authors.

#include "query/planner.h"

namespace sieve {

PlannerThresholds PlannerThresholds::CpuDefaults() {
  PlannerThresholds t;
  // MEASURED_CPU_THRESHOLDS
  t.sddmm_max_rows = 2000;
  t.gather_max_fraction = 0.03;
  t.bitmap_sddmm_max_rows = 2000;
  t.bitmap_gather_max_fraction = 0.03;
  t.source = "cpu";
  return t;
}

PlannerThresholds PlannerThresholds::GpuDefaults() {
  PlannerThresholds t;
  // From the published cuVS 26.10 measurement (brute_force filtered search, RTX 5090, fp16,
  // L2, k=64, 100 queries, 200K–10M rows × dim 128–1024): SDDMM beats gather below ~1.7k–3k
  // passing rows (an absolute count, nearly flat in n and dim), so 2,000.
  t.sddmm_max_rows = 2000;
  // cuVS 26.10's rule hands gather over to dense near 3% of the rows.
  t.gather_max_fraction = 0.03;
  // Bitmaps were never measured there. A per-query CSR touches different rows per query, so
  // SDDMM's locality is worse than for a bitset: keep the same absolute 2,000 for the mean
  // per-query count (the SDDMM work per query is the same as a bitset of that size) and, for
  // the union gather, the same 3% (the union is what is compacted and multiplied).
  t.bitmap_sddmm_max_rows = 2000;
  t.bitmap_gather_max_fraction = 0.03;
  t.source = "published cuVS 26.10 measurement (RTX 5090), pending calibration";
  return t;
}

SearchPath ChoosePath(const PlannerThresholds& t, const PlanInput& in) {
  if (in.rows == 0 || in.passing_rows == 0) return SearchPath::kSddmm;
  const double rows = static_cast<double>(in.rows);
  if (!in.per_query) {
    if (in.passing_rows <= t.sddmm_max_rows) return SearchPath::kSddmm;
    if (static_cast<double>(in.passing_rows) <= t.gather_max_fraction * rows) {
      return SearchPath::kGather;
    }
    return SearchPath::kDense;
  }
  if (in.passing_rows <= t.bitmap_sddmm_max_rows) return SearchPath::kSddmm;
  if (static_cast<double>(in.union_rows) <= t.bitmap_gather_max_fraction * rows) {
    return SearchPath::kGather;
  }
  return SearchPath::kDense;
}

}  // namespace sieve
