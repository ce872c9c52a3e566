// Copyright 2026 The Sieve Authors.
//
// The version of the Sieve headers an application compiles against. It equals the CMake
// project's VERSION (the configure step fails when the two disagree), the installed package's
// version (find_package(sieve 0.1)) and the Python package's.
//
//   #if SIEVE_VERSION_NUMBER >= SIEVE_MAKE_VERSION(0, 2, 0)
//   ...
//   #endif

#ifndef SIEVE_INCLUDE_SIEVE_VERSION_H_
#define SIEVE_INCLUDE_SIEVE_VERSION_H_

#define SIEVE_VERSION_MAJOR 0
#define SIEVE_VERSION_MINOR 1
#define SIEVE_VERSION_PATCH 0
#define SIEVE_VERSION "0.1.0"

// One comparable number: MAJOR * 10000 + MINOR * 100 + PATCH.
#define SIEVE_MAKE_VERSION(major, minor, patch) ((major) * 10000 + (minor) * 100 + (patch))
#define SIEVE_VERSION_NUMBER \
  SIEVE_MAKE_VERSION(SIEVE_VERSION_MAJOR, SIEVE_VERSION_MINOR, SIEVE_VERSION_PATCH)

#endif  // SIEVE_INCLUDE_SIEVE_VERSION_H_
