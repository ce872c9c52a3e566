// Copyright 2026 The Sieve Authors.

#include "engine/search_steps.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "engine/device_fanout.h"
#include "engine/request_rules.h"
#include "query/topk.h"

namespace sieve {

Status ParseSearch(const CollectionSpec& spec, const SearchRequest& request, ParsedSearch* parsed,
                   SearchResult* result) {
  SIEVE_RETURN_IF_ERROR(ValidateSearchRequest(spec, request));
  SIEVE_RETURN_IF_ERROR(
      ResolveInclude(spec, request.include, &parsed->include_attrs, &result->attribute_names));
  const size_t nq = ResultLists(request);
  parsed->filter_of.assign(nq, 0);
  if (request.filters.empty()) {
    parsed->texts.push_back(request.filter);
  } else {
    std::unordered_map<std::string, uint32_t> index;
    for (size_t q = 0; q < nq; ++q) {
      auto [it, inserted] =
          index.emplace(request.filters[q], static_cast<uint32_t>(parsed->texts.size()));
      if (inserted) parsed->texts.push_back(request.filters[q]);
      parsed->filter_of[q] = it->second;
    }
    if (parsed->texts.empty()) parsed->texts.push_back("");
  }
  parsed->filters.resize(parsed->texts.size());
  for (size_t i = 0; i < parsed->texts.size(); ++i) {
    Status s = Filter::Parse(parsed->texts[i], spec, &parsed->filters[i]);
    if (!s.ok()) {
      if (request.filters.empty()) return s;
      const size_t q = std::find(parsed->filter_of.begin(), parsed->filter_of.end(), i) -
                       parsed->filter_of.begin();
      return s.WithContext("query " + std::to_string(q));
    }
  }
  parsed->per_query = parsed->texts.size() > 1;
  result->explain.filter_mode =
      FilterModeName(parsed->filters.size(), parsed->filters[0]->MatchesAll());
  return Status::OK();
}

Status PlaceShards(const CollectionMeta& meta,
                   const std::vector<std::shared_ptr<ShardIndex>>& shards, DeviceSet* devices,
                   std::vector<ShardWork>* work) {
  const CollectionSpec& spec = meta.spec;
  // Made in place: a ShardWork copied from a prototype would copy its empty row set too.
  work->clear();
  work->resize(shards.size());
  std::vector<ShardPlacement::Shard> loads;
  // Executors that keep int8 codes beside the rows hold those bytes too (every executor of a set
  // is created with the same options).
  const bool codes =
      devices->size() > 0 && devices->executor(0)->topk_abilities().options.candidate_int8 &&
      devices->executor(0)->topk_abilities().int8_products;
  for (size_t si = 0; si < shards.size(); ++si) {
    ShardWork& w = (*work)[si];
    w.shard = shards[si].get();
    w.index = static_cast<uint32_t>(si);
    const uint64_t key = (static_cast<uint64_t>(meta.id) << 32) | w.shard->shard();
    w.load = {key, w.shard->rows(),
              ResidentBytes(w.shard->rows(), spec.dim, spec.dtype == DType::kFloat16, codes)};
    loads.push_back(w.load);
  }
  std::vector<uint32_t> device_of;
  SIEVE_RETURN_IF_ERROR(devices->Place(spec.name, loads, &device_of));
  for (size_t si = 0; si < work->size(); ++si) (*work)[si].device = device_of[si];
  return Status::OK();
}

Status CompileFilters(const ParsedSearch& parsed, FilterCache* cache, uint64_t budget_bytes,
                      std::vector<ShardWork>* work, uint64_t* sets_bytes, Explain* explain) {
  for (ShardWork& w : *work) {
    const ShardIndex& shard = *w.shard;
    w.sets.reserve(parsed.filters.size());
    for (size_t i = 0; i < parsed.filters.size(); ++i) {
      std::shared_ptr<const RowSet> set =
          cache->Find(parsed.texts[i], shard.instance(), shard.version());
      if (set != nullptr) {
        ++explain->filters_cached;
      } else {
        set = std::make_shared<const RowSet>(parsed.filters[i]->Compile(shard));
        cache->Insert(parsed.texts[i], shard.instance(), shard.version(), set);
      }
      w.sets.push_back(std::move(set));
      *sets_bytes += w.sets.back()->MemoryBytes();
      if (*sets_bytes > budget_bytes) {
        explain->host_memory_bytes = *sets_bytes;
        return Status::ResourceExhausted(
            "search: the row sets of its " + std::to_string(parsed.filters.size()) +
            " distinct filters alone take more than " + DescribeBytes(*sets_bytes) +
            ", over the memory budget of " + DescribeBytes(budget_bytes) +
            " (Options::memory_budget_bytes; sieve query/serve --max-memory)");
      }
    }
  }
  return Status::OK();
}

void PlanShards(const ParsedSearch& parsed, const SearchRequest& request,
                const SearchOptions& options, const CollectionSpec& spec,
                const std::vector<PlannerRule>& thresholds, const DeviceSet& devices,
                std::vector<ShardWork>* work, uint64_t* sets_bytes, Explain* explain) {
  const size_t nq = request.num_queries;
  for (ShardWork& w : *work) {
    const ShardIndex& shard = *w.shard;
    ShardPlan plan;
    plan.shard = shard.shard();
    plan.rows = shard.live_rows();
    plan.device = devices.label(w.device);
    for (auto& s : w.sets) plan.passing_rows.push_back(s->Cardinality());
    BatchFilters& bf = w.bf;
    if (parsed.per_query) {
      for (size_t q = 0; q < nq; ++q) {
        bf.sets.push_back(w.sets[parsed.filter_of[q]].get());
        bf.passing_rows.push_back(plan.passing_rows[parsed.filter_of[q]]);
      }
    } else {
      bf.sets.push_back(w.sets[0].get());
      bf.passing_rows.push_back(plan.passing_rows[0]);
    }
    PlanInput in;
    in.rows = shard.rows();
    in.dim = spec.dim;
    in.num_queries = static_cast<uint32_t>(nq);
    in.k = static_cast<uint32_t>(request.k);
    in.per_query = parsed.per_query;
    if (parsed.per_query) {
      uint64_t sum = 0;
      for (auto n : bf.passing_rows) sum += n;
      in.passing_rows = sum / nq;
      for (auto n : bf.passing_rows) in.max_passing_rows = std::max(in.max_passing_rows, n);
      std::vector<const RowSet*> distinct;
      for (auto& s : w.sets) distinct.push_back(s.get());
      w.union_set = RowSet::Union(distinct.data(), distinct.size());
      bf.union_set = &w.union_set;
      *sets_bytes += w.union_set.MemoryBytes();
      in.union_rows = w.union_set.Cardinality();
    } else {
      in.passing_rows = bf.passing_rows[0];
      in.union_rows = in.passing_rows;
    }
    explain->passing_rows += in.union_rows;
    for (auto n : bf.passing_rows) w.max_pass = std::max(w.max_pass, n);
    const ShardDecision decision = PlanShard(thresholds[w.device], in, options.path, w.max_pass);
    plan.path = SearchPathName(decision.path);
    w.view.key = w.load.key;
    w.view.generation = shard.vectors().generation();
    w.view.lineage = shard.vectors().lineage();
    w.view.vectors = shard.vectors().data();
    w.view.sq_norms = shard.vectors().sq_norms();
    w.view.max_sq_norm = shard.vectors().max_sq_norm();
    w.view.rows = shard.rows();
    w.view.dim = spec.dim;
    w.view.dtype = spec.dtype;
    w.er.queries = request.queries;
    w.er.num_queries = static_cast<uint32_t>(nq);
    w.er.k = decision.candidates;
    w.er.metric = spec.metric;
    w.er.path = decision.path;
    // The top-k and its precision, for the executor this shard runs on.
    w.er.topk = PlanTopK(TopKInputFor(w.view, bf, w.er),
                         devices.executor(w.device)->topk_abilities());
    plan.select = TopKStrategyName(w.er.topk.strategy);
    plan.products = ProductsName(w.er.topk.products);
    plan.select_plan = w.er.topk.ToString();
    explain->shards.push_back(std::move(plan));
  }
}

Status ReserveMemory(const ParsedSearch& parsed, const SearchRequest& request,
                     const CollectionSpec& spec, const std::vector<ShardWork>& work,
                     DeviceSet* devices, uint64_t sets_bytes, MemoryBudget* budget,
                     MemoryBudget::Reservation* reservation, Explain* explain) {
  const size_t nq = request.num_queries;
  const uint64_t k = static_cast<uint64_t>(request.k);
  // Per device, what its executor says its largest shard needs (the devices run at once; a
  // device's shards one after another).
  std::vector<uint64_t> exec_bytes_of(devices->size(), 0), device_bytes_of(devices->size(), 0);
  for (const ShardWork& w : work) {
    if (w.max_pass == 0) continue;
    MemoryEstimate m;
    SIEVE_RETURN_IF_ERROR(devices->executor(w.device)->EstimateMemory(w.view, w.bf, w.er, &m));
    exec_bytes_of[w.device] = std::max(exec_bytes_of[w.device], m.host_bytes);
    device_bytes_of[w.device] = std::max(device_bytes_of[w.device], m.device_bytes);
  }
  uint64_t exec_bytes = 0, device_bytes = 0;
  for (size_t d = 0; d < devices->size(); ++d) {
    exec_bytes += exec_bytes_of[d];
    device_bytes += device_bytes_of[d];
  }
  // Per query, every shard's candidates, kept until the merge.
  std::vector<uint64_t> candidates(nq, 0);
  for (const ShardWork& w : work) {
    if (w.max_pass == 0) continue;
    for (size_t q = 0; q < nq; ++q) {
      candidates[q] += std::min<uint64_t>(w.er.k, w.bf.passing_rows[parsed.per_query ? q : 0]);
    }
  }
  uint64_t candidate_bytes = nq * sizeof(std::vector<Candidate>), result_bytes = 0, kept = 0;
  for (size_t q = 0; q < nq; ++q) {
    candidate_bytes += candidates[q] * sizeof(Candidate);
    kept += std::min<uint64_t>(k, candidates[q]);
  }
  result_bytes += kept * (sizeof(int64_t) + sizeof(float)) + nq * sizeof(Neighbors);
  if (!request.include.empty()) {
    // Strings and tags are counted by their handles; their text is what the rows hold.
    uint64_t per_row = parsed.include_attrs.size() * sizeof(Value) + sizeof(std::vector<Value>);
    if (request.include.vector) per_row += spec.dim * sizeof(float) + sizeof(std::vector<float>);
    result_bytes += kept * per_row;
  }
  const uint64_t need = sets_bytes + candidate_bytes + std::max(exec_bytes, result_bytes);
  explain->host_memory_bytes = need;
  explain->device_memory_bytes = device_bytes;
  if (need > budget->bytes()) {
    return Status::ResourceExhausted(
        "search: " + std::to_string(nq) + " queries with k = " + std::to_string(k) + " need " +
        DescribeBytes(need) + " of host memory (results " + DescribeBytes(result_bytes) +
        ", candidates " + DescribeBytes(candidate_bytes) + ", " + explain->device + " executor" +
        (devices->size() > 1 ? "s " : " ") + DescribeBytes(exec_bytes) + ", filter row sets " +
        DescribeBytes(sets_bytes) + "), over the memory budget of " +
        DescribeBytes(budget->bytes()) +
        "; use fewer queries or a smaller k, or raise the budget (Options::memory_budget_bytes; "
        "sieve query/serve --max-memory)");
  }
  *reservation = budget->Reserve(need);
  return Status::OK();
}

namespace {

// Searches one shard and refines its candidates in float64.
Status SearchShard(const SearchRequest& request, const CollectionSpec& spec, Executor* executor,
                   ShardWork* w, ShardOut* out) {
  const size_t nq = request.num_queries;
  const ShardIndex& shard = *w->shard;
  auto t0 = Clock::now();
  SIEVE_RETURN_IF_ERROR(executor->Search(w->view, w->bf, w->er, &out->res));
  out->exec_ms = MsSince(t0);
  if (out->res.neighbors.size() != nq) {
    return Status::Internal(executor->name() + " returned " +
                            std::to_string(out->res.neighbors.size()) + " result lists for " +
                            std::to_string(nq) + " queries");
  }
  t0 = Clock::now();
  const bool per_query = w->bf.sets.size() > 1;
  out->cand.resize(nq);
  for (size_t q = 0; q < nq; ++q) {
    const RowSet& set = *w->bf.sets[per_query ? q : 0];
    auto& found = out->res.neighbors[q];
    if (found.size() > std::min<uint64_t>(w->er.k, set.Cardinality())) {
      return Status::Internal(executor->name() + " returned " + std::to_string(found.size()) +
                              " results for query " + std::to_string(q) + ", more than asked");
    }
    out->cand[q].reserve(found.size());
    for (auto& [ord, dist] : found) {
      if (ord >= shard.rows() || !set.Contains(ord)) {
        return Status::Internal(executor->name() + " returned row " + std::to_string(ord) +
                                " that does not pass the filter of query " + std::to_string(q));
      }
      out->cand[q].push_back({ExactDistance(spec.metric, request.queries + q * spec.dim,
                                            shard.vectors().row(ord), spec.dim),
                              shard.id(ord), w->index, ord});
    }
    std::vector<std::pair<uint32_t, float>>().swap(found);
  }
  out->refine_ms = MsSince(t0);
  // Sets no later shard needs are freed early.
  w->sets.clear();
  w->union_set.Clear();
  return Status::OK();
}

// Device memory ran out: says what this collection has placed on that device.
Status DeviceMemoryContext(Status s, uint32_t device, const CollectionSpec& spec,
                           const std::vector<ShardWork>& work, const DeviceSet& devices) {
  uint64_t rows = 0, bytes = 0;
  size_t shards = 0;
  for (const ShardWork& w : work) {
    if (w.device != device) continue;
    ++shards;
    rows += w.load.rows;
    bytes += w.load.bytes;
  }
  return s.WithContext(
      "search on " + devices.label(device) + ", which holds " + std::to_string(shards) +
      " shards of collection '" + spec.name + "' (" + std::to_string(rows) + " rows, " +
      DescribeBytes(bytes) + " resident) and " + std::to_string(devices.placed_rows(device)) +
      " rows of every collection placed there; use more devices, or tell the placement each "
      "device's memory (Options::device_memory_bytes, sieve query --device-memory)");
}

}  // namespace

Status ExecuteShards(const SearchRequest& request, const CollectionSpec& spec,
                     DeviceSet* devices, std::vector<ShardWork>* work,
                     std::vector<ShardOut>* outs, StageTimer* timer, Explain* explain) {
  outs->assign(work->size(), ShardOut());
  std::vector<std::vector<size_t>> shards_of(devices->size());
  for (size_t si = 0; si < work->size(); ++si) {
    if ((*work)[si].max_pass > 0) shards_of[(*work)[si].device].push_back(si);
  }
  std::vector<size_t> busy;  // devices with shards to search
  for (size_t d = 0; d < devices->size(); ++d) {
    if (!shards_of[d].empty()) busy.push_back(d);
  }
  std::vector<double> device_ms(devices->size(), 0);
  RunConcurrently(busy.size(), [&](size_t b) {
    const size_t d = busy[b];
    const auto t0 = Clock::now();
    for (size_t si : shards_of[d]) {
      ShardOut& out = (*outs)[si];
      out.status = SearchShard(request, spec, devices->executor(d), &(*work)[si], &out);
      if (!out.status.ok()) break;
    }
    device_ms[d] = MsSince(t0);
  });
  double refine_ms = 0;
  for (size_t si = 0; si < work->size(); ++si) {
    const ShardOut& out = (*outs)[si];
    if (out.status.IsResourceExhausted()) {
      return DeviceMemoryContext(out.status, (*work)[si].device, spec, *work, *devices);
    }
    SIEVE_RETURN_IF_ERROR(out.status);
    refine_ms += out.refine_ms;
    ShardPlan& plan = explain->shards[si];
    // What ran: the plan, or after a candidate list overflowed, the full path it fell back to.
    plan.select = out.res.select;
    plan.products = out.res.products;
    plan.select_plan = out.res.select_plan;
    plan.execute_ms = out.exec_ms;
    for (auto& st : out.res.stage_ms) timer->Add("execute." + st.first, st.second);
  }
  for (size_t d = 0; d < devices->size(); ++d) {
    DevicePlan dp;
    for (size_t si = 0; si < work->size(); ++si) {
      if ((*work)[si].device != d) continue;
      dp.shards.push_back((*work)[si].shard->shard());
      dp.paths.push_back(explain->shards[si].path);
      dp.rows += (*work)[si].shard->rows();
    }
    if (dp.shards.empty()) continue;
    dp.device = devices->label(d);
    dp.executor = devices->executor(d)->name();
    dp.execute_ms = device_ms[d];
    explain->devices.push_back(std::move(dp));
  }
  timer->Add("refine", refine_ms);
  return Status::OK();
}

Status MergeCandidates(const SearchRequest& request, const CollectionSpec& spec,
                       std::vector<ShardOut>* outs, std::vector<std::vector<Candidate>>* kept,
                       SearchResult* result) {
  const size_t nq = request.num_queries;
  const size_t k = static_cast<size_t>(request.k);
  const bool larger_better = LargerIsBetter(spec.metric);
  auto better = [&](const Candidate& a, const Candidate& b) {
    return BetterThan(larger_better, a.distance, a.id, b.distance, b.id);
  };
  kept->assign(nq, {});
  for (size_t q = 0; q < nq; ++q) {
    std::vector<Candidate>& cand = (*kept)[q];
    for (ShardOut& out : *outs) {
      if (out.cand.empty()) continue;
      cand.insert(cand.end(), out.cand[q].begin(), out.cand[q].end());
      std::vector<Candidate>().swap(out.cand[q]);
    }
    const size_t keep = std::min(k, cand.size());
    std::partial_sort(cand.begin(), cand.begin() + keep, cand.end(), better);
    cand.resize(keep);
    Neighbors& out = result->results[q];
    out.ids.reserve(keep);
    out.distances.reserve(keep);
    for (const Candidate& c : cand) {
      const float d = static_cast<float>(c.distance);
      if (!std::isfinite(d)) {
        // Only rows stored before ingest enforced the norm bound can get here.
        result->results.clear();
        return Status::NotSupported(
            "search: the distance of query " + std::to_string(q) + " to row id " +
            std::to_string(c.id) +
            " does not fit a float32: the row's norm is beyond the range ingest accepts now "
            "(it was stored before that rule); delete or re-ingest it");
      }
      out.ids.push_back(c.id);
      out.distances.push_back(d);
    }
  }
  return Status::OK();
}

void FillIncludes(const ParsedSearch& parsed, const SearchRequest& request,
                  const std::vector<std::shared_ptr<ShardIndex>>& shards,
                  const std::vector<std::vector<Candidate>>& kept, SearchResult* result) {
  Row row;
  for (size_t q = 0; q < kept.size(); ++q) {
    Neighbors& out = result->results[q];
    out.attributes.resize(kept[q].size());
    if (request.include.vector) out.vectors.resize(kept[q].size());
    for (size_t i = 0; i < kept[q].size(); ++i) {
      const Candidate& c = kept[q][i];
      FillRow(*shards[c.shard], c.ordinal, parsed.include_attrs, request.include.vector, &row);
      out.attributes[i] = std::move(row.attributes);
      if (request.include.vector) out.vectors[i] = std::move(row.vector);
    }
  }
}

}  // namespace sieve
