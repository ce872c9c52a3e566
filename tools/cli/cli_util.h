// Copyright 2026 The Sieve Authors.
//
// What every `sieve` command shares: the one-line failure report and opening an existing
// database.

#ifndef SIEVE_TOOLS_CLI_CLI_UTIL_H_
#define SIEVE_TOOLS_CLI_CLI_UTIL_H_

#include <memory>
#include <string>

#include "sieve/db.h"
#include "sieve/status.h"

namespace sieve::cli {

// Prints "sieve CMD: MESSAGE" as one line of stderr (newlines in the message become spaces)
// and returns 1, the exit code of bad input or a failed operation.
int Fail(const char* cmd, const Status& s);

// How a command opens its database.
enum class OpenFor {
  kRead,    // read-only: nothing is written (read-only copies, full disks, a running server)
  kWrite,   // an existing database, for writing
  kCreate,  // for writing, created when missing
};

// Opens the database at `path` (without kCreate, NotFound names a path that holds no
// database, and nothing is created there).
Status OpenDb(const std::string& path, OpenFor mode, std::unique_ptr<DB>* db);

}  // namespace sieve::cli

#endif  // SIEVE_TOOLS_CLI_CLI_UTIL_H_
