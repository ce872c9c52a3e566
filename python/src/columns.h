// Copyright 2026 The Sieve Authors.
//
// Attribute columns from Python → the rows of sieve::Value that RowBatch::attributes takes.
//
// sieve/_columns.py turns a dict of columns, a pandas.DataFrame or a pyarrow.Table into one
// entry per attribute of the schema, in schema order, each None (every row null) or a tuple:
//   ("int64",   data: int64[n],   mask: bool[n] | None)   mask True = null
//   ("float64", data: float64[n], mask | None)
//   ("bool",    data: bool[n],    mask | None)
//   ("utf8",    offsets: int32/int64[n + 1], data: uint8[...], mask | None)   Arrow's layout
//   ("objects", list of n Python objects: None, int, float, str, bool, or a list of str;
//              a float NaN is null, as NaN in a float64 column is made null by _columns.py)
// Values take the type their column has (an int column gives int64 values); the engine checks
// them against the schema (and converts an int given for a float attribute), so a column of the
// wrong type is reported by the engine's own message naming the row and attribute.

#ifndef SIEVE_PYTHON_SRC_COLUMNS_H_
#define SIEVE_PYTHON_SRC_COLUMNS_H_

#include <nanobind/nanobind.h>

#include <vector>

#include "sieve/status.h"
#include "sieve/types.h"

namespace sieve::python {

// Fills rows (resized to n rows of num_attributes values) from `columns`: "objects" columns
// are converted first, with the GIL held; then every row is filled with the GIL released, on
// several threads. Returns InvalidArgument for
// a malformed entry (wrong length, unknown kind, a Python object of no attribute type).
// REQUIRES: the GIL held.
Status ColumnsToRows(nanobind::handle columns, size_t n, size_t num_attributes,
                     std::vector<std::vector<Value>>* rows);

// Frees rows filled by ColumnsToRows, on several threads (a million rows of values take a
// while to free). REQUIRES: the GIL released.
void FreeRows(std::vector<std::vector<Value>>* rows);

}  // namespace sieve::python

#endif  // SIEVE_PYTHON_SRC_COLUMNS_H_
