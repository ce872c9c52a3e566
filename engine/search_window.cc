// Copyright 2026 The Sieve Authors.

#include "engine/search_window.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "query/topk.h"
#include "query/window_plan.h"

namespace sieve {

Status RunWindow(WindowSearch* ws, const std::vector<size_t>& queries, uint64_t window,
                 std::vector<WindowRows>* rows, Explain* explain) {
  const SearchRequest& full = *ws->request;
  const CollectionSpec& spec = *ws->spec;
  const size_t nq = queries.size();
  explain->windows.push_back(window);
  explain->window_queries.push_back(nq);

  // The round's own request and parse: the chosen queries with a top-k of `window`.
  std::vector<float> vectors(nq * spec.dim);
  SearchRequest sub;
  sub.num_queries = nq;
  sub.dim = full.dim;
  sub.k = static_cast<int>(window);
  ParsedSearch parsed;
  parsed.texts = ws->parsed->texts;
  parsed.per_query = ws->parsed->per_query;
  for (size_t i = 0; i < nq; ++i) {
    const size_t q = queries[i];
    std::copy_n(full.queries + q * spec.dim, spec.dim, vectors.begin() + i * spec.dim);
    parsed.filter_of.push_back(ws->parsed->filter_of[q]);
  }
  sub.queries = vectors.data();

  Explain& ex = ws->rounds;
  ex.shards.clear();
  ex.devices.clear();
  ex.passing_rows = 0;
  StageTimer timer(&ex);
  std::vector<ShardWork> work = *ws->compiled;
  uint64_t sets_bytes = ws->sets_bytes;
  timer.Time("plan", [&] {
    PlanShards(parsed, sub, *ws->options, spec, *ws->thresholds, *ws->devices, &work, &sets_bytes,
               &ex);
  });
  MemoryBudget::Reservation reservation;
  const uint64_t host = ex.host_memory_bytes, device = ex.device_memory_bytes;
  Status s = timer.Run("reserve", [&] {
    return ReserveMemory(parsed, sub, spec, work, ws->devices, sets_bytes, ws->budget, &reservation,
                         &ex);
  });
  ex.host_memory_bytes = std::max(ex.host_memory_bytes, host);
  ex.device_memory_bytes = std::max(ex.device_memory_bytes, device);
  SIEVE_RETURN_IF_ERROR(s);
  std::vector<ShardOut> outs;
  SIEVE_RETURN_IF_ERROR(timer.Run(
      "execute", [&] { return ExecuteShards(sub, spec, ws->devices, &work, &outs, &timer, &ex); }));

  const auto t0 = Clock::now();
  const bool larger_better = LargerIsBetter(spec.metric);
  auto key_of = [&](double d) { return larger_better ? -d : d; };
  rows->assign(nq, WindowRows());
  std::vector<double> keys;
  for (size_t i = 0; i < nq; ++i) {
    WindowRows& wr = (*rows)[i];
    wr.bound = std::numeric_limits<float>::infinity();
    for (size_t si = 0; si < work.size(); ++si) {
      if (outs[si].cand.empty()) continue;  // nothing passes on that shard
      std::vector<Candidate>& cand = outs[si].cand[i];
      const ShardWork& w = work[si];
      const uint64_t passing = w.bf.passing_rows[w.bf.per_query() ? i : 0];
      if (w.er.k < passing) {
        keys.clear();
        for (const Candidate& c : cand) keys.push_back(key_of(c.distance));
        std::sort(keys.begin(), keys.end());
        wr.bound =
            std::min(wr.bound, ShardCoverBound(keys.data(), keys.size(), w.er.k, window, passing));
      }
      wr.rows.insert(wr.rows.end(), cand.begin(), cand.end());
      std::vector<Candidate>().swap(cand);
    }
    std::sort(wr.rows.begin(), wr.rows.end(), [&](const Candidate& a, const Candidate& b) {
      return BetterThan(larger_better, a.distance, a.id, b.distance, b.id);
    });
    wr.keys.reserve(wr.rows.size());
    for (const Candidate& c : wr.rows) wr.keys.push_back(key_of(c.distance));
  }
  timer.Add("merge", MsSince(t0));
  return Status::OK();
}

void FinishWindows(WindowSearch* ws, StageTimer* timer, Explain* explain) {
  Explain& ex = ws->rounds;
  std::vector<std::pair<std::string, double>> summed;
  for (const auto& stage : ex.stage_ms) {
    const std::string& name = stage.first;
    auto it =
        std::find_if(summed.begin(), summed.end(), [&](const auto& e) { return e.first == name; });
    if (it == summed.end()) {
      summed.emplace_back(name, stage.second);
    } else {
      it->second += stage.second;
    }
  }
  for (auto& [name, ms] : summed) timer->Add(name, ms);
  explain->shards = std::move(ex.shards);
  explain->devices = std::move(ex.devices);
  explain->passing_rows = ex.passing_rows;
  explain->host_memory_bytes = ex.host_memory_bytes;
  explain->device_memory_bytes = ex.device_memory_bytes;
}

Status FillNeighbors(size_t q, const std::vector<Candidate>& rows, Neighbors* out) {
  out->ids.reserve(rows.size());
  out->distances.reserve(rows.size());
  for (const Candidate& c : rows) {
    const float d = static_cast<float>(c.distance);
    if (!std::isfinite(d)) {
      return Status::NotSupported(
          "search: the distance of query " + std::to_string(q) + " to row id " +
          std::to_string(c.id) +
          " does not fit a float32: the row's norm is beyond the range ingest accepts now "
          "(it was stored before that rule); delete or re-ingest it");
    }
    out->ids.push_back(c.id);
    out->distances.push_back(d);
  }
  return Status::OK();
}

Status SearchWindows(const ParsedSearch& parsed, const SearchRequest& request,
                     const SearchOptions& options, const CollectionSpec& spec,
                     const std::vector<PlannerRule>& thresholds, DeviceSet* devices,
                     const std::vector<ShardWork>& work, uint64_t sets_bytes, MemoryBudget* budget,
                     const std::vector<std::shared_ptr<ShardIndex>>& shards, StageTimer* timer,
                     SearchResult* result) {
  WindowSearch ws;
  ws.parsed = &parsed;
  ws.request = &request;
  ws.options = &options;
  ws.spec = &spec;
  ws.thresholds = &thresholds;
  ws.devices = devices;
  ws.compiled = &work;
  ws.sets_bytes = sets_bytes;
  ws.budget = budget;
  std::vector<std::vector<Candidate>> kept;
  Status s = timer->Run(request.radius ? "range" : "page", [&] {
    return request.radius ? SearchRange(&ws, &kept, result) : SearchPages(&ws, &kept, result);
  });
  FinishWindows(&ws, timer, &result->explain);
  if (!s.ok()) {
    result->results.clear();
    return s;
  }
  if (!request.include.empty()) {
    timer->Time("include", [&] { FillIncludes(parsed, request, shards, kept, result); });
  }
  timer->Total();
  return Status::OK();
}

}  // namespace sieve
