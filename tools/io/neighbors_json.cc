// Copyright 2026 The Sieve Authors.

#include "tools/io/neighbors_json.h"

#include <charconv>

namespace sieve::io {

void AppendNeighborsJson(const Neighbors& nb, std::string* out) {
  *out += "\"ids\": [";
  for (size_t i = 0; i < nb.ids.size(); ++i) {
    if (i) *out += ", ";
    *out += std::to_string(nb.ids[i]);
  }
  *out += "], \"distances\": [";
  char buf[32];
  for (size_t i = 0; i < nb.distances.size(); ++i) {
    if (i) *out += ", ";
    auto r = std::to_chars(buf, buf + sizeof(buf), nb.distances[i]);
    out->append(buf, r.ptr);
  }
  *out += "]";
}

}  // namespace sieve::io
