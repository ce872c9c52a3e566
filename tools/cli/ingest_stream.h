// Copyright 2026 The Sieve Authors.
//
// `sieve ingest` when a Parquet file is among its inputs: the file is streamed, batch by
// batch, twice: first every batch is checked as the ingest would check it (nothing written),
// then the batches are committed. Memory holds about --batch-rows rows at a time (plus the
// ids, 8 bytes a row, kept to check that they are unique across the whole input), whatever
// the file's size; the other inputs (.npy, .fvecs, HDF5 vectors; .jsonl/.csv attributes;
// --ids) are read whole, as without Parquet.

#ifndef SIEVE_TOOLS_CLI_INGEST_STREAM_H_
#define SIEVE_TOOLS_CLI_INGEST_STREAM_H_

#include <cstddef>
#include <string>

#include "sieve/db.h"
#include "sieve/status.h"

namespace sieve::cli {

struct StreamedIngest {
  std::string vectors;     // --vectors: FILE.parquet:COLUMN, or a file ReadVectorsFile reads
  std::string attributes;  // --attributes: FILE.parquet[:COLUMN,...], .jsonl, .csv, or empty
  std::string ids;         // --ids FILE.npy, or empty
  std::string id_field;    // --id-field NAME, or empty
  size_t batch_rows = 65536;
  bool upsert = false;
  bool auto_ids = false;
};

// True when `vectors` or `attributes` names a Parquet file.
bool IsStreamedIngest(const std::string& vectors, const std::string& attributes);

// Ingests (or upserts) `in` into `collection`, whose live rows `live_rows` are, and reports
// the result on stdout. Whole or nothing for bad input: every row is checked before the first
// commit. Returns the exit code (1 after printing one line on stderr).
int RunStreamedIngest(Collection* collection, uint64_t live_rows, const StreamedIngest& in);

// `s` with every row number of its message ("row 5", "rows 0..9", "repeats row 2") moved
// on by `first_row`: the engine numbers rows from the start of one call, the user from the
// start of the file.
Status ShiftRowNumbers(const Status& s, size_t first_row);

}  // namespace sieve::cli

#endif  // SIEVE_TOOLS_CLI_INGEST_STREAM_H_
