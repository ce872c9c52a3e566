// Copyright 2026 The Sieve Authors.

#include "tools/io/neighbors_json.h"

#include <charconv>
#include <cmath>

#include "tools/io/rows_json.h"

namespace sieve::io {

namespace {

Status CheckOne(const Neighbors& nb) {
  if (nb.ids.size() != nb.distances.size()) {
    return Status::Internal(std::to_string(nb.ids.size()) + " ids but " +
                            std::to_string(nb.distances.size()) + " distances");
  }
  for (size_t i = 0; i < nb.distances.size(); ++i) {
    const float d = nb.distances[i];
    if (!std::isfinite(d)) {
      return Status::Internal(
          "distance " + std::to_string(i) + " (id " + std::to_string(nb.ids[i]) + ") is " +
          (std::isnan(d) ? "NaN" : "infinite") + ", which JSON cannot represent");
    }
  }
  return Status::OK();
}

}  // namespace

Status CheckNeighbors(const std::vector<Neighbors>& results, size_t first_query) {
  for (size_t q = 0; q < results.size(); ++q) {
    Status s = CheckOne(results[q]);
    if (!s.ok()) return s.WithContext("query " + std::to_string(first_query + q));
  }
  return Status::OK();
}

Status AppendNeighborsJson(const Neighbors& nb, std::string* out) {
  SIEVE_RETURN_IF_ERROR(CheckOne(nb));
  *out += "\"ids\": [";
  for (size_t i = 0; i < nb.ids.size(); ++i) {
    if (i) *out += ", ";
    *out += std::to_string(nb.ids[i]);
  }
  *out += "], \"distances\": [";
  char buf[32];
  // Text and hybrid searches: their float64 scores (Neighbors::scores), shortest round trip.
  const bool scores = nb.scores.size() == nb.distances.size() && !nb.scores.empty();
  for (size_t i = 0; i < nb.distances.size(); ++i) {
    if (i) *out += ", ";
    auto r = scores ? std::to_chars(buf, buf + sizeof(buf), nb.scores[i])
                    : std::to_chars(buf, buf + sizeof(buf), nb.distances[i]);
    out->append(buf, r.ptr);
  }
  *out += "]";
  return Status::OK();
}

Status AppendGroupsJson(const Neighbors& nb, const std::vector<std::string>& attribute_names,
                        bool vectors, std::string* out) {
  std::string text = "\"groups\": [";
  Neighbors rows;
  for (size_t g = 0; g < nb.groups.size(); ++g) {
    const Group& group = nb.groups[g];
    if (g) text += ", ";
    text += "{\"value\": ";
    AppendValueJson(group.value, &text);
    text += ", ";
    rows.ids = group.ids;
    rows.distances = group.distances;
    Status s = AppendNeighborsJson(rows, &text);
    if (!s.ok()) return s.WithContext("group " + std::to_string(g));
    if (!attribute_names.empty()) {
      text += ", \"attributes\": [";
      for (size_t i = 0; i < group.attributes.size(); ++i) {
        if (i) text += ", ";
        AppendAttributesJson(attribute_names, group.attributes[i], &text);
      }
      text += "]";
    }
    if (vectors) {
      text += ", \"vectors\": [";
      for (size_t i = 0; i < group.vectors.size(); ++i) {
        if (i) text += ", ";
        AppendVectorJson(group.vectors[i], &text);
      }
      text += "]";
    }
    text += "}";
  }
  text += "]";
  *out += text;
  return Status::OK();
}

}  // namespace sieve::io
