// Copyright 2026 The Sieve Authors.
//
// Backups of a store (FORMAT.md, "Backups"): RocksDB's BackupEngine copies RocksDB's files,
// from the store open in this process (RocksStore::Backup) or, beside another process that
// holds it, from a secondary instance (Store::BackupClosed); a restore rebuilds the commit
// ledger for the backup's moment before the new store takes its name.

#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/utilities/backup_engine.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "storage/format.h"
#include "storage/info_log.h"
#include "storage/ledger.h"
#include "storage/pinned_file_system.h"
#include "storage/rocks_store.h"
#include "storage/store.h"

namespace sieve {

namespace {

namespace fs = std::filesystem;
namespace fmt = ::sieve::format;

// Held by the one process that writes into a backup directory.
constexpr char kDestLockName[] = "SIEVE-BACKUP-LOCK";

std::string Trimmed(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// `path` made absolute, with symbolic links resolved as far as it exists.
std::string Resolved(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  if (ec) return Trimmed(path);
  fs::path c = fs::weakly_canonical(p, ec);
  return Trimmed((ec ? p.lexically_normal() : c).string());
}

// Whether `inner` is `outer` or lies inside it.
bool Inside(const std::string& inner, const std::string& outer) {
  const std::string a = Resolved(inner), b = Resolved(outer);
  return a == b || (a.size() > b.size() && a.compare(0, b.size(), b) == 0 && a[b.size()] == '/');
}

Status FromIo(const rocksdb::IOStatus& s, const std::string& context) {
  if (s.IsNoSpace()) {
    return Status::ResourceExhausted(context + ": no space left on the device (" + s.ToString() +
                                     ")");
  }
  return FromRocks(s, context);
}

Status CheckOptions(const BackupOptions& options, const std::string& store_path) {
  if (options.dest.empty()) return Status::InvalidArgument("backup: no destination directory");
  if (options.max_attempts < 1 || options.max_attempts > 100) {
    return Status::InvalidArgument("backup: max_attempts must be 1 to 100, not " +
                                   Num(options.max_attempts));
  }
  if (Inside(options.dest, store_path) || Inside(store_path, options.dest)) {
    return Status::InvalidArgument("backup: the destination '" + options.dest +
                                   "' must lie outside the store '" + store_path +
                                   "' (and not contain it)");
  }
  return Status::OK();
}

// The lock of a backup directory, released when destroyed.
class DestLock {
 public:
  ~DestLock() {
    if (lock_ != nullptr) (void)env_->UnlockFile(lock_);
  }
  Status Acquire(rocksdb::Env* env, const std::string& dest) {
    std::error_code ec;
    fs::create_directories(dest, ec);
    if (ec) {
      return Status::IOError("backup: cannot create the destination '" + dest +
                             "': " + ec.message());
    }
    env_ = env;
    rocksdb::Status rs = env->LockFile(dest + "/" + kDestLockName, &lock_);
    if (!rs.ok()) {
      lock_ = nullptr;
      return Status::IOError("backup: another backup is writing into '" + dest + "' (" +
                             rs.ToString() + ")");
    }
    return Status::OK();
  }

 private:
  rocksdb::Env* env_ = nullptr;
  rocksdb::FileLock* lock_ = nullptr;
};

// A BackupEngine and the (silent) info log it writes to.
struct Engine {
  std::shared_ptr<rocksdb::Logger> log = NewInfoLog("");
  std::unique_ptr<rocksdb::BackupEngine> writer;
  std::unique_ptr<rocksdb::BackupEngineReadOnly> reader;
  rocksdb::BackupEngineReadOnlyBase* read() const {
    return writer != nullptr ? static_cast<rocksdb::BackupEngineReadOnlyBase*>(writer.get())
                             : reader.get();
  }
};

// `logs`: whether backups copy the write-ahead logs (restores ignore it).
rocksdb::BackupEngineOptions EngineOptions(const std::string& dest, rocksdb::Env* env,
                                           rocksdb::Logger* log, bool logs) {
  // Absolute: a backup opened in place (name_for_open) is named from this path.
  rocksdb::BackupEngineOptions o(Resolved(dest), env);
  o.share_table_files = true;
  o.share_files_with_checksum = true;
  o.sync = true;
  o.info_log = log;
  o.max_background_operations = 2;
  o.backup_log_files = logs;
  return o;
}

Status OpenWriter(rocksdb::Env* env, const std::string& dest, bool logs, Engine* engine) {
  engine->writer.reset();
  rocksdb::BackupEngine* raw = nullptr;
  rocksdb::IOStatus s =
      rocksdb::BackupEngine::Open(EngineOptions(dest, env, engine->log.get(), logs), env, &raw);
  if (!s.ok()) return FromIo(s, "backup: opening the backup directory '" + dest + "'");
  engine->writer.reset(raw);
  return Status::OK();
}

Status OpenReader(rocksdb::Env* env, const std::string& dest, Engine* engine) {
  if (!env->FileExists(dest + "/meta").ok()) {
    return Status::NotFound("no backups at '" + dest + "' (not a backup directory)");
  }
  rocksdb::BackupEngineReadOnly* raw = nullptr;
  rocksdb::IOStatus s = rocksdb::BackupEngineReadOnly::Open(
      EngineOptions(dest, env, engine->log.get(), /*logs=*/true), env, &raw);
  if (!s.ok()) return FromIo(s, "opening the backup directory '" + dest + "'");
  engine->reader.reset(raw);
  return Status::OK();
}

// The store's commit_seq as the RocksDB database `name` in `env` holds it (read-only; 0 for a
// store written before the ledger).
Status ReadCommitSeq(rocksdb::Env* env, const std::string& name, uint64_t* seq) {
  *seq = 0;
  RocksLayout layout = MakeRocksLayout(env, name, OpenMode::kReadOnly, StoreOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status rs =
      rocksdb::DB::OpenForReadOnly(layout.db, name, layout.families, &handles, &raw);
  if (!rs.ok()) return FromRocks(rs, "opening " + name);
  std::unique_ptr<rocksdb::DB> db(raw);
  std::string value;
  rs = db->Get(rocksdb::ReadOptions(), handles[1], fmt::kCommitSeqKey, &value);
  Status result = Status::OK();
  if (rs.ok()) {
    if (value.size() != 8) {
      result = Status::Corruption(name + ": commit_seq value is " + Num(value.size()) + " bytes");
    } else {
      *seq = fmt::GetFixed64(value.data());
    }
  } else if (!rs.IsNotFound()) {
    result = FromRocks(rs, "reading commit_seq of " + name);
  }
  for (auto* h : handles) (void)db->DestroyColumnFamilyHandle(h);
  (void)db->Close();
  return result;
}

// The numbers of the write-ahead logs among `names` (file names or relative paths).
std::set<uint64_t> WalNumbers(const std::vector<std::string>& names) {
  std::set<uint64_t> out;
  for (const std::string& name : names) {
    const size_t slash = name.find_last_of('/');
    const std::string base = slash == std::string::npos ? name : name.substr(slash + 1);
    if (base.size() <= 4 || base.compare(base.size() - 4, 4, ".log") != 0) continue;
    const std::string digits = base.substr(0, base.size() - 4);
    if (digits.find_first_not_of("0123456789") != std::string::npos) continue;
    out.insert(std::stoull(digits));
  }
  return out;
}

// Takes one backup of `db` into the engine and fills the copied/reused counts of *result.
// A failed attempt's files are garbage-collected at once.
Status CreateOne(Engine* engine, rocksdb::DB* db, const std::string& dest,
                 const std::string& metadata, rocksdb::BackupID* id, BackupResult* result) {
  std::vector<rocksdb::BackupInfo> before;
  engine->writer->GetBackupInfo(&before, /*include_file_details=*/true);
  std::set<std::string> had;
  for (const rocksdb::BackupInfo& info : before) {
    for (const rocksdb::BackupFileInfo& f : info.file_details) had.insert(f.relative_filename);
  }
  rocksdb::CreateBackupOptions cbo;
  cbo.flush_before_backup = false;
  rocksdb::IOStatus s = engine->writer->CreateNewBackupWithMetadata(cbo, db, metadata, id);
  if (!s.ok()) {
    (void)engine->writer->GarbageCollect();
    return FromIo(s, "backup into '" + dest + "'");
  }
  rocksdb::BackupInfo info;
  rocksdb::Status rs = engine->writer->GetBackupInfo(*id, &info, /*include_file_details=*/true);
  if (!rs.ok()) return FromRocks(rs, "backup into '" + dest + "': reading the new backup");
  result->backup_id = *id;
  result->timestamp = info.timestamp;
  result->files_copied = result->bytes_copied = result->files_reused = result->bytes_reused = 0;
  for (const rocksdb::BackupFileInfo& f : info.file_details) {
    if (had.count(f.relative_filename) != 0) {
      ++result->files_reused;
      result->bytes_reused += f.size;
    } else {
      ++result->files_copied;
      result->bytes_copied += f.size;
    }
  }
  return Status::OK();
}

// Opens backup `id` where it lies (no copy) as a read-only store, as a restore will open it
// (its MANIFEST, table files and write-ahead logs replayed), and checks its structure
// (RocksStore::CheckStructure): every shard's id, attribute and vector chunks are whole up to
// its next_ordinal. A backup that fails is deleted. Fills *commit_seq.
Status VetBackup(Engine* engine, rocksdb::BackupID id, uint64_t* commit_seq) {
  *commit_seq = 0;
  rocksdb::BackupInfo info;
  rocksdb::Status rs = engine->writer->GetBackupInfo(id, &info, /*include_file_details=*/true);
  Status s = FromRocks(rs, "reading backup " + Num(id));
  if (s.ok() && (info.name_for_open.empty() || info.env_for_open == nullptr)) {
    s = Status::Internal("backup " + Num(id) + " cannot be opened in place");
  }
  if (s.ok()) {
    StoreOptions so;
    so.read_only = true;
    so.without_ledger = true;
    so.env = info.env_for_open.get();
    std::unique_ptr<RocksStore> store;
    s = OpenRocksStore(so, info.name_for_open, OpenMode::kReadOnly, &store)
            .WithContext("backup " + Num(id) + " does not open");
    if (s.ok()) {
      std::vector<std::string> problems;
      s = store->CheckStructure(&problems).WithContext("backup " + Num(id) + " is not whole");
      *commit_seq = store->commit_seq();
    }
  }
  if (!s.ok()) (void)engine->writer->DeleteBackup(id);
  return s;
}

Status Purge(Engine* engine, const std::string& dest, uint32_t keep, BackupResult* result) {
  if (keep == 0) return Status::OK();
  std::vector<rocksdb::BackupInfo> before, after;
  engine->writer->GetBackupInfo(&before);
  rocksdb::IOStatus s = engine->writer->PurgeOldBackups(keep);
  if (!s.ok()) return FromIo(s, "backup: deleting old backups in '" + dest + "'");
  engine->writer->GetBackupInfo(&after);
  std::set<uint32_t> left;
  for (const auto& info : after) left.insert(info.backup_id);
  for (const auto& info : before) {
    if (left.count(info.backup_id) == 0) result->purged.push_back(info.backup_id);
  }
  return Status::OK();
}

std::string Metadata(const std::string& source, bool secondary) {
  nlohmann::json j = {{"sieve_backup", 1},
                      {"format_version", static_cast<int>(fmt::kFormatVersion)},
                      {"source", Resolved(source)},
                      {"secondary", secondary}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

constexpr char kRestoreInfix[] = ".restore-";

// Removes the directories `path`.restore-<time>-<pid> that restores into `path` left when they
// were killed (the process <pid> is gone); returns how many. A restore still running in
// another process keeps its directory.
uint32_t RemoveRestoreLeftovers(const std::string& path) {
  const fs::path p(path);
  const std::string prefix = p.filename().string() + kRestoreInfix;
  const fs::path parent = p.has_parent_path() ? p.parent_path() : fs::path(".");
  std::error_code ec;
  uint32_t removed = 0;
  for (auto it = fs::directory_iterator(parent, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const size_t dash = name.find_last_of('-');
    const std::string pid_text = name.substr(dash + 1);
    if (dash < prefix.size() || pid_text.empty() ||
        pid_text.find_first_not_of("0123456789") != std::string::npos || pid_text.size() > 9) {
      continue;
    }
    const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid != getpid() && (kill(pid, 0) == 0 || errno != ESRCH)) continue;
    std::error_code rm;
    fs::remove_all(it->path(), rm);
    if (!rm) ++removed;
  }
  return removed;
}

std::string Stamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm;
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

Status SyncDir(rocksdb::Env* env, const std::string& dir) {
  std::unique_ptr<rocksdb::Directory> d;
  rocksdb::Status rs = env->NewDirectory(dir, &d);
  if (rs.ok()) rs = d->Fsync();
  return FromRocks(rs, "syncing " + dir);
}

// The backup of a store another process holds, through a secondary instance.
Status BackupHeld(rocksdb::Env* env, const std::string& path, const BackupOptions& options,
                  BackupResult* result) {
  std::error_code ec;
  fs::create_directories(options.secondary_dir, ec);
  if (ec) {
    return Status::IOError("backup: cannot create the secondary directory '" +
                           options.secondary_dir + "': " + ec.message());
  }
  DestLock lock;
  SIEVE_RETURN_IF_ERROR(lock.Acquire(env, options.dest));
  Engine engine;

  // The instance reads through a file system that pins every table and blob file of the
  // version it caught up to (PinVersion below): the writer's compactions may delete one while
  // the backup copies it, and the pinned descriptor keeps it readable by its name.
  auto files = std::make_shared<PinnedFileSystem>(env->GetFileSystem());
  std::unique_ptr<rocksdb::Env> pinned_env(rocksdb::NewCompositeEnv(files));
  RocksLayout layout =
      MakeRocksLayout(pinned_env.get(), path, OpenMode::kReadOnly, StoreOptions());
  layout.db.max_open_files = -1;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status rs = rocksdb::DB::OpenAsSecondary(layout.db, path, options.secondary_dir,
                                                    layout.families, &handles, &raw);
  if (!rs.ok()) return FromRocks(rs, "backup: reading " + path + " beside its writer");
  std::unique_ptr<rocksdb::DB> db(raw);
  struct Closer {
    rocksdb::DB* db;
    std::vector<rocksdb::ColumnFamilyHandle*>* handles;
    ~Closer() {
      for (auto* h : *handles) (void)db->DestroyColumnFamilyHandle(h);
      (void)db->Close();
    }
  } closer{db.get(), &handles};

  result->secondary = true;
  const std::string metadata = Metadata(path, /*secondary=*/true);
  Status last;
  for (uint32_t attempt = 1; attempt <= options.max_attempts; ++attempt) {
    result->attempts = attempt;
    // Odd attempts copy the write-ahead logs too, the only place of the writer's commits since
    // its last flush; even ones take the tables alone, the writer's state at its last flush,
    // whole commits by RocksDB's atomic flush (FORMAT.md, "Backups"). An attempt with the logs
    // is overtaken by any commit whose append ingests a vector file between the catch-up and
    // the copy, which a busy writer makes likely: the attempt after it does not depend on that.
    const bool logs = attempt % 2 == 1;
    result->logs = logs;
    // BackupEngine reads the store's files through the Env it is opened with: the pinned one.
    SIEVE_RETURN_IF_ERROR(OpenWriter(pinned_env.get(), options.dest, logs, &engine));
    // Leftovers of an interrupted backup go before this one is written.
    if (attempt == 1) (void)engine.writer->GarbageCollect();
    // The logs present before the catch-up. The writer deletes logs oldest first, and only
    // after a MANIFEST record the instance may not have read: a backup that lacks one of them
    // could hold later commits without earlier ones, so it is discarded.
    std::vector<std::string> children;
    rs = env->GetChildren(path, &children);
    if (!rs.ok()) return FromRocks(rs, "backup: listing " + path);
    const std::set<uint64_t> logs_before = WalNumbers(children);
    rs = db->TryCatchUpWithPrimary();
    if (!rs.ok()) {
      last = FromRocks(rs, "backup: catching up with the writer of " + path);
      continue;
    }
    if (!PinVersion(db.get(), handles, files.get())) {
      last = Status::IOError("backup: the writer of " + path +
                             " deleted a file of the version caught up to before it was pinned");
      continue;
    }
    rocksdb::BackupID id = 0;
    last = CreateOne(&engine, db.get(), options.dest, metadata, &id, result);
    if (last.IsResourceExhausted()) return last;
    if (!last.ok()) continue;
    rocksdb::BackupInfo info;
    rs = engine.writer->GetBackupInfo(id, &info, /*include_file_details=*/true);
    std::vector<std::string> copied;
    for (const auto& f : info.file_details) copied.push_back(f.relative_filename);
    const std::set<uint64_t> logs_copied = WalNumbers(copied);
    // A log left out because it was empty (or obsolete) when listed, and still there, cost
    // nothing; one that is gone may have held commits the backup needs.
    std::vector<uint64_t> missing;
    for (uint64_t log : logs_before) {
      if (logs_copied.count(log) != 0) continue;
      char name[32];
      std::snprintf(name, sizeof(name), "/%06llu.log", static_cast<unsigned long long>(log));
      if (!env->FileExists(path + name).ok()) missing.push_back(log);
    }
    if (logs && (!rs.ok() || !missing.empty())) {
      last = Status::IOError("backup: the writer retired write-ahead log " +
                             (missing.empty() ? std::string("?") : Num(missing.front())) +
                             " while it was being copied");
      (void)engine.writer->DeleteBackup(id);
      continue;
    }
    // The instance's view is the MANIFEST as it was read at the catch-up, while the logs are
    // copied as they are when listed: a commit in between is in the copied log while the
    // vector file its append ingested before it is not in the view. Such a backup does not
    // pass the check, and is taken again.
    last = VetBackup(&engine, id, &result->commit_seq);
    if (!last.ok()) continue;
    return Purge(&engine, options.dest, options.keep, result);
  }
  return last.WithContext("backup of " + path + " beside its writer failed after " +
                          Num(options.max_attempts) + " attempts");
}

}  // namespace

Status RocksStore::Backup(const BackupOptions& options, BackupResult* result) {
  *result = BackupResult();
  return Guarded("backup", [&]() -> Status {
    SIEVE_RETURN_IF_ERROR(
        RefuseIfReadOnly("backup (`sieve backup` reads a store that another process has open)"));
    SIEVE_RETURN_IF_ERROR(CheckOptions(options, path_));
    DestLock lock;
    SIEVE_RETURN_IF_ERROR(lock.Acquire(base_env_, options.dest));
    Engine engine;
    const std::string metadata = Metadata(path_, /*secondary=*/false);
    Status last;
    for (uint32_t attempt = 1; attempt <= options.max_attempts; ++attempt) {
      result->attempts = attempt;
      // Every family's memtable into table files at once (RocksDB's atomic flush, under its
      // write thread): the tables then hold every commit acknowledged so far, and whole
      // commits only, whatever commits meanwhile. The backup takes the tables without the
      // write-ahead logs, so a commit after the flush is absent from it whole, with nothing
      // to pause. (RocksDB's own flush_before_backup picks the families to flush before it
      // enters the write thread, so a commit in between could be flushed in one family and
      // not in another.) Should the flush fail (a full disk), the logs are copied instead.
      const bool flushed = Flush().ok();
      result->logs = !flushed;
      SIEVE_RETURN_IF_ERROR(OpenWriter(base_env_, options.dest, /*logs=*/!flushed, &engine));
      // Leftovers of an interrupted backup go before this one is written.
      if (attempt == 1) (void)engine.writer->GarbageCollect();
      rocksdb::BackupID id = 0;
      last = WithDb("backup", [&] {
        return CreateOne(&engine, db_.get(), options.dest, metadata, &id, result);
      });
      if (last.IsResourceExhausted()) return last;
      if (!last.ok()) continue;
      last = VetBackup(&engine, id, &result->commit_seq);
      if (!last.ok()) continue;
      return Purge(&engine, options.dest, options.keep, result);
    }
    if (options.max_attempts == 1) return last;
    return last.WithContext("backup of " + path_ + " failed after " + Num(options.max_attempts) +
                            " attempts");
  });
}

Status Store::BackupClosed(const StoreOptions& options, const std::string& path,
                           const BackupOptions& backup, BackupResult* result) {
  *result = BackupResult();
  return Guarded("backup", [&]() -> Status {
    rocksdb::Env* env =
        options.env != nullptr ? static_cast<rocksdb::Env*>(options.env) : rocksdb::Env::Default();
    if (!env->FileExists(path + "/CURRENT").ok()) {
      return Status::NotFound("no Sieve database at '" + path + "'");
    }
    SIEVE_RETURN_IF_ERROR(CheckOptions(backup, path));
    if (!backup.secondary_dir.empty() &&
        (Inside(backup.secondary_dir, path) || Inside(path, backup.secondary_dir))) {
      return Status::InvalidArgument("backup: the secondary directory '" + backup.secondary_dir +
                                     "' must lie outside the store '" + path + "'");
    }
    StoreOptions so = options;
    so.create_if_missing = false;
    so.read_only = false;
    std::unique_ptr<Store> store;
    Status s = Store::Open(so, path, &store);
    if (s.ok()) return store->Backup(backup, result);
    if (!s.IsIOError() || s.message().find("in use by another process") == std::string::npos) {
      return s;
    }
    if (backup.secondary_dir.empty()) {
      return s.WithContext("backup (no secondary directory to read it beside its writer)");
    }
    return BackupHeld(env, path, backup, result);
  });
}

Status Store::RestoreBackup(const StoreOptions& options, const std::string& dest,
                            uint32_t backup_id, const std::string& path_in, RestoreResult* result) {
  *result = RestoreResult();
  return Guarded("restore", [&]() -> Status {
    rocksdb::Env* env =
        options.env != nullptr ? static_cast<rocksdb::Env*>(options.env) : rocksdb::Env::Default();
    const std::string path = Trimmed(path_in);
    if (path.empty()) return Status::InvalidArgument("restore: no database path");
    std::error_code ec;
    const bool exists = fs::exists(path, ec);
    if (exists && (!fs::is_directory(path, ec) || !fs::is_empty(path, ec))) {
      return Status::InvalidArgument("restore: '" + path +
                                     "' exists and is not an empty directory; a restore creates "
                                     "a new store (choose a new path, or remove it first)");
    }
    Engine engine;
    SIEVE_RETURN_IF_ERROR(OpenReader(env, dest, &engine));
    rocksdb::BackupInfo info;
    if (backup_id == 0) {
      rocksdb::Status rs = engine.reader->GetLatestBackupInfo(&info, true);
      if (!rs.ok()) return Status::NotFound("restore: no backup in '" + dest + "'");
    } else {
      rocksdb::Status rs = engine.reader->GetBackupInfo(backup_id, &info, true);
      if (!rs.ok()) {
        std::vector<rocksdb::BackupInfo> all;
        engine.reader->GetBackupInfo(&all);
        std::string ids;
        for (const auto& i : all) ids += (ids.empty() ? "" : ", ") + Num(i.backup_id);
        return Status::NotFound("restore: no backup " + Num(backup_id) + " in '" + dest +
                                "' (it holds " + (ids.empty() ? std::string("none") : ids) + ")");
      }
    }
    result->leftovers_removed = RemoveRestoreLeftovers(path);
    const std::string tmp = path + kRestoreInfix + Stamp() + "-" + Num(getpid());
    auto fail = [&](Status s) {
      // RestoreDBFromBackup returns at the first file that fails while the engine's threads
      // may still be copying the next ones into tmp: the engine's destructor waits for them.
      engine.reader.reset();
      fs::remove_all(tmp, ec);
      if (fs::exists(tmp, ec)) {
        s = s.WithContext("restore: could not remove " + tmp + " (remove it by hand)");
      }
      return s;
    };
    rocksdb::IOStatus io =
        engine.reader->RestoreDBFromBackup(rocksdb::RestoreOptions(), info.backup_id, tmp, tmp);
    if (!io.ok()) {
      return fail(FromIo(
          io, "restore of backup " + Num(info.backup_id) + " from '" + dest + "' into " + tmp));
    }
    // The ledger vouches for every commit the restored files hold: it starts at their
    // commit_seq (FORMAT.md, "Backups").
    uint64_t seq = 0;
    Status s = ReadCommitSeq(env, tmp, &seq);
    std::unique_ptr<Ledger> ledger;
    if (s.ok()) s = Ledger::Create(env, tmp, seq, &ledger);
    ledger.reset();
    if (s.ok()) {
      StoreOptions so = options;
      so.create_if_missing = false;
      so.read_only = false;
      std::unique_ptr<Store> store;
      s = Store::Open(so, tmp, &store);
      if (s.ok()) s = store->Flush();
    }
    if (!s.ok()) return fail(s.WithContext("restore: the restored store " + tmp));
    if (exists) fs::remove(path, ec);
    rocksdb::Status rs = env->RenameFile(tmp, path);
    if (!rs.ok()) return fail(FromRocks(rs, "restore: renaming " + tmp + " to " + path));
    const size_t slash = path.find_last_of('/');
    SIEVE_RETURN_IF_ERROR(SyncDir(env, slash == std::string::npos ? "."
                                       : slash == 0               ? "/"
                                                                  : path.substr(0, slash)));
    result->backup_id = info.backup_id;
    result->files = info.number_files;
    result->bytes = info.size;
    result->commit_seq = seq;
    return Status::OK();
  });
}

namespace {

Status List(Engine* engine, const std::string& dest, BackupListing* listing) {
  std::vector<rocksdb::BackupInfo> infos;
  engine->read()->GetBackupInfo(&infos, /*include_file_details=*/true);
  std::set<std::string> referenced;
  for (const auto& info : infos) {
    BackupEntry e;
    e.id = info.backup_id;
    e.timestamp = info.timestamp;
    e.bytes = info.size;
    e.files = info.number_files;
    listing->backups.push_back(e);
    for (const auto& f : info.file_details) referenced.insert(f.relative_filename);
  }
  std::vector<rocksdb::BackupID> corrupt;
  engine->read()->GetCorruptedBackups(&corrupt);
  std::set<std::string> corrupt_private;
  for (rocksdb::BackupID id : corrupt) {
    listing->corrupt.push_back(id);
    corrupt_private.insert("private/" + Num(id));
  }
  std::error_code ec;
  const fs::path root(dest);
  for (const char* sub : {"private", "shared", "shared_checksum", "meta"}) {
    if (!fs::is_directory(root / sub, ec)) continue;
    for (auto it = fs::recursive_directory_iterator(root / sub, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      const std::string rel = fs::relative(it->path(), root, ec).generic_string();
      if (rel.rfind("meta/", 0) == 0) {
        // meta/<id> describes a backup; anything else there is an unfinished description.
        const std::string name = rel.substr(5);
        if (name.find_first_not_of("0123456789") == std::string::npos) continue;
      } else if (referenced.count(rel) != 0) {
        continue;
      } else if (rel.rfind("private/", 0) == 0 &&
                 corrupt_private.count(rel.substr(0, rel.find('/', 8))) != 0) {
        continue;
      }
      ++listing->leftover_files;
      listing->leftover_bytes += it->file_size(ec);
    }
  }
  (void)dest;
  return Status::OK();
}

}  // namespace

Status Store::ListBackups(const std::string& dest, BackupListing* listing) {
  *listing = BackupListing();
  return Guarded("list backups", [&]() -> Status {
    Engine engine;
    SIEVE_RETURN_IF_ERROR(OpenReader(rocksdb::Env::Default(), dest, &engine));
    return List(&engine, dest, listing);
  });
}

Status Store::VerifyBackup(const std::string& dest, uint32_t backup_id, BackupListing* listing) {
  *listing = BackupListing();
  return Guarded("verify backup", [&]() -> Status {
    Engine engine;
    SIEVE_RETURN_IF_ERROR(OpenReader(rocksdb::Env::Default(), dest, &engine));
    BackupListing all;
    SIEVE_RETURN_IF_ERROR(List(&engine, dest, &all));
    listing->corrupt = all.corrupt;
    listing->leftover_files = all.leftover_files;
    listing->leftover_bytes = all.leftover_bytes;
    std::string first;
    for (BackupEntry e : all.backups) {
      if (backup_id != 0 && e.id != backup_id) continue;
      rocksdb::IOStatus s = engine.reader->VerifyBackup(e.id, /*verify_with_checksum=*/true);
      if (!s.ok()) {
        e.problem = s.ToString();
        if (first.empty()) first = "backup " + Num(e.id) + ": " + e.problem;
      }
      listing->backups.push_back(e);
    }
    if (backup_id != 0 && listing->backups.empty()) {
      bool is_corrupt =
          std::find(all.corrupt.begin(), all.corrupt.end(), backup_id) != all.corrupt.end();
      if (!is_corrupt) {
        return Status::NotFound("no backup " + Num(backup_id) + " in '" + dest + "'");
      }
    }
    for (uint32_t id : all.corrupt) {
      if (backup_id != 0 && id != backup_id) continue;
      if (first.empty()) {
        first = "backup " + Num(id) + ": its description (meta/" + Num(id) + ") is unreadable";
      }
    }
    if (!first.empty()) return Status::Corruption("backups in '" + dest + "': " + first);
    return Status::OK();
  });
}

}  // namespace sieve
