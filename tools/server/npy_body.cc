// Copyright 2026 The Sieve Authors.

#include "tools/server/npy_body.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

namespace sieve::server {

namespace {

Status Bad(const std::string& what) { return Status::InvalidArgument("npy body: " + what); }

float HalfToFloat(uint16_t h) {
  const int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0) {
    v = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    v = mant ? NAN : INFINITY;
  } else {
    v = std::ldexp(static_cast<float>(mant | 0x400), exp - 25);
  }
  return sign ? -v : v;
}

// The value of `key` in the header dict, up to the next ',' or '}' outside parentheses.
bool HeaderValue(const std::string& header, const std::string& key, std::string* value) {
  size_t p = header.find("'" + key + "'");
  if (p == std::string::npos) return false;
  p = header.find(':', p);
  if (p == std::string::npos) return false;
  ++p;
  int depth = 0;
  size_t e = p;
  for (; e < header.size(); ++e) {
    char c = header[e];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
    if (depth < 0) return false;
  }
  *value = header.substr(p, e - p);
  // Trim spaces and quotes.
  size_t a = value->find_first_not_of(" '\""), b = value->find_last_not_of(" '\"");
  *value = a == std::string::npos ? "" : value->substr(a, b - a + 1);
  return true;
}

}  // namespace

Status ParseNpyMatrix(std::string_view bytes, io::NpyMatrix* out) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) {
    return Bad("not a .npy array (bad magic)");
  }
  const uint8_t major = static_cast<uint8_t>(bytes[6]);
  size_t header_len, offset;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return Bad("truncated header");
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= size_t{static_cast<uint8_t>(bytes[8 + i])} << (8 * i);
    offset = 12;
  } else {
    return Bad("unsupported format version " + std::to_string(major));
  }
  if (bytes.size() - offset < header_len) return Bad("truncated header");
  const std::string header(bytes.substr(offset, header_len));
  offset += header_len;
  std::string descr, order, shape;
  if (!HeaderValue(header, "descr", &descr) || !HeaderValue(header, "fortran_order", &order) ||
      !HeaderValue(header, "shape", &shape)) {
    return Bad("header lacks descr, fortran_order or shape");
  }
  if (order != "False") return Bad("Fortran order is not supported (save in C order)");
  if (descr.size() == 3 && (descr[0] == '|' || descr[0] == '=')) descr[0] = '<';
  size_t item;
  if (descr == "<f4")
    item = 4;
  else if (descr == "<f2")
    item = 2;
  else if (descr == "<f8")
    item = 8;
  else
    return Bad("dtype '" + descr + "' is not float32, float16 or float64 little-endian");
  // shape "(R, C)".
  size_t dims[2] = {0, 0};
  int n_dims = 0;
  {
    size_t i = shape.find('(');
    if (i == std::string::npos) return Bad("bad shape '" + shape + "'");
    ++i;
    while (i < shape.size() && shape[i] != ')') {
      while (i < shape.size() && (shape[i] == ' ' || shape[i] == ',')) ++i;
      if (i >= shape.size() || shape[i] == ')') break;
      if (shape[i] < '0' || shape[i] > '9') return Bad("bad shape '" + shape + "'");
      size_t v = 0;
      while (i < shape.size() && shape[i] >= '0' && shape[i] <= '9') {
        if (v > (size_t{1} << 40)) return Bad("shape too large");
        v = v * 10 + (shape[i] - '0');
        ++i;
      }
      if (n_dims == 2) return Bad("a 2-D array is expected, shape is '" + shape + "'");
      dims[n_dims++] = v;
    }
  }
  if (n_dims != 2) return Bad("a 2-D array is expected, shape is '(" + shape + ")'");
  if (dims[1] == 0) return Bad("zero columns");
  const size_t rows = dims[0], cols = dims[1];
  if (rows > (size_t{1} << 40) / cols) return Bad("shape too large");
  const size_t expect = rows * cols * item;
  if (bytes.size() - offset != expect) {
    return Bad("holds " + std::to_string(bytes.size() - offset) + " data bytes, shape (" +
               std::to_string(rows) + ", " + std::to_string(cols) + ") of " + descr + " needs " +
               std::to_string(expect));
  }
  out->rows = rows;
  out->cols = cols;
  try {
    out->data.resize(rows * cols);
  } catch (const std::bad_alloc&) {
    return Status::ResourceExhausted("npy body: cannot allocate the vectors");
  }
  const char* p = bytes.data() + offset;
  for (size_t i = 0; i < rows * cols; ++i) {
    if (item == 4) {
      std::memcpy(&out->data[i], p + 4 * i, 4);
    } else if (item == 8) {
      double d;
      std::memcpy(&d, p + 8 * i, 8);
      out->data[i] = static_cast<float>(d);
    } else {
      uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      out->data[i] = HalfToFloat(h);
    }
  }
  return Status::OK();
}

}  // namespace sieve::server
