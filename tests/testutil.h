// Copyright 2026 The Sieve Authors.
//
// Helpers shared by the test suites: scratch directories, deterministic random data and the
// float64 brute-force oracle every search test compares against.

#ifndef SIEVE_TESTS_TESTUTIL_H_
#define SIEVE_TESTS_TESTUTIL_H_

#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "sieve/types.h"

namespace sieve::test {

// A fresh empty directory under $TMPDIR (or /tmp), removed by the destructor.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  const std::string& path() const { return path_; }
  std::string Join(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Sets an environment switch (or clears it, for a null value) for a scope, and puts back what
// was there before when the scope ends.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_.c_str(), old_.c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  bool had_ = false;
  std::string old_;
};

// n × dim floats uniform in [-1, 1), deterministic in `seed`.
std::vector<float> RandomVectors(size_t n, size_t dim, uint64_t seed);

// The float64 distance of the metric between two float32 vectors (l2 squared; ip; 1 - cos).
double OracleDistance(Metric metric, const float* a, const float* b, size_t dim);

// Exact top-k of one query over the rows for which `pass(row)` holds, computed in float64:
// (row, distance) sorted best first, ties by the smaller row.
template <typename Pass>
std::vector<std::pair<uint32_t, double>> OracleTopK(Metric metric, const float* query,
                                                    const float* rows, size_t n_rows,
                                                    size_t dim, size_t k, Pass&& pass);

}  // namespace sieve::test

#include "tests/testutil_inl.h"

#endif  // SIEVE_TESTS_TESTUTIL_H_
