// Copyright 2026 The Sieve Authors.
//
// The `sieve` admin CLI's commands. Each takes its arguments (after the command name) and
// returns the process exit code: 0 on success, 1 on bad input or a failed operation (after
// printing one line to stderr), usage errors included.

#ifndef SIEVE_TOOLS_CLI_COMMANDS_H_
#define SIEVE_TOOLS_CLI_COMMANDS_H_

#include <string>
#include <vector>

namespace sieve::cli {

using Args = std::vector<std::string>;

int Create(const Args& args);
int Ingest(const Args& args);
int Query(const Args& args);
int Delete(const Args& args);
int Stats(const Args& args);
int Check(const Args& args);
int Repair(const Args& args);
int Collections(const Args& args);

}  // namespace sieve::cli

#endif  // SIEVE_TOOLS_CLI_COMMANDS_H_
