// Copyright 2026 The Sieve Authors.
//
// AttributeIndex answers predicates on one attribute of one shard with RowSets, without
// scanning rows: equality and IN from postings (one Roaring bitmap per distinct value, or per
// tag for `tags`), numeric ranges from a sorted (value, ordinal) index with bucket bitmaps,
// IS NULL from the null set. Built in memory from storage's columns. A text attribute keeps
// its values and nulls here and its terms in a TextIndex (index/text_index.h).
//
// Results include deleted rows; the filter compiler removes them.
//
// Thread-safety: Append needs exclusive access; const methods may run concurrently.

#ifndef SIEVE_INDEX_ATTRIBUTE_INDEX_H_
#define SIEVE_INDEX_ATTRIBUTE_INDEX_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "index/row_set.h"
#include "sieve/types.h"
#include "storage/column.h"

namespace sieve {

class AttributeIndex {
 public:
  explicit AttributeIndex(AttrType type);
  ~AttributeIndex();
  AttributeIndex(AttributeIndex&&) noexcept;
  // A deep copy (a shard image copied for a writer: ShardIndex::CopyForWrite).
  AttributeIndex Copy() const;
  AttributeIndex& operator=(AttributeIndex&&) noexcept;

  AttrType type() const;
  uint32_t rows() const;  // rows appended so far

  // Appends the column's rows at ordinals [rows(), rows() + column.size()).
  void Append(const Column& column);

  const RowSet& nulls() const;     // rows whose value is null
  const RowSet& non_null() const;  // rows with a value

  // Equality postings. For kBool use EqualInt(0 or 1). Unknown values give an empty set.
  RowSet EqualInt(int64_t v) const;
  RowSet EqualString(std::string_view v) const;
  RowSet ContainsTag(std::string_view tag) const;  // kTags only

  // The postings of one value, as a grouped search sees them: an int64_t (kInt), a bool
  // (kBool), a string (kString, or one tag of kTags). Empty for any other type or value.
  RowSet Postings(const Value& value) const;
  // Values with postings (kInt, kBool, kString, kTags; 0 for the others). A value's postings
  // may hold only deleted rows.
  size_t distinct_values() const;
  // Calls fn(value, postings) for each value with postings (as Postings takes it), in no
  // particular order.
  void ForEachPosting(const std::function<void(const Value&, const RowSet&)>& fn) const;

  // Numeric ranges over non-null rows. For kInt the bounds are inclusive int64; for kFloat
  // each bound says whether it is inclusive. NaN never matches.
  RowSet IntRange(int64_t lo, int64_t hi) const;
  RowSet FloatRange(double lo, bool lo_inclusive, double hi, bool hi_inclusive) const;

  // Replaces the value of one row (null, or a value of this attribute's type; an int is not
  // converted for a float attribute: the caller does that). Requires exclusive access.
  void Set(uint32_t ordinal, const Value& value);

  // Merges the values appended since the last range query into the range index now, so that
  // the next query does not pay for it (ShardIndex::Load calls it after a bulk load). Safe to
  // call concurrently with queries.
  void BuildRangeIndex() const;

  // The value of one row (for checks and tests).
  Value ValueAt(uint32_t ordinal) const;

 private:
  // Rebuilds the numeric range index from the current values (after many Set calls).
  void RebuildRange();

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sieve

#endif  // SIEVE_INDEX_ATTRIBUTE_INDEX_H_
