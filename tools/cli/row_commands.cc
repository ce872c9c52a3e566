// Copyright 2026 The Sieve Authors.
//
// The CLI's row commands: get, count, export, update, drop and compact.

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "sieve/db.h"
#include "tools/cli/cli_util.h"
#include "tools/cli/commands.h"
#include "tools/cli/flags.h"
#include "tools/io/file_util.h"
#include "tools/io/npy.h"
#include "tools/io/parquet.h"
#include "tools/io/rows_json.h"

namespace sieve::cli {

namespace {

const char kGetUsage[] =
    "usage: sieve get DB --collection NAME (--ids FILE | --id N...) [--include LIST]\n"
    "  ids: .npy 1-D integers, or a text file with one id per line\n"
    "  --include: attribute names, '*' for every attribute, 'vector' for the vector\n"
    "    (comma-separated; default '*')\n"
    "  stdout: one line per id, in the order given: {\"id\": N, \"found\": true, \"attributes\":\n"
    "    {...}[, \"vector\": [...]]}, or {\"id\": N, \"found\": false} when no live row has it\n";

const char kCountUsage[] =
    "usage: sieve count DB --collection NAME [--filter EXPR]\n"
    "  The exact number of live rows passing the filter (every live row without one).\n"
    "  stdout: {\"count\": N}\n";

const char kExportUsage[] =
    "usage: sieve export DB --collection NAME [--filter EXPR]\n"
    "                       [--format jsonl|csv|npy|parquet] [--include LIST] [--output PATH]\n"
    "                       [--page-rows N] [--vector-column NAME]\n"
    "  Every live row passing the filter, in ascending id order, streamed page by page\n"
    "  (--page-rows rows at a time, default 10000), so memory stays bounded.\n"
    "  Every page reads one snapshot: the rows as they were when the export began.\n"
    "  --include: attribute names, '*', 'vector' (default '*': every attribute, no vector)\n"
    "  jsonl (default): one {\"id\": N, \"<attribute>\": value, ..., \"vector\": [...]} per row,\n"
    "    to --output FILE or stdout; ingest reads it back with --attributes FILE --id-field id\n"
    "  csv: a header row (id, then the attributes) and one row per row; null is an empty\n"
    "    field and tags are '|'-separated, as ingest reads them; vectors are not written\n"
    "  npy: --output PREFIX writes PREFIX.ids.npy (int64) and PREFIX.vectors.npy (float32),\n"
    "    and PREFIX.attributes.jsonl (one row a line, in the ids' order, without the id) when\n"
    "    attributes are included; ingest reads them back with --vectors PREFIX.vectors.npy\n"
    "    --ids PREFIX.ids.npy --attributes PREFIX.attributes.jsonl\n"
    "  parquet: --output FILE writes one Parquet file: id (int64), the included attributes\n"
    "    (int64, double, string, bool, list<string>; null as null) and the vectors as\n"
    "    fixed_size_list<float, dim> in column --vector-column (default 'vector'); ingest\n"
    "    reads it back with --vectors FILE:vector --attributes FILE --id-field id\n"
    "  stderr: {\"exported\": N}\n";

const char kUpdateUsage[] =
    "usage: sieve update DB --collection NAME (--ids FILE | --id N... | --filter EXPR)\n"
    "                       --set 'NAME = VALUE' [--set ...]\n"
    "  Sets attributes of the chosen live rows without rewriting their vectors, in one atomic\n"
    "  durable commit. VALUE is written as in filters: 3, 3.5, 'text', true, NULL, or\n"
    "  ('a', 'b') for tags.\n"
    "  stdout: {\"updated\": N}\n";

const char kDropUsage[] =
    "usage: sieve drop DB --collection NAME\n"
    "  Removes the collection and every row of it, durably. stdout: {\"dropped\": \"NAME\"}\n";

const char kCompactUsage[] =
    "usage: sieve compact DB [--collection NAME] [--force]\n"
    "  Rewrites every shard holding deleted rows without them (of one collection, or all) and\n"
    "  gives their space back; ids stay as they are. A shard whose deleted rows hold fewer\n"
    "  bytes than its rewrite writes is left as it is (\"note\" says so), unless --force.\n"
    "  stdout: {\"bytes_before\": B, \"bytes_after\": A, \"rows_removed\": N,\n"
    "           \"shards_rewritten\": S, \"shards_skipped\": K, \"rows_left_deleted\": L\n"
    "           [, \"note\": \"why rows were left, or why the store grew\"]}\n";

// Writes `text` to stdout in large pieces.
void Flush(std::string* text) {
  std::fwrite(text->data(), 1, text->size(), stdout);
  text->clear();
}

}  // namespace

Status ReadIds(const Flags& flags, std::vector<int64_t>* ids) {
  ids->clear();
  if (flags.Has("ids") && flags.Has("id")) {
    return Status::InvalidArgument("give --ids FILE or --id N, not both");
  }
  if (flags.Has("ids")) {
    const std::string path = flags.Get("ids");
    if (path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0) {
      return io::ReadNpyInt64Vector(path, ids);
    }
    std::ifstream in(path);
    if (!in) return Status::IOError("file " + path + ": cannot be opened");
    std::string line;
    for (size_t n = 1; std::getline(in, line); ++n) {
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
      if (line.empty()) continue;
      int64_t id = 0;
      Status s = ParseId(line, &id);
      if (!s.ok()) return s.WithContext("file " + path + ", line " + std::to_string(n));
      ids->push_back(id);
    }
    return Status::OK();
  }
  for (const std::string& text : flags.GetAll("id")) {
    int64_t id = 0;
    SIEVE_RETURN_IF_ERROR(ParseId(text, &id).WithContext("--id"));
    ids->push_back(id);
  }
  return Status::OK();
}

Status ParseId(const std::string& text, int64_t* id) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) {
    return Status::InvalidArgument("'" + text + "' is not an integer id");
  }
  *id = v;
  return Status::OK();
}

int Get(const Args& args) {
  Flags flags({"collection", "ids", "id", "include"}, {}, {"id"}, {"id"});
  std::string path;
  if (int rc = ParseFlags("get", kGetUsage, args, &flags, &path); rc >= 0) return rc;
  std::string name;
  Status s = flags.Require("collection", &name);
  if (s.ok() && !flags.Has("ids") && !flags.Has("id")) {
    s = Status::InvalidArgument("give the ids: --ids FILE or --id N");
  }
  std::vector<int64_t> ids;
  if (s.ok()) s = ReadIds(flags, &ids);
  Include include;
  if (s.ok()) s = Include::Parse(flags.Get("include", "*"), &include);
  if (!s.ok()) return Fail("get", s);
  std::unique_ptr<DB> db;
  s = OpenDb(path, OpenFor::kRead, &db);
  GetResult result;
  if (s.ok()) s = db->Get(name, ids.data(), ids.size(), include, &result);
  if (!s.ok()) return Fail("get", s);
  std::string out;
  for (size_t i = 0; i < result.rows.size(); ++i) {
    const Row& row = result.rows[i];
    if (!result.found[i]) {
      out += "{\"id\": " + std::to_string(row.id) + ", \"found\": false}\n";
    } else {
      out += "{\"id\": " + std::to_string(row.id) + ", \"found\": true";
      if (!result.attribute_names.empty()) {
        out += ", \"attributes\": ";
        io::AppendAttributesJson(result.attribute_names, row.attributes, &out);
      }
      if (include.vector) {
        out += ", \"vector\": ";
        io::AppendVectorJson(row.vector, &out);
      }
      out += "}\n";
    }
    if (out.size() > (1 << 20)) Flush(&out);
  }
  Flush(&out);
  return 0;
}

int Count(const Args& args) {
  Flags flags({"collection", "filter"}, {});
  std::string path;
  if (int rc = ParseFlags("count", kCountUsage, args, &flags, &path); rc >= 0) return rc;
  std::string name;
  Status s = flags.Require("collection", &name);
  if (!s.ok()) return Fail("count", s);
  std::unique_ptr<DB> db;
  s = OpenDb(path, OpenFor::kRead, &db);
  uint64_t count = 0;
  if (s.ok()) s = db->Count(name, flags.Get("filter"), &count);
  if (!s.ok()) return Fail("count", s);
  std::printf("{\"count\": %llu}\n", static_cast<unsigned long long>(count));
  return 0;
}

namespace {

// Where export writes: a file, or stdout.
class Sink {
 public:
  Status Open(const std::string& path) {
    if (path.empty()) return Status::OK();
    to_file_ = true;
    return file_.Open(path);
  }
  Status Write(std::string* text) {
    Status s;
    if (to_file_) {
      s = file_.Append(text->data(), text->size());
    } else if (std::fwrite(text->data(), 1, text->size(), stdout) != text->size()) {
      s = Status::IOError("writing to stdout failed");
    }
    text->clear();
    return s;
  }
  Status Close() {
    if (to_file_) return file_.Close();
    return std::fflush(stdout) == 0 ? Status::OK() : Status::IOError("writing to stdout failed");
  }

 private:
  bool to_file_ = false;
  io::OutputFile file_;
};

// Every page of `request` into one Parquet file.
int ExportParquet(DB* db, const std::string& name, const CollectionSpec& spec,
                  const std::string& vector_column, const std::string& output,
                  ScanRequest* request) {
  std::vector<std::string> names;
  Status s = request->include.AttributeNames(spec, &names);
  if (!s.ok()) return Fail("export", s.WithContext("--include"));
  io::ParquetWriteOptions options;
  for (const std::string& n : names) {
    for (const AttributeSpec& a : spec.attributes) {
      if (a.name == n) options.attributes.push_back(a);
    }
  }
  options.vector_column = vector_column;
  options.dim = spec.dim;
  std::unique_ptr<io::ParquetWriter> writer;
  s = io::ParquetWriter::Open(output, options, &writer);
  if (!s.ok()) return Fail("export", s);
  uint64_t exported = 0;
  for (;;) {
    ScanResult page;
    s = db->Scan(name, *request, &page);
    if (s.ok()) s = writer->Write(page.rows);
    if (!s.ok()) return Fail("export", s);
    exported += page.rows.size();
    if (page.done) break;
    request->has_after = true;
    request->after = page.next;
  }
  s = writer->Close();
  if (!s.ok()) return Fail("export", s);
  std::fprintf(stderr, "{\"exported\": %llu}\n", static_cast<unsigned long long>(exported));
  return 0;
}

}  // namespace

int Export(const Args& args) {
  Flags flags({"collection", "filter", "format", "include", "output", "page-rows", "vector-column"},
              {});
  std::string path;
  if (int rc = ParseFlags("export", kExportUsage, args, &flags, &path); rc >= 0) return rc;
  std::string name;
  long long page_rows = 0;
  Status s = flags.Require("collection", &name);
  const std::string format = flags.Get("format", "jsonl");
  if (s.ok() && format != "jsonl" && format != "csv" && format != "npy" && format != "parquet") {
    s = Status::InvalidArgument("--format: '" + format + "' is not jsonl, csv, npy or parquet");
  }
  if (s.ok() && format == "npy" && !flags.Has("output")) {
    s = Status::InvalidArgument("--format npy writes files: give --output PREFIX");
  }
  if (s.ok() && format == "parquet" && !flags.Has("output")) {
    s = Status::InvalidArgument("--format parquet writes a file: give --output FILE");
  }
  if (s.ok() && format == "parquet" && !io::ParquetAvailable()) {
    std::unique_ptr<io::ParquetWriter> unavailable;
    s = io::ParquetWriter::Open(flags.Get("output"), io::ParquetWriteOptions(), &unavailable);
  }
  if (s.ok() && flags.Has("vector-column") && format != "parquet") {
    s = Status::InvalidArgument("--vector-column names the vector column of --format parquet");
  }
  if (s.ok() && flags.Has("vector-column") && flags.Get("vector-column").empty()) {
    s = Status::InvalidArgument("--vector-column: expected a column name");
  }
  if (s.ok()) s = flags.GetInt("page-rows", 10000, 1, 1000000, &page_rows);
  ScanRequest request;
  request.filter = flags.Get("filter");
  request.limit = static_cast<size_t>(page_rows);
  if (s.ok()) s = Include::Parse(flags.Get("include", "*"), &request.include);
  if (s.ok() && (format == "npy" || format == "parquet")) request.include.vector = true;
  if (s.ok() && format == "csv" && request.include.vector) {
    s = Status::InvalidArgument("--format csv does not write vectors (use jsonl or npy)");
  }
  if (!s.ok()) return Fail("export", s);
  std::unique_ptr<DB> db;
  s = OpenDb(path, OpenFor::kRead, &db);
  CollectionStats stats;
  if (s.ok()) s = db->GetStats(name, &stats);
  // Every page, and the count npy headers carry, read one snapshot: one version of the rows
  // however many pages it takes (the DB, and with it the snapshot, is freed on return).
  const Snapshot* snapshot = nullptr;
  if (s.ok()) s = db->GetSnapshot(&snapshot);
  request.snapshot = snapshot;
  ReadOptions read;
  read.snapshot = snapshot;
  uint64_t expected = 0;
  if (s.ok() && format == "npy") s = db->Count(read, name, request.filter, &expected);
  if (!s.ok()) return Fail("export", s);
  const uint32_t dim = stats.spec.dim;

  const std::string output = flags.Get("output");
  if (format == "parquet") {
    return ExportParquet(db.get(), name, stats.spec, flags.Get("vector-column", "vector"), output,
                         &request);
  }
  Sink main_sink, ids_sink, attrs_sink;
  const bool npy = format == "npy";
  bool attrs_file = false;
  std::string buf, ids_buf, attrs_buf;
  if (npy) {
    s = main_sink.Open(output + ".vectors.npy");
    if (s.ok()) s = ids_sink.Open(output + ".ids.npy");
    buf = io::NpyPreamble("<f4", "(" + std::to_string(expected) + ", " + std::to_string(dim) + ")");
    ids_buf = io::NpyPreamble("<i8", "(" + std::to_string(expected) + ",)");
  } else {
    s = main_sink.Open(output);
  }
  if (!s.ok()) return Fail("export", s);
  uint64_t exported = 0;
  bool first_page = true;
  for (;;) {
    ScanResult page;
    s = db->Scan(name, request, &page);
    if (!s.ok()) return Fail("export", s);
    const auto& names = page.attribute_names;
    if (first_page) {
      first_page = false;
      if (npy && !names.empty()) {
        attrs_file = true;
        s = attrs_sink.Open(output + ".attributes.jsonl");
        if (!s.ok()) return Fail("export", s);
      }
      if (format == "csv") {
        buf += "id";
        for (const std::string& n : names) {
          buf += ',';
          io::AppendCsvField(n, &buf);
        }
        buf += '\n';
      }
    }
    for (const Row& row : page.rows) {
      if (npy) {
        ids_buf.append(reinterpret_cast<const char*>(&row.id), sizeof(row.id));
        buf.append(reinterpret_cast<const char*>(row.vector.data()), dim * sizeof(float));
        if (attrs_file) {
          // No "id": line i goes with PREFIX.ids.npy's i-th id, as ingest --ids reads them.
          attrs_buf += "{";
          for (size_t a = 0; a < names.size(); ++a) {
            if (a > 0) attrs_buf += ", ";
            io::AppendJsonString(names[a], &attrs_buf);
            attrs_buf += ": ";
            io::AppendValueJson(row.attributes[a], &attrs_buf);
          }
          attrs_buf += "}\n";
        }
      } else if (format == "csv") {
        buf += std::to_string(row.id);
        for (const Value& v : row.attributes) {
          buf += ',';
          io::AppendValueCsv(v, &buf);
        }
        buf += '\n';
      } else {
        buf += "{\"id\": " + std::to_string(row.id);
        for (size_t a = 0; a < names.size(); ++a) {
          buf += ", ";
          io::AppendJsonString(names[a], &buf);
          buf += ": ";
          io::AppendValueJson(row.attributes[a], &buf);
        }
        if (request.include.vector) {
          buf += ", \"vector\": ";
          io::AppendVectorJson(row.vector, &buf);
        }
        buf += "}\n";
      }
    }
    exported += page.rows.size();
    if (npy && exported > expected) break;
    s = main_sink.Write(&buf);
    if (s.ok() && npy) s = ids_sink.Write(&ids_buf);
    if (s.ok() && attrs_file) s = attrs_sink.Write(&attrs_buf);
    if (!s.ok()) return Fail("export", s);
    if (page.done) break;
    request.has_after = true;
    request.after = page.next;
  }
  if (npy && exported != expected) {
    return Fail("export", Status::Internal("the collection changed during the export: " +
                                           std::to_string(expected) + " rows were counted, " +
                                           std::to_string(exported) + " read"));
  }
  s = main_sink.Close();
  if (s.ok() && npy) s = ids_sink.Close();
  if (s.ok() && attrs_file) s = attrs_sink.Close();
  if (!s.ok()) return Fail("export", s);
  std::fprintf(stderr, "{\"exported\": %llu}\n", static_cast<unsigned long long>(exported));
  return 0;
}

int Update(const Args& args) {
  Flags flags({"collection", "ids", "id", "filter", "set"}, {}, {"id", "set"}, {"id"});
  std::string path;
  if (int rc = ParseFlags("update", kUpdateUsage, args, &flags, &path); rc >= 0) return rc;
  std::string name;
  Status s = flags.Require("collection", &name);
  const bool by_ids = flags.Has("ids") || flags.Has("id");
  if (s.ok() && by_ids == flags.Has("filter")) {
    s = Status::InvalidArgument("give exactly one of --ids FILE, --id N or --filter EXPR");
  }
  if (s.ok() && !flags.Has("set")) s = Status::InvalidArgument("missing required option --set");
  std::vector<int64_t> ids;
  if (s.ok() && by_ids) s = ReadIds(flags, &ids);
  if (!s.ok()) return Fail("update", s);
  std::unique_ptr<DB> db;
  s = OpenDb(path, OpenFor::kWrite, &db);
  CollectionStats stats;
  if (s.ok()) s = db->GetStats(name, &stats);
  if (!s.ok()) return Fail("update", s);
  UpdateRequest request;
  for (const std::string& text : flags.GetAll("set")) {
    std::string attr;
    Value value;
    s = ParseAssignment(text, stats.spec, &attr, &value);
    if (!s.ok()) return Fail("update", s.WithContext("--set '" + text + "'"));
    request.set.emplace_back(attr, std::move(value));
  }
  if (by_ids) {
    request.ids = ids.data();
    request.num_ids = ids.size();
    if (ids.empty()) {
      std::printf("{\"updated\": 0}\n");
      return 0;
    }
  } else {
    request.filter = flags.Get("filter");
  }
  uint64_t updated = 0;
  s = db->Update(name, request, &updated);
  if (!s.ok()) return Fail("update", s);
  std::printf("{\"updated\": %llu}\n", static_cast<unsigned long long>(updated));
  return 0;
}

int Drop(const Args& args) {
  Flags flags({"collection"}, {});
  std::string path;
  if (int rc = ParseFlags("drop", kDropUsage, args, &flags, &path); rc >= 0) return rc;
  std::string name;
  Status s = flags.Require("collection", &name);
  if (!s.ok()) return Fail("drop", s);
  std::unique_ptr<DB> db;
  s = OpenDb(path, OpenFor::kWrite, &db);
  if (s.ok()) s = db->DropCollection(name);
  if (!s.ok()) return Fail("drop", s);
  std::string out = "{\"dropped\": ";
  io::AppendJsonString(name, &out);
  std::printf("%s}\n", out.c_str());
  return 0;
}

int Compact(const Args& args) {
  Flags flags({"collection"}, {"force"});
  std::string path;
  if (int rc = ParseFlags("compact", kCompactUsage, args, &flags, &path); rc >= 0) return rc;
  std::unique_ptr<DB> db;
  Status s = OpenDb(path, OpenFor::kWrite, &db);
  CompactOptions options;
  options.force = flags.Has("force");
  CompactResult result;
  if (s.ok()) s = db->Compact(flags.Get("collection"), options, &result);
  if (!s.ok()) return Fail("compact", s);
  nlohmann::ordered_json out = {{"bytes_before", result.bytes_before},
                                {"bytes_after", result.bytes_after},
                                {"rows_removed", result.rows_removed},
                                {"shards_rewritten", result.shards_rewritten},
                                {"shards_skipped", result.shards_skipped},
                                {"rows_left_deleted", result.rows_left_deleted}};
  if (!result.note.empty()) out["note"] = result.note;
  std::printf("%s\n", out.dump().c_str());
  return 0;
}

}  // namespace sieve::cli
