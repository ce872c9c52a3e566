// Copyright 2026 The Sieve Authors.
//
// DBImpl's changes to a collection that keep its rows: a schema change (AlterCollection), a
// new name (RenameCollection), and aliases. Each commits in one step in the store, then swaps
// the collection's in-memory state in one step under its exclusive lock: readers see the old
// collection or the new, never a mix.

#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "engine/db_impl.h"
#include "engine/db_util.h"
#include "text/text_analyzer.h"

namespace sieve {

namespace {

// The index of attribute `name` in `spec`, or InvalidArgument listing the valid names.
Status FindAttribute(const CollectionSpec& spec, const std::string& name, size_t* index) {
  for (size_t a = 0; a < spec.attributes.size(); ++a) {
    if (spec.attributes[a].name == name) {
      *index = a;
      return Status::OK();
    }
  }
  std::string known;
  for (const AttributeSpec& a : spec.attributes) known += (known.empty() ? "" : ", ") + a.name;
  return Status::InvalidArgument("unknown attribute '" + name + "' (collection '" + spec.name +
                                 "' has " + (known.empty() ? "no attributes" : known) + ")");
}

// InvalidArgument unless `name` may name a new attribute of `spec`.
Status CheckNewName(const CollectionSpec& spec, const std::string& name) {
  SIEVE_RETURN_IF_ERROR(ValidateAttributeName(name));
  for (const AttributeSpec& a : spec.attributes) {
    if (a.name == name) {
      return Status::InvalidArgument("collection '" + spec.name + "' already has an attribute '" +
                                     name + "'");
    }
  }
  return Status::OK();
}

// The new schema and where each of its columns comes from; *drops says whether a column goes.
Status PlanAlter(const CollectionSpec& old, const AlterRequest& request, CollectionSpec* spec,
                 std::vector<Store::ColumnSource>* sources, bool* drops) {
  *spec = old;
  *drops = false;
  sources->clear();
  for (size_t a = 0; a < old.attributes.size(); ++a) {
    sources->push_back(Store::ColumnSource{static_cast<int64_t>(a), Value()});
  }
  switch (request.op) {
    case AlterRequest::Op::kAddAttribute: {
      SIEVE_RETURN_IF_ERROR(CheckNewName(old, request.name));
      if (static_cast<uint8_t>(request.type) > static_cast<uint8_t>(AttrType::kText)) {
        return Status::InvalidArgument("unknown attribute type " +
                                       std::to_string(static_cast<int>(request.type)));
      }
      Value fill = request.default_value;
      Status s = CheckValue(request.type, &fill);
      if (!s.ok()) {
        return Status::InvalidArgument("the default of attribute '" + request.name + "' (" +
                                       AttrTypeName(request.type) + "): " + s.message());
      }
      AttributeSpec added{request.name, request.type};
      if (request.type == AttrType::kText) {
        added.analyzer = request.analyzer.empty() ? kDefaultTextAnalyzer : request.analyzer;
        SIEVE_RETURN_IF_ERROR(TextAnalyzer::Validate(added.analyzer)
                                  .WithContext("attribute '" + request.name + "'"));
      } else if (!request.analyzer.empty()) {
        return Status::InvalidArgument("attribute '" + request.name + "' is " +
                                       AttrTypeName(request.type) +
                                       "; only text attributes have an analyzer");
      }
      spec->attributes.push_back(std::move(added));
      sources->push_back(Store::ColumnSource{-1, std::move(fill)});
      return Status::OK();
    }
    case AlterRequest::Op::kDropAttribute: {
      size_t a = 0;
      SIEVE_RETURN_IF_ERROR(FindAttribute(old, request.name, &a));
      spec->attributes.erase(spec->attributes.begin() + a);
      sources->erase(sources->begin() + a);
      *drops = true;
      return Status::OK();
    }
    case AlterRequest::Op::kRenameAttribute: {
      size_t a = 0;
      SIEVE_RETURN_IF_ERROR(FindAttribute(old, request.name, &a));
      if (request.new_name == request.name) return Status::OK();
      SIEVE_RETURN_IF_ERROR(CheckNewName(old, request.new_name));
      spec->attributes[a].name = request.new_name;
      return Status::OK();
    }
    case AlterRequest::Op::kSetBm25: {
      spec->bm25_k1 = request.bm25_k1;
      spec->bm25_b = request.bm25_b;
      return Status::OK();  // the store checks the ranges (ValidateSpec)
    }
  }
  return Status::InvalidArgument("unknown alter operation " +
                                 std::to_string(static_cast<int>(request.op)));
}

}  // namespace

Status DBImpl::AlterCollection(const std::string& name, const AlterRequest& request,
                               AlterResult* result) {
  *result = AlterResult();
  SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly("alter"));
  std::shared_ptr<CollectionState> c;
  SIEVE_RETURN_IF_ERROR(FindCollection(name, &c));
  return AlterIn(c, request, result);
}

Status DBImpl::AlterIn(const std::shared_ptr<CollectionState>& c, const AlterRequest& request,
                       AlterResult* result) {
  *result = AlterResult();
  SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly("alter"));
  // write_mu first: no write starts meanwhile, and the schema planned from is the one altered.
  std::lock_guard<std::mutex> write_lock(c->write_mu);
  CollectionSpec spec;
  std::vector<Store::ColumnSource> sources;
  bool drops = false;
  SIEVE_RETURN_IF_ERROR(CheckNotDropped(*c));
  SIEVE_RETURN_IF_ERROR(
      PlanAlter(c->meta.spec, request, &spec, &sources, &drops).WithContext("alter"));
  // Snapshots keep the schema and image from before (the new image is loaded afresh below).
  SIEVE_RETURN_IF_ERROR(PinForSnapshots(c));
  // Readers wait from here: the stored chunks change under the image's schema.
  std::unique_lock<std::shared_mutex> lock(c->mu);
  SIEVE_RETURN_IF_ERROR(CheckNotDropped(*c));
  CollectionMeta altered;
  Store::AlterStats stats;
  SIEVE_RETURN_IF_ERROR(store_->AlterColumns(c->meta, spec, sources, drops, &altered, &stats)
                            .WithContext("alter '" + c->meta.spec.name + "'"));
  // The committed schema and a fresh image of it, swapped in at once. The image is read again
  // from the store (ids and attributes, and the vectors when it held them): the columns are
  // the store's, and the vectors are the same bytes.
  const bool was_loaded = c->loaded;
  const bool had_vectors = c->vectors_loaded;
  c->meta = altered;
  ++c->schema_version;
  c->loaded = false;
  c->vectors_loaded = false;
  c->shards.clear();
  executors_->ClearCaches();  // device copies of the old images
  if (was_loaded) {
    Status s = LoadLocked(c.get(), had_vectors);
    // The change is durable either way; a failed reload leaves the image unloaded, to be read
    // again by the next call.
    if (!s.ok()) {
      c->loaded = false;
      c->vectors_loaded = false;
      c->shards.clear();
    }
  }
  result->spec = c->meta.spec;
  result->rows = stats.rows;
  result->chunks_rewritten = stats.chunks;
  return Status::OK();
}

Status DBImpl::RenameCollection(const std::string& name, const std::string& new_name) {
  SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly("rename"));
  SIEVE_RETURN_IF_ERROR(ValidateCollectionName(new_name).WithContext("rename"));
  std::shared_ptr<CollectionState> c;
  SIEVE_RETURN_IF_ERROR(FindCollection(name, &c, /*follow_alias=*/false, "rename"));
  return RenameIn(c, new_name);
}

Status DBImpl::RenameIn(const std::shared_ptr<CollectionState>& c, const std::string& new_name) {
  SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly("rename"));
  SIEVE_RETURN_IF_ERROR(ValidateCollectionName(new_name).WithContext("rename"));
  std::lock_guard<std::mutex> write_lock(c->write_mu);
  SIEVE_RETURN_IF_ERROR(PinForSnapshots(c));  // snapshots keep reading it by its old name
  std::unique_lock<std::shared_mutex> lock(c->mu);
  SIEVE_RETURN_IF_ERROR(CheckNotDropped(*c));
  const std::string old_name = c->meta.spec.name;
  if (new_name == old_name) return Status::OK();
  // mu_ after the collection's lock (as DropCollection): the name map and the store's names
  // change together.
  std::lock_guard<std::mutex> names(mu_);
  SIEVE_RETURN_IF_ERROR(LoadAliasesLocked());
  CollectionMeta renamed;
  SIEVE_RETURN_IF_ERROR(store_->RenameCollection(c->meta, new_name, &renamed)
                            .WithContext("rename '" + old_name + "'"));
  c->meta = renamed;
  ++c->schema_version;
  auto it = collections_.find(old_name);
  if (it != collections_.end() && it->second == c) collections_.erase(it);
  collections_[new_name] = c;
  for (auto& [alias, target] : aliases_) {
    if (target == old_name) target = new_name;
  }
  return Status::OK();
}

Status DBImpl::PutAlias(const std::string& alias, const std::string& collection) {
  SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly("alias"));
  SIEVE_RETURN_IF_ERROR(ValidateCollectionName(alias).WithContext("alias name"));
  std::lock_guard<std::mutex> l(mu_);
  SIEVE_RETURN_IF_ERROR(LoadAliasesLocked());
  // One durable write in the store, then the map every later call resolves through: a call
  // that resolved the alias before runs on the old collection, one after on the new.
  SIEVE_RETURN_IF_ERROR(store_->PutAlias(alias, collection));
  aliases_[alias] = collection;
  return Status::OK();
}

Status DBImpl::DropAlias(const std::string& alias) {
  SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly("alias"));
  std::lock_guard<std::mutex> l(mu_);
  SIEVE_RETURN_IF_ERROR(LoadAliasesLocked());
  SIEVE_RETURN_IF_ERROR(store_->DropAlias(alias));
  aliases_.erase(alias);
  return Status::OK();
}

Status DBImpl::ListAliases(std::vector<AliasInfo>* aliases) {
  aliases->clear();
  std::lock_guard<std::mutex> l(mu_);
  SIEVE_RETURN_IF_ERROR(LoadAliasesLocked());
  for (const auto& [alias, target] : aliases_) aliases->push_back(AliasInfo{alias, target});
  return Status::OK();
}

}  // namespace sieve
