// Copyright 2026 The Sieve Authors.

#include "engine/db_util.h"

#include <algorithm>
#include <cmath>
#include <variant>

#include "storage/format.h"
#include "text/text_analyzer.h"

namespace sieve {

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

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
    case AttrType::kText:
      if (std::holds_alternative<std::string>(*v)) {
        // Every stored text must analyze: the analyzer takes at most kMaxTextBytes.
        if (std::get<std::string>(*v).size() > kMaxTextBytes) {
          return Status::InvalidArgument("a text of " +
                                         std::to_string(std::get<std::string>(*v).size()) +
                                         " bytes is longer than the " +
                                         std::to_string(kMaxTextBytes) + " bytes a text may hold");
        }
        return Status::OK();
      }
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



Status ResolveInclude(const CollectionSpec& spec, const Include& include,
                      std::vector<size_t>* attrs, std::vector<std::string>* names) {
  attrs->clear();
  names->clear();
  auto add = [&](size_t a) {
    if (std::find(attrs->begin(), attrs->end(), a) != attrs->end()) return;
    attrs->push_back(a);
    names->push_back(spec.attributes[a].name);
  };
  for (const std::string& name : include.attributes) {
    size_t a = 0;
    while (a < spec.attributes.size() && spec.attributes[a].name != name) ++a;
    if (a == spec.attributes.size()) {
      std::string known;
      for (const AttributeSpec& s : spec.attributes) known += (known.empty() ? "" : ", ") + s.name;
      return Status::InvalidArgument(
          "include: unknown attribute '" + name + "' (collection '" + spec.name + "' has " +
          (known.empty() ? std::string("no attributes") : known) + "; '*' is every one, 'vector' "
          "the vector)");
    }
    add(a);
  }
  if (include.all_attributes) {
    for (size_t a = 0; a < spec.attributes.size(); ++a) add(a);
  }
  return Status::OK();
}

void FillRow(const ShardIndex& shard, uint32_t ordinal, const std::vector<size_t>& attrs,
             bool vector, Row* row) {
  row->id = shard.id(ordinal);
  row->attributes.clear();
  row->attributes.reserve(attrs.size());
  for (size_t a : attrs) row->attributes.push_back(shard.attribute(a).ValueAt(ordinal));
  if (vector) {
    const float* v = shard.vectors().row(ordinal);
    row->vector.assign(v, v + shard.vectors().dim());
  } else {
    row->vector.clear();
  }
}

}  // namespace sieve
