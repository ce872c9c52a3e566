// Copyright 2026 The Sieve Authors.
//
// JSON → attribute value, the one rule of every JSON input (CLI ingest's .jsonl and the
// server's bodies): null is null for every type; an int takes a JSON integer in int64 range, or
// a number with no fractional part below 2^53 in magnitude (so 3.0 is 3, 3.5 and 1e300 are
// errors); a float takes any finite number; a string a string, a bool true or false, tags an
// array of strings.

#ifndef SIEVE_TOOLS_IO_JSON_VALUE_H_
#define SIEVE_TOOLS_IO_JSON_VALUE_H_

#include <nlohmann/json.hpp>
#include <string>

#include "sieve/types.h"

namespace sieve::io {

// Converts `v` to an attribute of `type` into *out; returns "" or what is wrong with it (for
// example "expected int, found non-integral number 3.5").
std::string JsonToValue(const nlohmann::json& v, AttrType type, Value* out);

// A JSON value as error messages show it: its type and its text, cut to 40 characters.
std::string DescribeJson(const nlohmann::json& v);

}  // namespace sieve::io

#endif  // SIEVE_TOOLS_IO_JSON_VALUE_H_
