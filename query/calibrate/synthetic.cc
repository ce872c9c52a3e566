// Copyright 2026 The Sieve Authors.

#include "query/calibrate/synthetic.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

namespace sieve::calibrate {

namespace {

uint64_t Mix(uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

unsigned Threads() { return std::max(1u, std::thread::hardware_concurrency()); }

template <typename Fn>
void ParallelFor(size_t n, Fn&& fn) {
  const unsigned threads =
      static_cast<unsigned>(std::min<size_t>(Threads(), std::max<size_t>(n, 1)));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (size_t i = n * t / threads, end = n * (t + 1) / threads; i < end; ++i) fn(i);
    });
  }
  for (auto& th : pool) th.join();
}

}  // namespace

// x rounded to the nearest float16 value, ties to even, as static_cast<_Float16> (a software
// conversion without F16C) but by clearing the 13 low mantissa bits. Exact for the generator's
// values (|x| < 1; below 2^-14, where float16 is subnormal, they are multiples of 2^-23, which
// it holds exactly): tests/calibrate/synthetic_test.cc checks every one.
float RoundToHalf(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof(u));
  u += 0x0FFFu + ((u >> 13) & 1u);
  u &= ~0x1FFFu;
  std::memcpy(&x, &u, sizeof(x));
  return x;
}

void MakeVectors(size_t n, uint32_t dim, bool round_half, uint64_t seed, FloatBuffer* v,
                 FloatBuffer* norms) {
  v->resize(n * dim);
  if (norms != nullptr) norms->resize(n);
  const size_t blocks = std::max<size_t>(1, std::min<size_t>(n, 256));
  ParallelFor(blocks, [&](size_t b) {
    const size_t begin = n * b / blocks, end = n * (b + 1) / blocks;
    for (size_t r = begin; r < end; ++r) {
      float* row = v->data() + r * dim;
      double sq = 0;
      for (uint32_t d = 0; d < dim; ++d) {
        float x =
            static_cast<float>(Mix(seed ^ ((r * dim + d) * 0x9e37ull)) >> 40) / 8388608.0f - 1.0f;
        if (round_half) x = RoundToHalf(x);
        row[d] = x;
        sq += static_cast<double>(x) * x;
      }
      if (norms != nullptr) (*norms)[r] = static_cast<float>(sq);
    }
  });
}

RowSet Bernoulli(uint64_t rows, double p, uint64_t seed) {
  // One 65,536-row chunk at a time: a hundred sets of millions of rows never hold their
  // ordinals all at once.
  // The test is branch-free (every row is written, the count advances when it passes: near
  // p = 1/2 a branch mispredicts every other row), and one hash decides two rows, 32 bits
  // each.
  constexpr uint64_t kChunk = 65536;
  std::vector<uint32_t> ords(kChunk);
  const uint64_t cut =
      p >= 1.0 ? uint64_t{1} << 32 : static_cast<uint64_t>(p * 4294967296.0);
  RowSet set;
  for (uint64_t begin = 0; begin < rows; begin += kChunk) {
    size_t n = 0;
    const uint64_t end = std::min(rows, begin + kChunk);
    for (uint64_t r = begin; r < end; r += 2) {
      const uint64_t h = Mix(seed ^ ((r >> 1) * 0xd1b54a32d192ed03ull));
      ords[n] = static_cast<uint32_t>(r);
      n += (h & 0xffffffffu) < cut ? 1 : 0;
      if (r + 1 < end) {
        ords[n] = static_cast<uint32_t>(r + 1);
        n += (h >> 32) < cut ? 1 : 0;
      }
    }
    set.AddMany(ords.data(), n);
  }
  return set;
}

// A Bernoulli pick trimmed or topped up to the count.
RowSet Exactly(uint64_t rows, uint64_t n, uint64_t seed) {
  if (n >= rows) return RowSet::Range(0, static_cast<uint32_t>(rows));
  std::vector<uint32_t> ords;
  ords.reserve(n);
  const double p = static_cast<double>(n) / rows;
  const uint64_t cut = static_cast<uint64_t>(p * 18446744073709551615.0);
  for (uint64_t r = 0; r < rows && ords.size() < n; ++r) {
    if (Mix(seed ^ (r * 0xd1b54a32d192ed03ull)) <= cut) ords.push_back(static_cast<uint32_t>(r));
  }
  if (ords.size() < n) {
    // Top up with rows not yet taken, walking from the end.
    RowSet have = RowSet::Of(ords.data(), ords.size());
    for (uint64_t r = rows; r-- > 0 && ords.size() < n;) {
      if (!have.Contains(static_cast<uint32_t>(r))) ords.push_back(static_cast<uint32_t>(r));
    }
    std::sort(ords.begin(), ords.end());
  }
  return RowSet::Of(ords.data(), ords.size());
}

std::vector<uint64_t> SeriesCounts(const std::vector<double>& fractions,
                                   const std::vector<uint64_t>& counts, uint64_t rows) {
  std::vector<uint64_t> out;
  for (double f : fractions) {
    uint64_t n = static_cast<uint64_t>(std::llround(f * static_cast<double>(rows)));
    if (n >= 1 && n <= rows) out.push_back(n);
  }
  for (uint64_t n : counts) {
    if (n >= 1 && n < rows) out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

PointFilters BuildFilters(uint64_t rows, uint64_t count, bool per_query, Overlap overlap,
                          uint32_t queries, uint64_t seed) {
  PointFilters pf;
  pf.count = count;
  if (!per_query || overlap == Overlap::kShared) {
    pf.sets.push_back(Exactly(rows, count, seed ^ Mix(count)));
    pf.mean = pf.sets[0].Cardinality();
    pf.union_rows = pf.mean;
    pf.max_rows = pf.mean;
    return pf;
  }
  pf.sets.resize(queries);
  const double p = static_cast<double>(count) / rows;
  RowSet shared;
  if (overlap == Overlap::kHalf) shared = Exactly(rows, count / 2, seed ^ Mix(count) ^ 0x55);
  ParallelFor(queries, [&](size_t q) {
    const uint64_t s = Mix(seed ^ Mix(count) ^ Mix(q + 1000003));
    if (overlap == Overlap::kIndependent) {
      pf.sets[q] = Bernoulli(rows, p, s);
    } else {
      RowSet own = Bernoulli(rows, p / 2, s);
      const RowSet* both[2] = {&shared, &own};
      pf.sets[q] = RowSet::Union(both, 2);
    }
  });
  uint64_t sum = 0;
  std::vector<const RowSet*> ptrs;
  for (auto& s : pf.sets) {
    sum += s.Cardinality();
    pf.max_rows = std::max(pf.max_rows, s.Cardinality());
    ptrs.push_back(&s);
  }
  pf.mean = sum / queries;
  pf.union_rows = RowSet::Union(ptrs.data(), ptrs.size()).Cardinality();
  return pf;
}

}  // namespace sieve::calibrate
