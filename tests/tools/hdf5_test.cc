// Copyright 2026 The Sieve Authors.

#include "tools/io/hdf5.h"

#include <gtest/gtest.h>
#include <hdf5.h>

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

void ExpectInvalid(const Status& s, std::initializer_list<std::string> parts) {
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.IsInvalidArgument()) << s.message();
  for (const std::string& p : parts) {
    EXPECT_NE(s.message().find(p), std::string::npos) << "'" << p << "' not in: " << s.message();
  }
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
}

// Writes datasets with the HDF5 C API directly (not through the code under test), the way
// h5py writes the ann-benchmarks files: one file, several top-level datasets.
class Hdf5File {
 public:
  explicit Hdf5File(const std::string& path)
      : file_(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) {
    EXPECT_GE(file_, 0);
  }
  ~Hdf5File() { H5Fclose(file_); }

  // A dataset of `file_type` with shape `dims`, written from `data` of `mem_type`.
  void Add(const std::string& name, hid_t file_type, hid_t mem_type, std::vector<hsize_t> dims,
           const void* data) {
    hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
    hid_t set =
        H5Dcreate2(file_, name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(set, 0) << name;
    hsize_t n = 1;
    for (hsize_t d : dims) n *= d;
    if (n > 0) {
      ASSERT_GE(H5Dwrite(set, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), 0);
    }
    H5Dclose(set);
    H5Sclose(space);
  }
  void AddGroup(const std::string& name) {
    H5Gclose(H5Gcreate2(file_, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  }

 private:
  hid_t file_;
};

class Hdf5Test : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) { return dir_.Join(name); }
  test::ScratchDir dir_;
};

TEST(Hdf5SpecTest, SplitsAtTheColonAfterTheExtension) {
  std::string file, dataset;
  SplitHdf5Spec("glove.hdf5:train", &file, &dataset);
  EXPECT_EQ(file, "glove.hdf5");
  EXPECT_EQ(dataset, "train");
  SplitHdf5Spec("/d:x/A.H5:grp/test", &file, &dataset);
  EXPECT_EQ(file, "/d:x/A.H5");
  EXPECT_EQ(dataset, "grp/test");
  SplitHdf5Spec("glove.hdf5", &file, &dataset);
  EXPECT_EQ(file, "glove.hdf5");
  EXPECT_EQ(dataset, "");
  EXPECT_TRUE(IsHdf5Spec("a.hdf5:train"));
  EXPECT_TRUE(IsHdf5Spec("a.h5"));
  EXPECT_FALSE(IsHdf5Spec("a.npy"));
  EXPECT_FALSE(IsHdf5Spec("a.hdf5x:train"));
}

TEST_F(Hdf5Test, ReadsFloat32AndFloat64Datasets) {
  const size_t rows = 3000, cols = 7;
  const std::vector<float> v = test::RandomVectors(rows, cols, 3);
  std::vector<double> d(v.begin(), v.end());
  for (size_t i = 0; i < d.size(); ++i) d[i] += 1e-12 * static_cast<double>(i % 5);
  {
    Hdf5File f(Path("ann.hdf5"));
    f.Add("train", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {rows, cols}, v.data());
    f.Add("test", H5T_IEEE_F64BE, H5T_NATIVE_DOUBLE, {rows, cols}, d.data());  // big-endian too
    f.Add("empty", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {0, cols}, nullptr);
  }
  NpyMatrix m;
  Status s = ReadVectorsFile(Path("ann.hdf5") + ":train", &m);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(m.rows, rows);
  EXPECT_EQ(m.cols, cols);
  EXPECT_EQ(m.data, v);
  s = ReadVectorsFile(Path("ann.hdf5") + ":test", &m);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(m.data.size(), d.size());
  for (size_t i = 0; i < d.size(); ++i) {
    ASSERT_EQ(m.data[i], static_cast<float>(d[i])) << i;  // rounded to nearest
  }
  s = ReadVectorsFile(Path("ann.hdf5") + ":empty", &m);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(m.rows, 0u);
  EXPECT_EQ(m.cols, cols);
}

TEST_F(Hdf5Test, Float64ConversionSpansChunksAndOverflowIsReported) {
  // 4 MiB of doubles per chunk: 300 columns → 1747 rows a chunk, so 5000 rows take three.
  const size_t rows = 5000, cols = 300;
  std::vector<double> d(rows * cols);
  for (size_t i = 0; i < d.size(); ++i) d[i] = static_cast<double>(i % 1000) * 0.5;
  {
    Hdf5File f(Path("big.h5"));
    f.Add("x", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {rows, cols}, d.data());
  }
  NpyMatrix m;
  Status s = ReadHdf5Matrix(Path("big.h5"), "x", &m);
  ASSERT_TRUE(s.ok()) << s.message();
  for (size_t i = 0; i < d.size(); ++i) ASSERT_EQ(m.data[i], static_cast<float>(d[i])) << i;

  d.assign(2 * 3, 1.0);
  d[4] = 1e300;  // beyond float32: ±inf, then the finiteness check names row and column
  {
    Hdf5File f(Path("huge.h5"));
    f.Add("x", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {2, 3}, d.data());
  }
  s = ReadHdf5Matrix(Path("huge.h5"), "x", &m);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(std::isinf(m.data[4]));
  ExpectInvalid(ReadVectorsFile(Path("huge.h5") + ":x", &m),
                {"file " + Path("huge.h5") + ":x: row 1, column 1: component is infinite"});
}

TEST_F(Hdf5Test, ErrorsNameTheFileAndTheDataset) {
  const std::vector<float> v(12, 1.0f);
  const std::vector<int32_t> ints(12, 1);
  {
    Hdf5File f(Path("ann.hdf5"));
    f.Add("train", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {4, 3}, v.data());
    f.Add("neighbors", H5T_STD_I32LE, H5T_NATIVE_INT32, {4, 3}, ints.data());
    f.Add("flat", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {12}, v.data());
    f.Add("cube", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {2, 2, 3}, v.data());
    f.Add("nocols", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {4, 0}, nullptr);
    f.AddGroup("grp");
  }
  const std::string file = Path("ann.hdf5");
  NpyMatrix m;
  ExpectInvalid(ReadVectorsFile(file + ":missing", &m),
                {"file " + file +
                 ": no dataset 'missing' (datasets: cube, flat, neighbors, "
                 "nocols, train)"});
  ExpectInvalid(ReadVectorsFile(file + ":grp/missing", &m), {"no dataset 'grp/missing'"});
  ExpectInvalid(ReadVectorsFile(file + ":nogroup/x", &m), {"no dataset 'nogroup/x'"});
  ExpectInvalid(ReadVectorsFile(file, &m),
                {"file " + file + ": name the dataset after a colon, as in '" + file + ":train'",
                 "datasets: cube"});
  ExpectInvalid(ReadVectorsFile(file + ":", &m), {"name the dataset after a colon"});
  ExpectInvalid(ReadVectorsFile(file + ":neighbors", &m),
                {"file " + file +
                 ", dataset 'neighbors': holds int32 integers; expected float32 "
                 "or float64 vectors"});
  ExpectInvalid(ReadVectorsFile(file + ":flat", &m),
                {"dataset 'flat': expected a 2-D dataset (rows, dim), found shape (12,)"});
  ExpectInvalid(ReadVectorsFile(file + ":cube", &m),
                {"dataset 'cube': expected a 2-D dataset (rows, dim), found shape (2, 2, 3)"});
  ExpectInvalid(ReadVectorsFile(file + ":nocols", &m), {"dataset 'nocols': shape (4, 0)"});
  ExpectInvalid(ReadVectorsFile(file + ":grp", &m), {"dataset 'grp': is a group, not a dataset"});

  // Not HDF5, and no file at all.
  { std::ofstream(Path("fake.hdf5")) << "not hdf5"; }
  ExpectInvalid(ReadVectorsFile(Path("fake.hdf5") + ":train", &m),
                {"file " + Path("fake.hdf5") + ": not an HDF5 file"});
  Status s = ReadVectorsFile(Path("none.hdf5") + ":train", &m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("file " + Path("none.hdf5")), std::string::npos) << s.message();
}

TEST_F(Hdf5Test, WriteHdf5MatrixRoundTrips) {
  const std::vector<float> v = test::RandomVectors(10, 4, 1);
  ASSERT_TRUE(WriteHdf5Matrix(Path("w.hdf5"), "train", v.data(), 10, 4).ok());
  ASSERT_TRUE(WriteHdf5Matrix(Path("w64.hdf5"), "train", v.data(), 10, 4, true).ok());
  for (const char* name : {"w.hdf5", "w64.hdf5"}) {
    NpyMatrix m;
    Status s = ReadHdf5Matrix(Path(name), "train", &m);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(m.data, v) << name;
  }
}

}  // namespace
}  // namespace sieve::io
