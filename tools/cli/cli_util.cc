// Copyright 2026 The Sieve Authors.

#include "tools/cli/cli_util.h"

#include <cstdio>

namespace sieve::cli {

int Fail(const char* cmd, const Status& s) {
  std::string msg = s.message().empty() ? s.ToString() : s.message();
  for (char& c : msg) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::fprintf(stderr, "sieve %s: %s\n", cmd, msg.c_str());
  return 1;
}

Status OpenDb(const std::string& path, OpenFor mode, std::unique_ptr<DB>* db) {
  Options o;
  o.create_if_missing = mode == OpenFor::kCreate;
  o.read_only = mode == OpenFor::kRead;
  return DB::Open(o, path, db);
}

}  // namespace sieve::cli
