// Copyright 2026 The Sieve Authors.
//
// The flags of every benchmark: the CLI's parser (tools/cli/flags.h: `--name value`,
// `--name=value`, boolean flags) with the typed getters a benchmark needs. A bad or unknown flag
// prints the program's usage and exits with status 2; --help prints it and exits 0.

#ifndef SIEVE_TOOLS_BENCH_BENCH_FLAGS_H_
#define SIEVE_TOOLS_BENCH_BENCH_FLAGS_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "tools/cli/flags.h"

namespace sieve::bench {

class BenchFlags {
 public:
  // `value_flags` take a value, `bool_flags` none; both without the leading "--".
  BenchFlags(std::string program, std::string usage, std::set<std::string> value_flags,
             std::set<std::string> bool_flags = {})
      : program_(std::move(program)),
        usage_(std::move(usage)),
        flags_(std::move(value_flags), std::move(bool_flags)) {}

  // Parses argv[1..argc). Positional arguments are an error.
  void Parse(int argc, char** argv) {
    Status s = flags_.Parse(std::vector<std::string>(argv + 1, argv + argc));
    if (flags_.help()) {
      std::fputs(usage_.c_str(), stdout);
      std::exit(0);
    }
    if (s.ok() && !flags_.positional().empty()) {
      s = Status::InvalidArgument("unexpected argument '" + flags_.positional()[0] + "'");
    }
    if (!s.ok()) Die(s.message());
  }

  bool Has(const std::string& name) const { return flags_.Has(name); }
  std::string Str(const std::string& name, const std::string& def) const {
    return flags_.Get(name, def);
  }
  uint64_t Uint(const std::string& name, uint64_t def) const {
    return Has(name) ? ToUint(name, flags_.Get(name)) : def;
  }
  int Int(const std::string& name, int def) const {
    if (!Has(name)) return def;
    const std::string v = flags_.Get(name);
    char* end = nullptr;
    const long x = std::strtol(v.c_str(), &end, 10);
    if (end == v.c_str() || *end != '\0') Die("--" + name + ": '" + v + "' is not an integer");
    return static_cast<int>(x);
  }
  double Double(const std::string& name, double def) const {
    return Has(name) ? ToDouble(name, flags_.Get(name)) : def;
  }
  // A boolean flag: given, or given a value of 1 / true (value flags) — false otherwise.
  bool Bool(const std::string& name, bool def = false) const {
    if (!Has(name)) return def;
    const std::string v = flags_.Get(name);
    return v == "1" || v == "true";
  }
  // "a,b,,c" → {"a", "b", "c"}.
  std::vector<std::string> List(const std::string& name, std::vector<std::string> def) const {
    if (!Has(name)) return def;
    std::vector<std::string> out;
    const std::string s = flags_.Get(name);
    size_t start = 0;
    while (start <= s.size()) {
      size_t end = s.find(',', start);
      if (end == std::string::npos) end = s.size();
      if (end > start) out.push_back(s.substr(start, end - start));
      start = end + 1;
    }
    return out;
  }
  std::vector<double> Doubles(const std::string& name, std::vector<double> def) const {
    if (!Has(name)) return def;
    std::vector<double> out;
    for (const std::string& v : List(name, {})) out.push_back(ToDouble(name, v));
    return out;
  }
  std::vector<uint64_t> Uints(const std::string& name, std::vector<uint64_t> def) const {
    if (!Has(name)) return def;
    std::vector<uint64_t> out;
    for (const std::string& v : List(name, {})) out.push_back(ToUint(name, v));
    return out;
  }

  [[noreturn]] void Die(const std::string& what) const {
    std::fprintf(stderr, "%s: %s\n%s", program_.c_str(), what.c_str(), usage_.c_str());
    std::exit(2);
  }

 private:
  uint64_t ToUint(const std::string& name, const std::string& v) const {
    char* end = nullptr;
    const unsigned long long x = std::strtoull(v.c_str(), &end, 10);
    if (v.empty() || v[0] == '-' || end == v.c_str() || *end != '\0') {
      Die("--" + name + ": '" + v + "' is not a non-negative integer");
    }
    return x;
  }
  double ToDouble(const std::string& name, const std::string& v) const {
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (end == v.c_str() || *end != '\0') Die("--" + name + ": '" + v + "' is not a number");
    return x;
  }

  std::string program_;
  std::string usage_;
  cli::Flags flags_;
};

}  // namespace sieve::bench

#endif  // SIEVE_TOOLS_BENCH_BENCH_FLAGS_H_
