// Copyright 2026 The Sieve Authors.

#include "python/src/errors.h"

#include <array>

namespace nb = nanobind;

namespace sieve::python {

namespace {

// Indexed by Status::Code; the class names of sieve/errors.py.
constexpr std::array<const char*, 10> kClassNames = {
    "Error",              // kOk (never raised)
    "NotFound",           // kNotFound
    "Corruption",         // kCorruption
    "NotSupported",       // kNotSupported
    "InvalidArgument",    // kInvalidArgument
    "IOError",            // kIOError
    "AlreadyExists",      // kAlreadyExists
    "ResourceExhausted",  // kResourceExhausted
    "Unavailable",        // kUnavailable
    "Internal",           // kInternal
};

// Strong references, kept for the life of the process (the classes outlive the module).
std::array<PyObject*, kClassNames.size()> g_classes{};

}  // namespace

void InitErrors() {
  nb::module_ errors = nb::module_::import_("sieve.errors");
  for (size_t i = 0; i < kClassNames.size(); ++i) {
    g_classes[i] = errors.attr(kClassNames[i]).inc_ref().ptr();
  }
}

void Raise(const Status& s) {
  const size_t code = static_cast<size_t>(s.code());
  PyObject* cls = code < g_classes.size() && g_classes[code] ? g_classes[code] : PyExc_RuntimeError;
  PyErr_SetString(cls, s.message().empty() ? s.ToString().c_str() : s.message().c_str());
  throw nb::python_error();
}

}  // namespace sieve::python
