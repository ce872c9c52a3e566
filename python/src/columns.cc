// Copyright 2026 The Sieve Authors.

#include "python/src/columns.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <algorithm>
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

// One attribute column, read where Python keeps it (typed arrays, Arrow buffers) or converted
// to values up front (Python objects, which need the GIL).
struct Source {
  enum Kind { kNull, kInt64, kFloat64, kBool, kUtf8, kValues } kind = kNull;
  const void* data = nullptr;
  const bool* mask = nullptr;
  const int32_t* offsets32 = nullptr;
  const int64_t* offsets64 = nullptr;
  const char* bytes = nullptr;
  std::vector<Value> values;  // kValues

  void Put(size_t r, Value* out) {
    if (kind == kNull || (mask != nullptr && mask[r])) return;
    switch (kind) {
      case kInt64: *out = static_cast<const int64_t*>(data)[r]; break;
      case kFloat64: *out = static_cast<const double*>(data)[r]; break;
      case kBool: *out = static_cast<const bool*>(data)[r]; break;
      case kUtf8: {
        const int64_t b = offsets32 ? offsets32[r] : offsets64[r];
        const int64_t e = offsets32 ? offsets32[r + 1] : offsets64[r + 1];
        *out = std::string(bytes + b, static_cast<size_t>(e - b));
        break;
      }
      case kValues: *out = std::move(values[r]); break;
      case kNull: break;
    }
  }
};

template <typename T>
Status TypedSource(const nb::tuple& col, size_t n, size_t a, Source::Kind kind, Source* out) {
  if (col.size() != 3) return Status::InvalidArgument(Where(a) + ": expected (kind, data, mask)");
  Array1 data;
  SIEVE_RETURN_IF_ERROR(GetArray(col[1], nb::dtype<T>(), "the data", a, &data));
  if (data.shape(0) != n) {
    return Status::InvalidArgument(Where(a) + ": " + std::to_string(data.shape(0)) +
                                   " values for " + std::to_string(n) + " rows");
  }
  SIEVE_RETURN_IF_ERROR(GetMask(col[2], n, a, &out->mask));
  out->kind = kind;
  out->data = data.data();
  return Status::OK();
}

Status Utf8Source(const nb::tuple& col, size_t n, size_t a, Source* out) {
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
  SIEVE_RETURN_IF_ERROR(GetMask(col[3], n, a, &out->mask));
  const size_t size = data.shape(0);
  auto check = [&](auto* off) -> Status {
    for (size_t r = 0; r < n; ++r) {
      if (off[r] < 0 || off[r] > off[r + 1] || static_cast<size_t>(off[r + 1]) > size) {
        return Status::InvalidArgument(Where(a) + ": utf8 offsets out of order at row " +
                                       std::to_string(r));
      }
    }
    return Status::OK();
  };
  if (offsets.dtype() == nb::dtype<int32_t>()) {
    out->offsets32 = static_cast<const int32_t*>(offsets.data());
    SIEVE_RETURN_IF_ERROR(check(out->offsets32));
  } else {
    out->offsets64 = static_cast<const int64_t*>(offsets.data());
    SIEVE_RETURN_IF_ERROR(check(out->offsets64));
  }
  out->kind = Source::kUtf8;
  out->bytes = static_cast<const char*>(data.data());
  return Status::OK();
}

// Runs fn(begin, end) over [0, n) in blocks on up to the machine's cores (rows are independent).
template <typename Fn>
void ForBlocks(size_t n, Fn&& fn) {
  constexpr size_t kMinRows = 1 << 16;
  const size_t cores = std::max<unsigned>(1, std::thread::hardware_concurrency());
  const size_t threads = std::min(cores, std::max<size_t>(1, n / kMinRows));
  std::vector<std::thread> pool;
  const size_t step = (n + threads - 1) / threads;
  for (size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(fn, std::min(n, t * step), std::min(n, (t + 1) * step));
    } catch (const std::system_error&) {
      fn(std::min(n, t * step), std::min(n, (t + 1) * step));
    }
  }
  fn(0, std::min(n, step));
  for (auto& th : pool) th.join();
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
    const double d = PyFloat_AS_DOUBLE(p);
    if (!std::isnan(d)) *out = d;  // NaN is null, as in numpy and pandas columns
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
      if (!std::isnan(d)) *out = d;
      return Status::OK();
    }
  }
  return Status::InvalidArgument(std::string("a value of type ") + PyTypeName(o) +
                                 " (expected None, int, float, str, bool or a list of str)");
}

Status ObjectsSource(const nb::tuple& col, size_t n, size_t a, Source* out) {
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
  out->kind = Source::kValues;
  out->values.resize(n);
  for (size_t r = 0; r < n; ++r) {
    Status s = ObjectToValue(PyList_GET_ITEM(seq.ptr(), static_cast<Py_ssize_t>(r)),
                             &out->values[r]);
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
  std::vector<Source> sources(ncols);
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
      s = TypedSource<int64_t>(col, n, a, Source::kInt64, &sources[a]);
    } else if (kind == "float64") {
      s = TypedSource<double>(col, n, a, Source::kFloat64, &sources[a]);
    } else if (kind == "bool") {
      s = TypedSource<bool>(col, n, a, Source::kBool, &sources[a]);
    } else if (kind == "utf8") {
      s = Utf8Source(col, n, a, &sources[a]);
    } else if (kind == "objects") {
      s = ObjectsSource(col, n, a, &sources[a]);
    } else {
      s = Status::InvalidArgument(Where(a) + ": unknown column kind '" + kind + "'");
    }
    SIEVE_RETURN_IF_ERROR(s);
  }
  // The columns' memory stays valid: `columns` (held by the caller) owns every array.
  nb::gil_scoped_release release;
  rows->resize(n);
  ForBlocks(n, [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) {
      std::vector<Value>& row = (*rows)[r];
      row.resize(ncols);
      for (size_t a = 0; a < ncols; ++a) sources[a].Put(r, &row[a]);
    }
  });
  return Status::OK();
}

void FreeRows(std::vector<std::vector<Value>>* rows) {
  ForBlocks(rows->size(), [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) std::vector<Value>().swap((*rows)[r]);
  });
  std::vector<std::vector<Value>>().swap(*rows);
}

}  // namespace sieve::python
