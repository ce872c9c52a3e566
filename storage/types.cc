// Copyright 2026 The Sieve Authors.
//
// The vocabulary every layer speaks (include/sieve/status.h, types.h): Status text and the
// enum names and parsers. The engine-level public types (Explain, CollectionStats, ...) are
// implemented in engine/public_types.cc.

#include "sieve/types.h"

#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>

#include "sieve/db.h"
#include "sieve/status.h"
#include "text/text_analyzer.h"

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
                                               {"tags", AttrType::kTags},
                                               {"text", AttrType::kText}};
constexpr NamedValue<Device> kDevices[] = {
    {"auto", Device::kAuto}, {"cpu", Device::kCpu}, {"gpu", Device::kGpu}};
constexpr NamedValue<SearchPath> kSearchPaths[] = {{"auto", SearchPath::kAuto},
                                                   {"sddmm", SearchPath::kSddmm},
                                                   {"gather", SearchPath::kGather},
                                                   {"dense", SearchPath::kDense}};
constexpr NamedValue<GroupStrategy> kGroupStrategies[] = {
    {"auto", GroupStrategy::kAuto},
    {"few_groups", GroupStrategy::kFewGroups},
    {"many_groups", GroupStrategy::kManyGroups}};

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

Status ParseAttributeType(std::string_view text, AttributeSpec* attr) {
  constexpr std::string_view kTextPrefix = "text:";
  if (text.substr(0, kTextPrefix.size()) == kTextPrefix) {
    const std::string_view analyzer = text.substr(kTextPrefix.size());
    SIEVE_RETURN_IF_ERROR(TextAnalyzer::Validate(analyzer));
    attr->type = AttrType::kText;
    attr->analyzer = std::string(analyzer);
    return Status::OK();
  }
  SIEVE_RETURN_IF_ERROR(ParseAttrType(text, &attr->type));
  attr->analyzer.clear();
  return Status::OK();
}

std::string AttributeTypeText(const AttributeSpec& attr) {
  if (attr.type == AttrType::kText && !attr.analyzer.empty()) return "text:" + attr.analyzer;
  return AttrTypeName(attr.type);
}

const char* DeviceName(Device d) { return NameOf(kDevices, d); }
Status ParseDevice(std::string_view text, Device* out) {
  return ParseNamed(kDevices, "device", text, out);
}

const char* SearchPathName(SearchPath p) { return NameOf(kSearchPaths, p); }
Status ParseSearchPath(std::string_view text, SearchPath* out) {
  return ParseNamed(kSearchPaths, "search path", text, out);
}

const char* GroupStrategyName(GroupStrategy s) { return NameOf(kGroupStrategies, s); }
Status ParseGroupStrategy(std::string_view text, GroupStrategy* out) {
  return ParseNamed(kGroupStrategies, "group strategy", text, out);
}

}  // namespace sieve
