// Copyright 2026 The Sieve Authors.
//
// VectorArena holds one shard's vectors on the host as float32, row-major, in one contiguous
// allocation that grows by doubling (so GEMM paths see one long run of rows), with each row's
// squared L2 norm beside it. Rows are appended, never moved relative to each other; a snapshot
// is a row count. Several shard images may share one arena (ShardIndex::CopyForWrite): the
// owner that appends checks HasRoomFor first and appends to a CopyWithRoom when another image
// still reads it, so no append ever moves rows under a reader.
//
// Thread-safety: Append needs exclusive access; readers of rows below a snapshot they took
// under the collection's lock may read concurrently.

#ifndef SIEVE_INDEX_VECTOR_ARENA_H_
#define SIEVE_INDEX_VECTOR_ARENA_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace sieve {

class VectorArena {
 public:
  // Rows are grouped in pages of this many rows (the threshold-select unit).
  static constexpr uint32_t kPageRows = 64;

  VectorArena();
  explicit VectorArena(uint32_t dim);
  // Copies would share a lineage; CopyWithRoom makes the only kind of copy there is.
  VectorArena(const VectorArena&) = delete;
  VectorArena& operator=(const VectorArena&) = delete;

  uint32_t dim() const { return dim_; }
  uint32_t rows() const { return rows_; }
  const float* data() const { return data_.data(); }
  const float* row(uint32_t i) const { return data_.data() + static_cast<size_t>(i) * dim_; }
  const float* sq_norms() const { return norms_.data(); }
  // The largest squared norm of any row appended (so at least that of any snapshot's rows);
  // infinite once a row's norm is infinite or NaN. 0 without rows.
  float max_sq_norm() const { return max_sq_norm_; }

  void Reserve(uint32_t rows);
  // Whether n more rows fit in the allocation, so that Append moves no row.
  bool HasRoomFor(uint32_t n) const;
  // Appends n rows of dim floats and computes their squared norms.
  void Append(const float* rows, uint32_t n);
  // A new arena holding these rows, with room for `capacity_rows` (at least rows()), of a new
  // lineage.
  std::unique_ptr<VectorArena> CopyWithRoom(size_t capacity_rows) const;

  // A new value, unique in the process, after every append; executors that cache the rows
  // elsewhere (the GPU) compare it.
  uint64_t generation() const { return generation_; }
  // A value unique in the process to this arena: rows cached elsewhere under another lineage
  // are no prefix of these, whatever the row counts.
  uint64_t lineage() const { return lineage_; }

 private:
  uint32_t dim_ = 0;
  uint32_t rows_ = 0;
  uint64_t generation_ = 0;
  uint64_t lineage_;
  std::vector<float> data_;
  std::vector<float> norms_;
  float max_sq_norm_ = 0;
};

}  // namespace sieve

#endif  // SIEVE_INDEX_VECTOR_ARENA_H_
