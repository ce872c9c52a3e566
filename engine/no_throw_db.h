// Copyright 2026 The Sieve Authors.
//
// NoThrowDB: the exception barrier of the public API. It forwards every DB method to the
// engine inside a try block, so that an exception from anywhere below (std::bad_alloc from a
// container, one escaping a library) becomes a Status instead of crossing into the caller,
// whom DB promises Status codes only: allocation failure (std::bad_alloc, std::length_error)
// is ResourceExhausted, anything else Internal. DB::Open returns the engine wrapped in one.
//
// Every method of DB must be forwarded here; one that is not would answer with DB's default.
//
// Thread-safety: that of the wrapped DB. Owns it.

#ifndef SIEVE_ENGINE_NO_THROW_DB_H_
#define SIEVE_ENGINE_NO_THROW_DB_H_

#include <memory>
#include <string>
#include <vector>

#include "sieve/db.h"

namespace sieve {

class NoThrowDB final : public DB {
 public:
  explicit NoThrowDB(std::unique_ptr<DB> db) : db_(std::move(db)) {}

  Status CreateCollection(const CollectionSpec& spec) override;
  Status ListCollections(std::vector<std::string>* names) override;
  Status GetStats(const std::string& collection, CollectionStats* stats) override;
  Status Ingest(const std::string& collection, const RowBatch& rows, const IngestOptions& options,
                IngestResult* result) override;
  Status DeleteByIds(const std::string& collection, const int64_t* ids, size_t n,
                     uint64_t* deleted) override;
  Status DeleteByFilter(const std::string& collection, const std::string& filter,
                        uint64_t* deleted) override;
  Status Upsert(const std::string& collection, const RowBatch& rows, const IngestOptions& options,
                IngestResult* result) override;
  Status Update(const std::string& collection, const UpdateRequest& request,
                uint64_t* updated) override;
  using DB::Count;
  using DB::Get;
  Status Get(const ReadOptions& options, const std::string& collection, const int64_t* ids,
             size_t n, const Include& include, GetResult* result) override;
  Status Count(const ReadOptions& options, const std::string& collection,
               const std::string& filter, uint64_t* count) override;
  Status GetSnapshot(const Snapshot** snapshot) override;
  Status ReleaseSnapshot(const Snapshot* snapshot) override;
  Status Scan(const std::string& collection, const ScanRequest& request,
              ScanResult* result) override;
  Status DropCollection(const std::string& name) override;
  using DB::Compact;
  Status Compact(const std::string& collection, const CompactOptions& options,
                 CompactResult* result) override;
  Status AlterCollection(const std::string& name, const AlterRequest& request,
                         AlterResult* result) override;
  Status RenameCollection(const std::string& name, const std::string& new_name) override;
  Status PutAlias(const std::string& alias, const std::string& collection) override;
  Status DropAlias(const std::string& alias) override;
  Status ListAliases(std::vector<AliasInfo>* aliases) override;
  Status Backup(const BackupOptions& options, BackupResult* result) override;
  Status Search(const std::string& collection, const SearchRequest& request,
                const SearchOptions& options, SearchResult* result) override;
  Status Check(std::vector<std::string>* report) override;
  Status GetPlannerThresholds(Device device, PlannerThresholds* thresholds,
                              std::string* device_name) override;
  Status PutPlannerThresholds(const std::string& device_name,
                              const PlannerThresholds& thresholds) override;
  Status Calibrate(const CalibrateOptions& options, CalibrateReport* report) override;
  // The handle is the engine's (CollectionHandle), which is its own exception barrier.
  Status GetCollection(const std::string& name, std::shared_ptr<Collection>* handle) override;

  DB* wrapped() const { return db_.get(); }

 private:
  std::unique_ptr<DB> db_;
};

// Runs fn() (returning Status) and turns an exception it throws into a Status whose message
// starts with `what`. Never throws.
template <typename Fn>
Status CatchExceptions(const char* what, Fn&& fn) noexcept;

}  // namespace sieve

#include "engine/no_throw_db_inl.h"

#endif  // SIEVE_ENGINE_NO_THROW_DB_H_
