// Copyright 2026 The Sieve Authors.

#include "tests/e2e/cli_run.h"

#include <sys/wait.h>

#include <cstdlib>
#include <sstream>

namespace sieve::test {

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    // A quote cannot appear inside single quotes: close, emit it escaped, reopen.
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::vector<nlohmann::json> CliRun::Lines() const {
  std::vector<nlohmann::json> v;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) v.push_back(nlohmann::json::parse(line));
  }
  return v;
}

CliRun RunCli(const std::vector<std::string>& args, const ScratchDir& dir) {
  std::string cmd = ShellQuote(CliPath());
  for (const auto& a : args) cmd += " " + ShellQuote(a);
  const std::string out = dir.Join("stdout"), err = dir.Join("stderr");
  cmd += " >" + ShellQuote(out) + " 2>" + ShellQuote(err);
  CliRun r;
  const int status = std::system(cmd.c_str());
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadFile(out);
  r.err = ReadFile(err);
  return r;
}

}  // namespace sieve::test
