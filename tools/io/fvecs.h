// Copyright 2026 The Sieve Authors.
//
// The .fvecs format of the TEXMEX / ANN benchmark sets: a sequence of records, each an int32
// little-endian dimension d followed by d float32 values. Every record of a file has the same
// d. There is no header, so the file size must be a whole number of records.
//
// Errors are one-line messages starting with "file <path>:" that name the record (0-based)
// where reading stopped. All functions are thread-safe (they share no state).

#ifndef SIEVE_TOOLS_IO_FVECS_H_
#define SIEVE_TOOLS_IO_FVECS_H_

#include <cstddef>
#include <string>

#include "sieve/status.h"
#include "tools/io/npy.h"

namespace sieve::io {

// Reads every record into `out` (rows = records, cols = d). InvalidArgument for an empty
// file, a dimension <= 0, a record whose dimension differs from record 0's, or a truncated
// last record; IOError when the file cannot be read; ResourceExhausted when memory for the
// data cannot be allocated. Values are returned as stored (NaN is not rejected here).
// `*out` is unspecified on error.
Status ReadFvecs(const std::string& path, NpyMatrix* out);

// Writes rows × cols floats as .fvecs, replacing any existing file. REQUIRES: 0 < cols <=
// INT32_MAX; `data` holds rows × cols values. IOError when the file cannot be written.
Status WriteFvecs(const std::string& path, const float* data, size_t rows, size_t cols);

}  // namespace sieve::io

#endif  // SIEVE_TOOLS_IO_FVECS_H_
