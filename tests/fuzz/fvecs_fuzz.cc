// Copyright 2026 The Sieve Authors.
//
// Fuzzes the .fvecs reader: any input is read or refused with a Status, and what is read
// accounts for every byte of the file.

#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/fuzz/fuzz_util.h"
#include "tools/io/fvecs.h"
#include "tools/io/vectors_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using sieve::fuzz::Fail;
  const std::string path = sieve::fuzz::WriteInput("input.fvecs", data, size);
  sieve::io::NpyMatrix m;
  sieve::Status s = sieve::io::ReadFvecs(path, &m);
  if (s.ok()) {
    if (m.cols == 0 || m.data.size() != m.rows * m.cols) Fail("shape and data disagree");
    if (m.rows * (4 + 4 * m.cols) != size) Fail("the records do not cover the file");
  } else if (s.message().rfind("file ", 0) != 0) {
    Fail("message does not name the file: " + s.ToString());
  }
  // The CLI's entry point adds the finiteness check on top.
  sieve::io::NpyMatrix checked;
  sieve::Status c = sieve::io::ReadVectorsFile(path, &checked);
  if (c.ok() && !s.ok()) Fail("ReadVectorsFile accepted what ReadFvecs refused");
  return 0;
}
