// Copyright 2026 The Sieve Authors.

#include "storage/file_checksum.h"

namespace sieve {

namespace {

class Xxh3Generator final : public rocksdb::FileChecksumGenerator {
 public:
  void Update(const char* data, size_t n) override { stream_.Update(data, n); }
  void Finalize() override { checksum_ = EncodeFileChecksum(stream_.Digest()); }
  std::string GetChecksum() const override { return checksum_; }
  const char* Name() const override { return kFileChecksumName; }

 private:
  Xxh3Stream stream_;
  std::string checksum_;
};

class Xxh3Factory final : public rocksdb::FileChecksumGenFactory {
 public:
  std::unique_ptr<rocksdb::FileChecksumGenerator> CreateFileChecksumGenerator(
      const rocksdb::FileChecksumGenContext& context) override {
    // Files checksummed by another function are not ours to verify.
    if (!context.requested_checksum_func_name.empty() &&
        context.requested_checksum_func_name != kFileChecksumName) {
      return nullptr;
    }
    return std::make_unique<Xxh3Generator>();
  }
  const char* Name() const override { return "SieveXXH3_64Factory"; }
};

}  // namespace

std::shared_ptr<rocksdb::FileChecksumGenFactory> FileChecksumFactory() {
  static const auto factory = std::make_shared<Xxh3Factory>();
  return factory;
}

Xxh3Stream::Xxh3Stream() { XXH3_64bits_reset(&state_); }

void Xxh3Stream::Update(const void* data, size_t n) { XXH3_64bits_update(&state_, data, n); }

uint64_t Xxh3Stream::Digest() const { return XXH3_64bits_digest(&state_); }

uint64_t Xxh3(const void* data, size_t n) { return XXH3_64bits(data, n); }

std::string EncodeFileChecksum(uint64_t digest) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<char>(digest & 0xff);
    digest >>= 8;
  }
  return out;
}

}  // namespace sieve
