// Copyright 2026 The Sieve Authors.
//
// What the decoders of storage/format.h share (format.cc: keys, metadata, shard states,
// vectors, ids; column_codec.cc: attribute columns): a bounds-checked cursor and the
// Corruption messages of a short or foreign-version value. Private to storage/.

#ifndef SIEVE_STORAGE_FORMAT_READER_H_
#define SIEVE_STORAGE_FORMAT_READER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sieve/status.h"
#include "storage/format.h"

namespace sieve::format {

inline std::string Num(uint64_t v) { return std::to_string(v); }

// Reads past a cursor with bounds checks, so decoders can be written straight-line.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  size_t remaining() const { return data_.size() - pos_; }
  size_t pos() const { return pos_; }
  bool Skip(size_t n) {
    if (remaining() < n) return false;
    pos_ += n;
    return true;
  }
  bool U8(uint8_t* v) {
    if (remaining() < 1) return false;
    *v = static_cast<uint8_t>(data_[pos_++]);
    return true;
  }
  bool U32(uint32_t* v) {
    if (remaining() < 4) return false;
    *v = GetFixed32(data_.data() + pos_);
    pos_ += 4;
    return true;
  }
  bool Bytes(size_t n, std::string_view* out) {
    if (remaining() < n) return false;
    *out = data_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  // LEB128, at most 5 bytes, value < 2^32.
  bool Varint32(uint32_t* v) {
    uint64_t x = 0;
    for (int shift = 0; shift <= 28; shift += 7) {
      uint8_t b = 0;
      if (!U8(&b)) return false;
      x |= uint64_t{b & 0x7fu} << shift;
      if ((b & 0x80) == 0) {
        if (x > UINT32_MAX) return false;
        *v = static_cast<uint32_t>(x);
        return true;
      }
    }
    return false;
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

inline Status Truncated(std::string_view what, size_t need, size_t have) {
  return Status::Corruption(std::string(what) + " is truncated: needs " + Num(need) +
                            " bytes, has " + Num(have));
}

inline Status CheckVersion(std::string_view what, uint8_t version) {
  if (version == kFormatVersion) return Status::OK();
  return Status::Corruption(std::string(what) + " has format version " + Num(version) +
                            ", this build reads version " + Num(kFormatVersion));
}

}  // namespace sieve::format

#endif  // SIEVE_STORAGE_FORMAT_READER_H_
