// Copyright 2026 The Sieve Authors.
//
// New numpy arrays that own their memory, made for results the module returns. With numpy's C
// API (the build found numpy >= 2 headers: SIEVE_NUMPY_CAPI) an array is one PyArray_SimpleNew;
// without it, memory of our own exported through nanobind (numpy.asarray of a buffer), which
// costs several times as much per array: a small search returns three.

#ifndef SIEVE_PYTHON_SRC_NUMPY_ARRAYS_H_
#define SIEVE_PYTHON_SRC_NUMPY_ARRAYS_H_

#include <nanobind/nanobind.h>

#include <cstddef>
#include <cstdint>

namespace sieve::python {

// Loads numpy's C API when the module was built with it; a no-op otherwise. Called once from
// the module's init; raises (nb::python_error) when numpy cannot be imported.
void InitNumpyArrays();

// A new C-contiguous array of `rows` × `cols` (ndim 2) or `rows` (ndim 1) elements of T (int64_t,
// float or double), contents undefined, and in *data where they are: writable until the array
// is handed to Python code; the array owns them. REQUIRES: the GIL held.
template <typename T>
nanobind::object NewArray2D(size_t rows, size_t cols, T** data);
template <typename T>
nanobind::object NewArray1D(size_t n, T** data);

}  // namespace sieve::python

#endif  // SIEVE_PYTHON_SRC_NUMPY_ARRAYS_H_
