// Copyright 2026 The Sieve Authors.
//
// Value types shared by the public API: metrics, attribute types, collection schemas and
// attribute values.
//
// Vectors cross the API as row-major `n × dim` spans of float: row i occupies
// `data[i * dim, (i + 1) * dim)`. The caller owns the memory; Sieve copies what it keeps.

#ifndef SIEVE_INCLUDE_SIEVE_TYPES_H_
#define SIEVE_INCLUDE_SIEVE_TYPES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sieve/status.h"

namespace sieve {

// Persisted: do not renumber.
enum class Metric : uint8_t {
  kL2 = 0,            // squared Euclidean distance, smaller is better
  kInnerProduct = 1,  // inner product, larger is better
  kCosine = 2,        // 1 - cos(q, x), smaller is better
};

// Persisted: do not renumber.
enum class DType : uint8_t {
  kFloat32 = 0,
  kFloat16 = 1,  // vectors are rounded to IEEE half on ingest; distances use the rounded values
};

// Persisted: do not renumber.
enum class AttrType : uint8_t {
  kInt = 0,     // int64
  kFloat = 1,   // float64
  kString = 2,  // UTF-8 bytes
  kBool = 3,
  kTags = 4,  // list of strings
};

// "l2" | "ip" | "cosine" and back. Parse returns InvalidArgument naming the bad text.
const char* MetricName(Metric m);
Status ParseMetric(std::string_view text, Metric* out);
const char* DTypeName(DType t);
Status ParseDType(std::string_view text, DType* out);
// "int" | "float" | "string" | "bool" | "tags".
const char* AttrTypeName(AttrType t);
Status ParseAttrType(std::string_view text, AttrType* out);

struct AttributeSpec {
  std::string name;  // [A-Za-z_][A-Za-z0-9_]*, unique in its collection
  AttrType type = AttrType::kInt;
};

struct CollectionSpec {
  std::string name;  // [A-Za-z0-9_.-]{1,128}
  uint32_t dim = 0;  // 1 .. 65536
  Metric metric = Metric::kL2;
  DType dtype = DType::kFloat32;
  std::vector<AttributeSpec> attributes;  // every attribute is nullable
  // Rows are spread over this many shards by a hash of their id. Default: 1.
  uint32_t shards = 1;
};

// One attribute value of one row. std::monostate is null.
using Value = std::variant<std::monostate, int64_t, double, std::string, bool,
                           std::vector<std::string>>;

inline bool IsNull(const Value& v) { return std::holds_alternative<std::monostate>(v); }

}  // namespace sieve

#endif  // SIEVE_INCLUDE_SIEVE_TYPES_H_
