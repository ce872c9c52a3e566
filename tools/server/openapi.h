// Copyright 2026 The Sieve Authors.
//
// The OpenAPI 3.1 document of the server's HTTP API: tools/server/openapi.json, compiled into
// the binary at build time (embed_openapi.cmake), so that an installed server serves the
// document of its own routes at GET /openapi.json. tests/server/openapi_test.cc checks that it
// lists exactly the routes of routes.h.
//
// Thread-safety: immutable.

#ifndef SIEVE_TOOLS_SERVER_OPENAPI_H_
#define SIEVE_TOOLS_SERVER_OPENAPI_H_

#include <string_view>

namespace sieve::server {

// The document's JSON text; valid for the life of the process.
std::string_view OpenApiDocument();

}  // namespace sieve::server

#endif  // SIEVE_TOOLS_SERVER_OPENAPI_H_
