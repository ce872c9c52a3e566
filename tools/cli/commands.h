// Copyright 2026 The Sieve Authors.
//
// The `sieve` admin CLI's commands. Each takes its arguments (after the command name) and
// returns the process exit code: 0 on success, 1 on bad input or a failed operation (after
// printing one line to stderr), usage errors included.

#ifndef SIEVE_TOOLS_CLI_COMMANDS_H_
#define SIEVE_TOOLS_CLI_COMMANDS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sieve/status.h"

namespace sieve::cli {

using Args = std::vector<std::string>;

// A whole decimal integer as an id; InvalidArgument quoting the text otherwise.
Status ParseId(const std::string& text, int64_t* id);

class Flags;
// The ids of --ids FILE (.npy 1-D integers, or text with one id per line) or of every --id N
// (`--id 1 2 3` and `--id 1 --id 2` alike): how get, update and delete take ids.
Status ReadIds(const Flags& flags, std::vector<int64_t>* ids);

int Create(const Args& args);
int Ingest(const Args& args);
int Query(const Args& args);
int Delete(const Args& args);
int Stats(const Args& args);
int Check(const Args& args);
int Repair(const Args& args);
int Collections(const Args& args);
// tools/cli/row_commands.cc
int Get(const Args& args);
int Count(const Args& args);
int Export(const Args& args);
int Update(const Args& args);
int Drop(const Args& args);
int Compact(const Args& args);
// tools/cli/schema_commands.cc
int Alter(const Args& args);
int Rename(const Args& args);
int Alias(const Args& args);
int Aliases(const Args& args);
// tools/cli/backup_commands.cc
int Backup(const Args& args);
int Restore(const Args& args);
int VerifyBackup(const Args& args);
int Backups(const Args& args);
// tools/cli/analyze_command.cc
int Analyze(const Args& args);

}  // namespace sieve::cli

#endif  // SIEVE_TOOLS_CLI_COMMANDS_H_
