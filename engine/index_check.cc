// Copyright 2026 The Sieve Authors.
//
// DBImpl::Check: the store's own format check, then every shard's in-memory indexes rebuilt
// from the rows and compared with what the rows hold.

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/db_impl.h"
#include "engine/db_util.h"
#include "index/text_index.h"
#include "text/text_analyzer.h"
#include "text/text_segment.h"

namespace sieve {

namespace {

// Rebuilds, from the rows alone, what every attribute index of `shard` must answer, and
// reports each disagreement: values, null sets, equality and tag postings, and the id map.
void VerifyShardIndex(const CollectionMeta& meta, const ShardIndex& shard, Store* store,
                      std::vector<std::string>* problems) {
  const auto& attrs = meta.spec.attributes;
  std::vector<std::vector<uint32_t>> nulls(attrs.size());
  std::vector<std::map<int64_t, std::vector<uint32_t>>> int_post(attrs.size());
  std::vector<std::map<std::string, std::vector<uint32_t>>> str_post(attrs.size());
  std::unordered_map<int64_t, uint32_t> live_ids;
  auto complain = [&](std::string p) {
    if (problems->size() < 100) problems->push_back(std::move(p));
  };
  // Text attributes: the index the rows make through the analyzer, to hold the stored one to.
  std::vector<std::unique_ptr<TextIndex>> text(attrs.size());
  std::vector<std::shared_ptr<const TextAnalyzer>> analyzers(attrs.size());
  for (size_t a = 0; a < attrs.size(); ++a) {
    if (shard.text(a) == nullptr) continue;
    text[a] = std::make_unique<TextIndex>(shard.text(a)->analyzer());
    Status s = TextAnalyzer::Get(shard.text(a)->analyzer(), &analyzers[a]);
    if (!s.ok()) {
      complain("attribute '" + attrs[a].name + "': " + s.ToString());
      text[a].reset();
    }
  }
  Status s = store->ScanChunks(meta, shard.shard(), kChunkIds | kChunkColumns, [&](Chunk&& ch) {
    for (uint32_t i = 0; i < ch.num_rows; ++i) {
      const uint32_t ord = ch.first_ordinal + i;
      if (ord >= shard.rows()) {
        complain("row " + std::to_string(ord) + " is beyond the loaded rows");
        continue;
      }
      if (shard.id(ord) != ch.ids[i]) complain("row " + std::to_string(ord) + ": id differs");
      if (!shard.deleted().Contains(ord)) {
        if (!live_ids.emplace(ch.ids[i], ord).second) {
          complain("id " + std::to_string(ch.ids[i]) + " is live in two rows");
        }
      }
      for (size_t a = 0; a < attrs.size(); ++a) {
        if (attrs[a].type == AttrType::kText) continue;  // below, a chunk at a time
        Value v = ch.columns[a].Get(i);
        if (shard.attribute(a).ValueAt(ord) != v) {
          complain("row " + std::to_string(ord) + ", attribute '" + attrs[a].name +
                   "': index holds " + ValueText(shard.attribute(a).ValueAt(ord)) +
                   ", row holds " + ValueText(v));
        }
        if (IsNull(v)) {
          nulls[a].push_back(ord);
        } else if (auto* x = std::get_if<int64_t>(&v)) {
          int_post[a][*x].push_back(ord);
        } else if (auto* b = std::get_if<bool>(&v)) {
          int_post[a][*b ? 1 : 0].push_back(ord);
        } else if (auto* str = std::get_if<std::string>(&v)) {
          str_post[a][*str].push_back(ord);
        } else if (auto* tags = std::get_if<std::vector<std::string>>(&v)) {
          for (auto& t : *tags) {
            auto& post = str_post[a][t];
            if (post.empty() || post.back() != ord) post.push_back(ord);
          }
        }
      }
    }
    for (size_t a = 0; a < attrs.size(); ++a) {
      if (text[a] == nullptr) continue;
      const Column& col = ch.columns[a];
      for (uint32_t i = 0; i < ch.num_rows && ch.first_ordinal + i < shard.rows(); ++i) {
        const Value v = col.Get(i);
        if (shard.attribute(a).ValueAt(ch.first_ordinal + i) != v) {
          complain("row " + std::to_string(ch.first_ordinal + i) + ", attribute '" +
                   attrs[a].name + "': index holds another text than the row");
        }
        if (IsNull(v)) nulls[a].push_back(ch.first_ordinal + i);
      }
      TextSegment rebuilt;
      Status bs = BuildTextSegment(*analyzers[a], col.strings, col.valid, &rebuilt);
      if (!bs.ok()) {
        complain("attribute '" + attrs[a].name + "', chunk at ordinal " +
                 std::to_string(ch.first_ordinal) + ": " + bs.ToString());
        text[a].reset();
        continue;
      }
      // What the store keeps beside the column must be what the analyzer makes of it.
      if (col.segment == nullptr || !(*col.segment == rebuilt)) {
        complain("attribute '" + attrs[a].name + "', chunk at ordinal " +
                 std::to_string(ch.first_ordinal) +
                 ": the stored text index differs from the one its texts make");
      }
      text[a]->Append(rebuilt, col.valid);
    }
    return Status::OK();
  });
  if (!s.ok()) {
    complain(s.ToString());
    return;
  }
  for (size_t a = 0; a < attrs.size(); ++a) {
    if (text[a] == nullptr) continue;
    text[a]->Delete(shard.deleted());
    const std::string diff = shard.text(a)->Difference(*text[a]);
    if (!diff.empty()) complain("attribute '" + attrs[a].name + "': text index: " + diff);
  }
  for (size_t a = 0; a < attrs.size(); ++a) {
    const AttributeIndex& idx = shard.attribute(a);
    const std::string name = "attribute '" + attrs[a].name + "'";
    if (idx.nulls() != RowSet::Of(nulls[a].data(), nulls[a].size())) {
      complain(name + ": null set disagrees with the rows");
    }
    for (auto& [value, ords] : int_post[a]) {
      if (idx.EqualInt(value) != RowSet::Of(ords.data(), ords.size())) {
        complain(name + ": posting of " + std::to_string(value) + " disagrees with the rows");
      }
    }
    for (auto& [value, ords] : str_post[a]) {
      RowSet got = attrs[a].type == AttrType::kTags ? idx.ContainsTag(value)
                                                    : idx.EqualString(value);
      if (got != RowSet::Of(ords.data(), ords.size())) {
        complain(name + ": posting of '" + value + "' disagrees with the rows");
      }
    }
  }
  for (auto& [id, ord] : live_ids) {
    uint32_t got;
    if (!shard.FindLive(id, &got) || got != ord) {
      complain("id " + std::to_string(id) + ": id map disagrees with the rows");
    }
  }
  if (live_ids.size() != shard.live_rows()) {
    complain("live rows: " + std::to_string(shard.live_rows()) + " counted, " +
             std::to_string(live_ids.size()) + " found");
  }
}

}  // namespace

Status DBImpl::Check(std::vector<std::string>* report) {
  report->clear();
  // The indexes are rebuilt from the same chunks: over damaged ones they would only repeat
  // what the storage check found.
  SIEVE_RETURN_IF_ERROR(store_->CheckFormat(report));
  std::vector<CollectionMeta> metas;
  SIEVE_RETURN_IF_ERROR(store_->ListCollections(&metas));
  for (const auto& meta : metas) {
    // Rebuild the image from storage and verify every attribute index against the rows.
    for (uint32_t sh = 0; sh < meta.spec.shards; ++sh) {
      ShardIndex shard(meta.spec, sh);
      Status ls = shard.Load(store_.get(), meta);
      const std::string where =
          "collection '" + meta.spec.name + "' shard " + std::to_string(sh) + ": ";
      if (!ls.ok()) {
        report->push_back(where + ls.ToString());
        continue;
      }
      std::vector<std::string> problems;
      VerifyShardIndex(meta, shard, store_.get(), &problems);
      for (auto& p : problems) report->push_back(where + p);
    }
  }
  if (!report->empty()) {
    return Status::Corruption(std::to_string(report->size()) + " problems found; first: " +
                              report->front());
  }
  return Status::OK();
}

}  // namespace sieve
