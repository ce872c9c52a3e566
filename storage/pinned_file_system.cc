// Copyright 2026 The Sieve Authors.

#include "storage/pinned_file_system.h"

#include <algorithm>
#include <utility>

namespace sieve {

namespace {

// RocksDB joins a directory and a file name with '/', and a directory given with a trailing
// '/' then yields "//": one spelling per file.
std::string Normalize(const std::string& path) {
  std::string out;
  out.reserve(path.size());
  for (char c : path) {
    if (c == '/' && !out.empty() && out.back() == '/') continue;
    out.push_back(c);
  }
  return out;
}

// A handle on a pinned file: reads go to the shared open file.
class SharedRandomAccessFile final : public rocksdb::FSRandomAccessFileWrapper {
 public:
  explicit SharedRandomAccessFile(std::shared_ptr<rocksdb::FSRandomAccessFile> file)
      : rocksdb::FSRandomAccessFileWrapper(file.get()), file_(std::move(file)) {}

 private:
  std::shared_ptr<rocksdb::FSRandomAccessFile> file_;
};

// A pinned file read front to back.
class PinnedSequentialFile final : public rocksdb::FSSequentialFile {
 public:
  PinnedSequentialFile(std::shared_ptr<rocksdb::FSRandomAccessFile> file, uint64_t size)
      : file_(std::move(file)), size_(size) {}

  rocksdb::IOStatus Read(size_t n, const rocksdb::IOOptions& options, rocksdb::Slice* result,
                         char* scratch, rocksdb::IODebugContext* dbg) override {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(n, size_ - offset_));
    if (want == 0) {
      *result = rocksdb::Slice(scratch, 0);
      return rocksdb::IOStatus::OK();
    }
    rocksdb::IOStatus s = file_->Read(offset_, want, options, result, scratch, dbg);
    if (s.ok()) offset_ += result->size();
    return s;
  }
  rocksdb::IOStatus Skip(uint64_t n) override {
    offset_ += std::min<uint64_t>(n, size_ - offset_);
    return rocksdb::IOStatus::OK();
  }
  rocksdb::IOStatus PositionedRead(uint64_t offset, size_t n, const rocksdb::IOOptions& options,
                                   rocksdb::Slice* result, char* scratch,
                                   rocksdb::IODebugContext* dbg) override {
    return file_->Read(offset, n, options, result, scratch, dbg);
  }

 private:
  std::shared_ptr<rocksdb::FSRandomAccessFile> file_;
  uint64_t size_;
  uint64_t offset_ = 0;
};

}  // namespace

rocksdb::IOStatus PinnedFileSystem::Pin(const std::string& path) {
  const std::string key = Normalize(path);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (pins_.count(key)) return rocksdb::IOStatus::OK();
  }
  PinnedFile pinned;
  std::unique_ptr<rocksdb::FSRandomAccessFile> file;
  rocksdb::IOStatus s =
      target()->NewRandomAccessFile(key, rocksdb::FileOptions(), &file, nullptr);
  if (s.ok()) s = target()->GetFileSize(key, rocksdb::IOOptions(), &pinned.size, nullptr);
  if (!s.ok()) return s;
  pinned.file = std::move(file);
  std::lock_guard<std::mutex> lock(mu_);
  pins_.emplace(key, std::move(pinned));
  return rocksdb::IOStatus::OK();
}

size_t PinnedFileSystem::pinned() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pins_.size();
}

const PinnedFileSystem::PinnedFile* PinnedFileSystem::Find(const std::string& path) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pins_.find(Normalize(path));
  // Entries are never erased, so the pointer stays valid without the lock.
  return it == pins_.end() ? nullptr : &it->second;
}

rocksdb::IOStatus PinnedFileSystem::NewRandomAccessFile(
    const std::string& path, const rocksdb::FileOptions& options,
    std::unique_ptr<rocksdb::FSRandomAccessFile>* result, rocksdb::IODebugContext* dbg) {
  if (const PinnedFile* pinned = Find(path)) {
    result->reset(new SharedRandomAccessFile(pinned->file));
    return rocksdb::IOStatus::OK();
  }
  return target()->NewRandomAccessFile(path, options, result, dbg);
}

rocksdb::IOStatus PinnedFileSystem::NewSequentialFile(
    const std::string& path, const rocksdb::FileOptions& options,
    std::unique_ptr<rocksdb::FSSequentialFile>* result, rocksdb::IODebugContext* dbg) {
  if (const PinnedFile* pinned = Find(path)) {
    result->reset(new PinnedSequentialFile(pinned->file, pinned->size));
    return rocksdb::IOStatus::OK();
  }
  return target()->NewSequentialFile(path, options, result, dbg);
}

rocksdb::IOStatus PinnedFileSystem::GetFileSize(const std::string& path,
                                                const rocksdb::IOOptions& options,
                                                uint64_t* size, rocksdb::IODebugContext* dbg) {
  if (const PinnedFile* pinned = Find(path)) {
    *size = pinned->size;
    return rocksdb::IOStatus::OK();
  }
  return target()->GetFileSize(path, options, size, dbg);
}

rocksdb::IOStatus PinnedFileSystem::FileExists(const std::string& path,
                                               const rocksdb::IOOptions& options,
                                               rocksdb::IODebugContext* dbg) {
  if (Find(path) != nullptr) return rocksdb::IOStatus::OK();
  return target()->FileExists(path, options, dbg);
}

bool PinVersion(rocksdb::DB* db, const std::vector<rocksdb::ColumnFamilyHandle*>& handles,
                PinnedFileSystem* files) {
  std::vector<rocksdb::LiveFileMetaData> tables;
  db->GetLiveFilesMetaData(&tables);
  for (const rocksdb::LiveFileMetaData& f : tables) {
    if (!files->Pin(f.directory + "/" + f.relative_filename).ok()) return false;
  }
  for (rocksdb::ColumnFamilyHandle* family : handles) {
    rocksdb::ColumnFamilyMetaData cf;
    db->GetColumnFamilyMetaData(family, &cf);
    for (const rocksdb::BlobMetaData& b : cf.blob_files) {
      if (!files->Pin(b.blob_file_path + "/" + b.blob_file_name).ok()) return false;
    }
  }
  return true;
}

}  // namespace sieve
