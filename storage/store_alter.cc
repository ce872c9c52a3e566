// Copyright 2026 The Sieve Authors.
//
// RocksStore's changes to the catalog that keep every row where it is: a schema change (the
// attribute chunks rewritten to the new columns, vectors and ids untouched), a collection
// renamed, and aliases. Each is one synced WriteBatch through Commit (FORMAT.md, "Atomicity
// and durability"). Names are checked and written under create_mu_, so a collection and an
// alias never take the same name, whichever call comes first.

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/slice.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "storage/format.h"
#include "storage/ledger.h"
#include "storage/rocks_store.h"

namespace sieve {

namespace {

namespace fmt = ::sieve::format;

// The key range [begin, end) of one part of one shard's chunks.
std::pair<std::string, std::string> PartKeys(char tag, uint32_t space, uint32_t shard) {
  std::string begin = fmt::ChunkPrefix(tag, space, shard);
  std::string end = fmt::PrefixSuccessor(begin);
  return {std::move(begin), std::move(end)};
}

// InvalidArgument unless `spec` differs from `old` in its attributes alone, and `sources`
// describes each new attribute.
Status CheckAlteration(const CollectionSpec& old, const CollectionSpec& spec,
                       const std::vector<Store::ColumnSource>& sources) {
  SIEVE_RETURN_IF_ERROR(fmt::ValidateSpec(spec));
  if (spec.name != old.name || spec.dim != old.dim || spec.metric != old.metric ||
      spec.dtype != old.dtype || spec.shards != old.shards) {
    return Status::InvalidArgument("only the attributes of a collection can be altered");
  }
  if (sources.size() != spec.attributes.size()) {
    return Status::InvalidArgument(Num(sources.size()) + " column sources for " +
                                   Num(spec.attributes.size()) + " attributes");
  }
  for (size_t i = 0; i < sources.size(); ++i) {
    const Store::ColumnSource& src = sources[i];
    const AttributeSpec& a = spec.attributes[i];
    if (src.from >= static_cast<int64_t>(old.attributes.size())) {
      return Status::InvalidArgument("attribute '" + a.name + "' comes from attribute " +
                                     Num(src.from) + " of " + Num(old.attributes.size()));
    }
    if (src.from >= 0) {
      if (old.attributes[src.from].type != a.type) {
        return Status::InvalidArgument("attribute '" + a.name + "' cannot change its type");
      }
      if (old.attributes[src.from].analyzer != a.analyzer) {
        return Status::InvalidArgument("attribute '" + a.name + "' cannot change its analyzer");
      }
      continue;
    }
    Column probe;
    probe.type = a.type;
    probe.Append(Value());
    if (!probe.Set(0, src.fill)) {
      return Status::InvalidArgument("the value for the new attribute '" + a.name +
                                     "' is not of its type " + AttrTypeName(a.type));
    }
  }
  return Status::OK();
}

}  // namespace

Status RocksStore::AliasesOf(const std::string& name, std::vector<std::string>* aliases) {
  aliases->clear();
  const std::string prefix = fmt::kAliasKeyPrefix;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), meta_));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    std::string target;
    const std::string key = it->key().ToString();
    SIEVE_RETURN_IF_ERROR(fmt::DecodeAlias(it->value().ToStringView(), &target)
                              .WithContext("metadata key '" + key + "' in " + path_));
    if (target == name) aliases->push_back(key.substr(prefix.size()));
  }
  return FromRocks(it->status(), "reading the aliases of " + path_);
}

Status RocksStore::AlterColumns(const CollectionMeta& meta, const CollectionSpec& spec,
                                const std::vector<ColumnSource>& sources, bool reclaim,
                                CollectionMeta* altered, AlterStats* stats) {
  *stats = AlterStats();
  return WithDb("AlterColumns", [&]() -> Status {
    const std::string where = "altering " + Where(meta);
    SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly(where));
    SIEVE_RETURN_IF_ERROR(RefuseWhileDiskFull(where));
    CollectionMeta current;
    SIEVE_RETURN_IF_ERROR(ReadCurrentMeta(meta, &current));
    SIEVE_RETURN_IF_ERROR(CheckAlteration(current.spec, spec, sources).WithContext(where));
    const std::vector<AttributeSpec>& old_schema = current.spec.attributes;
    CollectionMeta next = current;
    next.spec = spec;

    rocksdb::WriteBatch batch;
    LedgerRecord record;
    record.kind = LedgerKind::kAlter;
    record.collection_id = current.id;
    record.name = current.spec.name;
    std::vector<uint32_t> spaces(current.spec.shards);
    AlterStats counted;
    std::string value;
    for (uint32_t shard = 0; shard < current.spec.shards; ++shard) {
      ShardState state;
      SIEVE_RETURN_IF_ERROR(DoReadShardState(current, shard, nullptr, &state));
      spaces[shard] = SpaceOf(current, state);
      record.shards.push_back(
          LedgerShard{shard, state.next_ordinal, state.next_ordinal, state.live_rows});
      auto [begin, end] = PartKeys(fmt::kColumnsTag, spaces[shard], shard);
      rocksdb::Slice upper(end);
      rocksdb::ReadOptions ro;
      ro.iterate_upper_bound = &upper;
      ro.readahead_size = kScanReadahead;
      ro.fill_cache = false;
      std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, rows_));
      uint32_t expect = 0;  // the next chunk's first ordinal: chunks tile [0, next_ordinal)
      for (it->Seek(begin); it->Valid(); it->Next()) {
        char tag = 0;
        uint32_t kspace = 0, kshard = 0, first = 0;
        const std::string key = it->key().ToString();
        if (!fmt::ParseChunkKey(key, &tag, &kspace, &kshard, &first) || first != expect) {
          return Status::Corruption(Where(current, shard, expect) +
                                    ": the attribute chunks do not tile the shard");
        }
        uint32_t rows = 0;
        std::vector<Column> old_columns;
        SIEVE_RETURN_IF_ERROR(
            fmt::DecodeColumns(it->value().ToStringView(), old_schema, &rows, &old_columns)
                .WithContext(Where(current, shard, first)));
        std::vector<Column> columns(sources.size());
        for (size_t a = 0; a < sources.size(); ++a) {
          if (sources[a].from >= 0) {
            columns[a] = old_columns[sources[a].from];
            continue;
          }
          columns[a].type = spec.attributes[a].type;
          columns[a].Reserve(rows);
          for (uint32_t r = 0; r < rows; ++r) columns[a].Append(sources[a].fill);
        }
        // A kept text column keeps its index; a new one is analyzed here.
        SIEVE_RETURN_IF_ERROR(EnsureTextSegments(spec.attributes, &columns)
                                  .WithContext(Where(current, shard, first)));
        value.clear();
        fmt::EncodeColumns(columns, 0, rows, &value);
        SIEVE_RETURN_IF_ERROR(FromRocks(batch.Put(rows_, key, value), where));
        expect = first + rows;
        counted.rows += rows;
        ++counted.chunks;
      }
      SIEVE_RETURN_IF_ERROR(FromRocks(it->status(), "reading " + Where(current, shard)));
      if (expect != state.next_ordinal) {
        return Status::Corruption(Where(current, shard) + ": attribute chunks end at ordinal " +
                                  Num(expect) + ", the shard at " + Num(state.next_ordinal));
      }
    }
    SIEVE_RETURN_IF_ERROR(
        FromRocks(batch.Put(meta_, fmt::CollectionKey(next.spec.name), fmt::EncodeMeta(next)),
                  where));
    SIEVE_RETURN_IF_ERROR(Commit(&batch, std::move(record), where));
    *altered = std::move(next);
    *stats = counted;
    if (!reclaim) return Status::OK();
    // The old chunks still hold the dropped columns in older table files: compact the
    // collection's attribute ranges (the rows family only) so those bytes are given back.
    // The commit is durable already; a failure here only delays that to RocksDB's own
    // compactions (and, like a failed write, has the store reopened by its next call). The
    // memtables (which hold the new chunks) are flushed first, so a failure to write them is
    // told apart from one of the compaction in the log.
    rocksdb::FlushOptions fo;
    fo.wait = true;
    rocksdb::Status flushed = db_->Flush(fo, handles_);
    if (!flushed.ok()) {
      write_failed_.store(true);
      rocksdb::Log(rocksdb::InfoLogLevel::WARN_LEVEL, layout_.db.info_log,
                   "Sieve: flushing before reclaiming the dropped columns of %s: %s",
                   Where(*altered).c_str(), flushed.ToString().c_str());
      return Status::OK();
    }
    for (uint32_t shard = 0; shard < spaces.size(); ++shard) {
      auto [begin, end] = PartKeys(fmt::kColumnsTag, spaces[shard], shard);
      const rocksdb::Slice b(begin), e(end);
      rocksdb::CompactRangeOptions co;
      co.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
      rocksdb::Status rs = db_->CompactRange(co, rows_, &b, &e);
      if (!rs.ok()) {
        write_failed_.store(true);
        rocksdb::Log(rocksdb::InfoLogLevel::WARN_LEVEL, layout_.db.info_log,
                     "Sieve: reclaiming the dropped columns of %s: %s",
                     Where(*altered, shard).c_str(), rs.ToString().c_str());
      }
    }
    return Status::OK();
  });
}

Status RocksStore::RenameCollection(const CollectionMeta& meta, const std::string& new_name,
                                    CollectionMeta* renamed) {
  return WithDb("RenameCollection", [&]() -> Status {
    const std::string where = "renaming " + Where(meta) + " to '" + new_name + "'";
    SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly(where));
    SIEVE_RETURN_IF_ERROR(RefuseWhileDiskFull(where));
    std::lock_guard<std::mutex> lock(create_mu_);
    CollectionMeta current;
    SIEVE_RETURN_IF_ERROR(ReadCurrentMeta(meta, &current));
    CollectionMeta next = current;
    next.spec.name = new_name;
    SIEVE_RETURN_IF_ERROR(fmt::ValidateSpec(next.spec).WithContext(where));
    if (new_name == current.spec.name) {
      *renamed = std::move(next);
      return Status::OK();
    }
    std::string value;
    rocksdb::Status rs = db_->Get(rocksdb::ReadOptions(), meta_, fmt::CollectionKey(new_name),
                                  &value);
    if (rs.ok()) return Status::AlreadyExists("collection '" + new_name + "' already exists");
    if (!rs.IsNotFound()) return FromRocks(rs, where);
    rs = db_->Get(rocksdb::ReadOptions(), meta_, fmt::AliasKey(new_name), &value);
    if (rs.ok()) return Status::AlreadyExists("'" + new_name + "' is an alias");
    if (!rs.IsNotFound()) return FromRocks(rs, where);
    std::vector<std::string> aliases;
    SIEVE_RETURN_IF_ERROR(AliasesOf(current.spec.name, &aliases));

    rocksdb::WriteBatch batch;
    SIEVE_RETURN_IF_ERROR(
        FromRocks(batch.Delete(meta_, fmt::CollectionKey(current.spec.name)), where));
    SIEVE_RETURN_IF_ERROR(
        FromRocks(batch.Put(meta_, fmt::CollectionKey(new_name), fmt::EncodeMeta(next)), where));
    for (const std::string& alias : aliases) {
      SIEVE_RETURN_IF_ERROR(FromRocks(
          batch.Put(meta_, fmt::AliasKey(alias), fmt::EncodeAlias(new_name)), where));
    }
    LedgerRecord record;
    record.kind = LedgerKind::kRename;
    record.collection_id = current.id;
    record.name = new_name;
    SIEVE_RETURN_IF_ERROR(Commit(&batch, std::move(record), where));
    *renamed = std::move(next);
    return Status::OK();
  });
}

Status RocksStore::PutAlias(const std::string& alias, const std::string& collection) {
  return WithDb("PutAlias", [&]() -> Status {
    const std::string where = "alias '" + alias + "' to collection '" + collection + "'";
    SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly(where));
    SIEVE_RETURN_IF_ERROR(RefuseWhileDiskFull(where));
    CollectionSpec probe;
    probe.name = alias;
    probe.dim = 1;
    Status valid = fmt::ValidateSpec(probe);
    if (!valid.ok()) {
      return Status::InvalidArgument("alias name: " + valid.message());
    }
    std::lock_guard<std::mutex> lock(create_mu_);
    std::string value;
    rocksdb::Status rs =
        db_->Get(rocksdb::ReadOptions(), meta_, fmt::CollectionKey(alias), &value);
    if (rs.ok()) {
      return Status::AlreadyExists("'" + alias +
                                   "' is a collection; an alias cannot take its name");
    }
    if (!rs.IsNotFound()) return FromRocks(rs, where);
    rs = db_->Get(rocksdb::ReadOptions(), meta_, fmt::CollectionKey(collection), &value);
    if (rs.IsNotFound()) {
      rs = db_->Get(rocksdb::ReadOptions(), meta_, fmt::AliasKey(collection), &value);
      if (rs.ok()) {
        return Status::InvalidArgument(where + ": '" + collection +
                                       "' is an alias; an alias names a collection");
      }
      if (!rs.IsNotFound()) return FromRocks(rs, where);
      return Status::NotFound("no collection named '" + collection + "'");
    }
    if (!rs.ok()) return FromRocks(rs, where);
    rocksdb::WriteBatch batch;
    SIEVE_RETURN_IF_ERROR(
        FromRocks(batch.Put(meta_, fmt::AliasKey(alias), fmt::EncodeAlias(collection)), where));
    LedgerRecord record;
    record.kind = LedgerKind::kAlias;
    record.name = alias;
    return Commit(&batch, std::move(record), where);
  });
}

Status RocksStore::DropAlias(const std::string& alias) {
  return WithDb("DropAlias", [&]() -> Status {
    const std::string where = "dropping alias '" + alias + "'";
    SIEVE_RETURN_IF_ERROR(RefuseIfReadOnly(where));
    SIEVE_RETURN_IF_ERROR(RefuseWhileDiskFull(where));
    std::lock_guard<std::mutex> lock(create_mu_);
    std::string value;
    rocksdb::Status rs = db_->Get(rocksdb::ReadOptions(), meta_, fmt::AliasKey(alias), &value);
    if (rs.IsNotFound()) return Status::NotFound("no alias named '" + alias + "'");
    SIEVE_RETURN_IF_ERROR(FromRocks(rs, where));
    rocksdb::WriteBatch batch;
    SIEVE_RETURN_IF_ERROR(FromRocks(batch.Delete(meta_, fmt::AliasKey(alias)), where));
    LedgerRecord record;
    record.kind = LedgerKind::kAlias;
    record.name = alias;
    return Commit(&batch, std::move(record), where);
  });
}

Status RocksStore::ListAliases(std::vector<std::pair<std::string, std::string>>* aliases) {
  aliases->clear();
  return WithDb("ListAliases", [&]() -> Status {
    const std::string prefix = fmt::kAliasKeyPrefix;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), meta_));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      const std::string key = it->key().ToString();
      std::string target;
      SIEVE_RETURN_IF_ERROR(fmt::DecodeAlias(it->value().ToStringView(), &target)
                                .WithContext("metadata key '" + key + "' in " + path_));
      aliases->emplace_back(key.substr(prefix.size()), std::move(target));
    }
    return FromRocks(it->status(), "listing the aliases of " + path_);
  });
}

}  // namespace sieve
