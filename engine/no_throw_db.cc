// Copyright 2026 The Sieve Authors.

#include "engine/no_throw_db.h"

namespace sieve {

Status NoThrowDB::CreateCollection(const CollectionSpec& spec) {
  return CatchExceptions("create collection", [&] { return db_->CreateCollection(spec); });
}

Status NoThrowDB::ListCollections(std::vector<std::string>* names) {
  return CatchExceptions("list collections", [&] { return db_->ListCollections(names); });
}

Status NoThrowDB::GetStats(const std::string& collection, CollectionStats* stats) {
  return CatchExceptions("stats", [&] { return db_->GetStats(collection, stats); });
}

Status NoThrowDB::Ingest(const std::string& collection, const RowBatch& rows,
                         const IngestOptions& options, IngestResult* result) {
  return CatchExceptions("ingest", [&] { return db_->Ingest(collection, rows, options, result); });
}

Status NoThrowDB::DeleteByIds(const std::string& collection, const int64_t* ids, size_t n,
                              uint64_t* deleted) {
  return CatchExceptions("delete", [&] { return db_->DeleteByIds(collection, ids, n, deleted); });
}

Status NoThrowDB::DeleteByFilter(const std::string& collection, const std::string& filter,
                                 uint64_t* deleted) {
  return CatchExceptions("delete",
                         [&] { return db_->DeleteByFilter(collection, filter, deleted); });
}

Status NoThrowDB::Search(const std::string& collection, const SearchRequest& request,
                         const SearchOptions& options, SearchResult* result) {
  Status s =
      CatchExceptions("search", [&] { return db_->Search(collection, request, options, result); });
  // Whatever a failed search left behind is not an answer; explain keeps what was decided
  // (a budget refusal's figures).
  if (!s.ok()) result->results.clear();
  return s;
}

Status NoThrowDB::Upsert(const std::string& collection, const RowBatch& rows,
                         const IngestOptions& options, IngestResult* result) {
  return CatchExceptions("upsert", [&] { return db_->Upsert(collection, rows, options, result); });
}

Status NoThrowDB::Update(const std::string& collection, const UpdateRequest& request,
                         uint64_t* updated) {
  return CatchExceptions("update", [&] { return db_->Update(collection, request, updated); });
}

Status NoThrowDB::Get(const ReadOptions& options, const std::string& collection,
                      const int64_t* ids, size_t n, const Include& include, GetResult* result) {
  Status s = CatchExceptions(
      "get", [&] { return db_->Get(options, collection, ids, n, include, result); });
  if (!s.ok()) *result = GetResult();
  return s;
}

Status NoThrowDB::GetCollection(const std::string& name, std::shared_ptr<Collection>* handle) {
  Status s = CatchExceptions("collection", [&] { return db_->GetCollection(name, handle); });
  if (!s.ok()) handle->reset();
  return s;
}

Status NoThrowDB::Count(const ReadOptions& options, const std::string& collection,
                        const std::string& filter, uint64_t* count) {
  return CatchExceptions("count",
                         [&] { return db_->Count(options, collection, filter, count); });
}

Status NoThrowDB::GetSnapshot(const Snapshot** snapshot) {
  return CatchExceptions("snapshot", [&] { return db_->GetSnapshot(snapshot); });
}

Status NoThrowDB::ReleaseSnapshot(const Snapshot* snapshot) {
  return CatchExceptions("snapshot", [&] { return db_->ReleaseSnapshot(snapshot); });
}

Status NoThrowDB::Scan(const std::string& collection, const ScanRequest& request,
                       ScanResult* result) {
  Status s = CatchExceptions("scan", [&] { return db_->Scan(collection, request, result); });
  if (!s.ok()) *result = ScanResult();
  return s;
}

Status NoThrowDB::DropCollection(const std::string& name) {
  return CatchExceptions("drop", [&] { return db_->DropCollection(name); });
}

Status NoThrowDB::Backup(const BackupOptions& options, BackupResult* result) {
  return CatchExceptions("backup", [&] { return db_->Backup(options, result); });
}

Status NoThrowDB::AlterCollection(const std::string& name, const AlterRequest& request,
                                  AlterResult* result) {
  return CatchExceptions("alter", [&] { return db_->AlterCollection(name, request, result); });
}

Status NoThrowDB::RenameCollection(const std::string& name, const std::string& new_name) {
  return CatchExceptions("rename", [&] { return db_->RenameCollection(name, new_name); });
}

Status NoThrowDB::PutAlias(const std::string& alias, const std::string& collection) {
  return CatchExceptions("alias", [&] { return db_->PutAlias(alias, collection); });
}

Status NoThrowDB::DropAlias(const std::string& alias) {
  return CatchExceptions("alias", [&] { return db_->DropAlias(alias); });
}

Status NoThrowDB::ListAliases(std::vector<AliasInfo>* aliases) {
  return CatchExceptions("aliases", [&] { return db_->ListAliases(aliases); });
}

Status NoThrowDB::Compact(const std::string& collection, const CompactOptions& options,
                          CompactResult* result) {
  return CatchExceptions("compact", [&] { return db_->Compact(collection, options, result); });
}

Status NoThrowDB::Check(std::vector<std::string>* report) {
  return CatchExceptions("check", [&] { return db_->Check(report); });
}

Status NoThrowDB::GetPlannerThresholds(Device device, PlannerThresholds* thresholds,
                                       std::string* device_name) {
  return CatchExceptions("planner thresholds", [&] {
    return db_->GetPlannerThresholds(device, thresholds, device_name);
  });
}

Status NoThrowDB::PutPlannerThresholds(const std::string& device_name,
                                       const PlannerThresholds& thresholds) {
  return CatchExceptions("planner thresholds",
                         [&] { return db_->PutPlannerThresholds(device_name, thresholds); });
}

Status NoThrowDB::Calibrate(const CalibrateOptions& options, CalibrateReport* report) {
  return CatchExceptions("calibrate", [&] { return db_->Calibrate(options, report); });
}

}  // namespace sieve
