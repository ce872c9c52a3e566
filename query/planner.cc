// Copyright 2026 The Sieve Authors.

#include "query/planner.h"

namespace sieve {

PlannerThresholds PlannerThresholds::CpuDefaults() {
  PlannerThresholds t;
  // Measured 2026-11-29 on the 2-core dev VM (Xeon, AVX-512, OpenBLAS 0.3.21 SkylakeX kernels,
  // two workers) with tools/bench/cpu_paths_bench, l2, 16 queries, k=10, median of 5-7 reps:
  //   cpu_paths_bench --rows 1000000 --dim 128 [--mode bitmap]
  //   cpu_paths_bench --rows 200000 --dim 128 [--mode bitmap]
  //   cpu_paths_bench --rows 200000 --dim 256
  // The VM was shared with compiles (load 2-4), so single cells are noisy; the choices below
  // follow what held across the sweeps. A wrong pick near a crossover costs little: the two
  // paths are within ~20% of each other there.
  //
  // Bitset: SDDMM wins or ties gather up to 10k-20k passing rows (1M×128: 5.5 vs 11.6 ms at
  // 20k, gather wins at 50k; 200k×128: tied at 10k-20k; dim 256: SDDMM never lost below 100k).
  t.sddmm_max_rows = 20000;
  // Unlike the GPU, dense GEMM straight from host memory is no faster than compacting first:
  // gather won or tied up to 50% passing at 200k and 1M rows, dense only from ~70-100%.
  t.gather_max_fraction = 0.5;
  // Bitmap: per-query SDDMM wins while the mean per-query count is ≤ ~2k (200k×128: 3.97 vs
  // 5.79 ms at 2k; 1M×128: tied at 2k; gather wins from 4-5k).
  t.bitmap_sddmm_max_rows = 2000;
  // The union gather wins up to a union of ~56% of the rows (1M: 136 vs 207 ms); at a union
  // of ~81% the two tie (1M) or dense wins (200k).
  t.bitmap_gather_max_fraction = 0.6;
  t.source = "cpu_paths_bench on the 2-core dev VM, 2026-11-29";
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
