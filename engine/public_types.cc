// Copyright 2026 The Sieve Authors.
//
// The engine-level public types' own code (include/sieve/db.h, types.h): the JSON forms of
// Explain, CollectionStats, RepairLoss and RepairReport, the backup results, and Include's
// parsing. Status and the enum names are in storage/types.cc, below every layer.

#include <cmath>
#include <limits>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/db_util.h"
#include "sieve/db.h"
#include "sieve/types.h"

namespace sieve {

namespace {

// One line, spaced as the CLI's other output is ({"a": 1, "b": [1, 2]}, as `create` and
// `query` print it). Invalid UTF-8 in user strings must not make dump() throw.
void AppendLine(const nlohmann::ordered_json& j, std::string* out) {
  if (j.is_object()) {
    out->push_back('{');
    bool first = true;
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!first) out->append(", ");
      first = false;
      out->append(nlohmann::ordered_json(it.key()).dump(
          -1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
      out->append(": ");
      AppendLine(it.value(), out);
    }
    out->push_back('}');
  } else if (j.is_array()) {
    out->push_back('[');
    for (size_t i = 0; i < j.size(); ++i) {
      if (i > 0) out->append(", ");
      AppendLine(j[i], out);
    }
    out->push_back(']');
  } else {
    out->append(j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
  }
}

std::string DumpLine(const nlohmann::ordered_json& j) {
  std::string out;
  AppendLine(j, &out);
  return out;
}

// Stage times to the microsecond: a difference of two clock readings in milliseconds otherwise
// prints as 1.1492559999999998.
double RoundMs(double ms) { return std::round(ms * 1000.0) / 1000.0; }

}  // namespace

const char* FusionMethodName(Fusion::Method m) {
  return m == Fusion::Method::kWeighted ? "weighted" : "rrf";
}

Status ParseFusionMethod(std::string_view text, Fusion::Method* out) {
  if (text == "rrf") {
    *out = Fusion::Method::kRrf;
  } else if (text == "weighted") {
    *out = Fusion::Method::kWeighted;
  } else {
    return Status::InvalidArgument("fusion: unknown method '" + std::string(text) +
                                   "' (methods: rrf, weighted)");
  }
  return Status::OK();
}

namespace {

nlohmann::ordered_json TextPlanJson(const TextSearchPlan& t) {
  nlohmann::ordered_json j;
  j["field"] = t.field;
  auto terms = nlohmann::ordered_json::array();
  for (const TextSearchPlan::Term& term : t.terms) {
    terms.push_back(
        {{"term", term.term}, {"count", term.count}, {"rows", term.rows}, {"idf", term.idf}});
  }
  j["terms"] = std::move(terms);
  j["documents"] = t.documents;
  j["avgdl"] = t.avgdl;
  j["k1"] = t.k1;
  j["b"] = t.b;
  j["strategy"] = t.strategy;
  j["passing_rows"] = t.passing_rows;
  j["depth"] = t.depth;
  j["postings"] = t.postings;
  j["postings_read"] = t.postings_read;
  j["postings_skipped"] = t.postings_skipped;
  j["blocks"] = t.blocks;
  j["blocks_skipped"] = t.blocks_skipped;
  j["rows_scored"] = t.rows_scored;
  j["rows_pruned"] = t.rows_pruned;
  j["rows_filtered"] = t.rows_filtered;
  if (!t.fusion.empty()) {
    j["fusion"] = t.fusion;
    j["beside_vector"] = t.beside_vector;
  }
  return j;
}

}  // namespace

std::string Explain::ToJson() const {
  try {
    nlohmann::ordered_json j;
    j["path"] = shards.empty() ? std::string() : shards.front().path;
    j["passing_rows"] = passing_rows;
    j["device"] = device;
    j["filter_mode"] = filter_mode;
    auto shard_list = nlohmann::ordered_json::array();
    for (const ShardPlan& plan : shards) {
      nlohmann::ordered_json s;
      s["shard"] = plan.shard;
      s["path"] = plan.path;
      s["select"] = plan.select;
      if (!plan.products.empty()) s["products"] = plan.products;
      if (!plan.select_plan.empty()) s["select_plan"] = plan.select_plan;
      s["passing_rows"] = plan.passing_rows;
      s["rows"] = plan.rows;
      if (!plan.device.empty()) s["device"] = plan.device;
      s["execute_ms"] = RoundMs(plan.execute_ms);
      shard_list.push_back(std::move(s));
    }
    j["shards"] = std::move(shard_list);
    auto device_list = nlohmann::ordered_json::array();
    for (const DevicePlan& d : devices) {
      device_list.push_back({{"device", d.device},
                             {"executor", d.executor},
                             {"shards", d.shards},
                             {"paths", d.paths},
                             {"rows", d.rows},
                             {"execute_ms", RoundMs(d.execute_ms)}});
    }
    if (!devices.empty()) j["devices"] = std::move(device_list);
    auto stages = nlohmann::ordered_json::object();
    for (const auto& [name, ms] : stage_ms) stages[name] = RoundMs(ms);
    j["stages_ms"] = std::move(stages);
    if (!thresholds.empty()) j["thresholds"] = thresholds;
    j["filters_cached"] = filters_cached;
    if (has_text) j["text"] = TextPlanJson(text);
    j["memory"] = {{"host_bytes", host_memory_bytes},
                   {"device_bytes", device_memory_bytes},
                   {"budget_bytes", memory_budget_bytes}};
    if (group) {
      nlohmann::ordered_json g;
      g["field"] = group->field;
      g["strategy"] = group->strategy;
      g["reason"] = group->reason;
      g["distinct_values"] = group->distinct_values;
      g["groups"] = group->groups;
      g["rounds"] = group->rounds;
      g["scan_k"] = group->scan_k;
      g["searches"] = group->searches;
      auto batches = nlohmann::ordered_json::array();
      for (const GroupSearch& b : group->batches) {
        auto paths = nlohmann::ordered_json::array();
        for (const ShardPlan& plan : b.shards) paths.push_back(plan.path);
        batches.push_back(
            {{"kind", b.kind}, {"queries", b.queries}, {"k", b.k}, {"paths", paths}});
      }
      g["batches"] = std::move(batches);
      j["group"] = std::move(g);
    }
    if (!shape.empty()) {
      j["shape"] = shape;
      j["windows"] = windows;
      j["window_queries"] = window_queries;
    }
    return DumpLine(j);
  } catch (...) {
    // Only allocation failure can get here; keep the line parseable.
    return std::string(R"({"error":"explain serialization failed"})");
  }
}

std::string CollectionStats::ToJson() const {
  try {
    nlohmann::ordered_json j;
    j["collection"] = spec.name;
    j["rows"] = rows;
    j["deleted_rows"] = deleted_rows;
    j["total_rows"] = total_rows;
    j["dim"] = spec.dim;
    j["metric"] = MetricName(spec.metric);
    j["dtype"] = DTypeName(spec.dtype);
    j["shards"] = spec.shards;
    auto attrs = nlohmann::ordered_json::object();
    for (const AttributeSpec& a : spec.attributes) attrs[a.name] = AttributeTypeText(a);
    j["attributes"] = std::move(attrs);
    return DumpLine(j);
  } catch (...) {
    return std::string(R"({"error":"stats serialization failed"})");
  }
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

std::string BackupResult::ToJson() const {
  nlohmann::ordered_json j;
  j["backup_id"] = backup_id;
  j["timestamp"] = timestamp;
  j["files_copied"] = files_copied;
  j["bytes_copied"] = bytes_copied;
  j["files_reused"] = files_reused;
  j["bytes_reused"] = bytes_reused;
  j["commit_seq"] = commit_seq;
  j["purged"] = purged;
  j["attempts"] = attempts;
  j["secondary"] = secondary;
  j["logs"] = logs;
  return DumpLine(j);
}

std::string BackupEntry::ToJson() const {
  nlohmann::ordered_json j;
  j["backup_id"] = id;
  j["timestamp"] = timestamp;
  j["bytes"] = bytes;
  j["files"] = files;
  if (!problem.empty()) j["problem"] = problem;
  return DumpLine(j);
}

std::string BackupListing::ToJson() const {
  nlohmann::ordered_json j;
  j["backups"] = backups.size();
  j["corrupt"] = corrupt;
  j["leftover_files"] = leftover_files;
  j["leftover_bytes"] = leftover_bytes;
  return DumpLine(j);
}

std::string RestoreResult::ToJson() const {
  nlohmann::ordered_json j;
  j["backup_id"] = backup_id;
  j["files"] = files;
  j["bytes"] = bytes;
  j["commit_seq"] = commit_seq;
  j["leftovers_removed"] = leftovers_removed;
  return DumpLine(j);
}

Status Include::Parse(std::string_view text, Include* out) {
  *out = Include();
  size_t i = 0;
  while (i <= text.size()) {
    size_t end = i;
    std::string item;
    bool quoted = false;
    // Leading blanks.
    while (end < text.size() && (text[end] == ' ' || text[end] == '\t')) ++end;
    if (end < text.size() && text[end] == '"') {
      quoted = true;
      ++end;
      for (;;) {
        if (end >= text.size()) {
          return Status::InvalidArgument("include: unterminated quoted name at character " +
                                         std::to_string(i + 1));
        }
        if (text[end] == '"') {
          if (end + 1 < text.size() && text[end + 1] == '"') {  // "" inside quotes is one "
            item += '"';
            end += 2;
            continue;
          }
          ++end;
          break;
        }
        item += text[end++];
      }
      while (end < text.size() && (text[end] == ' ' || text[end] == '\t')) ++end;
      if (end < text.size() && text[end] != ',') {
        return Status::InvalidArgument("include: expected , after the quoted name \"" + item +
                                       "\"");
      }
    } else {
      while (end < text.size() && text[end] != ',') item += text[end++];
      while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.pop_back();
    }
    if (quoted) {
      out->attributes.push_back(item);
    } else if (item == "*") {
      out->all_attributes = true;
    } else if (item == "vector") {
      out->vector = true;
    } else if (!item.empty()) {
      out->attributes.push_back(item);
    }
    i = end + 1;
  }
  return Status::OK();
}

Status Include::AttributeNames(const CollectionSpec& spec, std::vector<std::string>* names) const {
  std::vector<size_t> attrs;
  return ResolveInclude(spec, *this, &attrs, names);
}

AlterRequest AlterRequest::AddAttribute(std::string name, AttrType type, Value default_value) {
  AlterRequest r;
  r.op = Op::kAddAttribute;
  r.name = std::move(name);
  r.type = type;
  r.default_value = std::move(default_value);
  return r;
}

AlterRequest AlterRequest::DropAttribute(std::string name) {
  AlterRequest r;
  r.op = Op::kDropAttribute;
  r.name = std::move(name);
  return r;
}

AlterRequest AlterRequest::RenameAttribute(std::string name, std::string new_name) {
  AlterRequest r;
  r.op = Op::kRenameAttribute;
  r.name = std::move(name);
  r.new_name = std::move(new_name);
  return r;
}

AlterRequest AlterRequest::SetBm25(double k1, double b) {
  AlterRequest r;
  r.op = Op::kSetBm25;
  r.bm25_k1 = k1;
  r.bm25_b = b;
  return r;
}

}  // namespace sieve
