// Copyright 2026 The Sieve Authors.
//
// The JSON form of one query's neighbours, shared by the CLI's result lines and the server's
// query responses. JSON has no infinity or NaN: a distance that is not finite is refused here,
// so that no output line is ever invalid JSON (DB::Search never returns one; this is the last
// line of defence).

#ifndef SIEVE_TOOLS_IO_NEIGHBORS_JSON_H_
#define SIEVE_TOOLS_IO_NEIGHBORS_JSON_H_

#include <string>
#include <vector>

#include "sieve/db.h"

namespace sieve::io {

// Internal "query Q: distance I (id X) is infinite, ..." for the first non-finite
// distance of `results` (query numbers start at `first_query`), or a list whose ids and
// distances differ in length; OK otherwise.
Status CheckNeighbors(const std::vector<Neighbors>& results, size_t first_query = 0);

// Appends `"ids": [...], "distances": [...]` (no braces): ids as integers, each distance as the
// shortest text that reads back as the same float. CheckNeighbors' error, without the query
// (and `out` unchanged), for a distance that is not finite.
Status AppendNeighborsJson(const Neighbors& nb, std::string* out);

// Appends `"groups": [{"value": V, "ids": [...], "distances": [...]}, ...]` (no braces) for a
// grouped search (SearchRequest::group_by), each group with `"attributes": [{...} per row]`
// when `attribute_names` is non-empty and `"vectors": [[...] per row]` when `vectors`.
// AppendNeighborsJson's error, naming the group, for a distance that is not finite.
Status AppendGroupsJson(const Neighbors& nb, const std::vector<std::string>& attribute_names,
                        bool vectors, std::string* out);

}  // namespace sieve::io

#endif  // SIEVE_TOOLS_IO_NEIGHBORS_JSON_H_
