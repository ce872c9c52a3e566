// Copyright 2026 The Sieve Authors.
//
// Private to engine/: what the parts of DBImpl share (db_impl.cc, db_search.cc, db_writes.cc,
// db_rows.cc): value checks, the float64 distance, chunk sizing, timing.

#ifndef SIEVE_ENGINE_DB_UTIL_H_
#define SIEVE_ENGINE_DB_UTIL_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "index/shard_index.h"
#include "sieve/db.h"
#include "sieve/status.h"
#include "sieve/types.h"

namespace sieve {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0);

// Rows per stored chunk: large enough that loading reads long sequential values, small
// enough that one chunk of a 64k-dim collection stays within a few hundred MB.
uint32_t ChunkRows(uint32_t dim);

// "null", "int", "float", "string", "bool", "tags".
const char* ValueTypeName(const Value& v);
// Checks `v` against `type`, converting an int given for a float attribute.
Status CheckValue(AttrType type, Value* v);
// A value as the filter language writes it (messages).
std::string ValueText(const Value& v);

bool LargerIsBetter(Metric m);
// A vector component as the collection stores it (float16: rounded to the nearest half).
float StoredValue(DType dtype, float x);
// Distance of the metric in float64 between a float query and a stored row.
double ExactDistance(Metric metric, const float* q, const float* x, uint32_t dim);
// The attributes `include` names, as indexes into the schema (in result order), and their
// names. InvalidArgument for an unknown name, listing the valid ones.
Status ResolveInclude(const CollectionSpec& spec, const Include& include,
                      std::vector<size_t>* attrs, std::vector<std::string>* names);
// Fills `row` (id, the attributes `attrs`, the vector when include.vector) from a shard's
// in-memory image.
void FillRow(const ShardIndex& shard, uint32_t ordinal, const std::vector<size_t>& attrs,
             bool vector, Row* row);

}  // namespace sieve

#endif  // SIEVE_ENGINE_DB_UTIL_H_
