// Copyright 2026 The Sieve Authors.
//
// The text forms of stored rows, shared by the CLI (query --include, get, export) and the
// server: attribute values as JSON (null for a null, numbers as the shortest text that reads
// back as the same value, strings escaped, tags as arrays) and as CSV fields.

#ifndef SIEVE_TOOLS_IO_ROWS_JSON_H_
#define SIEVE_TOOLS_IO_ROWS_JSON_H_

#include <string>
#include <vector>

#include "sieve/db.h"

namespace sieve::io {

// A JSON string literal of `s` (invalid UTF-8 bytes become U+FFFD).
void AppendJsonString(std::string_view s, std::string* out);
// One value: null, an integer, a float64, a string, true/false or an array of strings.
void AppendValueJson(const Value& v, std::string* out);
// {"name": value, ...} for values in `names` order.
void AppendAttributesJson(const std::vector<std::string>& names, const std::vector<Value>& values,
                          std::string* out);
// [x, y, ...] with each component as the shortest text that reads back as the same float.
void AppendVectorJson(const std::vector<float>& v, std::string* out);
// `"id": N[, "attributes": {...}][, "vector": [...]]` (no braces); attributes when `names` is
// non-empty, the vector when `vector`.
void AppendRowJson(const Row& row, const std::vector<std::string>& names, bool vector,
                   std::string* out);

// One CSV field (RFC 4180 quoting when needed); null is the empty field, tags are joined
// with '|', as the CSV reader reads them.
void AppendValueCsv(const Value& v, std::string* out);
void AppendCsvField(std::string_view s, std::string* out);

}  // namespace sieve::io

#endif  // SIEVE_TOOLS_IO_ROWS_JSON_H_
