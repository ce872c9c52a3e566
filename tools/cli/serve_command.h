// Copyright 2026 The Sieve Authors.
//
// `sieve serve DB --listen HOST:PORT ...`: the HTTP server (tools/server/) over one database.

#ifndef SIEVE_TOOLS_CLI_SERVE_COMMAND_H_
#define SIEVE_TOOLS_CLI_SERVE_COMMAND_H_

#include "tools/cli/commands.h"

namespace sieve::cli {

// Serves until SIGTERM/SIGINT, then drains, closes the database and returns 0. Prints
// {"listening": "HOST:PORT"} on stdout once bound (PORT is the real one when 0 was asked).
int Serve(const Args& args);

}  // namespace sieve::cli

#endif  // SIEVE_TOOLS_CLI_SERVE_COMMAND_H_
