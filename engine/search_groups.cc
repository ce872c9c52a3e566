// Copyright 2026 The Sieve Authors.

#include "engine/search_groups.h"

#include <algorithm>
#include <climits>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "query/group_plan.h"
#include "query/topk.h"

namespace sieve {

namespace {

// One shard's rows of one searched set: a query's filter, or its intersection with a group's
// postings.
using ShardSets = std::vector<std::shared_ptr<const RowSet>>;  // per shard

// A group as found: its value and its best rows, best first.
struct FoundGroup {
  Value value;
  std::vector<Candidate> rows;
};

class GroupSearcher {
 public:
  // A found group whose rows need a search of their own (many_groups).
  struct Need {
    uint32_t query;
    size_t group;
  };

  GroupSearcher(const GroupSearchContext& ctx, const std::vector<ShardWork>& work,
                SearchResult* result)
      : ctx_(ctx),
        work_(work),
        result_(result),
        attr_(AttributeIndexOf(ctx.spec, ctx.request.group_by)),
        larger_better_(LargerIsBetter(ctx.spec.metric)),
        k_(static_cast<size_t>(ctx.request.k)),
        size_(static_cast<size_t>(ctx.request.group_size)) {}

  Status Run() {
    const size_t nq = ctx_.request.num_queries;
    Explain& ex = result_->explain;
    ex.group.emplace();
    plan_ = &*ex.group;
    plan_->field = ctx_.request.group_by;
    // Passing rows of each distinct filter, summed over shards.
    const size_t nf = ctx_.parsed.texts.size();
    filter_rows_.assign(nf, 0);
    for (const ShardWork& w : work_) {
      for (size_t f = 0; f < nf; ++f) filter_rows_[f] += w.sets[f]->Cardinality();
      plan_->distinct_values += w.shard->attribute(attr_).distinct_values();
      if (ctx_.parsed.per_query) {
        std::vector<const RowSet*> all;
        for (auto& s : w.sets) all.push_back(s.get());
        ex.passing_rows += RowSet::Union(all.data(), all.size()).Cardinality();
      } else {
        ex.passing_rows += w.sets[0]->Cardinality();
      }
    }
    GroupPlanInput in;
    in.distinct_values = plan_->distinct_values;
    for (size_t q = 0; q < nq; ++q) {
      in.max_passing_rows = std::max(in.max_passing_rows, filter_rows_[FilterOf(q)]);
    }
    in.k = static_cast<uint32_t>(k_);
    in.group_size = static_cast<uint32_t>(size_);
    const GroupDecision decision = PlanGroups(in, ctx_.request.group_strategy);
    plan_->strategy = GroupStrategyName(decision.strategy);
    plan_->reason = decision.reason;
    found_.assign(nq, {});
    if (decision.strategy == GroupStrategy::kFewGroups) {
      SIEVE_RETURN_IF_ERROR(FewGroups());
    } else {
      SIEVE_RETURN_IF_ERROR(ManyGroups(decision.first_scan_k));
    }
    return Output();
  }

 private:
  static size_t AttributeIndexOf(const CollectionSpec& spec, const std::string& name) {
    for (size_t i = 0; i < spec.attributes.size(); ++i) {
      if (spec.attributes[i].name == name) return i;
    }
    return 0;  // ValidateSearchRequest refused an unknown name
  }

  uint32_t FilterOf(size_t q) const { return ctx_.parsed.filter_of[q]; }

  bool Better(const Candidate& a, const Candidate& b) const {
    return BetterThan(larger_better_, a.distance, a.id, b.distance, b.id);
  }
  // Groups rank by their best row, then by value.
  bool GroupBefore(const FoundGroup& a, const FoundGroup& b) const {
    if (Better(a.rows[0], b.rows[0])) return true;
    if (Better(b.rows[0], a.rows[0])) return false;
    return a.value < b.value;
  }

  // Per shard, the rows of filter f that hold `value`.
  ShardSets GroupSets(uint32_t f, const Value& value, uint64_t* count) const {
    ShardSets sets(work_.size());
    *count = 0;
    for (size_t s = 0; s < work_.size(); ++s) {
      RowSet rows = *work_[s].sets[f] & work_[s].shard->attribute(attr_).Postings(value);
      *count += rows.Cardinality();
      sets[s] = std::make_shared<const RowSet>(std::move(rows));
    }
    return sets;
  }

  // The values a row holds of the grouped attribute, in value order (a tags row: each distinct
  // tag); none when null.
  std::vector<Value> ValuesOf(const Candidate& c) const {
    Value v = ctx_.shards[c.shard]->attribute(attr_).ValueAt(c.ordinal);
    std::vector<Value> out;
    if (IsNull(v)) return out;
    if (auto* tags = std::get_if<std::vector<std::string>>(&v)) {
      std::set<std::string> distinct(tags->begin(), tags->end());
      for (const std::string& t : distinct) out.emplace_back(t);
    } else {
      out.push_back(std::move(v));
    }
    return out;
  }

  // Searches query query_of[i] in the sets set_of[i] (an index into each shard's `sets`) for
  // its best k rows, in batches of kGroupBatchSearches, through the steps of a plain search;
  // (*kept)[i] gets them best first.
  Status RunBatches(const std::vector<ShardSets>& sets, const std::vector<uint32_t>& query_of,
                    const std::vector<uint32_t>& set_of, uint64_t k, const char* kind,
                    std::vector<std::vector<Candidate>>* kept) {
    kept->assign(query_of.size(), {});
    if (k > static_cast<uint64_t>(INT_MAX)) {
      return Status::ResourceExhausted("search: group_by needs the best " + std::to_string(k) +
                                       " rows of a query, more than one search returns");
    }
    const uint32_t dim = ctx_.spec.dim;
    for (size_t begin = 0; begin < query_of.size(); begin += kGroupBatchSearches) {
      const size_t end = std::min(query_of.size(), begin + kGroupBatchSearches);
      const size_t n = end - begin;
      std::vector<float> queries(n * dim);
      ParsedSearch parsed;
      parsed.filter_of.resize(n);
      std::map<uint32_t, uint32_t> local;  // set index -> index in this batch
      for (size_t i = 0; i < n; ++i) {
        std::copy_n(ctx_.request.queries + size_t{query_of[begin + i]} * dim, dim,
                    queries.begin() + i * dim);
        auto [it, inserted] =
            local.emplace(set_of[begin + i], static_cast<uint32_t>(local.size()));
        parsed.filter_of[i] = it->second;
      }
      parsed.per_query = local.size() > 1;
      std::vector<ShardWork> work(work_.size());
      uint64_t sets_bytes = 0;
      for (size_t s = 0; s < work_.size(); ++s) {
        work[s].shard = work_[s].shard;
        work[s].index = work_[s].index;
        work[s].device = work_[s].device;
        work[s].load = work_[s].load;
        work[s].sets.resize(local.size());
        for (const auto& [set, i] : local) {
          work[s].sets[i] = sets[set][s];
          sets_bytes += work[s].sets[i]->MemoryBytes();
        }
      }
      SearchRequest request;
      request.queries = queries.data();
      request.num_queries = n;
      request.dim = dim;
      request.k = static_cast<int>(k);
      SearchResult scratch;
      scratch.results.resize(n);
      Explain& ex = scratch.explain;
      StageTimer timer(&ex);
      PlanShards(parsed, request, ctx_.options, ctx_.spec, ctx_.thresholds, *ctx_.devices,
                 &work, &sets_bytes, &ex);
      MemoryBudget::Reservation reservation;
      SIEVE_RETURN_IF_ERROR(ReserveMemory(parsed, request, ctx_.spec, work, ctx_.devices,
                                          sets_bytes, ctx_.budget, &reservation, &ex));
      std::vector<ShardOut> outs;
      SIEVE_RETURN_IF_ERROR(
          ExecuteShards(request, ctx_.spec, ctx_.devices, &work, &outs, &timer, &ex));
      std::vector<std::vector<Candidate>> batch_kept;
      SIEVE_RETURN_IF_ERROR(MergeCandidates(request, ctx_.spec, &outs, &batch_kept, &scratch));
      for (size_t i = 0; i < n; ++i) (*kept)[begin + i] = std::move(batch_kept[i]);
      Explain& outer = result_->explain;
      outer.host_memory_bytes = std::max(outer.host_memory_bytes, ex.host_memory_bytes);
      outer.device_memory_bytes = std::max(outer.device_memory_bytes, ex.device_memory_bytes);
      if (plan_->batches.empty()) {
        outer.shards = ex.shards;
        outer.devices = ex.devices;
      }
      plan_->searches += n;
      plan_->batches.push_back({kind, n, k, std::move(ex.shards)});
    }
    return Status::OK();
  }

  // One search per (query, group with passing rows), then the k best groups of each query.
  Status FewGroups() {
    const size_t nq = ctx_.request.num_queries;
    // Every value of the attribute, in value order, with its postings in each shard.
    std::set<Value> values;
    for (const ShardWork& w : work_) {
      w.shard->attribute(attr_).ForEachPosting(
          [&](const Value& v, const RowSet&) { values.insert(v); });
    }
    std::vector<Value> value_list(values.begin(), values.end());
    // The (filter, value) sets with passing rows, for the filters the queries use.
    std::vector<ShardSets> sets;
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> groups_of_filter(
        ctx_.parsed.texts.size());  // (value index, set index)
    std::vector<bool> used(ctx_.parsed.texts.size(), false);
    for (size_t q = 0; q < nq; ++q) used[FilterOf(q)] = true;
    for (uint32_t f = 0; f < used.size(); ++f) {
      if (!used[f]) continue;
      for (uint32_t g = 0; g < value_list.size(); ++g) {
        uint64_t count = 0;
        ShardSets s = GroupSets(f, value_list[g], &count);
        if (count == 0) continue;
        groups_of_filter[f].emplace_back(g, static_cast<uint32_t>(sets.size()));
        sets.push_back(std::move(s));
      }
    }
    std::vector<uint32_t> query_of, set_of, value_of;
    for (uint32_t q = 0; q < nq; ++q) {
      for (const auto& [g, set] : groups_of_filter[FilterOf(q)]) {
        query_of.push_back(q);
        set_of.push_back(set);
        value_of.push_back(g);
      }
    }
    std::vector<std::vector<Candidate>> kept;
    SIEVE_RETURN_IF_ERROR(RunBatches(sets, query_of, set_of, size_, "groups", &kept));
    for (size_t i = 0; i < query_of.size(); ++i) {
      if (kept[i].empty()) continue;
      found_[query_of[i]].push_back({value_list[value_of[i]], std::move(kept[i])});
    }
    for (auto& groups : found_) {
      const size_t keep = std::min(k_, groups.size());
      std::partial_sort(groups.begin(), groups.begin() + keep, groups.end(),
                        [&](const FoundGroup& a, const FoundGroup& b) {
                          return GroupBefore(a, b);
                        });
      groups.resize(keep);
    }
    return Status::OK();
  }

  // Rounds of each query's filtered top-K', K' doubling, until the list holds k groups whose
  // best rows no row outside it can beat; then each group's rows.
  Status ManyGroups(uint64_t scan_k) {
    const size_t nq = ctx_.request.num_queries;
    std::vector<uint32_t> pending(nq);
    for (uint32_t q = 0; q < nq; ++q) pending[q] = q;
    std::vector<ShardSets> filters(ctx_.parsed.texts.size(), ShardSets(work_.size()));
    for (size_t f = 0; f < filters.size(); ++f) {
      for (size_t s = 0; s < work_.size(); ++s) filters[f][s] = work_[s].sets[f];
    }
    std::vector<Need> fills;
    while (!pending.empty()) {
      ++plan_->rounds;
      plan_->scan_k.push_back(scan_k);
      std::vector<uint32_t> set_of(pending.size());
      for (size_t i = 0; i < pending.size(); ++i) set_of[i] = FilterOf(pending[i]);
      std::vector<std::vector<Candidate>> lists;
      SIEVE_RETURN_IF_ERROR(RunBatches(filters, pending, set_of, scan_k, "scan", &lists));
      std::vector<uint32_t> still;
      uint64_t still_rows = 0;
      for (size_t i = 0; i < pending.size(); ++i) {
        const uint32_t q = pending[i];
        const uint64_t passing = filter_rows_[FilterOf(q)];
        if (SettleFromList(q, lists[i], scan_k >= passing, &fills)) continue;
        still.push_back(q);
        still_rows = std::max(still_rows, passing);
      }
      pending = std::move(still);
      if (!pending.empty()) scan_k = NextScanK(scan_k, still_rows);
    }
    if (fills.empty()) return Status::OK();
    // The groups whose best rows the lists could not vouch for: a search each.
    std::vector<ShardSets> sets;
    std::vector<uint32_t> query_of, set_of;
    for (const Need& need : fills) {
      uint64_t count = 0;
      sets.push_back(GroupSets(FilterOf(need.query), found_[need.query][need.group].value,
                               &count));
      query_of.push_back(need.query);
      set_of.push_back(static_cast<uint32_t>(sets.size() - 1));
    }
    std::vector<std::vector<Candidate>> kept;
    SIEVE_RETURN_IF_ERROR(RunBatches(sets, query_of, set_of, size_, "fill", &kept));
    for (size_t i = 0; i < fills.size(); ++i) {
      found_[fills[i].query][fills[i].group].rows = std::move(kept[i]);
    }
    return Status::OK();
  }

  // Query q's top list (best first; `complete` when it holds every passing row): true when it
  // settles q's k groups, which go into found_[q] with the rows the list vouches for; the
  // groups that need a search of their own go into *fills.
  bool SettleFromList(uint32_t q, const std::vector<Candidate>& list, bool complete,
                      std::vector<Need>* fills) {
    // The groups in the order their best rows come, each with its rows in the list.
    std::map<Value, size_t> index;
    std::vector<FoundGroup> groups;
    for (const Candidate& c : list) {
      for (Value& v : ValuesOf(c)) {
        auto [it, inserted] = index.emplace(v, groups.size());
        if (inserted) groups.push_back({std::move(v), {}});
        groups[it->second].rows.push_back(c);
      }
    }
    if (!complete) {
      // A row outside the list ranks after its last one; rows that tie with the last on
      // distance may rank either side of it, so a group is settled only by a best row that
      // is strictly better.
      if (groups.size() < k_) return false;
      if (!(StrictlyBetter(groups[k_ - 1].rows[0].distance, list.back().distance))) return false;
    }
    groups.resize(std::min(k_, groups.size()));
    const uint32_t f = FilterOf(q);
    for (size_t g = 0; g < groups.size(); ++g) {
      std::vector<Candidate>& rows = groups[g].rows;
      size_t sure = rows.size();
      if (!complete) {
        sure = 0;
        while (sure < rows.size() && StrictlyBetter(rows[sure].distance, list.back().distance)) {
          ++sure;
        }
      }
      if (sure >= size_ || complete) {
        rows.resize(std::min(size_, rows.size()));
        continue;
      }
      // The list holds every passing row of the group: nothing outside can rank among them.
      uint64_t count = 0;
      for (const ShardWork& w : work_) {
        count += (*w.sets[f] & w.shard->attribute(attr_).Postings(groups[g].value)).Cardinality();
      }
      if (count == rows.size()) {
        rows.resize(std::min(size_, rows.size()));
        continue;
      }
      fills->push_back({q, g});
    }
    found_[q] = std::move(groups);
    return true;
  }

  bool StrictlyBetter(double a, double b) const { return larger_better_ ? a > b : a < b; }

  Status Output() {
    Row row;
    for (size_t q = 0; q < found_.size(); ++q) {
      std::vector<Group>& out = result_->results[q].groups;
      out.resize(found_[q].size());
      plan_->groups += found_[q].size();
      for (size_t g = 0; g < found_[q].size(); ++g) {
        FoundGroup& in = found_[q][g];
        Group& group = out[g];
        group.value = std::move(in.value);
        for (const Candidate& c : in.rows) {
          const float d = static_cast<float>(c.distance);
          group.ids.push_back(c.id);
          group.distances.push_back(d);
          if (ctx_.request.include.empty()) continue;
          FillRow(*ctx_.shards[c.shard], c.ordinal, ctx_.parsed.include_attrs,
                  ctx_.request.include.vector, &row);
          group.attributes.push_back(std::move(row.attributes));
          if (ctx_.request.include.vector) group.vectors.push_back(std::move(row.vector));
        }
      }
    }
    return Status::OK();
  }

  const GroupSearchContext& ctx_;
  const std::vector<ShardWork>& work_;
  SearchResult* result_;
  const size_t attr_;
  const bool larger_better_;
  const size_t k_, size_;
  Explain::GroupPlan* plan_ = nullptr;
  std::vector<uint64_t> filter_rows_;           // per distinct filter, over shards
  std::vector<std::vector<FoundGroup>> found_;  // per query
};

}  // namespace

Status SearchGroups(const GroupSearchContext& ctx, const std::vector<ShardWork>& work,
                    SearchResult* result) {
  return GroupSearcher(ctx, work, result).Run();
}

}  // namespace sieve
