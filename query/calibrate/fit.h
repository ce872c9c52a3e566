// Copyright 2026 The Sieve Authors.
//
// The planner thresholds fitted to a sweep's cells (docs/planner.md#sieve-calibrate).

#ifndef SIEVE_QUERY_CALIBRATE_FIT_H_
#define SIEVE_QUERY_CALIBRATE_FIT_H_

#include <cstdint>
#include <vector>

#include "sieve/db.h"
#include "query/calibrate/cell.h"

namespace sieve::calibrate {

// What the fit found, beside the thresholds.
struct FitReport {
  // Per series (rows, dim, mode, overlap): where SDDMM stopped beating the better of gather and
  // dense (passing rows) and where gather stopped beating dense (fraction); censored = the
  // crossover lies outside the measured range (the value is the range's end).
  struct Series {
    uint64_t rows = 0;
    uint32_t dim = 0;
    bool per_query = false;
    Overlap overlap = Overlap::kShared;
    double sddmm_rows = 0;
    int sddmm_censored = 0;      // -1: lost from the first count, +1: never lost, 0: bracketed
    double gather_fraction = 0;  // bitset: passing fraction; bitmap: union fraction
    int gather_censored = 0;
    double model_fraction = 0;    // the fitted rule's gather bound at (rows, dim) (bitset)
    double model_sddmm_rows = 0;  // the fitted rule's SDDMM bound at dim (bitset)
  };
  std::vector<Series> series;
  double fit_log_rms = 0;  // RMS of log(model / measured) over bracketed bitset series (gather)
  // The bitset SDDMM bound's fit: how many bracketed series at how many distinct dims, and the
  // RMS of log(model / measured crossover) over them.
  int sddmm_series = 0;
  int sddmm_dims = 0;
  double sddmm_log_rms = 0;
  // The bitmap SDDMM-vs-dense bound's fit: series (overlap, rows, dim) whose alternative is
  // dense, and the RMS of log(model / measured crossover) over the bracketed ones.
  int bitmap_sddmm_series = 0;
  double bitmap_sddmm_log_rms = 0;
};

// Fits thresholds to the cells (docs/planner.md#sieve-calibrate):
//   sddmm_max_rows, sddmm_dim_exponent
//                         log(crossover) = log(sddmm_max_rows) + e · log(128 / dim) by least
//                         squares over the bracketed bitset series' SDDMM crossovers (10% tie),
//                         e clamped to [0, 2]; with fewer than two dims, e stays base's and the
//                         count is the log-median of the crossovers scaled to dim 128;
//   sddmm_max_fraction    1 (no bound), or the tightest per-series crossover fraction when
//                         that lowers the mean penalty over the bitset cells by > 3%;
//   gather_min_rows, gather_scale, gather_max_fraction, gather_rows_exponent,
//   gather_rows_dim_exponent
//                         cuVS's form, its cap falling as (10^6 / rows)^(gather_rows_exponent ·
//                         (128 / dim)^gather_rows_dim_exponent) past 10^6 rows (0 unless the
//                         sweep has shards of 5M rows or more; the dim term only with them at
//                         two dims), by
//                         grid searches (all five but the dim term, then cap, fall and dim
//                         term, then min rows and scale again): first the mean log penalty over the
//                         bitset cells the bound decides (gather or dense), then, to settle
//                         what that leaves flat, the squared log error to the gather → dense
//                         crossovers of the series of at least 65,536 rows (censored series
//                         only count on the side they bound), ties toward cuVS's constants;
//   bitmap_union_gather, bitmap_gather_max_fraction, bitmap_gather_scale,
//   bitmap_gather_dim_exponent, bitmap_gather_rows_exponent
//                         on when the union gather beat dense by ≥ 10% in some cell; the
//                         bound log(scale) + a · log(dim / 128) + b · log(10^6 / rows) by
//                         least squares to the bracketed crossover union fractions of the
//                         series of at least 65,536 rows (a, b in [0, 2]), capped by the
//                         largest of them (or of the fractions where the gather still won at
//                         a series' end), when those span two dims and two shard sizes;
//                         else (scale 0) the median crossover union fraction at every shape;
//   bitmap_sddmm_max_share
//                         a grid search minimizing the mean log penalty over the bitmap cells
//                         whose alternative to SDDMM is the union gather;
//   bitmap_sddmm_base_rows, bitmap_sddmm_max_fraction, bitmap_sddmm_rows_exponent,
//   bitmap_sddmm_dim_exponent
//                         base + fraction · (10^6 / rows)^x · (128 / dim)^y · rows (x 0 unless
//                         the crossovers span three shard sizes, y 0 unless they span two dims)
//                         fitted by a grid search on squared log error
//                         to the crossovers (largest per-query count where per-query SDDMM
//                         stops beating dense, 10% tie) of the bitmap series whose alternative
//                         is dense, censored series counting only on the side they bound;
//   bitmap_sddmm_max_rows no bound (UINT64_MAX): a count alone does not carry from one shard
//                         size to another.
// The share search takes, of the settings that reach the least loss, the one nearest (in log)
// to their log-centroid: the middle of the range the data allows, not an edge of it.
// `base` supplies whatever the cells cannot (a mode that was not swept).
PlannerRule FitThresholds(const std::vector<Cell>& cells, uint32_t queries, uint32_t k,
                                const PlannerRule& base, FitReport* report);

}  // namespace sieve::calibrate

#endif  // SIEVE_QUERY_CALIBRATE_FIT_H_
