// Copyright 2026 The Sieve Authors.

#include "storage/format.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <exception>
#include <iterator>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "storage/format_reader.h"
#include "storage/roaring.h"
#include "text/text_analyzer.h"

namespace sieve::format {

namespace {

constexpr bool kLittleEndian = std::endian::native == std::endian::little;

bool IsNameChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

// The index of the first component of data[0, n) that is not finite, or n. Branch-free over
// blocks so the compiler vectorizes it: bulk appends check every component of 0.5 GB.
size_t FirstNonFinite(const float* data, size_t n) {
  constexpr size_t kBlock = 1024;
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    uint32_t largest = 0;  // of the magnitudes' bit patterns; ≥ infinity's means inf or NaN
    for (size_t j = 0; j < kBlock; ++j) {
      largest = std::max(largest, std::bit_cast<uint32_t>(data[i + j]) & 0x7fffffffu);
    }
    if (largest >= 0x7f800000u) break;
  }
  for (; i < n; ++i) {
    if (!std::isfinite(data[i])) return i;
  }
  return n;
}

// Reads native floats from possibly unaligned bytes, for std::vector::assign.
struct UnalignedFloats {
  using iterator_category = std::random_access_iterator_tag;
  using value_type = float;
  using difference_type = std::ptrdiff_t;
  using pointer = const float*;
  using reference = float;

  const char* p;
  float operator*() const {
    float f;
    std::memcpy(&f, p, sizeof f);
    return f;
  }
  UnalignedFloats& operator++() {
    p += sizeof(float);
    return *this;
  }
  UnalignedFloats operator++(int) {
    UnalignedFloats old = *this;
    p += sizeof(float);
    return old;
  }
  UnalignedFloats& operator--() {
    p -= sizeof(float);
    return *this;
  }
  UnalignedFloats& operator+=(difference_type d) {
    p += d * static_cast<difference_type>(sizeof(float));
    return *this;
  }
  difference_type operator-(const UnalignedFloats& o) const {
    return (p - o.p) / static_cast<difference_type>(sizeof(float));
  }
  bool operator==(const UnalignedFloats& o) const { return p == o.p; }
  bool operator!=(const UnalignedFloats& o) const { return p != o.p; }
};

}  // namespace

void PutFixed32BE(std::string* dst, uint32_t v) {
  char buf[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                 static_cast<char>(v)};
  dst->append(buf, 4);
}

uint32_t GetFixed32BE(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) | (uint32_t{u[2]} << 8) | u[3];
}

void PutFixed32(std::string* dst, uint32_t v) {
  char buf[4];
  for (int i = 0; i < 4; ++i) buf[i] = static_cast<char>(v >> (8 * i));
  dst->append(buf, 4);
}

void PutFixed64(std::string* dst, uint64_t v) {
  char buf[8];
  for (int i = 0; i < 8; ++i) buf[i] = static_cast<char>(v >> (8 * i));
  dst->append(buf, 8);
}

uint32_t GetFixed32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | u[i];
  return v;
}

uint64_t GetFixed64(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | u[i];
  return v;
}

uint16_t FloatToHalf(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  const uint32_t abs = x & 0x7fffffff;
  if (abs >= 0x7f800000) {  // infinity or NaN; NaN keeps a quiet bit so it stays NaN
    return sign | 0x7c00 | (abs > 0x7f800000 ? 0x200 | ((abs >> 13) & 0x3ff) : 0);
  }
  // 65520 is halfway between 65504 (the largest half) and 65536; ties-to-even gives infinity.
  if (abs >= 0x477ff000) return sign | 0x7c00;
  if (abs >= 0x38800000) {  // normal half: rebias the exponent (127 → 15) and round 13 bits
    uint32_t h = (abs - 0x38000000) >> 13;
    const uint32_t rem = abs & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;  // a carry into the exponent is right
    return sign | static_cast<uint16_t>(h);
  }
  // Subnormal half (units of 2^-24) or zero.
  const uint32_t exp = abs >> 23;
  if (exp < 102) return sign;  // below 2^-25: rounds to zero
  const uint32_t mant = (abs & 0x7fffff) | 0x800000;
  const uint32_t shift = 126 - exp;  // 14 .. 24
  uint32_t h = mant >> shift;
  const uint32_t rem = mant & ((1u << shift) - 1);
  const uint32_t halfway = 1u << (shift - 1);
  if (rem > halfway || (rem == halfway && (h & 1))) ++h;
  return sign | static_cast<uint16_t>(h);
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  if (exp == 0) {
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000 | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

// --- Keys -----------------------------------------------------------------------------------

std::string CollectionKey(std::string_view name) {
  return std::string(kCollectionKeyPrefix) + std::string(name);
}

std::string AliasKey(std::string_view alias) {
  return std::string(kAliasKeyPrefix) + std::string(alias);
}

std::string EncodeAlias(std::string_view collection) {
  nlohmann::ordered_json j;
  j["format_version"] = kFormatVersion;
  j["collection"] = std::string(collection);
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

Status DecodeAlias(std::string_view value, std::string* collection) {
  try {
    const nlohmann::json j = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      return Status::Corruption("alias value is not a JSON object");
    }
    auto version = j.find("format_version");
    if (version == j.end() || !version->is_number_unsigned() ||
        version->get<uint64_t>() != kFormatVersion) {
      return Status::Corruption("alias value lacks 'format_version' " + Num(kFormatVersion));
    }
    auto target = j.find("collection");
    if (target == j.end() || !target->is_string()) {
      return Status::Corruption("alias value lacks a string 'collection'");
    }
    CollectionSpec probe;
    probe.name = target->get<std::string>();
    probe.dim = 1;
    Status s = ValidateSpec(probe);
    if (!s.ok()) return Status::Corruption("alias names a bad collection name: " + s.message());
    *collection = std::move(probe.name);
    return Status::OK();
  } catch (const std::exception& e) {
    return Status::Corruption(std::string("alias value cannot be decoded: ") + e.what());
  }
}

std::string ShardStateKey(uint32_t collection_id, uint32_t shard) {
  std::string key = kShardKeyPrefix;
  PutFixed32BE(&key, collection_id);
  PutFixed32BE(&key, shard);
  return key;
}

std::string SpaceKey(uint32_t space) {
  std::string key = kSpaceKeyPrefix;
  PutFixed32BE(&key, space);
  return key;
}

bool ParseSpaceKey(std::string_view key, uint32_t* space) {
  const std::string_view prefix = kSpaceKeyPrefix;
  if (key.size() != prefix.size() + 4 || key.substr(0, prefix.size()) != prefix) return false;
  *space = GetFixed32BE(key.data() + prefix.size());
  return true;
}

bool ParseShardStateKey(std::string_view key, uint32_t* collection_id, uint32_t* shard) {
  const std::string_view prefix = kShardKeyPrefix;
  if (key.size() != prefix.size() + 8 || key.substr(0, prefix.size()) != prefix) return false;
  *collection_id = GetFixed32BE(key.data() + prefix.size());
  *shard = GetFixed32BE(key.data() + prefix.size() + 4);
  return true;
}

std::string ChunkKey(char tag, uint32_t collection_id, uint32_t shard, uint32_t first_ordinal) {
  std::string key = ChunkPrefix(tag, collection_id, shard);
  PutFixed32BE(&key, first_ordinal);
  return key;
}

std::string ChunkPrefix(char tag, uint32_t collection_id, uint32_t shard) {
  std::string key(1, tag);
  PutFixed32BE(&key, collection_id);
  PutFixed32BE(&key, shard);
  return key;
}

std::string PrefixSuccessor(std::string_view prefix) {
  std::string s(prefix);
  while (!s.empty()) {
    auto& c = reinterpret_cast<unsigned char&>(s.back());
    if (c != 0xff) {
      ++c;
      return s;
    }
    s.pop_back();
  }
  return s;
}

bool ParseChunkKey(std::string_view key, char* tag, uint32_t* collection_id, uint32_t* shard,
                   uint32_t* first_ordinal) {
  if (key.size() != kChunkKeySize) return false;
  *tag = key[0];
  *collection_id = GetFixed32BE(key.data() + 1);
  *shard = GetFixed32BE(key.data() + 5);
  *first_ordinal = GetFixed32BE(key.data() + 9);
  return true;
}

// --- Collection metadata --------------------------------------------------------------------

std::string EncodeMeta(const CollectionMeta& meta) {
  nlohmann::ordered_json attrs = nlohmann::ordered_json::array();
  bool text = false;
  for (const AttributeSpec& a : meta.spec.attributes) {
    nlohmann::ordered_json attr = {{"name", a.name}, {"type", AttrTypeName(a.type)}};
    if (a.type == AttrType::kText) {
      attr["analyzer"] = a.analyzer;
      text = true;
    }
    attrs.push_back(std::move(attr));
  }
  nlohmann::ordered_json j;
  // Version 2 only where it is needed: stores without text attributes stay readable by
  // builds that know version 1 alone.
  j["format_version"] = text ? kTextMetaVersion : kFormatVersion;
  j["id"] = meta.id;
  j["spec"] = {{"name", meta.spec.name},
               {"dim", meta.spec.dim},
               {"metric", MetricName(meta.spec.metric)},
               {"dtype", DTypeName(meta.spec.dtype)},
               {"shards", meta.spec.shards},
               {"attributes", std::move(attrs)}};
  // Only where they differ from the defaults, so other collections' metadata stays as it was.
  const CollectionSpec defaults;
  if (meta.spec.bm25_k1 != defaults.bm25_k1 || meta.spec.bm25_b != defaults.bm25_b) {
    j["spec"]["bm25"] = {{"k1", meta.spec.bm25_k1}, {"b", meta.spec.bm25_b}};
  }
  j["next_auto_id"] = meta.next_auto_id;
  // Names are validated ASCII, so dump cannot meet invalid UTF-8; replace keeps it total.
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

Status DecodeMeta(std::string_view value, CollectionMeta* meta) {
  try {
    const nlohmann::json j = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      return Status::Corruption("collection metadata is not a JSON object");
    }
    auto field = [](const nlohmann::json& obj, const char* name) -> const nlohmann::json* {
      auto it = obj.find(name);
      return it == obj.end() ? nullptr : &*it;
    };
    const nlohmann::json* version = field(j, "format_version");
    if (!version || !version->is_number_unsigned()) {
      return Status::Corruption("collection metadata lacks an unsigned 'format_version'");
    }
    if (version->get<uint64_t>() != kFormatVersion &&
        version->get<uint64_t>() != kTextMetaVersion) {
      return Status::Corruption("collection metadata has format version " +
                                Num(version->get<uint64_t>()) + ", this build reads versions " +
                                Num(kFormatVersion) + " and " + Num(kTextMetaVersion));
    }
    const uint64_t meta_version = version->get<uint64_t>();
    const nlohmann::json* id = field(j, "id");
    const nlohmann::json* spec = field(j, "spec");
    const nlohmann::json* next_auto_id = field(j, "next_auto_id");
    if (!id || !id->is_number_unsigned() || id->get<uint64_t>() > UINT32_MAX) {
      return Status::Corruption("collection metadata has a missing or bad 'id'");
    }
    if (!next_auto_id || !next_auto_id->is_number_integer() || next_auto_id->get<int64_t>() < 0) {
      return Status::Corruption("collection metadata has a missing or bad 'next_auto_id'");
    }
    if (!spec || !spec->is_object()) {
      return Status::Corruption("collection metadata lacks a 'spec' object");
    }
    CollectionMeta m;
    m.id = id->get<uint32_t>();
    m.next_auto_id = next_auto_id->get<int64_t>();
    const nlohmann::json* name = field(*spec, "name");
    const nlohmann::json* dim = field(*spec, "dim");
    const nlohmann::json* metric = field(*spec, "metric");
    const nlohmann::json* dtype = field(*spec, "dtype");
    const nlohmann::json* shards = field(*spec, "shards");
    const nlohmann::json* attrs = field(*spec, "attributes");
    if (!name || !name->is_string()) return Status::Corruption("spec lacks a string 'name'");
    m.spec.name = name->get<std::string>();
    if (!dim || !dim->is_number_unsigned() || dim->get<uint64_t>() > UINT32_MAX) {
      return Status::Corruption("spec has a missing or bad 'dim'");
    }
    m.spec.dim = dim->get<uint32_t>();
    if (!shards || !shards->is_number_unsigned() || shards->get<uint64_t>() > UINT32_MAX) {
      return Status::Corruption("spec has a missing or bad 'shards'");
    }
    m.spec.shards = shards->get<uint32_t>();
    if (!metric || !metric->is_string()) return Status::Corruption("spec lacks 'metric'");
    Status s = ParseMetric(metric->get<std::string>(), &m.spec.metric);
    if (!s.ok()) return Status::Corruption("spec: " + s.message());
    if (!dtype || !dtype->is_string()) return Status::Corruption("spec lacks 'dtype'");
    s = ParseDType(dtype->get<std::string>(), &m.spec.dtype);
    if (!s.ok()) return Status::Corruption("spec: " + s.message());
    if (!attrs || !attrs->is_array()) return Status::Corruption("spec lacks 'attributes'");
    for (const nlohmann::json& a : *attrs) {
      const nlohmann::json* aname = a.is_object() ? field(a, "name") : nullptr;
      const nlohmann::json* atype = a.is_object() ? field(a, "type") : nullptr;
      if (!aname || !aname->is_string() || !atype || !atype->is_string()) {
        return Status::Corruption("spec has a malformed attribute entry");
      }
      AttributeSpec as;
      as.name = aname->get<std::string>();
      s = ParseAttrType(atype->get<std::string>(), &as.type);
      if (!s.ok()) return Status::Corruption("spec attribute '" + as.name + "': " + s.message());
      const nlohmann::json* analyzer = field(a, "analyzer");
      if (as.type == AttrType::kText) {
        if (meta_version < kTextMetaVersion) {
          return Status::Corruption("spec attribute '" + as.name +
                                    "': a text attribute in metadata of format version " +
                                    Num(meta_version));
        }
        if (!analyzer || !analyzer->is_string() || analyzer->get<std::string>().empty()) {
          return Status::Corruption("spec attribute '" + as.name + "' lacks its 'analyzer'");
        }
        as.analyzer = analyzer->get<std::string>();
      } else if (analyzer) {
        return Status::Corruption("spec attribute '" + as.name + "' is " +
                                  AttrTypeName(as.type) + " and has an 'analyzer'");
      }
      m.spec.attributes.push_back(std::move(as));
    }
    if (const nlohmann::json* bm25 = field(*spec, "bm25")) {
      const nlohmann::json* k1 = bm25->is_object() ? field(*bm25, "k1") : nullptr;
      const nlohmann::json* b = bm25->is_object() ? field(*bm25, "b") : nullptr;
      if (!k1 || !k1->is_number() || !b || !b->is_number()) {
        return Status::Corruption(
            "spec has a malformed 'bm25' (want {\"k1\": number, \"b\": number})");
      }
      m.spec.bm25_k1 = k1->get<double>();
      m.spec.bm25_b = b->get<double>();
    }
    s = ValidateSpec(m.spec);
    if (!s.ok()) return Status::Corruption("spec is invalid: " + s.message());
    *meta = std::move(m);
    return Status::OK();
  } catch (const std::exception& e) {
    return Status::Corruption(std::string("collection metadata cannot be decoded: ") + e.what());
  }
}

Status ValidateSpec(const CollectionSpec& spec) {
  const std::string& name = spec.name;
  if (name.empty() || name.size() > 128) {
    return Status::InvalidArgument("collection name must be 1 to 128 characters, got " +
                                   Num(name.size()));
  }
  for (char c : name) {
    if (!IsNameChar(c) && c != '.' && c != '-') {
      return Status::InvalidArgument("collection name '" + name +
                                     "' may only contain A-Z, a-z, 0-9, '_', '.' and '-'");
    }
  }
  const std::string where = "collection '" + name + "': ";
  if (spec.dim < 1 || spec.dim > 65536) {
    return Status::InvalidArgument(where + "dim must be 1 to 65536, got " + Num(spec.dim));
  }
  if (spec.shards < 1 || spec.shards > 1024) {
    return Status::InvalidArgument(where + "shards must be 1 to 1024, got " + Num(spec.shards));
  }
  if (static_cast<uint8_t>(spec.metric) > static_cast<uint8_t>(Metric::kCosine)) {
    return Status::InvalidArgument(where + "unknown metric " +
                                   Num(static_cast<uint8_t>(spec.metric)));
  }
  if (static_cast<uint8_t>(spec.dtype) > static_cast<uint8_t>(DType::kFloat16)) {
    return Status::InvalidArgument(where + "unknown dtype " +
                                   Num(static_cast<uint8_t>(spec.dtype)));
  }
  if (!std::isfinite(spec.bm25_k1) || spec.bm25_k1 < 0 || spec.bm25_k1 > 1000) {
    return Status::InvalidArgument(where + "bm25 k1 must be a finite number from 0 to 1000, got " +
                                   std::to_string(spec.bm25_k1));
  }
  if (!(spec.bm25_b >= 0 && spec.bm25_b <= 1)) {
    return Status::InvalidArgument(where + "bm25 b must be a number from 0 to 1, got " +
                                   std::to_string(spec.bm25_b));
  }
  std::set<std::string_view> seen;
  for (size_t i = 0; i < spec.attributes.size(); ++i) {
    const AttributeSpec& a = spec.attributes[i];
    const std::string at = where + "attribute " + Num(i) + " '" + a.name + "': ";
    if (a.name.empty() || a.name.size() > 128) {
      return Status::InvalidArgument(at + "name must be 1 to 128 characters");
    }
    if (a.name[0] >= '0' && a.name[0] <= '9') {
      return Status::InvalidArgument(at + "name must not start with a digit");
    }
    for (char c : a.name) {
      if (!IsNameChar(c)) {
        return Status::InvalidArgument(at + "name may only contain A-Z, a-z, 0-9 and '_'");
      }
    }
    if (static_cast<uint8_t>(a.type) > static_cast<uint8_t>(AttrType::kText)) {
      return Status::InvalidArgument(at + "unknown type " + Num(static_cast<uint8_t>(a.type)));
    }
    if (a.type == AttrType::kText) {
      if (a.analyzer.empty()) {
        return Status::InvalidArgument(at + "a text attribute needs an analyzer");
      }
      SIEVE_RETURN_IF_ERROR(
          TextAnalyzer::Validate(a.analyzer).WithContext(at.substr(0, at.size() - 2)));
    } else if (!a.analyzer.empty()) {
      return Status::InvalidArgument(at + "only text attributes have an analyzer ('" +
                                     a.name + "' is " + AttrTypeName(a.type) + ")");
    }
    if (!seen.insert(a.name).second) {
      return Status::InvalidArgument(at + "name appears more than once");
    }
  }
  return Status::OK();
}

// --- Shard state ----------------------------------------------------------------------------

void EncodeShardState(const ShardState& state, std::string* out) {
  out->clear();
  // Version 1 while the shard's chunks are keyed by its collection's id; 2 adds the space.
  out->push_back(static_cast<char>(state.space == 0 ? 1 : 2));
  out->append(3, '\0');
  PutFixed32(out, state.next_ordinal);
  PutFixed64(out, state.live_rows);
  const size_t n = state.deleted ? state.deleted->getSizeInBytes(/*portable=*/true) : 0;
  PutFixed32(out, static_cast<uint32_t>(n));
  if (state.deleted) {
    const size_t at = out->size();
    out->resize(at + n);
    state.deleted->write(out->data() + at, /*portable=*/true);
  }
  if (state.space != 0) PutFixed32(out, state.space);
}

Status DecodeShardState(std::string_view value, ShardState* state) {
  if (value.size() < kShardStateHeaderSize) {
    return Truncated("shard state", kShardStateHeaderSize, value.size());
  }
  const uint8_t version = static_cast<uint8_t>(value[0]);
  if (version != 1 && version != 2) {
    return Status::Corruption("shard state has format version " + Num(version) +
                              ", this build reads versions 1 and 2");
  }
  ShardState s;
  s.next_ordinal = GetFixed32(value.data() + 4);
  s.live_rows = GetFixed64(value.data() + 8);
  const uint32_t n = GetFixed32(value.data() + 16);
  const size_t expected = kShardStateHeaderSize + size_t{n} + (version == 2 ? 4 : 0);
  if (value.size() != expected) {
    return Status::Corruption("shard state is " + Num(value.size()) + " bytes, its header says " +
                              Num(expected));
  }
  if (n == 0) {
    s.deleted = std::make_shared<roaring::Roaring>();
  } else {
    const char* buf = value.data() + kShardStateHeaderSize;
    if (roaring_bitmap_portable_deserialize_size(buf, n) != n) {
      return Status::Corruption("shard state's deleted bitmap (" + Num(n) +
                                " bytes) is not a valid portable Roaring bitmap");
    }
    roaring_bitmap_t* r = roaring_bitmap_portable_deserialize_safe(buf, n);
    if (r == nullptr) {
      return Status::Corruption("shard state's deleted bitmap cannot be deserialized");
    }
    s.deleted = std::make_shared<roaring::Roaring>(r);
  }
  if (version == 2) {
    s.space = GetFixed32(value.data() + kShardStateHeaderSize + n);
    if (s.space == 0) return Status::Corruption("shard state of version 2 has key space 0");
  }
  *state = std::move(s);
  return Status::OK();
}

Status CheckShardState(const ShardState& state) {
  const uint64_t deleted = state.deleted ? state.deleted->cardinality() : 0;
  if (deleted > 0 && state.deleted->maximum() >= state.next_ordinal) {
    return Status::InvalidArgument("deleted ordinal " + Num(state.deleted->maximum()) +
                                   " is not below next_ordinal " + Num(state.next_ordinal));
  }
  if (state.live_rows + deleted != state.next_ordinal) {
    return Status::InvalidArgument("live_rows " + Num(state.live_rows) + " + deleted " +
                                   Num(deleted) + " != next_ordinal " + Num(state.next_ordinal));
  }
  return Status::OK();
}

// --- Vectors --------------------------------------------------------------------------------

void EncodeVectorsHeader(uint32_t num_rows, uint32_t dim, DType dtype, std::string* out) {
  out->push_back(static_cast<char>(kFormatVersion));
  out->push_back(static_cast<char>(dtype));
  out->append(2, '\0');
  PutFixed32(out, num_rows);
  PutFixed32(out, dim);
}

Status EncodeVectorsPayload(const float* data, uint32_t num_rows, uint32_t dim, DType dtype,
                            std::string* out) {
  const size_t n = size_t{num_rows} * dim;
  size_t bad = n;
  if (dtype == DType::kFloat16) {
    for (size_t i = 0; i < n && bad == n; ++i) {
      if ((FloatToHalf(data[i]) & 0x7c00) == 0x7c00) bad = i;
    }
  } else {
    bad = FirstNonFinite(data, n);
  }
  if (bad != n) {
    return Status::InvalidArgument("vector row " + Num(bad / dim) + " component " + Num(bad % dim) +
                                   " is not finite as " + DTypeName(dtype));
  }
  if (out == nullptr) return Status::OK();
  const size_t at = out->size();
  if (dtype == DType::kFloat16) {
    out->resize(at + n * 2);
    char* p = out->data() + at;
    for (size_t i = 0; i < n; ++i) {
      const uint16_t h = FloatToHalf(data[i]);
      p[2 * i] = static_cast<char>(h);
      p[2 * i + 1] = static_cast<char>(h >> 8);
    }
  } else if constexpr (kLittleEndian) {
    out->append(reinterpret_cast<const char*>(data), n * 4);
  } else {
    for (size_t i = 0; i < n; ++i) PutFixed32(out, std::bit_cast<uint32_t>(data[i]));
  }
  return Status::OK();
}

Status DecodeVectors(std::string_view value, uint32_t dim, DType dtype, uint32_t* num_rows,
                     std::vector<float>* out) {
  if (value.size() < kVectorsHeaderSize) {
    return Truncated("vector chunk", kVectorsHeaderSize, value.size());
  }
  SIEVE_RETURN_IF_ERROR(CheckVersion("vector chunk", static_cast<uint8_t>(value[0])));
  const auto stored_dtype = static_cast<uint8_t>(value[1]);
  if (stored_dtype != static_cast<uint8_t>(dtype)) {
    return Status::Corruption("vector chunk has dtype code " + Num(stored_dtype) +
                              ", the collection's is " + DTypeName(dtype));
  }
  const uint32_t rows = GetFixed32(value.data() + 4);
  const uint32_t stored_dim = GetFixed32(value.data() + 8);
  if (stored_dim != dim) {
    return Status::Corruption("vector chunk has dim " + Num(stored_dim) + ", the collection's is " +
                              Num(dim));
  }
  const size_t n = size_t{rows} * dim;
  const size_t width = dtype == DType::kFloat16 ? 2 : 4;
  if (value.size() != kVectorsHeaderSize + n * width) {
    return Status::Corruption("vector chunk of " + Num(rows) + " rows × " + Num(dim) + " is " +
                              Num(value.size()) + " bytes, expected " +
                              Num(kVectorsHeaderSize + n * width));
  }
  *num_rows = rows;
  if (out == nullptr) return Status::OK();
  const char* p = value.data() + kVectorsHeaderSize;
  if (dtype == DType::kFloat32 && kLittleEndian) {
    // One pass (no zero-fill before a copy); the payload need not be aligned.
    out->assign(UnalignedFloats{p}, UnalignedFloats{p + n * 4});
    return Status::OK();
  }
  out->resize(n);
  if (dtype == DType::kFloat16) {
    for (size_t i = 0; i < n; ++i) {
      const auto* u = reinterpret_cast<const unsigned char*>(p + 2 * i);
      (*out)[i] = HalfToFloat(static_cast<uint16_t>(u[0] | (u[1] << 8)));
    }
  } else if constexpr (kLittleEndian) {
    std::memcpy(out->data(), p, n * 4);
  } else {
    for (size_t i = 0; i < n; ++i) (*out)[i] = std::bit_cast<float>(GetFixed32(p + 4 * i));
  }
  return Status::OK();
}

Status CheckFinite(const std::vector<float>& vectors, uint32_t dim) {
  const size_t i = FirstNonFinite(vectors.data(), vectors.size());
  if (i != vectors.size()) {
    return Status::Corruption("vector row " + Num(i / dim) + " component " + Num(i % dim) +
                              " is not finite");
  }
  return Status::OK();
}

// --- Ids ------------------------------------------------------------------------------------

void EncodeIdsHeader(uint32_t num_rows, std::string* out) {
  out->push_back(static_cast<char>(kFormatVersion));
  out->append(3, '\0');
  PutFixed32(out, num_rows);
}

Status DecodeIds(std::string_view value, uint32_t* num_rows, std::vector<int64_t>* out) {
  if (value.size() < kIdsHeaderSize) return Truncated("id chunk", kIdsHeaderSize, value.size());
  SIEVE_RETURN_IF_ERROR(CheckVersion("id chunk", static_cast<uint8_t>(value[0])));
  const uint32_t rows = GetFixed32(value.data() + 4);
  if (value.size() != kIdsHeaderSize + size_t{rows} * 8) {
    return Status::Corruption("id chunk of " + Num(rows) + " rows is " + Num(value.size()) +
                              " bytes, expected " + Num(kIdsHeaderSize + size_t{rows} * 8));
  }
  *num_rows = rows;
  if (out == nullptr) return Status::OK();
  out->resize(rows);
  const char* p = value.data() + kIdsHeaderSize;
  if constexpr (kLittleEndian) {
    std::memcpy(out->data(), p, size_t{rows} * 8);
  } else {
    for (size_t i = 0; i < rows; ++i) (*out)[i] = static_cast<int64_t>(GetFixed64(p + 8 * i));
  }
  return Status::OK();
}

}  // namespace sieve::format
