// Copyright 2026 The Sieve Authors.

#include "engine/collection_handle.h"

#include <mutex>
#include <shared_mutex>

#include "engine/no_throw_db.h"

namespace sieve {

CollectionSpec CollectionHandle::spec() const {
  // Under the lock AlterCollection and RenameCollection take to change it.
  std::shared_lock<std::shared_mutex> l(state_->mu);
  return state_->meta.spec;
}

Status CollectionHandle::Alter(const AlterRequest& request, AlterResult* result) {
  return CatchExceptions("alter", [&] { return db_->AlterIn(state_, request, result); });
}

Status CollectionHandle::Rename(const std::string& new_name) {
  return CatchExceptions("rename", [&] { return db_->RenameIn(state_, new_name); });
}

Status CollectionHandle::GetStats(CollectionStats* stats) {
  return CatchExceptions("stats", [&] { return db_->GetStatsIn(state_, stats); });
}

Status CollectionHandle::Ingest(const RowBatch& rows, const IngestOptions& options,
                                IngestResult* result) {
  return CatchExceptions(
      "ingest", [&] { return db_->WriteRowsIn(state_, rows, options, /*upsert=*/false, result); });
}

Status CollectionHandle::Upsert(const RowBatch& rows, const IngestOptions& options,
                                IngestResult* result) {
  return CatchExceptions(
      "upsert", [&] { return db_->WriteRowsIn(state_, rows, options, /*upsert=*/true, result); });
}

Status CollectionHandle::DeleteByIds(const int64_t* ids, size_t n, uint64_t* deleted) {
  return CatchExceptions("delete", [&] { return db_->DeleteByIdsIn(state_, ids, n, deleted); });
}

Status CollectionHandle::DeleteByFilter(const std::string& filter, uint64_t* deleted) {
  return CatchExceptions("delete", [&] { return db_->DeleteByFilterIn(state_, filter, deleted); });
}

Status CollectionHandle::Update(const UpdateRequest& request, uint64_t* updated) {
  return CatchExceptions("update", [&] { return db_->UpdateIn(state_, request, updated); });
}

Status CollectionHandle::Get(const ReadOptions& options, const int64_t* ids, size_t n,
                             const Include& include, GetResult* result) {
  Status s = CatchExceptions(
      "get", [&] { return db_->GetIn(state_, options, ids, n, include, result); });
  if (!s.ok()) *result = GetResult();
  return s;
}

Status CollectionHandle::Count(const ReadOptions& options, const std::string& filter,
                               uint64_t* count) {
  return CatchExceptions("count", [&] { return db_->CountIn(state_, options, filter, count); });
}

Status CollectionHandle::Scan(const ScanRequest& request, ScanResult* result) {
  Status s = CatchExceptions("scan", [&] { return db_->ScanIn(state_, request, result); });
  if (!s.ok()) *result = ScanResult();
  return s;
}

Status CollectionHandle::Compact(const CompactOptions& options, CompactResult* result) {
  return CatchExceptions("compact", [&] { return db_->CompactIn({state_}, options, result); });
}

Status CollectionHandle::Search(const SearchRequest& request, const SearchOptions& options,
                                SearchResult* result) {
  Status s =
      CatchExceptions("search", [&] { return db_->SearchIn(state_, request, options, result); });
  // As NoThrowDB::Search: a failed search's results are no answer; explain stays.
  if (!s.ok()) result->results.clear();
  return s;
}

}  // namespace sieve
