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

// The source tree the tests read golden data from (tests/data/): $SIEVE_SOURCE_DIR when set (a
// test binary run elsewhere, as on the H200), else the tree it was built from.
std::string SourceDir();

// The CLI under test: $SIEVE_CLI when set (e.g. a bundle on another machine), else the build's.
const char* CliPath();

// The whole file ("" when it cannot be read).
std::string ReadFile(const std::string& path);

// The last non-empty line of `text`, without its newline ("" when there is none): the CLI's
// --explain JSON, which follows any notice on stderr (a first-use calibration's, on a GPU
// without shipped thresholds).
std::string LastLine(const std::string& text);

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
