// Copyright 2026 The Sieve Authors.
//
// Status → Python exception. The exception classes are defined in Python (sieve/errors.py, one
// per Status::Code under sieve.Error); the module looks them up once at import.

#ifndef SIEVE_PYTHON_SRC_ERRORS_H_
#define SIEVE_PYTHON_SRC_ERRORS_H_

#include <nanobind/nanobind.h>

#include "sieve/status.h"

namespace sieve::python {

// Imports sieve.errors and keeps its classes. Called once from the module's init.
void InitErrors();

// Raises the exception class of s.code() with s.message(). REQUIRES: !s.ok(), the GIL held.
[[noreturn]] void Raise(const Status& s);

inline void ThrowIfError(const Status& s) {
  if (!s.ok()) Raise(s);
}

}  // namespace sieve::python

#endif  // SIEVE_PYTHON_SRC_ERRORS_H_
