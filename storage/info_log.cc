// Copyright 2026 The Sieve Authors.

#include "storage/info_log.h"

#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace sieve {

namespace {

class StdioLogger final : public rocksdb::Logger {
 public:
  explicit StdioLogger(std::FILE* file) : file_(file) {}
  ~StdioLogger() override { CloseFile(); }

  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (file_ == nullptr) return;
    std::time_t now = std::time(nullptr);
    std::tm tm;
    char stamp[32];
    gmtime_r(&now, &tm);
    std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ ", &tm);
    // A failed write (a full disk) loses the line and nothing else.
    if (std::fputs(stamp, file_) < 0 || std::vfprintf(file_, format, ap) < 0 ||
        std::fputc('\n', file_) == EOF) {
      std::clearerr(file_);
    }
  }
  void Flush() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (file_ != nullptr && std::fflush(file_) != 0) std::clearerr(file_);
  }

 protected:
  rocksdb::Status CloseImpl() override {
    CloseFile();
    return rocksdb::Status::OK();
  }

 private:
  void CloseFile() {
    std::lock_guard<std::mutex> lock(mu_);
    if (file_ != nullptr) (void)std::fclose(file_);
    file_ = nullptr;
  }

  std::mutex mu_;
  std::FILE* file_;
};

}  // namespace

std::shared_ptr<rocksdb::Logger> NewInfoLog(const std::string& path) {
  std::FILE* file = nullptr;
  if (!path.empty()) {
    (void)std::rename(path.c_str(), (path + ".old").c_str());
    file = std::fopen(path.c_str(), "a");
  }
  return std::make_shared<StdioLogger>(file);
}

}  // namespace sieve
