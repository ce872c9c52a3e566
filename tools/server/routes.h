// Copyright 2026 The Sieve Authors.
//
// The server's routes, in one table: the Router dispatches on it, the metrics label requests
// with its patterns, and tests check that the OpenAPI document (openapi.json) lists exactly
// these paths and methods. A pattern is a path whose `{...}` segments take any one segment
// ("/collections/{name}/query").
//
// Thread-safety: everything here is immutable.

#ifndef SIEVE_TOOLS_SERVER_ROUTES_H_
#define SIEVE_TOOLS_SERVER_ROUTES_H_

#include <string>
#include <string_view>
#include <vector>

namespace sieve::server {

struct Route {
  std::string_view pattern;               // "/collections/{name}/query"
  std::vector<std::string_view> methods;  // "GET", "POST", ...
};

// Every route, in the order docs/http-api.md lists them.
const std::vector<Route>& Routes();

// The route `target` (a path, with or without a query string, which is ignored) matches, or
// null. A trailing '/' is dropped ("/collections/" is "/collections"); an empty segment inside
// the path is a segment ("/collections//query" names the collection ""). The value of a `{...}`
// segment, percent-decoded, goes to *param; false in *param_ok when that segment's
// percent-encoding is malformed (a '%' without two hex digits).
const Route* MatchRoute(std::string_view target, std::string* param, bool* param_ok);

// "GET, POST": a route's methods as an Allow header lists them.
std::string AllowHeader(const Route& route);

}  // namespace sieve::server

#endif  // SIEVE_TOOLS_SERVER_ROUTES_H_
