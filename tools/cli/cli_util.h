// Copyright 2026 The Sieve Authors.
//
// What every `sieve` command shares: the one-line failure report and opening an existing
// database.

#ifndef SIEVE_TOOLS_CLI_CLI_UTIL_H_
#define SIEVE_TOOLS_CLI_CLI_UTIL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sieve/db.h"
#include "sieve/status.h"

namespace sieve::cli {

// Prints "sieve CMD: MESSAGE" as one line of stderr (newlines in the message become spaces)
// and returns 1, the exit code of bad input or a failed operation.
int Fail(const char* cmd, const Status& s);

class Flags;

// "a,b,,c" -> {"a", "b", "c"}.
std::vector<std::string> SplitList(const std::string& s);
// The comma-separated numbers of --NAME, each in [lo, hi], into *out (left alone when the flag
// is absent). InvalidArgument naming the flag and the item otherwise, or when it is empty.
Status ParseNumberList(const Flags& flags, const std::string& name, double lo, double hi,
                       std::vector<double>* out);
// Parses a command's flags (the database path first) and handles --help: -1 to go on, else
// the exit code (0 after --help; 1 after a usage error, printed as one line).
int ParseFlags(const char* cmd, const char* usage, const std::vector<std::string>& args,
               Flags* flags, std::string* db_path, const char* more_usage = nullptr);

// How a command opens its database.
enum class OpenFor {
  kRead,    // read-only: nothing is written (read-only copies, full disks, a running server)
  kWrite,   // an existing database, for writing
  kCreate,  // for writing, created when missing
};

// Opens the database at `path` (without kCreate, NotFound names a path that holds no
// database, and nothing is created there). `memory_budget_bytes` is
// Options::memory_budget_bytes (0: the default); `base` gives the other engine options
// (devices, cpu_executors); its create/read-only fields are replaced by `mode`'s.
Status OpenDb(const std::string& path, OpenFor mode, std::unique_ptr<DB>* db,
              uint64_t memory_budget_bytes = 0, const Options& base = Options());

// Parses --devices: CUDA device numbers separated by commas ("0,1,2,3"; a number may repeat),
// or "all" (every device: an empty list). InvalidArgument naming `flag` otherwise.
Status ParseDevices(const std::string& flag, const std::string& text, std::vector<int>* devices);

// Parses a --max-memory value: "auto" (0: Options' default, DefaultMemoryBudget()) or a
// positive byte count, optionally with a binary suffix K, M, G or T (also KiB, MiB, GiB, TiB;
// any letter case): "512M", "2GiB". InvalidArgument naming `flag` otherwise.
Status ParseMemoryBudget(const std::string& flag, const std::string& text, uint64_t* bytes);

// The engine flags of the commands that search (query, serve): --devices, --cpu-executors,
// --device-memory and --first-use-calibration. kEngineFlags names them for Flags; their usage
// lines are kEngineFlagsUsage.
extern const char* const kEngineFlags[4];
extern const char kEngineFlagsUsage[];
// Sets `engine`'s devices, cpu_executors, device_memory_bytes and first_use_calibration.mode
// from those flags (their defaults where absent). InvalidArgument naming the flag otherwise.
Status ParseEngineFlags(const Flags& flags, Options* engine);

}  // namespace sieve::cli

#endif  // SIEVE_TOOLS_CLI_CLI_UTIL_H_
