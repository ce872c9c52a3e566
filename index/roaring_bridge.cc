// Copyright 2026 The Sieve Authors.

#include "index/roaring_bridge.h"

#include <roaring/roaring.h>

#include "storage/roaring.h"

namespace sieve {

std::shared_ptr<roaring::Roaring> ToRoaring(const RowSet& set) {
  return std::make_shared<roaring::Roaring>(roaring_bitmap_copy(set.raw()));
}

RowSet FromRoaring(const roaring::Roaring& bitmap) {
  RowSet out;
  roaring_bitmap_overwrite(out.raw(), &bitmap.roaring);
  return out;
}

}  // namespace sieve
