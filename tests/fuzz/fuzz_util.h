// Copyright 2026 The Sieve Authors.
//
// Helpers shared by the libFuzzer targets: the readers under test take paths, so each input
// is written to one scratch file per process (under /dev/shm when it exists, so no disk I/O).

#ifndef SIEVE_TESTS_FUZZ_FUZZ_UTIL_H_
#define SIEVE_TESTS_FUZZ_FUZZ_UTIL_H_

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace sieve::fuzz {

// A directory of this process's own, created on first use and never removed (libFuzzer ends
// the process with exit(), and a leftover directory in /dev/shm or /tmp is harmless).
inline const std::string& ScratchDir() {
  static const std::string dir = [] {
    std::string base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    std::string templ = base + "/sieve-fuzz-XXXXXX";
    if (mkdtemp(templ.data()) == nullptr) {
      std::perror("mkdtemp");
      std::abort();
    }
    return templ;
  }();
  return dir;
}

// Writes the input to ScratchDir()/name and returns that path.
inline std::string WriteInput(const std::string& name, const uint8_t* data, size_t size) {
  const std::string path = ScratchDir() + "/" + name;
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || (size > 0 && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) {
    std::perror(path.c_str());
    std::abort();
  }
  return path;
}

// A fuzz target's own invariant failed: report and abort, so libFuzzer saves the input.
[[noreturn]] inline void Fail(const std::string& what) {
  std::fprintf(stderr, "fuzz invariant failed: %s\n", what.c_str());
  std::abort();
}

}  // namespace sieve::fuzz

#endif  // SIEVE_TESTS_FUZZ_FUZZ_UTIL_H_
