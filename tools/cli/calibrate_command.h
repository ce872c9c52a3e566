// Copyright 2026 The Sieve Authors.
//
// `sieve calibrate`: times the paths on this device, fits the planner thresholds and stores
// them in the database, through DB::Calibrate (or refits recorded points through
// DB::RefitCalibration); docs/planner.md "sieve calibrate". `sieve bench` is
// tools/bench/bench_command.h's.

#ifndef SIEVE_TOOLS_CLI_CALIBRATE_COMMAND_H_
#define SIEVE_TOOLS_CLI_CALIBRATE_COMMAND_H_

#include "tools/cli/commands.h"

namespace sieve::cli {

int Calibrate(const Args& args);

}  // namespace sieve::cli

#endif  // SIEVE_TOOLS_CLI_CALIBRATE_COMMAND_H_
