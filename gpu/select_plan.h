// Copyright 2026 The Sieve Authors.
//
// The GPU executor's top-k plan for one chunk of queries of the gather or dense path: cuBLAS
// tiles and select_k over every column, the candidate scan (an exact sample threshold, then only
// rows that can beat it, rescored exactly), or the threshold select (levels of growing row
// prefixes through gpu::ThresholdSelect, the band under the last k-th best rescored exactly).
// Decided here, on the host, once a chunk; the executor only carries the plan out and reports
// it (ExecResult::select_plan). Host-only: no CUDA type appears, and it runs without a GPU.

#ifndef SIEVE_GPU_SELECT_PLAN_H_
#define SIEVE_GPU_SELECT_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sieve/gpu_options.h"

namespace sieve::gpu {

// Largest distance buffer one pass materialises (queries × columns × 4 bytes). 1 GiB keeps
// tiles long (1.3M columns at 200 GEMM columns) while leaving room on any data-centre GPU.
inline constexpr size_t kTileBudgetBytes = size_t{1} << 30;
// The candidate scan and the threshold select need at least this many columns: below it the
// single-tile exact path won on the H200 (tools/bench/results/2026-11-29-h200-tuned/).
inline constexpr uint64_t kMinCandidateColumns = 65536;
// The largest k the threshold select's final top-k sorts.
inline constexpr uint32_t kThresholdMaxK = 4096;

enum class TopKStrategy : uint8_t {
  kTiles = 0,       // cuBLAS tiles, select_k per tile and over the tiles
  kCandidates = 1,  // the candidate scan
  kThreshold = 2,   // the threshold select
};
const char* TopKStrategyName(TopKStrategy s);  // "select_k", "candidates", "threshold"

// What the plan depends on, for one chunk of the gather or dense path.
struct SelectInput {
  uint32_t k = 0;        // results a query
  uint32_t queries = 0;  // in the chunk
  uint32_t dim = 0;
  uint64_t columns = 0;        // rows scored: the shard's, or the gathered block's
  bool float16_rows = false;   // the shard's rows are float16
  bool split_queries = false;  // the GEMM takes each query as two float16 halves (2 × queries)
  bool gathered = false;       // the columns are a gathered block (the gather path)
  bool per_query = false;      // a filter per query (bitmap)
  // A candidate list of this search overflowed: it reruns on the full path.
  bool fallback = false;
};

struct SelectPlan {
  TopKStrategy strategy = TopKStrategy::kTiles;
  // kCandidates: the exact sample is the first `sample` columns; each query keeps at most
  // `cap` candidates; dot products come in tiles of `tile_bytes`.
  uint64_t sample = 0;
  uint64_t cap = 0;
  size_t tile_bytes = 0;
  // kThreshold: level i selects among the first level_ends[i] columns (the last is every
  // column) with level_caps[i] candidate slots a query.
  std::vector<uint64_t> level_ends;
  std::vector<uint64_t> level_caps;

  // For explain, e.g. "threshold: 4 levels, ends 4096/65536/1048576/10000000".
  std::string ToString() const;
};

// The plan for `in` under `options` (which must Validate()).
SelectPlan PlanSelect(const SelectInput& in, const GpuExecutorOptions& options);

// The candidate scan's sizes for `columns` columns and k: an exact sample of about
// candidate_sample_factor · sqrt(4 k' columns) columns (whole multiples of 1,024, at least k),
// and a list of about 4 k' columns / sample candidates a query, k' = max(k, kCandidateMinK).
// A query keeps about k · columns / sample rows, but for small k that count spreads widely
// (k = 1: the rows beating the best of a sample are geometric in number), so the list is sized
// as for kCandidateMinK: 32 times the mean at k = 1, where 4 times overflowed for some query of
// most batches of a hundred.
inline constexpr uint32_t kCandidateMinK = 8;
void CandidateSizes(uint64_t columns, uint32_t k, double sample_factor, uint64_t* sample,
                    uint64_t* cap);

// The threshold select's levels over `columns` rows: each level's rows are a prefix of the next
// one's, the last is every row. Level 0 keeps every key of its prefix; a later level keeps the
// keys above the previous level's k-th best score less twice the error bound, about
// k · (its rows) / (the previous level's rows) a query. With L levels each keeps about
// e = (k^(L-1) · n)^(1/L) a query when the prefixes grow by e / k: as many levels as fit (at
// most max_levels) with every prefix at most a quarter of the rows. caps[i]: the slots a query
// has at level i (8× the expected count, at least 16,384: small k has a wide spread). Empty
// when no prefix fits.
void ThresholdLevels(uint64_t columns, uint32_t k, uint32_t max_levels, std::vector<uint64_t>* ends,
                     std::vector<uint64_t>* caps);

// The candidate scan's tile: options.candidate_tile_bytes when set; else a gathered block of at
// most 64 MiB of dot products is one tile (one tile beat two of 32 MiB at 100,000 gathered rows
// and 100 queries on the H200); else 32 MiB, to stay in L2.
size_t CandidateTileBytes(const GpuExecutorOptions& options, bool gathered, size_t block_bytes);

}  // namespace sieve::gpu

#endif  // SIEVE_GPU_SELECT_PLAN_H_
