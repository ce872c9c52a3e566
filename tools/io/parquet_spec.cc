// Copyright 2026 The Sieve Authors.
//
// The "FILE.parquet:REST" form of the CLI's file arguments; built with or without Arrow.

#include <cctype>

#include "tools/io/parquet.h"

namespace sieve::io {

namespace {

const char* const kExtensions[] = {".parquet", ".pq"};

std::string Lower(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

bool IsParquetSpec(const std::string& spec) {
  std::string file, rest;
  SplitParquetSpec(spec, &file, &rest);
  const std::string lower = Lower(file);
  for (const char* ext : kExtensions) {
    if (lower.ends_with(ext)) return true;
  }
  return false;
}

void SplitParquetSpec(const std::string& spec, std::string* file, std::string* rest) {
  const std::string lower = Lower(spec);
  size_t best = std::string::npos;  // the ':' after the last extension
  for (const char* ext : kExtensions) {
    const std::string marker = std::string(ext) + ":";
    const size_t at = lower.rfind(marker);
    if (at != std::string::npos) {
      const size_t colon = at + marker.size() - 1;
      if (best == std::string::npos || colon > best) best = colon;
    }
  }
  if (best == std::string::npos) {
    *file = spec;
    rest->clear();
  } else {
    *file = spec.substr(0, best);
    *rest = spec.substr(best + 1);
  }
}

}  // namespace sieve::io
