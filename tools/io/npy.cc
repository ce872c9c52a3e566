// Copyright 2026 The Sieve Authors.
//
// The .npy layout: the magic "\x93NUMPY", a major and a minor version byte, the header length
// (uint16 little-endian in 1.0, uint32 in 2.0 and 3.0), then the header, a Python dict literal
// such as {'descr': '<f4', 'fortran_order': False, 'shape': (1000, 128), } padded with spaces
// and ended by '\n', then the raw array data.

#include "tools/io/npy.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <string_view>

#include "tools/io/file_util.h"

namespace sieve::io {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the .npy readers copy little-endian data without swapping bytes");

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
// NumPy refuses headers over 10000 bytes unless told otherwise; this bound only keeps a
// corrupt length from making us allocate gigabytes before the parse fails.
constexpr uint64_t kMaxHeaderLen = uint64_t{1} << 20;
// Conversions go through a buffer of this many bytes, so reading float16 or float64 costs
// little memory beyond the result.
constexpr size_t kChunkBytes = size_t{4} << 20;

struct NpyHeader {
  std::string descr;
  char byte_order = 0;
  char kind = 0;
  size_t itemsize = 0;
  bool fortran_order = false;
  std::vector<uint64_t> shape;
  uint64_t data_offset = 0;
  uint64_t data_bytes = 0;  // everything after the header
};

std::string Prefix(const std::string& path) { return "file " + Printable(path) + ": "; }

std::string ShapeText(const std::vector<uint64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

// A parser for the small subset of Python literal syntax that .npy headers use. Each method
// returns false and sets error_ on bad input.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  bool Parse(NpyHeader* h) {
    bool have_descr = false, have_order = false, have_shape = false;
    SkipSpace();
    if (!Consume('{')) return Fail("header is not a dict literal");
    while (true) {
      SkipSpace();
      if (Consume('}')) break;
      std::string key;
      if (!ParseString(&key)) return Fail("expected a quoted key in the header dict");
      SkipSpace();
      if (!Consume(':')) return Fail("expected ':' after key '" + Printable(key) + "'");
      SkipSpace();
      bool* seen;
      bool ok;
      if (key == "descr") {
        seen = &have_descr;
        if (Peek() == '[') return Fail("structured dtypes are not supported");
        ok = ParseString(&h->descr);
        if (!ok) error_ = "'descr' is not a quoted string";
      } else if (key == "fortran_order") {
        seen = &have_order;
        ok = ParseBool(&h->fortran_order);
      } else if (key == "shape") {
        seen = &have_shape;
        ok = ParseShape(&h->shape);
      } else {
        return Fail("unexpected key '" + Printable(key) + "' in header");
      }
      if (!ok) return false;
      if (*seen) return Fail("key '" + key + "' appears twice in header");
      *seen = true;
      SkipSpace();
      if (Consume(',')) continue;
      SkipSpace();
      if (Consume('}')) break;
      return Fail("expected ',' or '}' in the header dict");
    }
    SkipSpace();
    if (pos_ != text_.size()) return Fail("unexpected text after the header dict");
    if (!have_descr) return Fail("header lacks 'descr'");
    if (!have_order) return Fail("header lacks 'fortran_order'");
    if (!have_shape) return Fail("header lacks 'shape'");
    return true;
  }

  const std::string& error() const { return error_; }

 private:
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool Consume(char c) {
    if (Peek() != c || pos_ >= text_.size()) return false;
    ++pos_;
    return true;
  }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Fail(std::string msg) {
    error_ = std::move(msg);
    return false;
  }

  bool ParseString(std::string* out) {
    char quote = Peek();
    if (quote != '\'' && quote != '"') return false;
    ++pos_;
    out->clear();
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
      out->push_back(text_[pos_++]);
    }
    return Consume(quote);
  }

  bool ParseBool(bool* out) {
    std::string_view rest = text_.substr(pos_);
    if (rest.starts_with("True")) {
      *out = true;
      pos_ += 4;
      return true;
    }
    if (rest.starts_with("False")) {
      *out = false;
      pos_ += 5;
      return true;
    }
    return Fail("'fortran_order' is not True or False");
  }

  bool ParseShape(std::vector<uint64_t>* shape) {
    shape->clear();
    if (!Consume('(')) return Fail("'shape' is not a tuple");
    while (true) {
      SkipSpace();
      if (Consume(')')) return true;
      if (!std::isdigit(static_cast<unsigned char>(Peek()))) {
        return Fail("'shape' holds something other than non-negative integers");
      }
      uint64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(Peek()))) {
        if (__builtin_mul_overflow(v, 10, &v) ||
            __builtin_add_overflow(v, static_cast<uint64_t>(text_[pos_] - '0'), &v)) {
          return Fail("'shape' has a dimension too large to represent");
        }
        ++pos_;
      }
      Consume('L');  // Python 2 wrote long integers as "3L"
      shape->push_back(v);
      if (shape->size() > 32) return Fail("'shape' has more than 32 dimensions");
      SkipSpace();
      if (Consume(',')) continue;
      if (Consume(')')) return true;
      return Fail("'shape' is not a well-formed tuple");
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};

// A .npy held in memory (an HTTP request body), read through InputFile's interface.
class MemoryInput {
 public:
  explicit MemoryInput(std::string_view bytes) : bytes_(bytes) {}
  uint64_t size() const { return bytes_.size(); }
  // REQUIRES: [offset, offset + n) lies within the bytes (every caller checks the size first).
  Status ReadAt(uint64_t offset, void* buf, size_t n) const {
    if (n > 0) std::memcpy(buf, bytes_.data() + offset, n);
    return Status::OK();
  }

 private:
  std::string_view bytes_;
};

// `where` starts every message ("file <path>: " or "npy body: ").
template <typename Input>
Status ReadHeader(const Input& file, const std::string& where, NpyHeader* h) {
  const uint64_t size = file.size();
  if (size == 0) return Status::InvalidArgument(where + "empty file, not a .npy file");
  unsigned char pre[12] = {};
  SIEVE_RETURN_IF_ERROR(file.ReadAt(0, pre, std::min<uint64_t>(size, sizeof(pre))));
  if (size < kMagicLen || std::memcmp(pre, kMagic, kMagicLen) != 0) {
    return Status::InvalidArgument(where + "not a .npy file (bad magic)");
  }
  if (size < 10) {
    return Status::InvalidArgument(where + "truncated .npy preamble (" +
                                   std::to_string(size) + " bytes)");
  }
  const int major = pre[6], minor = pre[7];
  uint64_t header_len, preamble;
  if (major == 1 && minor == 0) {
    header_len = pre[8] | (uint64_t{pre[9]} << 8);
    preamble = 10;
  } else if ((major == 2 || major == 3) && minor == 0) {
    if (size < 12) {
      return Status::InvalidArgument(where + "truncated .npy preamble (" +
                                     std::to_string(size) + " bytes)");
    }
    header_len =
        pre[8] | (uint64_t{pre[9]} << 8) | (uint64_t{pre[10]} << 16) | (uint64_t{pre[11]} << 24);
    preamble = 12;
  } else {
    return Status::InvalidArgument(where + "unsupported .npy format version " +
                                   std::to_string(major) + "." + std::to_string(minor) +
                                   " (expected 1.0, 2.0 or 3.0)");
  }
  if (header_len > size - preamble) {
    return Status::InvalidArgument(where + "truncated header: declares " +
                                   std::to_string(header_len) + " bytes, file has " +
                                   std::to_string(size - preamble) + " after the preamble");
  }
  if (header_len > kMaxHeaderLen) {
    return Status::InvalidArgument(where + "implausible header length " +
                                   std::to_string(header_len));
  }
  std::string text(header_len, '\0');
  SIEVE_RETURN_IF_ERROR(file.ReadAt(preamble, text.data(), text.size()));
  HeaderParser parser(text);
  if (!parser.Parse(h)) {
    return Status::InvalidArgument(where + "bad .npy header: " + parser.error());
  }

  const std::string& d = h->descr;
  size_t digits = 0;
  while (2 + digits < d.size() && std::isdigit(static_cast<unsigned char>(d[2 + digits]))) {
    ++digits;
  }
  if (d.size() < 3 || std::string_view("<>|=").find(d[0]) == std::string_view::npos ||
      digits == 0 || 2 + digits != d.size() || digits > 2) {
    return Status::InvalidArgument(where + "unsupported dtype '" + Printable(d) + "'");
  }
  h->byte_order = d[0];
  h->kind = d[1];
  h->itemsize = static_cast<size_t>(std::stoul(d.substr(2)));
  if (h->byte_order == '>' && h->itemsize > 1) {
    return Status::InvalidArgument(where + "big-endian dtype '" + Printable(d) +
                                   "' is not supported; convert it with a.astype('<" + h->kind +
                                   std::to_string(h->itemsize) + "')");
  }
  if (h->fortran_order) {
    return Status::InvalidArgument(
        where +
        "Fortran-order arrays are not supported; save np.ascontiguousarray(a) instead");
  }
  h->data_offset = preamble + header_len;
  h->data_bytes = size - h->data_offset;
  return Status::OK();
}

// Checks that the data after the header is exactly `count` items.
Status CheckDataSize(const std::string& where, const NpyHeader& h, uint64_t count) {
  uint64_t expected;
  if (__builtin_mul_overflow(count, uint64_t{h.itemsize}, &expected)) {
    return Status::InvalidArgument(where + "shape " + ShapeText(h.shape) +
                                   " is too large to represent");
  }
  if (h.data_bytes < expected) {
    return Status::InvalidArgument(where + "truncated: expected " +
                                   std::to_string(expected) + " bytes of data for shape " +
                                   ShapeText(h.shape) + ", found " + std::to_string(h.data_bytes));
  }
  if (h.data_bytes > expected) {
    return Status::InvalidArgument(where + "expected " + std::to_string(expected) +
                                   " bytes of data for shape " + ShapeText(h.shape) + ", found " +
                                   std::to_string(h.data_bytes) + " (trailing bytes)");
  }
  return Status::OK();
}

// IEEE binary16 to binary32, exact for every input: subnormal halves become normal floats,
// infinities stay infinite and NaNs keep their sign and payload.
float HalfToFloat(uint16_t h) {
  uint32_t sign = uint32_t{h & 0x8000u} << 16;
  uint32_t exp = (h >> 10) & 0x1F;
  uint32_t mant = h & 0x3FF;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {
      int shift = 0;
      while ((mant & 0x400) == 0) {
        mant <<= 1;
        ++shift;
      }
      mant &= 0x3FF;
      bits = sign | (static_cast<uint32_t>(127 - 15 + 1 - shift) << 23) | (mant << 13);
    }
  } else if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

// Reads `count` items of `itemsize` bytes at `offset` in chunks, handing each item's bytes to
// `convert(bytes, index)`, and stops at the first non-OK Status it returns.
template <typename Input, typename Convert>
Status ReadItems(const Input& file, uint64_t offset, uint64_t count, size_t itemsize,
                 Convert&& convert) {
  const size_t per_chunk = std::max<size_t>(1, kChunkBytes / itemsize);
  std::vector<unsigned char> buf(std::min<uint64_t>(count, per_chunk) * itemsize);
  for (uint64_t done = 0; done < count;) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(count - done, per_chunk));
    SIEVE_RETURN_IF_ERROR(file.ReadAt(offset + done * itemsize, buf.data(), n * itemsize));
    for (size_t i = 0; i < n; ++i) {
      SIEVE_RETURN_IF_ERROR(convert(buf.data() + i * itemsize, done + i));
    }
    done += n;
  }
  return Status::OK();
}

template <typename T>
T Load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename Input>
Status ReadMatrix(const Input& file, const std::string& where, NpyMatrix* out) {
  NpyHeader h;
  SIEVE_RETURN_IF_ERROR(ReadHeader(file, where, &h));
  if (h.shape.size() != 2) {
    return Status::InvalidArgument(where + "expected a 2-D array (rows, dim), found shape " +
                                   ShapeText(h.shape));
  }
  if (h.kind != 'f' || (h.itemsize != 2 && h.itemsize != 4 && h.itemsize != 8)) {
    return Status::InvalidArgument(where + "unsupported dtype '" + Printable(h.descr) +
                                   "' for vectors; expected float32 ('<f4'), float16 ('<f2') "
                                   "or float64 ('<f8')");
  }
  if (h.shape[1] == 0) {
    return Status::InvalidArgument(where + "shape " + ShapeText(h.shape) + " has 0 columns");
  }
  uint64_t count;
  if (__builtin_mul_overflow(h.shape[0], h.shape[1], &count)) {
    return Status::InvalidArgument(where + "shape " + ShapeText(h.shape) +
                                   " is too large to represent");
  }
  SIEVE_RETURN_IF_ERROR(CheckDataSize(where, h, count));
  out->rows = static_cast<size_t>(h.shape[0]);
  out->cols = static_cast<size_t>(h.shape[1]);
  out->data.clear();
  out->data.resize(static_cast<size_t>(count));
  float* dst = out->data.data();
  switch (h.itemsize) {
    case 4:
      // The common case reads straight into the result: no copy, no per-element work.
      return file.ReadAt(h.data_offset, dst, count * sizeof(float));
    case 2:
      return ReadItems(file, h.data_offset, count, 2, [dst](const unsigned char* p, uint64_t i) {
        dst[i] = HalfToFloat(Load<uint16_t>(p));
        return Status::OK();
      });
    default:
      return ReadItems(file, h.data_offset, count, 8, [dst](const unsigned char* p, uint64_t i) {
        // Converting an out-of-range double to float is undefined behaviour in C++, so
        // overflow to ±inf is spelled out.
        constexpr float kInf = std::numeric_limits<float>::infinity();
        const double d = Load<double>(p);
        if (std::fabs(d) <= std::numeric_limits<float>::max() || std::isnan(d)) {
          dst[i] = static_cast<float>(d);
        } else {
          dst[i] = d > 0 ? kInf : -kInf;
        }
        return Status::OK();
      });
  }
}

Status ReadInt64Vector(const std::string& path, std::vector<int64_t>* out) {
  InputFile file;
  SIEVE_RETURN_IF_ERROR(file.Open(path));
  NpyHeader h;
  SIEVE_RETURN_IF_ERROR(ReadHeader(file, Prefix(path), &h));
  if (!(h.shape.size() == 1 || (h.shape.size() == 2 && h.shape[1] == 1))) {
    return Status::InvalidArgument(Prefix(path) +
                                   "expected a 1-D array (n,) or (n, 1), found "
                                   "shape " +
                                   ShapeText(h.shape));
  }
  if ((h.kind != 'i' && h.kind != 'u') ||
      (h.itemsize != 1 && h.itemsize != 2 && h.itemsize != 4 && h.itemsize != 8)) {
    return Status::InvalidArgument(Prefix(path) + "unsupported dtype '" + Printable(h.descr) +
                                   "' for ids; expected int64 ('<i8') or another integer type");
  }
  const uint64_t count = h.shape[0];
  SIEVE_RETURN_IF_ERROR(CheckDataSize(Prefix(path), h, count));
  out->clear();
  out->resize(static_cast<size_t>(count));
  int64_t* dst = out->data();
  if (h.kind == 'i' && h.itemsize == 8) {
    return file.ReadAt(h.data_offset, dst, count * sizeof(int64_t));
  }
  const bool is_signed = h.kind == 'i';
  const size_t itemsize = h.itemsize;
  return ReadItems(
      file, h.data_offset, count, itemsize, [&](const unsigned char* p, uint64_t i) -> Status {
        switch (itemsize) {
          case 1:
            dst[i] = is_signed ? Load<int8_t>(p) : Load<uint8_t>(p);
            break;
          case 2:
            dst[i] = is_signed ? Load<int16_t>(p) : Load<uint16_t>(p);
            break;
          case 4:
            dst[i] = is_signed ? int64_t{Load<int32_t>(p)} : int64_t{Load<uint32_t>(p)};
            break;
          default: {
            uint64_t v = Load<uint64_t>(p);
            if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
              return Status::InvalidArgument(Prefix(path) + "row " + std::to_string(i) +
                                             ": value " + std::to_string(v) +
                                             " does not fit int64");
            }
            dst[i] = static_cast<int64_t>(v);
          }
        }
        return Status::OK();
      });
}

}  // namespace

std::string NpyPreamble(const std::string& descr, const std::string& shape) {
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // NumPy pads so that the data starts on a 64-byte boundary; readers that mmap rely on it.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::string preamble(kMagic, kMagicLen);
  preamble.push_back('\x01');
  preamble.push_back('\x00');
  preamble.push_back(static_cast<char>(header.size() & 0xFF));
  preamble.push_back(static_cast<char>(header.size() >> 8));
  return preamble + header;
}

namespace {

Status WriteArray(const std::string& path, const std::string& descr, const std::string& shape,
                  const void* data, size_t bytes) {
  const std::string preamble = NpyPreamble(descr, shape);
  OutputFile file;
  SIEVE_RETURN_IF_ERROR(file.Open(path));
  SIEVE_RETURN_IF_ERROR(file.Append(preamble.data(), preamble.size()));
  if (bytes > 0) SIEVE_RETURN_IF_ERROR(file.Append(data, bytes));
  return file.Close();
}

Status OutOfMemory(const std::string& path) {
  return Status::ResourceExhausted(Prefix(path) + "not enough memory to hold its data");
}

}  // namespace

Status ReadNpyMatrix(const std::string& path, NpyMatrix* out) {
  try {
    InputFile file;
    SIEVE_RETURN_IF_ERROR(file.Open(path));
    return ReadMatrix(file, Prefix(path), out);
  } catch (const std::bad_alloc&) {
    return OutOfMemory(path);
  } catch (const std::exception& e) {
    return Status::Internal(Prefix(path) + e.what());
  }
}

Status ParseNpyMatrix(std::string_view bytes, const std::string& where, NpyMatrix* out) {
  try {
    return ReadMatrix(MemoryInput(bytes), where, out);
  } catch (const std::bad_alloc&) {
    return Status::ResourceExhausted(where + "not enough memory to hold its data");
  } catch (const std::exception& e) {
    return Status::Internal(where + e.what());
  }
}

Status ReadNpyInt64Vector(const std::string& path, std::vector<int64_t>* out) {
  try {
    return ReadInt64Vector(path, out);
  } catch (const std::bad_alloc&) {
    return OutOfMemory(path);
  } catch (const std::exception& e) {
    return Status::Internal(Prefix(path) + e.what());
  }
}

Status WriteNpyMatrix(const std::string& path, const float* data, size_t rows, size_t cols) {
  try {
    return WriteArray(path, "<f4", "(" + std::to_string(rows) + ", " + std::to_string(cols) + ")",
                      data, rows * cols * sizeof(float));
  } catch (const std::exception& e) {
    return Status::Internal(Prefix(path) + e.what());
  }
}

Status WriteNpyInt64(const std::string& path, const int64_t* data, size_t n) {
  try {
    return WriteArray(path, "<i8", "(" + std::to_string(n) + ",)", data, n * sizeof(int64_t));
  } catch (const std::exception& e) {
    return Status::Internal(Prefix(path) + e.what());
  }
}

}  // namespace sieve::io
