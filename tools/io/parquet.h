// Copyright 2026 The Sieve Authors.
//
// Apache Parquet files for the CLI, through Apache Arrow's own C++ reader and writer
// (libparquet, libarrow; tools/install-arrow.sh): `sieve ingest --vectors FILE.parquet:COLUMN
// --attributes FILE.parquet` streams a file in record batches, and `sieve export --format
// parquet` writes one. docs/cli.md#parquet has the table of Arrow types each attribute type
// takes.
//
// A file is read in record batches of ParquetReadOptions::batch_rows rows through a read
// buffer of read_buffer_bytes, so memory holds about one batch of decoded rows, whatever the
// file's size or the size of its row groups.
//
// In a build without Arrow (ParquetAvailable() false) every Open returns NotSupported saying
// how to get it. Errors are one line that starts with "file <path>:" and names the column, and
// the row (0-based, counted from the file's first row) when one row is at fault. Nothing here
// throws or aborts on any input. The classes are not thread-safe; separate objects may be used
// from separate threads.

#ifndef SIEVE_TOOLS_IO_PARQUET_H_
#define SIEVE_TOOLS_IO_PARQUET_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sieve/db.h"
#include "sieve/status.h"
#include "sieve/types.h"

namespace sieve::io {

// Whether this build reads and writes Parquet.
bool ParquetAvailable();

// True when the file part of `spec` (before a ':' that follows the extension, if any) ends in
// .parquet or .pq, in any letter case.
bool IsParquetSpec(const std::string& spec);

// Splits "FILE.parquet:REST" at the ':' that follows the extension ("a:b.parquet:emb" →
// "a:b.parquet", "emb"). `*rest` is empty when the spec has none.
void SplitParquetSpec(const std::string& spec, std::string* file, std::string* rest);

struct ParquetReadOptions {
  // The column holding the vectors: fixed_size_list, list or large_list of float32, float16
  // or float64, no vector and no component null. Empty: the reader yields no vectors.
  std::string vector_column;
  // The dimension every vector must have (the collection's). 0: the fixed_size_list's own
  // (a list column then takes the first row's length). Default: 0.
  uint32_t dim = 0;
  // Read attributes for the schema given to Open. Default: false.
  bool attributes = false;
  // The attribute columns to read, each an attribute of the schema. Empty: every column of
  // the file other than vector_column and id_column, each of which must then be an attribute
  // of the schema. Default: empty.
  std::vector<std::string> attribute_columns;
  // The column holding each row's id: integers >= 0, none null. Empty: no ids. Uniqueness is
  // the caller's to check (the file is streamed). Default: empty.
  std::string id_column;
  // Rows the Arrow reader decodes at a time. Default: 16384.
  size_t batch_rows = 16384;
  // Bytes of the file read ahead per column. Default: 1 MiB.
  size_t read_buffer_bytes = size_t{1} << 20;
};

// Rows read from a file: `rows` of them, each with `dim` vector components (when a vector
// column is read), schema.size() attribute values in schema order (when attributes are read;
// columns the file lacks are null) and an id (when an id column is read).
struct ParquetChunk {
  size_t rows = 0;
  std::vector<float> vectors;                  // rows × dim, row-major
  std::vector<std::vector<Value>> attributes;  // rows entries
  std::vector<int64_t> ids;                    // rows entries
};

class ParquetReader {
 public:
  // Opens `path` and checks that every column asked for exists (once) and has an Arrow type
  // its use takes, before any row is read. InvalidArgument, naming the file and the column,
  // for a file that is not Parquet, a column that is missing (the message lists the file's
  // columns), a column of the wrong type, a vector dimension other than options.dim, or a
  // column that is not an attribute of `schema`; IOError when the file cannot be read;
  // NotSupported in a build without Arrow.
  static Status Open(const std::string& path, const std::vector<AttributeSpec>& schema,
                     const ParquetReadOptions& options, std::unique_ptr<ParquetReader>* out);
  virtual ~ParquetReader() = default;

  // The file's rows, from its footer.
  virtual uint64_t num_rows() const = 0;
  // The vectors' dimension (0 without a vector column, or a list column of an empty file).
  virtual uint32_t dim() const = 0;
  // Reads the next rows, at most `max_rows` (> 0) of them, into `*chunk` (replacing what it
  // held); chunk->rows is 0 once every row has been read. InvalidArgument naming the file,
  // column and row for a null vector or component, a vector of another dimension, a NaN or
  // infinite component, a value its attribute cannot take, or a null, negative or
  // out-of-range id; IOError or Corruption (the file's own checks) when the file cannot be
  // read. After an error the reader can only be rewound.
  virtual Status Next(size_t max_rows, ParquetChunk* chunk) = 0;
  // Starts again from the first row.
  virtual Status Rewind() = 0;
  // The most bytes Arrow held at once for this reader (its decoded batch, read buffers and
  // pages), since Open.
  virtual uint64_t peak_arrow_bytes() const = 0;
};

struct ParquetWriteOptions {
  // The columns after "id" (int64, not null), in this order, of the Arrow types
  // docs/cli.md#parquet gives (int64, double, string, bool, list<string>).
  std::vector<AttributeSpec> attributes;
  // Write the vectors as a last column of this name, fixed_size_list<float32, dim>. Empty:
  // none. Default: "vector".
  std::string vector_column = "vector";
  uint32_t dim = 0;
  // Rows per row group. Default: 65536.
  size_t row_group_rows = 65536;
};

class ParquetWriter {
 public:
  // Creates (or truncates) `path`. InvalidArgument when a column name repeats ("id", an
  // attribute, the vector column); IOError when the file cannot be created; NotSupported in
  // a build without Arrow.
  static Status Open(const std::string& path, const ParquetWriteOptions& options,
                     std::unique_ptr<ParquetWriter>* out);
  virtual ~ParquetWriter() = default;
  // Appends rows: each row's attributes in options.attributes order (null as monostate), and
  // its vector of `dim` components when a vector column is written. InvalidArgument for a
  // row of another shape; IOError when the file cannot be written.
  virtual Status Write(const std::vector<Row>& rows) = 0;
  // Writes the footer and closes the file; the file is complete only once this returns OK.
  virtual Status Close() = 0;
};

}  // namespace sieve::io

#endif  // SIEVE_TOOLS_IO_PARQUET_H_
