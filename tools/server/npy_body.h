// Copyright 2026 The Sieve Authors.
//
// Reading a NumPy .npy array from memory (an HTTP request body) with tools/io/npy.h's own
// parser (io::ParseNpyMatrix), so a body is accepted exactly when the same bytes as a file
// would be: a 2-D C-order array of '<f4', '<f2' or '<f8' (float16 and float64 converted to
// float32, float64 beyond float32's range to ±inf), validated whole before returning.
// Thread-safe.

#ifndef SIEVE_TOOLS_SERVER_NPY_BODY_H_
#define SIEVE_TOOLS_SERVER_NPY_BODY_H_

#include <string_view>

#include "sieve/status.h"
#include "tools/io/npy.h"

namespace sieve::server {

// InvalidArgument, with a message starting "npy body: ", for anything else (bad magic, header,
// dtype, order, rank, or a size that is not header + rows × cols × itemsize);
// ResourceExhausted when memory for the data cannot be allocated.
Status ParseNpyMatrix(std::string_view bytes, io::NpyMatrix* out);

}  // namespace sieve::server

#endif  // SIEVE_TOOLS_SERVER_NPY_BODY_H_
