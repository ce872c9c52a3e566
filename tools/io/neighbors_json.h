// Copyright 2026 The Sieve Authors.
//
// The JSON form of one query's neighbours, shared by the CLI's result lines and the server's
// query responses.

#ifndef SIEVE_TOOLS_IO_NEIGHBORS_JSON_H_
#define SIEVE_TOOLS_IO_NEIGHBORS_JSON_H_

#include <string>

#include "sieve/db.h"

namespace sieve::io {

// Appends `"ids": [...], "distances": [...]` (no braces): ids as integers, each distance as the
// shortest text that reads back as the same float.
void AppendNeighborsJson(const Neighbors& nb, std::string* out);

}  // namespace sieve::io

#endif  // SIEVE_TOOLS_IO_NEIGHBORS_JSON_H_
