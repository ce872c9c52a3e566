// Copyright 2026 The Sieve Authors.
//
// Conversions between RowSet and the roaring::Roaring that storage persists, so that layers
// above index/ never include <roaring/...>.

#ifndef SIEVE_INDEX_ROARING_BRIDGE_H_
#define SIEVE_INDEX_ROARING_BRIDGE_H_

#include <memory>

#include "index/row_set.h"

namespace roaring {
class Roaring;
}

namespace sieve {

std::shared_ptr<roaring::Roaring> ToRoaring(const RowSet& set);
RowSet FromRoaring(const roaring::Roaring& bitmap);

}  // namespace sieve

#endif  // SIEVE_INDEX_ROARING_BRIDGE_H_
