// Copyright 2026 The Sieve Authors.
//
// ParquetWriter through Arrow's parquet::arrow::FileWriter: each Write becomes one record
// batch, buffered into row groups of ParquetWriteOptions::row_group_rows rows.

#include <algorithm>
#include <exception>
#include <new>
#include <set>
#include <utility>

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <parquet/arrow/writer.h>
#include <parquet/properties.h>

#include "tools/io/file_util.h"
#include "tools/io/parquet.h"

namespace sieve::io {

namespace {

std::shared_ptr<arrow::DataType> ArrowTypeOf(AttrType type) {
  switch (type) {
    case AttrType::kInt:
      return arrow::int64();
    case AttrType::kFloat:
      return arrow::float64();
    case AttrType::kString:
    case AttrType::kText:
      return arrow::utf8();
    case AttrType::kBool:
      return arrow::boolean();
    case AttrType::kTags:
      return arrow::list(arrow::utf8());
  }
  return arrow::null();
}

class ArrowParquetWriter : public ParquetWriter {
 public:
  ArrowParquetWriter(std::string path, ParquetWriteOptions options)
      : path_(std::move(path)), options_(std::move(options)) {}

  Status Init();
  Status Write(const std::vector<Row>& rows) override {
    try {
      return WriteImpl(rows);
    } catch (const std::bad_alloc&) {
      return Status::ResourceExhausted(Where() + "out of memory");
    } catch (const std::exception& e) {
      return Status::IOError(Where() + e.what());
    }
  }
  Status Close() override {
    try {
      if (writer_ == nullptr) return Status::OK();
      arrow::Status st = writer_->Close();
      if (st.ok()) st = sink_->Close();
      writer_.reset();
      return st.ok() ? Status::OK() : FromArrow(st);
    } catch (const std::exception& e) {
      return Status::IOError(Where() + e.what());
    }
  }

 private:
  std::string Where() const { return "file " + Printable(path_, 200) + ": "; }
  Status FromArrow(const arrow::Status& st) const {
    if (st.IsOutOfMemory()) return Status::ResourceExhausted(Where() + st.message());
    if (st.IsIOError()) return Status::IOError(Where() + st.message());
    return Status::InvalidArgument(Where() + st.message());
  }
  Status WriteImpl(const std::vector<Row>& rows);

  const std::string path_;
  const ParquetWriteOptions options_;
  std::shared_ptr<arrow::Schema> schema_;
  std::shared_ptr<arrow::io::FileOutputStream> sink_;
  std::unique_ptr<parquet::arrow::FileWriter> writer_;
};

Status ArrowParquetWriter::Init() {
  std::set<std::string> names = {"id"};
  arrow::FieldVector fields = {arrow::field("id", arrow::int64(), /*nullable=*/false)};
  for (const AttributeSpec& a : options_.attributes) {
    if (!names.insert(a.name).second) {
      return Status::InvalidArgument(Where() + "column '" + Printable(a.name) + "' twice");
    }
    fields.push_back(arrow::field(a.name, ArrowTypeOf(a.type)));
  }
  if (!options_.vector_column.empty()) {
    if (!names.insert(options_.vector_column).second) {
      return Status::InvalidArgument(Where() + "the vector column '" +
                                     Printable(options_.vector_column) +
                                     "' has the name of another column; choose another name "
                                     "(--vector-column)");
    }
    if (options_.dim == 0) return Status::InvalidArgument(Where() + "vectors of dim 0");
    fields.push_back(
        arrow::field(options_.vector_column,
                     arrow::fixed_size_list(arrow::float32(), static_cast<int32_t>(options_.dim)),
                     /*nullable=*/false));
  }
  schema_ = arrow::schema(fields);
  auto sink = arrow::io::FileOutputStream::Open(path_);
  if (!sink.ok()) {
    return Status::IOError(Where() + "cannot be created: " + sink.status().message());
  }
  sink_ = *sink;
  parquet::WriterProperties::Builder props;
  props.compression(parquet::Compression::SNAPPY);
  props.max_row_group_length(static_cast<int64_t>(std::max<size_t>(1, options_.row_group_rows)));
  // The vectors' components barely repeat: a dictionary would only cost time.
  if (!options_.vector_column.empty()) {
    props.disable_dictionary(options_.vector_column + ".list.element");
  }
  parquet::ArrowWriterProperties::Builder arrow_props;
  // The Arrow schema in the footer: readers get fixed_size_list back, not list.
  arrow_props.store_schema();
  auto writer = parquet::arrow::FileWriter::Open(*schema_, arrow::system_memory_pool(), sink_,
                                                 props.build(), arrow_props.build());
  if (!writer.ok()) return FromArrow(writer.status());
  writer_ = std::move(*writer);
  return Status::OK();
}

Status ArrowParquetWriter::WriteImpl(const std::vector<Row>& rows) {
  if (writer_ == nullptr) return Status::InvalidArgument(Where() + "the file is closed");
  if (rows.empty()) return Status::OK();
  const size_t nattr = options_.attributes.size();
  const size_t dim = options_.dim;
  const bool vectors = !options_.vector_column.empty();
  arrow::MemoryPool* pool = arrow::system_memory_pool();
  arrow::Int64Builder ids(pool);
  std::vector<std::unique_ptr<arrow::ArrayBuilder>> builders;
  for (const AttributeSpec& a : options_.attributes) {
    std::unique_ptr<arrow::ArrayBuilder> b;
    arrow::Status st = arrow::MakeBuilder(pool, ArrowTypeOf(a.type), &b);
    if (!st.ok()) return FromArrow(st);
    builders.push_back(std::move(b));
  }
  auto components = std::make_shared<arrow::FloatBuilder>(pool);
  arrow::FixedSizeListBuilder vector_builder(pool, components,
                                             static_cast<int32_t>(std::max<size_t>(1, dim)));
  arrow::Status st = ids.Reserve(static_cast<int64_t>(rows.size()));
  for (size_t r = 0; r < rows.size() && st.ok(); ++r) {
    const Row& row = rows[r];
    if (row.attributes.size() != nattr || (vectors && row.vector.size() != dim)) {
      return Status::InvalidArgument(Where() + "row of id " + std::to_string(row.id) +
                                     " has another shape than the file's columns");
    }
    st = ids.Append(row.id);
    for (size_t a = 0; a < nattr && st.ok(); ++a) {
      const Value& v = row.attributes[a];
      arrow::ArrayBuilder* b = builders[a].get();
      if (IsNull(v)) {
        st = b->AppendNull();
        continue;
      }
      switch (options_.attributes[a].type) {
        case AttrType::kInt:
          st = static_cast<arrow::Int64Builder*>(b)->Append(std::get<int64_t>(v));
          break;
        case AttrType::kFloat:
          st = static_cast<arrow::DoubleBuilder*>(b)->Append(std::get<double>(v));
          break;
        case AttrType::kString:
        case AttrType::kText:
          st = static_cast<arrow::StringBuilder*>(b)->Append(std::get<std::string>(v));
          break;
        case AttrType::kBool:
          st = static_cast<arrow::BooleanBuilder*>(b)->Append(std::get<bool>(v));
          break;
        case AttrType::kTags: {
          auto* list = static_cast<arrow::ListBuilder*>(b);
          auto* tags = static_cast<arrow::StringBuilder*>(list->value_builder());
          st = list->Append();
          for (const std::string& t : std::get<std::vector<std::string>>(v)) {
            if (st.ok()) st = tags->Append(t);
          }
          break;
        }
      }
    }
    if (st.ok() && vectors) {
      st = vector_builder.Append();
      if (st.ok()) st = components->AppendValues(row.vector.data(), static_cast<int64_t>(dim));
    }
  }
  if (!st.ok()) return FromArrow(st);
  arrow::ArrayVector columns(1);
  st = ids.Finish(&columns[0]);
  for (auto& b : builders) {
    if (!st.ok()) break;
    columns.emplace_back();
    st = b->Finish(&columns.back());
  }
  if (st.ok() && vectors) {
    columns.emplace_back();
    st = vector_builder.Finish(&columns.back());
  }
  if (!st.ok()) return FromArrow(st);
  auto batch = arrow::RecordBatch::Make(schema_, static_cast<int64_t>(rows.size()), columns);
  st = writer_->WriteRecordBatch(*batch);
  return st.ok() ? Status::OK() : FromArrow(st);
}

}  // namespace

Status ParquetWriter::Open(const std::string& path, const ParquetWriteOptions& options,
                           std::unique_ptr<ParquetWriter>* out) {
  auto writer = std::make_unique<ArrowParquetWriter>(path, options);
  Status s;
  try {
    s = writer->Init();
  } catch (const std::exception& e) {
    s = Status::IOError("file " + Printable(path, 200) + ": " + e.what());
  }
  if (!s.ok()) return s;
  *out = std::move(writer);
  return Status::OK();
}

}  // namespace sieve::io
