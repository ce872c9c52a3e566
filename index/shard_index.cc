// Copyright 2026 The Sieve Authors.

#include "index/shard_index.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "index/roaring_bridge.h"

namespace sieve {

namespace {

std::string ShardName(uint32_t shard) { return "shard " + std::to_string(shard); }

// A chunk decoded from storage must match the schema before the indexes trust it.
Status CheckChunk(const Chunk& chunk, uint32_t dim, const std::vector<AttributeIndex>& attrs) {
  const size_t n = chunk.num_rows;
  const std::string where = "chunk at ordinal " + std::to_string(chunk.first_ordinal);
  if (chunk.ids.size() != n) return Status::Corruption(where + ": id count differs from rows");
  if (chunk.vectors.size() != n * dim) {
    return Status::Corruption(where + ": vector data is not rows x dim floats");
  }
  if (chunk.columns.size() != attrs.size()) {
    return Status::Corruption(where + ": " + std::to_string(chunk.columns.size()) +
                              " attribute columns, schema has " + std::to_string(attrs.size()));
  }
  for (size_t a = 0; a < attrs.size(); ++a) {
    const Column& c = chunk.columns[a];
    bool ok = c.type == attrs[a].type() && c.size() == n;
    if (ok) {
      switch (c.type) {
        case AttrType::kInt:
        case AttrType::kBool:
          ok = c.ints.size() == n;
          break;
        case AttrType::kFloat:
          ok = c.floats.size() == n;
          break;
        case AttrType::kString:
          ok = c.strings.size() == n;
          break;
        case AttrType::kText:
          ok = c.strings.size() == n && (c.segment == nullptr || c.segment->num_rows == n);
          break;
        case AttrType::kTags:
          ok = c.tags.size() == n;
          break;
      }
    }
    if (!ok) {
      return Status::Corruption(where + ": column " + std::to_string(a) +
                                " does not match its attribute's type or the row count");
    }
  }
  return Status::OK();
}

}  // namespace

namespace {

std::atomic<uint64_t> next_instance{1};

}  // namespace

ShardIndex::ShardIndex(const CollectionSpec& spec, uint32_t shard)
    : instance_(next_instance.fetch_add(1, std::memory_order_relaxed)),
      shard_(shard),
      vectors_(std::make_shared<VectorArena>(spec.dim)) {
  attributes_.reserve(spec.attributes.size());
  for (const AttributeSpec& a : spec.attributes) {
    attributes_.emplace_back(a.type);
    text_.push_back(a.type == AttrType::kText
                        ? std::make_unique<TextIndex>(a.analyzer.empty() ? kDefaultTextAnalyzer
                                                                         : a.analyzer)
                        : nullptr);
  }
}

RowSet ShardIndex::Live() const {
  RowSet live = RowSet::Range(0, rows());
  live -= deleted_;
  return live;
}

bool ShardIndex::FindLive(int64_t id, uint32_t* ordinal) const {
  auto it = live_ids_.find(id);
  if (it == live_ids_.end()) return false;
  *ordinal = it->second;
  return true;
}

Status ShardIndex::Load(Store* store, const CollectionMeta& meta, bool vectors) {
  ++version_;
  const std::string shard_name = ShardName(shard_);
  if (rows() != 0) return Status::InvalidArgument(shard_name + ": Load on a non-empty index");
  ShardState state;
  SIEVE_RETURN_IF_ERROR(store->ReadShardState(meta, shard_, &state));
  RowSet deleted;
  if (state.deleted != nullptr) deleted = FromRoaring(*state.deleted);
  has_vectors_ = vectors;
  if (state.next_ordinal > 0) {
    ids_.reserve(state.next_ordinal);
    if (vectors) vectors_->Reserve(state.next_ordinal);
  }
  const uint32_t parts = vectors ? kChunkAll : (kChunkIds | kChunkColumns);
  SIEVE_RETURN_IF_ERROR(store->ScanChunks(meta, shard_, parts, [&](Chunk&& chunk) {
    if (chunk.first_ordinal != rows()) {
      return Status::Corruption(shard_name + ": chunk starts at ordinal " +
                                std::to_string(chunk.first_ordinal) + ", expected " +
                                std::to_string(rows()));
    }
    if (uint64_t{chunk.first_ordinal} + chunk.num_rows > state.next_ordinal) {
      return Status::Corruption(shard_name + ": chunk at ordinal " +
                                std::to_string(chunk.first_ordinal) + " ends past next_ordinal " +
                                std::to_string(state.next_ordinal));
    }
    SIEVE_RETURN_IF_ERROR(
        CheckChunk(chunk, vectors ? vectors_->dim() : 0, attributes_).WithContext(shard_name));
    ApplyChunk(chunk);
    return Status::OK();
  }));
  if (rows() != state.next_ordinal) {
    return Status::Corruption(shard_name + ": chunks hold " + std::to_string(rows()) +
                              " rows, state says " + std::to_string(state.next_ordinal));
  }
  if (deleted.End() > rows()) {
    return Status::Corruption(shard_name + ": deleted ordinal " +
                              std::to_string(deleted.End() - 1) + " beyond the " +
                              std::to_string(rows()) + " rows");
  }
  if (rows() - deleted.Cardinality() != state.live_rows) {
    return Status::Corruption(shard_name + ": live row count " + std::to_string(state.live_rows) +
                              " disagrees with " + std::to_string(rows()) + " rows minus " +
                              std::to_string(deleted.Cardinality()) + " deleted");
  }
  SetDeleted(deleted);
  // Sort the range indexes now: the first query after opening should not pay for the load.
  for (const AttributeIndex& a : attributes_) a.BuildRangeIndex();
  return Status::OK();
}

std::shared_ptr<const std::vector<std::pair<int64_t, uint32_t>>> ShardIndex::SortedLive() const {
  std::lock_guard<std::mutex> lock(sorted_mu_);
  if (sorted_live_ == nullptr) {
    auto sorted = std::make_shared<std::vector<std::pair<int64_t, uint32_t>>>(live_ids_.begin(),
                                                                              live_ids_.end());
    std::sort(sorted->begin(), sorted->end());
    sorted_live_ = std::move(sorted);
  }
  return sorted_live_;
}

RowSet ShardIndex::IdRange(int64_t lo, int64_t hi) const {
  if (lo > hi) return RowSet();
  auto sorted = SortedLive();
  auto b = std::lower_bound(sorted->begin(), sorted->end(), std::make_pair(lo, uint32_t{0}));
  auto e = std::upper_bound(b, sorted->end(), std::make_pair(hi, UINT32_MAX));
  std::vector<uint32_t> ords;
  ords.reserve(e - b);
  for (auto it = b; it != e; ++it) ords.push_back(it->second);
  return RowSet::Of(ords.data(), ords.size());
}

std::shared_ptr<ShardIndex> ShardIndex::CopyForWrite() const {
  std::shared_ptr<ShardIndex> copy(new ShardIndex(*this, CopyTag()));
  return copy;
}

ShardIndex::ShardIndex(const ShardIndex& other, CopyTag)
    : instance_(other.instance_),
      version_(other.version_),
      shard_(other.shard_),
      vectors_(other.vectors_),
      has_vectors_(other.has_vectors_),
      ids_(other.ids_),
      live_ids_(other.live_ids_),
      deleted_(other.deleted_) {
  attributes_.reserve(other.attributes_.size());
  for (const AttributeIndex& a : other.attributes_) attributes_.push_back(a.Copy());
  for (const auto& t : other.text_) {
    text_.push_back(t == nullptr ? nullptr : std::make_unique<TextIndex>(t->Copy()));
  }
  std::lock_guard<std::mutex> lock(other.sorted_mu_);
  sorted_live_ = other.sorted_live_;
}

void ShardIndex::SetValue(size_t attr, uint32_t ordinal, const Value& value) {
  ++version_;
  if (text_[attr] != nullptr && ordinal < rows()) {
    const Value old = attributes_[attr].ValueAt(ordinal);
    text_[attr]->Set(ordinal, std::get_if<std::string>(&old), std::get_if<std::string>(&value));
  }
  attributes_[attr].Set(ordinal, value);
}

void ShardIndex::ApplyChunk(const Chunk& chunk) {
  ++version_;
  {
    std::lock_guard<std::mutex> lock(sorted_mu_);
    sorted_live_.reset();
  }
  const uint32_t base = rows();
  const uint32_t n = chunk.num_rows;
  if (has_vectors_) {
    if (vectors_.use_count() > 1 && !vectors_->HasRoomFor(n)) {
      // Another image reads these rows: growing in place would move them under it.
      vectors_ = vectors_->CopyWithRoom(std::max<size_t>(size_t{rows()} + n, size_t{rows()} * 2));
    }
    vectors_->Append(chunk.vectors.data(), n);
  }
  ids_.insert(ids_.end(), chunk.ids.begin(), chunk.ids.begin() + n);
  for (uint32_t i = 0; i < n; ++i) live_ids_[chunk.ids[i]] = base + i;
  for (size_t a = 0; a < attributes_.size(); ++a) {
    attributes_[a].Append(chunk.columns[a]);
    if (text_[a] == nullptr) continue;
    const Column& c = chunk.columns[a];
    if (c.segment != nullptr && c.segment->num_rows == n && c.text_changed.empty()) {
      text_[a]->Append(*c.segment, c.valid);
      continue;
    }
    std::shared_ptr<const TextAnalyzer> analyzer;
    TextSegment segment;
    if (!TextAnalyzer::Get(text_[a]->analyzer(), &analyzer).ok() ||
        !BuildTextSegment(*analyzer, c.strings, c.valid, &segment).ok()) {
      throw std::bad_alloc();
    }
    text_[a]->Append(segment, c.valid);
  }
}

void ShardIndex::SetDeleted(const RowSet& deleted) {
  ++version_;
  {
    std::lock_guard<std::mutex> lock(sorted_mu_);
    sorted_live_.reset();
  }
  RowSet newly = deleted - deleted_;
  for (auto& t : text_) {
    if (t != nullptr) t->Delete(newly);
  }
  newly.ForEach([this](uint32_t ordinal) {
    if (ordinal >= ids_.size()) return;
    auto it = live_ids_.find(ids_[ordinal]);
    // The id may since belong to a newer live row; only drop the mapping of this one.
    if (it != live_ids_.end() && it->second == ordinal) live_ids_.erase(it);
  });
  deleted_ = deleted;
}

}  // namespace sieve
