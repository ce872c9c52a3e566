// Copyright 2026 The Sieve Authors.
//
// `sieve`: the admin CLI. See docs/cli.md and `sieve --help`.

#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "sieve/version.h"
#include "tools/bench/bench_command.h"
#include "tools/cli/calibrate_command.h"
#include "tools/cli/commands.h"
#include "tools/cli/serve_command.h"

namespace {

const char kUsage[] =
    "usage: sieve COMMAND DB [options]   (sieve COMMAND --help for each command's options)\n"
    "       sieve --version\n"
    "\n"
    "commands:\n"
    "  create       create a collection\n"
    "  ingest       add (or --upsert) rows: .npy/.fvecs/HDF5 vectors, .jsonl/.csv attributes\n"
    "  query        exact filtered k-nearest-neighbour search; JSON lines on stdout\n"
    "  delete       delete rows by id or by filter\n"
    "  get          rows by id, with their attributes (and vectors)\n"
    "  count        the exact number of rows a filter passes\n"
    "  export       every row a filter passes, in id order, as JSONL, CSV or .npy\n"
    "  update       set attributes of rows chosen by id or filter\n"
    "  drop         remove a collection and its files\n"
    "  compact      reclaim the space of deleted rows\n"
    "  alter        add, drop or rename an attribute (vectors are not rewritten)\n"
    "  rename       rename a collection\n"
    "  alias        point a name at a collection (or switch or drop it)\n"
    "  aliases      list the aliases\n"
    "  stats        rows, dim, metric and schema of the collections\n"
    "  collections  list the collections\n"
    "  check        verify every invariant of the store and every byte of its files\n"
    "  repair       salvage a damaged store, reporting exactly what was lost\n"
    "  backup       point-in-time, incremental backup, also of a store a server has open\n"
    "  restore      create a store from a backup\n"
    "  verify-backup  check every byte of a backup directory's backups against its checksums\n"
    "  backups      list the backups of a backup directory\n"
    "  serve        the HTTP server (JSON API, batched queries) over the database\n"
    "  calibrate    time the paths on this device, fit and store the planner thresholds\n"
    "  bench        the path sweep: every path at every point, penalty of planner rules\n"
    "  analyze      the terms a text analyzer makes of a text (no database)\n";

}  // namespace

namespace {

int Dispatch(const std::string& cmd, const std::vector<std::string>& args) {
  using namespace sieve::cli;
  if (cmd == "create") return Create(args);
  if (cmd == "ingest") return Ingest(args);
  if (cmd == "query") return Query(args);
  if (cmd == "delete") return Delete(args);
  if (cmd == "get") return Get(args);
  if (cmd == "count") return Count(args);
  if (cmd == "export") return Export(args);
  if (cmd == "update") return Update(args);
  if (cmd == "drop") return Drop(args);
  if (cmd == "compact") return Compact(args);
  if (cmd == "alter") return Alter(args);
  if (cmd == "rename") return Rename(args);
  if (cmd == "alias") return Alias(args);
  if (cmd == "aliases") return Aliases(args);
  if (cmd == "stats") return Stats(args);
  if (cmd == "collections") return Collections(args);
  if (cmd == "check") return Check(args);
  if (cmd == "repair") return Repair(args);
  if (cmd == "backup") return Backup(args);
  if (cmd == "restore") return Restore(args);
  if (cmd == "verify-backup") return VerifyBackup(args);
  if (cmd == "backups") return Backups(args);
  if (cmd == "serve") return Serve(args);
  if (cmd == "calibrate") return Calibrate(args);
  if (cmd == "bench") return Bench(args);
  if (cmd == "analyze") return Analyze(args);
  std::fprintf(stderr, "sieve: unknown command '%s' (see sieve --help)\n", cmd.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
      std::strcmp(argv[1], "help") == 0) {
    // No command is bad input: exit 1, as the CLI contract says for every failure.
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 1 : 0;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    std::printf("sieve %s\n", SIEVE_VERSION);
    return 0;
  }
  // No exception may end the process: the engine returns Status codes, and anything thrown
  // by the CLI's own code (an allocation in a reader or the output) ends here, as one line.
  const char* cmd = argv[1];
  try {
    return Dispatch(cmd, std::vector<std::string>(argv + 2, argv + argc));
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "sieve %s: out of memory\n", cmd);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sieve %s: internal error: %s\n", cmd, e.what());
  } catch (...) {
    std::fprintf(stderr, "sieve %s: internal error: unknown exception\n", cmd);
  }
  return 1;
}
