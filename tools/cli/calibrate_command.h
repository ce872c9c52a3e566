// Copyright 2026 The Sieve Authors.
//
// `sieve calibrate` (times the paths on this device, fits the planner thresholds, stores them
// in the database) and `sieve bench` (the published method's sweep: every path at every point,
// the fastest as the oracle, the penalty of four planner rules). Both drive
// query/calibrate/; see README "Calibration and the planner".

#ifndef SIEVE_TOOLS_CLI_CALIBRATE_COMMAND_H_
#define SIEVE_TOOLS_CLI_CALIBRATE_COMMAND_H_

#include "tools/cli/commands.h"

namespace sieve::cli {

int Calibrate(const Args& args);
int Bench(const Args& args);

}  // namespace sieve::cli

#endif  // SIEVE_TOOLS_CLI_CALIBRATE_COMMAND_H_
