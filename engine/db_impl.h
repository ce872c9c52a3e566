// Copyright 2026 The Sieve Authors.
//
// DBImpl: the engine behind sieve::DB. It owns the Store, loads collections into ShardIndexes
// on first use, compiles filters, asks the planner for a path per shard, runs the chosen
// executor (CPU or GPU), refines the candidates in float64 and merges shards exactly.

#ifndef SIEVE_ENGINE_DB_IMPL_H_
#define SIEVE_ENGINE_DB_IMPL_H_

#include <atomic>
#include <functional>
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
// loads them. A snapshot may hold a shard image too (PinnedCollection): a write changes a
// shard only through DBImpl::MutableShard, which copies an image a snapshot holds first.
struct CollectionState {
  CollectionMeta meta;
  std::mutex write_mu;
  std::shared_mutex mu;
  bool loaded = false;
  bool vectors_loaded = false;  // the image holds the vectors too (searches need them)
  // Set by DropCollection under `mu` held exclusively; callers that still hold the state get
  // NotFound. Atomic so that Collection::dropped() may read it without the lock.
  std::atomic<bool> dropped{false};
  // Bumped by every schema change (AlterCollection, RenameCollection) under `mu` held
  // exclusively: a read that parsed its request against a copy of the schema taken before it
  // locked `mu` parses it again when this moved meanwhile. Guarded by `mu`.
  uint64_t schema_version = 0;
  std::vector<std::shared_ptr<ShardIndex>> shards;
  // The handle DB::GetCollection gave out, while one is held, so that every caller holding
  // a handle to this collection holds the same one. Guarded by DBImpl::mu_.
  std::weak_ptr<Collection> handle;
};

// A collection as a snapshot sees it: its state (whose `mu` its reads hold shared, since the
// vectors may be shared with the images writes change), its metadata and its shard images at
// the snapshot. Immutable once made.
struct PinnedCollection {
  std::shared_ptr<CollectionState> state;
  CollectionMeta meta;
  std::vector<std::shared_ptr<ShardIndex>> shards;
};

// DB::GetSnapshot's snapshot: the collections that existed (name → id) and the aliases when it
// was taken, and
// the images pinned for it so far: a collection is pinned by its first read through the
// snapshot or by the first write to it after the snapshot, whichever comes first (until then
// its live image is still the snapshot's). `pinned` is guarded by DBImpl::snapshots_mu_.
class SnapshotImpl final : public Snapshot {
 public:
  SnapshotImpl(uint64_t id, std::map<std::string, uint32_t> ids,
               std::map<std::string, std::string> aliases)
      : id_(id), ids_(std::move(ids)), aliases_(std::move(aliases)) {}
  ~SnapshotImpl() override = default;
  uint64_t id() const override { return id_; }
  const std::map<std::string, uint32_t>& ids() const { return ids_; }
  // Alias → collection name, as they were when the snapshot was taken.
  const std::map<std::string, std::string>& aliases() const { return aliases_; }
  // Whether the collection with this internal id existed when the snapshot was taken.
  bool Holds(uint32_t collection_id) const;

  std::map<uint32_t, std::shared_ptr<const PinnedCollection>> pinned;

 private:
  const uint64_t id_;
  const std::map<std::string, uint32_t> ids_;
  const std::map<std::string, std::string> aliases_;
};

// What one read sees of a collection: the live image (loaded, `lock` held shared, the
// collection not dropped) or a snapshot's pinned one (`lock` held shared on its state).
struct ReadView {
  std::shared_lock<std::shared_mutex> lock;
  std::shared_ptr<const PinnedCollection> pinned;  // null for the live image
  // The schema the read checks its request against (a copy: an alter may change the live one),
  // and for the live image the CollectionState::schema_version it was copied at.
  CollectionSpec spec;
  uint64_t schema_version = 0;
  // Set by BeginRead when an alter changed the live schema since ResolveRead: `spec` is then
  // the image's, and the read checks its request again.
  bool reparse = false;
  const CollectionMeta* meta = nullptr;  // set by BeginRead
  const std::vector<std::shared_ptr<ShardIndex>>* shards = nullptr;
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
  Status GetIn(const std::shared_ptr<CollectionState>& c, const ReadOptions& options,
               const int64_t* ids, size_t n, const Include& include, GetResult* result);
  Status CountIn(const std::shared_ptr<CollectionState>& c, const ReadOptions& options,
                 const std::string& filter, uint64_t* count);
  Status ScanIn(const std::shared_ptr<CollectionState>& c, const ScanRequest& request,
                ScanResult* result);
  Status SearchIn(const std::shared_ptr<CollectionState>& c, const SearchRequest& request,
                  const SearchOptions& options, SearchResult* result);
  // Compact (every collection, or one by name) and a handle's: over these collections.
  Status CompactIn(const std::vector<std::shared_ptr<CollectionState>>& collections,
                   const CompactOptions& options, CompactResult* result);
  // engine/db_alter.cc
  Status AlterIn(const std::shared_ptr<CollectionState>& c, const AlterRequest& request,
                 AlterResult* result);
  Status RenameIn(const std::shared_ptr<CollectionState>& c, const std::string& new_name);

 private:
  // The state of the collection called `name`, from collections_ or read from the store; with
  // `follow_alias`, of the collection the alias `name` names when there is no collection of
  // that name. NotFound when there is none; without `follow_alias`, InvalidArgument naming the
  // collection when `name` is an alias (`op` names the call).
  Status FindCollection(const std::string& name, std::shared_ptr<CollectionState>* out,
                        bool follow_alias = true, const char* op = nullptr);
  // The state of the collection called `name`. REQUIRES: mu_ held.
  Status FindCollectionLocked(const std::string& name, std::shared_ptr<CollectionState>* out);
  // Reads the aliases from the store once. REQUIRES: mu_ held.
  Status LoadAliasesLocked();
  // FindCollection as `snapshot` (null: now) sees the name: the state of the collection that
  // had that name when the snapshot was taken. NotFound when there was none, or it was dropped
  // before the snapshot could pin it.
  Status FindCollectionAt(const Snapshot* snapshot, const std::string& name,
                          std::shared_ptr<CollectionState>* out);

  // Snapshots (engine/snapshots.cc). The live snapshot `snapshot` points to; InvalidArgument
  // when this DB did not give it or it was released. REQUIRES: snapshots_mu_ held.
  Status LiveSnapshot(const Snapshot* snapshot, SnapshotImpl** out) const;
  // A read of `c` in two steps. ResolveRead sets view->spec (the schema the read checks its
  // request against): with a snapshot, that of the snapshot's image of c (view->pinned, pinned
  // now when neither a read nor a write has pinned it yet); else c's own. BeginRead then takes
  // the lock, and for the live image loads it (with the vectors when `vectors`), checks that c
  // is not dropped and sets view->reparse when an alter came between; view->meta and
  // view->shards are then the image to read.
  Status ResolveRead(const std::shared_ptr<CollectionState>& c, const Snapshot* snapshot,
                     ReadView* view);
  Status BeginRead(const std::shared_ptr<CollectionState>& c, bool vectors, double* load_ms,
                   ReadView* view);
  // The image `snapshot` has of `c`, pinning the live one (loaded with its vectors) when it has
  // none yet. NotFound when `c` did not exist when the snapshot was taken.
  Status PinnedFor(const Snapshot* snapshot, const std::shared_ptr<CollectionState>& c,
                   std::shared_ptr<const PinnedCollection>* out);
  // Called by every write to `c` before it changes anything: pins c's image into each live
  // snapshot that holds c but has not pinned it, so that they keep the version before the
  // write. REQUIRES: c->write_mu held, c->mu not held.
  Status PinForSnapshots(const std::shared_ptr<CollectionState>& c);
  // Pins c's current image into `snapshots`. REQUIRES: c->write_mu held, c->mu not held.
  Status PinInto(const std::shared_ptr<CollectionState>& c,
                 const std::vector<uint64_t>& snapshots);
  // Shard `s` of c's image, for a write to change: copied first when a snapshot holds it.
  // REQUIRES: c->mu held exclusively, c loaded.
  ShardIndex* MutableShard(CollectionState* c, uint32_t s);
  // Loads every shard when not yet loaded. REQUIRES: c->mu held exclusively.
  Status LoadLocked(CollectionState* c, bool vectors = true);
  // Loads under a shared lock: upgrades by taking the exclusive lock when needed.
  Status EnsureLoaded(CollectionState* c, double* load_ms, bool vectors = true);
  Status CheckNotDropped(const CollectionState& c) const;
  // A copy of the collection's schema and its schema_version, read under its lock (reads parse
  // their requests against it before they lock `mu` for the image).
  CollectionSpec SpecOf(CollectionState* c, uint64_t* version) const;
  // NotSupported when the database was opened read-only, before a write looks at its input.
  Status RefuseIfReadOnly(const char* op) const;
  // Checks a batch's dimension, vectors and attribute values; `op` names the call in messages.
  Status ValidateBatch(const CollectionSpec& spec, const RowBatch& rows, const char* op) const;
  // Per shard, the ordinals of the live rows with these ids. REQUIRES: c loaded, mu held.
  void SelectByIds(const CollectionState& c, const int64_t* ids, size_t n,
                   std::vector<RowSet>* sets) const;
  // Rewrites the shards of `c` worth rewriting (see Compact). `begin` runs once, before the
  // first rewrite of the whole compaction (*any says whether it ran). Adds the bytes the
  // deleted rows of skipped shards hold to *skipped_bytes.
  Status CompactCollection(const std::shared_ptr<CollectionState>& c,
                           const CompactOptions& options, const std::function<Status()>& begin,
                           CompactResult* result, bool* any, uint64_t* skipped_bytes);

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
  // Alias → collection name, as stored (read on first use, then kept by this DB's own alias
  // and rename calls). Guarded by mu_.
  bool aliases_loaded_ = false;
  std::map<std::string, std::string> aliases_;
  std::unique_ptr<Executors> executors_;
  // Executor name → the thresholds its searches use (stored calibration, else defaults).
  std::map<std::string, PlannerRule> thresholds_;
  // The live snapshots by id, and the id the next one gets. Lock order: a collection's
  // write_mu, then its mu, then snapshots_mu_.
  mutable std::mutex snapshots_mu_;
  std::map<uint64_t, std::unique_ptr<SnapshotImpl>> snapshots_;
  uint64_t next_snapshot_id_ = 1;
};

}  // namespace sieve

#endif  // SIEVE_ENGINE_DB_IMPL_H_
