// Copyright 2026 The Sieve Authors.

#include "tools/server/npy_body.h"

namespace sieve::server {

Status ParseNpyMatrix(std::string_view bytes, io::NpyMatrix* out) {
  return io::ParseNpyMatrix(bytes, "npy body: ", out);
}

}  // namespace sieve::server
