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
  // UTF-8 text, analyzed into terms by the attribute's analyzer (AttributeSpec::analyzer) and
  // indexed for MATCH, MATCH_ALL and PHRASE; its value is a std::string like kString's.
  kText = 5,
};

// "l2" | "ip" | "cosine" and back. Parse returns InvalidArgument naming the bad text.
const char* MetricName(Metric m);
Status ParseMetric(std::string_view text, Metric* out);
const char* DTypeName(DType t);
Status ParseDType(std::string_view text, DType* out);
// "int" | "float" | "string" | "bool" | "tags" | "text".
const char* AttrTypeName(AttrType t);
Status ParseAttrType(std::string_view text, AttrType* out);

// The range of a non-zero vector's Euclidean norm, for rows and queries alike: 2^-60 to 2^60
// (about 8.7e-19 to 1.15e18). Squared norms are then within 2^-120 .. 2^120, and every l2
// distance (at most (|q| + |x|)^2 = 2^122), inner product and cosine term between two such
// vectors is finite and normal in float32 (whose range ends near 2^128 and 2^-126) with a
// margin of 2^6, so the float32 and float16 paths and the GPU never meet an overflow.
inline constexpr double kMinVectorNorm = 0x1p-60;
inline constexpr double kMaxVectorNorm = 0x1p60;

// InvalidArgument when the `dim` floats at `v` hold a NaN or infinite component or their norm
// is neither 0 nor within [kMinVectorNorm, kMaxVectorNorm]; the message names the component
// ("component 3 is NaN") or the norm and the largest component, without saying whose vector
// it is (callers prefix "row 5: " or "query 2: ").
Status CheckVector(const float* v, uint32_t dim);

// The naming rule of collections and attributes, enforced when a collection is created
// (DB::CreateCollection, and so the CLI and the server): a name is 1 to 128 characters of
// [A-Za-z0-9_] (collections may also use '-') starting with a letter or '_', and is neither a
// keyword of the filter language (AND OR NOT IN BETWEEN CONTAINS IS NULL TRUE FALSE, in any
// letter case) nor "id" (reserved for the row id). Names in stores created under older rules
// still load and are written in filters as SQL double-quoted identifiers ("AND" = 3).
// InvalidArgument naming the rule broken.
Status ValidateCollectionName(std::string_view name);
Status ValidateAttributeName(std::string_view name);

struct AttributeSpec {
  std::string name;  // see ValidateAttributeName; unique in its collection
  AttrType type = AttrType::kInt;
  // kText only: the analyzer that turns its values into terms, "english", "simple" or
  // "stem:<language>" (docs/filter-language.md, "Text analyzers"). Empty for every other
  // type. Default for kText: "" which CreateCollection and AlterCollection store as "english".
  std::string analyzer = std::string();  // (initialized: two-member aggregate inits stay quiet)
};

// An attribute's type as declarations write it (the CLI's --attr NAME:TYPE, the server's and
// Python's "type"): a type name, or for text "text" or "text:<analyzer>" ("text:simple",
// "text:stem:french"). ParseAttributeType sets attr->type and attr->analyzer (empty unless
// given); InvalidArgument naming the accepted forms. AttributeTypeText writes the type back:
// "text:<analyzer>" for a text attribute with an analyzer, else AttrTypeName.
Status ParseAttributeType(std::string_view text, AttributeSpec* attr);
std::string AttributeTypeText(const AttributeSpec& attr);

struct CollectionSpec {
  std::string name;  // see ValidateCollectionName
  uint32_t dim = 0;  // 1 .. 65536
  Metric metric = Metric::kL2;
  DType dtype = DType::kFloat32;
  std::vector<AttributeSpec> attributes;  // every attribute is nullable
  // Rows are spread over this many shards by a hash of their id. Default: 1.
  uint32_t shards = 1;
  // BM25's parameters for the text searches of this collection (SearchRequest::text): k1
  // finite, 0 to 1000; b 0 to 1. Default: 1.5 and 0.75 (bm25s's defaults; Lucene's k1 is 1.2).
  double bm25_k1 = 1.5;
  double bm25_b = 0.75;
};

// One attribute value of one row. std::monostate is null.
using Value = std::variant<std::monostate, int64_t, double, std::string, bool,
                           std::vector<std::string>>;

inline bool IsNull(const Value& v) { return std::holds_alternative<std::monostate>(v); }

}  // namespace sieve

#endif  // SIEVE_INCLUDE_SIEVE_TYPES_H_
