// Copyright 2026 The Sieve Authors.
//
// DBImpl's writes: ingest and upsert (one atomic commit per batch), deletes, attribute-only
// updates, dropping a collection and compacting its shards. Every write of a collection holds
// its write_mu, then its mu exclusively for as long as the in-memory image changes; compaction
// builds the new shards under a shared mu, so searches go on meanwhile.

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "filter/filter.h"
#include "index/roaring_bridge.h"
#include "engine/db_impl.h"
#include "engine/db_util.h"
#include "engine/request_rules.h"
#include "storage/shard_of.h"

namespace sieve {

namespace {

std::string Num(uint64_t n) { return std::to_string(n); }

// The valid attribute names of a collection, for messages.
std::string KnownAttributes(const CollectionSpec& spec) {
  std::string known;
  for (const AttributeSpec& a : spec.attributes) known += (known.empty() ? "" : ", ") + a.name;
  return known.empty() ? std::string("no attributes") : known;
}

}  // namespace

Status DBImpl::ValidateBatch(const CollectionSpec& spec, const RowBatch& rows,
                             const char* op) const {
  const std::string what = op;
  if (rows.num_rows == 0) return Status::OK();
  if (rows.vectors == nullptr) return Status::InvalidArgument(what + ": no vectors given");
  if (rows.dim != spec.dim) {
    return Status::InvalidArgument(what + ": the vectors have " + Num(rows.dim) +
                                   " components, collection '" + spec.name + "' has dim " +
                                   Num(spec.dim));
  }
  const uint32_t dim = spec.dim;
  std::vector<float> rounded;
  for (size_t r = 0; r < rows.num_rows; ++r) {
    const float* v = rows.vectors + r * dim;
    for (uint32_t j = 0; j < dim; ++j) {
      if (!std::isfinite(v[j])) {
        return Status::InvalidArgument("row " + Num(r) + ", component " + Num(j) +
                                       ": vector value is " +
                                       (std::isnan(v[j]) ? "NaN" : "infinite"));
      }
      if (spec.dtype == DType::kFloat16 && std::fabs(v[j]) > 65504.0f) {
        return Status::InvalidArgument("row " + Num(r) + ", component " + Num(j) + ": " +
                                       std::to_string(v[j]) +
                                       " is outside the float16 range of this collection");
      }
    }
    const float* stored = v;
    if (spec.dtype == DType::kFloat16) {
      rounded.resize(dim);
      for (uint32_t j = 0; j < dim; ++j) rounded[j] = StoredValue(spec.dtype, v[j]);
      stored = rounded.data();
    }
    Status s = CheckVector(stored, dim);
    if (!s.ok()) return Status::InvalidArgument("row " + Num(r) + ": " + s.message());
  }
  if (rows.attributes != nullptr) {
    for (size_t r = 0; r < rows.num_rows; ++r) {
      const auto& row = rows.attributes[r];
      if (row.size() > spec.attributes.size()) {
        return Status::InvalidArgument("row " + Num(r) + ": " + Num(row.size()) +
                                       " attribute values, schema has " +
                                       Num(spec.attributes.size()) + " (" +
                                       KnownAttributes(spec) + ")");
      }
      for (size_t a = 0; a < row.size(); ++a) {
        Value v = row[a];
        Status s = CheckValue(spec.attributes[a].type, &v);
        if (!s.ok()) {
          return Status::InvalidArgument("row " + Num(r) + ", attribute '" +
                                         spec.attributes[a].name + "': " + s.message());
        }
      }
    }
  }
  return Status::OK();
}

Status DBImpl::Ingest(const std::string& collection, const RowBatch& rows,
                      const IngestOptions& options, IngestResult* result) {
  *result = IngestResult();
  SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly("ingest"));
  std::shared_ptr<CollectionState> c;
  SIEVE_RETURN_IF_ERROR(FindCollection(collection, &c));
  return WriteRowsIn(c, rows, options, /*upsert=*/false, result);
}

Status DBImpl::Upsert(const std::string& collection, const RowBatch& rows,
                      const IngestOptions& options, IngestResult* result) {
  *result = IngestResult();
  SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly("upsert"));
  std::shared_ptr<CollectionState> c;
  SIEVE_RETURN_IF_ERROR(FindCollection(collection, &c));
  return WriteRowsIn(c, rows, options, /*upsert=*/true, result);
}

Status DBImpl::WriteRowsIn(const std::shared_ptr<CollectionState>& c, const RowBatch& rows,
                           const IngestOptions& options, bool upsert, IngestResult* result) {
  *result = IngestResult();
  const char* op = upsert ? "upsert" : "ingest";
  SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly(op));
  // The schema changes only under write_mu: the batch is checked against the one it commits
  // under (readers go on meanwhile).
  std::lock_guard<std::mutex> write_lock(c->write_mu);
  SIEVE_RETURN_IF_ERROR(ValidateBatch(c->meta.spec, rows, op));
  const size_t n = rows.num_rows;
  if (upsert && n > 0 && rows.ids == nullptr) {
    return Status::InvalidArgument("upsert: every row needs an id (RowBatch::ids is null)");
  }
  SIEVE_RETURN_IF_ERROR(PinForSnapshots(c));
  std::unique_lock<std::shared_mutex> lock(c->mu);
  SIEVE_RETURN_IF_ERROR(CheckNotDropped(*c));
  const CollectionSpec& spec = c->meta.spec;
  const uint32_t nshards = spec.shards;

  std::vector<ShardState> states(nshards);
  for (uint32_t s = 0; s < nshards; ++s) {
    SIEVE_RETURN_IF_ERROR(store_->ReadShardState(c->meta, s, &states[s]));
  }
  uint64_t total_rows = 0, live_rows = 0;
  for (auto& st : states) {
    total_rows += st.next_ordinal;
    live_rows += st.live_rows;
  }
  if (total_rows + n > (uint64_t{1} << 32) * nshards - 1) {
    return Status::InvalidArgument(std::string(op) +
                                   ": the collection would exceed 2^32 rows per shard");
  }

  std::vector<int64_t> ids(n);
  const int64_t first_auto_id = c->meta.next_auto_id;
  if (rows.ids != nullptr) {
    std::copy(rows.ids, rows.ids + n, ids.begin());
    for (size_t r = 0; r < n; ++r) {
      if (ids[r] < 0) {
        return Status::InvalidArgument(std::string(op) + ": row " + Num(r) + ": id " +
                                       std::to_string(ids[r]) +
                                       " is negative; ids are 0 to 9223372036854775807");
      }
    }
    std::unordered_map<int64_t, size_t> seen;
    seen.reserve(n * 2);
    for (size_t r = 0; r < n; ++r) {
      auto [it, inserted] = seen.emplace(ids[r], r);
      if (!inserted) {
        return Status::InvalidArgument("row " + Num(r) + ": id " + std::to_string(ids[r]) +
                                       " repeats row " + Num(it->second));
      }
    }
    // Against the collection's live rows, which needs the loaded image (ids of deleted rows
    // may be reused).
    if (live_rows > 0) {
      SIEVE_RETURN_IF_ERROR(LoadLocked(c.get(), /*vectors=*/false));
      if (!upsert) {
        for (size_t r = 0; r < n; ++r) {
          uint32_t ord;
          if (c->shards[ShardOf(ids[r], nshards)]->FindLive(ids[r], &ord)) {
            return Status::InvalidArgument(
                "row " + Num(r) + ": id " + std::to_string(ids[r]) +
                " already exists in collection '" + spec.name +
                "' (an upsert replaces live rows)");
          }
        }
      }
    }
  } else if (n > 0) {
    if (live_rows > 0 && !options.auto_ids) {
      return Status::InvalidArgument(
          "ingest: collection '" + spec.name + "' already has " + Num(live_rows) +
          " live rows and these rows have no ids: they would all be added again as new rows "
          "(ids from " + std::to_string(first_auto_id) +
          "); give their ids, or ask for new ids explicitly (auto ids)");
    }
    if (first_auto_id > std::numeric_limits<int64_t>::max() - static_cast<int64_t>(n)) {
      return Status::InvalidArgument(
          "ingest: collection '" + spec.name + "' has no new ids left for " + Num(n) +
          " rows: new ids go on from one past the largest id ever written (" +
          std::to_string(first_auto_id) + " is next, 9223372036854775807 the last), so that "
          "no acknowledged id is ever given again, even after its row is deleted; give these "
          "rows their ids");
    }
    std::iota(ids.begin(), ids.end(), first_auto_id);
  }
  if (options.validate_only) {
    result->live_rows = live_rows;
    return Status::OK();
  }

  // Commit in atomic batches: each one's new rows, and (upsert) the rows they replace.
  const size_t batch_rows = options.batch_rows == 0 ? std::max<size_t>(n, 1) : options.batch_rows;
  const uint32_t chunk_rows = ChunkRows(spec.dim);
  const size_t nattr = spec.attributes.size();
  size_t done = 0;
  while (done < n) {
    const size_t end = std::min(n, done + batch_rows);
    std::vector<std::vector<size_t>> rows_of(nshards);
    for (size_t r = done; r < end; ++r) rows_of[ShardOf(ids[r], nshards)].push_back(r);
    std::vector<std::vector<Chunk>> chunks(nshards);
    std::vector<RowSet> new_deleted(nshards);
    std::vector<bool> replaces(nshards, false);
    uint64_t batch_replaced = 0;
    std::vector<Store::ShardAppend> appends;
    for (uint32_t s = 0; s < nshards; ++s) {
      const auto& rs = rows_of[s];
      if (rs.empty()) continue;
      if (upsert && c->loaded) {
        std::vector<uint32_t> old;
        for (size_t r : rs) {
          uint32_t ord;
          if (c->shards[s]->FindLive(ids[r], &ord)) old.push_back(ord);
        }
        if (!old.empty()) {
          replaces[s] = true;
          batch_replaced += old.size();
          new_deleted[s] = c->shards[s]->deleted() | RowSet::Of(old.data(), old.size());
        }
      }
      uint32_t ord = states[s].next_ordinal;
      for (size_t i = 0; i < rs.size(); i += chunk_rows) {
        const size_t m = std::min<size_t>(chunk_rows, rs.size() - i);
        Chunk ch;
        ch.first_ordinal = ord;
        ch.num_rows = static_cast<uint32_t>(m);
        ch.ids.resize(m);
        ch.vectors.resize(m * spec.dim);
        ch.columns.resize(nattr);
        for (size_t a = 0; a < nattr; ++a) {
          ch.columns[a].type = spec.attributes[a].type;
          ch.columns[a].Reserve(m);
        }
        for (size_t j = 0; j < m; ++j) {
          const size_t r = rs[i + j];
          ch.ids[j] = ids[r];
          const float* src = rows.vectors + r * spec.dim;
          float* dst = ch.vectors.data() + j * spec.dim;
          if (spec.dtype == DType::kFloat16) {
            for (uint32_t d = 0; d < spec.dim; ++d) dst[d] = StoredValue(DType::kFloat16, src[d]);
          } else {
            std::copy(src, src + spec.dim, dst);
          }
          for (size_t a = 0; a < nattr; ++a) {
            if (rows.attributes != nullptr && a < rows.attributes[r].size()) {
              Value v = rows.attributes[r][a];
              (void)CheckValue(spec.attributes[a].type, &v);  // validated above; converts ints
              ch.columns[a].Append(v);
            } else {
              ch.columns[a].Append(Value());
            }
          }
        }
        // Analyzed once: the store keeps the segments, and the image joins them below.
        SIEVE_RETURN_IF_ERROR(EnsureTextSegments(spec.attributes, &ch.columns)
                                  .WithContext(std::string(op) + ": shard " + Num(s)));
        ord += static_cast<uint32_t>(m);
        chunks[s].push_back(std::move(ch));
      }
    }
    for (uint32_t s = 0; s < nshards; ++s) {
      if (chunks[s].empty()) continue;
      Store::ShardAppend app;
      app.shard = s;
      for (auto& ch : chunks[s]) app.chunks.push_back(&ch);
      app.new_state = states[s];
      app.new_state.next_ordinal = chunks[s].back().first_ordinal + chunks[s].back().num_rows;
      if (replaces[s]) {
        app.new_state.deleted = ToRoaring(new_deleted[s]);
        app.new_state.live_rows = app.new_state.next_ordinal - new_deleted[s].Cardinality();
      } else {
        app.new_state.live_rows =
            states[s].live_rows + (app.new_state.next_ordinal - states[s].next_ordinal);
      }
      appends.push_back(std::move(app));
    }
    int64_t batch_next_auto = c->meta.next_auto_id;
    if (rows.ids == nullptr) {
      batch_next_auto += static_cast<int64_t>(end - done);
    } else {
      for (size_t r = done; r < end; ++r) {
        if (ids[r] >= batch_next_auto) {
          batch_next_auto = ids[r] == std::numeric_limits<int64_t>::max() ? ids[r] : ids[r] + 1;
        }
      }
    }
    SIEVE_RETURN_IF_ERROR(store_->CommitAppend(c->meta, batch_next_auto, appends)
                              .WithContext(std::string(op) + ": committing rows " + Num(done) +
                                           ".." + Num(end - 1)));
    for (auto& app : appends) states[app.shard] = app.new_state;
    c->meta.next_auto_id = batch_next_auto;
    if (c->loaded) {
      for (uint32_t s = 0; s < nshards; ++s) {
        // The replaced rows go first, so that the new rows' ids map to the new ordinals.
        if (!replaces[s] && chunks[s].empty()) continue;
        ShardIndex* shard = MutableShard(c.get(), s);
        if (replaces[s]) shard->SetDeleted(new_deleted[s]);
        for (auto& ch : chunks[s]) shard->ApplyChunk(ch);
      }
    }
    result->ingested += end - done;
    result->replaced += batch_replaced;
    done = end;
    if (options.progress) options.progress(done, n);
  }
  for (auto& st : states) result->live_rows += st.live_rows;
  return Status::OK();
}

Status DBImpl::CommitDeletes(CollectionState* c, std::vector<RowSet>* to_delete,
                             uint64_t* deleted) {
  *deleted = 0;
  std::vector<std::pair<uint32_t, ShardState>> states;
  std::vector<RowSet> new_deleted(c->shards.size());
  for (uint32_t s = 0; s < c->shards.size(); ++s) {
    RowSet& add = (*to_delete)[s];
    add -= c->shards[s]->deleted();
    if (add.Empty()) continue;
    *deleted += add.Cardinality();
    new_deleted[s] = c->shards[s]->deleted() | add;
    ShardState st;
    SIEVE_RETURN_IF_ERROR(store_->ReadShardState(c->meta, s, &st));
    st.live_rows = st.next_ordinal - new_deleted[s].Cardinality();
    st.deleted = ToRoaring(new_deleted[s]);
    states.emplace_back(s, std::move(st));
  }
  if (states.empty()) return Status::OK();
  SIEVE_RETURN_IF_ERROR(store_->CommitShardStates(c->meta, states).WithContext("delete"));
  for (auto& [s, st] : states) MutableShard(c, s)->SetDeleted(new_deleted[s]);
  return Status::OK();
}

Status DBImpl::DeleteByIds(const std::string& collection, const int64_t* ids, size_t n,
                           uint64_t* deleted) {
  *deleted = 0;
  SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly("delete"));
  std::shared_ptr<CollectionState> c;
  SIEVE_RETURN_IF_ERROR(FindCollection(collection, &c));
  return DeleteByIdsIn(c, ids, n, deleted);
}

Status DBImpl::DeleteByIdsIn(const std::shared_ptr<CollectionState>& c, const int64_t* ids,
                             size_t n, uint64_t* deleted) {
  *deleted = 0;
  SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly("delete"));
  std::lock_guard<std::mutex> write_lock(c->write_mu);
  SIEVE_RETURN_IF_ERROR(PinForSnapshots(c));
  std::unique_lock<std::shared_mutex> lock(c->mu);
  SIEVE_RETURN_IF_ERROR(CheckNotDropped(*c));
  SIEVE_RETURN_IF_ERROR(LoadLocked(c.get(), /*vectors=*/false));
  std::vector<RowSet> sets;
  SelectByIds(*c, ids, n, &sets);
  return CommitDeletes(c.get(), &sets, deleted);
}

Status DBImpl::DeleteByFilter(const std::string& collection, const std::string& filter,
                              uint64_t* deleted) {
  *deleted = 0;
  SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly("delete"));
  std::shared_ptr<CollectionState> c;
  SIEVE_RETURN_IF_ERROR(FindCollection(collection, &c));
  return DeleteByFilterIn(c, filter, deleted);
}

Status DBImpl::DeleteByFilterIn(const std::shared_ptr<CollectionState>& c,
                                const std::string& filter, uint64_t* deleted) {
  *deleted = 0;
  SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly("delete"));
  SIEVE_RETURN_IF_ERROR(ValidateSelectingFilter("delete", filter));
  std::lock_guard<std::mutex> write_lock(c->write_mu);  // the schema stays as parsed
  std::unique_ptr<Filter> f;
  SIEVE_RETURN_IF_ERROR(Filter::Parse(filter, c->meta.spec, &f));
  SIEVE_RETURN_IF_ERROR(PinForSnapshots(c));
  std::unique_lock<std::shared_mutex> lock(c->mu);
  SIEVE_RETURN_IF_ERROR(CheckNotDropped(*c));
  SIEVE_RETURN_IF_ERROR(LoadLocked(c.get(), /*vectors=*/false));
  std::vector<RowSet> sets;
  for (auto& shard : c->shards) sets.push_back(f->Compile(*shard));
  return CommitDeletes(c.get(), &sets, deleted);
}

void DBImpl::SelectByIds(const CollectionState& c, const int64_t* ids, size_t n,
                         std::vector<RowSet>* sets) const {
  const uint32_t nshards = c.meta.spec.shards;
  std::vector<std::vector<uint32_t>> ords(nshards);
  for (size_t i = 0; i < n; ++i) {
    uint32_t s = ShardOf(ids[i], nshards), ord;
    if (c.shards[s]->FindLive(ids[i], &ord)) ords[s].push_back(ord);
  }
  sets->assign(nshards, RowSet());
  for (uint32_t s = 0; s < nshards; ++s) {
    std::sort(ords[s].begin(), ords[s].end());
    (*sets)[s] = RowSet::Of(ords[s].data(), ords[s].size());
  }
}

Status DBImpl::Update(const std::string& collection, const UpdateRequest& request,
                      uint64_t* updated) {
  *updated = 0;
  SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly("update"));
  std::shared_ptr<CollectionState> c;
  SIEVE_RETURN_IF_ERROR(FindCollection(collection, &c));
  return UpdateIn(c, request, updated);
}

Status DBImpl::UpdateIn(const std::shared_ptr<CollectionState>& c, const UpdateRequest& request,
                        uint64_t* updated) {
  *updated = 0;
  SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly("update"));
  std::lock_guard<std::mutex> write_lock(c->write_mu);  // the schema stays as resolved
  const CollectionSpec& spec = c->meta.spec;
  const bool by_ids = request.ids != nullptr || request.num_ids > 0;
  const bool by_filter = !by_ids;
  if (by_ids && !request.filter.empty()) {
    return Status::InvalidArgument("update: give exactly one of ids and a filter");
  }
  if (by_filter) SIEVE_RETURN_IF_ERROR(ValidateSelectingFilter("update", request.filter));
  if (request.ids == nullptr && request.num_ids > 0) {
    return Status::InvalidArgument("update: num_ids is " + Num(request.num_ids) +
                                   " but ids is null");
  }
  if (request.set.empty()) {
    return Status::InvalidArgument("update: nothing to set (give at least one assignment)");
  }
  // (attribute index, value as stored) per assignment.
  std::vector<std::pair<size_t, Value>> set;
  for (const auto& [name, given] : request.set) {
    size_t a = 0;
    while (a < spec.attributes.size() && spec.attributes[a].name != name) ++a;
    if (a == spec.attributes.size()) {
      return Status::InvalidArgument("update: unknown attribute '" + name + "' (collection '" +
                                     spec.name + "' has " + KnownAttributes(spec) + ")");
    }
    for (const auto& [b, unused] : set) {
      if (b == a) return Status::InvalidArgument("update: attribute '" + name + "' is set twice");
    }
    Value v = given;
    Status s = CheckValue(spec.attributes[a].type, &v);
    if (!s.ok()) return Status::InvalidArgument("update: attribute '" + name + "': " + s.message());
    set.emplace_back(a, std::move(v));
  }
  std::unique_ptr<Filter> f;
  if (by_filter) SIEVE_RETURN_IF_ERROR(Filter::Parse(request.filter, spec, &f));

  SIEVE_RETURN_IF_ERROR(PinForSnapshots(c));
  std::unique_lock<std::shared_mutex> lock(c->mu);
  SIEVE_RETURN_IF_ERROR(CheckNotDropped(*c));
  SIEVE_RETURN_IF_ERROR(LoadLocked(c.get(), /*vectors=*/false));
  std::vector<RowSet> sets;
  if (by_filter) {
    for (auto& shard : c->shards) sets.push_back(f->Compile(*shard));
  } else {
    SelectByIds(*c, request.ids, request.num_ids, &sets);
  }
  std::vector<Store::ColumnChange> changes;
  uint64_t rows = 0;
  for (uint32_t s = 0; s < sets.size(); ++s) rows += sets[s].Cardinality();
  if (rows == 0) return Status::OK();
  changes.reserve(rows * set.size());
  for (uint32_t s = 0; s < sets.size(); ++s) {
    sets[s].ForEach([&](uint32_t ordinal) {
      for (const auto& [a, v] : set) changes.push_back({s, ordinal, a, v});
    });
  }
  SIEVE_RETURN_IF_ERROR(store_->UpdateColumns(c->meta, changes).WithContext("update"));
  for (const Store::ColumnChange& ch : changes) {
    MutableShard(c.get(), ch.shard)->SetValue(ch.attribute, ch.ordinal, ch.value);
  }
  *updated = rows;
  return Status::OK();
}

Status DBImpl::DropCollection(const std::string& name) {
  SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly("drop"));
  std::shared_ptr<CollectionState> c;
  SIEVE_RETURN_IF_ERROR(FindCollection(name, &c, /*follow_alias=*/false, "drop"));
  std::lock_guard<std::mutex> write_lock(c->write_mu);
  // Snapshots keep reading the collection. One that cannot be kept (its rows no longer load)
  // must not stop the drop: such a snapshot then reports the collection dropped.
  (void)PinForSnapshots(c);
  std::unique_lock<std::shared_mutex> lock(c->mu);
  SIEVE_RETURN_IF_ERROR(CheckNotDropped(*c));
  SIEVE_RETURN_IF_ERROR(store_->DropCollection(c->meta).WithContext("drop '" + name + "'"));
  c->dropped = true;
  c->shards.clear();
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = collections_.find(name);
    if (it != collections_.end() && it->second == c) collections_.erase(it);
  }
  executors_->ClearCaches();  // its rows' device copies
  executors_->Forget(c->meta.id);
  return Status::OK();
}

Status DBImpl::Compact(const std::string& collection, const CompactOptions& options,
                       CompactResult* result) {
  *result = CompactResult();
  SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly("compact"));
  std::vector<std::string> names;
  if (collection.empty()) {
    SIEVE_RETURN_IF_ERROR(ListCollections(&names));
  } else {
    names.push_back(collection);
  }
  std::vector<std::shared_ptr<CollectionState>> states(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    SIEVE_RETURN_IF_ERROR(FindCollection(names[i], &states[i]));
  }
  return CompactIn(states, options, result);
}

namespace {

// What rewriting a shard writes beyond its live rows: the new table files' indexes, filters
// and properties, the MANIFEST's records of them, the flushes before and after and their
// info-log lines; about twice what it was measured at (tools/bench/results/), so a rewrite
// pays for itself.
constexpr uint64_t kRewriteCostBytes = 64 << 10;

// The bytes one stored row takes at least: its vector, its id and 1 byte per attribute.
uint64_t RowBytes(const CollectionSpec& spec) {
  return uint64_t{spec.dim} * (spec.dtype == DType::kFloat16 ? 2 : 4) + 8 +
         spec.attributes.size();
}

}  // namespace

Status DBImpl::CompactIn(const std::vector<std::shared_ptr<CollectionState>>& collections,
                         const CompactOptions& options, CompactResult* result) {
  *result = CompactResult();
  SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly("compact"));
  SIEVE_RETURN_IF_ERROR(store_->DiskBytes(&result->bytes_before));
  // Table files hold every commit before the first rewrite: a rewrite ingests files, and the
  // write-ahead log's records of rows it drops are dropped with the log.
  auto begin = [&] { return store_->Flush().WithContext("compact"); };
  bool any = false;
  uint64_t skipped_bytes = 0;
  for (const auto& c : collections) {
    SIEVE_RETURN_IF_ERROR(
        CompactCollection(c, options, begin, result, &any, &skipped_bytes));
  }
  if (any) SIEVE_RETURN_IF_ERROR(store_->Flush().WithContext("compact"));
  // Nothing rewritten: nothing was written, and the count stands.
  result->bytes_after = result->bytes_before;
  if (any) SIEVE_RETURN_IF_ERROR(store_->DiskBytes(&result->bytes_after));
  std::string note;
  if (result->shards_skipped > 0) {
    note = Num(result->rows_left_deleted) + " deleted rows in " + Num(result->shards_skipped) +
           " shards were left in place: they hold about " + Num(skipped_bytes) +
           " bytes, less than rewriting a shard writes (about " + Num(kRewriteCostBytes) +
           " bytes); force rewrites them anyway";
  }
  if (result->bytes_after > result->bytes_before) {
    if (!note.empty()) note += "; ";
    note += "the store grew by " + Num(result->bytes_after - result->bytes_before) +
            " bytes: rewriting " + Num(result->shards_rewritten) +
            " shards wrote more (new table files, their MANIFEST records and log lines) than " +
            "the " + Num(result->rows_removed) + " deleted rows held";
  }
  result->note = std::move(note);
  return Status::OK();
}

Status DBImpl::CompactCollection(const std::shared_ptr<CollectionState>& c,
                                 const CompactOptions& options,
                                 const std::function<Status()>& begin, CompactResult* result,
                                 bool* any, uint64_t* skipped_bytes) {
  std::lock_guard<std::mutex> write_lock(c->write_mu);
  // A snapshot keeps the image with the deleted rows (and its ordinals): compaction puts new
  // images in place and never changes the old ones.
  SIEVE_RETURN_IF_ERROR(PinForSnapshots(c));
  {
    std::unique_lock<std::shared_mutex> lock(c->mu);
    SIEVE_RETURN_IF_ERROR(CheckNotDropped(*c));
    SIEVE_RETURN_IF_ERROR(LoadLocked(c.get()));
  }
  // No other write can start while write_mu is held, so the image read under the shared lock
  // stays the shard's latest state until the switch.
  const CollectionSpec& spec = c->meta.spec;
  const uint32_t chunk_rows = ChunkRows(spec.dim);
  for (uint32_t s = 0; s < spec.shards; ++s) {
    std::shared_ptr<ShardIndex> fresh;
    std::unique_ptr<Store::ShardRewrite> rewrite;
    uint64_t removed = 0;
    {
      std::shared_lock<std::shared_mutex> lock(c->mu);
      const ShardIndex& old = *c->shards[s];
      if (old.deleted().Empty()) continue;
      removed = old.deleted().Cardinality();
      const uint64_t reclaimed = removed * RowBytes(spec);
      if (!options.force && reclaimed < kRewriteCostBytes) {
        ++result->shards_skipped;
        result->rows_left_deleted += removed;
        *skipped_bytes += reclaimed;
        continue;
      }
      if (!*any) SIEVE_RETURN_IF_ERROR(begin());
      *any = true;
      SIEVE_RETURN_IF_ERROR(store_->BeginRewrite(c->meta, s, &rewrite));
      fresh = std::make_shared<ShardIndex>(spec, s);
      // The live rows in ordinal order: ids, vectors and values as the image holds them.
      std::vector<uint32_t> live;
      live.reserve(old.live_rows());
      old.Live().ForEach([&](uint32_t ordinal) { live.push_back(ordinal); });
      for (size_t i = 0; i < live.size(); i += chunk_rows) {
        const size_t m = std::min<size_t>(chunk_rows, live.size() - i);
        Chunk ch;
        ch.first_ordinal = static_cast<uint32_t>(i);
        ch.num_rows = static_cast<uint32_t>(m);
        ch.ids.resize(m);
        ch.vectors.resize(m * spec.dim);
        ch.columns.resize(spec.attributes.size());
        for (size_t a = 0; a < spec.attributes.size(); ++a) {
          ch.columns[a].type = spec.attributes[a].type;
          ch.columns[a].Reserve(m);
        }
        for (size_t j = 0; j < m; ++j) {
          const uint32_t ordinal = live[i + j];
          ch.ids[j] = old.id(ordinal);
          const float* v = old.vectors().row(ordinal);
          std::copy(v, v + spec.dim, ch.vectors.data() + j * spec.dim);
          for (size_t a = 0; a < spec.attributes.size(); ++a) {
            ch.columns[a].Append(old.attribute(a).ValueAt(ordinal));
          }
        }
        SIEVE_RETURN_IF_ERROR(EnsureTextSegments(spec.attributes, &ch.columns)
                                  .WithContext("compact '" + spec.name + "', shard " + Num(s)));
        SIEVE_RETURN_IF_ERROR(rewrite->Append(ch).WithContext(
            "compact '" + spec.name + "', shard " + Num(s)));
        fresh->ApplyChunk(ch);
      }
    }
    std::unique_lock<std::shared_mutex> lock(c->mu);
    ShardState state;
    state.next_ordinal = fresh->rows();
    state.live_rows = fresh->rows();
    SIEVE_RETURN_IF_ERROR(
        rewrite->Commit(state).WithContext("compact '" + spec.name + "', shard " + Num(s)));
    c->shards[s] = std::move(fresh);
    // Before any search sees the new shard: an executor's copy of the old rows (cached under
    // the same shard key) must not be taken for a prefix of the new ones.
    executors_->ClearCaches();
    result->rows_removed += removed;
    ++result->shards_rewritten;
  }
  return Status::OK();
}

}  // namespace sieve
