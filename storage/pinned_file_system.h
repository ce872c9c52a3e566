// Copyright 2026 The Sieve Authors.
//
// Private to storage/: PinnedFileSystem, the file system of a read-only open beside a writer.
//
// A read-only open reads one version of the store: the table and blob files its MANIFEST
// named when it opened. Another process that has the store open for writing deletes files
// that its compactions and ingests made obsolete, while the reader may still need them (a blob
// file is first opened when a value in it is read; `sieve check` reads every file in full by
// name). Pin opens each such file once, right after the open, and keeps it open: later opens
// of that name are served from the pinned handle, so the reader sees the bytes of its version
// even after the writer has unlinked the name (the kernel keeps an open file's data).
//
// Only immutable files may be pinned (table and blob files are written once). Every other
// call goes to the wrapped file system.
//
// Thread-safety: Pin and the file operations may run concurrently.

#ifndef SIEVE_STORAGE_PINNED_FILE_SYSTEM_H_
#define SIEVE_STORAGE_PINNED_FILE_SYSTEM_H_

#include <rocksdb/db.h>
#include <rocksdb/file_system.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace sieve {

class PinnedFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  explicit PinnedFileSystem(const std::shared_ptr<rocksdb::FileSystem>& base)
      : rocksdb::FileSystemWrapper(base) {}
  static const char* kClassName() { return "SievePinnedFileSystem"; }
  const char* Name() const override { return kClassName(); }

  // Opens `path` and keeps it open for the life of this object. Returns the wrapped file
  // system's status (PathNotFound when the name is gone).
  rocksdb::IOStatus Pin(const std::string& path);
  size_t pinned() const;

  rocksdb::IOStatus NewRandomAccessFile(const std::string& path,
                                        const rocksdb::FileOptions& options,
                                        std::unique_ptr<rocksdb::FSRandomAccessFile>* result,
                                        rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus NewSequentialFile(const std::string& path,
                                      const rocksdb::FileOptions& options,
                                      std::unique_ptr<rocksdb::FSSequentialFile>* result,
                                      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus GetFileSize(const std::string& path, const rocksdb::IOOptions& options,
                                uint64_t* size, rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus FileExists(const std::string& path, const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override;

 private:
  struct PinnedFile {
    std::shared_ptr<rocksdb::FSRandomAccessFile> file;
    uint64_t size = 0;
  };
  // The pinned file of `path`, or null.
  const PinnedFile* Find(const std::string& path) const;

  mutable std::mutex mu_;
  std::map<std::string, PinnedFile> pins_;  // by path as pinned; entries are never removed
};

// Pins every table and blob file of the version `db` has open (its live files) in `files`.
// False when one is gone already (the writer deleted it first).
bool PinVersion(rocksdb::DB* db, const std::vector<rocksdb::ColumnFamilyHandle*>& handles,
                PinnedFileSystem* files);

}  // namespace sieve

#endif  // SIEVE_STORAGE_PINNED_FILE_SYSTEM_H_
