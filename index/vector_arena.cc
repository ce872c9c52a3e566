// Copyright 2026 The Sieve Authors.

#include "index/vector_arena.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>

namespace sieve {

namespace {
std::atomic<uint64_t> next_generation{1};
std::atomic<uint64_t> next_lineage{1};
}  // namespace

VectorArena::VectorArena() : lineage_(next_lineage.fetch_add(1, std::memory_order_relaxed)) {}

VectorArena::VectorArena(uint32_t dim)
    : dim_(dim), lineage_(next_lineage.fetch_add(1, std::memory_order_relaxed)) {}

bool VectorArena::HasRoomFor(uint32_t n) const {
  return static_cast<size_t>(rows_) + n <= norms_.capacity();
}

std::unique_ptr<VectorArena> VectorArena::CopyWithRoom(size_t capacity_rows) const {
  auto copy = std::make_unique<VectorArena>(dim_);
  capacity_rows = std::max<size_t>(capacity_rows, rows_);
  copy->data_.reserve(capacity_rows * dim_);
  copy->norms_.reserve(capacity_rows);
  copy->data_ = data_;
  copy->norms_ = norms_;
  // Assignment keeps the capacity reserved above when it is at least the size.
  copy->rows_ = rows_;
  copy->max_sq_norm_ = max_sq_norm_;
  copy->generation_ = next_generation.fetch_add(1, std::memory_order_relaxed);
  return copy;
}

void VectorArena::Reserve(uint32_t rows) {
  data_.reserve(static_cast<size_t>(rows) * dim_);
  norms_.reserve(rows);
}

void VectorArena::Append(const float* rows, uint32_t n) {
  if (n == 0) return;
  const size_t need_rows = static_cast<size_t>(rows_) + n;
  if (need_rows > norms_.capacity()) {
    // Doubling keeps appends amortized O(1) per row while the rows stay in one allocation.
    size_t cap = std::max<size_t>(need_rows, norms_.capacity() * 2);
    data_.reserve(cap * dim_);
    norms_.reserve(cap);
  }
  const size_t old = static_cast<size_t>(rows_) * dim_;
  data_.resize(need_rows * dim_);
  if (dim_ > 0)
    std::memcpy(data_.data() + old, rows, static_cast<size_t>(n) * dim_ * sizeof(float));
  for (uint32_t r = 0; r < n; ++r) {
    // Accumulated in double so the stored norm is the correctly rounded float of the exact
    // value, whatever the dimension; L2 via |q|^2 + |x|^2 - 2 q.x relies on it.
    const float* v = rows + static_cast<size_t>(r) * dim_;
    double sum = 0;
    for (uint32_t d = 0; d < dim_; ++d) sum += static_cast<double>(v[d]) * v[d];
    const float norm = static_cast<float>(sum);
    norms_.push_back(norm);
    if (!(norm <= max_sq_norm_)) {
      max_sq_norm_ = std::isnan(norm) ? std::numeric_limits<float>::infinity() : norm;
    }
  }
  rows_ += n;
  generation_ = next_generation.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace sieve
