// Copyright 2026 The Sieve Authors.

#include "tools/io/vectors_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "tools/io/file_util.h"
#include "tools/io/fvecs.h"
#include "tools/io/hdf5.h"

namespace sieve::io {

Status ReadVectorsFile(const std::string& path, NpyMatrix* out) {
  const std::string ext = LowerExtension(path);
  if (IsHdf5Spec(path)) {
    std::string file, dataset;
    SplitHdf5Spec(path, &file, &dataset);
    SIEVE_RETURN_IF_ERROR(ReadHdf5Matrix(file, dataset, out));
  } else if (ext == ".npy") {
    SIEVE_RETURN_IF_ERROR(ReadNpyMatrix(path, out));
  } else if (ext == ".fvecs") {
    SIEVE_RETURN_IF_ERROR(ReadFvecs(path, out));
  } else {
    return Status::InvalidArgument("file " + Printable(path) + ": unsupported vectors format '" +
                                   Printable(ext) +
                                   "'; expected .npy, .fvecs or FILE.hdf5:DATASET");
  }
  return CheckFiniteVectors(path, *out);
}

namespace {

// True when any of data[0, n) is NaN or infinite (all exponent bits set). Branch-free so that
// the compiler vectorizes it; a constant `n` lets GCC's -O2 cost model do so too.
template <size_t n>
bool AnyNonFinite(const float* data) {
  uint32_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, data + i, sizeof(bits));
    bad |= static_cast<uint32_t>((bits & 0x7F800000u) == 0x7F800000u);
  }
  return bad != 0;
}

}  // namespace

Status CheckFiniteVectors(const std::string& path, const NpyMatrix& m) {
  constexpr size_t kBlock = 1024;
  const float* data = m.data.data();
  const size_t n = m.data.size();
  for (size_t begin = 0; begin < n; begin += kBlock) {
    // Only a block that holds a bad value is searched element by element.
    if (n - begin >= kBlock && !AnyNonFinite<kBlock>(data + begin)) continue;
    for (size_t i = begin; i < std::min(n, begin + kBlock); ++i) {
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
