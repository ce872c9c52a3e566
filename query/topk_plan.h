// Copyright 2026 The Sieve Authors.
//
// The top-k plan of one shard's search: how its executor selects the k best of the rows it
// scores, and at what precision it multiplies queries by rows. The planner decides it
// (PlanTopK) from the shard, the batch and what the executor can do (TopKAbilities); the
// executor carries it out and explain shows it (ShardPlan::select, products, select_plan).
//
//   heap        the CPU: every passing row scored in float32, a heap of the k best a query
//   select_k    the GPU's full path: cuBLAS tiles of every column's distance, select_k per tile
//               and over the tiles (and the SDDMM path, which selects as it scores)
//   candidates  the GPU's candidate scan over at least kMinCandidateColumns columns: an exact
//               threshold from a sample of the columns, then only the rows that can beat it
//               are kept, and those that can still be in the top-k rescored exactly
//   threshold   the GPU's threshold select over float16 rows: levels of growing row prefixes,
//               each keeping only the rows above the previous level's k-th best, the band
//               under the last k-th best rescored exactly
//
// Products (what a query times a row is computed and kept in before any exact rescoring):
//   float32     float32 inputs and sums (float16 rows: each query split into two float16
//               halves, which carry 22 of its 24 bits, summed in float32)
//   tf32        float32 rows on TF32 tensor cores (inputs rounded to 10 mantissa bits): the
//               candidate scan, l2 and ip, where the error bound is finite
//   float16     float16 rows, each product rounded once to float16 (the candidate scan where no
//               product can overflow float16, l2 and ip)
//   int8        the dense candidate scan over int8 codes kept beside the resident rows (float16
//               or float32 rows, l2, ip and cosine; GpuExecutorOptions::candidate_int8): int32
//               dots on the tensor cores, each row kept within its own deterministic error bound
//               (query/int8_codes.h) and the band rescored exactly
// Every combination is exact: a product's error is bounded and the rows it could misorder are
// rescored exactly (docs/planner.md#top-k).
//
// Host-only; no CUDA type appears here, and the planner tests run without a GPU.

#ifndef SIEVE_QUERY_TOPK_PLAN_H_
#define SIEVE_QUERY_TOPK_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sieve/db.h"
#include "sieve/gpu_options.h"
#include "sieve/types.h"

namespace sieve {

// Largest distance buffer one GPU pass materialises (queries × columns × 4 bytes). 1 GiB keeps
// tiles long (1.3M columns at 200 GEMM columns) while leaving room on any data-centre GPU.
inline constexpr size_t kTileBudgetBytes = size_t{1} << 30;
// The candidate scan and the threshold select need at least this many columns: below it the
// single-tile exact path won on the H200 (tools/bench/results/2026-11-29-h200-tuned/).
inline constexpr uint64_t kMinCandidateColumns = 65536;
// The largest k the threshold select's final top-k sorts.
inline constexpr uint32_t kThresholdMaxK = 4096;
// The candidate scan sizes its lists as for at least this k (CandidateSizes).
inline constexpr uint32_t kCandidateMinK = 8;

enum class TopKStrategy : uint8_t {
  kNone = 0,  // not planned: an executor refuses a request without a plan it can carry out
  kHeap,
  kSelectK,
  kCandidates,
  kThreshold,
};
// "none", "heap", "select_k", "candidates", "threshold".
const char* TopKStrategyName(TopKStrategy s);

enum class Products : uint8_t { kFloat32 = 0, kTf32, kFloat16, kInt8 };
// "float32", "tf32", "float16", "int8".
const char* ProductsName(Products p);

// What an executor can carry out, for PlanTopK (Executor::topk_abilities).
struct TopKAbilities {
  // false: the CPU, whose one strategy is the heap; true: a GPU, with select_k, the candidate
  // scan and the threshold select, tuned by `options`.
  bool gpu = false;
  GpuExecutorOptions options;
  // The most queries one GEMM pass takes (the GPU searches larger batches in chunks of this).
  uint32_t max_query_chunk = 1;
  // The threshold select's tensor-core kernel takes float16 rows of a dim that is a multiple of
  // threshold_dim_multiple, at most threshold_max_dim (0: no threshold select).
  uint32_t threshold_max_dim = 0;
  uint32_t threshold_dim_multiple = 1;
  // Rows of one page of resident rows (the threshold select's prefixes are whole pages).
  uint32_t page_rows = 64;
  // Whether the dense candidate scan can multiply int8 codes of the resident rows (the GPU's
  // int8 tensor cores); the plan uses them where options.candidate_int8 is on.
  bool int8_products = false;
};

// What the plan depends on, for one shard's share of a batch.
struct TopKInput {
  SearchPath path = SearchPath::kDense;  // never kAuto
  Metric metric = Metric::kL2;
  DType dtype = DType::kFloat32;
  uint32_t k = 0;        // results a query the executor returns
  uint32_t queries = 0;  // in the batch
  uint32_t dim = 0;
  // The columns the top-k selects among: dense, the shard's rows; gather, the passing rows (a
  // filter per query: their union).
  uint64_t columns = 0;
  // A filter per query whose sets differ (a batch whose queries share one set is searched as
  // with one filter: SameSetForEveryQuery).
  bool per_query = false;
  // The largest squared norm of a query and of a row (an upper bound: VectorArena's), and the
  // power of two the GPU divides queries by before splitting them into float16 halves
  // (QueryScale): what decides whether float16 and TF32 products fit.
  double max_query_sq_norm = 0;
  double max_row_sq_norm = 0;
  double query_scale = 1;
};

struct TopKPlan {
  TopKStrategy strategy = TopKStrategy::kNone;
  Products products = Products::kFloat32;
  // kCandidates: the exact sample is the first `sample` columns; each query keeps at most `cap`
  // candidates; dot products come in tiles of `tile_bytes`.
  uint64_t sample = 0;
  uint64_t cap = 0;
  size_t tile_bytes = 0;
  // kThreshold: level i selects among the first level_ends[i] columns (the last is every
  // column) with level_caps[i] candidate slots a query.
  std::vector<uint64_t> level_ends;
  std::vector<uint64_t> level_caps;

  // For explain: "select_k", "candidates: sample 6144, cap 4096, tile 32 MiB, tf32 products",
  // "threshold: 4 levels, ends 4096/65536/1048576/10000000, caps ...".
  std::string ToString() const;
};

// The plan for `in` on an executor that can do `abilities` (whose options must Validate()).
TopKPlan PlanTopK(const TopKInput& in, const TopKAbilities& abilities);

// What the GPU falls back to when a candidate list overflowed (a query kept more rows than its
// list holds): select_k over every column, float32 products.
TopKPlan FullPlan();

// The power of two, at least max_abs, that the GPU divides queries by before splitting them
// into float16 halves (1 for zero or denormal-small queries, which stay finite).
float QueryScale(float max_abs);

// Whether the candidate scan may keep float16 rows' products rounded to float16: l2 and ip
// (cosine divides by the norms, which would scale the absolute error of a tiny product without
// bound), and no product of a query's high halves (the query over its scale, each element
// within 2^-11 of it) with a row can reach 2^15, half of float16's largest finite value
// (Cauchy-Schwarz over the largest norms; false for NaN or infinite norms).
bool Float16ProductsFit(Metric metric, double max_query_sq_norm, double query_scale,
                        double max_row_sq_norm);
// Whether float32 rows may multiply on TF32 tensor cores: l2 and ip, and finite norms (their
// error bound, Tf32AbsoluteError, is then finite).
bool Tf32ProductsFit(Metric metric, uint32_t dim, double max_query_sq_norm,
                     double max_row_sq_norm);
// Whether int8 products can be planned: the dense path (the codes are the resident rows'; a
// gathered block has none), dim at most kInt8MaxDim, and finite norms whose product stays far
// inside float32 (|q| |x| <= 2^100), so that the estimate, its bound and the l2 expansion are
// finite. Any metric: each row's bound is its own (query/int8_codes.h).
bool Int8ProductsFit(SearchPath path, uint32_t dim, double max_query_sq_norm,
                     double max_row_sq_norm);
// The absolute part of the TF32 products' error bound: inputs below float32's normal range may
// be flushed to zero, moving a dot by at most 2^-126 sqrt(dim) (|q| + |x|), and so may products
// below it, 2^-126 each; twice their sum over the largest norms, at least float32's smallest
// normal value.
float Tf32AbsoluteError(uint32_t dim, double max_query_sq_norm, double max_row_sq_norm);

// The candidate scan's sizes for `columns` columns and k: an exact sample of about
// sample_factor · sqrt(4 k' columns) columns (whole multiples of 1,024, at least k), and a list
// of about 4 k' columns / sample candidates a query, k' = max(k, kCandidateMinK). A query keeps
// about k · columns / sample rows, but for small k that count spreads widely (k = 1: the rows
// beating the best of a sample are geometric in number), so the list is sized as for
// kCandidateMinK: 32 times the mean at k = 1, where 4 times overflowed for some query of most
// batches of a hundred.
void CandidateSizes(uint64_t columns, uint32_t k, double sample_factor, uint64_t* sample,
                    uint64_t* cap);

// The threshold select's levels over `columns` rows, in pages of `page_rows`: each level's
// rows are a prefix of the next one's, the last is every row. Level 0 keeps every key of its
// prefix; a later level keeps the keys above the previous level's k-th best score less twice
// the error bound, about k · (its rows) / (the previous level's rows) a query. With L levels
// each keeps about e = (k^(L-1) · n)^(1/L) a query when the prefixes grow by e / k: as many
// levels as fit (at most max_levels) with every prefix at most a quarter of the rows. caps[i]:
// the slots a query has at level i (8× the expected count, at least 16,384: small k has a wide
// spread). Empty when no prefix fits.
void ThresholdLevels(uint64_t columns, uint32_t k, uint32_t max_levels, uint32_t page_rows,
                     std::vector<uint64_t>* ends, std::vector<uint64_t>* caps);

// The candidate scan's tile: options.candidate_tile_bytes when set; else a gathered block of at
// most 64 MiB of dot products is one tile (one launch beats two there); else 32 MiB, to stay
// in L2.
size_t CandidateTileBytes(const GpuExecutorOptions& options, bool gathered, size_t block_bytes);

}  // namespace sieve

#endif  // SIEVE_QUERY_TOPK_PLAN_H_
