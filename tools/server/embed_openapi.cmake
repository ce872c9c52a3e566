# Writes OUTPUT, a C++ source defining sieve::server::OpenApiDocument() (openapi.h), from the
# JSON text of INPUT (tools/server/openapi.json). Run by the build whenever INPUT changes.
file(READ "${INPUT}" text)
set(delimiter "sieve_openapi")
string(FIND "${text}" ")${delimiter}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} holds the raw string's end )${delimiter}\"")
endif()
set(source "// Generated from tools/server/openapi.json by tools/server/embed_openapi.cmake.

#include \"tools/server/openapi.h\"

namespace sieve::server {

std::string_view OpenApiDocument() {
  static constexpr char kDocument[] = R\"${delimiter}(${text})${delimiter}\";
  return {kDocument, sizeof(kDocument) - 1};
}

}  // namespace sieve::server
")
# Rewritten only when it changes, so that an unchanged document compiles nothing again.
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
  if(old STREQUAL source)
    return()
  endif()
endif()
file(WRITE "${OUTPUT}" "${source}")
