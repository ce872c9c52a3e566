// Copyright 2026 The Sieve Authors.
//
// Private to storage/: the byte-level encoding of Store's keys and values, as written down in
// storage/FORMAT.md. Pure functions with no RocksDB dependency, so tests can exercise them
// directly. Decoders never trust their input: every length is checked against the bytes
// present and a failure is Corruption (callers add collection/shard/ordinal context).

#ifndef SIEVE_STORAGE_FORMAT_H_
#define SIEVE_STORAGE_FORMAT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sieve/status.h"
#include "sieve/types.h"
#include "storage/column.h"
#include "storage/store.h"

namespace sieve::format {

// Version of every value layout below; bumped on any incompatible change.
inline constexpr uint8_t kFormatVersion = 1;
// The collection metadata of a collection with a text attribute carries this version, so that
// a build that knows no text attributes refuses it by its version rather than by its type.
inline constexpr uint8_t kTextMetaVersion = 2;

// Column family names.
inline constexpr char kMetaFamily[] = "meta";
inline constexpr char kVectorsFamily[] = "vectors";
inline constexpr char kRowsFamily[] = "rows";

// Keys of the meta family.
inline constexpr char kFormatVersionKey[] = "format_version";
inline constexpr char kNextCollectionIdKey[] = "next_collection_id";
inline constexpr char kCollectionKeyPrefix[] = "collection/";
inline constexpr char kShardKeyPrefix[] = "shard/";
// A key space being written by a compaction that has not committed (FORMAT.md, "Key spaces").
inline constexpr char kSpaceKeyPrefix[] = "space/";
// The store's commit counter (FORMAT.md, "The commit ledger").
inline constexpr char kCommitSeqKey[] = "commit_seq";
// Database-wide settings: kSettingKeyPrefix + name.
inline constexpr char kSettingKeyPrefix[] = "setting/";
// Aliases: kAliasKeyPrefix + alias name; the value names the collection (EncodeAlias).
inline constexpr char kAliasKeyPrefix[] = "alias/";

// First byte of a chunk key: which part of a chunk the value holds.
inline constexpr char kVectorsTag = 'v';  // vectors family
inline constexpr char kIdsTag = 'i';      // rows family
inline constexpr char kColumnsTag = 'a';  // rows family

inline constexpr size_t kChunkKeySize = 13;
inline constexpr size_t kVectorsHeaderSize = 12;
inline constexpr size_t kIdsHeaderSize = 8;
inline constexpr size_t kColumnsHeaderSize = 12;
inline constexpr size_t kColumnHeaderSize = 8;
inline constexpr size_t kShardStateHeaderSize = 20;

// Fixed-width integers. Keys are big-endian so that byte order is numeric order; values are
// little-endian.
void PutFixed32BE(std::string* dst, uint32_t v);
uint32_t GetFixed32BE(const char* p);
void PutFixed32(std::string* dst, uint32_t v);
void PutFixed64(std::string* dst, uint64_t v);
uint32_t GetFixed32(const char* p);
uint64_t GetFixed64(const char* p);

// IEEE 754 binary16 <-> binary32. FloatToHalf rounds to nearest, ties to even; values beyond
// the half range become ±infinity; NaN stays NaN. HalfToFloat is exact.
uint16_t FloatToHalf(float f);
float HalfToFloat(uint16_t h);

// --- Keys -----------------------------------------------------------------------------------

std::string CollectionKey(std::string_view name);
std::string ShardStateKey(uint32_t collection_id, uint32_t shard);
// Returns false when `key` is not a well-formed shard state key.
bool ParseShardStateKey(std::string_view key, uint32_t* collection_id, uint32_t* shard);

// "space/" + BE space id; the value is the collection id and shard (u32 LE each).
std::string SpaceKey(uint32_t space);
bool ParseSpaceKey(std::string_view key, uint32_t* space);

// tag + BE collection id + BE shard + BE first ordinal.
std::string ChunkKey(char tag, uint32_t collection_id, uint32_t shard, uint32_t first_ordinal);
// The 9-byte prefix shared by every chunk key of one part of one shard.
std::string ChunkPrefix(char tag, uint32_t collection_id, uint32_t shard);
// The smallest key greater than every key that starts with `prefix` ("" if none exists).
std::string PrefixSuccessor(std::string_view prefix);
bool ParseChunkKey(std::string_view key, char* tag, uint32_t* collection_id, uint32_t* shard,
                   uint32_t* first_ordinal);

// --- Values ---------------------------------------------------------------------------------

// Collection metadata as one JSON object.
std::string EncodeMeta(const CollectionMeta& meta);
Status DecodeMeta(std::string_view value, CollectionMeta* meta);

std::string AliasKey(std::string_view alias);
// An alias's value: {"format_version":1,"collection":"<name>"}.
std::string EncodeAlias(std::string_view collection);
// Corruption unless `value` is an alias value naming a valid collection name.
Status DecodeAlias(std::string_view value, std::string* collection);

// InvalidArgument naming the problem when `spec` breaks a rule of CollectionSpec.
Status ValidateSpec(const CollectionSpec& spec);

void EncodeShardState(const ShardState& state, std::string* out);
// Fills every field; state->deleted is never null on success.
Status DecodeShardState(std::string_view value, ShardState* state);
// InvalidArgument unless deleted ⊆ [0, next_ordinal) and live_rows == next_ordinal − |deleted|
// (a null `deleted` counts as empty).
Status CheckShardState(const ShardState& state);

// The 12-byte vectors header. The payload (num_rows × dim floats or halves) follows it; for
// float32 it is the little-endian floats themselves, which callers may append without a copy.
void EncodeVectorsHeader(uint32_t num_rows, uint32_t dim, DType dtype, std::string* out);
// Encodes num_rows × dim floats as `dtype`. InvalidArgument naming the row and component when
// a value is not finite in the stored type (float16: beyond ±65504 after rounding). With a
// null `out` it only validates.
Status EncodeVectorsPayload(const float* data, uint32_t num_rows, uint32_t dim, DType dtype,
                            std::string* out);
// Checks the header against `dim` and `dtype` and the payload size; decodes into *out when it
// is non-null (resized to num_rows × dim).
Status DecodeVectors(std::string_view value, uint32_t dim, DType dtype, uint32_t* num_rows,
                     std::vector<float>* out);
// Corruption naming the first non-finite component of a decoded block.
Status CheckFinite(const std::vector<float>& vectors, uint32_t dim);

void EncodeIdsHeader(uint32_t num_rows, std::string* out);
Status DecodeIds(std::string_view value, uint32_t* num_rows, std::vector<int64_t>* out);

// InvalidArgument unless `columns` matches `schema` (count, types) and every column holds
// num_rows rows in the vector its type uses.
Status CheckColumns(const std::vector<Column>& columns, const std::vector<AttributeSpec>& schema,
                    uint32_t num_rows);
// Encodes rows [begin, begin + num_rows) of columns that passed CheckColumns.
void EncodeColumns(const std::vector<Column>& columns, uint32_t begin, uint32_t num_rows,
                   std::string* out);
// Checks the value against `schema`; decodes into *out when it is non-null.
Status DecodeColumns(std::string_view value, const std::vector<AttributeSpec>& schema,
                     uint32_t* num_rows, std::vector<Column>* out);

}  // namespace sieve::format

#endif  // SIEVE_STORAGE_FORMAT_H_
