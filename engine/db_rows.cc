// Copyright 2026 The Sieve Authors.
//
// DBImpl's row reads: Get by id, Count and Scan by filter, all from the in-memory image (ids,
// attribute indexes, vectors), and Include::Parse.

#include <algorithm>
#include <queue>

#include "filter/filter.h"
#include "engine/db_impl.h"
#include "engine/db_util.h"
#include "storage/shard_of.h"

namespace sieve {


Status DBImpl::RefuseIfReadOnly(const char* op) const {
  if (!read_only_) return Status::OK();
  return Status::NotSupported(std::string(op) + ": the database is open read-only");
}

Status DBImpl::CheckNotDropped(const CollectionState& c) const {
  if (c.dropped) return Status::NotFound("collection '" + c.meta.spec.name + "' was dropped");
  return Status::OK();
}

CollectionSpec DBImpl::SpecOf(CollectionState* c, uint64_t* version) const {
  std::shared_lock<std::shared_mutex> lock(c->mu);
  *version = c->schema_version;
  return c->meta.spec;
}

Status DBImpl::SelectByFilter(const CollectionState& c, const std::string& filter,
                              std::vector<RowSet>* sets) const {
  std::unique_ptr<Filter> f;
  SIEVE_RETURN_IF_ERROR(Filter::Parse(filter, c.meta.spec, &f));
  sets->clear();
  for (const auto& shard : c.shards) sets->push_back(f->Compile(*shard));
  return Status::OK();
}

Status DBImpl::Get(const ReadOptions& options, const std::string& collection,
                   const int64_t* ids, size_t n, const Include& include, GetResult* result) {
  *result = GetResult();
  if (n > 0 && ids == nullptr) return Status::InvalidArgument("get: ids is null");
  std::shared_ptr<CollectionState> c;
  SIEVE_RETURN_IF_ERROR(FindCollectionAt(options.snapshot, collection, &c));
  return GetIn(c, options, ids, n, include, result);
}

Status DBImpl::GetIn(const std::shared_ptr<CollectionState>& c, const ReadOptions& options,
                     const int64_t* ids, size_t n, const Include& include, GetResult* result) {
  *result = GetResult();
  if (n > 0 && ids == nullptr) return Status::InvalidArgument("get: ids is null");
  ReadView view;
  SIEVE_RETURN_IF_ERROR(ResolveRead(c, options.snapshot, &view));
  std::vector<size_t> attrs;
  SIEVE_RETURN_IF_ERROR(
      ResolveInclude(view.spec, include, &attrs, &result->attribute_names));
  double load_ms = 0;
  SIEVE_RETURN_IF_ERROR(BeginRead(c, include.vector, &load_ms, &view));
  if (view.reparse) {  // altered meanwhile: resolve against the image's schema
    SIEVE_RETURN_IF_ERROR(ResolveInclude(view.spec, include, &attrs, &result->attribute_names));
  }
  const uint32_t nshards = view.spec.shards;
  result->found.assign(n, false);
  result->rows.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const ShardIndex& shard = *(*view.shards)[ShardOf(ids[i], nshards)];
    uint32_t ordinal = 0;
    if (shard.FindLive(ids[i], &ordinal)) {
      FillRow(shard, ordinal, attrs, include.vector, &result->rows[i]);
      result->found[i] = true;
    } else {
      result->rows[i].id = ids[i];
    }
  }
  return Status::OK();
}

Status DBImpl::Count(const ReadOptions& options, const std::string& collection,
                     const std::string& filter, uint64_t* count) {
  *count = 0;
  std::shared_ptr<CollectionState> c;
  SIEVE_RETURN_IF_ERROR(FindCollectionAt(options.snapshot, collection, &c));
  return CountIn(c, options, filter, count);
}

Status DBImpl::CountIn(const std::shared_ptr<CollectionState>& c, const ReadOptions& options,
                       const std::string& filter, uint64_t* count) {
  *count = 0;
  ReadView view;
  SIEVE_RETURN_IF_ERROR(ResolveRead(c, options.snapshot, &view));
  std::unique_ptr<Filter> f;
  SIEVE_RETURN_IF_ERROR(Filter::Parse(filter, view.spec, &f));
  double load_ms = 0;
  SIEVE_RETURN_IF_ERROR(BeginRead(c, /*vectors=*/false, &load_ms, &view));
  if (view.reparse) {  // altered meanwhile: parse against the image's schema
    SIEVE_RETURN_IF_ERROR(Filter::Parse(filter, view.spec, &f));
  }
  for (const auto& shard : *view.shards) *count += f->Compile(*shard).Cardinality();
  return Status::OK();
}

Status DBImpl::Scan(const std::string& collection, const ScanRequest& request,
                    ScanResult* result) {
  *result = ScanResult();
  if (request.limit < 1 || request.limit > 1000000) {
    return Status::InvalidArgument("scan: limit must be within [1, 1000000], got " +
                                   std::to_string(request.limit));
  }
  std::shared_ptr<CollectionState> c;
  SIEVE_RETURN_IF_ERROR(FindCollectionAt(request.snapshot, collection, &c));
  return ScanIn(c, request, result);
}

Status DBImpl::ScanIn(const std::shared_ptr<CollectionState>& c, const ScanRequest& request,
                      ScanResult* result) {
  *result = ScanResult();
  if (request.limit < 1 || request.limit > 1000000) {
    return Status::InvalidArgument("scan: limit must be within [1, 1000000], got " +
                                   std::to_string(request.limit));
  }
  ReadView view;
  SIEVE_RETURN_IF_ERROR(ResolveRead(c, request.snapshot, &view));
  std::vector<size_t> attrs;
  SIEVE_RETURN_IF_ERROR(
      ResolveInclude(view.spec, request.include, &attrs, &result->attribute_names));
  std::unique_ptr<Filter> f;
  SIEVE_RETURN_IF_ERROR(Filter::Parse(request.filter, view.spec, &f));
  double load_ms = 0;
  SIEVE_RETURN_IF_ERROR(BeginRead(c, request.include.vector, &load_ms, &view));
  if (view.reparse) {  // altered meanwhile: parse against the image's schema
    SIEVE_RETURN_IF_ERROR(
        ResolveInclude(view.spec, request.include, &attrs, &result->attribute_names));
    SIEVE_RETURN_IF_ERROR(Filter::Parse(request.filter, view.spec, &f));
  }

  // Per shard: its live rows in id order from the cursor on, and the rows passing the filter.
  struct Cursor {
    const ShardIndex* shard;
    std::shared_ptr<const std::vector<std::pair<int64_t, uint32_t>>> sorted;
    size_t next;
    RowSet passing;
    bool all;  // the filter passes every live row
  };
  std::vector<Cursor> cursors;
  for (const auto& shard : *view.shards) {
    Cursor cur{shard.get(), shard->SortedLive(), 0, RowSet(), f->MatchesAll()};
    if (request.has_after) {
      cur.next = std::upper_bound(cur.sorted->begin(), cur.sorted->end(),
                                  std::make_pair(request.after, UINT32_MAX)) -
                 cur.sorted->begin();
    }
    if (!cur.all) cur.passing = f->Compile(*shard);
    cursors.push_back(std::move(cur));
  }
  // Moves a cursor to its next passing row; false at its end.
  auto advance = [](Cursor& cur) {
    while (cur.next < cur.sorted->size()) {
      if (cur.all || cur.passing.Contains((*cur.sorted)[cur.next].second)) return true;
      ++cur.next;
    }
    return false;
  };
  using Head = std::pair<int64_t, size_t>;  // (id, cursor)
  std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heads;
  for (size_t i = 0; i < cursors.size(); ++i) {
    if (advance(cursors[i])) heads.emplace((*cursors[i].sorted)[cursors[i].next].first, i);
  }
  result->rows.reserve(std::min<size_t>(request.limit, 65536));
  while (!heads.empty() && result->rows.size() < request.limit) {
    const size_t i = heads.top().second;
    heads.pop();
    Cursor& cur = cursors[i];
    result->rows.emplace_back();
    FillRow(*cur.shard, (*cur.sorted)[cur.next].second, attrs, request.include.vector,
            &result->rows.back());
    ++cur.next;
    if (advance(cur)) heads.emplace((*cur.sorted)[cur.next].first, i);
  }
  result->done = heads.empty();
  if (!result->done) result->next = result->rows.back().id;
  return Status::OK();
}

}  // namespace sieve
