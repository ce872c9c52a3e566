// Copyright 2026 The Sieve Authors.

#include "engine/search_text.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <unordered_map>
#include <utility>

#include "engine/device_fanout.h"
#include "engine/request_rules.h"
#include "query/topk.h"
#include "text/text_analyzer.h"

namespace sieve {

namespace {

// The text query as the scorer takes it.
struct TextQuery {
  size_t attr = 0;  // the text attribute's index in the schema
  std::vector<Bm25Term> terms;
  Bm25Params params;
  double avgdl = 0;
  // Per shard, each term's postings there (TextIndex::Find; null where absent): looked up once
  // for n_t, read again by the scorer.
  std::vector<std::vector<const TextIndex::Postings*>> postings;
};

// The query's distinct terms (in the query's order) and the collection's statistics: N, n_t
// and avgdl over the live rows of every shard.
Status PrepareText(const CollectionSpec& spec,
                   const std::vector<std::shared_ptr<ShardIndex>>& shards,
                   const SearchRequest& request, TextQuery* tq, TextSearchPlan* plan) {
  for (size_t a = 0; a < spec.attributes.size(); ++a) {
    if (spec.attributes[a].name == request.text_field) tq->attr = a;
  }
  const AttributeSpec& field = spec.attributes[tq->attr];
  std::shared_ptr<const TextAnalyzer> analyzer;
  SIEVE_RETURN_IF_ERROR(
      TextAnalyzer::Get(field.analyzer.empty() ? kDefaultTextAnalyzer : field.analyzer, &analyzer)
          .WithContext("text"));
  std::vector<TextToken> tokens;
  SIEVE_RETURN_IF_ERROR(analyzer->Analyze(request.text, &tokens).WithContext("text"));
  // A query's terms are few: found by a look along them, or by a map past kFewTerms tokens.
  constexpr size_t kFewTerms = 32;
  std::unordered_map<std::string, size_t> index;
  for (const TextToken& t : tokens) {
    size_t at = tq->terms.size();
    if (tokens.size() <= kFewTerms) {
      for (size_t i = 0; i < tq->terms.size(); ++i) {
        if (tq->terms[i].term == t.term) at = i;
      }
    } else {
      at = index.emplace(t.term, tq->terms.size()).first->second;
    }
    if (at == tq->terms.size()) {
      tq->terms.emplace_back();
      tq->terms.back().term = t.term;
      tq->terms.back().count = 0;
    }
    ++tq->terms[at].count;
  }
  uint64_t documents = 0, length = 0;
  for (const auto& shard : shards) {
    const TextIndex* text = shard->text(tq->attr);
    if (text == nullptr) {
      return Status::Internal("shard " + std::to_string(shard->shard()) + " has no index of '" +
                              field.name + "'");
    }
    documents += text->live_documents();
    length += text->live_length();
  }
  tq->params.k1 = spec.bm25_k1;
  tq->params.b = spec.bm25_b;
  tq->avgdl = documents == 0 ? 0 : static_cast<double>(length) / static_cast<double>(documents);
  plan->field = field.name;
  plan->documents = documents;
  plan->avgdl = tq->avgdl;
  plan->k1 = tq->params.k1;
  plan->b = tq->params.b;
  bool any = false;
  tq->postings.resize(shards.size());
  for (size_t si = 0; si < shards.size(); ++si) {
    tq->postings[si].clear();
    const TextIndex* text = shards[si]->text(tq->attr);
    for (const Bm25Term& term : tq->terms) tq->postings[si].push_back(text->Find(term.term));
  }
  for (size_t t = 0; t < tq->terms.size(); ++t) {
    Bm25Term& term = tq->terms[t];
    uint64_t rows = 0;
    for (size_t si = 0; si < shards.size(); ++si)
      rows += TextIndex::LiveCount(tq->postings[si][t], shards[si]->deleted());
    term.idf = Bm25Idf(documents, rows);
    any = any || rows > 0;
    plan->terms.push_back({term.term, term.count, rows, term.idf});
  }
  plan->strategy = any ? "maxscore" : "none";
  return Status::OK();
}

// Per distinct filter, its top `depth` rows over every shard, best first.
void RankText(const TextQuery& tq, const std::vector<ShardWork>& work, size_t filters, size_t depth,
              std::vector<std::vector<RankedRow>>* lists, TextSearchPlan* plan) {
  lists->assign(filters, {});
  Bm25Counters counters;
  std::vector<Bm25Hit> hits;
  uint64_t calls = 0;
  for (size_t f = 0; f < filters; ++f) {
    std::vector<RankedRow>& list = (*lists)[f];
    for (const ShardWork& w : work) {
      const RowSet& allowed = *w.sets[f];
      plan->passing_rows += allowed.Cardinality();
      if (plan->strategy == "none") continue;
      Bm25TopK(*w.shard->text(tq.attr), tq.terms, tq.params, tq.avgdl, allowed, w.shard->ids(),
               depth, /*prune=*/true, &hits, &counters, tq.postings[w.index].data());
      ++calls;
      for (const Bm25Hit& h : hits) list.push_back({h.score, h.id, w.index, h.ordinal});
    }
    auto before = [](const RankedRow& a, const RankedRow& b) {
      return a.score > b.score || (a.score == b.score && a.id < b.id);
    };
    const size_t keep = std::min(depth, list.size());
    std::partial_sort(list.begin(), list.begin() + keep, list.end(), before);
    list.resize(keep);
  }
  if (counters.filter_scans > 0) {
    plan->strategy = counters.filter_scans == calls ? "filter" : "maxscore+filter";
  }
  plan->postings = counters.postings;
  plan->postings_read = counters.postings_read;
  plan->postings_skipped = counters.postings_skipped;
  plan->blocks = counters.blocks;
  plan->blocks_skipped = counters.blocks_skipped;
  plan->rows_scored = counters.rows_scored;
  plan->rows_pruned = counters.rows_pruned;
  plan->rows_filtered = counters.rows_filtered;
}

// Whether a GPU holds any shard of the search (its executor is "gpu:<device name>").
bool SearchesOnGpu(const std::vector<ShardWork>& work, const DeviceSet& devices) {
  for (const ShardWork& w : work) {
    if (devices.executor(w.device)->name().rfind("gpu", 0) == 0) return true;
  }
  return false;
}

// What the text side holds at once (each shard's heap and hits and each filter's list) beside
// the filters' row sets (already in explain->host_memory_bytes), reserved together.
Status ReserveText(size_t filters, size_t shards, size_t depth, MemoryBudget* budget,
                   MemoryBudget::Reservation* reservation, uint64_t* need_out, Explain* explain) {
  const uint64_t need = (2 * static_cast<uint64_t>(depth) * sizeof(Bm25Hit)) +
                        filters * (shards + 1) * depth * sizeof(RankedRow);
  *need_out = need;
  explain->host_memory_bytes += need;
  if (explain->host_memory_bytes > budget->bytes()) {
    return Status::ResourceExhausted(
        "search: the text side's lists of " + std::to_string(depth) + " rows for " +
        std::to_string(filters) + " filters need " + DescribeBytes(need) +
        ", over the memory budget of " + DescribeBytes(budget->bytes()) +
        "; use a smaller k or depth, or raise the budget (Options::memory_budget_bytes)");
  }
  *reservation = budget->Reserve(explain->host_memory_bytes);
  return Status::OK();
}

void RowsFromList(const std::vector<RankedRow>& list, size_t k, Neighbors* out,
                  std::vector<Candidate>* kept) {
  const size_t n = std::min(k, list.size());
  out->ids.clear();
  out->distances.clear();
  out->scores.clear();
  kept->clear();
  for (size_t i = 0; i < n; ++i) {
    const RankedRow& r = list[i];
    out->ids.push_back(r.id);
    out->distances.push_back(static_cast<float>(r.score));
    out->scores.push_back(r.score);
    kept->push_back({r.score, r.id, r.shard, r.ordinal});
  }
}

}  // namespace

std::vector<RankedRow> FuseLists(const Fusion& fusion, Metric metric,
                                 const std::vector<Candidate>& vector_list,
                                 const std::vector<RankedRow>& text_list, size_t k) {
  std::vector<RankedRow> fused;
  std::unordered_map<int64_t, size_t> at;
  auto add = [&](int64_t id, uint32_t shard, uint32_t ordinal, double score) {
    auto [it, inserted] = at.emplace(id, fused.size());
    if (inserted) {
      fused.push_back({0, id, shard, ordinal});
    }
    fused[it->second].score += score;
  };
  const bool larger_better = LargerIsBetter(metric);
  auto vector_score = [&](const Candidate& c) { return larger_better ? c.distance : -c.distance; };
  // Min-max over the list; every score the same: 1.
  auto normalize = [](double s, double lo, double hi) {
    return hi > lo ? (s - lo) / (hi - lo) : 1.0;
  };
  if (fusion.method == Fusion::Method::kRrf) {
    for (size_t r = 0; r < vector_list.size(); ++r) {
      const Candidate& c = vector_list[r];
      add(c.id, c.shard, c.ordinal, fusion.vector_weight / (fusion.rrf_c + double(r + 1)));
    }
    for (size_t r = 0; r < text_list.size(); ++r) {
      const RankedRow& t = text_list[r];
      add(t.id, t.shard, t.ordinal, fusion.text_weight / (fusion.rrf_c + double(r + 1)));
    }
  } else {
    if (!vector_list.empty()) {
      double lo = vector_score(vector_list.front()), hi = lo;
      for (const Candidate& c : vector_list) {
        lo = std::min(lo, vector_score(c));
        hi = std::max(hi, vector_score(c));
      }
      for (const Candidate& c : vector_list) {
        add(c.id, c.shard, c.ordinal, fusion.vector_weight * normalize(vector_score(c), lo, hi));
      }
    }
    if (!text_list.empty()) {
      double lo = text_list.front().score, hi = lo;
      for (const RankedRow& t : text_list) {
        lo = std::min(lo, t.score);
        hi = std::max(hi, t.score);
      }
      for (const RankedRow& t : text_list) {
        add(t.id, t.shard, t.ordinal, fusion.text_weight * normalize(t.score, lo, hi));
      }
    }
  }
  const size_t keep = std::min(k, fused.size());
  std::partial_sort(fused.begin(), fused.begin() + keep, fused.end(),
                    [](const RankedRow& a, const RankedRow& b) {
                      return a.score > b.score || (a.score == b.score && a.id < b.id);
                    });
  fused.resize(keep);
  return fused;
}

Status SearchText(const TextSearchInput& in, const ParsedSearch& parsed,
                  const SearchRequest& request, const SearchOptions& options, StageTimer* timer,
                  SearchResult* result) {
  Explain& ex = result->explain;
  const CollectionSpec& spec = *in.spec;
  const bool hybrid = request.num_queries > 0;
  const size_t lists = ResultLists(request);
  const size_t k = static_cast<size_t>(request.k);
  const size_t depth = hybrid ? static_cast<size_t>(FusionDepth(request)) : k;
  result->results.resize(lists);
  ex.has_text = true;
  ex.text.depth = static_cast<uint32_t>(depth);
  if (hybrid) ex.text.fusion = FusionMethodName(request.fusion.method);

  std::vector<ShardWork> work;
  double vector_ms = 0;
  if (hybrid) {
    SIEVE_RETURN_IF_ERROR(
        timer->Run("place", [&] { return PlaceShards(*in.meta, *in.shards, in.devices, &work); }));
    if (timer->enabled()) vector_ms += ex.stage_ms.back().second;
  } else {
    work.resize(in.shards->size());  // in place, as PlaceShards makes them
    for (size_t si = 0; si < work.size(); ++si) {
      work[si].shard = (*in.shards)[si].get();
      work[si].index = static_cast<uint32_t>(si);
    }
  }
  uint64_t sets_bytes = 0;
  SIEVE_RETURN_IF_ERROR(timer->Run("compile", [&] {
    return CompileFilters(parsed, in.filter_cache, in.budget->bytes(), &work, &sets_bytes, &ex);
  }));

  // The text side: its own copy of the shards' row sets (the vector side frees each shard's
  // once it has searched it), its own plan and memory, merged into explain when both are done.
  std::vector<ShardWork> text_work(work.size());
  for (size_t si = 0; si < work.size(); ++si) {
    text_work[si].shard = work[si].shard;
    text_work[si].index = work[si].index;
    text_work[si].sets = work[si].sets;
  }
  std::vector<std::vector<RankedRow>> text_lists;
  MemoryBudget::Reservation text_reservation;
  TextSearchPlan text_plan = ex.text;
  Explain text_memory;  // ReserveText's accounting: the row sets, then the text side's lists
  text_memory.host_memory_bytes = sets_bytes;
  double text_ms = 0;
  Status text_status;
  auto text_side = [&] {
    const bool timed = timer->enabled();
    const auto t0 =
        timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    TextQuery tq;
    text_status = PrepareText(spec, *in.shards, request, &tq, &text_plan);
    uint64_t text_bytes = 0;
    if (text_status.ok()) {
      text_status = ReserveText(parsed.texts.size(), text_work.size(), depth, in.budget,
                                &text_reservation, &text_bytes, &text_memory);
    }
    if (text_status.ok()) {
      RankText(tq, text_work, parsed.texts.size(), depth, &text_lists, &text_plan);
    }
    if (timed) {
      text_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
  };
  auto finish_text = [&] {
    timer->Add("text", text_ms);
    ex.text = std::move(text_plan);
    return text_status;
  };

  std::vector<std::vector<Candidate>> kept(lists);
  if (!hybrid) {
    text_side();
    ex.host_memory_bytes = text_memory.host_memory_bytes;
    SIEVE_RETURN_IF_ERROR(finish_text());
    ex.passing_rows = ex.text.passing_rows;
    RowsFromList(text_lists[0], k, &result->results[0], &kept[0]);
  } else {
    // The vector side: a vector search's own steps, with k = depth and nothing included. Where
    // a GPU searches any of its shards the text side runs beside it on a thread of its own
    // (the host is idle while the device works); on the CPU alone it runs first, as the vector
    // side's own threads keep the cores busy.
    SearchRequest vector_request = request;
    vector_request.k = static_cast<int>(depth);
    vector_request.include = Include();
    vector_request.text.clear();
    vector_request.text_field.clear();
    const bool beside = SearchesOnGpu(work, *in.devices);
    text_plan.beside_vector = beside;
    if (!beside) {
      text_side();
      SIEVE_RETURN_IF_ERROR(finish_text());
    }
    const size_t before = ex.stage_ms.size();
    std::vector<std::vector<Candidate>> vector_lists;
    MemoryBudget::Reservation reservation;
    auto vector_side = [&]() -> Status {
      timer->Time("plan", [&] {
        PlanShards(parsed, vector_request, options, spec, *in.thresholds, *in.devices, &work,
                   &sets_bytes, &ex);
      });
      SIEVE_RETURN_IF_ERROR(timer->Run("reserve", [&] {
        return ReserveMemory(parsed, vector_request, spec, work, in.devices, sets_bytes, in.budget,
                             &reservation, &ex);
      }));
      std::vector<ShardOut> outs;
      SIEVE_RETURN_IF_ERROR(timer->Run("execute", [&] {
        return ExecuteShards(vector_request, spec, in.devices, &work, &outs, timer, &ex);
      }));
      return timer->Run("merge", [&] {
        return MergeCandidates(vector_request, spec, &outs, &vector_lists, result);
      });
    };
    Status vector_status;
    if (beside) {
      RunConcurrently(2, [&](size_t task) {
        if (task == 0) {
          vector_status = vector_side();
        } else {
          text_side();
        }
      });
      SIEVE_RETURN_IF_ERROR(finish_text());
    } else {
      vector_status = vector_side();
    }
    SIEVE_RETURN_IF_ERROR(vector_status);
    ex.host_memory_bytes += text_memory.host_memory_bytes - sets_bytes;
    for (size_t i = before; i < ex.stage_ms.size(); ++i) {
      const std::string& name = ex.stage_ms[i].first;
      if (name == "plan" || name == "reserve" || name == "execute" || name == "merge") {
        vector_ms += ex.stage_ms[i].second;
      }
    }
    timer->Add("vector", vector_ms);
    timer->Time("fusion", [&] {
      for (size_t q = 0; q < lists; ++q) {
        const std::vector<RankedRow> fused = FuseLists(request.fusion, spec.metric, vector_lists[q],
                                                       text_lists[parsed.filter_of[q]], k);
        RowsFromList(fused, k, &result->results[q], &kept[q]);
      }
    });
  }
  if (!request.include.empty()) {
    timer->Time("include", [&] { FillIncludes(parsed, request, *in.shards, kept, result); });
  }
  timer->Total();
  return Status::OK();
}

}  // namespace sieve
