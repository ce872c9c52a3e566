// Copyright 2026 The Sieve Authors.

#include "query/topk_plan.h"

#include "query/int8_codes.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace sieve {

const char* TopKStrategyName(TopKStrategy s) {
  switch (s) {
    case TopKStrategy::kNone:
      return "none";
    case TopKStrategy::kHeap:
      return "heap";
    case TopKStrategy::kSelectK:
      return "select_k";
    case TopKStrategy::kCandidates:
      return "candidates";
    case TopKStrategy::kThreshold:
      return "threshold";
  }
  return "?";
}

const char* ProductsName(Products p) {
  switch (p) {
    case Products::kFloat32:
      return "float32";
    case Products::kTf32:
      return "tf32";
    case Products::kFloat16:
      return "float16";
    case Products::kInt8:
      return "int8";
  }
  return "?";
}

float QueryScale(float max_abs) {
  int e = 0;
  std::frexp(max_abs, &e);  // max_abs < 2^e
  const float scale = max_abs > 0 ? std::ldexp(1.0f, e) : 1.0f;
  return scale >= std::ldexp(1.0f, -100) ? scale : 1.0f;  // denormal queries: keep finite
}

bool Float16ProductsFit(Metric metric, double max_query_sq_norm, double query_scale,
                        double max_row_sq_norm) {
  if (metric == Metric::kCosine) return false;
  const double bound = std::sqrt(max_query_sq_norm) / query_scale * (1.0 + 0x1p-10) *
                       std::sqrt(max_row_sq_norm);
  return bound < 32768.0;  // false for NaN and infinite norms
}

bool Tf32ProductsFit(Metric metric, uint32_t dim, double max_query_sq_norm,
                     double max_row_sq_norm) {
  if (metric == Metric::kCosine) return false;
  return std::isfinite(Tf32AbsoluteError(dim, max_query_sq_norm, max_row_sq_norm));
}

bool Int8ProductsFit(SearchPath path, uint32_t dim, double max_query_sq_norm,
                     double max_row_sq_norm) {
  if (path != SearchPath::kDense || dim == 0 || dim > kInt8MaxDim) return false;
  const double product = std::sqrt(max_query_sq_norm) * std::sqrt(max_row_sq_norm);
  return product <= 0x1p100;  // false for NaN
}

float Tf32AbsoluteError(uint32_t dim, double max_query_sq_norm, double max_row_sq_norm) {
  const double d = dim;
  const double bound =
      0x1p-125 * (d + std::sqrt(d) * (std::sqrt(max_query_sq_norm) + std::sqrt(max_row_sq_norm)));
  if (!std::isfinite(bound)) return std::numeric_limits<float>::infinity();
  return std::nextafter(std::max(static_cast<float>(bound), 0x1p-126f),
                        std::numeric_limits<float>::infinity());
}

void CandidateSizes(uint64_t columns, uint32_t k, double sample_factor, uint64_t* sample,
                    uint64_t* cap) {
  const double kd = std::max(k, kCandidateMinK);
  uint64_t s = static_cast<uint64_t>(
      std::ceil(sample_factor * std::sqrt(4.0 * kd * static_cast<double>(columns))));
  s = std::max<uint64_t>((s + 1023) / 1024 * 1024, std::max<uint64_t>(k, 1024));
  uint64_t c = static_cast<uint64_t>(std::ceil(4.0 * kd * static_cast<double>(columns) / s));
  c = std::max<uint64_t>((c + 1023) / 1024 * 1024, 4 * uint64_t{k});
  *sample = s;
  *cap = std::min<uint64_t>(c, columns);
}

void ThresholdLevels(uint64_t columns, uint32_t k, uint32_t max_levels, uint32_t page_rows,
                     std::vector<uint64_t>* ends, std::vector<uint64_t>* caps) {
  const double kd = k, n = static_cast<double>(columns);
  auto pages = [page_rows](double x) {
    return (static_cast<uint64_t>(std::ceil(x)) + page_rows - 1) / page_rows * page_rows;
  };
  ends->clear();
  caps->clear();
  for (int levels = static_cast<int>(max_levels); levels >= 2; --levels) {
    const double e = std::pow(std::pow(kd, levels - 1) * n, 1.0 / levels);
    std::vector<uint64_t> prefix = {std::max(pages(e), pages(4 * kd))};
    for (int i = 1; i < levels - 1; ++i) {
      prefix.push_back(pages(static_cast<double>(prefix.back()) * e / kd));
    }
    bool ok = true;
    for (size_t i = 0; i < prefix.size(); ++i) {
      ok = ok && prefix[i] * 4 <= columns && (i == 0 || prefix[i] > prefix[i - 1]);
    }
    if (!ok) continue;
    *ends = prefix;
    ends->push_back(columns);
    caps->push_back(prefix[0]);
    for (size_t i = 1; i < ends->size(); ++i) {
      const double expect = kd * static_cast<double>((*ends)[i]) / (*ends)[i - 1];
      caps->push_back(std::min<uint64_t>((*ends)[i], std::max<uint64_t>(pages(8 * expect), 16384)));
    }
    return;
  }
}

size_t CandidateTileBytes(const GpuExecutorOptions& options, bool gathered, size_t block_bytes) {
  constexpr size_t kGatheredTileBytes = size_t{64} << 20;
  if (options.candidate_tile_bytes > 0) return options.candidate_tile_bytes;
  if (gathered && block_bytes <= kGatheredTileBytes) return kGatheredTileBytes;
  return size_t{32} << 20;
}

namespace {

constexpr uint64_t kMaxColumns = static_cast<uint64_t>(std::numeric_limits<int32_t>::max());

// The queries of one GEMM pass: the batch, in chunks of max_query_chunk.
uint32_t ChunkQueries(const TopKInput& in, const TopKAbilities& a) {
  return std::max<uint32_t>(1, std::min(in.queries, std::max<uint32_t>(a.max_query_chunk, 1)));
}

// The candidate scan: enough columns for its sample to pay, buffers within the budget (the
// sample's GEMM takes float16 queries as two halves).
bool CandidatesFit(const TopKInput& in, uint32_t queries, uint64_t sample, uint64_t cap) {
  const uint64_t gemm_cols = in.dtype == DType::kFloat16 ? 2 * uint64_t{queries} : queries;
  return in.columns >= kMinCandidateColumns && in.columns >= 4 * sample &&
         in.columns <= kMaxColumns && gemm_cols * sample * 4 <= kTileBudgetBytes &&
         size_t{queries} * cap * 16 <= kTileBudgetBytes;
}

// The threshold select: float16 rows of a dim its tensor-core kernel takes, k within what its
// final top-k sorts, enough columns for sampling to pay, buffers within the budget.
bool ThresholdFits(const TopKInput& in, const TopKAbilities& a, uint32_t queries,
                   const std::vector<uint64_t>& ends, const std::vector<uint64_t>& caps) {
  if (in.dtype != DType::kFloat16 || a.threshold_max_dim == 0) return false;
  if (in.dim > a.threshold_max_dim || in.dim % std::max<uint32_t>(a.threshold_dim_multiple, 1)) {
    return false;
  }
  if (in.k > kThresholdMaxK || in.columns < kMinCandidateColumns || in.columns > kMaxColumns) {
    return false;
  }
  if (ends.size() < 2 || caps.empty()) return false;
  const uint64_t most = *std::max_element(caps.begin(), caps.end());
  return size_t{queries} * (in.k + most) * 8 <= kTileBudgetBytes;
}

}  // namespace

TopKPlan FullPlan() {
  TopKPlan plan;
  plan.strategy = TopKStrategy::kSelectK;
  return plan;
}

TopKPlan PlanTopK(const TopKInput& in, const TopKAbilities& abilities) {
  TopKPlan plan;
  if (!abilities.gpu) {
    plan.strategy = TopKStrategy::kHeap;
    return plan;
  }
  plan = FullPlan();
  const GpuExecutorOptions& o = abilities.options;
  if (in.path == SearchPath::kSddmm || !o.candidate_selection) return plan;
  const bool gathered = in.path == SearchPath::kGather;
  const uint32_t queries = ChunkQueries(in, abilities);
  // Int8 codes, where allowed, before the threshold select: one byte a dimension read, against
  // its two (tools/bench/device_int8.sh measures both).
  if (abilities.int8_products && o.candidate_int8 &&
      Int8ProductsFit(in.path, in.dim, in.max_query_sq_norm, in.max_row_sq_norm)) {
    CandidateSizes(in.columns, in.k, o.candidate_sample_factor, &plan.sample, &plan.cap);
    if (CandidatesFit(in, queries, plan.sample, plan.cap)) {
      plan.strategy = TopKStrategy::kCandidates;
      plan.tile_bytes = CandidateTileBytes(o, false, size_t{4} * queries * in.columns);
      plan.products = Products::kInt8;
      return plan;
    }
    plan = FullPlan();
  }
  // Over a gathered block only one filter for the batch lets the threshold select read every
  // row of it unfiltered; a filter per query keeps the candidate scan there.
  const bool threshold_wanted =
      o.threshold_select && (!gathered || (!in.per_query && in.columns >= o.threshold_gather_min_rows));
  if (threshold_wanted) {
    ThresholdLevels(in.columns, in.k, o.threshold_max_levels, abilities.page_rows,
                    &plan.level_ends, &plan.level_caps);
    if (ThresholdFits(in, abilities, queries, plan.level_ends, plan.level_caps)) {
      plan.strategy = TopKStrategy::kThreshold;
      return plan;
    }
    plan.level_ends.clear();
    plan.level_caps.clear();
  }
  CandidateSizes(in.columns, in.k, o.candidate_sample_factor, &plan.sample, &plan.cap);
  if (!CandidatesFit(in, queries, plan.sample, plan.cap)) return FullPlan();
  plan.strategy = TopKStrategy::kCandidates;
  // The scan's GEMM takes one column a query (float16 rows: the queries' high halves).
  plan.tile_bytes = CandidateTileBytes(o, gathered, size_t{4} * queries * in.columns);
  if (in.dtype == DType::kFloat16) {
    if (Float16ProductsFit(in.metric, in.max_query_sq_norm, in.query_scale, in.max_row_sq_norm)) {
      plan.products = Products::kFloat16;
    }
  } else if (o.candidate_tf32 &&
             Tf32ProductsFit(in.metric, in.dim, in.max_query_sq_norm, in.max_row_sq_norm)) {
    plan.products = Products::kTf32;
  }
  return plan;
}

std::string TopKPlan::ToString() const {
  std::string s = TopKStrategyName(strategy);
  auto list = [](const std::vector<uint64_t>& v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) out += (i ? "/" : "") + std::to_string(v[i]);
    return out;
  };
  switch (strategy) {
    case TopKStrategy::kCandidates:
      s += ": sample " + std::to_string(sample) + ", cap " + std::to_string(cap) + ", tile " +
           std::to_string(tile_bytes >> 20) + " MiB, " + ProductsName(products) + " products";
      break;
    case TopKStrategy::kThreshold:
      s += ": " + std::to_string(level_ends.size()) + " levels, ends " + list(level_ends) +
           ", caps " + list(level_caps);
      break;
    default:
      break;
  }
  return s;
}

}  // namespace sieve
