// Copyright 2026 The Sieve Authors.
//
// The synthetic data and the common options of the GPU benchmarks, shared so that every program
// that claims "the same data" (tools/bench/gpu_paths_bench.cc, threshold_select_bench.cc,
// peers/cuvs_peer/cuvs_peer_bench.cu) builds it from one definition. Header-only, standard C++
// only (nvcc and the host compiler both read it).

#ifndef SIEVE_TOOLS_BENCH_BENCH_DATA_H_
#define SIEVE_TOOLS_BENCH_BENCH_DATA_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace sieve::bench {

inline uint64_t Mix(uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Value i of the stream `seed`: uniform in [-1, 1) (callers round it to float16 as they need).
inline float UniformValue(uint64_t seed, uint64_t i) {
  return static_cast<float>(Mix(seed ^ (i * 0x9e37ull)) >> 40) / 8388608.0f - 1.0f;
}

// Calls fn(i) for i in [0, n), split over every core.
template <typename Fn>
void ParallelFor(size_t n, Fn fn) {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const size_t begin = n * t / threads, end = n * (t + 1) / threads;
      for (size_t i = begin; i < end; ++i) fn(i);
    });
  }
  for (auto& th : pool) th.join();
}

// The passing rows of one filter: each row with probability n_pass / rows (hashed from `seed`),
// then every 7th row from 0 while fewer than n_pass were picked (the list may then repeat a
// row; callers treat it as a set). All rows when n_pass >= rows. A strided hash pick instead of
// a permutation prefix: 10M shuffles would cost more than the benchmark needs.
inline std::vector<uint32_t> PassingRows(uint32_t rows, uint64_t n_pass, uint64_t seed) {
  std::vector<uint32_t> ords;
  if (n_pass >= rows) {
    ords.resize(rows);
    for (uint32_t r = 0; r < rows; ++r) ords[r] = r;
    return ords;
  }
  ords.reserve(n_pass);
  const double p = static_cast<double>(n_pass) / rows;
  for (uint32_t r = 0; r < rows && ords.size() < n_pass; ++r) {
    if (static_cast<double>(Mix(seed ^ r) >> 11) * (1.0 / 9007199254740992.0) < p) {
      ords.push_back(r);
    }
  }
  for (uint32_t r = 0; ords.size() < n_pass && r < rows; r += 7) ords.push_back(r);
  return ords;
}

// "a,b,,c" → {"a", "b", "c"}.
inline std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// The options every path benchmark takes: the shape, the timing and the filters' passing rows
// (fractions of the rows, and absolute counts).
struct SweepOptions {
  uint32_t rows = 10'000'000;
  uint32_t dim = 128;
  uint32_t queries = 100;
  uint32_t k = 64;
  int warmup = 3;
  int reps = 20;
  std::vector<double> fractions = {0.0001, 0.001, 0.01, 0.1, 1.0};
  std::vector<uint64_t> extra_rows = {1000};
};

// Takes flag `a` into *o when it is one of SweepOptions' (--rows --dim --queries --k --warmup
// --reps --fractions --extra-rows), reading its argument with value(); false otherwise.
template <typename Value>
bool ParseSweepOption(const std::string& a, Value&& value, SweepOptions* o) {
  if (a == "--rows") o->rows = std::stoul(value());
  else if (a == "--dim") o->dim = std::stoul(value());
  else if (a == "--queries") o->queries = std::stoul(value());
  else if (a == "--k") o->k = std::stoul(value());
  else if (a == "--warmup") o->warmup = std::stoi(value());
  else if (a == "--reps") o->reps = std::stoi(value());
  else if (a == "--fractions") {
    o->fractions.clear();
    for (const std::string& f : Split(value())) o->fractions.push_back(std::stod(f));
  } else if (a == "--extra-rows") {
    o->extra_rows.clear();
    for (const std::string& f : Split(value())) o->extra_rows.push_back(std::stoull(f));
  } else {
    return false;
  }
  return true;
}

}  // namespace sieve::bench

#endif  // SIEVE_TOOLS_BENCH_BENCH_DATA_H_
