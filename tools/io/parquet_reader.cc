// Copyright 2026 The Sieve Authors.
//
// ParquetReader through Arrow's parquet::arrow::FileReader: the columns asked for are decoded
// in record batches, and each batch's values become Sieve's vectors, Values and ids.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <new>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <arrow/util/float16.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>
#include <parquet/column_reader.h>
#include <parquet/file_reader.h>
#include <parquet/properties.h>

#include "tools/io/file_util.h"
#include "tools/io/parquet.h"

namespace sieve::io {

namespace {

// Element i of an Arrow array as a Value of one attribute type; false with `*why` set when
// the value cannot be one.
using ValueFn = std::function<bool(int64_t i, Value* out, std::string* why)>;

float HalfToFloat(uint16_t bits) { return arrow::util::Float16::FromBits(bits).ToFloat(); }

std::string FloatText(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "infinity" : "-infinity";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", x);
  return buf;
}

template <typename ArrayT>
ValueFn IntsOf(const std::shared_ptr<arrow::Array>& a) {
  auto arr = std::static_pointer_cast<ArrayT>(a);
  return [arr](int64_t i, Value* v, std::string* why) {
    if (arr->IsNull(i)) {
      *v = std::monostate();
      return true;
    }
    const auto x = arr->Value(i);
    if constexpr (std::is_same_v<std::decay_t<decltype(x)>, uint64_t>) {
      if (x > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        *why = std::to_string(x) + " is beyond int64's range";
        return false;
      }
    }
    *v = static_cast<int64_t>(x);
    return true;
  };
}

// Floating-point values as int (integral, below 2^53 in magnitude: read exactly, the rule of
// the CSV and JSON Lines readers) or as float (finite).
template <typename ArrayT>
ValueFn FloatsOf(const std::shared_ptr<arrow::Array>& a, bool to_int) {
  auto arr = std::static_pointer_cast<ArrayT>(a);
  return [arr, to_int](int64_t i, Value* v, std::string* why) {
    if (arr->IsNull(i)) {
      *v = std::monostate();
      return true;
    }
    double x;
    if constexpr (std::is_same_v<ArrayT, arrow::HalfFloatArray>) {
      x = HalfToFloat(arr->Value(i));
    } else {
      x = static_cast<double>(arr->Value(i));
    }
    if (!std::isfinite(x)) {
      *why = FloatText(x) + " is not a number an attribute can hold (use null)";
      return false;
    }
    if (!to_int) {
      *v = x;
      return true;
    }
    if (x != std::trunc(x) || std::fabs(x) >= 0x1p53) {
      *why = FloatText(x) + " is not an integer below 2^53 in magnitude";
      return false;
    }
    *v = static_cast<int64_t>(x);
    return true;
  };
}

template <typename ArrayT>
ValueFn StringsOf(const std::shared_ptr<arrow::Array>& a) {
  auto arr = std::static_pointer_cast<ArrayT>(a);
  return [arr](int64_t i, Value* v, std::string* why) {
    if (arr->IsNull(i)) {
      *v = std::monostate();
      return true;
    }
    const std::string_view s = arr->GetView(i);
    if (!IsValidUtf8(s)) {
      *why = "'" + Printable(s) + "' is not valid UTF-8";
      return false;
    }
    *v = std::string(s);
    return true;
  };
}

ValueFn NullsOf() {
  return [](int64_t, Value* v, std::string*) {
    *v = std::monostate();
    return true;
  };
}

bool MakeValueFn(const std::shared_ptr<arrow::Array>& a, AttrType type, ValueFn* fn);

ValueFn DictionaryOf(const std::shared_ptr<arrow::DictionaryArray>& arr, ValueFn values) {
  return [arr, values = std::move(values)](int64_t i, Value* v, std::string* why) {
    if (arr->IsNull(i)) {
      *v = std::monostate();
      return true;
    }
    return values(arr->GetValueIndex(i), v, why);
  };
}

template <typename ListT>
ValueFn TagsOf(const std::shared_ptr<arrow::Array>& a, ValueFn strings) {
  auto arr = std::static_pointer_cast<ListT>(a);
  return [arr, strings = std::move(strings)](int64_t i, Value* v, std::string* why) {
    if (arr->IsNull(i)) {
      *v = std::monostate();
      return true;
    }
    std::vector<std::string> tags;
    const int64_t begin = arr->value_offset(i), n = arr->value_length(i);
    tags.reserve(static_cast<size_t>(n));
    Value tag;
    for (int64_t j = begin; j < begin + n; ++j) {
      if (!strings(j, &tag, why)) return false;
      if (IsNull(tag)) {
        *why = "tag " + std::to_string(j - begin) + " is null";
        return false;
      }
      tags.push_back(std::move(std::get<std::string>(tag)));
    }
    *v = std::move(tags);
    return true;
  };
}

bool MakeStringFn(const std::shared_ptr<arrow::Array>& a, ValueFn* fn) {
  switch (a->type_id()) {
    case arrow::Type::STRING:
      *fn = StringsOf<arrow::StringArray>(a);
      return true;
    case arrow::Type::LARGE_STRING:
      *fn = StringsOf<arrow::LargeStringArray>(a);
      return true;
    case arrow::Type::STRING_VIEW:
      *fn = StringsOf<arrow::StringViewArray>(a);
      return true;
    case arrow::Type::BINARY:
      *fn = StringsOf<arrow::BinaryArray>(a);
      return true;
    case arrow::Type::LARGE_BINARY:
      *fn = StringsOf<arrow::LargeBinaryArray>(a);
      return true;
    case arrow::Type::BINARY_VIEW:
      *fn = StringsOf<arrow::BinaryViewArray>(a);
      return true;
    default:
      return false;
  }
}

bool MakeValueFn(const std::shared_ptr<arrow::Array>& a, AttrType type, ValueFn* fn) {
  using T = arrow::Type;
  const T::type id = a->type_id();
  if (id == T::NA) {
    *fn = NullsOf();
    return true;
  }
  if (id == T::DICTIONARY) {
    auto dict = std::static_pointer_cast<arrow::DictionaryArray>(a);
    ValueFn values;
    if (!MakeValueFn(dict->dictionary(), type, &values)) return false;
    *fn = DictionaryOf(dict, std::move(values));
    return true;
  }
  switch (type) {
    case AttrType::kInt:
      switch (id) {
        case T::INT8:
          *fn = IntsOf<arrow::Int8Array>(a);
          return true;
        case T::INT16:
          *fn = IntsOf<arrow::Int16Array>(a);
          return true;
        case T::INT32:
          *fn = IntsOf<arrow::Int32Array>(a);
          return true;
        case T::INT64:
          *fn = IntsOf<arrow::Int64Array>(a);
          return true;
        case T::UINT8:
          *fn = IntsOf<arrow::UInt8Array>(a);
          return true;
        case T::UINT16:
          *fn = IntsOf<arrow::UInt16Array>(a);
          return true;
        case T::UINT32:
          *fn = IntsOf<arrow::UInt32Array>(a);
          return true;
        case T::UINT64:
          *fn = IntsOf<arrow::UInt64Array>(a);
          return true;
        case T::DATE32:
          *fn = IntsOf<arrow::Date32Array>(a);
          return true;
        case T::DATE64:
          *fn = IntsOf<arrow::Date64Array>(a);
          return true;
        case T::TIMESTAMP:
          *fn = IntsOf<arrow::TimestampArray>(a);
          return true;
        case T::HALF_FLOAT:
          *fn = FloatsOf<arrow::HalfFloatArray>(a, true);
          return true;
        case T::FLOAT:
          *fn = FloatsOf<arrow::FloatArray>(a, true);
          return true;
        case T::DOUBLE:
          *fn = FloatsOf<arrow::DoubleArray>(a, true);
          return true;
        default:
          return false;
      }
    case AttrType::kFloat:
      switch (id) {
        case T::HALF_FLOAT:
          *fn = FloatsOf<arrow::HalfFloatArray>(a, false);
          return true;
        case T::FLOAT:
          *fn = FloatsOf<arrow::FloatArray>(a, false);
          return true;
        case T::DOUBLE:
          *fn = FloatsOf<arrow::DoubleArray>(a, false);
          return true;
        case T::INT8:
          *fn = FloatsOf<arrow::Int8Array>(a, false);
          return true;
        case T::INT16:
          *fn = FloatsOf<arrow::Int16Array>(a, false);
          return true;
        case T::INT32:
          *fn = FloatsOf<arrow::Int32Array>(a, false);
          return true;
        case T::INT64:
          *fn = FloatsOf<arrow::Int64Array>(a, false);
          return true;
        case T::UINT8:
          *fn = FloatsOf<arrow::UInt8Array>(a, false);
          return true;
        case T::UINT16:
          *fn = FloatsOf<arrow::UInt16Array>(a, false);
          return true;
        case T::UINT32:
          *fn = FloatsOf<arrow::UInt32Array>(a, false);
          return true;
        case T::UINT64:
          *fn = FloatsOf<arrow::UInt64Array>(a, false);
          return true;
        default:
          return false;
      }
    case AttrType::kString:
    case AttrType::kText:
      return MakeStringFn(a, fn);
    case AttrType::kBool:
      if (id != T::BOOL) return false;
      *fn = [arr = std::static_pointer_cast<arrow::BooleanArray>(a)](int64_t i, Value* v,
                                                                     std::string*) {
        if (arr->IsNull(i)) {
          *v = std::monostate();
        } else {
          *v = arr->Value(i);
        }
        return true;
      };
      return true;
    case AttrType::kTags: {
      if (id != T::LIST && id != T::LARGE_LIST) return false;
      ValueFn strings;
      const auto& values = id == T::LIST
                               ? std::static_pointer_cast<arrow::ListArray>(a)->values()
                               : std::static_pointer_cast<arrow::LargeListArray>(a)->values();
      if (values->type_id() == T::DICTIONARY) {
        if (!MakeValueFn(values, AttrType::kString, &strings)) return false;
      } else if (!MakeStringFn(values, &strings)) {
        return false;
      }
      *fn = id == T::LIST ? TagsOf<arrow::ListArray>(a, std::move(strings))
                          : TagsOf<arrow::LargeListArray>(a, std::move(strings));
      return true;
    }
  }
  return false;
}

const char* TakesText(AttrType type) {
  switch (type) {
    case AttrType::kInt:
      return "int takes int8 to int64, uint8 to uint64, date32, date64, timestamp, and "
             "floating-point columns whose values are integral";
    case AttrType::kFloat:
      return "float takes halffloat, float, double and integer columns";
    case AttrType::kString:
      return "string takes string, large_string, string_view and UTF-8 binary columns";
    case AttrType::kText:
      return "text takes string, large_string, string_view and UTF-8 binary columns";
    case AttrType::kBool:
      return "bool takes bool columns";
    case AttrType::kTags:
      return "tags takes list<string> and large_list<string> columns";
  }
  return "";
}

bool IsVectorType(const arrow::DataType& t, std::string* why) {
  using T = arrow::Type;
  std::shared_ptr<arrow::DataType> value;
  if (t.id() == T::FIXED_SIZE_LIST || t.id() == T::LIST || t.id() == T::LARGE_LIST) {
    value = static_cast<const arrow::BaseListType&>(t).value_type();
  } else {
    *why = "has Arrow type " + t.ToString() +
           "; a vector column is a fixed_size_list, list or "
           "large_list of float, halffloat or double";
    return false;
  }
  if (value->id() != T::FLOAT && value->id() != T::HALF_FLOAT && value->id() != T::DOUBLE) {
    *why = "has Arrow type " + t.ToString() +
           "; vector components must be float, halffloat "
           "or double";
    return false;
  }
  return true;
}

bool IsIdType(const arrow::DataType& t) { return arrow::is_integer(t.id()); }

void CollectLeaves(const parquet::arrow::SchemaField& f, std::vector<int>* out) {
  if (f.is_leaf()) {
    out->push_back(f.column_index);
    return;
  }
  for (const auto& c : f.children) CollectLeaves(c, out);
}

class ArrowParquetReader : public ParquetReader {
 public:
  ArrowParquetReader(std::string path, std::vector<AttributeSpec> schema,
                     ParquetReadOptions options)
      : path_(std::move(path)),
        schema_(std::move(schema)),
        options_(std::move(options)),
        pool_(arrow::system_memory_pool()) {}

  Status Init();

  uint64_t num_rows() const override { return num_rows_; }
  uint32_t dim() const override { return dim_; }
  Status Next(size_t max_rows, ParquetChunk* chunk) override {
    try {
      return NextImpl(max_rows, chunk);
    } catch (const std::bad_alloc&) {
      failed_ = true;
      return Status::ResourceExhausted(Where() + "out of memory");
    } catch (const std::exception& e) {
      failed_ = true;
      return Status::IOError(Where() + e.what());
    }
  }
  Status Rewind() override {
    try {
      return RewindImpl();
    } catch (const std::exception& e) {
      return Status::IOError(Where() + e.what());
    }
  }
  uint64_t peak_arrow_bytes() const override {
    return static_cast<uint64_t>(std::max<int64_t>(0, pool_.max_memory()));
  }

 private:
  std::string Where() const { return "file " + Printable(path_, 200) + ": "; }
  std::string Column(const std::string& name) const {
    return Where() + "column '" + Printable(name) + "'";
  }
  Status FromArrow(const arrow::Status& st) const {
    if (st.IsOutOfMemory()) return Status::ResourceExhausted(Where() + st.message());
    if (st.IsIOError()) return Status::IOError(Where() + st.message());
    return Status::InvalidArgument(Where() + st.message());
  }
  Status RewindImpl();
  Status NextImpl(size_t max_rows, ParquetChunk* chunk);
  Status ReadBatch();
  Status FindBadVector(const arrow::Status& arrow_error) const;
  template <typename ParquetType>
  bool ScanLevels(parquet::ColumnReader* column, uint64_t* row, std::string* why) const;
  Status AppendVectors(int64_t begin, int64_t n, ParquetChunk* chunk);

  const std::string path_;
  const std::vector<AttributeSpec> schema_;
  const ParquetReadOptions options_;
  arrow::ProxyMemoryPool pool_;
  std::unique_ptr<parquet::arrow::FileReader> reader_;
  std::unique_ptr<arrow::RecordBatchReader> batches_;
  std::vector<int> leaves_;  // the Parquet leaf columns of the fields read
  int vector_leaf_ = -1;     // the vector column's leaf, when it is a fixed_size_list
  // Definition levels of that leaf below which a row's list is null, and empty.
  int16_t list_def_ = 0, entry_def_ = 0;

  uint64_t num_rows_ = 0;
  uint32_t dim_ = 0;
  // Names of the fields read: the vector and id columns, and each attribute column with its
  // attribute's position in schema_.
  std::vector<std::pair<std::string, size_t>> attribute_columns_;

  // The batch being read, its columns and the file row of its first row.
  std::shared_ptr<arrow::RecordBatch> batch_;
  std::shared_ptr<arrow::Array> vectors_, ids_;
  ValueFn id_fn_;
  std::vector<std::pair<ValueFn, size_t>> values_;  // (reader, schema position)
  int64_t offset_ = 0;                              // next row of batch_
  uint64_t batch_row_ = 0;                          // the file row of batch_'s row 0
  uint64_t next_row_ = 0;                           // the file row of the next batch
  bool failed_ = false;
};

Status ArrowParquetReader::Init() {
  auto file = arrow::io::ReadableFile::Open(path_, &pool_);
  if (!file.ok()) return Status::IOError(Where() + "cannot be opened: " + file.status().message());
  parquet::ReaderProperties props(&pool_);
  props.enable_buffered_stream();
  props.set_buffer_size(static_cast<int64_t>(options_.read_buffer_bytes));
  parquet::ArrowReaderProperties arrow_props;
  arrow_props.set_batch_size(static_cast<int64_t>(std::max<size_t>(1, options_.batch_rows)));
  arrow_props.set_pre_buffer(false);
  arrow_props.set_use_threads(false);
  parquet::arrow::FileReaderBuilder builder;
  arrow::Status st = builder.Open(*file, props);
  if (!st.ok()) return Status::InvalidArgument(Where() + "not a Parquet file: " + st.message());
  builder.memory_pool(&pool_)->properties(arrow_props);
  st = builder.Build(&reader_);
  if (!st.ok()) return FromArrow(st);
  num_rows_ = static_cast<uint64_t>(reader_->parquet_reader()->metadata()->num_rows());

  std::shared_ptr<arrow::Schema> schema;
  st = reader_->GetSchema(&schema);
  if (!st.ok()) return FromArrow(st);
  std::string listing;
  for (int i = 0; i < schema->num_fields(); ++i) {
    listing += (i ? ", " : "") + Printable(schema->field(i)->name());
  }
  listing = Printable(listing.empty() ? "none" : listing, 300);
  // The field of each name asked for: it must exist, once.
  auto find = [&](const std::string& name, const char* role, int* index) -> Status {
    *index = -1;
    for (int i = 0; i < schema->num_fields(); ++i) {
      if (schema->field(i)->name() != name) continue;
      if (*index >= 0) {
        return Status::InvalidArgument(Column(name) + " appears more than once in the file");
      }
      *index = i;
    }
    if (*index < 0) {
      return Status::InvalidArgument(Where() + "no column '" + Printable(name) + "' (" + role +
                                     "); the file's columns: " + listing);
    }
    return Status::OK();
  };
  std::vector<int> fields;
  if (!options_.vector_column.empty()) {
    int f;
    SIEVE_RETURN_IF_ERROR(find(options_.vector_column, "the vectors", &f));
    const arrow::DataType& t = *schema->field(f)->type();
    std::string why;
    if (!IsVectorType(t, &why))
      return Status::InvalidArgument(Column(options_.vector_column) + " " + why);
    if (t.id() == arrow::Type::FIXED_SIZE_LIST) {
      const int32_t size = static_cast<const arrow::FixedSizeListType&>(t).list_size();
      if (options_.dim != 0 && static_cast<uint32_t>(size) != options_.dim) {
        return Status::InvalidArgument(Column(options_.vector_column) + " holds vectors of dim " +
                                       std::to_string(size) + ", the collection's dim is " +
                                       std::to_string(options_.dim));
      }
      dim_ = static_cast<uint32_t>(size);
      std::vector<int> leaves;
      CollectLeaves(reader_->manifest().schema_fields[f], &leaves);
      const parquet::arrow::SchemaField& sf = reader_->manifest().schema_fields[f];
      if (leaves.size() == 1 && sf.children.size() == 1) {
        vector_leaf_ = leaves[0];
        list_def_ = sf.level_info.def_level;
        entry_def_ = sf.children[0].level_info.repeated_ancestor_def_level;
      }
    } else {
      dim_ = options_.dim;
    }
    fields.push_back(f);
  }
  if (!options_.id_column.empty()) {
    int f;
    SIEVE_RETURN_IF_ERROR(find(options_.id_column, "the ids", &f));
    if (!IsIdType(*schema->field(f)->type())) {
      return Status::InvalidArgument(Column(options_.id_column) + " has Arrow type " +
                                     schema->field(f)->type()->ToString() +
                                     "; ids are an integer column");
    }
    fields.push_back(f);
  }
  if (options_.attributes) {
    std::unordered_map<std::string, size_t> position;
    std::string known;
    for (size_t a = 0; a < schema_.size(); ++a) {
      position.emplace(schema_[a].name, a);
      known += (a ? ", " : "") + schema_[a].name;
    }
    known = known.empty() ? "the collection has no attributes" : "attributes: " + known;
    std::vector<std::string> names = options_.attribute_columns;
    if (names.empty()) {
      for (int i = 0; i < schema->num_fields(); ++i) {
        const std::string& n = schema->field(i)->name();
        if (n != options_.vector_column && n != options_.id_column) names.push_back(n);
      }
    }
    for (const std::string& name : names) {
      auto it = position.find(name);
      if (it == position.end()) {
        return Status::InvalidArgument(
            Column(name) + " is not an attribute of the collection (" + Printable(known, 200) +
            "); name the columns to take with --attributes FILE.parquet:COLUMN,COLUMN, and a "
            "column of ids with --id-field NAME");
      }
      for (const auto& [seen, _] : attribute_columns_) {
        if (seen == name) {
          return Status::InvalidArgument(Column(name) + " is named twice");
        }
      }
      int f;
      SIEVE_RETURN_IF_ERROR(find(name, "an attribute", &f));
      // The reader of an empty array of the column's type says whether the type fits.
      const AttrType type = schema_[it->second].type;
      auto empty = arrow::MakeEmptyArray(schema->field(f)->type(), &pool_);
      if (!empty.ok()) return FromArrow(empty.status());
      ValueFn fn;
      if (!MakeValueFn(*empty, type, &fn)) {
        return Status::InvalidArgument(Column(name) + " has Arrow type " +
                                       schema->field(f)->type()->ToString() +
                                       ", which attribute '" + Printable(name) + "' (" +
                                       AttrTypeName(type) + ") cannot take: " + TakesText(type));
      }
      attribute_columns_.emplace_back(name, it->second);
      fields.push_back(f);
    }
  }
  std::sort(fields.begin(), fields.end());
  fields.erase(std::unique(fields.begin(), fields.end()), fields.end());
  for (int f : fields) CollectLeaves(reader_->manifest().schema_fields[f], &leaves_);
  return RewindImpl();
}

Status ArrowParquetReader::RewindImpl() {
  batches_.reset();
  batch_.reset();
  vectors_.reset();
  ids_.reset();
  values_.clear();
  offset_ = 0;
  batch_row_ = next_row_ = 0;
  failed_ = false;
  if (leaves_.empty()) return Status::OK();
  std::vector<int> groups(static_cast<size_t>(reader_->num_row_groups()));
  for (size_t g = 0; g < groups.size(); ++g) groups[g] = static_cast<int>(g);
  auto batches = reader_->GetRecordBatchReader(groups, leaves_);
  if (!batches.ok()) return FromArrow(batches.status());
  batches_ = std::move(*batches);
  return Status::OK();
}

Status ArrowParquetReader::ReadBatch() {
  batch_.reset();
  vectors_.reset();
  ids_.reset();
  values_.clear();
  std::shared_ptr<arrow::RecordBatch> batch;
  arrow::Status st = batches_->ReadNext(&batch);
  // Arrow cannot make a fixed_size_list of a row whose list is null or of another length.
  if (!st.ok() && vector_leaf_ >= 0) return FindBadVector(st);
  if (!st.ok()) return FromArrow(st);
  if (batch == nullptr) return Status::OK();
  const auto& schema = *batch->schema();
  auto column = [&](const std::string& name) { return batch->column(schema.GetFieldIndex(name)); };
  if (!options_.vector_column.empty()) vectors_ = column(options_.vector_column);
  if (!options_.id_column.empty()) {
    ids_ = column(options_.id_column);
    if (!MakeValueFn(ids_, AttrType::kInt, &id_fn_)) {
      return Status::Corruption(Column(options_.id_column) + " changes type within the file");
    }
  }
  for (const auto& [name, pos] : attribute_columns_) {
    ValueFn fn;
    if (!MakeValueFn(column(name), schema_[pos].type, &fn)) {
      // The type was checked at Open; a file whose batches differ from its schema is damaged.
      return Status::Corruption(Column(name) + " changes type within the file");
    }
    values_.emplace_back(std::move(fn), pos);
  }
  batch_ = std::move(batch);
  offset_ = 0;
  batch_row_ = next_row_;
  next_row_ += static_cast<uint64_t>(batch_->num_rows());
  return Status::OK();
}

// Counts each row's entries in the levels of the vector column's leaf: a row starts at
// repetition level 0; its first entry's definition level says whether the list is null (below
// list_def_), empty (below entry_def_) or holds entries.
template <typename ParquetType>
bool ArrowParquetReader::ScanLevels(parquet::ColumnReader* column, uint64_t* row,
                                    std::string* why) const {
  auto* typed = static_cast<parquet::TypedColumnReader<ParquetType>*>(column);
  constexpr int64_t kLevels = 4096;
  std::vector<int16_t> def(kLevels), rep(kLevels);
  std::vector<typename ParquetType::c_type> values(kLevels);
  int64_t length = -1;  // entries of the current row; -1 before the first row
  auto check = [&]() {
    if (length >= 0 && static_cast<uint64_t>(length) != dim_) {
      *why = "the vector has " + std::to_string(length) + " components, expected " +
             std::to_string(dim_);
      return false;
    }
    return true;
  };
  while (typed->HasNext()) {
    int64_t read_values = 0;
    const int64_t n =
        typed->ReadBatch(kLevels, def.data(), rep.data(), values.data(), &read_values);
    for (int64_t i = 0; i < n; ++i) {
      if (rep[i] == 0) {
        if (!check()) return false;
        if (length >= 0) ++*row;
        if (def[i] < list_def_) {
          *why = "the vector is null; every row needs a vector";
          return false;
        }
        length = def[i] < entry_def_ ? 0 : 1;
      } else {
        ++length;
      }
    }
  }
  if (!check()) return false;
  if (length >= 0) ++*row;
  return true;
}

Status ArrowParquetReader::FindBadVector(const arrow::Status& arrow_error) const {
  parquet::ParquetFileReader* file = reader_->parquet_reader();
  const parquet::ColumnDescriptor* descr = file->metadata()->schema()->Column(vector_leaf_);
  uint64_t row = 0;
  std::string why;
  for (int g = 0; g < file->metadata()->num_row_groups(); ++g) {
    std::shared_ptr<parquet::ColumnReader> column = file->RowGroup(g)->Column(vector_leaf_);
    bool ok = true;
    switch (descr->physical_type()) {
      case parquet::Type::FLOAT:
        ok = ScanLevels<parquet::FloatType>(column.get(), &row, &why);
        break;
      case parquet::Type::DOUBLE:
        ok = ScanLevels<parquet::DoubleType>(column.get(), &row, &why);
        break;
      case parquet::Type::FIXED_LEN_BYTE_ARRAY:
        ok = ScanLevels<parquet::FLBAType>(column.get(), &row, &why);
        break;
      default:
        g = file->metadata()->num_row_groups();
        break;
    }
    if (!ok) {
      return Status::InvalidArgument(Column(options_.vector_column) + ", row " +
                                     std::to_string(row) + ": " + why);
    }
  }
  return Status::InvalidArgument(Column(options_.vector_column) + ": " + arrow_error.message());
}

Status ArrowParquetReader::NextImpl(size_t max_rows, ParquetChunk* chunk) {
  chunk->rows = 0;
  chunk->vectors.clear();
  chunk->attributes.clear();
  chunk->ids.clear();
  if (failed_) return Status::InvalidArgument(Where() + "the reader failed; rewind it first");
  if (batches_ == nullptr) return Status::OK();
  while (chunk->rows < max_rows) {
    if (batch_ == nullptr || offset_ == batch_->num_rows()) {
      Status s = ReadBatch();
      if (!s.ok()) {
        failed_ = true;
        return s;
      }
      if (batch_ == nullptr) break;
      continue;
    }
    const int64_t n = std::min<int64_t>(static_cast<int64_t>(max_rows - chunk->rows),
                                        batch_->num_rows() - offset_);
    Status s = AppendVectors(offset_, n, chunk);
    if (s.ok() && ids_ != nullptr) {
      for (int64_t i = offset_; i < offset_ + n; ++i) {
        Value v;
        std::string why;
        if (ids_->IsNull(i)) {
          why = "the id is null; every row needs its id";
        } else if (id_fn_(i, &v, &why) && std::get<int64_t>(v) < 0) {
          why = "id " + std::to_string(std::get<int64_t>(v)) +
                " is negative; ids are 0 to 9223372036854775807";
        }
        if (!why.empty()) {
          s = Status::InvalidArgument(Column(options_.id_column) + ", row " +
                                      std::to_string(batch_row_ + i) + ": " + why);
          break;
        }
        chunk->ids.push_back(std::get<int64_t>(v));
      }
    }
    if (s.ok() && options_.attributes) {
      const size_t first = chunk->attributes.size();
      chunk->attributes.resize(first + static_cast<size_t>(n), std::vector<Value>(schema_.size()));
      for (const auto& [fn, pos] : values_) {
        std::string why;
        for (int64_t i = 0; i < n; ++i) {
          if (!fn(offset_ + i, &chunk->attributes[first + i][pos], &why)) {
            s = Status::InvalidArgument(Column(schema_[pos].name) + ", row " +
                                        std::to_string(batch_row_ + offset_ + i) + ": " + why);
            break;
          }
        }
        if (!s.ok()) break;
      }
    }
    if (!s.ok()) {
      failed_ = true;
      return s;
    }
    offset_ += n;
    chunk->rows += static_cast<size_t>(n);
  }
  return Status::OK();
}

Status ArrowParquetReader::AppendVectors(int64_t begin, int64_t n, ParquetChunk* chunk) {
  if (vectors_ == nullptr) return Status::OK();
  using T = arrow::Type;
  const arrow::Array& col = *vectors_;
  const std::shared_ptr<arrow::Array>* values;
  auto offset_of = [&](int64_t i) -> int64_t {
    switch (col.type_id()) {
      case T::FIXED_SIZE_LIST:
        return static_cast<const arrow::FixedSizeListArray&>(col).value_offset(i);
      case T::LIST:
        return static_cast<const arrow::ListArray&>(col).value_offset(i);
      default:
        return static_cast<const arrow::LargeListArray&>(col).value_offset(i);
    }
  };
  auto length_of = [&](int64_t i) -> int64_t {
    switch (col.type_id()) {
      case T::FIXED_SIZE_LIST:
        return static_cast<const arrow::FixedSizeListArray&>(col).value_length(i);
      case T::LIST:
        return static_cast<const arrow::ListArray&>(col).value_length(i);
      default:
        return static_cast<const arrow::LargeListArray&>(col).value_length(i);
    }
  };
  switch (col.type_id()) {
    case T::FIXED_SIZE_LIST:
      values = &static_cast<const arrow::FixedSizeListArray&>(col).values();
      break;
    case T::LIST:
      values = &static_cast<const arrow::ListArray&>(col).values();
      break;
    default:
      values = &static_cast<const arrow::LargeListArray&>(col).values();
      break;
  }
  const arrow::Array& comp = **values;
  const std::string& name = options_.vector_column;
  auto at = [&](int64_t i) {
    return Column(name) + ", row " + std::to_string(batch_row_ + i) + ": ";
  };
  if (dim_ == 0 && n > 0) {
    // A list column without a required dimension takes its first row's.
    if (col.IsNull(begin)) return Status::InvalidArgument(at(begin) + "the vector is null");
    dim_ = static_cast<uint32_t>(std::min<int64_t>(length_of(begin), 65536));
  }
  const size_t dim = dim_;
  const size_t first = chunk->vectors.size();
  chunk->vectors.resize(first + static_cast<size_t>(n) * dim);
  float* out = chunk->vectors.data() + first;
  const bool component_nulls = comp.null_count() > 0;
  for (int64_t i = begin; i < begin + n; ++i, out += dim) {
    if (col.IsNull(i)) {
      return Status::InvalidArgument(at(i) + "the vector is null; every row needs a vector");
    }
    const int64_t len = length_of(i);
    if (static_cast<size_t>(len) != dim) {
      return Status::InvalidArgument(at(i) + "the vector has " + std::to_string(len) +
                                     " components, expected " + std::to_string(dim));
    }
    const int64_t off = offset_of(i);
    if (component_nulls) {
      for (size_t j = 0; j < dim; ++j) {
        if (comp.IsNull(off + static_cast<int64_t>(j))) {
          return Status::InvalidArgument(at(i) + "component " + std::to_string(j) + " is null");
        }
      }
    }
    switch (comp.type_id()) {
      case T::FLOAT: {
        const float* src = static_cast<const arrow::FloatArray&>(comp).raw_values() + off;
        std::memcpy(out, src, dim * sizeof(float));
        break;
      }
      case T::DOUBLE: {
        const double* src = static_cast<const arrow::DoubleArray&>(comp).raw_values() + off;
        for (size_t j = 0; j < dim; ++j) out[j] = static_cast<float>(src[j]);
        break;
      }
      default: {
        const uint16_t* src = static_cast<const arrow::HalfFloatArray&>(comp).raw_values() + off;
        for (size_t j = 0; j < dim; ++j) out[j] = HalfToFloat(src[j]);
        break;
      }
    }
    uint32_t bad = 0;
    for (size_t j = 0; j < dim; ++j) bad |= !std::isfinite(out[j]);
    if (bad) {
      for (size_t j = 0; j < dim; ++j) {
        if (std::isfinite(out[j])) continue;
        return Status::InvalidArgument(at(i) + "component " + std::to_string(j) + " is " +
                                       (std::isnan(out[j]) ? "NaN" : "infinite"));
      }
    }
  }
  return Status::OK();
}

}  // namespace

bool ParquetAvailable() { return true; }

Status ParquetReader::Open(const std::string& path, const std::vector<AttributeSpec>& schema,
                           const ParquetReadOptions& options, std::unique_ptr<ParquetReader>* out) {
  auto reader = std::make_unique<ArrowParquetReader>(path, schema, options);
  Status s;
  try {
    s = reader->Init();
  } catch (const std::bad_alloc&) {
    s = Status::ResourceExhausted("file " + Printable(path, 200) + ": out of memory");
  } catch (const std::exception& e) {
    s = Status::InvalidArgument("file " + Printable(path, 200) + ": " + e.what());
  }
  if (!s.ok()) return s;
  *out = std::move(reader);
  return Status::OK();
}

}  // namespace sieve::io
