// Copyright 2026 The Sieve Authors.

#include "tests/testutil.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

namespace sieve::test {

std::string SourceDir() {
  const char* env = std::getenv("SIEVE_SOURCE_DIR");
  return env != nullptr && env[0] != '\0' ? std::string(env) : std::string(SIEVE_SOURCE_DIR);
}

const char* CliPath() {
  const char* env = std::getenv("SIEVE_CLI");
  return env != nullptr && *env != '\0' ? env : SIEVE_CLI_PATH;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string LastLine(const std::string& text) {
  size_t end = text.find_last_not_of('\n');
  if (end == std::string::npos) return "";
  const size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     start == std::string::npos ? end + 1 : end - start);
}

ScratchDir::ScratchDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string base = (tmp && *tmp) ? tmp : "/tmp";
  std::string templ = base + "/sieve_test_XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = buf.data();
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::vector<float> RandomVectors(size_t n, size_t dim, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n * dim);
  for (auto& x : v) x = u(rng);
  return v;
}

double OracleDistance(Metric metric, const float* a, const float* b, size_t dim) {
  double dot = 0, na = 0, nb = 0, l2 = 0;
  for (size_t i = 0; i < dim; ++i) {
    double x = a[i], y = b[i];
    dot += x * y;
    na += x * x;
    nb += y * y;
    l2 += (x - y) * (x - y);
  }
  switch (metric) {
    case Metric::kL2:
      return l2;
    case Metric::kInnerProduct:
      return dot;
    case Metric::kCosine:
      if (na == 0 || nb == 0) return 1.0;
      return 1.0 - dot / (std::sqrt(na) * std::sqrt(nb));
  }
  return 0;
}

}  // namespace sieve::test
