// Copyright 2026 The Sieve Authors.
//
// tools/io/parquet.h: every Arrow type the reader takes becomes the right vector, Value or id;
// every refusal names the file, the column and (for one row's fault) the row; memory stays at
// about one batch however many row groups a file has; the writer's files read back equal.

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

#include <gtest/gtest.h>

#include "tests/parquet/parquet_files.h"
#include "tests/testutil.h"
#include "tools/io/parquet.h"

namespace sieve {
namespace {

using test::Arr;
using test::WriteParquet;

const std::vector<AttributeSpec> kSchema = {{"n", AttrType::kInt},
                                            {"price", AttrType::kFloat},
                                            {"color", AttrType::kString},
                                            {"flag", AttrType::kBool},
                                            {"tags", AttrType::kTags}};

// Reads the whole file in chunks of `chunk_rows`.
Status ReadAll(const std::string& path, const io::ParquetReadOptions& options, size_t chunk_rows,
               io::ParquetChunk* all, const std::vector<AttributeSpec>& schema = kSchema) {
  std::unique_ptr<io::ParquetReader> reader;
  SIEVE_RETURN_IF_ERROR(io::ParquetReader::Open(path, schema, options, &reader));
  *all = io::ParquetChunk();
  for (;;) {
    io::ParquetChunk c;
    SIEVE_RETURN_IF_ERROR(reader->Next(chunk_rows, &c));
    if (c.rows == 0) break;
    EXPECT_LE(c.rows, chunk_rows);
    all->rows += c.rows;
    all->vectors.insert(all->vectors.end(), c.vectors.begin(), c.vectors.end());
    all->ids.insert(all->ids.end(), c.ids.begin(), c.ids.end());
    for (auto& a : c.attributes) all->attributes.push_back(std::move(a));
  }
  return Status::OK();
}

io::ParquetReadOptions Options(const std::string& vectors = "emb", bool attributes = true,
                               const std::string& id = "") {
  io::ParquetReadOptions o;
  o.vector_column = vectors;
  o.attributes = attributes;
  o.id_column = id;
  o.dim = 2;
  return o;
}

class ParquetReaderTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name = "t.parquet") { return dir_.Join(name); }
  test::ScratchDir dir_;
};

TEST_F(ParquetReaderTest, EveryAttributeTypeAcrossRowGroupsAndChunks) {
  auto dict = arrow::json::DictArrayFromJSONString(arrow::dictionary(arrow::int8(), arrow::utf8()),
                                                   "[0, 1, null, 0, 1]", R"(["red", "blue"])");
  ASSERT_TRUE(dict.ok());
  WriteParquet(
      Path(),
      {{"id", Arr(arrow::uint32(), "[10, 11, 12, 13, 14]")},
       {"emb", test::FloatVectors({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 2)},
       {"n", Arr(arrow::int16(), "[1, null, -3, 4, 5]")},
       {"price", Arr(arrow::float32(), "[0.5, 1.5, null, 3, 4]")},
       {"color", *dict},
       {"flag", Arr(arrow::boolean(), "[true, false, null, true, false]")},
       {"tags", Arr(arrow::list(arrow::utf8()), R"([["a"], [], null, ["b", "c"], ["d"]])")}},
      /*group_rows=*/2);
  io::ParquetChunk all;
  ASSERT_TRUE(ReadAll(Path(), Options("emb", true, "id"), 3, &all).ok());
  ASSERT_EQ(all.rows, 5u);
  EXPECT_EQ(all.vectors, std::vector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(all.ids, std::vector<int64_t>({10, 11, 12, 13, 14}));
  ASSERT_EQ(all.attributes.size(), 5u);
  using Tags = std::vector<std::string>;
  EXPECT_EQ(all.attributes[0],
            std::vector<Value>({int64_t{1}, 0.5, std::string("red"), true, Tags{"a"}}));
  EXPECT_EQ(all.attributes[1],
            std::vector<Value>({Value(), 1.5, std::string("blue"), false, Tags{}}));
  EXPECT_EQ(all.attributes[2],
            std::vector<Value>({int64_t{-3}, Value(), Value(), Value(), Value()}));
  EXPECT_EQ(all.attributes[3],
            std::vector<Value>({int64_t{4}, 3.0, std::string("red"), true, Tags{"b", "c"}}));
}

TEST_F(ParquetReaderTest, VectorColumnTypes) {
  const std::vector<float> want = {0.5f, -2.0f, 1.25f, 3.0f};
  const std::vector<std::pair<std::string, std::shared_ptr<arrow::Array>>> cases = {
      {"halffloat", Arr(arrow::fixed_size_list(arrow::float16(), 2), "[[0.5, -2], [1.25, 3]]")},
      {"double", Arr(arrow::fixed_size_list(arrow::float64(), 2), "[[0.5, -2], [1.25, 3]]")},
      {"list", Arr(arrow::list(arrow::float32()), "[[0.5, -2], [1.25, 3]]")},
      {"large_list", Arr(arrow::large_list(arrow::float64()), "[[0.5, -2], [1.25, 3]]")},
  };
  for (const auto& [name, array] : cases) {
    WriteParquet(Path(), {{"v", array}});
    io::ParquetChunk all;
    Status s = ReadAll(Path(), Options("v", false), 10, &all);
    ASSERT_TRUE(s.ok()) << name << ": " << s.ToString();
    EXPECT_EQ(all.vectors, want) << name;
  }
}

TEST_F(ParquetReaderTest, NullVectorsAndComponentsAreRefusedNamingTheRow) {
  WriteParquet(
      Path(),
      {{"emb", Arr(arrow::fixed_size_list(arrow::float32(), 2), "[[1, 2], [3, 4], null, [5, 6]]")}},
      /*group_rows=*/2);
  io::ParquetChunk all;
  Status s = ReadAll(Path(), Options("emb", false), 1, &all);
  ASSERT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("column 'emb', row 2: the vector is null"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("t.parquet"), std::string::npos) << s.message();

  WriteParquet(Path(), {{"emb", Arr(arrow::list(arrow::float32()), "[[1, 2], [3, null]]")}});
  s = ReadAll(Path(), Options("emb", false), 8, &all);
  EXPECT_NE(s.message().find("column 'emb', row 1: component 1 is null"), std::string::npos)
      << s.ToString();
}

TEST_F(ParquetReaderTest, VectorsOfTheWrongDimensionOrNotFinite) {
  WriteParquet(Path(), {{"emb", Arr(arrow::fixed_size_list(arrow::float32(), 3), "[[1, 2, 3]]")}});
  io::ParquetChunk all;
  Status s = ReadAll(Path(), Options("emb", false), 8, &all);
  EXPECT_NE(s.message().find("column 'emb' holds vectors of dim 3, the collection's dim is 2"),
            std::string::npos)
      << s.ToString();

  WriteParquet(Path(), {{"emb", Arr(arrow::list(arrow::float32()), "[[1, 2], [1, 2, 3]]")}});
  s = ReadAll(Path(), Options("emb", false), 8, &all);
  EXPECT_NE(s.message().find("row 1: the vector has 3 components, expected 2"), std::string::npos)
      << s.ToString();

  WriteParquet(Path(), {{"emb", Arr(arrow::list(arrow::float64()), "[[1, 2], [1e300, 3]]")}});
  s = ReadAll(Path(), Options("emb", false), 8, &all);
  EXPECT_NE(s.message().find("row 1: component 0 is infinite"), std::string::npos) << s.ToString();
}

TEST_F(ParquetReaderTest, ColumnsMissingUnknownOrOfTheWrongTypeAreNamed) {
  WriteParquet(Path(), {{"emb", test::FloatVectors({1, 2}, 2)},
                        {"color", Arr(arrow::int64(), "[3]")},
                        {"text", Arr(arrow::utf8(), R"(["x"])")}});
  io::ParquetChunk all;
  Status s = ReadAll(Path(), Options("embedding", false), 8, &all);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("no column 'embedding' (the vectors); the file's columns: emb, "
                             "color, text"),
            std::string::npos)
      << s.ToString();

  s = ReadAll(Path(), Options("color", false), 8, &all);
  EXPECT_NE(s.message().find("column 'color' has Arrow type int64; a vector column is"),
            std::string::npos)
      << s.ToString();

  s = ReadAll(Path(), Options("emb", true), 8, &all);
  EXPECT_NE(s.message().find("column 'color' has Arrow type int64, which attribute 'color' "
                             "(string) cannot take"),
            std::string::npos)
      << s.ToString();

  io::ParquetReadOptions o = Options("emb", true);
  o.attribute_columns = {"text"};
  s = ReadAll(Path(), o, 8, &all);
  EXPECT_NE(s.message().find("column 'text' is not an attribute of the collection"),
            std::string::npos)
      << s.ToString();

  o.attribute_columns = {"price"};  // an attribute, but not in the file
  s = ReadAll(Path(), o, 8, &all);
  EXPECT_NE(s.message().find("no column 'price' (an attribute)"), std::string::npos)
      << s.ToString();

  s = ReadAll(Path(), Options("emb", false, "text"), 8, &all);
  EXPECT_NE(s.message().find("column 'text' has Arrow type string; ids are an integer column"),
            std::string::npos)
      << s.ToString();
}

TEST_F(ParquetReaderTest, IntAttributesTakeIntegralFloatsOnly) {
  const std::vector<AttributeSpec> schema = {{"n", AttrType::kInt}};
  WriteParquet(Path(), {{"emb", test::FloatVectors({1, 2, 3, 4, 5, 6}, 2)},
                        {"n", Arr(arrow::float64(), "[3, null, 2.5]")}});
  io::ParquetChunk all;
  Status s = ReadAll(Path(), Options("emb", true), 8, &all, schema);
  EXPECT_NE(s.message().find("column 'n', row 2: 2.5 is not an integer below 2^53"),
            std::string::npos)
      << s.ToString();

  WriteParquet(Path(), {{"emb", test::FloatVectors({1, 2, 3, 4}, 2)},
                        {"n", Arr(arrow::uint64(), "[3, 18446744073709551615]")}});
  s = ReadAll(Path(), Options("emb", true), 8, &all, schema);
  EXPECT_NE(s.message().find("row 1: 18446744073709551615 is beyond int64's range"),
            std::string::npos)
      << s.ToString();
}

TEST_F(ParquetReaderTest, IdsMustBePresentAndNotNegative) {
  WriteParquet(Path(), {{"emb", test::FloatVectors({1, 2, 3, 4}, 2)},
                        {"id", Arr(arrow::int64(), "[1, null]")}});
  io::ParquetChunk all;
  Status s = ReadAll(Path(), Options("emb", false, "id"), 8, &all);
  EXPECT_NE(s.message().find("column 'id', row 1: the id is null"), std::string::npos)
      << s.ToString();
  WriteParquet(Path(), {{"emb", test::FloatVectors({1, 2, 3, 4}, 2)},
                        {"id", Arr(arrow::int32(), "[1, -7]")}});
  s = ReadAll(Path(), Options("emb", false, "id"), 8, &all);
  EXPECT_NE(s.message().find("column 'id', row 1: id -7 is negative"), std::string::npos)
      << s.ToString();
}

TEST_F(ParquetReaderTest, FilesThatAreNotParquet) {
  std::unique_ptr<io::ParquetReader> reader;
  Status s = io::ParquetReader::Open(Path("missing.parquet"), kSchema, Options(), &reader);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.message().find("missing.parquet: cannot be opened"), std::string::npos);
  std::ofstream(Path("text.parquet")) << "id,emb\n1,2\n";
  s = io::ParquetReader::Open(Path("text.parquet"), kSchema, Options(), &reader);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("text.parquet: not a Parquet file"), std::string::npos);
}

// Peak Arrow memory while reading every row of a file of `rows` rows of 64 float32 components
// (256 B each) in row groups of `group_rows` rows, in chunks of 1024 rows.
uint64_t PeakReading(const std::string& path, size_t rows, size_t group_rows) {
  constexpr size_t kDim = 64;
  WriteParquet(path, {{"emb", test::FloatVectors(test::RandomVectors(rows, kDim, rows), kDim)}},
               static_cast<int64_t>(group_rows));
  io::ParquetReadOptions o;
  o.vector_column = "emb";
  o.dim = kDim;
  o.batch_rows = 1024;
  o.read_buffer_bytes = 256 << 10;
  std::unique_ptr<io::ParquetReader> reader;
  EXPECT_TRUE(io::ParquetReader::Open(path, {}, o, &reader).ok());
  if (reader == nullptr) return 0;
  size_t read = 0;
  io::ParquetChunk c;
  do {
    EXPECT_TRUE(reader->Next(1024, &c).ok());
    read += c.rows;
  } while (c.rows > 0);
  EXPECT_EQ(read, rows);
  return reader->peak_arrow_bytes();
}

TEST_F(ParquetReaderTest, MemoryStaysBoundedWhateverTheFileOrRowGroupSize) {
  constexpr uint64_t kMiB = 1 << 20;
  // 4 MiB of vectors in row groups of 1 MiB; 32 MiB in one row group of 32 MiB.
  const uint64_t small = PeakReading(Path("small.parquet"), 16384, 4096);
  const uint64_t large = PeakReading(Path("large.parquet"), 131072, 131072);
  // The reader holds a batch (256 KiB here), its read buffer and the page being decoded (the
  // writer's pages are 1 MiB): a few MiB, not the row group, and not more for the larger file.
  EXPECT_GT(small, 0u);
  EXPECT_LT(large, 6 * kMiB) << "peak " << large << " bytes reading a row group of 32 MiB";
  EXPECT_LT(large, small + kMiB) << small << " bytes for 4 MiB, " << large << " for 32 MiB";
}

TEST_F(ParquetReaderTest, WriterRoundTrip) {
  io::ParquetWriteOptions w;
  w.attributes = kSchema;
  w.dim = 2;
  w.row_group_rows = 3;
  std::unique_ptr<io::ParquetWriter> writer;
  ASSERT_TRUE(io::ParquetWriter::Open(Path(), w, &writer).ok());
  std::vector<Row> rows;
  for (int64_t i = 0; i < 7; ++i) {
    Row r;
    r.id = 100 + i;
    r.vector = {static_cast<float>(i), -0.5f};
    r.attributes = {i % 2 ? Value(i) : Value(), Value(i * 0.25),
                    Value(std::string("c") + char('a' + i)), Value(i % 3 == 0),
                    i == 3 ? Value() : Value(std::vector<std::string>(i, "t"))};
    rows.push_back(r);
  }
  ASSERT_TRUE(writer->Write({rows.begin(), rows.begin() + 4}).ok());
  ASSERT_TRUE(writer->Write({rows.begin() + 4, rows.end()}).ok());
  ASSERT_TRUE(writer->Close().ok());
  io::ParquetChunk all;
  ASSERT_TRUE(ReadAll(Path(), Options("vector", true, "id"), 5, &all).ok());
  ASSERT_EQ(all.rows, rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(all.ids[i], rows[i].id);
    EXPECT_EQ(all.attributes[i], rows[i].attributes) << i;
    EXPECT_EQ(all.vectors[2 * i], rows[i].vector[0]);
  }

  w.vector_column = "color";
  Status s = io::ParquetWriter::Open(Path("clash.parquet"), w, &writer);
  EXPECT_NE(s.message().find("the vector column 'color' has the name of another column"),
            std::string::npos)
      << s.ToString();
}

}  // namespace
}  // namespace sieve
