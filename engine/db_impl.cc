// Copyright 2026 The Sieve Authors.

#include "engine/db_impl.h"
#include "text/text_analyzer.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "engine/collection_handle.h"
#include "engine/db_util.h"
#include "engine/no_throw_db.h"

namespace sieve {

Status DB::Open(const Options& options, const std::string& path, std::unique_ptr<DB>* db) {
  StoreOptions so;
  so.create_if_missing = options.create_if_missing;
  so.error_if_exists = options.error_if_exists;
  so.read_only = options.read_only;
  so.read_only_fixed_view = options.read_only_fixed_view;
  SIEVE_RETURN_IF_ERROR(ValidateDeviceOptions(options).WithContext("Options"));
  return CatchExceptions("open", [&] {
    std::unique_ptr<Store> store;
    SIEVE_RETURN_IF_ERROR(Store::Open(so, path, &store));
    db->reset(new NoThrowDB(std::make_unique<DBImpl>(std::move(store), options)));
    return Status::OK();
  });
}

Status DB::Repair(const std::string& path, RepairReport* report) {
  return Store::Repair(StoreOptions(), path, report);
}

Status DB::BackupStore(const std::string& path, const BackupOptions& options,
                       BackupResult* result) {
  return Store::BackupClosed(StoreOptions(), path, options, result);
}

Status DB::RestoreBackup(const std::string& dest, uint32_t backup_id, const std::string& path,
                         RestoreResult* result) {
  return Store::RestoreBackup(StoreOptions(), dest, backup_id, path, result);
}

Status DB::ListBackups(const std::string& dest, BackupListing* listing) {
  return Store::ListBackups(dest, listing);
}

Status DB::VerifyBackup(const std::string& dest, uint32_t backup_id, BackupListing* listing) {
  return Store::VerifyBackup(dest, backup_id, listing);
}

Status DBImpl::Backup(const BackupOptions& options, BackupResult* result) {
  return store_->Backup(options, result);
}

DBImpl::DBImpl(std::unique_ptr<Store> store, const Options& options,
               std::unique_ptr<Executors> executors)
    : store_(std::move(store)),
      read_only_(options.read_only),
      first_use_(options.first_use_calibration),
      budget_(options.memory_budget_bytes != 0 ? options.memory_budget_bytes
                                               : DefaultMemoryBudget()),
      filter_cache_(options.filter_cache_bytes),
      executors_(executors != nullptr ? std::move(executors)
                                      : std::make_unique<Executors>(options)) {}

DBImpl::~DBImpl() = default;

Status DBImpl::CreateCollection(const CollectionSpec& given) {
  // The naming rule is checked here, at creation only: the store accepts (and keeps loading)
  // names that older releases allowed.
  SIEVE_RETURN_IF_ERROR(ValidateCollectionName(given.name));
  CollectionSpec spec = given;
  for (AttributeSpec& a : spec.attributes) {
    SIEVE_RETURN_IF_ERROR(
        ValidateAttributeName(a.name).WithContext("collection '" + spec.name + "'"));
    // The analyzer is stored by name: the default is written down, not implied.
    if (a.type == AttrType::kText && a.analyzer.empty()) a.analyzer = kDefaultTextAnalyzer;
  }
  std::lock_guard<std::mutex> l(mu_);
  CollectionMeta meta;
  SIEVE_RETURN_IF_ERROR(store_->CreateCollection(spec, &meta));
  auto c = std::make_shared<CollectionState>();
  c->meta = meta;
  collections_[spec.name] = c;
  return Status::OK();
}

Status DBImpl::ListCollections(std::vector<std::string>* names) {
  std::vector<CollectionMeta> metas;
  SIEVE_RETURN_IF_ERROR(store_->ListCollections(&metas));
  names->clear();
  for (auto& m : metas) names->push_back(m.spec.name);
  std::sort(names->begin(), names->end());
  return Status::OK();
}

Status DBImpl::FindCollection(const std::string& name, std::shared_ptr<CollectionState>* out,
                              bool follow_alias, const char* op) {
  std::lock_guard<std::mutex> l(mu_);
  // A collection and an alias never share a name, so the order of these lookups only saves
  // the store's lookup of a name that is an alias.
  SIEVE_RETURN_IF_ERROR(LoadAliasesLocked());
  auto alias = aliases_.find(name);
  if (alias == aliases_.end()) return FindCollectionLocked(name, out);
  if (!follow_alias) {
    return Status::InvalidArgument(std::string(op != nullptr ? op : "this call") + ": '" + name +
                                   "' is an alias (of collection '" + alias->second +
                                   "'); give the collection's own name");
  }
  Status s = FindCollectionLocked(alias->second, out);
  if (s.IsNotFound()) {
    return Status::NotFound("alias '" + name + "' names collection '" + alias->second +
                            "', which does not exist");
  }
  return s;
}

Status DBImpl::FindCollectionLocked(const std::string& name,
                                    std::shared_ptr<CollectionState>* out) {
  auto it = collections_.find(name);
  if (it != collections_.end()) {
    *out = it->second;
    return Status::OK();
  }
  auto c = std::make_shared<CollectionState>();
  Status s = store_->GetCollection(name, &c->meta);
  if (s.IsNotFound()) return Status::NotFound("no collection named '" + name + "'");
  SIEVE_RETURN_IF_ERROR(s);
  collections_[name] = c;
  *out = c;
  return Status::OK();
}

Status DBImpl::LoadAliasesLocked() {
  if (aliases_loaded_) return Status::OK();
  std::vector<std::pair<std::string, std::string>> stored;
  SIEVE_RETURN_IF_ERROR(store_->ListAliases(&stored));
  aliases_ = std::map<std::string, std::string>(stored.begin(), stored.end());
  aliases_loaded_ = true;
  return Status::OK();
}

Status DBImpl::LoadLocked(CollectionState* c, bool vectors) {
  // A drop removes the rows from the store: a load that came second must not read them.
  SIEVE_RETURN_IF_ERROR(CheckNotDropped(*c));
  if (c->loaded && (c->vectors_loaded || !vectors)) return Status::OK();
  // (An image without vectors is read again, whole, when vectors are needed.)
  std::vector<std::shared_ptr<ShardIndex>> shards;
  for (uint32_t s = 0; s < c->meta.spec.shards; ++s) {
    auto shard = std::make_shared<ShardIndex>(c->meta.spec, s);
    SIEVE_RETURN_IF_ERROR(shard->Load(store_.get(), c->meta, vectors)
                              .WithContext("loading collection '" + c->meta.spec.name + "'"));
    shards.push_back(std::move(shard));
  }
  c->shards = std::move(shards);
  c->loaded = true;
  c->vectors_loaded = vectors;
  return Status::OK();
}

Status DBImpl::EnsureLoaded(CollectionState* c, double* load_ms, bool vectors) {
  *load_ms = 0;
  {
    std::shared_lock<std::shared_mutex> l(c->mu);
    if (c->loaded && (c->vectors_loaded || !vectors)) return Status::OK();
  }
  auto t0 = Clock::now();
  std::unique_lock<std::shared_mutex> l(c->mu);
  Status s = LoadLocked(c, vectors);
  *load_ms = MsSince(t0);
  return s;
}

Status DBImpl::GetCollection(const std::string& name, std::shared_ptr<Collection>* handle) {
  handle->reset();
  std::shared_ptr<CollectionState> c;
  SIEVE_RETURN_IF_ERROR(FindCollection(name, &c));
  std::lock_guard<std::mutex> l(mu_);
  *handle = c->handle.lock();
  if (*handle == nullptr) {
    *handle = std::make_shared<CollectionHandle>(this, c);
    c->handle = *handle;
  }
  return Status::OK();
}

Status DBImpl::GetStats(const std::string& collection, CollectionStats* stats) {
  std::shared_ptr<CollectionState> c;
  SIEVE_RETURN_IF_ERROR(FindCollection(collection, &c));
  return GetStatsIn(c, stats);
}

Status DBImpl::GetStatsIn(const std::shared_ptr<CollectionState>& c, CollectionStats* stats) {
  *stats = CollectionStats();
  // Under the lock a drop takes, so that the shard states read below are still there.
  std::shared_lock<std::shared_mutex> l(c->mu);
  SIEVE_RETURN_IF_ERROR(CheckNotDropped(*c));
  stats->spec = c->meta.spec;
  stats->next_auto_id = c->meta.next_auto_id;
  for (uint32_t s = 0; s < c->meta.spec.shards; ++s) {
    ShardState st;
    SIEVE_RETURN_IF_ERROR(store_->ReadShardState(c->meta, s, &st));
    stats->rows += st.live_rows;
    stats->total_rows += st.next_ordinal;
  }
  stats->deleted_rows = stats->total_rows - stats->rows;
  return Status::OK();
}


}  // namespace sieve
