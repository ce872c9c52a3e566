// Copyright 2026 The Sieve Authors.
//
// CollectionHandle: the engine's sieve::Collection (DB::GetCollection). It holds the DBImpl and
// the state of one collection (not its name), so that once the collection is dropped every
// call through it returns NotFound, even after a collection of the same name is created. Like
// NoThrowDB, it is an exception barrier: no exception from below crosses it.
//
// Thread-safety: that of DBImpl. Shares the collection's state; does not own the DBImpl, which
// must outlive every call (not the handle itself: the destructor does not touch it).

#ifndef SIEVE_ENGINE_COLLECTION_HANDLE_H_
#define SIEVE_ENGINE_COLLECTION_HANDLE_H_

#include <memory>
#include <string>

#include "engine/db_impl.h"
#include "sieve/db.h"

namespace sieve {

class CollectionHandle final : public Collection {
 public:
  CollectionHandle(DBImpl* db, std::shared_ptr<CollectionState> state)
      : db_(db), state_(std::move(state)) {}

  CollectionSpec spec() const override;
  bool dropped() const override { return state_->dropped; }

  Status GetStats(CollectionStats* stats) override;
  Status Ingest(const RowBatch& rows, const IngestOptions& options, IngestResult* result) override;
  Status Upsert(const RowBatch& rows, const IngestOptions& options, IngestResult* result) override;
  Status DeleteByIds(const int64_t* ids, size_t n, uint64_t* deleted) override;
  Status DeleteByFilter(const std::string& filter, uint64_t* deleted) override;
  Status Update(const UpdateRequest& request, uint64_t* updated) override;
  using Collection::Count;
  using Collection::Get;
  Status Get(const ReadOptions& options, const int64_t* ids, size_t n, const Include& include,
             GetResult* result) override;
  Status Count(const ReadOptions& options, const std::string& filter, uint64_t* count) override;
  Status Scan(const ScanRequest& request, ScanResult* result) override;
  Status Search(const SearchRequest& request, const SearchOptions& options,
                SearchResult* result) override;
  using Collection::Compact;
  Status Compact(const CompactOptions& options, CompactResult* result) override;
  Status Alter(const AlterRequest& request, AlterResult* result) override;
  Status Rename(const std::string& new_name) override;

 private:
  DBImpl* const db_;
  const std::shared_ptr<CollectionState> state_;
};

}  // namespace sieve

#endif  // SIEVE_ENGINE_COLLECTION_HANDLE_H_
