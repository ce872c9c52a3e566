// Copyright 2026 The Sieve Authors.

#include "tools/io/rows_json.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace sieve::io {

namespace {

// Length of the valid UTF-8 sequence at s[i], or 0.
size_t Utf8Length(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t j = 1; j < n; ++j) {
    if ((static_cast<unsigned char>(s[i + j]) & 0xC0) != 0x80) return 0;
  }
  // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
  const auto c1 = static_cast<unsigned char>(s[i + (n > 1 ? 1 : 0)]);
  if (n == 2 && c < 0xC2) return 0;
  if (n == 3 && ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0))) return 0;
  if (n == 4 && ((c == 0xF0 && c1 < 0x90) || c > 0xF4 || (c == 0xF4 && c1 >= 0x90))) return 0;
  return n;
}

}  // namespace

void AppendJsonString(std::string_view s, std::string* out) {
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const size_t n = Utf8Length(s, i);
      if (n == 0) {
        *out += "\xEF\xBF\xBD";
        ++i;
      } else {
        out->append(s.substr(i, n));
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          *out += buf;
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
  out->push_back('"');
}

void AppendValueJson(const Value& v, std::string* out) {
  char buf[40];
  switch (v.index()) {
    case 0: *out += "null"; return;
    case 1: {
      auto r = std::to_chars(buf, buf + sizeof(buf), std::get<int64_t>(v));
      out->append(buf, r.ptr);
      return;
    }
    case 2: {
      const double d = std::get<double>(v);
      if (!std::isfinite(d)) {  // never stored (ingest refuses them); JSON has no such number
        *out += "null";
        return;
      }
      auto r = std::to_chars(buf, buf + sizeof(buf), d);
      out->append(buf, r.ptr);
      // "3" would read back as an int: a float attribute's value stays a float in JSON.
      if (std::string_view(buf, r.ptr - buf).find_first_of(".e") == std::string_view::npos) {
        *out += ".0";
      }
      return;
    }
    case 3: AppendJsonString(std::get<std::string>(v), out); return;
    case 4: *out += std::get<bool>(v) ? "true" : "false"; return;
    case 5: {
      out->push_back('[');
      bool first = true;
      for (const std::string& t : std::get<std::vector<std::string>>(v)) {
        if (!first) *out += ", ";
        first = false;
        AppendJsonString(t, out);
      }
      out->push_back(']');
      return;
    }
  }
  *out += "null";
}

void AppendAttributesJson(const std::vector<std::string>& names, const std::vector<Value>& values,
                          std::string* out) {
  out->push_back('{');
  for (size_t i = 0; i < names.size() && i < values.size(); ++i) {
    if (i) *out += ", ";
    AppendJsonString(names[i], out);
    *out += ": ";
    AppendValueJson(values[i], out);
  }
  out->push_back('}');
}

void AppendVectorJson(const std::vector<float>& v, std::string* out) {
  out->push_back('[');
  char buf[32];
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) *out += ", ";
    auto r = std::to_chars(buf, buf + sizeof(buf), v[i]);
    out->append(buf, r.ptr);
  }
  out->push_back(']');
}

void AppendRowJson(const Row& row, const std::vector<std::string>& names, bool vector,
                   std::string* out) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), row.id);
  *out += "\"id\": ";
  out->append(buf, r.ptr);
  if (!names.empty()) {
    *out += ", \"attributes\": ";
    AppendAttributesJson(names, row.attributes, out);
  }
  if (vector) {
    *out += ", \"vector\": ";
    AppendVectorJson(row.vector, out);
  }
}

void AppendCsvField(std::string_view s, std::string* out) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) {
    out->append(s);
    return;
  }
  out->push_back('"');
  for (char c : s) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

void AppendValueCsv(const Value& v, std::string* out) {
  char buf[40];
  switch (v.index()) {
    case 0: return;
    case 1: {
      auto r = std::to_chars(buf, buf + sizeof(buf), std::get<int64_t>(v));
      out->append(buf, r.ptr);
      return;
    }
    case 2: {
      auto r = std::to_chars(buf, buf + sizeof(buf), std::get<double>(v));
      out->append(buf, r.ptr);
      return;
    }
    case 3: AppendCsvField(std::get<std::string>(v), out); return;
    case 4: *out += std::get<bool>(v) ? "true" : "false"; return;
    case 5: {
      std::string joined;
      for (const std::string& t : std::get<std::vector<std::string>>(v)) {
        if (!joined.empty()) joined.push_back('|');
        joined += t;
      }
      AppendCsvField(joined, out);
      return;
    }
  }
}

}  // namespace sieve::io
