// Copyright 2026 The Sieve Authors.
//
// Parquet files for the tests, written with Arrow's own writer (so the reader under test meets
// the types, nulls, dictionaries and row groups other writers produce).

#ifndef SIEVE_TESTS_PARQUET_PARQUET_FILES_H_
#define SIEVE_TESTS_PARQUET_PARQUET_FILES_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <arrow/json/from_string.h>
#include <gtest/gtest.h>
#include <parquet/arrow/writer.h>

namespace sieve::test {

// An array from JSON text ("[1, null, 3]"); a failed test and a null array on bad text.
inline std::shared_ptr<arrow::Array> Arr(const std::shared_ptr<arrow::DataType>& type,
                                         const std::string& json) {
  auto r = arrow::json::ArrayFromJSONString(type, json);
  if (!r.ok()) {
    ADD_FAILURE() << "bad test array " << json << ": " << r.status().ToString();
    return nullptr;
  }
  return *r;
}

// n × dim float32 values as fixed_size_list<float, dim>.
inline std::shared_ptr<arrow::Array> FloatVectors(const std::vector<float>& v, int32_t dim) {
  arrow::FloatBuilder b;
  EXPECT_TRUE(b.AppendValues(v).ok());
  std::shared_ptr<arrow::Array> values;
  EXPECT_TRUE(b.Finish(&values).ok());
  auto r = arrow::FixedSizeListArray::FromArrays(values, dim);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : nullptr;
}

// Writes the columns (name, array) as a Parquet file of row groups of `group_rows` rows.
// `compression`: Arrow's writer default (none) unless given.
inline void WriteParquet(
    const std::string& path,
    const std::vector<std::pair<std::string, std::shared_ptr<arrow::Array>>>& columns,
    int64_t group_rows = 1 << 20,
    parquet::Compression::type compression = parquet::Compression::UNCOMPRESSED) {
  arrow::FieldVector fields;
  arrow::ArrayVector arrays;
  for (const auto& [name, array] : columns) {
    ASSERT_NE(array, nullptr) << name;
    fields.push_back(arrow::field(name, array->type()));
    arrays.push_back(array);
  }
  const int64_t rows = arrays.empty() ? 0 : arrays[0]->length();
  auto table = arrow::Table::Make(arrow::schema(fields), arrays, rows);
  auto sink = arrow::io::FileOutputStream::Open(path);
  ASSERT_TRUE(sink.ok()) << sink.status().ToString();
  parquet::WriterProperties::Builder props;
  props.compression(compression);
  parquet::ArrowWriterProperties::Builder arrow_props;
  arrow_props.store_schema();
  arrow::Status st = parquet::arrow::WriteTable(*table, arrow::system_memory_pool(), *sink,
                                                group_rows, props.build(), arrow_props.build());
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_TRUE((*sink)->Close().ok());
}

}  // namespace sieve::test

#endif  // SIEVE_TESTS_PARQUET_PARQUET_FILES_H_
