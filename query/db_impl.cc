// Copyright 2026 The Sieve Authors.

#include "query/db_impl.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "filter/filter.h"
#include "index/roaring_bridge.h"
#include "query/cpu_executor.h"
#include "query/no_throw_db.h"
#include "storage/format.h"
#include "storage/shard_of.h"
#include "query/topk.h"

namespace sieve {

namespace {

using Clock = std::chrono::steady_clock;

// The Store setting that holds a device's calibrated planner thresholds (storage/FORMAT.md).
const std::string kPlannerSettingPrefix = "planner/";

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Rows per stored chunk: large enough that loading reads long sequential values, small
// enough that one chunk of a 64k-dim collection stays within a few hundred MB.
uint32_t ChunkRows(uint32_t dim) {
  const uint64_t kTargetBytes = 8u << 20;
  uint64_t rows = kTargetBytes / (static_cast<uint64_t>(dim) * sizeof(float));
  return static_cast<uint32_t>(std::clamp<uint64_t>(rows, 64, 65536));
}

const char* ValueTypeName(const Value& v) {
  switch (v.index()) {
    case 0: return "null";
    case 1: return "int";
    case 2: return "float";
    case 3: return "string";
    case 4: return "bool";
    case 5: return "tags";
  }
  return "?";
}

// Checks `v` against `type`, converting an int given for a float attribute.
Status CheckValue(AttrType type, Value* v) {
  if (IsNull(*v)) return Status::OK();
  switch (type) {
    case AttrType::kInt:
      if (std::holds_alternative<int64_t>(*v)) return Status::OK();
      break;
    case AttrType::kFloat:
      if (std::holds_alternative<int64_t>(*v)) {
        *v = static_cast<double>(std::get<int64_t>(*v));
        return Status::OK();
      }
      if (std::holds_alternative<double>(*v)) {
        if (!std::isfinite(std::get<double>(*v))) {
          return Status::InvalidArgument("float value must be finite");
        }
        return Status::OK();
      }
      break;
    case AttrType::kString:
      if (std::holds_alternative<std::string>(*v)) return Status::OK();
      break;
    case AttrType::kBool:
      if (std::holds_alternative<bool>(*v)) return Status::OK();
      break;
    case AttrType::kTags:
      if (std::holds_alternative<std::vector<std::string>>(*v)) return Status::OK();
      break;
  }
  return Status::InvalidArgument(std::string("expected ") + AttrTypeName(type) + ", got " +
                                 ValueTypeName(*v));
}

bool LargerIsBetter(Metric m) { return m == Metric::kInnerProduct; }

// A vector as the collection stores it: float16 collections keep each component rounded to
// the nearest half (the rule CheckVector must see, since a tiny input may round to zero).
float StoredValue(DType dtype, float x) {
  return dtype == DType::kFloat16 ? format::HalfToFloat(format::FloatToHalf(x)) : x;
}

// Distance of the metric in float64 between a float query and a stored row.
double ExactDistance(Metric metric, const float* q, const float* x, uint32_t dim) {
  double dot = 0, nq = 0, nx = 0, l2 = 0;
  for (uint32_t i = 0; i < dim; ++i) {
    double a = q[i], b = x[i];
    dot += a * b;
    nq += a * a;
    nx += b * b;
    l2 += (a - b) * (a - b);
  }
  switch (metric) {
    case Metric::kL2: return l2;
    case Metric::kInnerProduct: return dot;
    case Metric::kCosine:
      if (nq == 0 || nx == 0) return 1.0;
      return 1.0 - dot / (std::sqrt(nq) * std::sqrt(nx));
  }
  return 0;
}

// How many candidates to ask an executor for so that float32 rounding near the k-th place
// cannot push a true neighbour out before the float64 refinement re-ranks them.
uint32_t CandidateCount(uint32_t k) { return k + std::min<uint32_t>(std::max<uint32_t>(k, 8), 64); }

std::string ValueText(const Value& v) {
  switch (v.index()) {
    case 0: return "null";
    case 1: return std::to_string(std::get<int64_t>(v));
    case 2: return std::to_string(std::get<double>(v));
    case 3: return "'" + std::get<std::string>(v) + "'";
    case 4: return std::get<bool>(v) ? "true" : "false";
    case 5: {
      std::string s = "[";
      for (auto& t : std::get<std::vector<std::string>>(v)) s += "'" + t + "',";
      return s + "]";
    }
  }
  return "?";
}

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
    return Status::OK();
  });
  if (!s.ok()) {
    complain(s.ToString());
    return;
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

Status DB::Open(const Options& options, const std::string& path, std::unique_ptr<DB>* db) {
  StoreOptions so;
  so.create_if_missing = options.create_if_missing;
  so.error_if_exists = options.error_if_exists;
  so.read_only = options.read_only;
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

std::string RepairLoss::ToJson() const {
  nlohmann::ordered_json j;
  j["collection"] = collection;
  j["shard"] = shard;
  j["first_ordinal"] = first_ordinal;
  j["rows"] = rows;
  j["lost_rows"] = lost_rows;
  if (commit > 0) j["batch_commit"] = commit;
  j["cause"] = cause;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string RepairReport::ToJson() const {
  nlohmann::ordered_json j;
  j["repaired"] = repaired;
  j["rows_kept"] = rows_kept;
  j["rows_lost"] = rows_lost;
  j["losses"] = losses.size();
  if (!damaged_copy.empty()) j["damaged_copy"] = damaged_copy;
  j["notes"] = notes;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

DBImpl::DBImpl(std::unique_ptr<Store> store, const Options& options)
    : store_(std::move(store)),
      budget_(options.memory_budget_bytes != 0 ? options.memory_budget_bytes
                                               : DefaultMemoryBudget()),
      executors_(options.gpu) {}

DBImpl::~DBImpl() = default;

Status DBImpl::CreateCollection(const CollectionSpec& spec) {
  // The naming rule is checked here, at creation only: the store accepts (and keeps loading)
  // names that older releases allowed.
  SIEVE_RETURN_IF_ERROR(ValidateCollectionName(spec.name));
  for (const AttributeSpec& a : spec.attributes) {
    SIEVE_RETURN_IF_ERROR(
        ValidateAttributeName(a.name).WithContext("collection '" + spec.name + "'"));
  }
  std::lock_guard<std::mutex> l(mu_);
  CollectionMeta meta;
  SIEVE_RETURN_IF_ERROR(store_->CreateCollection(spec, &meta));
  auto c = std::make_shared<Collection>();
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

Status DBImpl::GetCollection(const std::string& name, std::shared_ptr<Collection>* out) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = collections_.find(name);
  if (it != collections_.end()) {
    *out = it->second;
    return Status::OK();
  }
  auto c = std::make_shared<Collection>();
  Status s = store_->GetCollection(name, &c->meta);
  if (s.IsNotFound()) return Status::NotFound("no collection named '" + name + "'");
  SIEVE_RETURN_IF_ERROR(s);
  collections_[name] = c;
  *out = c;
  return Status::OK();
}

Status DBImpl::LoadLocked(Collection* c) {
  if (c->loaded) return Status::OK();
  std::vector<std::unique_ptr<ShardIndex>> shards;
  for (uint32_t s = 0; s < c->meta.spec.shards; ++s) {
    auto shard = std::make_unique<ShardIndex>(c->meta.spec, s);
    SIEVE_RETURN_IF_ERROR(shard->Load(store_.get(), c->meta)
                              .WithContext("loading collection '" + c->meta.spec.name + "'"));
    shards.push_back(std::move(shard));
  }
  c->shards = std::move(shards);
  c->loaded = true;
  return Status::OK();
}

Status DBImpl::EnsureLoaded(Collection* c, double* load_ms) {
  *load_ms = 0;
  {
    std::shared_lock<std::shared_mutex> l(c->mu);
    if (c->loaded) return Status::OK();
  }
  auto t0 = Clock::now();
  std::unique_lock<std::shared_mutex> l(c->mu);
  Status s = LoadLocked(c);
  *load_ms = MsSince(t0);
  return s;
}

Status DBImpl::GetStats(const std::string& collection, CollectionStats* stats) {
  std::shared_ptr<Collection> c;
  SIEVE_RETURN_IF_ERROR(GetCollection(collection, &c));
  std::shared_lock<std::shared_mutex> l(c->mu);
  *stats = CollectionStats();
  stats->spec = c->meta.spec;
  for (uint32_t s = 0; s < c->meta.spec.shards; ++s) {
    ShardState st;
    SIEVE_RETURN_IF_ERROR(store_->ReadShardState(c->meta, s, &st));
    stats->rows += st.live_rows;
    stats->total_rows += st.next_ordinal;
  }
  stats->deleted_rows = stats->total_rows - stats->rows;
  return Status::OK();
}

Status DBImpl::ValidateBatch(const Collection& c, const RowBatch& rows) const {
  const CollectionSpec& spec = c.meta.spec;
  if (rows.num_rows == 0) return Status::OK();
  if (rows.vectors == nullptr) return Status::InvalidArgument("ingest: no vectors given");
  const uint32_t dim = spec.dim;
  std::vector<float> rounded;
  for (size_t r = 0; r < rows.num_rows; ++r) {
    const float* v = rows.vectors + r * dim;
    for (uint32_t j = 0; j < dim; ++j) {
      if (!std::isfinite(v[j])) {
        return Status::InvalidArgument("row " + std::to_string(r) + ", component " +
                                       std::to_string(j) + ": vector value is " +
                                       (std::isnan(v[j]) ? "NaN" : "infinite"));
      }
      if (spec.dtype == DType::kFloat16 && std::fabs(v[j]) > 65504.0f) {
        return Status::InvalidArgument("row " + std::to_string(r) + ", component " +
                                       std::to_string(j) + ": " + std::to_string(v[j]) +
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
    if (!s.ok()) return Status::InvalidArgument("row " + std::to_string(r) + ": " + s.message());
  }
  if (rows.attributes != nullptr) {
    for (size_t r = 0; r < rows.num_rows; ++r) {
      const auto& row = rows.attributes[r];
      if (row.size() > spec.attributes.size()) {
        return Status::InvalidArgument("row " + std::to_string(r) + ": " +
                                       std::to_string(row.size()) + " attribute values, schema has " +
                                       std::to_string(spec.attributes.size()));
      }
      for (size_t a = 0; a < row.size(); ++a) {
        Value v = row[a];
        Status s = CheckValue(spec.attributes[a].type, &v);
        if (!s.ok()) {
          return Status::InvalidArgument("row " + std::to_string(r) + ", attribute '" +
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
  std::shared_ptr<Collection> c;
  SIEVE_RETURN_IF_ERROR(GetCollection(collection, &c));
  SIEVE_RETURN_IF_ERROR(ValidateBatch(*c, rows));
  std::unique_lock<std::shared_mutex> lock(c->mu);
  const CollectionSpec& spec = c->meta.spec;
  const size_t n = rows.num_rows;
  const uint32_t nshards = spec.shards;

  // Live ids and shard states: from the loaded image, or read from the store.
  std::vector<ShardState> states(nshards);
  for (uint32_t s = 0; s < nshards; ++s) {
    SIEVE_RETURN_IF_ERROR(store_->ReadShardState(c->meta, s, &states[s]));
  }
  uint64_t total_rows = 0;
  for (auto& st : states) total_rows += st.next_ordinal;
  if (total_rows + n > (uint64_t{1} << 32) * nshards - 1) {
    return Status::InvalidArgument("ingest: the collection would exceed 2^32 rows per shard");
  }

  std::vector<int64_t> ids(n);
  const int64_t first_auto_id = c->meta.next_auto_id;
  if (rows.ids != nullptr) {
    std::copy(rows.ids, rows.ids + n, ids.begin());
    std::unordered_map<int64_t, size_t> seen;
    seen.reserve(n * 2);
    for (size_t r = 0; r < n; ++r) {
      auto [it, inserted] = seen.emplace(ids[r], r);
      if (!inserted) {
        return Status::InvalidArgument("row " + std::to_string(r) + ": id " +
                                       std::to_string(ids[r]) + " repeats row " +
                                       std::to_string(it->second));
      }
    }
    // Against the collection's live rows, which needs the loaded image (ids of deleted rows
    // may be reused).
    bool any_live = false;
    for (auto& st : states) any_live |= st.live_rows > 0;
    if (any_live) {
      SIEVE_RETURN_IF_ERROR(LoadLocked(c.get()));
      for (size_t r = 0; r < n; ++r) {
        uint32_t ord;
        if (c->shards[ShardOf(ids[r], nshards)]->FindLive(ids[r], &ord)) {
          return Status::InvalidArgument("row " + std::to_string(r) + ": id " +
                                         std::to_string(ids[r]) +
                                         " already exists in collection '" + spec.name + "'");
        }
      }
    }
  } else {
    if (first_auto_id > std::numeric_limits<int64_t>::max() - static_cast<int64_t>(n)) {
      return Status::InvalidArgument("ingest: assigned ids would overflow int64");
    }
    std::iota(ids.begin(), ids.end(), first_auto_id);
  }

  // Commit in atomic batches.
  const size_t batch_rows = options.batch_rows == 0 ? std::max<size_t>(n, 1) : options.batch_rows;
  const uint32_t chunk_rows = ChunkRows(spec.dim);
  const size_t nattr = spec.attributes.size();
  size_t done = 0;
  while (done < n) {
    const size_t end = std::min(n, done + batch_rows);
    // Rows of this batch per shard, in input order.
    std::vector<std::vector<size_t>> rows_of(nshards);
    for (size_t r = done; r < end; ++r) rows_of[ShardOf(ids[r], nshards)].push_back(r);
    std::vector<std::vector<Chunk>> chunks(nshards);
    std::vector<Store::ShardAppend> appends;
    for (uint32_t s = 0; s < nshards; ++s) {
      const auto& rs = rows_of[s];
      if (rs.empty()) continue;
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
            for (uint32_t d = 0; d < spec.dim; ++d) {
              dst[d] = StoredValue(DType::kFloat16, src[d]);
            }
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
      app.new_state.live_rows =
          states[s].live_rows + (app.new_state.next_ordinal - states[s].next_ordinal);
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
                              .WithContext("ingest: committing rows " + std::to_string(done) +
                                           ".." + std::to_string(end - 1)));
    for (auto& app : appends) states[app.shard] = app.new_state;
    c->meta.next_auto_id = batch_next_auto;
    if (c->loaded) {
      for (uint32_t s = 0; s < nshards; ++s) {
        for (auto& ch : chunks[s]) c->shards[s]->ApplyChunk(ch);
      }
    }
    result->ingested += end - done;
    done = end;
    if (options.progress) options.progress(done, n);
  }
  for (auto& st : states) result->live_rows += st.live_rows;
  return Status::OK();
}

Status DBImpl::CommitDeletes(Collection* c, std::vector<RowSet>* to_delete, uint64_t* deleted) {
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
  for (auto& [s, st] : states) c->shards[s]->SetDeleted(new_deleted[s]);
  return Status::OK();
}

Status DBImpl::DeleteByIds(const std::string& collection, const int64_t* ids, size_t n,
                           uint64_t* deleted) {
  *deleted = 0;
  std::shared_ptr<Collection> c;
  SIEVE_RETURN_IF_ERROR(GetCollection(collection, &c));
  std::unique_lock<std::shared_mutex> lock(c->mu);
  SIEVE_RETURN_IF_ERROR(LoadLocked(c.get()));
  const uint32_t nshards = c->meta.spec.shards;
  std::vector<std::vector<uint32_t>> ords(nshards);
  for (size_t i = 0; i < n; ++i) {
    uint32_t s = ShardOf(ids[i], nshards), ord;
    if (c->shards[s]->FindLive(ids[i], &ord)) ords[s].push_back(ord);
  }
  std::vector<RowSet> sets(nshards);
  for (uint32_t s = 0; s < nshards; ++s) sets[s] = RowSet::Of(ords[s].data(), ords[s].size());
  return CommitDeletes(c.get(), &sets, deleted);
}

Status DBImpl::DeleteByFilter(const std::string& collection, const std::string& filter,
                              uint64_t* deleted) {
  *deleted = 0;
  std::shared_ptr<Collection> c;
  SIEVE_RETURN_IF_ERROR(GetCollection(collection, &c));
  if (filter.find_first_not_of(" \t\r\n") == std::string::npos) {
    return Status::InvalidArgument("delete: the filter is empty (it would delete every row)");
  }
  std::unique_ptr<Filter> f;
  SIEVE_RETURN_IF_ERROR(Filter::Parse(filter, c->meta.spec, &f));
  std::unique_lock<std::shared_mutex> lock(c->mu);
  SIEVE_RETURN_IF_ERROR(LoadLocked(c.get()));
  std::vector<RowSet> sets;
  for (auto& shard : c->shards) sets.push_back(f->Compile(*shard));
  return CommitDeletes(c.get(), &sets, deleted);
}

Status DBImpl::ExecutorFor(Device device, Executor** executor, PlannerThresholds* thresholds) {
  Device resolved = Device::kCpu;
  SIEVE_RETURN_IF_ERROR(executors_.Resolve(device, executor, &resolved));
  const bool gpu = resolved == Device::kGpu;
  std::lock_guard<std::mutex> l(mu_);
  const std::string name = (*executor)->name();
  auto it = thresholds_.find(name);
  if (it == thresholds_.end()) {
    PlannerThresholds t = gpu ? PlannerThresholds::GpuDefaults() : PlannerThresholds::CpuDefaults();
    std::string value;
    Status s = store_->GetSetting(kPlannerSettingPrefix + name, &value);
    if (s.ok()) {
      s = PlannerThresholds::FromJson(value, &t);
      if (!s.ok()) {
        return Status::Corruption("the stored planner calibration of '" + name +
                                  "': " + s.message() + " (run sieve calibrate again)");
      }
    } else if (!s.IsNotFound() && !s.IsNotSupported()) {
      return s;
    }
    it = thresholds_.emplace(name, std::move(t)).first;
  }
  *thresholds = it->second;
  return Status::OK();
}

Status DBImpl::GetPlannerThresholds(Device device, PlannerThresholds* thresholds,
                                    std::string* device_name) {
  Executor* executor = nullptr;
  SIEVE_RETURN_IF_ERROR(ExecutorFor(device, &executor, thresholds));
  *device_name = executor->name();
  return Status::OK();
}

Status DBImpl::PutPlannerThresholds(const std::string& device_name,
                                    const PlannerThresholds& thresholds) {
  if (device_name.empty()) return Status::InvalidArgument("planner thresholds: no device name");
  // Round-trip through the stored form so that what is cached is exactly what a reopen reads.
  const std::string value = thresholds.ToJson();
  PlannerThresholds parsed;
  SIEVE_RETURN_IF_ERROR(PlannerThresholds::FromJson(value, &parsed));
  std::lock_guard<std::mutex> l(mu_);
  SIEVE_RETURN_IF_ERROR(store_->PutSetting(kPlannerSettingPrefix + device_name, value));
  thresholds_[device_name] = std::move(parsed);
  return Status::OK();
}

std::string PlannerThresholds::ToJson() const {
  nlohmann::ordered_json j;
  j["sddmm_max_rows"] = sddmm_max_rows;
  j["sddmm_dim_exponent"] = sddmm_dim_exponent;
  j["sddmm_max_fraction"] = sddmm_max_fraction;
  j["gather_min_rows"] = gather_min_rows;
  j["gather_scale"] = gather_scale;
  j["gather_max_fraction"] = gather_max_fraction;
  j["bitmap_sddmm_max_rows"] = bitmap_sddmm_max_rows;
  j["bitmap_sddmm_max_fraction"] = bitmap_sddmm_max_fraction;
  j["bitmap_sddmm_base_rows"] = bitmap_sddmm_base_rows;
  j["bitmap_sddmm_max_share"] = bitmap_sddmm_max_share;
  j["bitmap_union_gather"] = bitmap_union_gather;
  j["bitmap_gather_max_fraction"] = bitmap_gather_max_fraction;
  j["bitmap_gather_scale"] = bitmap_gather_scale;
  j["bitmap_gather_dim_exponent"] = bitmap_gather_dim_exponent;
  j["bitmap_gather_rows_exponent"] = bitmap_gather_rows_exponent;
  j["source"] = source;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Status PlannerThresholds::FromJson(const std::string& text, PlannerThresholds* out) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::InvalidArgument("planner thresholds: not a JSON object");
  PlannerThresholds t;
  auto count = [&](const char* key, uint64_t* v) -> Status {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_unsigned()) {
      return Status::InvalidArgument(std::string("planner thresholds: '") + key +
                                     "' is missing or not a non-negative integer");
    }
    *v = it->get<uint64_t>();
    return Status::OK();
  };
  auto number = [&](const char* key, double* v, double hi) -> Status {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number() || !std::isfinite(it->get<double>()) ||
        it->get<double>() < 0 || it->get<double>() > hi) {
      return Status::InvalidArgument(std::string("planner thresholds: '") + key +
                                     "' is missing or not a number in [0, " + std::to_string(hi) +
                                     "]");
    }
    *v = it->get<double>();
    return Status::OK();
  };
  const double kHuge = std::numeric_limits<double>::max();
  // Fields added after the first stored format may be missing: an older calibration keeps
  // the meaning it was fitted with (no dim scaling, no base count).
  auto optional = [&](const char* key, double* v, double hi) -> Status {
    return j.contains(key) ? number(key, v, hi) : Status::OK();
  };
  SIEVE_RETURN_IF_ERROR(count("sddmm_max_rows", &t.sddmm_max_rows));
  SIEVE_RETURN_IF_ERROR(optional("sddmm_dim_exponent", &t.sddmm_dim_exponent, 8.0));
  SIEVE_RETURN_IF_ERROR(number("sddmm_max_fraction", &t.sddmm_max_fraction, 1.0));
  SIEVE_RETURN_IF_ERROR(number("gather_min_rows", &t.gather_min_rows, kHuge));
  SIEVE_RETURN_IF_ERROR(number("gather_scale", &t.gather_scale, kHuge));
  SIEVE_RETURN_IF_ERROR(number("gather_max_fraction", &t.gather_max_fraction, 1.0));
  SIEVE_RETURN_IF_ERROR(count("bitmap_sddmm_max_rows", &t.bitmap_sddmm_max_rows));
  SIEVE_RETURN_IF_ERROR(number("bitmap_sddmm_max_fraction", &t.bitmap_sddmm_max_fraction, 1.0));
  SIEVE_RETURN_IF_ERROR(optional("bitmap_sddmm_base_rows", &t.bitmap_sddmm_base_rows, kHuge));
  SIEVE_RETURN_IF_ERROR(optional("bitmap_sddmm_max_share", &t.bitmap_sddmm_max_share, 1.0));
  auto g = j.find("bitmap_union_gather");
  if (g == j.end() || !g->is_boolean()) {
    return Status::InvalidArgument(
        "planner thresholds: 'bitmap_union_gather' is missing or not a boolean");
  }
  t.bitmap_union_gather = g->get<bool>();
  SIEVE_RETURN_IF_ERROR(number("bitmap_gather_max_fraction", &t.bitmap_gather_max_fraction, 1.0));
  SIEVE_RETURN_IF_ERROR(optional("bitmap_gather_scale", &t.bitmap_gather_scale, kHuge));
  SIEVE_RETURN_IF_ERROR(optional("bitmap_gather_dim_exponent", &t.bitmap_gather_dim_exponent, 8.0));
  SIEVE_RETURN_IF_ERROR(
      optional("bitmap_gather_rows_exponent", &t.bitmap_gather_rows_exponent, 8.0));
  auto src = j.find("source");
  if (src != j.end() && src->is_string()) t.source = src->get<std::string>();
  *out = std::move(t);
  return Status::OK();
}

Status DBImpl::Search(const std::string& collection, const SearchRequest& request,
                      const SearchOptions& options, SearchResult* result) {
  *result = SearchResult();
  auto t_start = Clock::now();
  if (request.k < 1) {
    return Status::InvalidArgument("k must be at least 1, got " + std::to_string(request.k));
  }
  if (request.k > 1000000) {
    return Status::InvalidArgument("k must be at most 1000000, got " + std::to_string(request.k));
  }
  const size_t nq = request.num_queries;
  if (nq > 0 && request.queries == nullptr) return Status::InvalidArgument("no query vectors");
  if (!request.filters.empty() && request.filters.size() != nq) {
    return Status::InvalidArgument("filters: " + std::to_string(request.filters.size()) +
                                   " filters for " + std::to_string(nq) + " queries");
  }
  std::shared_ptr<Collection> c;
  SIEVE_RETURN_IF_ERROR(GetCollection(collection, &c));
  const CollectionSpec& spec = c->meta.spec;
  for (size_t q = 0; q < nq; ++q) {
    Status s = CheckVector(request.queries + q * spec.dim, spec.dim);
    if (!s.ok()) return Status::InvalidArgument("query " + std::to_string(q) + ": " + s.message());
  }

  // Parse each distinct filter text once.
  std::vector<std::string> texts;          // distinct filter texts
  std::vector<uint32_t> filter_of(nq, 0);  // query → index into texts
  if (request.filters.empty()) {
    texts.push_back(request.filter);
  } else {
    std::unordered_map<std::string, uint32_t> index;
    for (size_t q = 0; q < nq; ++q) {
      auto [it, inserted] =
          index.emplace(request.filters[q], static_cast<uint32_t>(texts.size()));
      if (inserted) texts.push_back(request.filters[q]);
      filter_of[q] = it->second;
    }
    if (texts.empty()) texts.push_back("");
  }
  std::vector<std::unique_ptr<Filter>> filters(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    Status s = Filter::Parse(texts[i], spec, &filters[i]);
    if (!s.ok()) {
      if (request.filters.empty()) return s;
      size_t q = std::find(filter_of.begin(), filter_of.end(), i) - filter_of.begin();
      return s.WithContext("query " + std::to_string(q));
    }
  }
  const bool per_query = texts.size() > 1;
  Explain& ex = result->explain;
  ex.filter_mode = filters.size() == 1 && filters[0]->MatchesAll() ? "none"
                   : per_query                                     ? "bitmap"
                                                                   : "bitset";
  ex.memory_budget_bytes = budget_.bytes();
  ex.stage_ms.emplace_back("parse", MsSince(t_start));

  Executor* executor = nullptr;
  PlannerThresholds thresholds;
  SIEVE_RETURN_IF_ERROR(ExecutorFor(options.device, &executor, &thresholds));
  ex.device = executor->name();
  ex.thresholds = thresholds.source;

  double load_ms = 0;
  SIEVE_RETURN_IF_ERROR(EnsureLoaded(c.get(), &load_ms));
  if (load_ms > 0) ex.stage_ms.emplace_back("load", load_ms);
  std::shared_lock<std::shared_mutex> lock(c->mu);

  result->results.resize(nq);
  if (nq == 0) return Status::OK();
  const uint32_t k = static_cast<uint32_t>(request.k);
  const bool larger_better = LargerIsBetter(spec.metric);
  double compile_ms = 0, plan_ms = 0, exec_ms = 0, refine_ms = 0;

  // Compile and plan every shard first, so that the memory the search needs is known (and
  // refused, or reserved) before anything large is allocated.
  struct ShardWork {
    const ShardIndex* shard = nullptr;
    std::vector<RowSet> sets;  // one per distinct filter
    RowSet union_set;          // bitmap: built once, for the planner and the executor
    BatchFilters bf;
    ShardView view;
    ExecRequest er;
    uint64_t max_pass = 0;
  };
  std::vector<ShardWork> work(c->shards.size());
  uint64_t sets_bytes = 0;
  for (size_t si = 0; si < c->shards.size(); ++si) {
    const ShardIndex& shard = *c->shards[si];
    ShardWork& w = work[si];
    w.shard = &shard;
    ShardPlan plan;
    plan.shard = shard.shard();
    plan.rows = shard.live_rows();
    auto t0 = Clock::now();
    w.sets.reserve(filters.size());
    for (auto& f : filters) {
      w.sets.push_back(f->Compile(shard));
      sets_bytes += w.sets.back().MemoryBytes();
      if (sets_bytes > budget_.bytes()) {
        ex.host_memory_bytes = sets_bytes;
        return Status::ResourceExhausted(
            "search: the row sets of its " + std::to_string(filters.size()) +
            " distinct filters alone take more than " + DescribeBytes(sets_bytes) +
            ", over the memory budget of " + DescribeBytes(budget_.bytes()) +
            " (Options::memory_budget_bytes; sieve query/serve --max-memory)");
      }
    }
    BatchFilters& bf = w.bf;
    for (auto& s : w.sets) plan.passing_rows.push_back(s.Cardinality());
    if (per_query) {
      for (size_t q = 0; q < nq; ++q) {
        bf.sets.push_back(&w.sets[filter_of[q]]);
        bf.passing_rows.push_back(plan.passing_rows[filter_of[q]]);
      }
    } else {
      bf.sets.push_back(&w.sets[0]);
      bf.passing_rows.push_back(plan.passing_rows[0]);
    }
    compile_ms += MsSince(t0);

    t0 = Clock::now();
    PlanInput in;
    in.rows = shard.rows();
    in.dim = spec.dim;
    in.num_queries = static_cast<uint32_t>(nq);
    in.k = k;
    in.per_query = per_query;
    if (per_query) {
      uint64_t sum = 0;
      for (auto n : bf.passing_rows) sum += n;
      in.passing_rows = sum / nq;
      for (auto n : bf.passing_rows) in.max_passing_rows = std::max(in.max_passing_rows, n);
      std::vector<const RowSet*> distinct;
      for (auto& s : w.sets) distinct.push_back(&s);
      w.union_set = RowSet::Union(distinct.data(), distinct.size());
      w.bf.union_set = &w.union_set;
      sets_bytes += w.union_set.MemoryBytes();
      in.union_rows = w.union_set.Cardinality();
      ex.passing_rows += in.union_rows;
    } else {
      in.passing_rows = bf.passing_rows[0];
      in.union_rows = in.passing_rows;
      ex.passing_rows += in.passing_rows;
    }
    SearchPath path =
        options.path == SearchPath::kAuto ? ChoosePath(thresholds, in) : options.path;
    plan.path = SearchPathName(path);
    for (auto n : bf.passing_rows) w.max_pass = std::max(w.max_pass, n);
    w.view.key = (static_cast<uint64_t>(c->meta.id) << 32) | shard.shard();
    w.view.generation = shard.vectors().generation();
    w.view.vectors = shard.vectors().data();
    w.view.sq_norms = shard.vectors().sq_norms();
    w.view.rows = shard.rows();
    w.view.dim = spec.dim;
    w.view.dtype = spec.dtype;
    w.er.queries = request.queries;
    w.er.num_queries = static_cast<uint32_t>(nq);
    w.er.k = static_cast<uint32_t>(std::min<uint64_t>(CandidateCount(k), w.max_pass));
    w.er.metric = spec.metric;
    w.er.path = path;
    plan_ms += MsSince(t0);
    ex.shards.push_back(std::move(plan));
  }

  // What the rest allocates: per query, every shard's candidates (kept until the merge), and
  // the results; per shard, in turn, what its executor says it needs (its result included).
  uint64_t exec_bytes = 0, device_bytes = 0;
  for (ShardWork& w : work) {
    if (w.max_pass == 0) continue;
    MemoryEstimate m;
    SIEVE_RETURN_IF_ERROR(executor->EstimateMemory(w.view, w.bf, w.er, &m));
    exec_bytes = std::max(exec_bytes, m.host_bytes);
    device_bytes = std::max(device_bytes, m.device_bytes);
  }
  std::vector<uint64_t> candidates(nq, 0);  // per query, over every shard
  for (const ShardWork& w : work) {
    if (w.max_pass == 0) continue;
    for (size_t q = 0; q < nq; ++q) {
      candidates[q] += std::min<uint64_t>(w.er.k, w.bf.passing_rows[per_query ? q : 0]);
    }
  }
  using Candidate = std::pair<double, int64_t>;
  uint64_t candidate_bytes = nq * sizeof(std::vector<Candidate>), result_bytes = 0;
  for (size_t q = 0; q < nq; ++q) {
    candidate_bytes += candidates[q] * sizeof(Candidate);
    result_bytes += std::min<uint64_t>(k, candidates[q]) * (sizeof(int64_t) + sizeof(float));
  }
  result_bytes += nq * sizeof(Neighbors);
  const uint64_t need = sets_bytes + candidate_bytes + std::max(exec_bytes, result_bytes);
  ex.host_memory_bytes = need;
  ex.device_memory_bytes = device_bytes;
  if (need > budget_.bytes()) {
    return Status::ResourceExhausted(
        "search: " + std::to_string(nq) + " queries with k = " + std::to_string(k) + " need " +
        DescribeBytes(need) + " of host memory (results " + DescribeBytes(result_bytes) +
        ", candidates " + DescribeBytes(candidate_bytes) + ", " + executor->name() + " executor " +
        DescribeBytes(exec_bytes) + ", filter row sets " + DescribeBytes(sets_bytes) +
        "), over the memory budget of " + DescribeBytes(budget_.bytes()) +
        "; use fewer queries or a smaller k, or raise the budget (Options::memory_budget_bytes; "
        "sieve query/serve --max-memory)");
  }
  MemoryBudget::Reservation reservation = budget_.Reserve(need);

  // Per query: (exact distance, id) candidates from every shard.
  std::vector<std::vector<Candidate>> merged(nq);
  for (size_t q = 0; q < nq; ++q) merged[q].reserve(candidates[q]);
  for (size_t si = 0; si < work.size(); ++si) {
    ShardWork& w = work[si];
    if (w.max_pass == 0) continue;
    const ShardIndex& shard = *w.shard;
    auto t0 = Clock::now();
    ExecResult res;
    SIEVE_RETURN_IF_ERROR(executor->Search(w.view, w.bf, w.er, &res));
    exec_ms += MsSince(t0);
    if (res.neighbors.size() != nq) {
      return Status::Internal(executor->name() + " returned " +
                              std::to_string(res.neighbors.size()) + " result lists for " +
                              std::to_string(nq) + " queries");
    }
    ex.shards[si].select = res.select;
    ex.shards[si].select_plan = res.select_plan;
    for (auto& st : res.stage_ms) ex.stage_ms.emplace_back("execute." + st.first, st.second);

    // Refine in float64 and map ordinals to ids.
    t0 = Clock::now();
    for (size_t q = 0; q < nq; ++q) {
      const RowSet& set = *w.bf.sets[per_query ? q : 0];
      if (res.neighbors[q].size() > std::min<uint64_t>(w.er.k, set.Cardinality())) {
        return Status::Internal(executor->name() + " returned " +
                                std::to_string(res.neighbors[q].size()) + " results for query " +
                                std::to_string(q) + ", more than asked");
      }
      for (auto& [ord, dist] : res.neighbors[q]) {
        if (ord >= shard.rows() || !set.Contains(ord)) {
          return Status::Internal(executor->name() + " returned row " + std::to_string(ord) +
                                  " that does not pass the filter of query " + std::to_string(q));
        }
        merged[q].emplace_back(ExactDistance(spec.metric, request.queries + q * spec.dim,
                                             shard.vectors().row(ord), spec.dim),
                               shard.id(ord));
      }
    }
    refine_ms += MsSince(t0);
    // Sets no later shard needs are freed early.
    w.sets.clear();
    w.union_set.Clear();
  }

  auto t0 = Clock::now();
  for (size_t q = 0; q < nq; ++q) {
    auto& cand = merged[q];
    auto better = [&](const Candidate& a, const Candidate& b) {
      return BetterThan(larger_better, a.first, a.second, b.first, b.second);
    };
    const size_t keep = std::min<size_t>(k, cand.size());
    std::partial_sort(cand.begin(), cand.begin() + keep, cand.end(), better);
    Neighbors& out = result->results[q];
    out.ids.reserve(keep);
    out.distances.reserve(keep);
    for (size_t i = 0; i < keep; ++i) {
      const float d = static_cast<float>(cand[i].first);
      if (!std::isfinite(d)) {
        // Only rows stored before ingest enforced the norm bound can get here.
        result->results.clear();
        return Status::NotSupported(
            "search: the distance of query " + std::to_string(q) + " to row id " +
            std::to_string(cand[i].second) +
            " does not fit a float32: the row's norm is beyond the range ingest accepts now "
            "(it was stored before that rule); delete or re-ingest it");
      }
      out.ids.push_back(cand[i].second);
      out.distances.push_back(d);
    }
  }
  ex.stage_ms.emplace_back("compile", compile_ms);
  ex.stage_ms.emplace_back("plan", plan_ms);
  ex.stage_ms.emplace_back("execute", exec_ms);
  ex.stage_ms.emplace_back("refine", refine_ms + MsSince(t0));
  ex.stage_ms.emplace_back("total", MsSince(t_start));
  return Status::OK();
}

Status DBImpl::Check(std::vector<std::string>* report) {
  report->clear();
  Status s = store_->CheckFormat(report);
  if (!s.ok() && !s.IsCorruption()) return s;
  if (!s.ok()) {
    // The indexes are rebuilt from the same chunks; over damaged ones they would only repeat
    // what the storage check found.
    return s;
  }
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
