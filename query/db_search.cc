// Copyright 2026 The Sieve Authors.
//
// DBImpl::Search: parse the filters once, compile and plan every shard, count what the search
// will allocate before allocating it, run the executor per shard, refine in float64, merge
// exactly, and fill what SearchRequest::include asks for.

#include <algorithm>
#include <cmath>
#include <memory>
#include <unordered_map>

#include "filter/filter.h"
#include "query/db_impl.h"
#include "query/db_util.h"
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

  Executor* executor = nullptr;
  PlannerThresholds thresholds;
  SIEVE_RETURN_IF_ERROR(ExecutorFor(options.device, &executor, &thresholds));
  ex.device = executor->name();
  ex.thresholds = thresholds.source;

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
  double compile_ms = 0, plan_ms = 0, exec_ms = 0, refine_ms = 0;

  // Compile and plan every shard first, so that the memory the search needs is known (and
  // refused, or reserved) before anything large is allocated.
  struct ShardWork {
    const ShardIndex* shard = nullptr;
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
    ShardPlan plan;
    plan.shard = shard.shard();
    plan.rows = shard.live_rows();
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
        options.path == SearchPath::kAuto ? ChoosePath(thresholds, in) : options.path;
    plan.path = SearchPathName(path);
    for (auto n : bf.passing_rows) w.max_pass = std::max(w.max_pass, n);
    w.view.key = (static_cast<uint64_t>(c->meta.id) << 32) | shard.shard();
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

  // What the rest allocates: per query, every shard's candidates (kept until the merge), and
  // the results; per shard, in turn, what its executor says it needs (its result included).
  uint64_t exec_bytes = 0, device_bytes = 0;
  for (ShardWork& w : work) {
    if (w.max_pass == 0) continue;
    MemoryEstimate m;
    SIEVE_RETURN_IF_ERROR(executor->EstimateMemory(w.view, w.bf, w.er, &m));
    exec_bytes = std::max(exec_bytes, m.host_bytes);
    device_bytes = std::max(device_bytes, m.device_bytes);
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
        ", candidates " + DescribeBytes(candidate_bytes) + ", " + executor->name() + " executor " +
        DescribeBytes(exec_bytes) + ", filter row sets " + DescribeBytes(sets_bytes) +
        "), over the memory budget of " + DescribeBytes(budget_.bytes()) +
        "; use fewer queries or a smaller k, or raise the budget (Options::memory_budget_bytes; "
        "sieve query/serve --max-memory)");
  }
  MemoryBudget::Reservation reservation = budget_.Reserve(need);

  // Per query: (exact distance, id) candidates from every shard.
  std::vector<std::vector<Candidate>> merged(nq);
  for (size_t q = 0; q < nq; ++q) merged[q].reserve(candidates[q]);
  for (size_t si = 0; si < work.size(); ++si) {
    ShardWork& w = work[si];
    if (w.max_pass == 0) continue;
    const ShardIndex& shard = *w.shard;
    auto t0 = Clock::now();
    ExecResult res;
    SIEVE_RETURN_IF_ERROR(executor->Search(w.view, w.bf, w.er, &res));
    exec_ms += MsSince(t0);
    if (res.neighbors.size() != nq) {
      return Status::Internal(executor->name() + " returned " +
                              std::to_string(res.neighbors.size()) + " result lists for " +
                              std::to_string(nq) + " queries");
    }
    ex.shards[si].select = res.select;
    ex.shards[si].select_plan = res.select_plan;
    for (auto& st : res.stage_ms) ex.stage_ms.emplace_back("execute." + st.first, st.second);

    // Refine in float64 and map ordinals to ids.
    t0 = Clock::now();
    for (size_t q = 0; q < nq; ++q) {
      const RowSet& set = *w.bf.sets[per_query ? q : 0];
      if (res.neighbors[q].size() > std::min<uint64_t>(w.er.k, set.Cardinality())) {
        return Status::Internal(executor->name() + " returned " +
                                std::to_string(res.neighbors[q].size()) + " results for query " +
                                std::to_string(q) + ", more than asked");
      }
      for (auto& [ord, dist] : res.neighbors[q]) {
        if (ord >= shard.rows() || !set.Contains(ord)) {
          return Status::Internal(executor->name() + " returned row " + std::to_string(ord) +
                                  " that does not pass the filter of query " + std::to_string(q));
        }
        merged[q].push_back({ExactDistance(spec.metric, request.queries + q * spec.dim,
                                           shard.vectors().row(ord), spec.dim),
                             shard.id(ord), static_cast<uint32_t>(si), ord});
      }
    }
    refine_ms += MsSince(t0);
    // Sets no later shard needs are freed early.
    w.sets.clear();
    w.union_set.Clear();
  }

  auto t0 = Clock::now();
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
