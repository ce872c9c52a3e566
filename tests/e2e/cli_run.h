// Copyright 2026 The Sieve Authors.
//
// Running the `sieve` CLI from an end-to-end test: one shell-quoted command line with stdout and
// stderr captured to files in the test's scratch folder, so every suite invokes the binary the
// same way.

#ifndef SIEVE_TESTS_E2E_CLI_RUN_H_
#define SIEVE_TESTS_E2E_CLI_RUN_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/testutil.h"

namespace sieve::test {

// `s` as one single-quoted word for /bin/sh, whatever characters it holds.
std::string ShellQuote(const std::string& s);

// What one CLI run left: its exit code (-1 when it did not exit normally) and its output.
struct CliRun {
  int code = -1;
  std::string out, err;
  // Each non-empty stdout line parsed as JSON (the CLI prints one object a line).
  std::vector<nlohmann::json> Lines() const;
};

// Runs CliPath() with `args` and waits for it. The captures go to `dir`'s stdout and stderr
// files, overwritten by each run; a test that passes names of its own there must avoid those.
CliRun RunCli(const std::vector<std::string>& args, const ScratchDir& dir);

}  // namespace sieve::test

#endif  // SIEVE_TESTS_E2E_CLI_RUN_H_
