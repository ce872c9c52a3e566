// Copyright 2026 The Sieve Authors.
//
// Reading vectors from HDF5 files, the format of the ann-benchmarks data sets (glove-100-
// angular.hdf5 holds the datasets "train", "test", "neighbors" and "distances"). The CLI names
// one dataset after a colon: `--vectors glove.hdf5:train`, `--queries glove.hdf5:test`.
//
// Errors are one-line messages that start with "file <path>" and name the dataset. Through
// Debian's HDF5 C library (libhdf5-dev), which is not thread-safe: every call here holds one
// process-wide lock, so the functions are safe to call from many threads (they run one at a
// time).

#ifndef SIEVE_TOOLS_IO_HDF5_H_
#define SIEVE_TOOLS_IO_HDF5_H_

#include <string>

#include "sieve/status.h"
#include "tools/io/npy.h"

namespace sieve::io {

// True when `spec` names an HDF5 file, with or without a dataset: its file part (before the
// last ':' after the extension, if any) ends in .hdf5, .h5 or .he5 (any letter case).
bool IsHdf5Spec(const std::string& spec);

// Splits "FILE:DATASET" at the ':' that follows the HDF5 extension ("a:b.hdf5:train" →
// "a:b.hdf5", "train"). `*dataset` is empty when the spec names no dataset.
void SplitHdf5Spec(const std::string& spec, std::string* file, std::string* dataset);

// Reads the 2-D dataset `dataset` (a path inside the file, such as "train" or "group/x") of
// floating-point values into `out` (rows = the first dimension). float32 is read as stored;
// float64 and other float types are converted (float64 rounds to nearest; values beyond
// float32's range become ±inf, as for .npy). Zero rows is accepted, zero columns is not.
// InvalidArgument, naming the file and the dataset, when the file is not HDF5, when `dataset`
// is empty or missing (the message lists the file's top-level datasets), is not a dataset, is
// not 2-D or does not hold floating-point numbers; IOError when the file cannot be opened;
// ResourceExhausted when memory for the data cannot be allocated. Values are returned as
// stored (NaN is not rejected here). `*out` is unspecified on error.
Status ReadHdf5Matrix(const std::string& path, const std::string& dataset, NpyMatrix* out);

// Writes rows × cols values as a 2-D dataset of float32 (`float64` false) or float64 into a
// new file at `path`, replacing any existing file. For tests and tools. REQUIRES: `data` holds
// rows × cols values. IOError when the file cannot be written.
Status WriteHdf5Matrix(const std::string& path, const std::string& dataset, const float* data,
                       size_t rows, size_t cols, bool float64 = false);

}  // namespace sieve::io

#endif  // SIEVE_TOOLS_IO_HDF5_H_
