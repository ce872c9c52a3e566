// Copyright 2026 The Sieve Authors.
//
// The planner: picks the SDDMM, gather or dense path for one shard's share of a batch from the
// absolute number of passing rows, the shard's rows and dim (and, for per-query filters, the
// largest per-query count and the union), against thresholds calibrated for the device that
// will run it.

#ifndef SIEVE_QUERY_PLANNER_H_
#define SIEVE_QUERY_PLANNER_H_

#include <cstdint>
#include <string>

#include "sieve/db.h"

namespace sieve {

// The rule (its numbers are PlannerRule's, below). With n_pass the passing rows
// of a bitset filter, sel = n_pass / rows:
//   SDDMM   when n_pass < sddmm_max_rows * (128 / dim)^sddmm_dim_exponent and
//           sel < sddmm_max_fraction (exponent 0: one count at every dim; 1: a budget on
//           n_pass * dim; the SDDMM -> gather crossover falls as dim grows);
//   gather  when amortized = 1 - gather_min_rows / rows > 0, n_pass > k and
//           sel < amortized * min(gather_scale / sqrt(dim), cap), cap = gather_max_fraction,
//           and past 10^6 rows gather_max_fraction * (10^6 / rows)^e, e = gather_rows_exponent
//           * (128 / dim)^gather_rows_dim_exponent (on large shards the dense scan's cost per
//           row falls below the gather's, the more so at small dims);
//   dense   otherwise.
// A bitmap (one filter per query; most = the largest per-query n_pass, union = the size of the
// union of the queries' sets): the alternative to per-query SDDMM is the gather over the union
// when bitmap_union_gather and union / rows < BitmapGatherMaxFraction (query/planner.h:
// bitmap_gather_max_fraction, and with bitmap_gather_scale > 0 at most bitmap_gather_scale ·
// (dim / 128)^bitmap_gather_dim_exponent · (10^6 / rows)^bitmap_gather_rows_exponent), else
// dense; then
//   SDDMM   when most < bitmap_sddmm_max_rows and, against that alternative,
//             union gather: most < bitmap_sddmm_max_share * union (per-query SDDMM reads each
//               query's rows, padded to the largest; the gather reads the union: independent
//               filters, whose union is ~queries times larger, favour SDDMM, shared ones the
//               gather);
//             dense: most < bitmap_sddmm_base_rows + BitmapSddmmMaxFraction(rows, dim) * rows,
//               the fraction bitmap_sddmm_max_fraction * (10^6 / rows)^
//               bitmap_sddmm_rows_exponent * (128 / dim)^bitmap_sddmm_dim_exponent;
//   else the alternative.
// A fraction or share bound of 1 means no bound. With GpuDefaults() this is cuVS 26.10's rule
// except for the SDDMM count's dependence on dim (query/planner.h Cuvs2610Thresholds() has
// cuVS's exactly). Fields added after the first stored format (sddmm_dim_exponent,
// gather_rows_exponent, gather_rows_dim_exponent, bitmap_sddmm_base_rows, bitmap_sddmm_max_share,
// bitmap_sddmm_rows_exponent, bitmap_sddmm_dim_exponent) read as their defaults below when
// missing.

// The numbers the rule above reads, for one device: the bounds on passing-row counts and
// fractions at which a shard's search moves from SDDMM to gather to dense. Every count and
// fraction is >= 0, every fraction and share <= 1, and a fraction or share of 1 means no bound.
// Fields added after the first stored format (sddmm_dim_exponent, gather_rows_exponent,
// gather_rows_dim_exponent, bitmap_sddmm_base_rows, bitmap_sddmm_max_share,
// bitmap_sddmm_rows_exponent, bitmap_sddmm_dim_exponent and the bitmap_gather_* power law) read
// as their defaults below when missing. Users see it as the opaque PlannerThresholds
// (include/sieve/db.h); ToThresholds and FromThresholds below convert.
struct PlannerRule {
  uint64_t sddmm_max_rows = 0;  // at dim 128 (kReferenceDim)
  double sddmm_dim_exponent = 0;
  double sddmm_max_fraction = 1.0;
  double gather_min_rows = 0;
  double gather_scale = 0;
  double gather_max_fraction = 0;
  // The gather cap's fall with the rows past 10^6: gather_max_fraction · (10^6 / rows)^e, e =
  // gather_rows_exponent · (128 / dim)^gather_rows_dim_exponent (the fall weakens with dim).
  double gather_rows_exponent = 0;
  double gather_rows_dim_exponent = 0;
  uint64_t bitmap_sddmm_max_rows = 0;
  double bitmap_sddmm_max_fraction = 1.0;
  double bitmap_sddmm_base_rows = 0;
  double bitmap_sddmm_max_share = 1.0;
  // bitmap_sddmm_max_fraction's fall with the rows, · (10^6 / rows)^bitmap_sddmm_rows_exponent,
  // and with the dim, · (128 / dim)^bitmap_sddmm_dim_exponent.
  double bitmap_sddmm_rows_exponent = 0;
  double bitmap_sddmm_dim_exponent = 0;
  bool bitmap_union_gather = false;
  double bitmap_gather_max_fraction = 0;
  // 0: the union gather's bound is bitmap_gather_max_fraction at every shape.
  double bitmap_gather_scale = 0;
  double bitmap_gather_dim_exponent = 0;
  double bitmap_gather_rows_exponent = 0;
  // Where the numbers came from ("defaults: ..." or "calibrated <date> on <device>"), shown by
  // explain.
  std::string source;

  // The documented defaults of the CPU backend (measured on the dev VM) and of the GPU
  // backend (cuVS 26.10's constants, its 2,000-row SDDMM bound taken at dim 128 and scaled as
  // (128 / dim)^0.5), used for a device with no stored calibration.
  static PlannerRule CpuDefaults();
  static PlannerRule GpuDefaults();
  // What a device with no stored calibration plans with, by its executor name: CpuDefaults()
  // for "cpu"; for a GPU the project has calibrated (NVIDIA H200: "gpu:" and a name holding
  // "H200"), the thresholds shipped for it; for any other GPU, GpuDefaults() (run `sieve
  // calibrate --quick` there).
  static PlannerRule DefaultsFor(const std::string& executor_name);
  // One JSON object holding "version" (PlannerThresholds::kVersion) and every field; FromJson
  // returns InvalidArgument (naming the field) for malformed text, a missing field (the later
  // fields named above may be missing), or a version newer than kVersion.
  std::string ToJson() const;
  static Status FromJson(const std::string& text, PlannerRule* out);
};

// The public, opaque form of a rule, and back (FromThresholds: InvalidArgument for empty
// thresholds).
PlannerThresholds ToThresholds(const PlannerRule& rule);
Status FromThresholds(const PlannerThresholds& thresholds, PlannerRule* rule);

// The dim at which PlannerRule::sddmm_max_rows and bitmap_gather_scale apply as they are,
// and the rows at which bitmap_gather_scale does.
inline constexpr double kReferenceDim = 128;
inline constexpr double kReferenceRows = 1e6;

struct PlanInput {
  uint64_t rows = 0;  // rows in the shard's snapshot (deleted included: they are still scanned)
  uint32_t dim = 0;
  uint32_t num_queries = 0;
  uint32_t k = 0;
  bool per_query = false;
  uint64_t passing_rows = 0;  // bitset: the set's count; bitmap: the mean per-query count
  uint64_t union_rows = 0;    // bitmap: the size of the union of the per-query sets
  // bitmap: the largest per-query count (per-query SDDMM pads every query's list to it);
  // 0 = unknown, taken as passing_rows.
  uint64_t max_passing_rows = 0;
};

// Returns kSddmm, kGather or kDense; never kAuto. A filter per query whose sets are all the
// same set (the mean per-query count equals the union's) is planned as that one set, by the
// bitset rule: the executors search such a batch as one filter.
SearchPath ChoosePath(const PlannerRule& t, const PlanInput& in);

// How many candidates a shard's executor returns for a top-k of k: k plus a margin (at least 8,
// at most 64), so that float32 rounding near the k-th place cannot push a true neighbour out
// before the float64 refinement re-ranks them.
uint32_t CandidateCount(uint32_t k);

// What the planner decides for one shard's share of a batch.
struct ShardDecision {
  SearchPath path = SearchPath::kDense;  // never kAuto
  // Candidates the executor returns per query: CandidateCount(k), at most the largest
  // passing count of the batch's filters on this shard (no more rows can pass).
  uint32_t candidates = 0;
};

// The decision for one shard: `forced` (SearchOptions::path) unless it is kAuto, else
// ChoosePath(t, in); `max_passing_rows` is the largest passing count of any of the batch's
// filters on the shard.
ShardDecision PlanShard(const PlannerRule& t, const PlanInput& in, SearchPath forced,
                        uint64_t max_passing_rows);

// How a batch's filters reach the executors: "none" (one filter that every row passes),
// "bitset" (one filter for the batch) or "bitmap" (a filter per query: distinct texts).
const char* FilterModeName(size_t distinct_filters, bool matches_all);

// Whether a filter per query has the same set for every query (see ChoosePath).
bool SameSetForEveryQuery(const PlanInput& in);

// The bitset SDDMM count bound at this dim: sddmm_max_rows * (128 / dim)^sddmm_dim_exponent
// (infinite when sddmm_max_rows is UINT64_MAX).
double SddmmMaxRows(const PlannerRule& t, uint32_t dim);

// The bitset gather bound of cuVS 26.10's form: (1 - gather_min_rows / rows) *
// min(gather_scale / sqrt(dim), cap), the cap gather_max_fraction scaled by
// (10^6 / rows)^(gather_rows_exponent * (128 / dim)^gather_rows_dim_exponent) past 10^6 rows;
// gather needs sel < this (so <= 0 means never).
double GatherMaxSelectivity(const PlannerRule& t, uint64_t rows, uint32_t dim);

// The bitmap per-query SDDMM fraction against dense: bitmap_sddmm_max_fraction ·
// (10^6 / rows)^bitmap_sddmm_rows_exponent · (128 / dim)^bitmap_sddmm_dim_exponent.
double BitmapSddmmMaxFraction(const PlannerRule& t, uint64_t rows, uint32_t dim);

// The bitmap union gather bound: union / rows must stay below it. bitmap_gather_max_fraction,
// and with bitmap_gather_scale > 0 also at most bitmap_gather_scale · (dim / 128)^
// bitmap_gather_dim_exponent · (10^6 / rows)^bitmap_gather_rows_exponent (0 without
// bitmap_union_gather).
double BitmapGatherMaxFraction(const PlannerRule& t, uint64_t rows, uint32_t dim);

// The thresholds in one line, as the rule reads them: "sddmm_max_rows N at dim 128 x
// (128/dim)^E, gather min_rows ..., bitmap sddmm: ..., union gather ...".
std::string DescribeThresholds(const PlannerRule& t);

// Whether PlannerRule::DefaultsFor(executor_name) holds thresholds the project measured
// on that device (a GPU it has calibrated) rather than a backend's generic defaults.
bool HasShippedThresholds(const std::string& executor_name);

// cuVS 26.10's rule exactly (kSddmmMaxPassingRows 2000 at every dim, ...): GpuDefaults()
// without the dim scaling of the SDDMM bound. For benchmarks that compare rules.
PlannerRule Cuvs2610Thresholds();

// The old cuVS rule (before 26.10, `sparsity < 0.9` → dense): SDDMM while at most 10% of the
// (query, row) pairs pass, else dense. For benchmarks that compare rules.
SearchPath ChooseOldCuvsPath(const PlanInput& in);

}  // namespace sieve

#endif  // SIEVE_QUERY_PLANNER_H_
