// Copyright 2026 The Sieve Authors.
//
// `sieve bench`: the published method's sweep (every path at every point, the fastest as the
// oracle, the penalty of four planner rules); docs/planner.md "sieve bench".

#ifndef SIEVE_TOOLS_BENCH_BENCH_COMMAND_H_
#define SIEVE_TOOLS_BENCH_BENCH_COMMAND_H_

#include "tools/cli/commands.h"

namespace sieve::cli {

int Bench(const Args& args);

}  // namespace sieve::cli

#endif  // SIEVE_TOOLS_BENCH_BENCH_COMMAND_H_
