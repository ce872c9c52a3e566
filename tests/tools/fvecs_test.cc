// Copyright 2026 The Sieve Authors.

#include "tools/io/fvecs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "tests/testutil.h"
#include "tools/io/npy.h"
#include "tools/io/vectors_reader.h"

namespace sieve::io {
namespace {

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(f.good());
}

// One .fvecs record: the dimension word `dim`, then `values` (whose count may differ).
std::string Record(int32_t dim, const std::vector<float>& values) {
  std::string out(reinterpret_cast<const char*>(&dim), sizeof(dim));
  out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  return out;
}

void ExpectInvalid(const Status& s, std::initializer_list<std::string> parts) {
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.IsInvalidArgument()) << s.message();
  for (const std::string& p : parts) {
    EXPECT_NE(s.message().find(p), std::string::npos) << "'" << p << "' not in: " << s.message();
  }
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
}

class FvecsTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) { return dir_.Join(name); }
  test::ScratchDir dir_;
};

TEST_F(FvecsTest, RoundTrip) {
  // Enough rows to span several read batches, with a partial last batch.
  const size_t rows = 9000, cols = 129;
  const std::vector<float> v = test::RandomVectors(rows, cols, 7);
  ASSERT_TRUE(WriteFvecs(Path("a.fvecs"), v.data(), rows, cols).ok());
  NpyMatrix m;
  Status s = ReadFvecs(Path("a.fvecs"), &m);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(m.rows, rows);
  EXPECT_EQ(m.cols, cols);
  EXPECT_EQ(m.data, v);
}

TEST_F(FvecsTest, ReadsHandWrittenRecords) {
  WriteBytes(Path("a.fvecs"), Record(2, {1, 2}) + Record(2, {-3, 4.5f}) + Record(2, {0, 6}));
  NpyMatrix m;
  ASSERT_TRUE(ReadFvecs(Path("a.fvecs"), &m).ok());
  EXPECT_EQ(m.rows, 3u);
  EXPECT_EQ(m.cols, 2u);
  EXPECT_EQ(m.data, (std::vector<float>{1, 2, -3, 4.5f, 0, 6}));
}

TEST_F(FvecsTest, RejectsBadFiles) {
  struct Case {
    const char* name;
    std::string bytes;
    std::vector<std::string> parts;
  };
  const Case cases[] = {
      {"empty", "", {"empty file"}},
      {"shorter than a dimension word", "\x02\x00", {"truncated", "record 0"}},
      {"zero dimension", Record(0, {}), {"record 0", "dimension 0"}},
      {"negative dimension", Record(-4, {1, 2, 3, 4}), {"record 0", "dimension -4"}},
      {"huge dimension", Record(INT32_MAX, {1, 2}), {"truncated", "record 0"}},
      {"inconsistent dimension",
       Record(2, {1, 2}) + Record(2, {3, 4}) + Record(3, {5, 6, 7}) + Record(2, {8, 9}),
       {"record 2", "dimension 3", "record 0 declares 2"}},
      {"inconsistent last record",
       Record(3, {1, 2, 3}) + Record(2, {4, 5}),
       {"record 1", "dimension 2"}},
      {"truncated last record",
       Record(3, {1, 2, 3}) + Record(3, {4, 5, 6}) + Record(3, {7}),
       {"truncated", "record 2", "8 bytes", "expected 16"}},
      {"trailing garbage", Record(1, {1}) + "xy", {"truncated", "record 1"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = Path("bad.fvecs");
    WriteBytes(path, c.bytes);
    NpyMatrix m;
    Status s = ReadFvecs(path, &m);
    ExpectInvalid(s, {"file " + path + ":"});
    for (const std::string& p : c.parts) ExpectInvalid(s, {p});
  }
}

TEST_F(FvecsTest, MissingFile) {
  NpyMatrix m;
  EXPECT_TRUE(ReadFvecs(Path("nope.fvecs"), &m).IsIOError());
}

TEST_F(FvecsTest, ReadVectorsFileDispatchesOnExtension) {
  const std::vector<float> v = test::RandomVectors(5, 4, 3);
  ASSERT_TRUE(WriteNpyMatrix(Path("a.npy"), v.data(), 5, 4).ok());
  ASSERT_TRUE(WriteNpyMatrix(Path("b.NPY"), v.data(), 5, 4).ok());
  ASSERT_TRUE(WriteFvecs(Path("c.fvecs"), v.data(), 5, 4).ok());
  for (const char* name : {"a.npy", "b.NPY", "c.fvecs"}) {
    SCOPED_TRACE(name);
    NpyMatrix m;
    Status s = ReadVectorsFile(Path(name), &m);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(m.rows, 5u);
    EXPECT_EQ(m.cols, 4u);
    EXPECT_EQ(m.data, v);
  }
  // The extension decides, not the content.
  ASSERT_TRUE(WriteFvecs(Path("d.npy"), v.data(), 5, 4).ok());
  NpyMatrix m;
  ExpectInvalid(ReadVectorsFile(Path("d.npy"), &m), {"bad magic"});
  ExpectInvalid(ReadVectorsFile(Path("a.txt"), &m), {"unsupported vectors format '.txt'"});
  ExpectInvalid(ReadVectorsFile(Path("noext"), &m), {"unsupported vectors format ''"});
  ExpectInvalid(ReadVectorsFile(Path("dir.npy/x"), &m), {"unsupported vectors format ''"});
}

TEST_F(FvecsTest, ReadVectorsFileRejectsNonFinite) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  NpyMatrix m;
  std::vector<float> v(3 * 5000, 0.5f);
  v[1 * 5000 + 4321] = nan;
  ASSERT_TRUE(WriteNpyMatrix(Path("a.npy"), v.data(), 3, 5000).ok());
  ExpectInvalid(ReadVectorsFile(Path("a.npy"), &m), {"row 1, column 4321", "NaN"});

  v[1 * 5000 + 4321] = 0;
  v[2 * 5000 + 0] = -inf;
  ASSERT_TRUE(WriteFvecs(Path("a.fvecs"), v.data(), 3, 5000).ok());
  ExpectInvalid(ReadVectorsFile(Path("a.fvecs"), &m), {"row 2, column 0", "infinite"});

  // The plain readers return the values as stored.
  ASSERT_TRUE(ReadFvecs(Path("a.fvecs"), &m).ok());
  EXPECT_EQ(m.data[2 * 5000], -inf);
}

}  // namespace
}  // namespace sieve::io
