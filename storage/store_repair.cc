// Copyright 2026 The Sieve Authors.
//
// Store::Repair: the salvage of a damaged store (FORMAT.md, "Repair"). The damaged store is
// opened without enforcing its checks (WAL records that fail their checksum skipped, missing
// or damaged table files tolerated); every row whose id, vector and attributes still read
// back is copied into a fresh store beside it, which then takes its place. What could not be
// read is reported by range and by the batch (ledger commit) that had appended it.

#include <rocksdb/db.h>
#include <rocksdb/env.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "storage/format.h"
#include "storage/ledger.h"
#include "storage/roaring.h"
#include "storage/rocks_store.h"
#include "storage/wal_scan.h"

namespace sieve {

namespace {

namespace fmt = ::sieve::format;

// Rows a rebuilt chunk (and one commit of the rebuilt store) holds at most.
constexpr uint32_t kRebuildRows = 65536;
const std::string kSettingPrefix = "setting/";


std::string Stamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm;
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

// One damaged or missing range of a shard, before it is split by batch.
struct Lost {
  uint32_t first = 0;
  uint32_t rows = 0;
  std::string cause;
};

// The rows of one shard still readable, read chunk by chunk through point lookups so that one
// unreadable block costs only the chunks it holds.
class ShardSalvage {
 public:
  ShardSalvage(RocksStore* store, const CollectionMeta& meta, uint32_t shard)
      : store_(store), meta_(meta), shard_(shard) {}

  // Finds every chunk boundary any part shows and reads the state.
  void Survey() {
    ShardState state;
    state_status_ = store_->ReadShardState(meta_, shard_, &state);
    if (state_status_.ok()) state_ = std::move(state);
    for (char tag : {fmt::kIdsTag, fmt::kColumnsTag, fmt::kVectorsTag}) {
      rocksdb::ColumnFamilyHandle* family =
          tag == fmt::kVectorsTag ? store_->vectors_family() : store_->rows_family();
      const std::string lower = fmt::ChunkPrefix(tag, Space(), shard_);
      const std::string upper = fmt::PrefixSuccessor(lower);
      rocksdb::Slice upper_slice(upper);
      rocksdb::ReadOptions ro;
      ro.iterate_upper_bound = &upper_slice;
      ro.fill_cache = false;
      std::unique_ptr<rocksdb::Iterator> it(store_->db()->NewIterator(ro, family));
      for (it->Seek(lower); it->Valid(); it->Next()) {
        char t = 0;
        uint32_t cid = 0, s = 0, first = 0;
        if (!fmt::ParseChunkKey(std::string_view(it->key().data(), it->key().size()), &t, &cid,
                                &s, &first)) {
          continue;
        }
        uint32_t rows = 0;
        const std::string_view v(it->value().data(), it->value().size());
        Status st = tag == fmt::kVectorsTag
                        ? fmt::DecodeVectors(v, meta_.spec.dim, meta_.spec.dtype, &rows, nullptr)
                        : tag == fmt::kIdsTag ? fmt::DecodeIds(v, &rows, nullptr)
                                              : fmt::DecodeColumns(v, meta_.spec.attributes,
                                                                   &rows, nullptr);
        if (st.ok() && rows > 0) boundaries_.emplace(first, rows);
      }
    }
  }

  const std::optional<ShardState>& state() const { return state_; }
  const Status& state_status() const { return state_status_; }

  // The ordinals the shard claims: its state's, else the end of the chunks found.
  uint32_t End() const {
    if (state_) return state_->next_ordinal;
    uint32_t end = 0;
    for (const auto& [first, rows] : boundaries_) end = std::max(end, first + rows);
    return end;
  }
  uint32_t Space() const { return state_ ? SpaceOf(meta_, *state_) : meta_.id; }
  bool Deleted(uint32_t ordinal) const {
    return state_ && state_->deleted->contains(ordinal);
  }

  // Calls visit(chunk) for each fully readable chunk below End(), in order, and records the
  // ranges that are not.
  template <typename Visit>
  Status Walk(Visit&& visit, std::vector<Lost>* lost) {
    const uint32_t end = End();
    uint32_t next = 0;
    for (auto it = boundaries_.begin(); it != boundaries_.end(); ++it) {
      const uint32_t first = it->first;
      if (first >= end) break;
      if (first < next) continue;  // overlapping remains of a damaged store
      if (first > next) lost->push_back({next, first - next, "no chunk holds these rows"});
      Chunk chunk;
      chunk.first_ordinal = first;
      std::string cause;
      if (ReadChunk(first, &chunk, &cause) && first + chunk.num_rows <= end) {
        SIEVE_RETURN_IF_ERROR(visit(std::move(chunk)));
        next = first + chunk.num_rows;
      } else {
        auto after = std::next(it);
        const uint32_t stop =
            std::min<uint32_t>(end, after == boundaries_.end() ? first + it->second : after->first);
        const uint32_t rows = std::max<uint32_t>(stop, first + 1) - first;
        lost->push_back({first, std::min(rows, end - first), cause});
        next = first + std::min(rows, end - first);
      }
    }
    if (next < end) lost->push_back({next, end - next, "no chunk holds these rows"});
    return Status::OK();
  }

 private:
  bool ReadChunk(uint32_t first, Chunk* chunk, std::string* cause) {
    rocksdb::ReadOptions ro;
    ro.fill_cache = false;
    uint32_t rows[3] = {0, 0, 0};
    const char tags[3] = {fmt::kIdsTag, fmt::kColumnsTag, fmt::kVectorsTag};
    for (int i = 0; i < 3; ++i) {
      rocksdb::ColumnFamilyHandle* family =
          tags[i] == fmt::kVectorsTag ? store_->vectors_family() : store_->rows_family();
      rocksdb::PinnableSlice value;
      rocksdb::Status rs =
          store_->db()->Get(ro, family, fmt::ChunkKey(tags[i], Space(), shard_, first), &value);
      const char* part = i == 0 ? "ids" : i == 1 ? "attributes" : "vectors";
      if (rs.IsNotFound()) {
        *cause = std::string("the ") + part + " chunk is missing";
        return false;
      }
      if (!rs.ok()) {
        *cause = std::string("the ") + part + " chunk cannot be read: " + rs.ToString();
        return false;
      }
      const std::string_view v(value.data(), value.size());
      Status s = i == 0   ? fmt::DecodeIds(v, &rows[i], &chunk->ids)
                 : i == 1 ? fmt::DecodeColumns(v, meta_.spec.attributes, &rows[i], &chunk->columns)
                          : fmt::DecodeVectors(v, meta_.spec.dim, meta_.spec.dtype, &rows[i],
                                               &chunk->vectors);
      if (s.ok() && i == 2) s = fmt::CheckFinite(chunk->vectors, meta_.spec.dim);
      if (!s.ok()) {
        *cause = std::string("the ") + part + " chunk is damaged: " + s.message();
        return false;
      }
    }
    if (rows[0] != rows[1] || rows[0] != rows[2] || rows[0] == 0) {
      *cause = "the chunk's parts disagree on its rows";
      return false;
    }
    chunk->num_rows = rows[0];
    return true;
  }

  RocksStore* store_;
  const CollectionMeta& meta_;
  const uint32_t shard_;
  std::optional<ShardState> state_;
  Status state_status_;
  std::map<uint32_t, uint32_t> boundaries_;  // first ordinal → rows
};

// Collects live rows and commits them to the rebuilt store in chunks of kRebuildRows.
class Rebuilder {
 public:
  Rebuilder(Store* store, CollectionMeta meta) : store_(store), meta_(std::move(meta)) {
    states_.resize(meta_.spec.shards);
    for (ShardState& st : states_) st.deleted = std::make_shared<roaring::Roaring>();
  }

  Status Add(uint32_t shard, const Chunk& from, uint32_t row) {
    Chunk& to = Pending(shard);
    to.ids.push_back(from.ids[row]);
    next_auto_id_ = std::max(next_auto_id_, from.ids[row] == INT64_MAX ? from.ids[row]
                                                                       : from.ids[row] + 1);
    const float* v = from.vectors.data() + size_t{row} * meta_.spec.dim;
    to.vectors.insert(to.vectors.end(), v, v + meta_.spec.dim);
    for (size_t a = 0; a < from.columns.size(); ++a) to.columns[a].Append(from.columns[a].Get(row));
    ++to.num_rows;
    ++kept_;
    return to.num_rows >= kRebuildRows ? Commit(shard) : Status::OK();
  }

  Status Finish(int64_t next_auto_id) {
    for (uint32_t s = 0; s < pending_.size(); ++s) {
      if (pending_[s] && pending_[s]->num_rows > 0) SIEVE_RETURN_IF_ERROR(Commit(s));
    }
    next_auto_id_ = std::max(next_auto_id_, next_auto_id);
    if (next_auto_id_ > meta_.next_auto_id) {
      // An empty append moves next_auto_id alone.
      SIEVE_RETURN_IF_ERROR(store_->CommitAppend(meta_, next_auto_id_, {}));
      meta_.next_auto_id = next_auto_id_;
    }
    return Status::OK();
  }
  uint64_t kept() const { return kept_; }

 private:
  Chunk& Pending(uint32_t shard) {
    if (pending_.size() <= shard) pending_.resize(shard + 1);
    if (!pending_[shard]) {
      pending_[shard] = std::make_unique<Chunk>();
      Chunk& c = *pending_[shard];
      c.first_ordinal = states_[shard].next_ordinal;
      c.columns.resize(meta_.spec.attributes.size());
      for (size_t a = 0; a < c.columns.size(); ++a) c.columns[a].type = meta_.spec.attributes[a].type;
    }
    return *pending_[shard];
  }

  Status Commit(uint32_t shard) {
    Chunk& c = *pending_[shard];
    ShardState next = states_[shard];
    next.next_ordinal = c.first_ordinal + c.num_rows;
    next.live_rows += c.num_rows;
    // Text indexes are made again from the salvaged values.
    SIEVE_RETURN_IF_ERROR(EnsureTextSegments(meta_.spec.attributes, &c.columns));
    Store::ShardAppend append{shard, {&c}, next};
    next_auto_id_ = std::max(next_auto_id_, meta_.next_auto_id);
    SIEVE_RETURN_IF_ERROR(store_->CommitAppend(meta_, next_auto_id_, {append}));
    meta_.next_auto_id = next_auto_id_;
    states_[shard] = next;
    pending_[shard].reset();
    return Status::OK();
  }

  Store* store_;
  CollectionMeta meta_;
  std::vector<ShardState> states_;
  std::vector<std::unique_ptr<Chunk>> pending_;
  int64_t next_auto_id_ = 0;
  uint64_t kept_ = 0;
};

// Splits a lost range by the ledger's append records of that shard.
void Attribute(const Lost& lost, const CollectionMeta& meta, uint32_t shard,
               const ShardSalvage& salvage, const LedgerContents& ledger,
               RepairReport* report) {
  auto add = [&](uint32_t first, uint32_t rows, uint64_t commit) {
    if (rows == 0) return;
    RepairLoss loss;
    loss.collection = meta.spec.name;
    loss.shard = shard;
    loss.first_ordinal = first;
    loss.rows = rows;
    for (uint32_t o = first; o < first + rows; ++o) loss.lost_rows += salvage.Deleted(o) ? 0 : 1;
    loss.commit = commit;
    loss.cause = lost.cause;
    report->rows_lost += loss.lost_rows;
    report->losses.push_back(std::move(loss));
  };
  uint32_t at = lost.first;
  const uint32_t end = lost.first + lost.rows;
  for (const LedgerRecord& r : ledger.records) {
    if (r.kind != LedgerKind::kAppend || r.collection_id != meta.id) continue;
    for (const LedgerShard& s : r.shards) {
      if (s.shard != shard || s.next_ordinal <= at || s.first_ordinal >= end) continue;
      if (s.first_ordinal > at) add(at, s.first_ordinal - at, 0);
      const uint32_t stop = std::min(end, s.next_ordinal);
      add(std::max(at, s.first_ordinal), stop - std::max(at, s.first_ordinal), r.seq);
      at = stop;
    }
  }
  add(at, end - at, 0);
}

// A copy of a damaged store that shares its table and blob files (hard links) and has its
// write-ahead log cut before the damage. Removed when destroyed.
class Scratch {
 public:
  explicit Scratch(rocksdb::Env* env) : env_(env) {}
  ~Scratch() {
    if (path_.empty()) return;
    std::vector<std::string> children;
    if (env_->GetChildren(path_, &children).ok()) {
      for (const std::string& c : children) (void)env_->DeleteFile(path_ + "/" + c);
    }
    (void)env_->DeleteDir(path_);
  }
  const std::string& path() const { return path_; }

  Status Make(const std::string& from, const std::string& to, const WalDamage& damage) {
    SIEVE_RETURN_IF_ERROR(FromRocks(env_->CreateDir(to), "repair: creating " + to));
    path_ = to;
    std::vector<std::string> children;
    SIEVE_RETURN_IF_ERROR(FromRocks(env_->GetChildren(from, &children), "repair: listing " + from));
    const std::string damaged_log = damage.file.substr(damage.file.find_last_of('/') + 1);
    for (const std::string& name : children) {
      if (name == "." || name == ".." || name == "LOCK" || name.rfind("LOG", 0) == 0) continue;
      const std::string src = from + "/" + name, dst = to + "/" + name;
      const bool log = name.size() > 4 && name.compare(name.size() - 4, 4, ".log") == 0;
      if (log && name > damaged_log) continue;  // logs after the damage are not replayed
      if (!log && env_->LinkFile(src, dst).ok()) continue;
      uint64_t size = 0;
      SIEVE_RETURN_IF_ERROR(FromRocks(env_->GetFileSize(src, &size), "repair: reading " + src));
      if (name == damaged_log) size = damage.batch_start;
      SIEVE_RETURN_IF_ERROR(CopyPrefix(src, dst, size));
    }
    return Status::OK();
  }

 private:
  Status CopyPrefix(const std::string& src, const std::string& dst, uint64_t size) {
    std::unique_ptr<rocksdb::SequentialFile> in;
    std::unique_ptr<rocksdb::WritableFile> out;
    rocksdb::Status rs = env_->NewSequentialFile(src, &in, rocksdb::EnvOptions());
    if (rs.ok()) rs = env_->NewWritableFile(dst, &out, rocksdb::EnvOptions());
    std::string buf(1 << 20, '\0');
    while (rs.ok() && size > 0) {
      rocksdb::Slice got;
      rs = in->Read(std::min<uint64_t>(size, buf.size()), &got, buf.data());
      if (!rs.ok() || got.empty()) break;
      rs = out->Append(got);
      size -= got.size();
    }
    if (out) {
      rocksdb::Status c = out->Close();
      if (rs.ok()) rs = c;
    }
    return FromRocks(rs, "repair: copying " + src);
  }

  rocksdb::Env* env_;
  std::string path_;
};

Status SyncParent(rocksdb::Env* env, const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string parent = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  std::unique_ptr<rocksdb::Directory> dir;
  rocksdb::Status rs = env->NewDirectory(parent, &dir);
  if (rs.ok()) rs = dir->Fsync();
  return FromRocks(rs, "syncing " + parent);
}

Status DoRepair(const StoreOptions& options, const std::string& path, RepairReport* report) {
  *report = RepairReport();
  rocksdb::Env* env =
      options.env != nullptr ? static_cast<rocksdb::Env*>(options.env) : rocksdb::Env::Default();
  if (!env->FileExists(path + "/CURRENT").ok()) {
    return Status::NotFound("no Sieve database at '" + path + "'");
  }
  // A store that opens and checks clean is left alone.
  {
    StoreOptions ro = options;
    ro.read_only = true;
    std::unique_ptr<Store> store;
    if (Store::Open(ro, path, &store).ok()) {
      std::vector<std::string> problems;
      if (store->CheckFormat(&problems).ok()) return Status::OK();
    }
  }

  LedgerContents ledger;
  const Status ledger_status = Ledger::Read(env, path, &ledger);
  if (!ledger_status.ok() && !ledger_status.IsNotFound()) {
    report->notes.push_back("the commit ledger could not be read (" + ledger_status.message() +
                            "): losses are reported without their batches");
    ledger = LedgerContents();
  }

  // Every intact WAL record when RocksDB can replay past the damage. RocksDB 7.8 cannot when a
  // damaged fragment belongs to a batch spanning several log blocks ("Write batch content
  // corrupted"): then a scratch copy whose log is cut where that batch begins is read instead.
  std::unique_ptr<RocksStore> damaged;
  Scratch scratch(env);
  Status opened = OpenRocksStore(options, path, OpenMode::kSalvage, &damaged);
  if (!opened.ok()) {
    WalDamage damage;
    if (!FindWalDamage(env, path, &damage)) {
      return Status::Corruption("repair: the damaged store cannot be read: " + opened.message());
    }
    SIEVE_RETURN_IF_ERROR(scratch.Make(path, path + ".salvage-" + Stamp(), damage));
    Status prefix = OpenRocksStore(options, scratch.path(), OpenMode::kSalvagePrefix, &damaged);
    if (!prefix.ok()) {
      return Status::Corruption("repair: the damaged store cannot be read: " + opened.message() +
                                "; nor with its log cut at the damage: " + prefix.message());
    }
    report->notes.push_back("the write-ahead log " + damage.file + " was replayed up to byte " +
                            Num(damage.batch_start) + ", where the batch holding its damage (" +
                            damage.what + " at byte " + Num(damage.offset) + ") begins");
  }
  const uint64_t salvaged_seq = damaged->commit_seq();

  const std::string fresh_path = path + ".repair-" + Stamp();
  if (env->FileExists(fresh_path).ok()) {
    return Status::IOError("repair: " + fresh_path + " exists already");
  }
  StoreOptions fresh_options = options;
  fresh_options.read_only = false;
  fresh_options.create_if_missing = true;
  fresh_options.error_if_exists = true;
  std::unique_ptr<Store> fresh;
  SIEVE_RETURN_IF_ERROR(Store::Open(fresh_options, fresh_path, &fresh)
                            .WithContext("repair: creating the new store"));

  // Settings first, then each collection's readable rows.
  {
    rocksdb::ReadOptions ro;
    std::unique_ptr<rocksdb::Iterator> it(
        damaged->db()->NewIterator(ro, damaged->meta_family()));
    for (it->Seek(kSettingPrefix); it->Valid() && it->key().starts_with(kSettingPrefix);
         it->Next()) {
      SIEVE_RETURN_IF_ERROR(fresh->PutSetting(it->key().ToString().substr(kSettingPrefix.size()),
                                              it->value().ToString()));
    }
    if (!it->status().ok()) {
      report->notes.push_back("some settings could not be read: " + it->status().ToString());
    }
  }
  std::vector<CollectionMeta> metas;
  {
    rocksdb::ReadOptions ro;
    std::unique_ptr<rocksdb::Iterator> it(
        damaged->db()->NewIterator(ro, damaged->meta_family()));
    const std::string prefix = fmt::kCollectionKeyPrefix;
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      CollectionMeta m;
      Status s = fmt::DecodeMeta(std::string_view(it->value().data(), it->value().size()), &m);
      if (!s.ok()) {
        report->notes.push_back("the metadata under '" + it->key().ToString() +
                                "' cannot be read (" + s.message() + "): that collection is lost");
        continue;
      }
      metas.push_back(std::move(m));
    }
    if (!it->status().ok()) {
      report->notes.push_back("the collection list stopped at damage: " + it->status().ToString() +
                              "; collections after it are lost");
    }
  }
  std::sort(metas.begin(), metas.end(),
            [](const CollectionMeta& a, const CollectionMeta& b) { return a.id < b.id; });
  for (const CollectionMeta& meta : metas) {
    CollectionMeta created;
    SIEVE_RETURN_IF_ERROR(fresh->CreateCollection(meta.spec, &created)
                              .WithContext("repair: creating collection '" + meta.spec.name + "'"));
    Rebuilder rebuilder(fresh.get(), created);
    for (uint32_t shard = 0; shard < meta.spec.shards; ++shard) {
      ShardSalvage salvage(damaged.get(), meta, shard);
      salvage.Survey();
      if (!salvage.state_status().ok()) {
        report->notes.push_back(Where(meta, shard) + ": its state cannot be read (" +
                                salvage.state_status().message() +
                                "): its deletes are lost, every readable row is kept");
      }
      std::vector<Lost> lost;
      SIEVE_RETURN_IF_ERROR(salvage.Walk(
          [&](Chunk&& chunk) -> Status {
            for (uint32_t r = 0; r < chunk.num_rows; ++r) {
              if (!salvage.Deleted(chunk.first_ordinal + r)) {
                SIEVE_RETURN_IF_ERROR(rebuilder.Add(shard, chunk, r));
              }
            }
            return Status::OK();
          },
          &lost));
      // Acknowledged commits past what the damaged store still holds: their WAL records were
      // lost (the ledger vouches for them).
      uint32_t claimed = salvage.End();
      for (const LedgerRecord& r : ledger.records) {
        if (r.collection_id != meta.id || r.seq <= salvaged_seq) continue;
        for (const LedgerShard& s : r.shards) {
          if (s.shard != shard) continue;
          if (r.kind == LedgerKind::kAppend && s.next_ordinal > claimed) {
            lost.push_back({claimed, s.next_ordinal - claimed,
                            "its commit was lost with the damaged write-ahead log"});
            claimed = s.next_ordinal;
          } else if (r.kind == LedgerKind::kStates && salvage.state()) {
            report->notes.push_back(
                Where(meta, shard) + ": the delete of commit " + Num(r.seq) +
                " was lost with the damaged write-ahead log; rows it deleted are live again");
          }
        }
      }
      for (const Lost& l : lost) Attribute(l, meta, shard, salvage, ledger, report);
    }
    SIEVE_RETURN_IF_ERROR(rebuilder.Finish(meta.next_auto_id)
                              .WithContext("repair: writing collection '" + meta.spec.name + "'"));
    report->rows_kept += rebuilder.kept();
  }
  // Aliases, once the collections they name exist again.
  {
    rocksdb::ReadOptions ro;
    std::unique_ptr<rocksdb::Iterator> it(
        damaged->db()->NewIterator(ro, damaged->meta_family()));
    const std::string prefix = fmt::kAliasKeyPrefix;
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      const std::string alias = it->key().ToString().substr(prefix.size());
      std::string target;
      Status s = fmt::DecodeAlias(std::string_view(it->value().data(), it->value().size()),
                                  &target);
      if (s.ok()) s = fresh->PutAlias(alias, target);
      if (!s.ok()) {
        report->notes.push_back("alias '" + alias + "' is lost: " + s.message());
      }
    }
    if (!it->status().ok()) {
      report->notes.push_back("the alias list stopped at damage: " + it->status().ToString() +
                              "; aliases after it are lost");
    }
  }
  SIEVE_RETURN_IF_ERROR(fresh->Flush());
  fresh.reset();
  damaged.reset();

  // The swap: the damaged files aside, the new store in their place.
  report->damaged_copy = path + ".damaged-" + Stamp();
  SIEVE_RETURN_IF_ERROR(FromRocks(env->RenameFile(path, report->damaged_copy),
                                  "repair: moving " + path + " aside"));
  SIEVE_RETURN_IF_ERROR(FromRocks(env->RenameFile(fresh_path, path),
                                  "repair: moving the new store to " + path));
  SIEVE_RETURN_IF_ERROR(SyncParent(env, path));
  report->repaired = true;
  return Status::OK();
}

}  // namespace

Status Store::Repair(const StoreOptions& options, const std::string& path,
                     RepairReport* report) {
  try {
    return DoRepair(options, path, report);
  } catch (const std::bad_alloc&) {
    return Status::ResourceExhausted("repair of " + path + ": out of memory");
  } catch (const std::exception& e) {
    return Status::Internal("repair of " + path + ": " + e.what());
  }
}

}  // namespace sieve
