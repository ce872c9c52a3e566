// Copyright 2026 The Sieve Authors.
//
// A small command-line parser for the CLI: positional arguments (the database path; a backup
// command's second path) and
// `--name value` / `--name=value` flags, some boolean. A flag may be given once unless it is
// declared repeatable (`--attr`): a second `--filter` is an error, never a silent override.
// A repeatable flag may also be declared a list of integers (`--id 1000 1001`): it then takes,
// besides its value, every following argument that is an integer.

#ifndef SIEVE_TOOLS_CLI_FLAGS_H_
#define SIEVE_TOOLS_CLI_FLAGS_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "sieve/status.h"

namespace sieve::cli {

class Flags {
 public:
  // `value_flags` take a value, `bool_flags` do not; both without the leading "--".
  // `repeatable` names the value flags that may be given more than once; `integer_lists`
  // those of them that also take the integers following their value.
  Flags(std::set<std::string> value_flags, std::set<std::string> bool_flags,
        std::set<std::string> repeatable = {}, std::set<std::string> integer_lists = {})
      : value_flags_(std::move(value_flags)),
        bool_flags_(std::move(bool_flags)),
        repeatable_(std::move(repeatable)),
        integer_lists_(std::move(integer_lists)) {}

  // InvalidArgument for an unknown flag, a missing value, a flag given twice that is not
  // repeatable, or extra positional arguments.
  Status Parse(const std::vector<std::string>& args);

  // How many positional arguments Parse accepts (the database path, and e.g. a backup's
  // destination). Default: 1.
  void set_max_positional(size_t n) { max_positional_ = n; }
  bool help() const { return help_; }
  const std::vector<std::string>& positional() const { return positional_; }
  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  // The value given for `name`, or `def`.
  std::string Get(const std::string& name, const std::string& def = "") const;
  std::vector<std::string> GetAll(const std::string& name) const;
  // InvalidArgument naming the flag when it is missing.
  Status Require(const std::string& name, std::string* value) const;
  // Parses an integer flag in [lo, hi]; InvalidArgument naming the flag otherwise.
  Status GetInt(const std::string& name, long long def, long long lo, long long hi,
                long long* out) const;
  // Parses a finite number flag; InvalidArgument naming the flag otherwise.
  Status GetDouble(const std::string& name, double def, double* out) const;

 private:
  std::set<std::string> value_flags_;
  std::set<std::string> bool_flags_;
  std::set<std::string> repeatable_;
  std::set<std::string> integer_lists_;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
  bool help_ = false;
  size_t max_positional_ = 1;
};

}  // namespace sieve::cli

#endif  // SIEVE_TOOLS_CLI_FLAGS_H_
