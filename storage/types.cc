// Copyright 2026 The Sieve Authors.
//
// Pure-data parts of the public API: Status text, enum names and parsers, and the JSON forms
// of Explain and CollectionStats.

#include "sieve/types.h"

#include <cmath>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "sieve/db.h"
#include "sieve/status.h"

namespace sieve {

namespace {

template <typename E>
struct NamedValue {
  std::string_view name;
  E value;
};

template <typename E, size_t N>
const char* NameOf(const NamedValue<E> (&table)[N], E value) {
  for (const auto& entry : table) {
    if (entry.value == value) return entry.name.data();
  }
  return "unknown";
}

template <typename E, size_t N>
Status ParseNamed(const NamedValue<E> (&table)[N], std::string_view what, std::string_view text,
                  E* out) {
  for (const auto& entry : table) {
    if (entry.name == text) {
      *out = entry.value;
      return Status::OK();
    }
  }
  std::string accepted;
  for (size_t i = 0; i < N; ++i) {
    if (i > 0) accepted += i + 1 == N ? " or " : ", ";
    accepted += table[i].name;
  }
  return Status::InvalidArgument("unknown " + std::string(what) + " '" + std::string(text) +
                                 "': expected " + accepted);
}

// The string literals below are NUL-terminated, so NameOf may return data().
constexpr NamedValue<Metric> kMetrics[] = {
    {"l2", Metric::kL2}, {"ip", Metric::kInnerProduct}, {"cosine", Metric::kCosine}};
constexpr NamedValue<DType> kDTypes[] = {{"f32", DType::kFloat32}, {"f16", DType::kFloat16}};
constexpr NamedValue<AttrType> kAttrTypes[] = {{"int", AttrType::kInt},
                                               {"float", AttrType::kFloat},
                                               {"string", AttrType::kString},
                                               {"bool", AttrType::kBool},
                                               {"tags", AttrType::kTags}};
constexpr NamedValue<Device> kDevices[] = {
    {"auto", Device::kAuto}, {"cpu", Device::kCpu}, {"gpu", Device::kGpu}};
constexpr NamedValue<SearchPath> kSearchPaths[] = {{"auto", SearchPath::kAuto},
                                                   {"sddmm", SearchPath::kSddmm},
                                                   {"gather", SearchPath::kGather},
                                                   {"dense", SearchPath::kDense}};

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

std::string Status::ToString() const {
  if (ok()) return "OK";
  const char* name = "Unknown";
  switch (code()) {
    case Code::kOk:
      name = "OK";
      break;
    case Code::kNotFound:
      name = "NotFound";
      break;
    case Code::kCorruption:
      name = "Corruption";
      break;
    case Code::kNotSupported:
      name = "NotSupported";
      break;
    case Code::kInvalidArgument:
      name = "InvalidArgument";
      break;
    case Code::kIOError:
      name = "IOError";
      break;
    case Code::kAlreadyExists:
      name = "AlreadyExists";
      break;
    case Code::kResourceExhausted:
      name = "ResourceExhausted";
      break;
    case Code::kUnavailable:
      name = "Unavailable";
      break;
    case Code::kInternal:
      name = "Internal";
      break;
  }
  return std::string(name) + ": " + message();
}

const char* MetricName(Metric m) { return NameOf(kMetrics, m); }
Status ParseMetric(std::string_view text, Metric* out) {
  return ParseNamed(kMetrics, "metric", text, out);
}

const char* DTypeName(DType t) { return NameOf(kDTypes, t); }
Status ParseDType(std::string_view text, DType* out) {
  return ParseNamed(kDTypes, "dtype", text, out);
}

const char* AttrTypeName(AttrType t) { return NameOf(kAttrTypes, t); }
Status ParseAttrType(std::string_view text, AttrType* out) {
  return ParseNamed(kAttrTypes, "attribute type", text, out);
}

const char* DeviceName(Device d) { return NameOf(kDevices, d); }
Status ParseDevice(std::string_view text, Device* out) {
  return ParseNamed(kDevices, "device", text, out);
}

const char* SearchPathName(SearchPath p) { return NameOf(kSearchPaths, p); }
Status ParseSearchPath(std::string_view text, SearchPath* out) {
  return ParseNamed(kSearchPaths, "search path", text, out);
}

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
    j["memory"] = {{"host_bytes", host_memory_bytes},
                   {"device_bytes", device_memory_bytes},
                   {"budget_bytes", memory_budget_bytes}};
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
    for (const AttributeSpec& a : spec.attributes) attrs[a.name] = AttrTypeName(a.type);
    j["attributes"] = std::move(attrs);
    return DumpLine(j);
  } catch (...) {
    return std::string(R"({"error":"stats serialization failed"})");
  }
}

}  // namespace sieve
