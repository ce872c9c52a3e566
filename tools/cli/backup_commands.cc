// Copyright 2026 The Sieve Authors.
//
// `sieve backup`, `restore`, `verify-backup` and `backups` (docs/cli.md).

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

#include "sieve/db.h"
#include "tools/cli/cli_util.h"
#include "tools/cli/commands.h"
#include "tools/cli/flags.h"

namespace sieve::cli {

namespace {

const char kBackupUsage[] =
    "usage: sieve backup DB DEST [--keep N] [--max-attempts N]\n"
    "  Takes a point-in-time backup of DB into the backup directory DEST (created when\n"
    "  missing): whole commits only, while DB stays in use. Works while another process\n"
    "  (`sieve serve`, a long `sieve ingest`) has DB open for writing: DB is then read through\n"
    "  a RocksDB secondary instance in a temporary directory ($TMPDIR, else /tmp), and nothing\n"
    "  is written into DB's directory. Backups into the same DEST are incremental: files a\n"
    "  backup there already holds are not copied again.\n"
    "  --keep N: afterwards keep only the newest N backups in DEST (default: all)\n"
    "  --max-attempts N: how many times a backup that fails its vetting (opened in place,\n"
    "    every shard whole) or that a writer's file changes overtook is taken (default 8)\n"
    "  stdout: {\"backup_id\", \"timestamp\", \"files_copied\", \"bytes_copied\",\n"
    "          \"files_reused\", \"bytes_reused\", \"commit_seq\", \"purged\": [...],\n"
    "          \"attempts\", \"secondary\", \"logs\"}\n";

const char kRestoreUsage[] =
    "usage: sieve restore DEST DB [--backup N]\n"
    "  Creates the store DB from backup N of DEST (default: the newest). DB must not exist (or\n"
    "  be an empty directory). The backup is restored beside DB (DB.restore-<time>-<pid>),\n"
    "  every file's checksum verified, and renamed to DB only when complete.\n"
    "  stdout: {\"backup_id\", \"files\", \"bytes\", \"commit_seq\"}\n";

const char kVerifyUsage[] =
    "usage: sieve verify-backup DEST [--backup N]\n"
    "  Reads every file of every backup in DEST (or of backup N) and checks its size and\n"
    "  checksum. Exit 0 when all match, 1 otherwise.\n"
    "  stdout: one line per backup {\"backup_id\", \"timestamp\", \"bytes\", \"files\"\n"
    "          [, \"problem\"]}, then {\"ok\", \"backups\", \"corrupt\": [...],\n"
    "          \"leftover_files\", \"leftover_bytes\"}\n"
    "  leftover_*: files an interrupted backup left behind (removed by the next backup)\n";

const char kBackupsUsage[] =
    "usage: sieve backups DEST\n"
    "  Lists the backups in DEST without reading their files.\n"
    "  stdout: one line per backup {\"backup_id\", \"timestamp\", \"bytes\", \"files\"}, then\n"
    "          {\"backups\", \"corrupt\": [...], \"leftover_files\", \"leftover_bytes\"}\n";

// The second positional argument, or a usage error.
int SecondPath(const char* cmd, const Flags& flags, const char* what, std::string* out) {
  if (flags.positional().size() < 2) {
    std::fprintf(stderr, "sieve %s: missing %s (see sieve %s --help)\n", cmd, what, cmd);
    return 1;
  }
  *out = flags.positional()[1];
  return -1;
}

// A fresh private directory for a secondary instance, under $TMPDIR (else /tmp).
Status MakeScratchDir(std::string* dir) {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") +
                        "/sieve-backup-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    return Status::IOError("cannot create a temporary directory " + pattern);
  }
  *dir = pattern;
  return Status::OK();
}

void PrintListing(const BackupListing& listing, bool verified) {
  std::string out;
  for (const BackupEntry& e : listing.backups) out += e.ToJson() + "\n";
  std::string summary = listing.ToJson();
  if (verified) {
    bool ok = listing.corrupt.empty();
    for (const BackupEntry& e : listing.backups) ok = ok && e.problem.empty();
    summary = std::string("{\"ok\": ") + (ok ? "true" : "false") + ", " + summary.substr(1);
  }
  out += summary + "\n";
  std::fputs(out.c_str(), stdout);
  std::fflush(stdout);
}

}  // namespace

int Backup(const Args& args) {
  Flags flags({"keep", "max-attempts"}, {});
  flags.set_max_positional(2);
  std::string path, dest;
  if (int rc = ParseFlags("backup", kBackupUsage, args, &flags, &path); rc >= 0) return rc;
  if (int rc = SecondPath("backup", flags, "the backup directory DEST", &dest); rc >= 0) {
    return rc;
  }
  long long keep = 0, attempts = 8;
  Status s = flags.GetInt("keep", 0, 1, 1000000, &keep);
  if (s.ok()) s = flags.GetInt("max-attempts", 8, 1, 100, &attempts);
  if (!s.ok()) return Fail("backup", s);
  BackupOptions options;
  options.dest = dest;
  options.keep = static_cast<uint32_t>(keep);
  options.max_attempts = static_cast<uint32_t>(attempts);
  s = MakeScratchDir(&options.secondary_dir);
  if (!s.ok()) return Fail("backup", s);
  BackupResult result;
  s = DB::BackupStore(path, options, &result);
  std::error_code ec;
  std::filesystem::remove_all(options.secondary_dir, ec);
  if (!s.ok()) return Fail("backup", s);
  std::printf("%s\n", result.ToJson().c_str());
  return 0;
}

int Restore(const Args& args) {
  Flags flags({"backup"}, {});
  flags.set_max_positional(2);
  std::string dest, path;
  if (int rc = ParseFlags("restore", kRestoreUsage, args, &flags, &dest); rc >= 0) return rc;
  if (int rc = SecondPath("restore", flags, "the new database path DB", &path); rc >= 0) {
    return rc;
  }
  long long id = 0;
  Status s = flags.GetInt("backup", 0, 1, 0xffffffffLL, &id);
  if (!s.ok()) return Fail("restore", s);
  RestoreResult result;
  s = DB::RestoreBackup(dest, static_cast<uint32_t>(id), path, &result);
  if (!s.ok()) return Fail("restore", s);
  std::printf("%s\n", result.ToJson().c_str());
  return 0;
}

int VerifyBackup(const Args& args) {
  Flags flags({"backup"}, {});
  std::string dest;
  if (int rc = ParseFlags("verify-backup", kVerifyUsage, args, &flags, &dest); rc >= 0) {
    return rc;
  }
  long long id = 0;
  Status s = flags.GetInt("backup", 0, 1, 0xffffffffLL, &id);
  if (!s.ok()) return Fail("verify-backup", s);
  BackupListing listing;
  s = DB::VerifyBackup(dest, static_cast<uint32_t>(id), &listing);
  if (s.ok() || s.IsCorruption()) PrintListing(listing, /*verified=*/true);
  if (!s.ok()) return Fail("verify-backup", s);
  return 0;
}

int Backups(const Args& args) {
  Flags flags({}, {});
  std::string dest;
  if (int rc = ParseFlags("backups", kBackupsUsage, args, &flags, &dest); rc >= 0) return rc;
  BackupListing listing;
  Status s = DB::ListBackups(dest, &listing);
  if (!s.ok()) return Fail("backups", s);
  PrintListing(listing, /*verified=*/false);
  return 0;
}

}  // namespace sieve::cli
