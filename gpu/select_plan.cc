// Copyright 2026 The Sieve Authors.

#include "gpu/select_plan.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "gpu/page_pool.h"
#include "gpu/threshold_select/threshold_select.h"

namespace sieve::gpu {

const char* TopKStrategyName(TopKStrategy s) {
  switch (s) {
    case TopKStrategy::kTiles:
      return "select_k";
    case TopKStrategy::kCandidates:
      return "candidates";
    case TopKStrategy::kThreshold:
      return "threshold";
  }
  return "?";
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

void ThresholdLevels(uint64_t columns, uint32_t k, uint32_t max_levels, std::vector<uint64_t>* ends,
                     std::vector<uint64_t>* caps) {
  const double kd = k, n = static_cast<double>(columns);
  auto pages = [](double x) {
    return (static_cast<uint64_t>(std::ceil(x)) + kPageRows - 1) / kPageRows * kPageRows;
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

// The candidate scan: enough columns for its sample to pay, buffers within the budget.
bool CandidatesFit(const SelectInput& in, uint64_t sample, uint64_t cap) {
  const uint64_t gemm_cols = in.split_queries ? 2 * uint64_t{in.queries} : in.queries;
  return in.columns >= kMinCandidateColumns && in.columns >= 4 * sample &&
         in.columns <= kMaxColumns && gemm_cols * sample * 4 <= kTileBudgetBytes &&
         size_t{in.queries} * cap * 16 <= kTileBudgetBytes;
}

// The threshold select: float16 rows its tensor-core kernel takes, k within what its final
// top-k sorts, enough columns for sampling to pay, buffers within the budget.
bool ThresholdFits(const SelectInput& in, const std::vector<uint64_t>& ends,
                   const std::vector<uint64_t>& caps) {
  if (!in.float16_rows || !in.split_queries) return false;
  if (!ThresholdSelectUsesTensorCores(KeyType::kFloat16, in.dim)) return false;
  if (in.k > kThresholdMaxK || in.columns < kMinCandidateColumns || in.columns > kMaxColumns) {
    return false;
  }
  if (ends.size() < 2 || caps.empty()) return false;
  const uint64_t most = *std::max_element(caps.begin(), caps.end());
  return size_t{in.queries} * (in.k + most) * 8 <= kTileBudgetBytes;
}

}  // namespace

SelectPlan PlanSelect(const SelectInput& in, const GpuExecutorOptions& options) {
  SelectPlan plan;
  if (!options.candidate_selection || in.fallback) return plan;
  // Over a gathered block only one filter for the batch lets the threshold select read every
  // row of it unfiltered; a bitmap keeps the candidate scan there.
  const bool threshold_wanted =
      options.threshold_select &&
      (!in.gathered || (!in.per_query && in.columns >= options.threshold_gather_min_rows));
  if (threshold_wanted) {
    ThresholdLevels(in.columns, in.k, options.threshold_max_levels, &plan.level_ends,
                    &plan.level_caps);
    if (ThresholdFits(in, plan.level_ends, plan.level_caps)) {
      plan.strategy = TopKStrategy::kThreshold;
      return plan;
    }
    plan.level_ends.clear();
    plan.level_caps.clear();
  }
  CandidateSizes(in.columns, in.k, options.candidate_sample_factor, &plan.sample, &plan.cap);
  if (CandidatesFit(in, plan.sample, plan.cap)) {
    plan.strategy = TopKStrategy::kCandidates;
    const uint64_t gemm_cols = in.queries;  // the scan's GEMM takes the high halves only
    plan.tile_bytes = CandidateTileBytes(options, in.gathered, size_t{4} * gemm_cols * in.columns);
    return plan;
  }
  plan.sample = 0;
  plan.cap = 0;
  return plan;
}

std::string SelectPlan::ToString() const {
  std::string s = TopKStrategyName(strategy);
  auto list = [](const std::vector<uint64_t>& v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) out += (i ? "/" : "") + std::to_string(v[i]);
    return out;
  };
  switch (strategy) {
    case TopKStrategy::kTiles:
      break;
    case TopKStrategy::kCandidates:
      s += ": sample " + std::to_string(sample) + ", cap " + std::to_string(cap) + ", tile " +
           std::to_string(tile_bytes >> 20) + " MiB";
      break;
    case TopKStrategy::kThreshold:
      s += ": " + std::to_string(level_ends.size()) + " levels, ends " + list(level_ends) +
           ", caps " + list(level_caps);
      break;
  }
  return s;
}

}  // namespace sieve::gpu
