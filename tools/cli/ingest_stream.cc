// Copyright 2026 The Sieve Authors.

#include "tools/cli/ingest_stream.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <vector>

#include "tools/cli/cli_util.h"
#include "tools/io/attributes_reader.h"
#include "tools/io/npy.h"
#include "tools/io/parquet.h"
#include "tools/io/vectors_reader.h"

namespace sieve::cli {

namespace {

Status WithMessage(const Status& s, const std::string& msg) {
  switch (s.code()) {
    case Status::Code::kOk:
      return Status::OK();
    case Status::Code::kNotFound:
      return Status::NotFound(msg);
    case Status::Code::kCorruption:
      return Status::Corruption(msg);
    case Status::Code::kNotSupported:
      return Status::NotSupported(msg);
    case Status::Code::kInvalidArgument:
      return Status::InvalidArgument(msg);
    case Status::Code::kIOError:
      return Status::IOError(msg);
    case Status::Code::kAlreadyExists:
      return Status::AlreadyExists(msg);
    case Status::Code::kResourceExhausted:
      return Status::ResourceExhausted(msg);
    case Status::Code::kUnavailable:
      return Status::Unavailable(msg);
    default:
      return Status::Internal(msg);
  }
}

bool SameFile(const std::string& a, const std::string& b) {
  if (a == b) return true;
  std::error_code ec;
  const bool same = std::filesystem::equivalent(a, b, ec);
  return !ec && same;
}

// One source of rows, read --batch-rows rows at a time: a Parquet reader, or rows held whole.
struct Inputs {
  uint32_t dim = 0;
  size_t rows = 0;
  // Vectors: from `vectors` (Parquet) or `matrix`.
  std::unique_ptr<io::ParquetReader> vectors;
  io::NpyMatrix matrix;
  // Attributes: from `vectors` (the same Parquet file), `attributes` (another), `attribute_rows`
  // (.jsonl, .csv), or none.
  bool attributes_with_vectors = false;
  std::unique_ptr<io::ParquetReader> attributes;
  std::vector<std::vector<Value>> attribute_rows;
  bool has_attribute_rows = false;
  // Ids: from the Parquet reader that reads the id column, or `ids` (--ids, or the id field of
  // a .jsonl/.csv), or none.
  io::ParquetReader* id_reader = nullptr;
  std::vector<int64_t> ids;
  bool has_ids = false;
  std::string ids_source;  // for messages
};

Status OpenInputs(const CollectionSpec& spec, const StreamedIngest& in, Inputs* out) {
  std::string vfile, vcolumn, afile, acolumns;
  const bool vparquet = io::IsParquetSpec(in.vectors);
  const bool aparquet = !in.attributes.empty() && io::IsParquetSpec(in.attributes);
  if (vparquet) io::SplitParquetSpec(in.vectors, &vfile, &vcolumn);
  if (aparquet) io::SplitParquetSpec(in.attributes, &afile, &acolumns);
  if (vparquet && vcolumn.empty()) {
    return Status::InvalidArgument("--vectors " + in.vectors +
                                   ": name the column that holds the vectors, as FILE.parquet:"
                                   "COLUMN");
  }
  io::ParquetReadOptions aoptions;
  aoptions.attributes = true;
  aoptions.attribute_columns = SplitList(acolumns);
  if (aparquet &&
      (in.attributes.back() == ':' || (!acolumns.empty() && aoptions.attribute_columns.empty()))) {
    return Status::InvalidArgument("--attributes " + in.attributes +
                                   ": no column named after the ':'");
  }
  aoptions.id_column = in.id_field;
  out->attributes_with_vectors = vparquet && aparquet && SameFile(vfile, afile);
  if (vparquet) {
    io::ParquetReadOptions voptions;
    if (out->attributes_with_vectors) voptions = aoptions;
    voptions.vector_column = vcolumn;
    voptions.dim = spec.dim;
    SIEVE_RETURN_IF_ERROR(io::ParquetReader::Open(vfile, spec.attributes, voptions, &out->vectors));
    out->rows = out->vectors->num_rows();
  } else {
    SIEVE_RETURN_IF_ERROR(io::ReadVectorsFile(in.vectors, &out->matrix));
    if (out->matrix.rows > 0 && out->matrix.cols != spec.dim) {
      return Status::InvalidArgument("file " + in.vectors + ": vectors have dim " +
                                     std::to_string(out->matrix.cols) + ", collection '" +
                                     spec.name + "' has dim " + std::to_string(spec.dim));
    }
    out->rows = out->matrix.rows;
  }
  out->dim = spec.dim;
  if (out->attributes_with_vectors) {
    if (!in.id_field.empty()) out->id_reader = out->vectors.get();
  } else if (aparquet) {
    SIEVE_RETURN_IF_ERROR(
        io::ParquetReader::Open(afile, spec.attributes, aoptions, &out->attributes));
    if (out->attributes->num_rows() != out->rows) {
      return Status::InvalidArgument("attributes file " + afile + " has " +
                                     std::to_string(out->attributes->num_rows()) +
                                     " rows, vectors have " + std::to_string(out->rows));
    }
    if (!in.id_field.empty()) out->id_reader = out->attributes.get();
  } else if (!in.attributes.empty()) {
    SIEVE_RETURN_IF_ERROR(io::ReadAttributes(in.attributes, spec.attributes, out->rows,
                                             &out->attribute_rows, in.id_field, &out->ids));
    out->has_attribute_rows = true;
  }
  if (!in.id_field.empty()) {
    out->has_ids = true;
    out->ids_source = "file " + (aparquet ? afile : in.attributes) + ": " +
                      (out->id_reader != nullptr ? "column '" : "id field '") + in.id_field + "'";
  }
  if (!in.ids.empty()) {
    SIEVE_RETURN_IF_ERROR(io::ReadNpyInt64Vector(in.ids, &out->ids));
    if (out->ids.size() != out->rows) {
      return Status::InvalidArgument("file " + in.ids + ": " + std::to_string(out->ids.size()) +
                                     " ids for " + std::to_string(out->rows) + " vectors");
    }
    out->has_ids = true;
    out->ids_source = "file " + in.ids;
  }
  return Status::OK();
}

// Ids repeated anywhere in the input (the engine sees one batch at a time).
Status CheckUniqueIds(const std::vector<int64_t>& ids, const std::string& source) {
  std::vector<int64_t> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  auto dup = std::adjacent_find(sorted.begin(), sorted.end());
  if (dup == sorted.end()) return Status::OK();
  const int64_t id = *dup;
  size_t first = ids.size();
  for (size_t r = 0; r < ids.size(); ++r) {
    if (ids[r] != id) continue;
    if (first == ids.size()) {
      first = r;
      continue;
    }
    return Status::InvalidArgument(source + ": row " + std::to_string(r) + ": id " +
                                   std::to_string(id) + " repeats the id of row " +
                                   std::to_string(first) + "; ids must be unique");
  }
  return Status::OK();
}

}  // namespace

bool IsStreamedIngest(const std::string& vectors, const std::string& attributes) {
  return io::IsParquetSpec(vectors) || (!attributes.empty() && io::IsParquetSpec(attributes));
}

Status ShiftRowNumbers(const Status& s, size_t first_row) {
  if (s.ok() || first_row == 0) return s;
  const std::string& m = s.message();
  std::string out;
  size_t i = 0;
  while (i < m.size()) {
    size_t word = 0;
    if (m.compare(i, 4, "row ") == 0 && (i == 0 || m[i - 1] == ' ' || m[i - 1] == '(')) {
      word = 4;
    } else if (m.compare(i, 5, "rows ") == 0 && (i == 0 || m[i - 1] == ' ' || m[i - 1] == '(')) {
      word = 5;
    }
    if (word == 0) {
      out += m[i++];
      continue;
    }
    out.append(m, i, word);
    i += word;
    // A number, or a range "A..B".
    for (int part = 0; part < 2; ++part) {
      size_t j = i;
      unsigned long long v = 0;
      while (j < m.size() && m[j] >= '0' && m[j] <= '9' && j - i < 19) {
        v = v * 10 + static_cast<unsigned long long>(m[j] - '0');
        ++j;
      }
      if (j == i) break;
      out += std::to_string(v + first_row);
      i = j;
      if (part == 0 && m.compare(i, 2, "..") == 0) {
        out += "..";
        i += 2;
      } else {
        break;
      }
    }
  }
  return WithMessage(s, out);
}

int RunStreamedIngest(Collection* collection, uint64_t live_rows, const StreamedIngest& in) {
  const CollectionSpec& spec = collection->spec();
  Inputs inputs;
  Status s = OpenInputs(spec, in, &inputs);
  if (!s.ok()) return Fail("ingest", s);
  const size_t n = inputs.rows;
  if (!inputs.has_ids && n > 0 && live_rows > 0 && !in.auto_ids) {
    return Fail("ingest",
                Status::InvalidArgument(
                    "collection '" + spec.name + "' already has " + std::to_string(live_rows) +
                    " live rows and these rows have no ids: they would all be added "
                    "again as new rows; give --ids FILE or --id-field NAME, or add "
                    "them as new rows with new ids with --auto-ids"));
  }
  const size_t batch = std::max<size_t>(1, in.batch_rows);
  const auto t0 = std::chrono::steady_clock::now();
  io::ParquetChunk vchunk, achunk;
  std::vector<int64_t> streamed_ids;  // the ids of the id column, kept by the first pass
  IngestResult total;

  // Pass 0 checks every row and writes nothing; pass 1 commits.
  for (int pass = 0; pass < 2; ++pass) {
    if (inputs.vectors != nullptr) s = inputs.vectors->Rewind();
    if (s.ok() && inputs.attributes != nullptr) s = inputs.attributes->Rewind();
    if (!s.ok()) return Fail("ingest", s);
    for (size_t done = 0; done < n || (done == 0 && n == 0);) {
      const size_t m = std::min(batch, n - done);
      RowBatch rows;
      rows.num_rows = m;
      rows.dim = spec.dim;
      if (inputs.vectors != nullptr && m > 0) {
        s = inputs.vectors->Next(m, &vchunk);
        if (s.ok() && vchunk.rows != m) {
          s = Status::Corruption("--vectors " + in.vectors + ": the file ended at row " +
                                 std::to_string(done + vchunk.rows) + " of the " +
                                 std::to_string(n) + " its footer counts");
        }
        rows.vectors = vchunk.vectors.data();
      } else {
        rows.vectors = inputs.matrix.data.data() + done * spec.dim;
      }
      if (s.ok() && inputs.attributes != nullptr && m > 0) {
        s = inputs.attributes->Next(m, &achunk);
        if (s.ok() && achunk.rows != m) {
          s = Status::Corruption("--attributes " + in.attributes + ": the file ended at row " +
                                 std::to_string(done + achunk.rows) + " of the " +
                                 std::to_string(n) + " its footer counts");
        }
      }
      if (!s.ok()) return Fail("ingest", s);
      if (inputs.attributes_with_vectors) {
        rows.attributes = vchunk.attributes.data();
      } else if (inputs.attributes != nullptr) {
        rows.attributes = achunk.attributes.data();
      } else if (inputs.has_attribute_rows) {
        rows.attributes = inputs.attribute_rows.data() + done;
      }
      if (inputs.id_reader != nullptr) {
        const io::ParquetChunk& c = inputs.id_reader == inputs.vectors.get() ? vchunk : achunk;
        rows.ids = c.ids.data();
        if (pass == 0) streamed_ids.insert(streamed_ids.end(), c.ids.begin(), c.ids.end());
      } else if (inputs.has_ids) {
        rows.ids = inputs.ids.data() + done;
      }
      IngestOptions options;
      options.batch_rows = 0;  // one commit per batch of --batch-rows rows
      options.validate_only = pass == 0;
      // After the first commit the collection has live rows: the next batches without ids
      // are what --auto-ids (or an empty collection) already allowed.
      options.auto_ids = in.auto_ids || done > 0;
      IngestResult result;
      s = in.upsert ? collection->Upsert(rows, options, &result)
                    : collection->Ingest(rows, options, &result);
      if (!s.ok()) return Fail("ingest", ShiftRowNumbers(s, done));
      total.ingested += result.ingested;
      total.replaced += result.replaced;
      total.live_rows = result.live_rows;
      done += m;
      if (m == 0) break;
      if (pass == 1 && n > batch) {
        const double secs =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::fprintf(stderr, "ingest: %zu of %zu rows committed (%.0f%%, %.1f s)\n", done, n,
                     100.0 * static_cast<double>(done) / static_cast<double>(n), secs);
      }
    }
    if (pass == 0 && inputs.has_ids) {
      s = CheckUniqueIds(inputs.id_reader != nullptr ? streamed_ids : inputs.ids,
                         inputs.ids_source);
      if (!s.ok()) return Fail("ingest", s);
      streamed_ids = std::vector<int64_t>();
    }
  }
  std::printf("{\"ingested\": %zu, \"replaced\": %llu, \"rows\": %llu}\n", total.ingested,
              static_cast<unsigned long long>(total.replaced),
              static_cast<unsigned long long>(total.live_rows));
  return 0;
}

}  // namespace sieve::cli
