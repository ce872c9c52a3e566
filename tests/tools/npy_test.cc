// Copyright 2026 The Sieve Authors.

#include "tools/io/npy.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "tests/testutil.h"

namespace sieve::io {
namespace {

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(f.good());
}

template <typename T>
std::string Raw(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// A .npy file as NumPy would write it with format version `major`.0, padded to 64 bytes;
// `dict` is the header's dict literal, written as given.
std::string NpyBytes(int major, const std::string& dict, const std::string& data) {
  const size_t len_bytes = major == 1 ? 2 : 4;
  std::string header = dict;
  const size_t unpadded = 8 + len_bytes + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  for (size_t i = 0; i < len_bytes; ++i) out.push_back(static_cast<char>(header.size() >> (8 * i)));
  return out + header + data;
}

std::string Dict(const std::string& descr, const std::string& shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + shape + ", }";
}

// Checks that `s` is InvalidArgument with a one-line message holding every one of `parts`.
void ExpectInvalid(const Status& s, std::initializer_list<std::string> parts) {
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.IsInvalidArgument()) << s.message();
  for (const std::string& p : parts) {
    EXPECT_NE(s.message().find(p), std::string::npos) << "'" << p << "' not in: " << s.message();
  }
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
}

// An independent binary16 decoding through ldexp, the oracle for the reader's bit twiddling.
float HalfOracle(uint16_t h) {
  const int sign = (h & 0x8000) ? -1 : 1;
  const int exp = (h >> 10) & 0x1F;
  const int mant = h & 0x3FF;
  if (exp == 31) {
    return mant == 0 ? sign * std::numeric_limits<float>::infinity()
                     : std::numeric_limits<float>::quiet_NaN();
  }
  if (exp == 0) return static_cast<float>(sign * std::ldexp(mant, -24));
  return static_cast<float>(sign * std::ldexp(1024 + mant, exp - 25));
}

class NpyTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) { return dir_.Join(name); }
  test::ScratchDir dir_;
};

TEST_F(NpyTest, Float32RoundTrip) {
  const std::vector<float> v = test::RandomVectors(37, 13, 1);
  ASSERT_TRUE(WriteNpyMatrix(Path("a.npy"), v.data(), 37, 13).ok());
  NpyMatrix m;
  Status s = ReadNpyMatrix(Path("a.npy"), &m);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(m.rows, 37u);
  EXPECT_EQ(m.cols, 13u);
  EXPECT_EQ(m.data, v);
}

TEST_F(NpyTest, WriterPadsHeaderTo64Bytes) {
  const std::vector<float> v = {1, 2, 3};
  ASSERT_TRUE(WriteNpyMatrix(Path("a.npy"), v.data(), 1, 3).ok());
  std::ifstream f(Path("a.npy"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  // 10 bytes of preamble and a 60-byte dict do not fit in 64 bytes, so the data starts at 128.
  ASSERT_EQ(bytes.size(), 128u + 12u);
  EXPECT_EQ(bytes.substr(0, 10), std::string("\x93NUMPY\x01\x00\x76\x00", 10));
  EXPECT_EQ(bytes[127], '\n');
  EXPECT_EQ(bytes.substr(128), Raw(v));
}

TEST_F(NpyTest, ZeroRowsIsAnEmptyMatrix) {
  ASSERT_TRUE(WriteNpyMatrix(Path("a.npy"), nullptr, 0, 8).ok());
  NpyMatrix m;
  m.data = {1, 2};
  ASSERT_TRUE(ReadNpyMatrix(Path("a.npy"), &m).ok());
  EXPECT_EQ(m.rows, 0u);
  EXPECT_EQ(m.cols, 8u);
  EXPECT_TRUE(m.data.empty());
}

TEST_F(NpyTest, HeaderVersions2And3) {
  const std::vector<float> v = {1.5f, -2, 3, 4, 5, 6};
  for (int major : {1, 2, 3}) {
    SCOPED_TRACE(major);
    WriteBytes(Path("a.npy"), NpyBytes(major, Dict("<f4", "(2, 3)"), Raw(v)));
    NpyMatrix m;
    Status s = ReadNpyMatrix(Path("a.npy"), &m);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(m.rows, 2u);
    EXPECT_EQ(m.cols, 3u);
    EXPECT_EQ(m.data, v);
  }
}

TEST_F(NpyTest, AcceptsHeaderVariants) {
  const std::vector<float> v = {1, 2, 3, 4, 5, 6};
  const char* dicts[] = {
      "{'descr': '|f4', 'fortran_order': False, 'shape': (3, 2), }",
      "{'descr': '=f4', 'fortran_order': False, 'shape': (3, 2), }",
      "{\"shape\": (3L, 2L), \"fortran_order\": False, \"descr\": \"<f4\"}",
      "{'descr':'<f4','fortran_order':False,'shape':(3,2,)}",
  };
  for (const char* dict : dicts) {
    SCOPED_TRACE(dict);
    WriteBytes(Path("a.npy"), NpyBytes(1, dict, Raw(v)));
    NpyMatrix m;
    Status s = ReadNpyMatrix(Path("a.npy"), &m);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(m.rows, 3u);
    EXPECT_EQ(m.cols, 2u);
    EXPECT_EQ(m.data, v);
    NpyMatrix body;
    s = ParseNpyMatrix(NpyBytes(1, dict, Raw(v)), "npy body: ", &body);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(body.rows, 3u);
    EXPECT_EQ(body.data, v);
  }
}

TEST_F(NpyTest, Float16EveryValue) {
  std::vector<uint16_t> halves(65536);
  for (size_t i = 0; i < halves.size(); ++i) halves[i] = static_cast<uint16_t>(i);
  WriteBytes(Path("h.npy"), NpyBytes(1, Dict("<f2", "(256, 256)"), Raw(halves)));
  NpyMatrix m;
  Status s = ReadNpyMatrix(Path("h.npy"), &m);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(m.data.size(), 65536u);
  for (size_t i = 0; i < halves.size(); ++i) {
    const float want = HalfOracle(halves[i]);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(m.data[i])) << i;
    } else {
      // Bit equality also separates +0 from -0.
      EXPECT_EQ(std::bit_cast<uint32_t>(m.data[i]), std::bit_cast<uint32_t>(want)) << i;
    }
  }
  // Spot checks against known values, so a shared mistake in reader and oracle shows.
  EXPECT_EQ(m.data[0x3C00], 1.0f);
  EXPECT_EQ(m.data[0xC000], -2.0f);
  EXPECT_EQ(m.data[0x7BFF], 65504.0f);
  EXPECT_EQ(m.data[0x0001], std::ldexp(1.0f, -24));
  EXPECT_EQ(m.data[0x03FF], std::ldexp(1023.0f, -24));
  EXPECT_EQ(m.data[0x0400], std::ldexp(1.0f, -14));
  EXPECT_EQ(m.data[0x7C00], std::numeric_limits<float>::infinity());
  EXPECT_EQ(m.data[0xFC00], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::signbit(m.data[0x8000]));
}

TEST_F(NpyTest, Float64IsRoundedToFloat32) {
  const std::vector<double> v = {0.1, -1e-3, 1e300, -1e300, 3.0, 1e-50};
  WriteBytes(Path("d.npy"), NpyBytes(1, Dict("<f8", "(2, 3)"), Raw(v)));
  NpyMatrix m;
  Status s = ReadNpyMatrix(Path("d.npy"), &m);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(m.data.size(), 6u);
  EXPECT_EQ(m.data[0], 0.1f);
  EXPECT_EQ(m.data[1], -1e-3f);
  EXPECT_EQ(m.data[2], std::numeric_limits<float>::infinity());
  EXPECT_EQ(m.data[3], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(m.data[4], 3.0f);
  EXPECT_EQ(m.data[5], 0.0f);
  // A request body holding the same bytes reads the same (beyond float32's range included).
  NpyMatrix body;
  s = ParseNpyMatrix(NpyBytes(1, Dict("<f8", "(2, 3)"), Raw(v)), "npy body: ", &body);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(body.rows, 2u);
  EXPECT_EQ(body.cols, 3u);
  EXPECT_EQ(body.data, m.data);
}

TEST_F(NpyTest, Float64SpansSeveralChunks) {
  // More than one 4 MB conversion buffer, with a partial last chunk.
  const size_t rows = 5000, cols = 130;
  std::vector<double> v(rows * cols);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i) * 0.5;
  WriteBytes(Path("d.npy"), NpyBytes(1, Dict("<f8", "(5000, 130)"), Raw(v)));
  NpyMatrix m;
  ASSERT_TRUE(ReadNpyMatrix(Path("d.npy"), &m).ok());
  ASSERT_EQ(m.data.size(), v.size());
  for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(m.data[i], static_cast<float>(v[i])) << i;
}

TEST_F(NpyTest, RejectsBadFiles) {
  const std::string data24(24, '\0');
  struct Case {
    const char* name;
    std::string bytes;
    std::vector<std::string> parts;
  };
  const Case cases[] = {
      {"empty", "", {"empty file"}},
      {"bad magic", "\x93NUMPX\x01\x00" + std::string(100, ' '), {"bad magic"}},
      {"text file", "1,2,3\n4,5,6\n", {"bad magic"}},
      {"short preamble", std::string("\x93NUMPY\x01", 7), {"truncated .npy preamble"}},
      {"v2 short preamble",
       std::string("\x93NUMPY\x02\x00\x10\x00", 10),
       {"truncated .npy preamble"}},
      {"version 4",
       std::string("\x93NUMPY\x04\x00\x10\x00", 10) + std::string(16, ' '),
       {"unsupported .npy format version 4.0"}},
      {"minor 1",
       std::string("\x93NUMPY\x01\x01\x10\x00", 10) + std::string(16, ' '),
       {"version 1.1"}},
      {"header longer than file",
       std::string("\x93NUMPY\x01\x00\xff\xff{}", 12),
       {"truncated header", "65535"}},
      {"v2 huge header length",
       std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff{}", 14),
       {"truncated header", "4294967295"}},
      {"truncated data",
       NpyBytes(1, Dict("<f4", "(2, 3)"), data24.substr(0, 20)),
       {"truncated: expected 24 bytes of data", "found 20"}},
      {"trailing data",
       NpyBytes(1, Dict("<f4", "(2, 3)"), data24 + "xx"),
       {"expected 24 bytes", "found 26", "trailing"}},
      {"header lies about rows",
       NpyBytes(1, Dict("<f4", "(1000000, 128)"), data24),
       {"truncated: expected 512000000 bytes of data", "found 24"}},
      {"shape overflows",
       NpyBytes(1, Dict("<f4", "(4611686018427387904, 8)"), data24),
       {"too large"}},
      {"shape beyond uint64",
       NpyBytes(1, Dict("<f4", "(99999999999999999999999, 8)"), data24),
       {"too large"}},
      {"big-endian", NpyBytes(1, Dict(">f4", "(2, 3)"), data24), {"big-endian", ">f4"}},
      {"fortran order", NpyBytes(1, Dict("<f4", "(2, 3)", true), data24), {"Fortran"}},
      {"3-D", NpyBytes(1, Dict("<f4", "(1, 2, 3)"), data24), {"2-D", "(1, 2, 3)"}},
      {"1-D", NpyBytes(1, Dict("<f4", "(6,)"), data24), {"2-D", "(6,)"}},
      {"0-D", NpyBytes(1, Dict("<f4", "()"), data24.substr(0, 4)), {"2-D", "()"}},
      {"zero columns", NpyBytes(1, Dict("<f4", "(5, 0)"), ""), {"0 columns"}},
      {"int dtype", NpyBytes(1, Dict("<i4", "(2, 3)"), data24), {"unsupported dtype '<i4'"}},
      {"complex dtype",
       NpyBytes(1, Dict("<c8", "(2, 3)"), data24 + data24),
       {"unsupported dtype '<c8'"}},
      {"string dtype", NpyBytes(1, Dict("<U10", "(2, 3)"), data24), {"unsupported dtype '<U10'"}},
      {"object dtype", NpyBytes(1, Dict("|O", "(2, 3)"), data24), {"unsupported dtype '|O'"}},
      {"datetime dtype", NpyBytes(1, Dict("<M8[ns]", "(2, 3)"), data24), {"'<M8[ns]'"}},
      {"structured dtype",
       NpyBytes(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2, 3), }", data24),
       {"structured"}},
      {"not a dict", NpyBytes(1, "['<f4', False, (2, 3)]", data24), {"not a dict"}},
      {"missing shape",
       NpyBytes(1, "{'descr': '<f4', 'fortran_order': False}", data24),
       {"lacks 'shape'"}},
      {"unknown key",
       NpyBytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}", data24),
       {"unexpected key 'x'"}},
      {"duplicate key",
       NpyBytes(1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}",
                data24),
       {"twice"}},
      {"negative dim", NpyBytes(1, Dict("<f4", "(-2, 3)"), data24), {"shape"}},
      {"float dim", NpyBytes(1, Dict("<f4", "(2.0, 3)"), data24), {"shape"}},
      {"unclosed shape",
       NpyBytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3", data24),
       {"shape"}},
      {"fortran_order not bool",
       NpyBytes(1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3)}", data24),
       {"fortran_order"}},
      {"junk after dict", NpyBytes(1, Dict("<f4", "(2, 3)") + " x", data24), {"after the header"}},
      {"binary header", NpyBytes(1, std::string("\x01\xff\n\0", 4), data24), {"not a dict"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = Path("bad.npy");
    WriteBytes(path, c.bytes);
    NpyMatrix m;
    Status s = ReadNpyMatrix(path, &m);
    ExpectInvalid(s, {"file " + path + ":"});
    for (const std::string& p : c.parts) ExpectInvalid(s, {p});
    // The same bytes in memory (a server request body) meet the same rules.
    s = ParseNpyMatrix(c.bytes, "npy body: ", &m);
    ExpectInvalid(s, {"npy body: "});
    for (const std::string& p : c.parts) ExpectInvalid(s, {p});
  }
}

TEST_F(NpyTest, MissingFileAndDirectory) {
  NpyMatrix m;
  Status s = ReadNpyMatrix(Path("nope.npy"), &m);
  EXPECT_TRUE(s.IsIOError()) << s.message();
  EXPECT_NE(s.message().find("nope.npy"), std::string::npos);
  ExpectInvalid(ReadNpyMatrix(dir_.path(), &m), {"not a regular file"});
  std::vector<int64_t> ids;
  EXPECT_TRUE(ReadNpyInt64Vector(Path("nope.npy"), &ids).IsIOError());
}

TEST_F(NpyTest, WriteToMissingDirectoryFails) {
  const float v = 1;
  Status s = WriteNpyMatrix(Path("no/such/dir/a.npy"), &v, 1, 1);
  EXPECT_TRUE(s.IsIOError()) << s.message();
  const int64_t id = 1;
  EXPECT_TRUE(WriteNpyInt64(Path("no/such/dir/b.npy"), &id, 1).IsIOError());
}

TEST_F(NpyTest, Int64RoundTrip) {
  const std::vector<int64_t> ids = {0, -1, std::numeric_limits<int64_t>::max(),
                                    std::numeric_limits<int64_t>::min(), 42};
  ASSERT_TRUE(WriteNpyInt64(Path("ids.npy"), ids.data(), ids.size()).ok());
  std::vector<int64_t> got;
  Status s = ReadNpyInt64Vector(Path("ids.npy"), &got);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(got, ids);

  ASSERT_TRUE(WriteNpyInt64(Path("empty.npy"), nullptr, 0).ok());
  got = {7};
  ASSERT_TRUE(ReadNpyInt64Vector(Path("empty.npy"), &got).ok());
  EXPECT_TRUE(got.empty());
}

TEST_F(NpyTest, IntegerDtypesAndColumnShape) {
  std::vector<int64_t> got;
  WriteBytes(Path("a.npy"), NpyBytes(1, Dict("<i8", "(3, 1)"), Raw(std::vector<int64_t>{5, 6, 7})));
  ASSERT_TRUE(ReadNpyInt64Vector(Path("a.npy"), &got).ok());
  EXPECT_EQ(got, (std::vector<int64_t>{5, 6, 7}));

  WriteBytes(Path("a.npy"), NpyBytes(1, Dict("<i4", "(3,)"), Raw(std::vector<int32_t>{-5, 0, 7})));
  ASSERT_TRUE(ReadNpyInt64Vector(Path("a.npy"), &got).ok());
  EXPECT_EQ(got, (std::vector<int64_t>{-5, 0, 7}));

  WriteBytes(Path("a.npy"),
             NpyBytes(1, Dict("<u4", "(2,)"), Raw(std::vector<uint32_t>{4000000000u, 1})));
  ASSERT_TRUE(ReadNpyInt64Vector(Path("a.npy"), &got).ok());
  EXPECT_EQ(got, (std::vector<int64_t>{4000000000, 1}));

  WriteBytes(Path("a.npy"),
             NpyBytes(2, Dict("<u8", "(2,)"), Raw(std::vector<uint64_t>{uint64_t{1} << 62, 3})));
  ASSERT_TRUE(ReadNpyInt64Vector(Path("a.npy"), &got).ok());
  EXPECT_EQ(got, (std::vector<int64_t>{int64_t{1} << 62, 3}));

  WriteBytes(Path("a.npy"), NpyBytes(1, Dict("|i1", "(2,)"), Raw(std::vector<int8_t>{-3, 3})));
  ASSERT_TRUE(ReadNpyInt64Vector(Path("a.npy"), &got).ok());
  EXPECT_EQ(got, (std::vector<int64_t>{-3, 3}));

  WriteBytes(Path("a.npy"), NpyBytes(1, Dict("<u2", "(1,)"), Raw(std::vector<uint16_t>{65535})));
  ASSERT_TRUE(ReadNpyInt64Vector(Path("a.npy"), &got).ok());
  EXPECT_EQ(got, (std::vector<int64_t>{65535}));
}

TEST_F(NpyTest, Int64RejectsBadFiles) {
  const std::string p = Path("ids.npy");
  std::vector<int64_t> got;
  WriteBytes(p,
             NpyBytes(1, Dict("<u8", "(3,)"), Raw(std::vector<uint64_t>{1, 2, uint64_t{1} << 63})));
  ExpectInvalid(ReadNpyInt64Vector(p, &got), {"row 2", "9223372036854775808", "int64"});

  WriteBytes(p, NpyBytes(1, Dict("<f8", "(3,)"), Raw(std::vector<double>{1, 2, 3})));
  ExpectInvalid(ReadNpyInt64Vector(p, &got), {"unsupported dtype '<f8'", "ids"});

  WriteBytes(p, NpyBytes(1, Dict("<i8", "(2, 2)"), Raw(std::vector<int64_t>{1, 2, 3, 4})));
  ExpectInvalid(ReadNpyInt64Vector(p, &got), {"1-D", "(2, 2)"});

  WriteBytes(p, NpyBytes(1, Dict(">i8", "(1,)"), Raw(std::vector<int64_t>{1})));
  ExpectInvalid(ReadNpyInt64Vector(p, &got), {"big-endian"});

  WriteBytes(p, NpyBytes(1, Dict("<i8", "(4,)"), Raw(std::vector<int64_t>{1, 2, 3})));
  ExpectInvalid(ReadNpyInt64Vector(p, &got), {"truncated: expected 32 bytes", "found 24"});

  WriteBytes(p, NpyBytes(1, Dict("<i8", "(2305843009213693952,)"), ""));
  ExpectInvalid(ReadNpyInt64Vector(p, &got), {"too large"});
}

}  // namespace
}  // namespace sieve::io
