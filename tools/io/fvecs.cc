// Copyright 2026 The Sieve Authors.

#include "tools/io/fvecs.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <vector>

#include "tools/io/file_util.h"

namespace sieve::io {
namespace {

// Records are read in batches of about this many bytes and copied out without their dimension
// words, so a 512 MB file needs only a few MB beyond the result.
constexpr size_t kChunkBytes = size_t{4} << 20;

std::string Prefix(const std::string& path) { return "file " + Printable(path) + ": "; }

int32_t LoadInt32(const unsigned char* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

Status DimensionMismatch(const std::string& path, uint64_t record, int32_t dim, int32_t dim0) {
  return Status::InvalidArgument(Prefix(path) + "record " + std::to_string(record) +
                                 " declares dimension " + std::to_string(dim) + ", record 0 " +
                                 "declares " + std::to_string(dim0));
}

Status Read(const std::string& path, NpyMatrix* out) {
  InputFile file;
  SIEVE_RETURN_IF_ERROR(file.Open(path));
  const uint64_t size = file.size();
  if (size == 0) return Status::InvalidArgument(Prefix(path) + "empty file, holds no vectors");
  if (size < 4) {
    return Status::InvalidArgument(Prefix(path) + "truncated: record 0 has " +
                                   std::to_string(size) + " bytes, fewer than its dimension word");
  }
  unsigned char word[4];
  SIEVE_RETURN_IF_ERROR(file.ReadAt(0, word, 4));
  const int32_t dim0 = LoadInt32(word);
  if (dim0 <= 0) {
    return Status::InvalidArgument(Prefix(path) + "record 0 declares dimension " +
                                   std::to_string(dim0) + "; expected a positive dimension");
  }
  const uint64_t dim = static_cast<uint64_t>(dim0);
  const uint64_t record_bytes = 4 + 4 * dim;
  const uint64_t records = size / record_bytes;
  const uint64_t tail = size % record_bytes;

  out->rows = static_cast<size_t>(records);
  out->cols = static_cast<size_t>(dim);
  out->data.clear();
  out->data.resize(static_cast<size_t>(records * dim));
  const uint64_t per_chunk = std::max<uint64_t>(1, kChunkBytes / record_bytes);
  std::vector<unsigned char> buf(static_cast<size_t>(std::min(records, per_chunk) * record_bytes));
  for (uint64_t done = 0; done < records;) {
    const uint64_t n = std::min(records - done, per_chunk);
    SIEVE_RETURN_IF_ERROR(file.ReadAt(done * record_bytes, buf.data(), n * record_bytes));
    for (uint64_t i = 0; i < n; ++i) {
      const unsigned char* rec = buf.data() + i * record_bytes;
      const int32_t d = LoadInt32(rec);
      if (d != dim0) return DimensionMismatch(path, done + i, d, dim0);
      std::memcpy(&out->data[(done + i) * dim], rec + 4, dim * sizeof(float));
    }
    done += n;
  }
  if (tail != 0) {
    // A short last record whose own dimension word disagrees is reported as the mismatch, the
    // more likely cause.
    if (tail >= 4 && records > 0) {
      SIEVE_RETURN_IF_ERROR(file.ReadAt(records * record_bytes, word, 4));
      if (LoadInt32(word) != dim0) {
        return DimensionMismatch(path, records, LoadInt32(word), dim0);
      }
    }
    return Status::InvalidArgument(Prefix(path) + "truncated: record " + std::to_string(records) +
                                   " has " + std::to_string(tail) + " bytes, expected " +
                                   std::to_string(record_bytes) + " for dimension " +
                                   std::to_string(dim0));
  }
  return Status::OK();
}

}  // namespace

Status ReadFvecs(const std::string& path, NpyMatrix* out) {
  try {
    return Read(path, out);
  } catch (const std::bad_alloc&) {
    return Status::ResourceExhausted(Prefix(path) + "not enough memory to hold its data");
  } catch (const std::exception& e) {
    return Status::Internal(Prefix(path) + e.what());
  }
}

Status WriteFvecs(const std::string& path, const float* data, size_t rows, size_t cols) {
  OutputFile file;
  SIEVE_RETURN_IF_ERROR(file.Open(path));
  const int32_t dim = static_cast<int32_t>(cols);
  // Batched so that a million small records do not cost two million write calls.
  std::string buf;
  for (size_t i = 0; i < rows; ++i) {
    buf.append(reinterpret_cast<const char*>(&dim), sizeof(dim));
    buf.append(reinterpret_cast<const char*>(data + i * cols), cols * sizeof(float));
    if (buf.size() >= kChunkBytes || i + 1 == rows) {
      SIEVE_RETURN_IF_ERROR(file.Append(buf.data(), buf.size()));
      buf.clear();
    }
  }
  return file.Close();
}

}  // namespace sieve::io
