// Copyright 2026 The Sieve Authors.
//
// DBImpl's snapshots (DB::GetSnapshot). A snapshot copies nothing when it is taken: it records
// which collections exist (name → id) and pins each one's in-memory image when it is first
// needed, which is either its first read through the snapshot or the first write to it since
// the snapshot, whichever comes first; until then the live image is still the snapshot's. A
// write then changes a pinned shard only through a copy (DBImpl::MutableShard,
// ShardIndex::CopyForWrite), so the pinned images stay as they were.

#include <utility>

#include "engine/db_impl.h"
#include "engine/db_util.h"

namespace sieve {

bool SnapshotImpl::Holds(uint32_t collection_id) const {
  for (const auto& [name, id] : ids_) {
    if (id == collection_id) return true;
  }
  return false;
}

Status DBImpl::GetSnapshot(const Snapshot** snapshot) {
  if (snapshot == nullptr) return Status::InvalidArgument("snapshot: the out pointer is null");
  *snapshot = nullptr;
  std::map<std::string, std::string> aliases;
  {
    std::lock_guard<std::mutex> l(mu_);
    SIEVE_RETURN_IF_ERROR(LoadAliasesLocked().WithContext("snapshot"));
    aliases = aliases_;
  }
  std::lock_guard<std::mutex> l(snapshots_mu_);
  // Under snapshots_mu_, so that a write that pins before it changes anything either sees this
  // snapshot or changed the store before it was listed.
  std::vector<CollectionMeta> metas;
  SIEVE_RETURN_IF_ERROR(store_->ListCollections(&metas).WithContext("snapshot"));
  std::map<std::string, uint32_t> ids;
  for (const CollectionMeta& m : metas) ids.emplace(m.spec.name, m.id);
  const uint64_t id = next_snapshot_id_++;
  auto s = std::make_unique<SnapshotImpl>(id, std::move(ids), std::move(aliases));
  *snapshot = s.get();
  snapshots_.emplace(id, std::move(s));
  return Status::OK();
}

Status DBImpl::ReleaseSnapshot(const Snapshot* snapshot) {
  std::unique_ptr<SnapshotImpl> released;  // destroyed (images and all) after the lock
  std::lock_guard<std::mutex> l(snapshots_mu_);
  SnapshotImpl* s = nullptr;
  SIEVE_RETURN_IF_ERROR(LiveSnapshot(snapshot, &s));
  auto it = snapshots_.find(s->id());
  released = std::move(it->second);
  snapshots_.erase(it);
  return Status::OK();
}

Status DBImpl::LiveSnapshot(const Snapshot* snapshot, SnapshotImpl** out) const {
  // Found by address among the live ones, so that a released or foreign pointer is never
  // dereferenced.
  for (const auto& [id, s] : snapshots_) {
    if (s.get() == snapshot) {
      *out = s.get();
      return Status::OK();
    }
  }
  return Status::InvalidArgument(
      "snapshot: not a live snapshot of this database (released already, or given by another)");
}

Status DBImpl::FindCollectionAt(const Snapshot* snapshot, const std::string& name,
                                std::shared_ptr<CollectionState>* out) {
  if (snapshot == nullptr) return FindCollection(name, out);
  uint32_t id = 0;
  std::string target;  // the collection's name in the snapshot (an alias's collection)
  {
    std::lock_guard<std::mutex> l(snapshots_mu_);
    SnapshotImpl* s = nullptr;
    SIEVE_RETURN_IF_ERROR(LiveSnapshot(snapshot, &s));
    auto named = s->ids().find(name);
    if (named == s->ids().end()) {
      // An alias reads the collection it named when the snapshot was taken.
      auto alias = s->aliases().find(name);
      if (alias != s->aliases().end()) named = s->ids().find(alias->second);
    }
    if (named == s->ids().end()) {
      return Status::NotFound("no collection named '" + name + "' in snapshot " +
                              std::to_string(s->id()));
    }
    target = named->first;
    id = named->second;
    auto pinned = s->pinned.find(id);
    if (pinned != s->pinned.end()) {
      *out = pinned->second->state;
      return Status::OK();
    }
  }
  // Not pinned yet, so not written since the snapshot: the collection of that name now is
  // the one the snapshot saw (a drop or rename would have pinned it first).
  SIEVE_RETURN_IF_ERROR(FindCollection(target, out, /*follow_alias=*/false));
  if ((*out)->meta.id != id) {
    return Status::NotFound("collection '" + name + "' was dropped");
  }
  return Status::OK();
}

Status DBImpl::PinnedFor(const Snapshot* snapshot, const std::shared_ptr<CollectionState>& c,
                         std::shared_ptr<const PinnedCollection>* out) {
  uint64_t sid = 0;
  {
    std::lock_guard<std::mutex> l(snapshots_mu_);
    SnapshotImpl* s = nullptr;
    SIEVE_RETURN_IF_ERROR(LiveSnapshot(snapshot, &s));
    if (!s->Holds(c->meta.id)) {
      SIEVE_RETURN_IF_ERROR(CheckNotDropped(*c));  // dropped before the snapshot
      return Status::NotFound("collection '" + c->meta.spec.name + "' did not exist when " +
                              "snapshot " + std::to_string(s->id()) + " was taken");
    }
    auto it = s->pinned.find(c->meta.id);
    if (it != s->pinned.end()) {
      *out = it->second;
      return Status::OK();
    }
    sid = s->id();
  }
  // Pinned under the write lock, so that no write is half applied to the image taken.
  {
    std::lock_guard<std::mutex> write_lock(c->write_mu);
    SIEVE_RETURN_IF_ERROR(PinInto(c, {sid}));
  }
  std::lock_guard<std::mutex> l(snapshots_mu_);
  SnapshotImpl* s = nullptr;
  SIEVE_RETURN_IF_ERROR(LiveSnapshot(snapshot, &s));
  auto it = s->pinned.find(c->meta.id);
  if (it == s->pinned.end()) {
    return Status::Internal("snapshot " + std::to_string(sid) + ": collection '" +
                            c->meta.spec.name + "' was not pinned");
  }
  *out = it->second;
  return Status::OK();
}

Status DBImpl::PinForSnapshots(const std::shared_ptr<CollectionState>& c) {
  std::vector<uint64_t> wanting;
  {
    std::lock_guard<std::mutex> l(snapshots_mu_);
    for (const auto& [id, s] : snapshots_) {
      if (s->Holds(c->meta.id) && s->pinned.count(c->meta.id) == 0) wanting.push_back(id);
    }
  }
  if (wanting.empty()) return Status::OK();
  return PinInto(c, wanting);
}

Status DBImpl::PinInto(const std::shared_ptr<CollectionState>& c,
                       const std::vector<uint64_t>& snapshots) {
  double load_ms = 0;
  // A snapshot may search later, when the live rows have moved on: it keeps the vectors.
  SIEVE_RETURN_IF_ERROR(EnsureLoaded(c.get(), &load_ms, /*vectors=*/true));
  std::shared_lock<std::shared_mutex> lock(c->mu);
  SIEVE_RETURN_IF_ERROR(CheckNotDropped(*c));
  auto pinned = std::make_shared<PinnedCollection>();
  pinned->state = c;
  pinned->meta = c->meta;
  pinned->shards = c->shards;
  std::lock_guard<std::mutex> l(snapshots_mu_);
  for (uint64_t id : snapshots) {
    auto it = snapshots_.find(id);
    // A snapshot released meanwhile needs nothing; one that pinned meanwhile keeps its image
    // (taken under this same write lock, so equal).
    if (it != snapshots_.end()) it->second->pinned.emplace(c->meta.id, pinned);
  }
  return Status::OK();
}

ShardIndex* DBImpl::MutableShard(CollectionState* c, uint32_t s) {
  std::shared_ptr<ShardIndex>& shard = c->shards[s];
  // Held elsewhere only by snapshots, which pin under the write lock this write holds.
  if (shard.use_count() > 1) shard = shard->CopyForWrite();
  return shard.get();
}

Status DBImpl::ResolveRead(const std::shared_ptr<CollectionState>& c, const Snapshot* snapshot,
                           ReadView* view) {
  if (snapshot == nullptr) {
    view->spec = SpecOf(c.get(), &view->schema_version);
    return Status::OK();
  }
  SIEVE_RETURN_IF_ERROR(PinnedFor(snapshot, c, &view->pinned));
  view->spec = view->pinned->meta.spec;
  return Status::OK();
}

Status DBImpl::BeginRead(const std::shared_ptr<CollectionState>& c, bool vectors, double* load_ms,
                         ReadView* view) {
  *load_ms = 0;
  if (view->pinned != nullptr) {
    view->lock = std::shared_lock<std::shared_mutex>(c->mu);
    view->meta = &view->pinned->meta;
    view->shards = &view->pinned->shards;
    return Status::OK();
  }
  SIEVE_RETURN_IF_ERROR(EnsureLoaded(c.get(), load_ms, vectors));
  view->lock = std::shared_lock<std::shared_mutex>(c->mu);
  SIEVE_RETURN_IF_ERROR(CheckNotDropped(*c));
  if (vectors && !c->vectors_loaded) {
    return Status::Internal("collection '" + c->meta.spec.name + "' is loaded without vectors");
  }
  if (c->schema_version != view->schema_version) {
    view->spec = c->meta.spec;
    view->reparse = true;
  }
  view->meta = &c->meta;
  view->shards = &c->shards;
  return Status::OK();
}

}  // namespace sieve
