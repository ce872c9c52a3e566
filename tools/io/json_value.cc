// Copyright 2026 The Sieve Authors.

#include "tools/io/json_value.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tools/io/file_util.h"

namespace sieve::io {

namespace {

constexpr double kTwoTo53 = 9007199254740992.0;
constexpr double kTwoTo63 = 9223372036854775808.0;

}  // namespace

std::string DescribeJson(const nlohmann::json& v) {
  std::string text = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return std::string(v.type_name()) + " " + Printable(text, 40);
}

std::string JsonToValue(const nlohmann::json& v, AttrType type, Value* out) {
  if (v.is_null()) {
    *out = std::monostate();
    return "";
  }
  switch (type) {
    case AttrType::kInt:
      if (v.is_number_unsigned()) {
        uint64_t u = v.get<uint64_t>();
        if (u > static_cast<uint64_t>(INT64_MAX)) {
          return "value " + std::to_string(u) + " is out of int64 range";
        }
        *out = static_cast<int64_t>(u);
        return "";
      }
      if (v.is_number_integer()) {
        *out = v.get<int64_t>();
        return "";
      }
      if (v.is_number_float()) {
        double d = v.get<double>();
        if (!std::isfinite(d) || std::fabs(d) >= kTwoTo63) {
          return "value " + DescribeJson(v) + " is out of int64 range";
        }
        if (d != std::trunc(d)) return "expected int, found non-integral " + DescribeJson(v);
        if (std::fabs(d) >= kTwoTo53) {
          return "value " + DescribeJson(v) +
                 " is not an exact integer; write it without a fraction or exponent";
        }
        *out = static_cast<int64_t>(d);
        return "";
      }
      return "expected int, found " + DescribeJson(v);
    case AttrType::kFloat:
      if (!v.is_number()) return "expected float, found " + DescribeJson(v);
      *out = v.get<double>();
      if (!std::isfinite(std::get<double>(*out))) return "number is out of float64 range";
      return "";
    case AttrType::kString:
    case AttrType::kText:
      if (!v.is_string()) {
        return std::string(type == AttrType::kText ? "expected text (a string)"
                                                   : "expected string") +
               ", found " + DescribeJson(v);
      }
      *out = v.get<std::string>();
      return "";
    case AttrType::kBool:
      if (!v.is_boolean()) return "expected bool (true or false), found " + DescribeJson(v);
      *out = v.get<bool>();
      return "";
    case AttrType::kTags: {
      if (!v.is_array()) return "expected tags (an array of strings), found " + DescribeJson(v);
      std::vector<std::string> tags;
      tags.reserve(v.size());
      for (size_t i = 0; i < v.size(); ++i) {
        if (!v[i].is_string()) {
          return "tags must be strings, element " + std::to_string(i) + " is " + DescribeJson(v[i]);
        }
        tags.push_back(v[i].get<std::string>());
      }
      *out = std::move(tags);
      return "";
    }
  }
  return "unknown attribute type";
}

}  // namespace sieve::io
