// Copyright 2026 The Sieve Authors.
//
// Column holds one attribute's values for a run of consecutive rows, in the form storage
// encodes them and index/ builds from. Only the vector matching `type` is used.

#ifndef SIEVE_STORAGE_COLUMN_H_
#define SIEVE_STORAGE_COLUMN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sieve/types.h"

namespace sieve {

struct Column {
  AttrType type = AttrType::kInt;
  std::vector<uint8_t> valid;      // per row: 1 = has a value, 0 = null
  std::vector<int64_t> ints;       // kInt values, kBool as 0/1; 0 where null
  std::vector<double> floats;      // kFloat values; 0 where null
  std::vector<std::string> strings;              // kString values; "" where null
  std::vector<std::vector<std::string>> tags;    // kTags values; {} where null

  size_t size() const { return valid.size(); }
  void Reserve(size_t n);
  // Appends one value; `v` must be null or match `type` (checked by the caller).
  void Append(const Value& v);
  // Replaces row i's value with `v` (null, or of `type`). False, changing nothing, when i is
  // out of range or `v` has another type.
  bool Set(size_t i, const Value& v);
  // The value of row i as a Value (null when !valid[i]).
  Value Get(size_t i) const;
};

}  // namespace sieve

#endif  // SIEVE_STORAGE_COLUMN_H_
