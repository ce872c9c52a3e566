// Copyright 2026 The Sieve Authors.
//
// Opening a RocksStore (storage/rocks_store.h): the Env that leaves a failed write's recovery
// to the next write, the vector files a crash left behind, the ingested vector file RocksDB
// 7.8 may lose on a failed MANIFEST sync (put back at open), the open's own messages, the
// read-only open that holds one version beside a writer (pinned files, tried again while the
// writer moves the MANIFEST or the logs), and Store::Open.
//
// Why not RocksDB's secondary instance (DB::OpenAsSecondary), which is built for reading beside
// a primary: in 7.8 it replays the MANIFEST in point-in-time mode, and a blob file that was
// added and later deleted (a compaction dropped every reference to it) counts as missing for
// good, so the vectors family stops at the version before that blob file and its later chunks
// are not seen at all (a sound store then reads as "vectors chunks end at ordinal 0").

#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/metadata.h>
#include <rocksdb/options.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "storage/format.h"
#include "storage/pinned_file_system.h"
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
  explicit ManualResumeEnv(std::unique_ptr<rocksdb::Env> base)
      : rocksdb::EnvWrapper(std::move(base)) {}
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

// The files of the store directory with their sizes, but for the info logs (which a writer
// appends to all the time): equal before and after an open that failed means nothing moved, so
// the failure is the store's own.
using DirListing = std::vector<std::pair<std::string, uint64_t>>;
DirListing ListFiles(rocksdb::Env* env, const std::string& path) {
  std::vector<std::string> children;
  DirListing files;
  if (!env->GetChildren(path, &children).ok()) return files;
  for (std::string& name : children) {
    if (name == "." || name == ".." || name.rfind("LOG", 0) == 0) continue;
    uint64_t size = 0;
    if (!env->GetFileSize(path + "/" + name, &size).ok()) size = ~uint64_t{0};
    files.emplace_back(std::move(name), size);
  }
  std::sort(files.begin(), files.end());
  return files;
}

// What RocksDB reads a version from: the MANIFEST (name and size) and the write-ahead logs
// (names; they only grow, by commits whose files the MANIFEST already lists).
DirListing VersionFiles(const DirListing& files) {
  DirListing version;
  for (const auto& [name, size] : files) {
    if (name == "CURRENT" || name.rfind("MANIFEST-", 0) == 0) {
      version.emplace_back(name, size);
    } else if (name.size() > 4 && name.compare(name.size() - 4, 4, ".log") == 0) {
      version.emplace_back(name, 0);
    }
  }
  return version;
}

// Attempts a read-only open makes beside a writer that keeps moving files (see OpenOnce).
constexpr int kMaxPinnedOpenAttempts = 20;

// One open of the store at `path`. With `pin` (a read-only open that holds one version,
// StoreOptions::read_only_fixed_view), *moved says whether the attempt should be made again:
// it failed while the writer changed the directory (a MANIFEST read while it was being written,
// a table file deleted between the MANIFEST's listing and its open), or the MANIFEST or the set
// of write-ahead logs changed during it (RocksDB reads the MANIFEST first and the logs after:
// a commit whose files were added to the MANIFEST meanwhile would be seen without them, and a
// flush meanwhile deletes a log whose commits the MANIFEST read does not hold yet), or a file
// of the version could not be pinned.
// Unless `last`, such an attempt returns non-OK; the last one keeps what it opened.
Status OpenOnce(const StoreOptions& options, const std::string& path, OpenMode mode,
                rocksdb::Env* base_env, bool pin, bool last, bool* moved,
                std::unique_ptr<RocksStore>* store) {
  *moved = false;
  std::shared_ptr<PinnedFileSystem> files;
  std::unique_ptr<rocksdb::Env> owned_env;
  if (pin) {
    files = std::make_shared<PinnedFileSystem>(base_env->GetFileSystem());
    owned_env = std::make_unique<ManualResumeEnv>(rocksdb::NewCompositeEnv(files));
  } else {
    owned_env = std::make_unique<ManualResumeEnv>(base_env);
  }
  rocksdb::Env* env = owned_env.get();
  const DirListing before = pin ? ListFiles(env, path) : DirListing();
  auto changed = [&] { return pin && ListFiles(env, path) != before; };
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
    *moved = changed();
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
  bool whole = true;
  if (pin) {
    whole = PinVersion(raw, handles, files.get()) &&
            VersionFiles(ListFiles(env, path)) == VersionFiles(before);
  }
  auto result = std::make_unique<RocksStore>(path, std::move(owned_env), base_env, mode,
                                             std::move(layout), std::unique_ptr<rocksdb::DB>(raw),
                                             std::move(handles), options.vector_file_min_bytes);
  if (!whole && !last) {
    *moved = true;
    return Status::IOError("the store changed while it was opened");
  }
  Status init = result->Init(ledger_status, ledger);
  if (!init.ok()) {
    *moved = changed();
    return init;
  }
  if (mode == OpenMode::kReadWrite) {
    // Vector files of an append that crashed or failed before its commit, and the key spaces
    // of compactions that never committed.
    RemoveVectorFileLeftovers(env, path);
    SIEVE_RETURN_IF_ERROR(result->RemoveAbandonedSpaces());
  }
  *store = std::move(result);
  return Status::OK();
}

}  // namespace

Status OpenRocksStore(const StoreOptions& options, const std::string& path, OpenMode mode,
                      std::unique_ptr<RocksStore>* store) {
  rocksdb::Env* base_env =
      options.env != nullptr ? static_cast<rocksdb::Env*>(options.env) : rocksdb::Env::Default();
  // RocksDB would create the directory (and a LOCK and LOG) before failing: a mistyped path
  // must leave nothing behind.
  if ((!options.create_if_missing || mode != OpenMode::kReadWrite) &&
      !base_env->FileExists(path + "/CURRENT").ok()) {
    return Status::NotFound("no Sieve database at '" + path + "'");
  }
  const bool pin = mode == OpenMode::kReadOnly && options.read_only_fixed_view;
  for (int attempt = 1;; ++attempt) {
    const bool last = !pin || attempt == kMaxPinnedOpenAttempts;
    bool moved = false;
    Status s = OpenOnce(options, path, mode, base_env, pin, last, &moved, store);
    if (s.ok() || !moved || last) return s;
    // A writer's flush or compaction that moved the files is usually over by the next try.
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(2 * attempt, 20)));
  }
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
