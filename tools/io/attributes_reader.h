// Copyright 2026 The Sieve Authors.
//
// Reading the CLI's attributes files (--attributes): one row of typed, nullable attribute
// values per vector row, in one of two formats chosen by the file extension.
//
// JSON Lines (.jsonl; also .ndjson and .json): line i holds one JSON object, the attributes of
// vector row i. An absent key and JSON null are both null. Keys must be schema attributes and
// appear once. Blank lines are errors; only the file's last line may end without '\n'.
//   int     a JSON integer within int64, or an integral number such as 3.0 whose magnitude is
//           below 2^53 (so that it was read exactly)
//   float   any JSON number (a literal beyond float64's range, like 1e999, is a JSON error)
//   string  a JSON string
//   bool    true or false
//   tags    an array of strings (may be empty)
//
// CSV (.csv, RFC 4180): a header row of attribute names (each a schema attribute, at most
// once; attributes without a column are null), then one record per vector row with as many
// fields as the header. Fields may be quoted with '"', with "" for a quote inside; quoted
// fields may hold commas and line breaks. Records end with LF or CRLF. An empty unquoted field
// is null.
//   int     an optionally signed decimal integer within int64 (3.0 and 1e3 are accepted when
//           integral and below 2^53 in magnitude, as pandas writes nullable int columns)
//   float   a finite decimal number; nan and inf are errors
//   bool    true, false, 1 or 0, in any letter case
//           (for int, float and bool, surrounding spaces are ignored and an empty or all-space
//           field, quoted or not, is null)
//   string  the field's text exactly; a quoted empty field "" is the empty string
//   tags    tags separated by '|' ("red|blue"); a tag cannot contain '|' and cannot be empty;
//           a quoted empty field "" is the empty list
//
// Both formats: a UTF-8 byte-order mark at the start is skipped, text must be UTF-8, and the
// file must hold exactly `expected_rows` rows. Line numbers in messages count physical lines
// from 1; "row N" is the 0-based data row (the vector row it belongs to).
// All functions are thread-safe (they share no state).

#ifndef SIEVE_TOOLS_IO_ATTRIBUTES_READER_H_
#define SIEVE_TOOLS_IO_ATTRIBUTES_READER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sieve/status.h"
#include "sieve/types.h"

namespace sieve::io {

// Reads `path` (format by extension, case-insensitive) into `rows`: rows->size() ==
// expected_rows and each (*rows)[i] holds exactly schema.size() Values in schema order, null
// or of the attribute's type (int64_t, double, std::string, bool, std::vector<std::string>).
// InvalidArgument, with a one-line message naming the file, the line, the row and the
// attribute, for malformed text, a value of the wrong type, an unknown or repeated attribute,
// an unsupported extension or a row count other than `expected_rows` ("attributes file X has
// N rows, vectors have M"); IOError when the file cannot be read; ResourceExhausted when
// memory runs out. `*rows` is unspecified on error.
//
// With a non-empty `id_field` (the CLI's --id-field), that key (JSON Lines) or column (CSV) is
// not an attribute but the row's id, stored in (*ids)[i] (REQUIRES: `ids` not null then). Every
// row must have one: an integer >= 0 within int64 (JSON: an integer literal, not 3.0; CSV: an
// optionally '+'-signed decimal integer, spaces around it ignored), and no two rows of the file
// may share one. InvalidArgument, naming the line and the row (for a repeat, both lines), for a
// missing, malformed, negative or repeated id, for a CSV header without the column, and when
// `id_field` names an attribute of the schema.
Status ReadAttributes(const std::string& path, const std::vector<AttributeSpec>& schema,
                      size_t expected_rows, std::vector<std::vector<Value>>* rows,
                      const std::string& id_field = "", std::vector<int64_t>* ids = nullptr);

// The two formats, whatever the extension.
Status ReadAttributesJsonl(const std::string& path, const std::vector<AttributeSpec>& schema,
                           size_t expected_rows, std::vector<std::vector<Value>>* rows,
                           const std::string& id_field = "",
                           std::vector<int64_t>* ids = nullptr);
Status ReadAttributesCsv(const std::string& path, const std::vector<AttributeSpec>& schema,
                         size_t expected_rows, std::vector<std::vector<Value>>* rows,
                         const std::string& id_field = "", std::vector<int64_t>* ids = nullptr);

}  // namespace sieve::io

#endif  // SIEVE_TOOLS_IO_ATTRIBUTES_READER_H_
