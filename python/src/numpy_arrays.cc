// Copyright 2026 The Sieve Authors.

#include "python/src/numpy_arrays.h"

#ifdef SIEVE_NUMPY_CAPI
// numpy's C API table lives in this file only (no other file includes numpy's headers).
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
// The oldest numpy the package takes (pyproject.toml); numpy 2's headers build for it.
#define NPY_TARGET_VERSION NPY_1_21_API_VERSION
#include <numpy/arrayobject.h>
#else
#include <nanobind/ndarray.h>

#include <memory>
#endif

namespace nb = nanobind;

namespace sieve::python {

namespace {

#ifdef SIEVE_NUMPY_CAPI
template <typename T>
constexpr int kTypeNum = -1;
template <>
constexpr int kTypeNum<int64_t> = NPY_INT64;
template <>
constexpr int kTypeNum<float> = NPY_FLOAT32;
template <>
constexpr int kTypeNum<double> = NPY_FLOAT64;

template <typename T>
nb::object NewArray(int ndim, npy_intp* dims, T** data) {
  PyObject* a = PyArray_SimpleNew(ndim, dims, kTypeNum<T>);
  if (a == nullptr) throw nb::python_error();
  *data = static_cast<T*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(a)));
  return nb::steal(a);
}
#else
template <typename T, size_t N>
nb::object NewArray(const size_t (&shape)[N], T** data) {
  size_t n = 1;
  for (size_t s : shape) n *= s;
  std::unique_ptr<T[]> p(new T[n > 0 ? n : 1]);
  T* raw = p.release();
  nb::capsule owner(raw, [](void* q) noexcept { delete[] static_cast<T*>(q); });
  *data = raw;
  return nb::cast(nb::ndarray<nb::numpy, T, nb::ndim<N>>(raw, N, shape, owner));
}
#endif

}  // namespace

void InitNumpyArrays() {
#ifdef SIEVE_NUMPY_CAPI
  if (_import_array() < 0) throw nb::python_error();
#endif
}

template <typename T>
nb::object NewArray2D(size_t rows, size_t cols, T** data) {
#ifdef SIEVE_NUMPY_CAPI
  npy_intp dims[2] = {static_cast<npy_intp>(rows), static_cast<npy_intp>(cols)};
  return NewArray(2, dims, data);
#else
  const size_t shape[2] = {rows, cols};
  return NewArray(shape, data);
#endif
}

template <typename T>
nb::object NewArray1D(size_t n, T** data) {
#ifdef SIEVE_NUMPY_CAPI
  npy_intp dims[1] = {static_cast<npy_intp>(n)};
  return NewArray(1, dims, data);
#else
  const size_t shape[1] = {n};
  return NewArray(shape, data);
#endif
}

template nb::object NewArray2D<int64_t>(size_t, size_t, int64_t**);
template nb::object NewArray2D<float>(size_t, size_t, float**);
template nb::object NewArray2D<double>(size_t, size_t, double**);
template nb::object NewArray1D<int64_t>(size_t, int64_t**);

}  // namespace sieve::python
