// Copyright 2026 The Sieve Authors.

#include "python/src/columns.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace nb = nanobind;

namespace sieve::python {

namespace {

// nb::ro: read-only arrays (np.load(mmap_mode="r"), np.frombuffer) are read in place too.
using Array1 = nb::ndarray<nb::ro, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

std::string Where(size_t a) { return "attribute column " + std::to_string(a); }

Status GetArray(nb::handle h, nb::dlpack::dtype want, const char* what, size_t a, Array1* out) {
  if (!nb::try_cast(h, *out, /*convert=*/false) || out->dtype() != want) {
    return Status::InvalidArgument(Where(a) + ": " + what +
                                   " must be a 1-D C-contiguous numpy array of the column's type");
  }
  return Status::OK();
}

Status GetMask(nb::handle h, size_t n, size_t a, const bool** mask) {
  *mask = nullptr;
  if (h.is_none()) return Status::OK();
  Array1 m;
  SIEVE_RETURN_IF_ERROR(GetArray(h, nb::dtype<bool>(), "the null mask", a, &m));
  if (m.shape(0) != n) {
    return Status::InvalidArgument(Where(a) + ": the null mask has " + std::to_string(m.shape(0)) +
                                   " entries for " + std::to_string(n) + " rows");
  }
  *mask = static_cast<const bool*>(m.data());
  return Status::OK();
}

template <typename T>
Status FillTyped(const nb::tuple& col, size_t n, size_t a,
                 std::vector<std::vector<Value>>* rows) {
  if (col.size() != 3) return Status::InvalidArgument(Where(a) + ": expected (kind, data, mask)");
  Array1 data;
  SIEVE_RETURN_IF_ERROR(GetArray(col[1], nb::dtype<T>(), "the data", a, &data));
  if (data.shape(0) != n) {
    return Status::InvalidArgument(Where(a) + ": " + std::to_string(data.shape(0)) +
                                   " values for " + std::to_string(n) + " rows");
  }
  const bool* mask;
  SIEVE_RETURN_IF_ERROR(GetMask(col[2], n, a, &mask));
  const T* v = static_cast<const T*>(data.data());
  nb::gil_scoped_release release;
  for (size_t r = 0; r < n; ++r) {
    if (mask == nullptr || !mask[r]) (*rows)[r][a] = v[r];
  }
  return Status::OK();
}

template <typename Offset>
void FillUtf8(const Offset* off, const char* bytes, const bool* mask, size_t n, size_t a,
              std::vector<std::vector<Value>>* rows) {
  for (size_t r = 0; r < n; ++r) {
    if (mask != nullptr && mask[r]) continue;
    (*rows)[r][a] = std::string(bytes + off[r], static_cast<size_t>(off[r + 1] - off[r]));
  }
}

Status FillUtf8Column(const nb::tuple& col, size_t n, size_t a,
                      std::vector<std::vector<Value>>* rows) {
  if (col.size() != 4) {
    return Status::InvalidArgument(Where(a) + ": expected ('utf8', offsets, data, mask)");
  }
  Array1 offsets, data;
  if (!nb::try_cast(col[1], offsets, false) ||
      (offsets.dtype() != nb::dtype<int32_t>() && offsets.dtype() != nb::dtype<int64_t>()) ||
      offsets.shape(0) != n + 1) {
    return Status::InvalidArgument(Where(a) + ": utf8 offsets must be int32 or int64[rows + 1]");
  }
  SIEVE_RETURN_IF_ERROR(GetArray(col[2], nb::dtype<uint8_t>(), "the utf8 data", a, &data));
  const bool* mask;
  SIEVE_RETURN_IF_ERROR(GetMask(col[3], n, a, &mask));
  const char* bytes = static_cast<const char*>(data.data());
  const size_t size = data.shape(0);
  auto check = [&](auto* off) -> Status {
    for (size_t r = 0; r < n; ++r) {
      if (off[r] < 0 || off[r] > off[r + 1] || static_cast<size_t>(off[r + 1]) > size) {
        return Status::InvalidArgument(Where(a) + ": utf8 offsets out of order at row " +
                                       std::to_string(r));
      }
    }
    nb::gil_scoped_release release;
    FillUtf8(off, bytes, mask, n, a, rows);
    return Status::OK();
  };
  if (offsets.dtype() == nb::dtype<int32_t>()) {
    return check(static_cast<const int32_t*>(offsets.data()));
  }
  return check(static_cast<const int64_t*>(offsets.data()));
}

const char* PyTypeName(nb::handle o) { return Py_TYPE(o.ptr())->tp_name; }

Status StringOf(nb::handle o, std::string* out) {
  Py_ssize_t len = 0;
  const char* s = PyUnicode_AsUTF8AndSize(o.ptr(), &len);
  if (s == nullptr) {
    PyErr_Clear();
    return Status::InvalidArgument("a string that is not valid UTF-8");
  }
  out->assign(s, static_cast<size_t>(len));
  return Status::OK();
}

// One Python object → a Value of the object's own type.
Status ObjectToValue(nb::handle o, Value* out) {
  PyObject* p = o.ptr();
  if (p == Py_None) return Status::OK();
  if (PyBool_Check(p)) {
    *out = p == Py_True;
    return Status::OK();
  }
  if (PyUnicode_Check(p)) {
    std::string s;
    SIEVE_RETURN_IF_ERROR(StringOf(o, &s));
    *out = std::move(s);
    return Status::OK();
  }
  if (PyLong_Check(p)) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(p, &overflow);
    if (overflow != 0) return Status::InvalidArgument("an int outside the int64 range");
    if (v == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      return Status::InvalidArgument("an int that does not convert");
    }
    *out = static_cast<int64_t>(v);
    return Status::OK();
  }
  if (PyFloat_Check(p)) {
    *out = PyFloat_AS_DOUBLE(p);
    return Status::OK();
  }
  if (PyList_Check(p) || PyTuple_Check(p)) {
    std::vector<std::string> tags;
    const Py_ssize_t m = PySequence_Fast_GET_SIZE(p);
    PyObject** items = PySequence_Fast_ITEMS(p);
    tags.resize(static_cast<size_t>(m));
    for (Py_ssize_t i = 0; i < m; ++i) {
      if (!PyUnicode_Check(items[i])) {
        return Status::InvalidArgument(std::string("tags must be strings, got ") +
                                       Py_TYPE(items[i])->tp_name);
      }
      SIEVE_RETURN_IF_ERROR(StringOf(items[i], &tags[static_cast<size_t>(i)]));
    }
    *out = std::move(tags);
    return Status::OK();
  }
  // numpy scalars and other number-likes (numpy.bool has no __index__ but is a number).
  const std::string_view tp = PyTypeName(o);
  if (tp == "numpy.bool" || tp == "numpy.bool_") {
    *out = PyObject_IsTrue(p) == 1;
    return Status::OK();
  }
  if (PyIndex_Check(p)) {
    nb::object i = nb::steal(PyNumber_Index(p));
    if (!i.is_valid()) {
      PyErr_Clear();
      return Status::InvalidArgument(std::string("a ") + PyTypeName(o) + " that is not an int");
    }
    return ObjectToValue(i, out);
  }
  if (PyFloat_Check(p) || PyNumber_Check(p)) {
    const double d = PyFloat_AsDouble(p);
    if (d == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
    } else {
      *out = d;
      return Status::OK();
    }
  }
  return Status::InvalidArgument(std::string("a value of type ") + PyTypeName(o) +
                                 " (expected None, int, float, str, bool or a list of str)");
}

Status FillObjects(const nb::tuple& col, size_t n, size_t a,
                   std::vector<std::vector<Value>>* rows) {
  if (col.size() != 2) return Status::InvalidArgument(Where(a) + ": expected ('objects', list)");
  nb::handle seq = col[1];
  if (!PyList_Check(seq.ptr())) {
    return Status::InvalidArgument(Where(a) + ": 'objects' takes a list");
  }
  if (static_cast<size_t>(PyList_GET_SIZE(seq.ptr())) != n) {
    return Status::InvalidArgument(Where(a) + ": " +
                                   std::to_string(PyList_GET_SIZE(seq.ptr())) + " values for " +
                                   std::to_string(n) + " rows");
  }
  for (size_t r = 0; r < n; ++r) {
    Status s = ObjectToValue(PyList_GET_ITEM(seq.ptr(), static_cast<Py_ssize_t>(r)),
                             &(*rows)[r][a]);
    if (!s.ok()) return s.WithContext("row " + std::to_string(r) + ", " + Where(a));
  }
  return Status::OK();
}

}  // namespace

Status ColumnsToRows(nb::handle columns, size_t n, size_t num_attributes,
                     std::vector<std::vector<Value>>* rows) {
  if (!PyList_Check(columns.ptr())) return Status::InvalidArgument("columns must be a list");
  const size_t ncols = static_cast<size_t>(PyList_GET_SIZE(columns.ptr()));
  if (ncols != num_attributes) {
    return Status::InvalidArgument(std::to_string(ncols) + " attribute columns, schema has " +
                                   std::to_string(num_attributes));
  }
  {
    nb::gil_scoped_release release;
    rows->assign(n, std::vector<Value>(num_attributes));
  }
  for (size_t a = 0; a < ncols; ++a) {
    nb::handle item = PyList_GET_ITEM(columns.ptr(), static_cast<Py_ssize_t>(a));
    if (item.is_none()) continue;
    nb::tuple col;
    if (!nb::try_cast(item, col, false) || col.size() < 2 || !nb::isinstance<nb::str>(col[0])) {
      return Status::InvalidArgument(Where(a) + ": expected None or a (kind, ...) tuple");
    }
    const std::string kind = nb::cast<std::string>(col[0]);
    Status s;
    if (kind == "int64") {
      s = FillTyped<int64_t>(col, n, a, rows);
    } else if (kind == "float64") {
      s = FillTyped<double>(col, n, a, rows);
    } else if (kind == "bool") {
      s = FillTyped<bool>(col, n, a, rows);
    } else if (kind == "utf8") {
      s = FillUtf8Column(col, n, a, rows);
    } else if (kind == "objects") {
      s = FillObjects(col, n, a, rows);
    } else {
      s = Status::InvalidArgument(Where(a) + ": unknown column kind '" + kind + "'");
    }
    SIEVE_RETURN_IF_ERROR(s);
  }
  return Status::OK();
}

}  // namespace sieve::python
