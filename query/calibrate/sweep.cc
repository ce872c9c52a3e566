// Copyright 2026 The Sieve Authors.

#include "query/calibrate/sweep.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "index/row_set.h"
#include "query/calibrate/stats.h"
#include "query/calibrate/synthetic.h"

namespace sieve::calibrate {

namespace {

using Clock = std::chrono::steady_clock;

Status TimeRuns(Executor* executor, const ShardView& view, const BatchFilters& filters,
                const ExecRequest& req, int warmup, int reps, std::vector<double>* ms,
                ExecResult* result) {
  ProfileOptions options;
  options.warmup = warmup;
  options.reps = reps;
  ExecProfile profile;
  SIEVE_RETURN_IF_ERROR(executor->Profile(view, filters, req, options, &profile));
  ms->insert(ms->end(), profile.ms.begin(), profile.ms.end());
  *result = std::move(profile.result);
  return Status::OK();
}

bool SameResults(const ExecResult& a, const ExecResult& b) {
  if (a.neighbors.size() != b.neighbors.size()) return false;
  for (size_t q = 0; q < a.neighbors.size(); ++q) {
    const auto& x = a.neighbors[q];
    const auto& y = b.neighbors[q];
    if (x.size() != y.size()) return false;
    if (x.empty()) continue;
    for (size_t i : {size_t{0}, x.size() - 1}) {
      const double dx = x[i].second, dy = y[i].second;
      if (std::fabs(dx - dy) > 1e-3 * std::max({1.0, std::fabs(dx), std::fabs(dy)})) return false;
    }
  }
  return true;
}

}  // namespace

Status RunSweep(Executor* executor, const SweepConfig& config,
                const std::function<void(const std::string&)>& progress, std::vector<Cell>* cells,
                bool* stopped_early, Status* first_failure) {
  auto say = [&](const std::string& s) {
    if (progress) progress(s);
  };
  const auto sweep_start = Clock::now();
  bool stopped = false;
  if (stopped_early != nullptr) *stopped_early = false;
  if (first_failure != nullptr) *first_failure = Status::OK();
  auto out_of_time = [&] {
    if (config.time_limit_s <= 0 || stopped) return stopped;
    if (std::chrono::duration<double>(Clock::now() - sweep_start).count() < config.time_limit_s) {
      return false;
    }
    stopped = true;
    if (stopped_early != nullptr) *stopped_early = true;
    say("time limit reached: the sweep stops here");
    return true;
  };
  const bool half = config.dtype == DType::kFloat16;
  const uint64_t elem = half ? 2 : 4;
  uint64_t shape_key = 0x5eed0000;
  for (uint64_t rows : config.rows_list) {
    if (out_of_time()) break;
    if (rows == 0 || rows > UINT32_MAX) return Status::InvalidArgument("rows must be in [1, 2^32)");
    const std::vector<uint64_t> counts = SeriesCounts(config.fractions, config.counts, rows);
    // Filters for every series of this rows value: built once, reused for each dim.
    auto t0 = Clock::now();
    struct Series {
      bool per_query;
      Overlap overlap;
      std::vector<PointFilters> points;
    };
    std::vector<Series> series;
    if (config.bitset) {
      Series s{false, Overlap::kShared, {}};
      s.points.resize(counts.size());
      for (size_t i = 0; i < counts.size(); ++i) {
        s.points[i] =
            BuildFilters(rows, counts[i], false, Overlap::kShared, config.queries, config.seed);
      }
      series.push_back(std::move(s));
    }
    if (config.bitmap && config.queries > 1) {
      for (Overlap o : config.overlaps) {
        Series s{true, o, {}};
        s.points.resize(counts.size());
        for (size_t i = 0; i < counts.size(); ++i) {
          s.points[i] = BuildFilters(rows, counts[i], true, o, config.queries, config.seed + 17);
        }
        series.push_back(std::move(s));
      }
    }
    char line[256];
    std::snprintf(line, sizeof(line), "rows %llu: %zu counts, filters built in %.1f s",
                  static_cast<unsigned long long>(rows), counts.size(),
                  std::chrono::duration<double>(Clock::now() - t0).count());
    say(line);

    for (uint32_t dim : config.dims) {
      if (dim == 0) return Status::InvalidArgument("dims must be at least 1");
      if (out_of_time()) break;
      if (config.max_shape_bytes && rows * dim * elem > config.max_shape_bytes) {
        std::snprintf(line, sizeof(line),
                      "rows %llu dim %u: skipped (%.1f GB over the %.1f GB cap)",
                      static_cast<unsigned long long>(rows), dim, rows * dim * elem / 1e9,
                      config.max_shape_bytes / 1e9);
        say(line);
        continue;
      }
      auto ts = Clock::now();
      FloatBuffer data, norms, queries;
      MakeVectors(rows, dim, half, config.seed * 7919 + dim, &data, &norms);
      MakeVectors(config.queries, dim, false, config.seed * 104729 + dim + 1, &queries, nullptr);
      ShardView view;
      view.key = ++shape_key;
      view.generation = 1;
      view.vectors = data.data();
      view.sq_norms = norms.data();
      view.rows = static_cast<uint32_t>(rows);
      view.dim = dim;
      view.dtype = config.dtype;
      view.max_sq_norm = 0;
      for (uint64_t r = 0; r < rows; ++r) {
        view.max_sq_norm = std::max<double>(view.max_sq_norm, norms.data()[r]);
      }
      const double gen_s = std::chrono::duration<double>(Clock::now() - ts).count();
      size_t disagree = 0;
      const bool bitmaps_here =
          config.bitmap_max_shape_bytes == 0 || rows * dim * elem <= config.bitmap_max_shape_bytes;
      for (const Series& s : series) {
        if (out_of_time()) break;
        if (s.per_query && !bitmaps_here) continue;
        bool prune[3] = {false, false, false};
        double last[3] = {0, 0, 0};
        for (const PointFilters& pf : s.points) {
          Cell cell;
          cell.rows = rows;
          cell.dim = dim;
          cell.per_query = s.per_query;
          cell.overlap = s.overlap;
          cell.passing = pf.mean;
          cell.union_rows = pf.union_rows;
          cell.max_passing = pf.max_rows;
          BatchFilters bf;
          RowSet union_set;
          if (s.per_query) {
            for (uint32_t q = 0; q < config.queries; ++q) {
              const RowSet* set = &pf.sets[pf.sets.size() == 1 ? 0 : q];
              bf.sets.push_back(set);
              bf.passing_rows.push_back(set->Cardinality());
            }
            // The union once a point, for the plan and the executor's gather.
            union_set = RowSet::Union(bf.sets.data(), bf.sets.size());
            bf.union_set = &union_set;
          } else {
            bf.sets.push_back(&pf.sets[0]);
            bf.passing_rows.push_back(pf.sets[0].Cardinality());
          }
          ExecRequest req;
          req.queries = queries.data();
          req.num_queries = config.queries;
          req.k = config.k;
          req.metric = config.metric;
          ExecResult first;
          bool have_first = false;
          for (int p = 0; p < 3; ++p) {
            if (prune[p]) {
              cell.pruned[p] = true;
              cell.ms[p] = last[p];
              continue;
            }
            req.path = PathAt(p);
            PlanRequest(*executor, view, bf, &req);
            std::vector<double> ms;
            ExecResult res;
            Status st = TimeRuns(executor, view, bf, req, config.warmup, 1, &ms, &res);
            if (st.ok() && !ms.empty()) {
              const int more =
                  std::clamp(static_cast<int>(config.budget_ms / std::max(ms[0], 1e-3)),
                             config.min_reps, config.max_reps) -
                  1;
              if (more > 0) st = TimeRuns(executor, view, bf, req, 0, more, &ms, &res);
            }
            if (!st.ok()) {
              if (st.IsUnavailable()) return st;
              if (first_failure != nullptr && first_failure->ok()) *first_failure = st;
              cell.failed[p] = true;
              cell.ms[p] = std::numeric_limits<double>::quiet_NaN();
              say(std::string("  ") + SearchPathName(PathAt(p)) + " failed at " +
                  std::to_string(pf.mean) + " passing: " + st.ToString());
              continue;
            }
            cell.ms[p] = Median(ms);
            cell.reps[p] = static_cast<int>(ms.size());
            last[p] = cell.ms[p];
            if (!have_first) {
              first = std::move(res);
              have_first = true;
            } else if (!SameResults(first, res)) {
              cell.results_agree = false;
            }
          }
          if (!cell.results_agree) ++disagree;
          // SDDMM and gather only grow with the count: once far slower than dense (whose cost
          // does not grow), they cannot become the fastest again in this series.
          if (!cell.failed[2] && cell.reps[2] > 0) {
            for (int p = 0; p < 2; ++p) {
              if (!prune[p] && cell.reps[p] > 0 && cell.ms[p] >= config.prune_factor * cell.ms[2]) {
                prune[p] = true;
              }
            }
          }
          cells->push_back(cell);
        }
      }
      executor->ClearCache();
      std::snprintf(line, sizeof(line), "rows %llu dim %u: data %.1f s, timed in %.1f s%s",
                    static_cast<unsigned long long>(rows), dim, gen_s,
                    std::chrono::duration<double>(Clock::now() - ts).count() - gen_s,
                    disagree ? " (WARNING: paths disagreed on some points)" : "");
      say(line);
    }
  }
  return Status::OK();
}

// ---------------------------------------------------------------------------------------------

}  // namespace sieve::calibrate
