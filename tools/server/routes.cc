// Copyright 2026 The Sieve Authors.

#include "tools/server/routes.h"

namespace sieve::server {

namespace {

// Splits a path into its segments ("/a//b/" is "a", "", "b": a trailing '/' is dropped, an
// empty segment inside is one); false for a target that is not an absolute path.
bool Segments(std::string_view target, std::vector<std::string_view>* out) {
  std::string_view path = target.substr(0, target.find('?'));
  if (path.empty() || path[0] != '/') return false;
  path.remove_prefix(1);
  if (!path.empty() && path.back() == '/') path.remove_suffix(1);
  size_t i = 0;
  while (true) {
    const size_t j = path.find('/', i);
    out->push_back(path.substr(i, j == std::string_view::npos ? std::string_view::npos : j - i));
    if (j == std::string_view::npos) return true;
    i = j + 1;
  }
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool PercentDecode(std::string_view s, std::string* out) {
  out->clear();
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out->push_back(s[i]);
      continue;
    }
    const int hi = i + 1 < s.size() ? HexDigit(s[i + 1]) : -1;
    const int lo = i + 2 < s.size() ? HexDigit(s[i + 2]) : -1;
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return true;
}

}  // namespace

const std::vector<Route>& Routes() {
  static const std::vector<Route> kRoutes = {
      {"/health", {"GET"}},
      {"/metrics", {"GET"}},
      {"/openapi.json", {"GET"}},
      {"/collections", {"GET", "POST"}},
      {"/collections/{name}", {"GET", "DELETE"}},
      {"/collections/{name}/rows", {"POST"}},
      {"/collections/{name}/query", {"POST"}},
      {"/collections/{name}/delete", {"POST"}},
      {"/collections/{name}/get", {"POST"}},
      {"/collections/{name}/scroll", {"POST"}},
      {"/collections/{name}/count", {"POST"}},
      {"/collections/{name}/update", {"POST"}},
      {"/collections/{name}/compact", {"POST"}},
      {"/collections/{name}/alter", {"POST"}},
      {"/collections/{name}/rename", {"POST"}},
      {"/aliases", {"GET"}},
      {"/aliases/{name}", {"PUT", "DELETE"}},
      {"/snapshots", {"POST"}},
      {"/snapshots/{token}", {"DELETE"}},
      {"/backup", {"POST"}},
  };
  return kRoutes;
}

const Route* MatchRoute(std::string_view target, std::string* param, bool* param_ok) {
  *param_ok = true;
  param->clear();
  std::vector<std::string_view> parts;
  if (!Segments(target, &parts)) return nullptr;
  for (const Route& route : Routes()) {
    std::vector<std::string_view> pattern;
    Segments(route.pattern, &pattern);
    if (pattern.size() != parts.size()) continue;
    bool match = true;
    size_t param_at = parts.size();
    for (size_t i = 0; i < parts.size() && match; ++i) {
      if (pattern[i].starts_with('{')) {
        param_at = i;
      } else {
        match = pattern[i] == parts[i];
      }
    }
    if (!match) continue;
    if (param_at < parts.size()) *param_ok = PercentDecode(parts[param_at], param);
    return &route;
  }
  return nullptr;
}

std::string AllowHeader(const Route& route) {
  std::string out;
  for (std::string_view m : route.methods) {
    if (!out.empty()) out += ", ";
    out += m;
  }
  return out;
}

}  // namespace sieve::server
