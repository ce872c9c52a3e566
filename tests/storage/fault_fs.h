// Copyright 2026 The Sieve Authors.
//
// FaultFileSystem: a rocksdb::FileSystem over the real one that fails a chosen file operation
// the way disks fail — no space (ENOSPC), an I/O error (EIO), a short write (part of the data
// lands, then ENOSPC), or a failed sync — once, or from then on (a full disk stays full).
// Every write-side operation counts as one step: creating, reopening, renaming and linking
// files, appends, flushes, syncs, range syncs, preallocation, closes and directory syncs.
// Tests run a workload once to count its steps, then once per step with that step failing.
//
// Syncs that do not fail return at once without reaching the disk: the tests reopen stores in
// the same process (the page cache keeps what was written), so a real fsync would only cost time.
//
// Use through rocksdb::NewCompositeEnv(fs) as StoreOptions::env.

#ifndef SIEVE_TESTS_STORAGE_FAULT_FS_H_
#define SIEVE_TESTS_STORAGE_FAULT_FS_H_

#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

#include <atomic>
#include <memory>
#include <string>
#include <utility>

namespace sieve::test {

enum class Fault {
  kNoSpace,     // the operation fails with ENOSPC
  kIOError,     // the operation fails with EIO
  kShortWrite,  // an append writes half its bytes, then fails with ENOSPC; others as kNoSpace
  kSyncFails,   // only syncs fail (EIO); other operations go through
};

inline const char* FaultName(Fault f) {
  switch (f) {
    case Fault::kNoSpace: return "ENOSPC";
    case Fault::kIOError: return "EIO";
    case Fault::kShortWrite: return "short write";
    case Fault::kSyncFails: return "failed sync";
  }
  return "?";
}

class FaultFileSystem : public rocksdb::FileSystemWrapper {
 public:
  FaultFileSystem() : rocksdb::FileSystemWrapper(rocksdb::FileSystem::Default()) {}
  static const char* kClassName() { return "SieveFaultFileSystem"; }
  const char* Name() const override { return kClassName(); }

  // The `step`-th counted operation from now (0 = the next) fails with `fault`; with
  // `sticky`, every counted operation after it fails too, until Disarm.
  void Arm(Fault fault, int64_t step, bool sticky) {
    fault_ = fault;
    sticky_ = sticky;
    failing_.store(false);
    countdown_.store(step);
    armed_.store(true);
  }
  void Disarm() {
    armed_.store(false);
    failing_.store(false);
  }
  // Counted operations since construction (for sizing a sweep; syncs alone for kSyncFails)
  // and injected failures.
  int64_t steps() const { return steps_.load(); }
  int64_t sync_steps() const { return sync_steps_.load(); }
  int64_t failures() const { return failures_.load(); }

  // Whether the current operation fails; `sync` says whether it is a sync.
  bool ShouldFail(bool sync) {
    steps_.fetch_add(1);
    if (sync) sync_steps_.fetch_add(1);
    if (!armed_.load()) return false;
    if (fault_ == Fault::kSyncFails && !sync) return false;
    if (failing_.load()) {
      if (!sticky_) return false;
      failures_.fetch_add(1);
      return true;
    }
    if (countdown_.fetch_sub(1) > 0) return false;
    failing_.store(true);
    failures_.fetch_add(1);
    return true;
  }
  Fault fault() const { return fault_; }
  rocksdb::IOStatus Error() const {
    if (fault_ == Fault::kIOError || fault_ == Fault::kSyncFails) {
      return rocksdb::IOStatus::IOError("injected I/O error (EIO)");
    }
    return rocksdb::IOStatus::NoSpace("injected: no space left on device (ENOSPC)");
  }

  rocksdb::IOStatus NewWritableFile(const std::string& f, const rocksdb::FileOptions& o,
                                    std::unique_ptr<rocksdb::FSWritableFile>* r,
                                    rocksdb::IODebugContext* dbg) override {
    if (ShouldFail(false)) return Error();
    return Wrap(target()->NewWritableFile(f, o, r, dbg), r);
  }
  rocksdb::IOStatus ReopenWritableFile(const std::string& f, const rocksdb::FileOptions& o,
                                       std::unique_ptr<rocksdb::FSWritableFile>* r,
                                       rocksdb::IODebugContext* dbg) override {
    if (ShouldFail(false)) return Error();
    return Wrap(target()->ReopenWritableFile(f, o, r, dbg), r);
  }
  rocksdb::IOStatus ReuseWritableFile(const std::string& f, const std::string& old,
                                      const rocksdb::FileOptions& o,
                                      std::unique_ptr<rocksdb::FSWritableFile>* r,
                                      rocksdb::IODebugContext* dbg) override {
    if (ShouldFail(false)) return Error();
    return Wrap(target()->ReuseWritableFile(f, old, o, r, dbg), r);
  }
  rocksdb::IOStatus RenameFile(const std::string& s, const std::string& t,
                               const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
    if (ShouldFail(false)) return Error();
    return target()->RenameFile(s, t, o, dbg);
  }
  rocksdb::IOStatus LinkFile(const std::string& s, const std::string& t,
                             const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
    if (ShouldFail(false)) return Error();
    return target()->LinkFile(s, t, o, dbg);
  }
  rocksdb::IOStatus NewDirectory(const std::string& name, const rocksdb::IOOptions& o,
                                 std::unique_ptr<rocksdb::FSDirectory>* r,
                                 rocksdb::IODebugContext* dbg) override;
  // A disk that is out of space says so.
  rocksdb::IOStatus GetFreeSpace(const std::string& path, const rocksdb::IOOptions& o,
                                 uint64_t* free, rocksdb::IODebugContext* dbg) override {
    if (armed_.load() && failing_.load() && sticky_ &&
        (fault_ == Fault::kNoSpace || fault_ == Fault::kShortWrite)) {
      *free = 0;
      return rocksdb::IOStatus::OK();
    }
    return target()->GetFreeSpace(path, o, free, dbg);
  }

 private:
  rocksdb::IOStatus Wrap(rocksdb::IOStatus s, std::unique_ptr<rocksdb::FSWritableFile>* r);

  Fault fault_ = Fault::kNoSpace;
  bool sticky_ = false;
  std::atomic<bool> armed_{false};
  std::atomic<bool> failing_{false};
  std::atomic<int64_t> countdown_{0};
  std::atomic<int64_t> steps_{0};
  std::atomic<int64_t> sync_steps_{0};
  std::atomic<int64_t> failures_{0};
};

class FaultFile : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  FaultFile(std::unique_ptr<rocksdb::FSWritableFile> base, FaultFileSystem* fs)
      : rocksdb::FSWritableFileOwnerWrapper(std::move(base)), fs_(fs) {}

  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& o,
                           rocksdb::IODebugContext* dbg) override {
    if (fs_->ShouldFail(false)) return Short(data, o, dbg);
    return target()->Append(data, o, dbg);
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& o,
                           const rocksdb::DataVerificationInfo& info,
                           rocksdb::IODebugContext* dbg) override {
    if (fs_->ShouldFail(false)) return Short(data, o, dbg);
    return target()->Append(data, o, info, dbg);
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset,
                                     const rocksdb::IOOptions& o,
                                     rocksdb::IODebugContext* dbg) override {
    if (fs_->ShouldFail(false)) return fs_->Error();
    return target()->PositionedAppend(data, offset, o, dbg);
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset,
                                     const rocksdb::IOOptions& o,
                                     const rocksdb::DataVerificationInfo& info,
                                     rocksdb::IODebugContext* dbg) override {
    if (fs_->ShouldFail(false)) return fs_->Error();
    return target()->PositionedAppend(data, offset, o, info, dbg);
  }
  rocksdb::IOStatus Flush(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
    if (fs_->ShouldFail(false)) return fs_->Error();
    return target()->Flush(o, dbg);
  }
  rocksdb::IOStatus Sync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
    if (fs_->ShouldFail(true)) return fs_->Error();
    return rocksdb::IOStatus::OK();
  }
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
    if (fs_->ShouldFail(true)) return fs_->Error();
    return rocksdb::IOStatus::OK();
  }
  rocksdb::IOStatus RangeSync(uint64_t offset, uint64_t nbytes, const rocksdb::IOOptions& o,
                              rocksdb::IODebugContext* dbg) override {
    if (fs_->ShouldFail(true)) return fs_->Error();
    return rocksdb::IOStatus::OK();
  }
  rocksdb::IOStatus Allocate(uint64_t offset, uint64_t len, const rocksdb::IOOptions& o,
                             rocksdb::IODebugContext* dbg) override {
    if (fs_->ShouldFail(false)) return fs_->Error();
    return target()->Allocate(offset, len, o, dbg);
  }
  rocksdb::IOStatus Close(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
    // The descriptor is released either way, as close(2) does.
    rocksdb::IOStatus s = target()->Close(o, dbg);
    if (fs_->ShouldFail(false)) return fs_->Error();
    return s;
  }

 private:
  rocksdb::IOStatus Short(const rocksdb::Slice& data, const rocksdb::IOOptions& o,
                          rocksdb::IODebugContext* dbg) {
    if (fs_->fault() == Fault::kShortWrite && data.size() > 1) {
      (void)target()->Append(rocksdb::Slice(data.data(), data.size() / 2), o, dbg);
    }
    return fs_->Error();
  }

  FaultFileSystem* fs_;
};

class FaultDirectory : public rocksdb::FSDirectory {
 public:
  FaultDirectory(std::unique_ptr<rocksdb::FSDirectory> base, FaultFileSystem* fs)
      : base_(std::move(base)), fs_(fs) {}
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
    if (fs_->ShouldFail(true)) return fs_->Error();
    return rocksdb::IOStatus::OK();
  }
  rocksdb::IOStatus FsyncWithDirOptions(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg,
                                        const rocksdb::DirFsyncOptions& d) override {
    (void)d;
    if (fs_->ShouldFail(true)) return fs_->Error();
    return rocksdb::IOStatus::OK();
  }
  rocksdb::IOStatus Close(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
    return base_->Close(o, dbg);
  }
  size_t GetUniqueId(char* id, size_t max_size) const override {
    return base_->GetUniqueId(id, max_size);
  }

 private:
  std::unique_ptr<rocksdb::FSDirectory> base_;
  FaultFileSystem* fs_;
};

inline rocksdb::IOStatus FaultFileSystem::NewDirectory(const std::string& name,
                                                       const rocksdb::IOOptions& o,
                                                       std::unique_ptr<rocksdb::FSDirectory>* r,
                                                       rocksdb::IODebugContext* dbg) {
  std::unique_ptr<rocksdb::FSDirectory> base;
  rocksdb::IOStatus s = target()->NewDirectory(name, o, &base, dbg);
  if (s.ok()) r->reset(new FaultDirectory(std::move(base), this));
  return s;
}

inline rocksdb::IOStatus FaultFileSystem::Wrap(rocksdb::IOStatus s,
                                               std::unique_ptr<rocksdb::FSWritableFile>* r) {
  if (s.ok()) r->reset(new FaultFile(std::move(*r), this));
  return s;
}

}  // namespace sieve::test

#endif  // SIEVE_TESTS_STORAGE_FAULT_FS_H_
