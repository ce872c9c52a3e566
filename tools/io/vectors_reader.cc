// Copyright 2026 The Sieve Authors.

#include "tools/io/vectors_reader.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "tools/io/file_util.h"
#include "tools/io/fvecs.h"

namespace sieve::io {

Status ReadVectorsFile(const std::string& path, NpyMatrix* out) {
  const std::string ext = LowerExtension(path);
  if (ext == ".npy") {
    SIEVE_RETURN_IF_ERROR(ReadNpyMatrix(path, out));
  } else if (ext == ".fvecs") {
    SIEVE_RETURN_IF_ERROR(ReadFvecs(path, out));
  } else {
    return Status::InvalidArgument("file " + Printable(path) + ": unsupported vectors format '" +
                                   Printable(ext) + "'; expected .npy or .fvecs");
  }
  return CheckFiniteVectors(path, *out);
}

Status CheckFiniteVectors(const std::string& path, const NpyMatrix& m) {
  // A branch-free test per block lets the compiler vectorize the scan of the usual all-finite
  // input; only a block that holds a bad value is searched element by element.
  constexpr size_t kBlock = 4096;
  const float* data = m.data.data();
  const size_t n = m.data.size();
  for (size_t begin = 0; begin < n; begin += kBlock) {
    const size_t end = std::min(n, begin + kBlock);
    uint32_t bad = 0;
    for (size_t i = begin; i < end; ++i) {
      bad |= (std::bit_cast<uint32_t>(data[i]) & 0x7F800000u) == 0x7F800000u;
    }
    if (bad == 0) continue;
    for (size_t i = begin; i < end; ++i) {
      if (std::isfinite(data[i])) continue;
      return Status::InvalidArgument("file " + Printable(path) + ": row " +
                                     std::to_string(i / m.cols) + ", column " +
                                     std::to_string(i % m.cols) + ": component is " +
                                     (std::isnan(data[i]) ? "NaN" : "infinite"));
    }
  }
  return Status::OK();
}

}  // namespace sieve::io
