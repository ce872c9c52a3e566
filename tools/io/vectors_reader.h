// Copyright 2026 The Sieve Authors.
//
// The CLI's entry point for vector files (--vectors, --queries): picks the reader from the
// file extension and applies the checks every vector input needs.

#ifndef SIEVE_TOOLS_IO_VECTORS_READER_H_
#define SIEVE_TOOLS_IO_VECTORS_READER_H_

#include <string>

#include "sieve/status.h"
#include "tools/io/npy.h"

namespace sieve::io {

// Reads a .npy (ReadNpyMatrix) or .fvecs (ReadFvecs) file, or the dataset of an HDF5 file
// named as "FILE.hdf5:DATASET" (also .h5; ReadHdf5Matrix), chosen by the extension
// (case-insensitive), then rejects NaN and infinite components (CheckFiniteVectors).
// InvalidArgument for any other extension and for any error those functions return.
// `*out` is unspecified on error.
Status ReadVectorsFile(const std::string& path, NpyMatrix* out);

// InvalidArgument "file <path>: row R, column C: component is NaN" (or infinite) for the first
// non-finite component in row-major order; OK otherwise.
Status CheckFiniteVectors(const std::string& path, const NpyMatrix& m);

}  // namespace sieve::io

#endif  // SIEVE_TOOLS_IO_VECTORS_READER_H_
