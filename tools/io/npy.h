// Copyright 2026 The Sieve Authors.
//
// Reading and writing NumPy .npy files (format versions 1.0, 2.0 and 3.0): the vectors and
// query files of the CLI are 2-D float arrays, its id files 1-D int64 arrays.
//
// Every reader validates the whole file before returning: magic, header, dtype, C order,
// shape, and that the file holds exactly header + rows × cols × itemsize bytes. Failures
// return InvalidArgument (bad content) or IOError (the file cannot be read), with a one-line
// message that starts with "file <path>:"; no reader throws or aborts on any input.
// All functions are thread-safe (they share no state).

#ifndef SIEVE_TOOLS_IO_NPY_H_
#define SIEVE_TOOLS_IO_NPY_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sieve/status.h"

namespace sieve::io {

// A row-major rows × cols float32 matrix: row i is data[i * cols, (i + 1) * cols).
struct NpyMatrix {
  size_t rows = 0;
  size_t cols = 0;
  std::vector<float> data;
};

// Reads a 2-D C-order array of dtype '<f4', '<f2' or '<f8' ('|' and '=' byte orders are taken
// as little-endian too), converting float16 and float64 to float32 (float64 rounds to
// nearest; values beyond float32's range become ±inf). Zero rows is accepted; zero columns is
// not. Values are returned as stored: NaN and infinities are not rejected here (see
// ReadVectorsFile). Big-endian data, Fortran order and other ranks are InvalidArgument.
// ResourceExhausted when memory for the data cannot be allocated. `*out` is unspecified on
// error.
Status ReadNpyMatrix(const std::string& path, NpyMatrix* out);

// ReadNpyMatrix for a .npy held in memory (an HTTP request body): the same rules and the same
// messages, each starting with `where` (e.g. "npy body: ") instead of "file <path>: ".
Status ParseNpyMatrix(std::string_view bytes, const std::string& where, NpyMatrix* out);

// Reads a 1-D array of shape (n,) or (n, 1) of signed or unsigned integers of 1, 2, 4 or 8
// bytes ('<i8', '<i4', '<u4', '<u8', ...). InvalidArgument names the first row whose uint64
// value does not fit int64. `*out` is unspecified on error.
Status ReadNpyInt64Vector(const std::string& path, std::vector<int64_t>* out);

// Write a version 1.0 file ('<f4', shape (rows, cols); '<i8', shape (n,)), replacing any
// existing file. REQUIRES: `data` holds rows × cols (resp. n) values; it may be null when
// that is 0. IOError when the file cannot be written.
Status WriteNpyMatrix(const std::string& path, const float* data, size_t rows, size_t cols);
Status WriteNpyInt64(const std::string& path, const int64_t* data, size_t n);

// The magic, version, header length and header of a version 1.0 file of dtype `descr`
// ("<f4", "<i8") and `shape` ("(3, 4)", "(3,)"), padded so the data starts on a 64-byte
// boundary: what a writer that streams the data after it puts first.
std::string NpyPreamble(const std::string& descr, const std::string& shape);

}  // namespace sieve::io

#endif  // SIEVE_TOOLS_IO_NPY_H_
