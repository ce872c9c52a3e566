// Copyright 2026 The Sieve Authors.
//
// Helpers shared by the CLI's file readers and writers: whole-file and positioned I/O that
// report failures as Status, and the text escaping that keeps every error message one
// printable line whatever bytes the user's file holds.

#ifndef SIEVE_TOOLS_IO_FILE_UTIL_H_
#define SIEVE_TOOLS_IO_FILE_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sieve/status.h"

namespace sieve::io {

// A regular file opened for positioned reads. Not thread-safe; the object owns the descriptor.
class InputFile {
 public:
  InputFile() = default;
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // IOError when the file cannot be opened; InvalidArgument when it is not a regular file.
  Status Open(const std::string& path);
  uint64_t size() const { return size_; }
  // Reads exactly n bytes at `offset`; IOError on failure or when the file ends first.
  Status ReadAt(uint64_t offset, void* buf, size_t n) const;

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string path_;
};

// A file created (or truncated) for sequential writes. Not thread-safe.
class OutputFile {
 public:
  OutputFile() = default;
  ~OutputFile();  // closes without reporting; call Close() to learn whether the data landed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  Status Open(const std::string& path);
  Status Append(const void* data, size_t n);
  Status Close();

 private:
  int fd_ = -1;
  std::string path_;
};

// Reads the whole of a regular file into `out`.
Status ReadWholeFile(const std::string& path, std::string* out);

// `s` made safe for a one-line message: control characters and bytes that are not valid UTF-8
// become escapes, and text past `max_len` bytes is cut with "...".
std::string Printable(std::string_view s, size_t max_len = 80);

bool IsValidUtf8(std::string_view s);

// The extension of the last path component, lower-cased, with its dot (".npy"), or "".
std::string LowerExtension(const std::string& path);

}  // namespace sieve::io

#endif  // SIEVE_TOOLS_IO_FILE_UTIL_H_
