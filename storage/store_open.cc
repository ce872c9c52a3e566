// Copyright 2026 The Sieve Authors.
//
// Opening a RocksStore (storage/rocks_store.h): the Env that leaves a failed write's recovery
// to the next write, the vector files a crash left behind, the ingested vector file RocksDB
// 7.8 may lose on a failed MANIFEST sync (put back at open), the open's own messages, and
// Store::Open.

#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/options.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "storage/format.h"
#include "storage/rocks_store.h"
#include "storage/store.h"
#include "storage/wal_scan.h"

namespace sieve {

namespace fmt = ::sieve::format;

void RemoveVectorFileLeftovers(rocksdb::Env* env, const std::string& dir) {
  std::vector<std::string> children;
  if (!env->GetChildren(dir, &children).ok()) return;
  for (const std::string& name : children) {
    if (name.rfind(kVectorFilePrefix, 0) == 0) (void)env->DeleteFile(dir + "/" + name);
  }
}

// The table file a failed open names as missing ("…/000015.sst" or ".ldb"), or "".
std::string MissingTableFile(const std::string& dir, const rocksdb::Status& rs) {
  const std::string text = rs.ToString();
  if (text.find("No such file") == std::string::npos &&
      text.find("size mismatch") == std::string::npos) {
    return "";
  }
  for (const char* ext : {".ldb", ".sst"}) {
    for (size_t at = text.find(ext); at != std::string::npos; at = text.find(ext, at + 1)) {
      size_t begin = at;
      while (begin > 0 && text[begin - 1] >= '0' && text[begin - 1] <= '9') --begin;
      if (begin == at || begin == 0 || text[begin - 1] != '/') continue;
      return dir + "/" + text.substr(begin, at - begin) + ".sst";
    }
  }
  return "";
}

// Puts back the link of an ingested vector file that RocksDB recorded in the MANIFEST and then
// deleted when the MANIFEST's sync failed (see IngestVectorFiles): one of the kept
// sieve-vectors-*.sst files is that file. True when a candidate was linked in.
bool RestoreIngestedFile(rocksdb::Env* env, const std::string& dir, const std::string& missing,
                         std::set<std::string>* tried) {
  std::vector<std::string> children;
  if (!env->GetChildren(dir, &children).ok()) return false;
  std::sort(children.begin(), children.end());
  for (const std::string& name : children) {
    if (name.rfind(kVectorFilePrefix, 0) != 0 || !tried->insert(name).second) continue;
    (void)env->DeleteFile(missing);
    if (env->LinkFile(dir + "/" + name, missing).ok()) return true;
  }
  (void)env->DeleteFile(missing);
  return false;
}

rocksdb::Status OpenWithRestore(const RocksLayout& layout, const std::string& path, OpenMode mode,
                                std::vector<rocksdb::ColumnFamilyHandle*>* handles,
                                rocksdb::DB** raw) {
  std::set<std::string> tried;
  while (true) {
    handles->clear();
    rocksdb::Status rs =
        mode == OpenMode::kReadWrite
            ? rocksdb::DB::Open(layout.db, path, layout.families, handles, raw)
            : rocksdb::DB::OpenForReadOnly(layout.db, path, layout.families, handles, raw);
    if (rs.ok() || mode != OpenMode::kReadWrite) return rs;
    const std::string missing = MissingTableFile(path, rs);
    if (missing.empty() || !RestoreIngestedFile(layout.db.env, path, missing, &tried)) return rs;
  }
}

namespace {

// The store's Env: the caller's, except that it reports no free-space figure. RocksDB then
// leaves a failed write's recovery to the next write (WriteSynced resumes the store, at once)
// instead of a background thread that retries every five seconds while writes answer Busy.
class ManualResumeEnv final : public rocksdb::EnvWrapper {
 public:
  explicit ManualResumeEnv(rocksdb::Env* base) : rocksdb::EnvWrapper(base) {}
  static const char* kClassName() { return "SieveManualResumeEnv"; }
  const char* Name() const override { return kClassName(); }
  rocksdb::Status GetFreeSpace(const std::string& path, uint64_t* diskfree) override {
    (void)path, (void)diskfree;
    return rocksdb::Status::NotSupported("free space is not reported to RocksDB");
  }
};

// Where a WAL is damaged, when RocksDB's own message (which names neither) is about one.
std::string DescribeOpenFailure(rocksdb::Env* env, const std::string& path,
                                const rocksdb::Status& rs) {
  std::string text = rs.ToString();
  WalDamage damage;
  if (rs.IsCorruption() && FindWalDamage(env, path, &damage)) {
    text = "the write-ahead log " + damage.file + " is damaged at byte " +
           std::to_string(damage.offset) + " (" + damage.what +
           "): commits after it cannot be replayed (" + text + "); run `sieve repair " + path +
           "` to salvage the readable ones";
  }
  return text;
}

}  // namespace

Status OpenRocksStore(const StoreOptions& options, const std::string& path, OpenMode mode,
                      std::unique_ptr<RocksStore>* store) {
  rocksdb::Env* base_env =
      options.env != nullptr ? static_cast<rocksdb::Env*>(options.env) : rocksdb::Env::Default();
  auto owned_env = std::make_unique<ManualResumeEnv>(base_env);
  rocksdb::Env* env = owned_env.get();
  // RocksDB would create the directory (and a LOCK and LOG) before failing: a mistyped path
  // must leave nothing behind.
  if ((!options.create_if_missing || mode != OpenMode::kReadWrite) &&
      !env->FileExists(path + "/CURRENT").ok()) {
    return Status::NotFound("no Sieve database at '" + path + "'");
  }
  // The ledger is read before the store: a writer elsewhere appends to it only after its
  // commit is in the WAL, so the store read next is never behind what was read here.
  LedgerContents ledger;
  if (options.without_ledger && mode != OpenMode::kReadOnly) {
    return Status::InvalidArgument("opening " + path + ": without a ledger, read-only only");
  }
  const Status ledger_status =
      options.without_ledger ? Status::OK() : Ledger::Read(env, path, &ledger);
  if (!ledger_status.ok() && !ledger_status.IsNotFound() && !ledger_status.IsCorruption()) {
    return ledger_status;
  }

  RocksLayout layout = MakeRocksLayout(env, path, mode, options);
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status rs = OpenWithRestore(layout, path, mode, &handles, &raw);
  if (!rs.ok()) {
    const std::string text = rs.ToString();
    // RocksDB's lock of a database this process has open says so ("lock hold by current
    // process"); another process's lock reads as the OS's error on the LOCK file.
    if (rs.IsIOError() && text.find("current process") != std::string::npos) {
      return Status::IOError("database at " + path +
                             " is in use: it is already open in this process; use the handle "
                             "already open, or close it before opening the database again");
    }
    if (rs.IsIOError() &&
        (text.find("lock") != std::string::npos || text.find("LOCK") != std::string::npos)) {
      return Status::IOError("database at " + path + " is in use by another process (" + text +
                             ")");
    }
    const std::string described = DescribeOpenFailure(env, path, rs);
    if (described != text) {
      return Status::Corruption("opening database at " + path + ": " + described);
    }
    return FromRocks(rs, "opening database at " + path);
  }
  auto result = std::make_unique<RocksStore>(path, std::move(owned_env), base_env, mode,
                                             std::move(layout), std::unique_ptr<rocksdb::DB>(raw),
                                             std::move(handles), options.vector_file_min_bytes);
  SIEVE_RETURN_IF_ERROR(result->Init(ledger_status, ledger));
  if (mode == OpenMode::kReadWrite) {
    // Vector files of an append that crashed or failed before its commit, and the key spaces
    // of compactions that never committed.
    RemoveVectorFileLeftovers(env, path);
    SIEVE_RETURN_IF_ERROR(result->RemoveAbandonedSpaces());
  }
  *store = std::move(result);
  return Status::OK();
}

Status Store::Open(const StoreOptions& options, const std::string& path,
                   std::unique_ptr<Store>* store) {
  return Guarded("opening " + path, [&]() -> Status {
    std::unique_ptr<RocksStore> opened;
    SIEVE_RETURN_IF_ERROR(OpenRocksStore(
        options, path, options.read_only ? OpenMode::kReadOnly : OpenMode::kReadWrite, &opened));
    *store = std::move(opened);
    return Status::OK();
  });
}

}  // namespace sieve
