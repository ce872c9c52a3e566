// Copyright 2026 The Sieve Authors.
//
// Parquet in a build without Apache Arrow's libraries (tools/CMakeLists.txt compiles this file
// instead of parquet_reader.cc and parquet_writer.cc then).

#include "tools/io/parquet.h"

namespace sieve::io {

namespace {

Status Unavailable(const std::string& path) {
  return Status::NotSupported(
      "file " + path +
      ": this sieve was built without Parquet support (Apache Arrow's C++ "
      "libraries were not found): run tools/install-arrow.sh and build again");
}

}  // namespace

bool ParquetAvailable() { return false; }

Status ParquetReader::Open(const std::string& path, const std::vector<AttributeSpec>&,
                           const ParquetReadOptions&, std::unique_ptr<ParquetReader>*) {
  return Unavailable(path);
}

Status ParquetWriter::Open(const std::string& path, const ParquetWriteOptions&,
                           std::unique_ptr<ParquetWriter>*) {
  return Unavailable(path);
}

}  // namespace sieve::io
