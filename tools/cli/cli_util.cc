// Copyright 2026 The Sieve Authors.

#include "tools/cli/cli_util.h"

#include <cstdio>
#include <filesystem>

namespace sieve::cli {

int Fail(const char* cmd, const Status& s) {
  std::string msg = s.message().empty() ? s.ToString() : s.message();
  for (char& c : msg) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::fprintf(stderr, "sieve %s: %s\n", cmd, msg.c_str());
  return 1;
}

Status OpenDb(const std::string& path, bool create, std::unique_ptr<DB>* db) {
  // Checked here so that a mistyped path is named plainly and no directory is left behind.
  std::error_code ec;
  if (!create && !std::filesystem::exists(std::filesystem::path(path) / "CURRENT", ec)) {
    return Status::NotFound("no Sieve database at '" + path + "'");
  }
  Options o;
  o.create_if_missing = create;
  return DB::Open(o, path, db);
}

}  // namespace sieve::cli
