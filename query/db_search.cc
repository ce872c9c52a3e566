// Copyright 2026 The Sieve Authors.
//
// DBImpl::Search: parse the filters once, place the shards on the devices, compile and plan
// every shard, count what the search will allocate before allocating it, run every device's
// shards at once, refine in float64, merge exactly, and fill what SearchRequest::include asks
// for.

#include <algorithm>
#include <cmath>
#include <memory>
#include <unordered_map>

#include "filter/filter.h"
#include "query/db_impl.h"
#include "query/db_util.h"
#include "query/device_fanout.h"
#include "query/shard_placement.h"
#include "query/topk.h"

namespace sieve {

Status DBImpl::Search(const std::string& collection, const SearchRequest& request,
                      const SearchOptions& options, SearchResult* result) {
  *result = SearchResult();
  auto t_start = Clock::now();
  if (request.k < 1) {
    return Status::InvalidArgument("k must be at least 1, got " + std::to_string(request.k));
  }
  if (request.k > 1000000) {
    return Status::InvalidArgument("k must be at most 1000000, got " + std::to_string(request.k));
  }
  const size_t nq = request.num_queries;
  if (nq > 0 && request.queries == nullptr) return Status::InvalidArgument("no query vectors");
  if (!request.filters.empty() && request.filters.size() != nq) {
    return Status::InvalidArgument("filters: " + std::to_string(request.filters.size()) +
                                   " filters for " + std::to_string(nq) + " queries");
  }
  std::shared_ptr<Collection> c;
  SIEVE_RETURN_IF_ERROR(GetCollection(collection, &c));
  const CollectionSpec& spec = c->meta.spec;
  if (nq > 0 && request.dim != spec.dim) {
    return Status::InvalidArgument(
        "queries have " + std::to_string(request.dim) + " components, collection '" + spec.name +
        "' has dim " + std::to_string(spec.dim));
  }
  std::vector<size_t> include_attrs;
  SIEVE_RETURN_IF_ERROR(
      ResolveInclude(spec, request.include, &include_attrs, &result->attribute_names));
  for (size_t q = 0; q < nq; ++q) {
    Status s = CheckVector(request.queries + q * spec.dim, spec.dim);
    if (!s.ok()) return Status::InvalidArgument("query " + std::to_string(q) + ": " + s.message());
  }

  // Parse each distinct filter text once.
  std::vector<std::string> texts;          // distinct filter texts
  std::vector<uint32_t> filter_of(nq, 0);  // query → index into texts
  if (request.filters.empty()) {
    texts.push_back(request.filter);
  } else {
    std::unordered_map<std::string, uint32_t> index;
    for (size_t q = 0; q < nq; ++q) {
      auto [it, inserted] =
          index.emplace(request.filters[q], static_cast<uint32_t>(texts.size()));
      if (inserted) texts.push_back(request.filters[q]);
      filter_of[q] = it->second;
    }
    if (texts.empty()) texts.push_back("");
  }
  std::vector<std::unique_ptr<Filter>> filters(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    Status s = Filter::Parse(texts[i], spec, &filters[i]);
    if (!s.ok()) {
      if (request.filters.empty()) return s;
      size_t q = std::find(filter_of.begin(), filter_of.end(), i) - filter_of.begin();
      return s.WithContext("query " + std::to_string(q));
    }
  }
  const bool per_query = texts.size() > 1;
  Explain& ex = result->explain;
  ex.filter_mode = filters.size() == 1 && filters[0]->MatchesAll() ? "none"
                   : per_query                                     ? "bitmap"
                                                                   : "bitset";
  ex.memory_budget_bytes = budget_.bytes();
  ex.stage_ms.emplace_back("parse", MsSince(t_start));

  DeviceSet* devices = nullptr;
  std::vector<PlannerThresholds> thresholds;
  SIEVE_RETURN_IF_ERROR(DevicesFor(options.device, &devices, &thresholds));
  ex.device = devices->executor(0)->name();
  ex.thresholds = thresholds[0].source;
  for (size_t d = 1; d < thresholds.size(); ++d) {
    if (thresholds[d].source != thresholds[0].source) {
      ex.thresholds += "; " + devices->label(d) + ": " + thresholds[d].source;
    }
  }

  double load_ms = 0;
  SIEVE_RETURN_IF_ERROR(EnsureLoaded(c.get(), &load_ms));
  if (load_ms > 0) ex.stage_ms.emplace_back("load", load_ms);
  std::shared_lock<std::shared_mutex> lock(c->mu);
  SIEVE_RETURN_IF_ERROR(CheckNotDropped(*c));
  if (!c->vectors_loaded) {
    return Status::Internal("search: collection '" + spec.name + "' is loaded without vectors");
  }

  result->results.resize(nq);
  if (nq == 0) return Status::OK();
  const uint32_t k = static_cast<uint32_t>(request.k);
  const bool larger_better = LargerIsBetter(spec.metric);
  double compile_ms = 0, plan_ms = 0, refine_ms = 0;

  // Which device holds each shard (its rows stay resident there from search to search).
  auto t_place = Clock::now();
  std::vector<ShardPlacement::Shard> loads;
  for (const auto& shard : c->shards) {
    const uint64_t key = (static_cast<uint64_t>(c->meta.id) << 32) | shard->shard();
    loads.push_back({key, shard->rows(),
                     ResidentBytes(shard->rows(), spec.dim, spec.dtype == DType::kFloat16)});
  }
  std::vector<uint32_t> device_of;
  SIEVE_RETURN_IF_ERROR(devices->Place(spec.name, loads, &device_of));
  const double place_ms = MsSince(t_place);

  // Compile and plan every shard first, so that the memory the search needs is known (and
  // refused, or reserved) before anything large is allocated.
  struct ShardWork {
    const ShardIndex* shard = nullptr;
    uint32_t device = 0;
    // One per distinct filter: compiled here, or kept from an earlier search (filter_cache_).
    std::vector<std::shared_ptr<const RowSet>> sets;
    RowSet union_set;          // bitmap: built once, for the planner and the executor
    BatchFilters bf;
    ShardView view;
    ExecRequest er;
    uint64_t max_pass = 0;
  };
  std::vector<ShardWork> work(c->shards.size());
  uint64_t sets_bytes = 0;
  for (size_t si = 0; si < c->shards.size(); ++si) {
    const ShardIndex& shard = *c->shards[si];
    ShardWork& w = work[si];
    w.shard = &shard;
    w.device = device_of[si];
    ShardPlan plan;
    plan.shard = shard.shard();
    plan.rows = shard.live_rows();
    plan.device = devices->label(w.device);
    auto t0 = Clock::now();
    w.sets.reserve(filters.size());
    for (size_t i = 0; i < filters.size(); ++i) {
      std::shared_ptr<const RowSet> set =
          filter_cache_.Find(texts[i], shard.instance(), shard.version());
      if (set != nullptr) {
        ++ex.filters_cached;
      } else {
        set = std::make_shared<const RowSet>(filters[i]->Compile(shard));
        filter_cache_.Insert(texts[i], shard.instance(), shard.version(), set);
      }
      w.sets.push_back(std::move(set));
      sets_bytes += w.sets.back()->MemoryBytes();
      if (sets_bytes > budget_.bytes()) {
        ex.host_memory_bytes = sets_bytes;
        return Status::ResourceExhausted(
            "search: the row sets of its " + std::to_string(filters.size()) +
            " distinct filters alone take more than " + DescribeBytes(sets_bytes) +
            ", over the memory budget of " + DescribeBytes(budget_.bytes()) +
            " (Options::memory_budget_bytes; sieve query/serve --max-memory)");
      }
    }
    BatchFilters& bf = w.bf;
    for (auto& s : w.sets) plan.passing_rows.push_back(s->Cardinality());
    if (per_query) {
      for (size_t q = 0; q < nq; ++q) {
        bf.sets.push_back(w.sets[filter_of[q]].get());
        bf.passing_rows.push_back(plan.passing_rows[filter_of[q]]);
      }
    } else {
      bf.sets.push_back(w.sets[0].get());
      bf.passing_rows.push_back(plan.passing_rows[0]);
    }
    compile_ms += MsSince(t0);

    // Each shard plans from its own passing count, against its own device's thresholds.
    t0 = Clock::now();
    PlanInput in;
    in.rows = shard.rows();
    in.dim = spec.dim;
    in.num_queries = static_cast<uint32_t>(nq);
    in.k = k;
    in.per_query = per_query;
    if (per_query) {
      uint64_t sum = 0;
      for (auto n : bf.passing_rows) sum += n;
      in.passing_rows = sum / nq;
      for (auto n : bf.passing_rows) in.max_passing_rows = std::max(in.max_passing_rows, n);
      std::vector<const RowSet*> distinct;
      for (auto& s : w.sets) distinct.push_back(s.get());
      w.union_set = RowSet::Union(distinct.data(), distinct.size());
      w.bf.union_set = &w.union_set;
      sets_bytes += w.union_set.MemoryBytes();
      in.union_rows = w.union_set.Cardinality();
      ex.passing_rows += in.union_rows;
    } else {
      in.passing_rows = bf.passing_rows[0];
      in.union_rows = in.passing_rows;
      ex.passing_rows += in.passing_rows;
    }
    SearchPath path =
        options.path == SearchPath::kAuto ? ChoosePath(thresholds[w.device], in) : options.path;
    plan.path = SearchPathName(path);
    for (auto n : bf.passing_rows) w.max_pass = std::max(w.max_pass, n);
    w.view.key = loads[si].key;
    w.view.generation = shard.vectors().generation();
    w.view.vectors = shard.vectors().data();
    w.view.sq_norms = shard.vectors().sq_norms();
    w.view.rows = shard.rows();
    w.view.dim = spec.dim;
    w.view.dtype = spec.dtype;
    w.er.queries = request.queries;
    w.er.num_queries = static_cast<uint32_t>(nq);
    w.er.k = static_cast<uint32_t>(std::min<uint64_t>(CandidateCount(k), w.max_pass));
    w.er.metric = spec.metric;
    w.er.path = path;
    plan_ms += MsSince(t0);
    ex.shards.push_back(std::move(plan));
  }
  plan_ms += place_ms;

  // What the rest allocates: per query, every shard's candidates (kept until the merge), and
  // the results; per device, in turn, what its executor says its largest shard needs (the
  // devices run at once; a device's shards one after another).
  std::vector<uint64_t> exec_bytes_of(devices->size(), 0), device_bytes_of(devices->size(), 0);
  for (ShardWork& w : work) {
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
  std::vector<uint64_t> candidates(nq, 0);  // per query, over every shard
  for (const ShardWork& w : work) {
    if (w.max_pass == 0) continue;
    for (size_t q = 0; q < nq; ++q) {
      candidates[q] += std::min<uint64_t>(w.er.k, w.bf.passing_rows[per_query ? q : 0]);
    }
  }
  // A candidate knows where its row is, for what `include` asks of it.
  struct Candidate {
    double distance;
    int64_t id;
    uint32_t shard;
    uint32_t ordinal;
  };
  uint64_t candidate_bytes = nq * sizeof(std::vector<Candidate>), result_bytes = 0;
  for (size_t q = 0; q < nq; ++q) {
    candidate_bytes += candidates[q] * sizeof(Candidate);
    result_bytes += std::min<uint64_t>(k, candidates[q]) * (sizeof(int64_t) + sizeof(float));
  }
  result_bytes += nq * sizeof(Neighbors);
  if (!request.include.empty()) {
    // Strings and tags are counted by their handles; their text is what the rows hold.
    uint64_t per_row = include_attrs.size() * sizeof(Value) + sizeof(std::vector<Value>);
    if (request.include.vector) per_row += spec.dim * sizeof(float) + sizeof(std::vector<float>);
    uint64_t kept = 0;
    for (size_t q = 0; q < nq; ++q) kept += std::min<uint64_t>(k, candidates[q]);
    result_bytes += kept * per_row;
  }
  const uint64_t need = sets_bytes + candidate_bytes + std::max(exec_bytes, result_bytes);
  ex.host_memory_bytes = need;
  ex.device_memory_bytes = device_bytes;
  if (need > budget_.bytes()) {
    return Status::ResourceExhausted(
        "search: " + std::to_string(nq) + " queries with k = " + std::to_string(k) + " need " +
        DescribeBytes(need) + " of host memory (results " + DescribeBytes(result_bytes) +
        ", candidates " + DescribeBytes(candidate_bytes) + ", " + ex.device + " executor" +
        (devices->size() > 1 ? "s " : " ") + DescribeBytes(exec_bytes) + ", filter row sets " +
        DescribeBytes(sets_bytes) + "), over the memory budget of " +
        DescribeBytes(budget_.bytes()) +
        "; use fewer queries or a smaller k, or raise the budget (Options::memory_budget_bytes; "
        "sieve query/serve --max-memory)");
  }
  MemoryBudget::Reservation reservation = budget_.Reserve(need);

  // Every device searches its shards, all devices at once; each shard's candidates are refined
  // in float64 and mapped to ids by the thread that searched it.
  struct ShardOut {
    ExecResult res;
    std::vector<std::vector<Candidate>> cand;  // per query
    double exec_ms = 0, refine_ms = 0;
    Status status;
  };
  std::vector<ShardOut> outs(work.size());
  std::vector<std::vector<size_t>> shards_of(devices->size());
  for (size_t si = 0; si < work.size(); ++si) {
    if (work[si].max_pass > 0) shards_of[work[si].device].push_back(si);
  }
  std::vector<size_t> busy;  // devices with shards to search
  for (size_t d = 0; d < devices->size(); ++d) {
    if (!shards_of[d].empty()) busy.push_back(d);
  }
  std::vector<double> device_ms(devices->size(), 0);
  auto search_shard = [&](Executor* executor, size_t si) -> Status {
    ShardWork& w = work[si];
    ShardOut& out = outs[si];
    const ShardIndex& shard = *w.shard;
    auto t0 = Clock::now();
    SIEVE_RETURN_IF_ERROR(executor->Search(w.view, w.bf, w.er, &out.res));
    out.exec_ms = MsSince(t0);
    if (out.res.neighbors.size() != nq) {
      return Status::Internal(executor->name() + " returned " +
                              std::to_string(out.res.neighbors.size()) + " result lists for " +
                              std::to_string(nq) + " queries");
    }
    t0 = Clock::now();
    out.cand.resize(nq);
    for (size_t q = 0; q < nq; ++q) {
      const RowSet& set = *w.bf.sets[per_query ? q : 0];
      auto& found = out.res.neighbors[q];
      if (found.size() > std::min<uint64_t>(w.er.k, set.Cardinality())) {
        return Status::Internal(executor->name() + " returned " + std::to_string(found.size()) +
                                " results for query " + std::to_string(q) + ", more than asked");
      }
      out.cand[q].reserve(found.size());
      for (auto& [ord, dist] : found) {
        if (ord >= shard.rows() || !set.Contains(ord)) {
          return Status::Internal(executor->name() + " returned row " + std::to_string(ord) +
                                  " that does not pass the filter of query " + std::to_string(q));
        }
        out.cand[q].push_back({ExactDistance(spec.metric, request.queries + q * spec.dim,
                                             shard.vectors().row(ord), spec.dim),
                               shard.id(ord), static_cast<uint32_t>(si), ord});
      }
      std::vector<std::pair<uint32_t, float>>().swap(found);
    }
    out.refine_ms = MsSince(t0);
    // Sets no later shard needs are freed early.
    w.sets.clear();
    w.union_set.Clear();
    return Status::OK();
  };
  const auto t_exec = Clock::now();
  RunConcurrently(busy.size(), [&](size_t b) {
    const size_t d = busy[b];
    const auto t0 = Clock::now();
    for (size_t si : shards_of[d]) {
      outs[si].status = search_shard(devices->executor(d), si);
      if (!outs[si].status.ok()) break;
    }
    device_ms[d] = MsSince(t0);
  });
  const double wall_ms = MsSince(t_exec);
  double exec_ms = 0;
  for (size_t si = 0; si < work.size(); ++si) {
    if (outs[si].status.IsResourceExhausted()) {
      // Device memory ran out: say what this collection has placed on that device.
      const uint32_t d = work[si].device;
      uint64_t rows = 0, bytes = 0;
      size_t shards = 0;
      for (size_t sj = 0; sj < work.size(); ++sj) {
        if (work[sj].device != d) continue;
        ++shards;
        rows += loads[sj].rows;
        bytes += loads[sj].bytes;
      }
      return outs[si].status.WithContext(
          "search on " + devices->label(d) + ", which holds " + std::to_string(shards) +
          " shards of collection '" + spec.name + "' (" + std::to_string(rows) + " rows, " +
          DescribeBytes(bytes) + " resident) and " + std::to_string(devices->placed_rows(d)) +
          " rows of every collection placed there; use more devices, or tell the placement each "
          "device's memory (Options::device_memory_bytes, sieve query --device-memory)");
    }
    SIEVE_RETURN_IF_ERROR(outs[si].status);
    exec_ms += outs[si].exec_ms;
    refine_ms += outs[si].refine_ms;
    ex.shards[si].select = outs[si].res.select;
    ex.shards[si].select_plan = outs[si].res.select_plan;
    ex.shards[si].execute_ms = outs[si].exec_ms;
    for (auto& st : outs[si].res.stage_ms) {
      ex.stage_ms.emplace_back("execute." + st.first, st.second);
    }
  }
  // Several devices: the wall time of their phase, in which each refined its own shards.
  if (busy.size() > 1) exec_ms = wall_ms;
  for (size_t d = 0; d < devices->size(); ++d) {
    DevicePlan dp;
    for (size_t si = 0; si < work.size(); ++si) {
      if (work[si].device != d) continue;
      dp.shards.push_back(work[si].shard->shard());
      dp.paths.push_back(ex.shards[si].path);
      dp.rows += work[si].shard->rows();
    }
    if (dp.shards.empty()) continue;
    dp.device = devices->label(d);
    dp.executor = devices->executor(d)->name();
    dp.execute_ms = device_ms[d];
    ex.devices.push_back(std::move(dp));
  }

  auto t0 = Clock::now();
  // Per query: (exact distance, id) candidates from every shard, merged exactly.
  std::vector<std::vector<Candidate>> merged(nq);
  for (size_t q = 0; q < nq; ++q) {
    merged[q].reserve(candidates[q]);
    for (ShardOut& out : outs) {
      if (out.cand.empty()) continue;
      merged[q].insert(merged[q].end(), out.cand[q].begin(), out.cand[q].end());
      std::vector<Candidate>().swap(out.cand[q]);
    }
  }
  double include_ms = 0;
  for (size_t q = 0; q < nq; ++q) {
    auto& cand = merged[q];
    auto better = [&](const Candidate& a, const Candidate& b) {
      return BetterThan(larger_better, a.distance, a.id, b.distance, b.id);
    };
    const size_t keep = std::min<size_t>(k, cand.size());
    std::partial_sort(cand.begin(), cand.begin() + keep, cand.end(), better);
    Neighbors& out = result->results[q];
    out.ids.reserve(keep);
    out.distances.reserve(keep);
    for (size_t i = 0; i < keep; ++i) {
      const float d = static_cast<float>(cand[i].distance);
      if (!std::isfinite(d)) {
        // Only rows stored before ingest enforced the norm bound can get here.
        result->results.clear();
        return Status::NotSupported(
            "search: the distance of query " + std::to_string(q) + " to row id " +
            std::to_string(cand[i].id) +
            " does not fit a float32: the row's norm is beyond the range ingest accepts now "
            "(it was stored before that rule); delete or re-ingest it");
      }
      out.ids.push_back(cand[i].id);
      out.distances.push_back(d);
    }
    if (request.include.empty()) continue;
    const auto t_include = Clock::now();
    out.attributes.resize(keep);
    if (request.include.vector) out.vectors.resize(keep);
    Row row;
    for (size_t i = 0; i < keep; ++i) {
      FillRow(*c->shards[cand[i].shard], cand[i].ordinal, include_attrs, request.include.vector,
              &row);
      out.attributes[i] = std::move(row.attributes);
      if (request.include.vector) out.vectors[i] = std::move(row.vector);
    }
    include_ms += MsSince(t_include);
  }
  ex.stage_ms.emplace_back("compile", compile_ms);
  ex.stage_ms.emplace_back("plan", plan_ms);
  ex.stage_ms.emplace_back("execute", exec_ms);
  ex.stage_ms.emplace_back("refine", refine_ms + MsSince(t0) - include_ms);
  if (!request.include.empty()) ex.stage_ms.emplace_back("include", include_ms);
  ex.stage_ms.emplace_back("total", MsSince(t_start));
  return Status::OK();
}

}  // namespace sieve
