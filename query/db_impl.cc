// Copyright 2026 The Sieve Authors.

#include "query/db_impl.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "filter/filter.h"
#include "index/roaring_bridge.h"
#include "query/calibrate/first_use.h"
#include "query/cpu_executor.h"
#include "query/db_util.h"
#include "query/no_throw_db.h"
#include "storage/format.h"
#include "storage/shard_of.h"
#include "query/topk.h"

namespace sieve {

namespace {

// The Store setting that holds a device's calibrated planner thresholds (storage/FORMAT.md).
const std::string kPlannerSettingPrefix = "planner/";

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
  SIEVE_RETURN_IF_ERROR(ValidateDeviceOptions(options).WithContext("Options"));
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

DBImpl::DBImpl(std::unique_ptr<Store> store, const Options& options,
               std::unique_ptr<Executors> executors)
    : store_(std::move(store)),
      read_only_(options.read_only),
      first_use_(options.first_use_calibration),
      budget_(options.memory_budget_bytes != 0 ? options.memory_budget_bytes
                                               : DefaultMemoryBudget()),
      filter_cache_(options.filter_cache_bytes),
      executors_(executors != nullptr ? std::move(executors)
                                      : std::make_unique<Executors>(options)) {}

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

Status DBImpl::LoadLocked(Collection* c, bool vectors) {
  if (c->loaded && (c->vectors_loaded || !vectors)) return Status::OK();
  // (An image without vectors is read again, whole, when vectors are needed.)
  std::vector<std::unique_ptr<ShardIndex>> shards;
  for (uint32_t s = 0; s < c->meta.spec.shards; ++s) {
    auto shard = std::make_unique<ShardIndex>(c->meta.spec, s);
    SIEVE_RETURN_IF_ERROR(shard->Load(store_.get(), c->meta, vectors)
                              .WithContext("loading collection '" + c->meta.spec.name + "'"));
    shards.push_back(std::move(shard));
  }
  c->shards = std::move(shards);
  c->loaded = true;
  c->vectors_loaded = vectors;
  return Status::OK();
}

Status DBImpl::EnsureLoaded(Collection* c, double* load_ms, bool vectors) {
  *load_ms = 0;
  {
    std::shared_lock<std::shared_mutex> l(c->mu);
    if (c->loaded && (c->vectors_loaded || !vectors)) return Status::OK();
  }
  auto t0 = Clock::now();
  std::unique_lock<std::shared_mutex> l(c->mu);
  Status s = LoadLocked(c, vectors);
  *load_ms = MsSince(t0);
  return s;
}

Status DBImpl::GetStats(const std::string& collection, CollectionStats* stats) {
  std::shared_ptr<Collection> c;
  SIEVE_RETURN_IF_ERROR(GetCollection(collection, &c));
  std::shared_lock<std::shared_mutex> l(c->mu);
  *stats = CollectionStats();
  stats->spec = c->meta.spec;
  stats->next_auto_id = c->meta.next_auto_id;
  for (uint32_t s = 0; s < c->meta.spec.shards; ++s) {
    ShardState st;
    SIEVE_RETURN_IF_ERROR(store_->ReadShardState(c->meta, s, &st));
    stats->rows += st.live_rows;
    stats->total_rows += st.next_ordinal;
  }
  stats->deleted_rows = stats->total_rows - stats->rows;
  return Status::OK();
}

Status DBImpl::ExecutorFor(Device device, Executor** executor, PlannerThresholds* thresholds) {
  Device resolved = Device::kCpu;
  SIEVE_RETURN_IF_ERROR(executors_->Resolve(device, executor, &resolved));
  return ThresholdsOf(*executor, resolved == Device::kGpu, /*first_use=*/false, thresholds);
}

Status DBImpl::DevicesFor(Device device, DeviceSet** set,
                          std::vector<PlannerThresholds>* thresholds) {
  Device resolved = Device::kCpu;
  SIEVE_RETURN_IF_ERROR(executors_->ResolveSet(device, set, &resolved));
  thresholds->resize((*set)->size());
  for (size_t i = 0; i < (*set)->size(); ++i) {
    SIEVE_RETURN_IF_ERROR(ThresholdsOf((*set)->executor(i), resolved == Device::kGpu,
                                       /*first_use=*/true, &(*thresholds)[i]));
  }
  return Status::OK();
}

Status DBImpl::ThresholdsOf(Executor* executor, bool gpu, bool first_use,
                            PlannerThresholds* thresholds) {
  const std::string name = executor->name();
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = thresholds_.find(name);
    if (it != thresholds_.end()) {
      *thresholds = it->second;
      return Status::OK();
    }
    bool stored = false;
    SIEVE_RETURN_IF_ERROR(StoredThresholdsOf(name, gpu, thresholds, &stored));
    const bool due = !stored && WantsFirstUseCalibration(name, gpu);
    // Defaults that a first search will replace are not kept: reading them calibrates nothing.
    if (!due) thresholds_.emplace(name, *thresholds);
    if (!due || !first_use) return Status::OK();
  }
  // The first search on a GPU without thresholds of its own calibrates it, once: searches of
  // the same device wait here, the others go on (mu_ is not held while it runs).
  std::lock_guard<std::mutex> once(first_use_mu_);
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = thresholds_.find(name);
    if (it != thresholds_.end()) {
      *thresholds = it->second;
      return Status::OK();
    }
  }
  CalibrateFirstUse(executor, thresholds);
  std::lock_guard<std::mutex> l(mu_);
  thresholds_.emplace(name, *thresholds);
  return Status::OK();
}

Status DBImpl::StoredThresholdsOf(const std::string& name, bool gpu,
                                  PlannerThresholds* thresholds, bool* stored) {
  // A GPU by its name (shipped thresholds where the project has some); a stand-in executor
  // serving GPU searches (tests) as any GPU.
  *thresholds = !gpu                         ? PlannerThresholds::CpuDefaults()
                : name.rfind("gpu", 0) == 0 ? PlannerThresholds::DefaultsFor(name)
                                            : PlannerThresholds::GpuDefaults();
  *stored = false;
  std::string value;
  Status s = store_->GetSetting(kPlannerSettingPrefix + name, &value);
  if (s.IsNotFound() || s.IsNotSupported()) return Status::OK();
  SIEVE_RETURN_IF_ERROR(s);
  s = PlannerThresholds::FromJson(value, thresholds);
  if (!s.ok()) {
    return Status::Corruption("the stored planner calibration of '" + name +
                              "': " + s.message() + " (run sieve calibrate again)");
  }
  *stored = true;
  return Status::OK();
}

bool DBImpl::WantsFirstUseCalibration(const std::string& name, bool gpu) const {
  using Mode = FirstUseCalibration::Mode;
  if (!gpu || first_use_.mode == Mode::kOff) return false;
  return first_use_.mode == Mode::kAlways || !HasShippedThresholds(name);
}

void DBImpl::CalibrateFirstUse(Executor* executor, PlannerThresholds* thresholds) {
  const std::string name = executor->name();
  auto say = [&](const std::string& line) {
    if (first_use_.notice) {
      first_use_.notice(line);
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  };
  char line[512];
  std::snprintf(line, sizeof(line),
                "sieve: %s has no planner calibration in this database; calibrating it for "
                "first use (at most %.0f s; Options::first_use_calibration)",
                name.c_str(), first_use_.time_limit_s);
  say(line);
  const PlannerThresholds defaults = *thresholds;
  calibrate::FirstUseReport report;
  Status s = calibrate::CalibrateFirstUse(executor, first_use_, defaults, thresholds, &report);
  if (!s.ok()) {
    *thresholds = defaults;
    say("sieve: the first-use calibration of " + name + " failed (" + s.ToString() +
        "); it plans with " + defaults.source + " until `sieve calibrate` runs");
    return;
  }
  // Stored (and cached) as `sieve calibrate` stores its own; a read-only store refuses it.
  s = PutPlannerThresholds(name, *thresholds);
  std::snprintf(line, sizeof(line),
                "sieve: calibrated %s in %.1f s (%zu points%s): %s; %s", name.c_str(),
                report.seconds, report.points,
                report.complete ? "" : ", the time limit cut the sweep",
                DescribeThresholds(*thresholds).c_str(),
                s.ok() ? "stored in the database (`sieve calibrate --quick` fits a wider grid)"
                       : ("not stored (" + s.ToString() +
                          "): used until the database closes; `sieve calibrate` stores one")
                             .c_str());
  say(line);
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
  j["gather_rows_exponent"] = gather_rows_exponent;
  j["gather_rows_dim_exponent"] = gather_rows_dim_exponent;
  j["bitmap_sddmm_max_rows"] = bitmap_sddmm_max_rows;
  j["bitmap_sddmm_max_fraction"] = bitmap_sddmm_max_fraction;
  j["bitmap_sddmm_base_rows"] = bitmap_sddmm_base_rows;
  j["bitmap_sddmm_max_share"] = bitmap_sddmm_max_share;
  j["bitmap_sddmm_rows_exponent"] = bitmap_sddmm_rows_exponent;
  j["bitmap_sddmm_dim_exponent"] = bitmap_sddmm_dim_exponent;
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
  SIEVE_RETURN_IF_ERROR(optional("gather_rows_exponent", &t.gather_rows_exponent, 8.0));
  SIEVE_RETURN_IF_ERROR(optional("gather_rows_dim_exponent", &t.gather_rows_dim_exponent, 8.0));
  SIEVE_RETURN_IF_ERROR(count("bitmap_sddmm_max_rows", &t.bitmap_sddmm_max_rows));
  SIEVE_RETURN_IF_ERROR(number("bitmap_sddmm_max_fraction", &t.bitmap_sddmm_max_fraction, 1.0));
  SIEVE_RETURN_IF_ERROR(optional("bitmap_sddmm_base_rows", &t.bitmap_sddmm_base_rows, kHuge));
  SIEVE_RETURN_IF_ERROR(optional("bitmap_sddmm_max_share", &t.bitmap_sddmm_max_share, 1.0));
  SIEVE_RETURN_IF_ERROR(
      optional("bitmap_sddmm_rows_exponent", &t.bitmap_sddmm_rows_exponent, 8.0));
  SIEVE_RETURN_IF_ERROR(
      optional("bitmap_sddmm_dim_exponent", &t.bitmap_sddmm_dim_exponent, 8.0));
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
