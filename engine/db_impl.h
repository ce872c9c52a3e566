// Copyright 2026 The Sieve Authors.
//
// DBImpl: the engine behind sieve::DB. It owns the Store, loads collections into ShardIndexes
// on first use, compiles filters, asks the planner for a path per shard, runs the chosen
// executor (CPU or GPU), refines the candidates in float64 and merges shards exactly.

#ifndef SIEVE_ENGINE_DB_IMPL_H_
#define SIEVE_ENGINE_DB_IMPL_H_

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "index/shard_index.h"
#include "engine/device_set.h"
#include "query/executor.h"
#include "engine/executors.h"
#include "engine/filter_cache.h"
#include "engine/memory_budget.h"
#include "query/planner.h"
#include "sieve/db.h"
#include "storage/store.h"

namespace sieve {

// One collection's in-memory state. Writes hold `write_mu` for their whole run, and `mu`
// exclusively while the image changes; reads hold `mu` shared (compaction too, while it
// builds the new shards). `shards` is empty until the first operation that needs the rows
// loads them.
struct CollectionState {
  CollectionMeta meta;
  std::mutex write_mu;
  std::shared_mutex mu;
  bool loaded = false;
  bool vectors_loaded = false;  // the image holds the vectors too (searches need them)
  // Set by DropCollection under `mu` held exclusively; callers that still hold the state get
  // NotFound. Atomic so that Collection::dropped() may read it without the lock.
  std::atomic<bool> dropped{false};
  std::vector<std::unique_ptr<ShardIndex>> shards;
  // The handle DB::GetCollection gave out, while one is held, so that every caller holding
  // a handle to this collection holds the same one. Guarded by DBImpl::mu_.
  std::weak_ptr<Collection> handle;
};

class DBImpl : public DB {
 public:
  // Options::memory_budget_bytes (0: DefaultMemoryBudget()), Options::filter_cache_bytes,
  // Options::gpu, devices, cpu_executors and device_memory_bytes are read here. `executors`,
  // when given, replaces the executors those options describe (tests: CPU executors standing
  // in for GPUs).
  // REQUIRES: ValidateDeviceOptions(options) is OK.
  DBImpl(std::unique_ptr<Store> store, const Options& options,
         std::unique_ptr<Executors> executors = nullptr);
  ~DBImpl() override;

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
  Status Get(const std::string& collection, const int64_t* ids, size_t n, const Include& include,
             GetResult* result) override;
  Status Count(const std::string& collection, const std::string& filter,
               uint64_t* count) override;
  Status Scan(const std::string& collection, const ScanRequest& request,
              ScanResult* result) override;
  Status DropCollection(const std::string& name) override;
  Status Compact(const std::string& collection, CompactResult* result) override;
  Status Backup(const BackupOptions& options, BackupResult* result) override;
  Status Search(const std::string& collection, const SearchRequest& request,
                const SearchOptions& options, SearchResult* result) override;
  Status Check(std::vector<std::string>* report) override;
  Status GetPlannerThresholds(Device device, PlannerThresholds* thresholds,
                              std::string* device_name) override;
  Status PutPlannerThresholds(const std::string& device_name,
                              const PlannerThresholds& thresholds) override;
  Status Calibrate(const CalibrateOptions& options, CalibrateReport* report) override;
  Status GetCollection(const std::string& name, std::shared_ptr<Collection>* handle) override;

  // The operations of one collection, on its state: the calls above by name find the state and
  // run these, and so does a CollectionHandle (engine/collection_handle.h) on the state it
  // holds. Each returns NotFound once the collection is dropped.
  Status GetStatsIn(const std::shared_ptr<CollectionState>& c, CollectionStats* stats);
  Status WriteRowsIn(const std::shared_ptr<CollectionState>& c, const RowBatch& rows,
                     const IngestOptions& options, bool upsert, IngestResult* result);
  Status DeleteByIdsIn(const std::shared_ptr<CollectionState>& c, const int64_t* ids, size_t n,
                       uint64_t* deleted);
  Status DeleteByFilterIn(const std::shared_ptr<CollectionState>& c, const std::string& filter,
                          uint64_t* deleted);
  Status UpdateIn(const std::shared_ptr<CollectionState>& c, const UpdateRequest& request,
                  uint64_t* updated);
  Status GetIn(const std::shared_ptr<CollectionState>& c, const int64_t* ids, size_t n,
               const Include& include, GetResult* result);
  Status CountIn(const std::shared_ptr<CollectionState>& c, const std::string& filter,
                 uint64_t* count);
  Status ScanIn(const std::shared_ptr<CollectionState>& c, const ScanRequest& request,
                ScanResult* result);
  Status SearchIn(const std::shared_ptr<CollectionState>& c, const SearchRequest& request,
                  const SearchOptions& options, SearchResult* result);
  // Compact (every collection, or one by name) and a handle's: over these collections.
  Status CompactIn(const std::vector<std::shared_ptr<CollectionState>>& collections,
                   CompactResult* result);

 private:
  // The state of the collection called `name`, from collections_ or read from the store.
  // NotFound when there is none.
  Status FindCollection(const std::string& name, std::shared_ptr<CollectionState>* out);
  // Loads every shard when not yet loaded. REQUIRES: c->mu held exclusively.
  Status LoadLocked(CollectionState* c, bool vectors = true);
  // Loads under a shared lock: upgrades by taking the exclusive lock when needed.
  Status EnsureLoaded(CollectionState* c, double* load_ms, bool vectors = true);
  Status CheckNotDropped(const CollectionState& c) const;
  // NotSupported when the database was opened read-only, before a write looks at its input.
  Status RefuseIfReadOnly(const char* op) const;
  // Checks a batch's dimension, vectors and attribute values; `op` names the call in messages.
  Status ValidateBatch(const CollectionState& c, const RowBatch& rows, const char* op) const;
  // Per shard, the ordinals of the live rows with these ids. REQUIRES: c loaded, mu held.
  void SelectByIds(const CollectionState& c, const int64_t* ids, size_t n,
                   std::vector<RowSet>* sets) const;
  Status CompactCollection(CollectionState* c, CompactResult* result, bool* any);

  // Compiles `filter` ("" = every live row) on every shard. REQUIRES: c loaded, mu held.
  Status SelectByFilter(const CollectionState& c, const std::string& filter,
                        std::vector<RowSet>* sets) const;
  Status CommitDeletes(CollectionState* c, std::vector<RowSet>* per_shard_new, uint64_t* deleted);
  // The first executor `device` resolves to, and its thresholds (GetPlannerThresholds).
  Status ExecutorFor(Device device, Executor** executor, PlannerRule* thresholds);
  // Every device `device` resolves to, and each one's thresholds.
  Status DevicesFor(Device device, DeviceSet** set, std::vector<PlannerRule>* thresholds);
  // The search step "devices": DevicesFor, and the executor and thresholds into the explain.
  Status ResolveDevices(Device device, DeviceSet** set,
                        std::vector<PlannerRule>* thresholds, Explain* explain);
  // The thresholds of `executor`: its stored calibration, else the defaults of its kind; with
  // `first_use` (a search), a GPU that WantsFirstUseCalibration is calibrated first.
  Status ThresholdsOf(Executor* executor, bool gpu, bool first_use,
                      PlannerRule* thresholds);
  // The calibration stored for executor `name` (*stored), else its defaults. REQUIRES: mu_ held.
  Status StoredThresholdsOf(const std::string& name, bool gpu, PlannerRule* thresholds,
                            bool* stored);
  // Stores `rule` as the calibration of the device `name` and plans with it from now on.
  Status StoreRule(const std::string& name, const PlannerRule& rule);
  // Whether a GPU executor `name` without a stored calibration gets a first-use calibration.
  bool WantsFirstUseCalibration(const std::string& name, bool gpu) const;
  // Calibrates `executor` for first use (Options::first_use_calibration), announces it and
  // stores the thresholds; *thresholds holds its defaults on entry and what it plans with on
  // return (the defaults again when the sweep failed). REQUIRES: first_use_mu_ held.
  void CalibrateFirstUse(Executor* executor, PlannerRule* thresholds);

  std::unique_ptr<Store> store_;
  const bool read_only_;
  const FirstUseCalibration first_use_;
  std::mutex first_use_mu_;  // one first-use calibration at a time
  MemoryBudget budget_;
  FilterCache filter_cache_;
  std::mutex mu_;  // guards collections_ and the executors
  std::map<std::string, std::shared_ptr<CollectionState>> collections_;
  std::unique_ptr<Executors> executors_;
  // Executor name → the thresholds its searches use (stored calibration, else defaults).
  std::map<std::string, PlannerRule> thresholds_;
};

}  // namespace sieve

#endif  // SIEVE_ENGINE_DB_IMPL_H_
