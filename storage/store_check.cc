// Copyright 2026 The Sieve Authors.
//
// RocksStore::CheckFormat: reads every live file of the store in full and every chunk, and
// reports each problem on one line naming the file, collection, shard and ordinal.
// RocksStore::CheckStructure: the same without the whole-file digests and the vectors' values.

#include <rocksdb/db.h>
#include <rocksdb/metadata.h>
#include <rocksdb/sst_file_reader.h>
#include <rocksdb/table.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "storage/file_checksum.h"
#include "storage/format.h"
#include "storage/roaring.h"
#include "storage/rocks_store.h"

namespace sieve {

namespace {

namespace fmt = ::sieve::format;

// Problems past this many are counted but not listed, so a badly damaged store cannot make
// CheckFormat's report unbounded.
constexpr size_t kMaxProblemLines = 1000;
constexpr size_t kReadBlock = 4 << 20;

class ProblemList {
 public:
  explicit ProblemList(std::vector<std::string>* out) : out_(out) {}
  void Add(std::string line) {
    if (count_ == 0) first_ = line;
    ++count_;
    if (out_ != nullptr && count_ <= kMaxProblemLines) out_->push_back(std::move(line));
  }
  Status Result() const {
    if (count_ == 0) return Status::OK();
    if (out_ != nullptr && count_ > kMaxProblemLines) {
      out_->push_back("... and " + Num(count_ - kMaxProblemLines) + " more problems");
    }
    return Status::Corruption(Num(count_) + " problems found: " + first_);
  }

 private:
  std::vector<std::string>* out_;
  size_t count_ = 0;
  std::string first_;
};

struct ChunkSpan {
  uint32_t first;
  uint32_t rows;
  bool operator==(const ChunkSpan&) const = default;
};

struct CheckedShard {
  bool state_present = false;
  std::optional<ShardState> state;
  std::map<char, std::vector<ChunkSpan>> spans;  // by part tag
};

struct CheckedCollection {
  CollectionMeta meta;
  std::vector<CheckedShard> shards;
  std::unordered_set<int64_t> live_ids;
};


// XXH3-64 of a whole file, read in large blocks.
Status DigestFile(rocksdb::Env* env, const std::string& path, uint64_t* digest) {
  std::unique_ptr<rocksdb::SequentialFile> file;
  rocksdb::Status rs = env->NewSequentialFile(path, &file, rocksdb::EnvOptions());
  if (!rs.ok()) return FromRocks(rs, "opening " + path);
  Xxh3Stream stream;
  std::string scratch(kReadBlock, '\0');
  while (true) {
    rocksdb::Slice got;
    rs = file->Read(scratch.size(), &got, scratch.data());
    if (!rs.ok()) return FromRocks(rs, "reading " + path);
    if (got.empty()) break;
    stream.Update(got.data(), got.size());
  }
  *digest = stream.Digest();
  return Status::OK();
}

// "collection 'c' shard 0 ordinals 0.." for the chunk keys at the ends of a file's key range.
std::string DescribeKeyRange(const std::string& smallest, const std::string& largest,
                             const std::map<uint32_t, CheckedCollection>& collections) {
  char tag = 0, tag2 = 0;
  uint32_t cid = 0, shard = 0, first = 0, cid2 = 0, shard2 = 0, last = 0;
  if (!fmt::ParseChunkKey(smallest, &tag, &cid, &shard, &first) ||
      !fmt::ParseChunkKey(largest, &tag2, &cid2, &shard2, &last)) {
    return "";
  }
  auto name = [&](uint32_t id) {
    auto it = collections.find(id);
    return it == collections.end() ? "collection id " + Num(id)
                                   : "collection '" + it->second.meta.spec.name + "'";
  };
  if (cid == cid2 && shard == shard2) {
    if (first == last) {
      return "; holds the chunk of " + name(cid) + " shard " + Num(shard) + " at ordinal " +
             Num(first);
    }
    return "; holds chunks of " + name(cid) + " shard " + Num(shard) + " at ordinals " +
           Num(first) + ".." + Num(last);
  }
  return "; holds chunks from " + name(cid) + " shard " + Num(shard) + " ordinal " + Num(first) +
         " to " + name(cid2) + " shard " + Num(shard2) + " ordinal " + Num(last);
}

}  // namespace

Status RocksStore::DoCheckFormat(std::vector<std::string>* problems, bool whole) {
  ProblemList report(problems);
  SnapshotGuard snapshot(db_.get());
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot.get();
  ro.readahead_size = kScanReadahead;
  ro.fill_cache = false;

  std::map<uint32_t, CheckedCollection> collections;
  std::optional<uint32_t> next_id;
  std::vector<std::pair<std::string, std::string>> shard_values;
  std::set<uint32_t> pending_spaces;  // compactions that have not committed
  std::map<uint32_t, std::pair<uint32_t, uint32_t>> space_owner;  // space → (collection, shard)
  std::vector<std::pair<std::string, std::string>> aliases;  // (alias, collection)
  {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, meta_));
    const std::string_view collection_prefix = fmt::kCollectionKeyPrefix;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const std::string key = it->key().ToString();
      const std::string_view value = it->value().ToStringView();
      if (key == fmt::kFormatVersionKey) {
        if (value.size() != 4 || fmt::GetFixed32(value.data()) != fmt::kFormatVersion) {
          report.Add("metadata: format_version is not " + Num(fmt::kFormatVersion));
        }
      } else if (key == fmt::kNextCollectionIdKey) {
        if (value.size() != 4) {
          report.Add("metadata: next_collection_id is " + Num(value.size()) + " bytes, expected 4");
        } else {
          next_id = fmt::GetFixed32(value.data());
        }
      } else if (key == fmt::kCommitSeqKey) {
        if (value.size() != 8) {
          report.Add("metadata: commit_seq is " + Num(value.size()) + " bytes, expected 8");
        }
      } else if (key.rfind(fmt::kSettingKeyPrefix, 0) == 0) {
        // A setting's value is opaque to the store.
      } else if (key.rfind(fmt::kAliasKeyPrefix, 0) == 0) {
        std::string target;
        Status s = fmt::DecodeAlias(value, &target);
        if (!s.ok()) {
          report.Add("metadata key '" + key + "': " + s.message());
        } else {
          aliases.emplace_back(key.substr(std::string_view(fmt::kAliasKeyPrefix).size()),
                               std::move(target));
        }
      } else if (key.compare(0, collection_prefix.size(), collection_prefix) == 0) {
        CollectionMeta m;
        Status s = fmt::DecodeMeta(value, &m);
        if (!s.ok()) {
          report.Add("metadata key '" + key + "': " + s.message());
        } else if (fmt::CollectionKey(m.spec.name) != key) {
          report.Add("metadata key '" + key + "' holds collection '" + m.spec.name + "'");
        } else if (collections.count(m.id)) {
          report.Add(Where(m) + ": id already used by collection '" +
                     collections[m.id].meta.spec.name + "'");
        } else {
          CheckedCollection& c = collections[m.id];
          c.shards.resize(m.spec.shards);
          c.meta = std::move(m);
        }
      } else {
        uint32_t cid = 0, shard = 0, space = 0;
        if (fmt::ParseSpaceKey(key, &space)) {
          pending_spaces.insert(space);
        } else if (fmt::ParseShardStateKey(key, &cid, &shard)) {
          shard_values.emplace_back(key, std::string(value));
        } else {
          report.Add("metadata: stray key of " + Num(key.size()) + " bytes starting '" +
                     key.substr(0, 32) + "'");
        }
      }
    }
    if (!it->status().ok()) return FromRocks(it->status(), "checking metadata of " + path_);
  }
  {
    std::set<std::string> names;
    for (const auto& [id, c] : collections) names.insert(c.meta.spec.name);
    for (const auto& [alias, target] : aliases) {
      if (names.count(alias)) {
        report.Add("alias '" + alias + "' has the name of a collection");
      }
      if (!names.count(target)) {
        report.Add("alias '" + alias + "' names collection '" + target + "', which does not exist");
      }
    }
  }
  if (!next_id) {
    report.Add("metadata: next_collection_id is missing");
  } else if (!collections.empty() && collections.rbegin()->first >= *next_id) {
    report.Add(Where(collections.rbegin()->second.meta) + ": id is not below next_collection_id " +
               Num(*next_id));
  }
  for (const auto& [key, value] : shard_values) {
    uint32_t cid = 0, shard = 0;
    fmt::ParseShardStateKey(key, &cid, &shard);
    auto c = collections.find(cid);
    if (c == collections.end()) {
      report.Add("shard state for unknown collection id " + Num(cid) + " shard " + Num(shard));
      continue;
    }
    const CollectionMeta& m = c->second.meta;
    if (shard >= m.spec.shards) {
      report.Add(Where(m, shard) + ": shard state beyond the collection's " + Num(m.spec.shards) +
                 " shards");
      continue;
    }
    c->second.shards[shard].state_present = true;
    ShardState state;
    Status s = fmt::DecodeShardState(value, &state);
    if (s.ok()) s = fmt::CheckShardState(state);
    if (!s.ok()) {
      report.Add(Where(m, shard) + ": shard state: " + s.message());
      continue;
    }
    if (state.space != 0) {
      if (collections.count(state.space) || pending_spaces.count(state.space) ||
          !space_owner.emplace(state.space, std::make_pair(cid, shard)).second) {
        report.Add(Where(m, shard) + ": shard state names key space " + Num(state.space) +
                   ", which is in use elsewhere");
      }
    }
    c->second.shards[shard].state = std::move(state);
  }
  for (auto& [cid, c] : collections) {
    for (uint32_t s = 0; s < c.shards.size(); ++s) {
      if (!c.shards[s].state_present) {
        report.Add(Where(c.meta, s) + ": shard state is missing");
      }
    }
  }

  // Every live table and blob file in full: block checksums, then the whole-file digest the
  // MANIFEST recorded when the file was written.
  if (whole) {
    // Files a background compaction makes obsolete stay on disk until the check is done.
    const bool paused = db_->DisableFileDeletions().ok();
    struct Resume {
      rocksdb::DB* db;
      bool paused;
      ~Resume() {
        if (paused) (void)db->EnableFileDeletions(/*force=*/false);
      }
    } resume{db_.get(), paused};
    std::vector<rocksdb::LiveFileMetaData> files;
    db_->GetLiveFilesMetaData(&files);
    std::sort(files.begin(), files.end(),
              [](const auto& a, const auto& b) { return a.file_number < b.file_number; });
    for (const rocksdb::LiveFileMetaData& f : files) {
      const std::string file = f.directory + "/" + f.relative_filename;
      const std::string what = "file " + file + " (" + f.column_family_name + " family" +
                               DescribeKeyRange(f.smallestkey, f.largestkey, collections) + ")";
      rocksdb::Options options;
      options.env = env_;
      rocksdb::SstFileReader reader(options);
      rocksdb::Status rs = reader.Open(file);
      rocksdb::ReadOptions vro;
      vro.verify_checksums = true;
      vro.fill_cache = false;
      if (rs.ok()) rs = reader.VerifyChecksum(vro);
      if (!rs.ok()) {
        report.Add(what + ": " + rs.ToString());
        continue;
      }
      if (f.file_checksum_func_name == kFileChecksumName) {
        uint64_t digest = 0;
        Status s = DigestFile(env_, file, &digest);
        if (!s.ok()) {
          report.Add(what + ": " + s.ToString());
        } else if (EncodeFileChecksum(digest) != f.file_checksum) {
          report.Add(what + ": the file's XXH3 digest differs from the one recorded when it was "
                            "written (the file is damaged)");
        }
      }
    }
    for (rocksdb::ColumnFamilyHandle* family : {meta_, vectors_, rows_}) {
      rocksdb::ColumnFamilyMetaData cf;
      db_->GetColumnFamilyMetaData(family, &cf);
      for (const rocksdb::BlobMetaData& b : cf.blob_files) {
        const std::string file = b.blob_file_path + "/" + b.blob_file_name;
        // RocksDB 7.8 fills the two fields in either order; the function name tells them apart.
        const bool ours_first = b.checksum_method == kFileChecksumName;
        const std::string& recorded = ours_first ? b.checksum_value : b.checksum_method;
        if (!ours_first && b.checksum_value != kFileChecksumName) continue;
        uint64_t digest = 0;
        Status s = DigestFile(env_, file, &digest);
        if (!s.ok()) {
          report.Add("blob file " + file + " (" + cf.name + " family): " + s.ToString());
        } else if (EncodeFileChecksum(digest) != recorded) {
          report.Add("blob file " + file + " (" + cf.name +
                     " family): the file's XXH3 digest differs from the one recorded when it "
                     "was written (the file is damaged)");
        }
      }
    }
  }

  // Every chunk of both chunk families, decoded and checked. A family whose iterator stops at
  // an unreadable block is probed chunk by chunk at the boundaries the other family shows, so
  // each unreadable chunk is named with the file RocksDB found damaged.
  std::vector<float> vectors;
  std::vector<int64_t> ids;
  std::set<std::string> visited;
  std::map<std::string, uint32_t> boundary_rows;  // chunk key without its tag → rows
  auto check_chunk = [&](std::string_view key, const rocksdb::Slice* value,
                         const rocksdb::Status& read_status, const char* family_name) {
    char tag = 0;
    uint32_t cid = 0, shard = 0, first = 0;
    if (!fmt::ParseChunkKey(key, &tag, &cid, &shard, &first)) {
      report.Add(std::string(family_name) + ": stray key of " + Num(key.size()) + " bytes");
      return;
    }
    visited.insert(std::string(key));
    // Chunks of a compaction that has not committed: invisible, removed at the next open.
    if (pending_spaces.count(cid)) return;
    const uint32_t space = cid;
    if (auto owner = space_owner.find(space); owner != space_owner.end()) {
      cid = owner->second.first;
      if (shard != owner->second.second) {
        report.Add(std::string(family_name) + ": " + PartName(tag) + " chunk in key space " +
                   Num(space) + " names shard " + Num(shard) + ", the space belongs to shard " +
                   Num(owner->second.second));
        return;
      }
    }
    auto c = collections.find(cid);
    if (c == collections.end()) {
      report.Add(std::string(family_name) + ": " + PartName(tag) +
                 " chunk of unknown collection id " + Num(cid) + " shard " + Num(shard) +
                 " ordinal " + Num(first));
      return;
    }
    CheckedCollection& col = c->second;
    const CollectionMeta& m = col.meta;
    if (shard >= m.spec.shards) {
      report.Add(Where(m, shard, first) + ": " + PartName(tag) +
                 " chunk beyond the collection's " + Num(m.spec.shards) + " shards");
      return;
    }
    const auto& state = col.shards[shard].state;
    if (state && SpaceOf(m, *state) != space) {
      report.Add(Where(m, shard, first) + ": " + PartName(tag) + " chunk in key space " +
                 Num(space) + ", which the shard no longer uses");
      return;
    }
    if (tag == fmt::kVectorsTag && state && first >= state->next_ordinal) {
      // Ingested by an append that has not committed: invisible, removed by the next append.
      return;
    }
    const std::string where = Where(m, shard, first) + ": " + PartName(tag) + " chunk: ";
    const std::string boundary = std::string(key.substr(1));
    if (!read_status.ok()) {
      report.Add(where + "cannot be read: " + read_status.ToString());
      // Counted as present with the rows another part shows, so no gap is reported twice.
      auto b = boundary_rows.find(boundary);
      if (b != boundary_rows.end()) col.shards[shard].spans[tag].push_back({first, b->second});
      return;
    }
    const std::string_view v = value->ToStringView();
    uint32_t rows = 0;
    Status s;
    if (tag == fmt::kVectorsTag) {
      s = fmt::DecodeVectors(v, m.spec.dim, m.spec.dtype, &rows, whole ? &vectors : nullptr);
      if (s.ok() && whole) s = fmt::CheckFinite(vectors, m.spec.dim);
    } else if (tag == fmt::kIdsTag) {
      s = fmt::DecodeIds(v, &rows, &ids);
      for (uint32_t r = 0; s.ok() && r < rows; ++r) {
        const uint64_t ordinal = uint64_t{first} + r;
        const bool live = state && ordinal < state->next_ordinal &&
                          !state->deleted->contains(static_cast<uint32_t>(ordinal));
        if (live && !col.live_ids.insert(ids[r]).second) {
          report.Add(Where(m, shard, static_cast<uint32_t>(ordinal)) + ": live id " +
                     std::to_string(ids[r]) + " is not unique in the collection");
        }
      }
    } else {
      s = fmt::DecodeColumns(v, m.spec.attributes, &rows, nullptr);
    }
    if (s.ok() && rows == 0) s = Status::Corruption("empty chunk");
    if (!s.ok()) {
      report.Add(where + s.message());
      return;
    }
    boundary_rows.emplace(boundary, rows);
    col.shards[shard].spans[tag].push_back(ChunkSpan{first, rows});
  };
  struct FamilyScan {
    rocksdb::ColumnFamilyHandle* family;
    const char* name;
    std::vector<char> tags;
    Status failure;       // why its iterator stopped
    size_t unreadable = 0;  // chunks found unreadable by probing
  };
  std::vector<FamilyScan> scans = {{rows_, fmt::kRowsFamily, {fmt::kIdsTag, fmt::kColumnsTag}},
                                   {vectors_, fmt::kVectorsFamily, {fmt::kVectorsTag}}};
  for (FamilyScan& scan : scans) {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, scan.family));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const char tag = it->key().size() > 0 ? it->key()[0] : 0;
      if (std::find(scan.tags.begin(), scan.tags.end(), tag) == scan.tags.end()) {
        report.Add(std::string(scan.name) + ": stray key of " + Num(it->key().size()) + " bytes");
        continue;
      }
      const rocksdb::Slice value = it->value();
      check_chunk(it->key().ToStringView(), &value, rocksdb::Status::OK(), scan.name);
    }
    if (!it->status().ok()) scan.failure = FromRocks(it->status(), scan.name);
  }
  for (FamilyScan& scan : scans) {
    if (scan.failure.ok()) continue;
    std::vector<std::string> probes;
    for (const auto& [boundary, rows] : boundary_rows) {
      for (char tag : scan.tags) {
        std::string key = std::string(1, tag) + boundary;
        if (!visited.count(key)) probes.push_back(std::move(key));
      }
    }
    std::sort(probes.begin(), probes.end());
    for (const std::string& key : probes) {
      rocksdb::PinnableSlice value;
      rocksdb::Status rs = db_->Get(ro, scan.family, key, &value);
      if (rs.IsNotFound()) continue;
      const rocksdb::Slice slice(value.data(), value.size());
      check_chunk(key, &slice, rs, scan.name);
      if (!rs.ok()) ++scan.unreadable;
    }
    if (scan.unreadable == 0) {
      report.Add(std::string(scan.name) + " family: reading stopped: " + scan.failure.message());
    }
  }

  for (const auto& [cid, c] : collections) {
    for (uint32_t s = 0; s < c.shards.size(); ++s) {
      const CheckedShard& shard = c.shards[s];
      if (!shard.state) continue;
      const uint32_t end = shard.state->next_ordinal;
      for (char tag : {fmt::kVectorsTag, fmt::kIdsTag, fmt::kColumnsTag}) {
        auto found = shard.spans.find(tag);
        const std::vector<ChunkSpan> none;
        const std::vector<ChunkSpan>& spans = found == shard.spans.end() ? none : found->second;
        uint64_t next = 0;
        for (const ChunkSpan& span : spans) {
          if (span.first != next) {
            report.Add(Where(c.meta, s, span.first) + ": " + PartName(tag) + " chunk " +
                       (span.first < next ? "overlaps the previous chunk, which ends at "
                                          : "leaves a gap after ordinal ") +
                       Num(next));
          }
          next = std::max<uint64_t>(next, uint64_t{span.first} + span.rows);
        }
        if (next != end) {
          report.Add(Where(c.meta, s) + ": " + PartName(tag) + " chunks end at ordinal " +
                     Num(next) + ", the shard state says next_ordinal " + Num(end));
        }
        if (tag != fmt::kVectorsTag) {
          auto vec = shard.spans.find(fmt::kVectorsTag);
          if (vec != shard.spans.end() && vec->second != spans) {
            report.Add(Where(c.meta, s) + ": " + PartName(tag) +
                       " chunk boundaries differ from the vector chunk boundaries");
          }
        }
      }
    }
  }
  return report.Result();
}

}  // namespace sieve
