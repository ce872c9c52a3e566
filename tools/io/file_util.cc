// Copyright 2026 The Sieve Authors.

#include "tools/io/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

namespace sieve::io {
namespace {

std::string ErrnoText(int err) { return std::strerror(err); }

// One read(2)/write(2) moves at most this much on Linux; asking for more only returns short.
constexpr size_t kMaxIo = size_t{1} << 30;

}  // namespace

InputFile::~InputFile() {
  if (fd_ >= 0) close(fd_);
}

Status InputFile::Open(const std::string& path) {
  path_ = path;
  fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    return Status::IOError("file " + Printable(path) + ": cannot open: " + ErrnoText(errno));
  }
  struct stat st;
  if (fstat(fd_, &st) != 0) {
    return Status::IOError("file " + Printable(path) + ": cannot stat: " + ErrnoText(errno));
  }
  // Sizes are checked against headers before anything is allocated, so a pipe or device,
  // whose size is unknown, cannot be read safely.
  if (!S_ISREG(st.st_mode)) {
    return Status::InvalidArgument("file " + Printable(path) + ": not a regular file");
  }
  size_ = static_cast<uint64_t>(st.st_size);
  return Status::OK();
}

Status InputFile::ReadAt(uint64_t offset, void* buf, size_t n) const {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t got = pread(fd_, p, n < kMaxIo ? n : kMaxIo, static_cast<off_t>(offset));
    if (got < 0) {
      if (errno == EINTR) continue;
      return Status::IOError("file " + Printable(path_) + ": read failed: " + ErrnoText(errno));
    }
    if (got == 0) {
      // The file shrank after it was opened.
      return Status::IOError("file " + Printable(path_) + ": unexpected end of file at byte " +
                             std::to_string(offset));
    }
    p += got;
    n -= static_cast<size_t>(got);
    offset += static_cast<uint64_t>(got);
  }
  return Status::OK();
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) close(fd_);
}

Status OutputFile::Open(const std::string& path) {
  path_ = path;
  fd_ = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    return Status::IOError("file " + Printable(path) + ": cannot create: " + ErrnoText(errno));
  }
  return Status::OK();
}

Status OutputFile::Append(const void* data, size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t put = write(fd_, p, n < kMaxIo ? n : kMaxIo);
    if (put < 0) {
      if (errno == EINTR) continue;
      return Status::IOError("file " + Printable(path_) + ": write failed: " + ErrnoText(errno));
    }
    p += put;
    n -= static_cast<size_t>(put);
  }
  return Status::OK();
}

Status OutputFile::Close() {
  int fd = fd_;
  fd_ = -1;
  if (fd >= 0 && close(fd) != 0) {
    return Status::IOError("file " + Printable(path_) + ": close failed: " + ErrnoText(errno));
  }
  return Status::OK();
}

Status ReadWholeFile(const std::string& path, std::string* out) {
  InputFile file;
  SIEVE_RETURN_IF_ERROR(file.Open(path));
  try {
    out->resize(file.size());
  } catch (const std::exception&) {
    return Status::ResourceExhausted("file " + Printable(path) + ": not enough memory to read " +
                                     std::to_string(file.size()) + " bytes");
  }
  return file.ReadAt(0, out->data(), out->size());
}

namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is not one (overlong
// forms, surrogates and code points past U+10FFFF are invalid, as in RFC 3629).
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (size_t k = 2; k < len; ++k) {
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  }
  return len;
}

}  // namespace

bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t len = Utf8SequenceLength(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string Printable(std::string_view s, size_t max_len) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    if (out.size() >= max_len) {
      out += "...";
      break;
    }
    auto c = static_cast<unsigned char>(s[i]);
    size_t len = Utf8SequenceLength(s, i);
    if (len > 1) {
      out.append(s.substr(i, len));
      i += len;
      continue;
    }
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c >= 0x7F) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += static_cast<char>(c);
    }
    ++i;
  }
  return out;
}

std::string LowerExtension(const std::string& path) {
  size_t slash = path.find_last_of('/');
  size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot);
  for (char& c : ext) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return ext;
}

}  // namespace sieve::io
