// Copyright 2026 The Sieve Authors.

#include "storage/column.h"

#include <cassert>
#include <utility>
#include <variant>

namespace sieve {

void Column::Reserve(size_t n) {
  valid.reserve(n);
  switch (type) {
    case AttrType::kInt:
    case AttrType::kBool:
      ints.reserve(n);
      break;
    case AttrType::kFloat:
      floats.reserve(n);
      break;
    case AttrType::kString:
      strings.reserve(n);
      break;
    case AttrType::kTags:
      tags.reserve(n);
      break;
  }
}

void Column::Append(const Value& v) {
  // A mismatched value is a caller bug; in release builds it is stored as null rather than
  // reinterpreted, so the column stays internally consistent.
  bool has = false;
  switch (type) {
    case AttrType::kInt:
      has = std::holds_alternative<int64_t>(v);
      ints.push_back(has ? std::get<int64_t>(v) : 0);
      break;
    case AttrType::kBool:
      has = std::holds_alternative<bool>(v);
      ints.push_back(has && std::get<bool>(v) ? 1 : 0);
      break;
    case AttrType::kFloat:
      has = std::holds_alternative<double>(v);
      floats.push_back(has ? std::get<double>(v) : 0.0);
      break;
    case AttrType::kString:
      has = std::holds_alternative<std::string>(v);
      strings.push_back(has ? std::get<std::string>(v) : std::string());
      break;
    case AttrType::kTags:
      has = std::holds_alternative<std::vector<std::string>>(v);
      tags.push_back(has ? std::get<std::vector<std::string>>(v) : std::vector<std::string>());
      break;
  }
  assert(has || IsNull(v));
  valid.push_back(has ? 1 : 0);
}

bool Column::Set(size_t i, const Value& v) {
  if (i >= valid.size()) return false;
  bool has = false;
  switch (type) {
    case AttrType::kInt:
      has = std::holds_alternative<int64_t>(v);
      ints[i] = has ? std::get<int64_t>(v) : 0;
      break;
    case AttrType::kBool:
      has = std::holds_alternative<bool>(v);
      ints[i] = has && std::get<bool>(v) ? 1 : 0;
      break;
    case AttrType::kFloat:
      has = std::holds_alternative<double>(v);
      floats[i] = has ? std::get<double>(v) : 0.0;
      break;
    case AttrType::kString:
      has = std::holds_alternative<std::string>(v);
      strings[i] = has ? std::get<std::string>(v) : std::string();
      break;
    case AttrType::kTags:
      has = std::holds_alternative<std::vector<std::string>>(v);
      tags[i] = has ? std::get<std::vector<std::string>>(v) : std::vector<std::string>();
      break;
  }
  if (!has && !IsNull(v)) return false;
  valid[i] = has ? 1 : 0;
  return true;
}

Value Column::Get(size_t i) const {
  if (i >= valid.size() || !valid[i]) return Value();
  switch (type) {
    case AttrType::kInt:
      return Value(std::in_place_type<int64_t>, ints[i]);
    case AttrType::kBool:
      return Value(std::in_place_type<bool>, ints[i] != 0);
    case AttrType::kFloat:
      return Value(std::in_place_type<double>, floats[i]);
    case AttrType::kString:
      return Value(std::in_place_type<std::string>, strings[i]);
    case AttrType::kTags:
      return Value(std::in_place_type<std::vector<std::string>>, tags[i]);
  }
  return Value();
}

}  // namespace sieve
