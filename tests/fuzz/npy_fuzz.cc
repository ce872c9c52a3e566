// Copyright 2026 The Sieve Authors.
//
// Fuzzes the .npy readers: the file readers (matrix and int64 vector) and the server's
// in-memory body reader, which follow the same rules and so must agree on every input.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tests/fuzz/fuzz_util.h"
#include "tools/io/npy.h"
#include "tools/server/npy_body.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using sieve::fuzz::Fail;
  const std::string path = sieve::fuzz::WriteInput("input.npy", data, size);

  sieve::io::NpyMatrix file;
  sieve::Status fs = sieve::io::ReadNpyMatrix(path, &file);
  if (fs.ok()) {
    if (file.cols == 0) Fail("a matrix with zero columns was accepted");
    if (file.data.size() != file.rows * file.cols) Fail("data size is not rows x cols");
  } else if (fs.message().rfind("file ", 0) != 0) {
    Fail("message does not name the file: " + fs.ToString());
  }

  sieve::io::NpyMatrix body;
  sieve::Status bs = sieve::server::ParseNpyMatrix(
      std::string_view(reinterpret_cast<const char*>(data), size), &body);
  if (bs.ok() != fs.ok()) {
    Fail("file reader (" + fs.ToString() + ") and body reader (" + bs.ToString() + ") disagree");
  }
  if (bs.ok() && (body.rows != file.rows || body.cols != file.cols)) {
    Fail("file reader and body reader read different shapes");
  }

  std::vector<int64_t> ids;
  sieve::Status is = sieve::io::ReadNpyInt64Vector(path, &ids);
  if (!is.ok() && is.message().rfind("file ", 0) != 0) {
    Fail("message does not name the file: " + is.ToString());
  }
  return 0;
}
