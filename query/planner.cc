// Copyright 2026 The Sieve Authors.

#include "query/planner.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

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
  t.sddmm_max_fraction = 1.0;
  // Unlike the GPU, dense GEMM straight from host memory is no faster than compacting first:
  // gather won or tied up to 50% passing at 200k and 1M rows, dense only from ~70-100%, at
  // every size measured. In cuVS's form: no amortization (gather_min_rows 0) and a scale so
  // large that the cap alone decides: gather while sel < 0.5 at any rows and dim.
  t.gather_min_rows = 0;
  t.gather_scale = 1e9;
  t.gather_max_fraction = 0.5;
  // Bitmap: per-query SDDMM wins while the mean per-query count is below ~2k (200k×128: 3.97
  // vs 5.79 ms at 2k; 1M×128: tied at 2k; gather wins from 4-5k).
  t.bitmap_sddmm_max_rows = 2000;
  t.bitmap_sddmm_max_fraction = 1.0;
  t.bitmap_sddmm_max_share = 1.0;
  // The union gather wins up to a union of ~56% of the rows (1M: 136 vs 207 ms); at a union
  // of ~81% the two tie (1M) or dense wins (200k).
  t.bitmap_union_gather = true;
  t.bitmap_gather_max_fraction = 0.6;
  t.source = "defaults: cpu_paths_bench on the 2-core dev VM, 2026-11-29";
  return t;
}

PlannerThresholds PlannerThresholds::GpuDefaults() {
  PlannerThresholds t;
  // Exactly cuVS 26.10's constants (cpp/src/neighbors/detail/knn_brute_force.cuh, NVIDIA/cuvs
  // PR #2321): kSddmmMaxPassingRows 2000, kSddmmMaxSelectivity 0.03, kGatherSelectivityScale
  // 5.5, kGatherMaxSelectivity 0.5, kGatherMinDataset 200000. They were fitted on an RTX 5090
  // (fp16, L2, k=64, 100 queries, 200K-10M rows × dim 128-1024, shared bitset) and are used
  // here until `sieve calibrate` stores thresholds measured on this device.
  t.sddmm_max_rows = 2000;
  t.sddmm_max_fraction = 0.03;
  t.gather_min_rows = 200000;
  t.gather_scale = 5.5;
  t.gather_max_fraction = 0.5;
  // cuVS 26.10 for bitmaps: SDDMM iff selectivity < 0.03, else dense (never measured there);
  // no union gather.
  t.bitmap_sddmm_max_rows = UINT64_MAX;
  t.bitmap_sddmm_max_fraction = 0.03;
  t.bitmap_sddmm_max_share = 1.0;
  t.bitmap_union_gather = false;
  t.bitmap_gather_max_fraction = 0;
  t.source = "defaults: cuVS 26.10's rule and constants (RTX 5090 fit), not calibrated here";
  return t;
}

double GatherMaxSelectivity(const PlannerThresholds& t, uint64_t rows, uint32_t dim) {
  if (rows == 0) return 0;
  const double amortized = 1.0 - t.gather_min_rows / static_cast<double>(rows);
  if (amortized <= 0) return 0;
  const double by_dim = t.gather_scale / std::sqrt(static_cast<double>(std::max(dim, 1u)));
  return amortized * std::min(by_dim, t.gather_max_fraction);
}

namespace {

// sel < bound, where a bound of 1 (or more) means no bound at all (even everything passing).
bool BelowFraction(double sel, double bound) { return bound >= 1.0 || sel < bound; }

}  // namespace

SearchPath ChoosePath(const PlannerThresholds& t, const PlanInput& in) {
  if (in.rows == 0 || in.passing_rows == 0) return SearchPath::kSddmm;
  const double rows = static_cast<double>(in.rows);
  const double sel = static_cast<double>(in.passing_rows) / rows;
  if (!in.per_query) {
    if (in.passing_rows < t.sddmm_max_rows && BelowFraction(sel, t.sddmm_max_fraction)) {
      return SearchPath::kSddmm;
    }
    if (in.passing_rows > in.k && sel < GatherMaxSelectivity(t, in.rows, in.dim)) {
      return SearchPath::kGather;
    }
    return SearchPath::kDense;
  }
  const double share =
      in.union_rows > 0 ? static_cast<double>(in.passing_rows) / static_cast<double>(in.union_rows)
                        : 1.0;
  if (in.passing_rows < t.bitmap_sddmm_max_rows &&
      BelowFraction(sel, t.bitmap_sddmm_max_fraction) &&
      BelowFraction(share, t.bitmap_sddmm_max_share)) {
    return SearchPath::kSddmm;
  }
  if (t.bitmap_union_gather &&
      static_cast<double>(in.union_rows) < t.bitmap_gather_max_fraction * rows) {
    return SearchPath::kGather;
  }
  return SearchPath::kDense;
}

SearchPath ChooseOldCuvsPath(const PlanInput& in) {
  if (in.rows == 0 || in.passing_rows == 0) return SearchPath::kSddmm;
  const double sel = static_cast<double>(in.passing_rows) / static_cast<double>(in.rows);
  return 1.0 - sel < 0.9 ? SearchPath::kDense : SearchPath::kSddmm;
}

}  // namespace sieve
