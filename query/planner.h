// Copyright 2026 The Sieve Authors.
//
// The planner: picks the SDDMM, gather or dense path for one shard's share of a batch from the
// absolute number of passing rows, the shard's rows and dim, against thresholds calibrated for
// the device that will run it.

#ifndef SIEVE_QUERY_PLANNER_H_
#define SIEVE_QUERY_PLANNER_H_

#include <cstdint>
#include <string>

#include "sieve/db.h"

namespace sieve {

struct PlannerThresholds {
  // Bitset (one filter): SDDMM while n_pass <= sddmm_max_rows.
  uint64_t sddmm_max_rows = 0;
  // Bitset: gather while n_pass <= gather_max_fraction * rows (above SDDMM's range).
  double gather_max_fraction = 0;
  // Bitmap (a filter per query): SDDMM while the mean per-query n_pass <= this.
  uint64_t bitmap_sddmm_max_rows = 0;
  // Bitmap: gather over the union while |union| <= bitmap_gather_max_fraction * rows.
  double bitmap_gather_max_fraction = 0;
  std::string source;  // where the numbers came from, shown by explain

  // The measured defaults for the CPU backend and for the GPU backend.
  static PlannerThresholds CpuDefaults();
  static PlannerThresholds GpuDefaults();
};

struct PlanInput {
  uint64_t rows = 0;  // rows in the shard's snapshot (deleted included: they are still scanned)
  uint32_t dim = 0;
  uint32_t num_queries = 0;
  uint32_t k = 0;
  bool per_query = false;
  uint64_t passing_rows = 0;  // bitset: the set's count; bitmap: the mean per-query count
  uint64_t union_rows = 0;    // bitmap: the size of the union of the per-query sets
};

// Returns kSddmm, kGather or kDense; never kAuto.
SearchPath ChoosePath(const PlannerThresholds& t, const PlanInput& in);

}  // namespace sieve

#endif  // SIEVE_QUERY_PLANNER_H_
