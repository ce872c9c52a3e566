// Copyright 2026 The Sieve Authors.

#include "tools/cli/flags.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace sieve::cli {

namespace {

// An optional '-' and one or more decimal digits: what an integer list flag takes on.
bool IsInteger(const std::string& a) {
  const size_t start = !a.empty() && a[0] == '-' ? 1 : 0;
  return a.size() > start && a.find_first_not_of("0123456789", start) == std::string::npos;
}

}  // namespace

Status Flags::Parse(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      help_ = true;
      continue;
    }
    if (a.size() > 2 && a.compare(0, 2, "--") == 0) {
      std::string name = a.substr(2), value;
      bool has_value = false;
      auto eq = name.find('=');
      if (eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        has_value = true;
      }
      const bool is_bool = bool_flags_.count(name) > 0;
      if (!is_bool && !value_flags_.count(name)) {
        return Status::InvalidArgument("unknown option --" + name);
      }
      if (values_.count(name) && !repeatable_.count(name)) {
        return Status::InvalidArgument("--" + name + " is given more than once" +
                                       (is_bool ? "" : " (it takes one value)"));
      }
      if (is_bool) {
        if (has_value) return Status::InvalidArgument("--" + name + " takes no value");
        values_[name].push_back("true");
        continue;
      }
      if (!has_value) {
        if (i + 1 >= args.size()) return Status::InvalidArgument("--" + name + " needs a value");
        value = args[++i];
      }
      values_[name].push_back(value);
      if (integer_lists_.count(name)) {
        while (i + 1 < args.size() && IsInteger(args[i + 1])) values_[name].push_back(args[++i]);
      }
      continue;
    }
    positional_.push_back(a);
  }
  if (!help_ && positional_.size() > max_positional_) {
    return Status::InvalidArgument("unexpected argument '" + positional_[max_positional_] + "'");
  }
  return Status::OK();
}

std::string Flags::Get(const std::string& name, const std::string& def) const {
  auto it = values_.find(name);
  return it == values_.end() ? def : it->second.back();
}

std::vector<std::string> Flags::GetAll(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>() : it->second;
}

Status Flags::Require(const std::string& name, std::string* value) const {
  auto it = values_.find(name);
  if (it == values_.end()) return Status::InvalidArgument("missing required option --" + name);
  *value = it->second.back();
  return Status::OK();
}

Status Flags::GetInt(const std::string& name, long long def, long long lo, long long hi,
                     long long* out) const {
  auto it = values_.find(name);
  if (it == values_.end()) {
    *out = def;
    return Status::OK();
  }
  const std::string& v = it->second.back();
  errno = 0;
  char* end = nullptr;
  long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno == ERANGE) {
    return Status::InvalidArgument("--" + name + ": '" + v + "' is not an integer");
  }
  if (x < lo || x > hi) {
    return Status::InvalidArgument("--" + name + ": " + v + " is out of range [" +
                                   std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  *out = x;
  return Status::OK();
}

Status Flags::GetDouble(const std::string& name, double def, double* out) const {
  auto it = values_.find(name);
  if (it == values_.end()) {
    *out = def;
    return Status::OK();
  }
  const std::string& v = it->second.back();
  errno = 0;
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(x)) {
    return Status::InvalidArgument("--" + name + ": '" + v + "' is not a finite number");
  }
  *out = x;
  return Status::OK();
}

}  // namespace sieve::cli
