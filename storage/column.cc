// Copyright 2026 The Sieve Authors.

#include "storage/column.h"

#include <algorithm>
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
    case AttrType::kText:
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
    case AttrType::kText:
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
    case AttrType::kText:
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
  if (type == AttrType::kText && segment != nullptr) {
    const uint32_t row = static_cast<uint32_t>(i);
    auto at = std::lower_bound(text_changed.begin(), text_changed.end(), row);
    if (at == text_changed.end() || *at != row) text_changed.insert(at, row);
  }
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
    case AttrType::kText:
      return Value(std::in_place_type<std::string>, strings[i]);
    case AttrType::kTags:
      return Value(std::in_place_type<std::vector<std::string>>, tags[i]);
  }
  return Value();
}

Status EnsureTextSegments(const std::vector<AttributeSpec>& schema, std::vector<Column>* columns) {
  for (size_t a = 0; a < columns->size() && a < schema.size(); ++a) {
    Column& col = (*columns)[a];
    if (col.type != AttrType::kText || col.SegmentCurrent()) continue;
    const std::string at = "attribute '" + schema[a].name + "'";
    std::shared_ptr<const TextAnalyzer> analyzer;
    SIEVE_RETURN_IF_ERROR(TextAnalyzer::Get(
        schema[a].analyzer.empty() ? kDefaultTextAnalyzer : schema[a].analyzer, &analyzer)
                              .WithContext(at));
    auto segment = std::make_shared<TextSegment>();
    if (col.segment != nullptr && col.segment->num_rows == col.size()) {
      SIEVE_RETURN_IF_ERROR(RebuildTextSegment(*analyzer, *col.segment, col.text_changed,
                                               col.strings, col.valid, segment.get())
                                .WithContext(at));
    } else {
      SIEVE_RETURN_IF_ERROR(
          BuildTextSegment(*analyzer, col.strings, col.valid, segment.get()).WithContext(at));
    }
    col.segment = std::move(segment);
    col.text_changed.clear();
  }
  return Status::OK();
}

}  // namespace sieve
