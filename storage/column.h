// Copyright 2026 The Sieve Authors.
//
// Column holds one attribute's values for a run of consecutive rows, in the form storage
// encodes them and index/ builds from. Only the vector matching `type` is used.
//
// A text column keeps its values in `strings` and, beside them, the inverted index of its rows
// (`segment`, text/text_segment.h), which is stored with it. Append leaves the segment stale
// and Set records the rows it changed; EnsureTextSegments brings it up to date (analyzing only
// the changed rows when it can), and storage encodes a text column only with its segment.

#ifndef SIEVE_STORAGE_COLUMN_H_
#define SIEVE_STORAGE_COLUMN_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sieve/types.h"
#include "text/text_segment.h"

namespace sieve {

struct Column {
  AttrType type = AttrType::kInt;
  std::vector<uint8_t> valid;      // per row: 1 = has a value, 0 = null
  std::vector<int64_t> ints;       // kInt values, kBool as 0/1; 0 where null
  std::vector<double> floats;      // kFloat values; 0 where null
  std::vector<std::string> strings;              // kString and kText values; "" where null
  std::vector<std::vector<std::string>> tags;    // kTags values; {} where null
  // kText: the inverted index of rows [0, size()) (null when never built), and the rows Set
  // has changed since it was built, ascending and unique.
  std::shared_ptr<const TextSegment> segment;
  std::vector<uint32_t> text_changed;

  size_t size() const { return valid.size(); }
  void Reserve(size_t n);
  // Appends one value; `v` must be null or match `type` (checked by the caller).
  void Append(const Value& v);
  // Replaces row i's value with `v` (null, or of `type`). False, changing nothing, when i is
  // out of range or `v` has another type.
  bool Set(size_t i, const Value& v);
  // The value of row i as a Value (null when !valid[i]).
  Value Get(size_t i) const;
  // kText: whether `segment` indexes exactly the current values.
  bool SegmentCurrent() const {
    return segment != nullptr && segment->num_rows == valid.size() && text_changed.empty();
  }
};

// Brings the segment of every text column of `columns` (schema order) up to date with its
// values through the attribute's analyzer: rebuilt for the rows Set changed, or built whole.
// InvalidArgument for an unknown analyzer or a text that cannot be analyzed (naming the
// attribute and row).
Status EnsureTextSegments(const std::vector<AttributeSpec>& schema, std::vector<Column>* columns);

}  // namespace sieve

#endif  // SIEVE_STORAGE_COLUMN_H_
