// Copyright 2026 The Sieve Authors.

#include "tools/cli/commands.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "sieve/db.h"
#include "tools/cli/cli_util.h"
#include "tools/cli/flags.h"
#include "tools/cli/ingest_stream.h"
#include "tools/io/attributes_reader.h"
#include "tools/io/neighbors_json.h"
#include "tools/io/rows_json.h"
#include "tools/io/npy.h"
#include "tools/io/vectors_reader.h"

namespace sieve::cli {

namespace {

// The engine names a bad per-query filter by its query ("query 2: filter: at position 5: ...");
// a --filters file's user looks for its line, which is the query's number plus one.
Status AtFiltersLine(const Status& s, const std::string& filters_path, size_t num_queries) {
  const std::string& m = s.message();
  if (!m.starts_with("query ")) return s;
  size_t q = 0, i = 6;
  for (; i < m.size() && m[i] >= '0' && m[i] <= '9' && q <= num_queries; ++i) {
    q = q * 10 + static_cast<size_t>(m[i] - '0');
  }
  if (i == 6 || q >= num_queries || m.compare(i, 10, ": filter: ") != 0) return s;
  return Status::InvalidArgument("file " + filters_path + ": line " + std::to_string(q + 1) +
                                 " (query " + std::to_string(q) + "): " + m.substr(i + 2));
}

const char kCreateUsage[] =
    "usage: sieve create DB --collection NAME --dim D [--metric l2|ip|cosine] [--dtype f32|f16]\n"
    "                       [--attr NAME:TYPE]... [--shards N] [--bm25-k1 K1] [--bm25-b B]\n"
    "  TYPE: int (int64) | float (float64) | string | bool | tags (list of strings);\n"
    "  every attribute may be null. Creates DB when it does not exist.\n"
    "  --bm25-k1, --bm25-b: BM25's parameters for text queries (default 1.5 and 0.75).\n";

const char kIngestUsage[] =
    "usage: sieve ingest DB --collection NAME --vectors FILE [--attributes FILE]\n"
    "                       [--ids FILE | --id-field NAME] [--batch-rows N] [--upsert | --auto-ids]\n"
    "  vectors: .npy (2-D float32/float16/float64, C order), .fvecs, one dataset of an\n"
    "           HDF5 file as FILE.hdf5:DATASET (ann-benchmarks: glove-100-angular.hdf5:train),\n"
    "           or one column of a Parquet file as FILE.parquet:COLUMN (fixed_size_list or\n"
    "           list of float, halffloat or double)\n"
    "  attributes: .jsonl (one object per vector row; an absent key is null), .csv with a\n"
    "              header row (an empty field is null; tags are '|'-separated), or .parquet\n"
    "              (every column but the vectors' and the ids' is an attribute, or only those\n"
    "              named as FILE.parquet:COL,COL; Arrow nulls are null). Parquet is streamed\n"
    "              --batch-rows rows at a time, checked whole before the first commit\n"
    "  ids: .npy 1-D int64; --id-field NAME takes them from the attributes file's column or\n"
    "       key NAME instead (integers >= 0, unique); without either, ids are assigned in\n"
    "       ingest order, continuing past the largest id the collection has held (0 for a new\n"
    "       collection)\n"
    "  --upsert: rows whose id is live replace that row (vector and attributes); the others\n"
    "            are inserted. Needs ids. Without it an id that is live is an error.\n"
    "  --auto-ids: rows without ids go into a collection that already has live rows as new\n"
    "            rows with new ids; without it that is an error, so that running the same\n"
    "            ingest twice cannot add every row twice\n"
    "  The whole input is validated before anything is written; rows are then committed in\n"
    "  atomic, durable batches of --batch-rows rows (default 65536).\n"
    "  stdout: {\"ingested\": N, \"replaced\": R, \"rows\": LIVE_ROWS}\n";

const char kQueryUsage[] =
    "usage: sieve query DB --collection NAME (--queries FILE | --text-field F --text WORDS |\n"
    "                      both) --k K [--filter EXPR | --filters FILE] [--device auto|cpu|gpu]\n"
    "                      [--fusion rrf|weighted] [--rrf-c C] [--vector-weight W]\n"
    "                      [--text-weight W] [--depth N]\n"
    "                      [--path auto|sddmm|gather|dense] [--max-memory BYTES|auto]\n"
    "                      [--include LIST] [--explain] [--devices LIST|all]\n"
    "                      [--group-by ATTR [--group-size N] [--group-strategy S]]\n"
    "                      [--cpu-executors N] [--device-memory BYTES]\n"
    "                      [--first-use-calibration unknown|off|always]\n"
    "                      [--radius R [--limit N] | --offset N | --after TOKENS]\n"
    "  queries: .npy, .fvecs or FILE.hdf5:DATASET, as ingest's --vectors\n"
    "  --filters: a text file whose line i is query i's filter (an empty line: no filter)\n"
    "  --max-memory: host memory the search may use (e.g. 2G; default auto: half of the\n"
    "    smaller of physical memory and the address-space limits); a search that needs more\n"
    "    fails at once with a message naming the sizes\n"
    "  --include: attribute names, '*' for every attribute, 'vector' for the vector\n"
    "    (comma-separated): each line then has \"attributes\": [{...} per neighbour] and\n"
    "    \"vectors\": [[...] per neighbour]\n"
    "  stdout: one line per query: {\"query\": i, \"ids\": [...], \"distances\": [...]}\n"
    "  --group-by: the K groups (rows sharing a value of an int, string, bool or tags\n"
    "    attribute; a tags row is in each of its tags' groups; nulls in none) whose best\n"
    "    row is nearest, each with its --group-size (default 1) nearest rows; each line is\n"
    "    then {\"query\": i, \"groups\": [{\"value\": V, \"ids\": [...], \"distances\": [...]}]}\n"
    "    --group-strategy auto|few_groups|many_groups forces the plan (default auto)\n"
    "  --text-field F --text WORDS: a BM25 text query over the text attribute F; alone, one\n"
    "    line whose \"distances\" are BM25 scores (larger is better); with --queries, each\n"
    "    query's line fuses its vector top --depth (default max(k, 100)) with the text\n"
    "    query's (--fusion rrf, the default: Σ w / (C + rank), C = --rrf-c, default 60;\n"
    "    weighted: Σ w · min-max normalized score), \"distances\" the fused scores\n"
    "  --explain: the plan and stage times as one JSON line on stderr; with several\n"
    "    devices, each shard's device and time, and per device its shards and time\n"
    "  range search: --radius R [--limit N] (no --k): every passing row within R (l2, cosine:\n"
    "    distance <= R; ip: score >= R), best first, at most N (default 1000); each line has\n"
    "    \"limit_reached\": true when more rows lie within R\n"
    "  pages: --offset N (rows N .. N+k-1 of the order) or --after TOKENS (the \"next\" of the\n"
    "    page before, comma-separated, one per query; empty: from the start); each line has\n"
    "    \"next\": the cursor of the page after, or null when no rows follow\n";

const char kDeleteUsage[] =
    "usage: sieve delete DB --collection NAME (--ids FILE | --id N... | --filter EXPR)\n"
    "  ids: .npy 1-D integers, or a text file with one id per line. A blank filter is an\n"
    "  error; to delete every row say so, e.g. --filter 'id >= -9223372036854775808'.\n"
    "  stdout: {\"deleted\": N}\n";

const char kStatsUsage[] =
    "usage: sieve stats DB [--collection NAME]\n"
    "  stdout: one JSON line per collection with rows (live), deleted_rows, dim, metric, ...\n";

const char kCheckUsage[] =
    "usage: sieve check DB\n"
    "  Verifies every invariant of the store; exit 0 when all hold, 1 with the problems.\n";

const char kCollectionsUsage[] = "usage: sieve collections DB\n";

const char kRepairUsage[] =
    "usage: sieve repair DB\n"
    "  Salvages a damaged database (after `sieve check` or an open reported damage): every row\n"
    "  whose id, vector and attributes can still be read is copied with the settings into a new\n"
    "  store that takes DB's place; the damaged files move to DB.damaged-<time>. No other process\n"
    "  may have DB open. A database that opens and checks clean is left unchanged.\n"
    "  stdout: one {\"lost\": {...}} line per damaged range (collection, shard, ordinals, rows,\n"
    "  lost_rows, batch_commit, cause), then {\"repaired\", \"rows_kept\", \"rows_lost\", ...}\n";

}  // namespace

int Create(const Args& args) {
  Flags flags({"collection", "dim", "metric", "dtype", "attr", "shards", "bm25-k1", "bm25-b"},
              {}, {"attr"});
  std::string path;
  if (int rc = ParseFlags("create", kCreateUsage, args, &flags, &path); rc >= 0) return rc;
  CollectionSpec spec;
  long long dim = 0, shards = 1;
  Status s = flags.Require("collection", &spec.name);
  if (s.ok()) s = flags.Has("dim") ? flags.GetInt("dim", 0, 1, 65536, &dim)
                                   : Status::InvalidArgument("missing required option --dim");
  if (s.ok()) s = flags.GetInt("shards", 1, 1, 1024, &shards);
  if (s.ok()) s = ParseMetric(flags.Get("metric", "l2"), &spec.metric);
  if (s.ok()) s = ParseDType(flags.Get("dtype", "f32"), &spec.dtype);
  if (s.ok()) s = flags.GetDouble("bm25-k1", spec.bm25_k1, &spec.bm25_k1);
  if (s.ok()) s = flags.GetDouble("bm25-b", spec.bm25_b, &spec.bm25_b);
  if (!s.ok()) return Fail("create", s);
  spec.dim = static_cast<uint32_t>(dim);
  spec.shards = static_cast<uint32_t>(shards);
  for (const std::string& a : flags.GetAll("attr")) {
    // Names hold no ':', so the first one ends the name ("title:text:stem:french").
    auto colon = a.find(':');
    if (colon == std::string::npos) {
      return Fail("create", Status::InvalidArgument("--attr '" + a + "': expected NAME:TYPE"));
    }
    AttributeSpec attr;
    attr.name = a.substr(0, colon);
    s = ParseAttributeType(a.substr(colon + 1), &attr);
    if (!s.ok()) return Fail("create", s.WithContext("--attr '" + a + "'"));
    spec.attributes.push_back(attr);
  }
  // Before the database is opened (and created): a bad name must leave nothing behind.
  s = ValidateCollectionName(spec.name);
  for (size_t i = 0; s.ok() && i < spec.attributes.size(); ++i) {
    s = ValidateAttributeName(spec.attributes[i].name)
            .WithContext("--attr '" + spec.attributes[i].name + "'");
  }
  if (!s.ok()) return Fail("create", s);
  std::unique_ptr<DB> db;
  s = OpenDb(path, OpenFor::kCreate, &db);
  if (s.ok()) s = db->CreateCollection(spec);
  if (!s.ok()) return Fail("create", s);
  std::printf("{\"created\": \"%s\", \"dim\": %u, \"metric\": \"%s\", \"dtype\": \"%s\"}\n",
              spec.name.c_str(), spec.dim, MetricName(spec.metric), DTypeName(spec.dtype));
  return 0;
}

int Ingest(const Args& args) {
  Flags flags({"collection", "vectors", "attributes", "ids", "id-field", "batch-rows"},
              {"upsert", "auto-ids"});
  std::string path;
  if (int rc = ParseFlags("ingest", kIngestUsage, args, &flags, &path); rc >= 0) return rc;
  std::string name, vectors_path;
  long long batch_rows = 0;
  Status s = flags.Require("collection", &name);
  if (s.ok()) s = flags.Require("vectors", &vectors_path);
  if (s.ok()) s = flags.GetInt("batch-rows", 65536, 1, 1LL << 32, &batch_rows);
  const std::string id_field = flags.Get("id-field");
  if (s.ok() && flags.Has("id-field")) {
    if (id_field.empty()) {
      s = Status::InvalidArgument("--id-field: expected the name of a column of --attributes");
    } else if (flags.Has("ids")) {
      s = Status::InvalidArgument("give --ids FILE or --id-field NAME, not both");
    } else if (!flags.Has("attributes")) {
      s = Status::InvalidArgument("--id-field names a column of --attributes FILE, which is "
                                  "missing");
    }
  }
  const bool upsert = flags.Has("upsert");
  if (s.ok() && upsert && !flags.Has("ids") && id_field.empty()) {
    s = Status::InvalidArgument("--upsert needs ids (--ids FILE or --id-field NAME): rows are "
                                "replaced by id");
  }
  if (s.ok() && upsert && flags.Has("auto-ids")) {
    s = Status::InvalidArgument("give --upsert or --auto-ids, not both");
  }
  if (!s.ok()) return Fail("ingest", s);

  std::unique_ptr<DB> db;
  s = OpenDb(path, OpenFor::kWrite, &db);
  std::shared_ptr<Collection> collection;
  if (s.ok()) s = db->GetCollection(name, &collection);
  CollectionStats stats;  // the live rows, for the --auto-ids rule below
  if (s.ok()) s = collection->GetStats(&stats);
  if (!s.ok()) return Fail("ingest", s);
  const CollectionSpec& spec = collection->spec();
  if (IsStreamedIngest(vectors_path, flags.Get("attributes"))) {
    StreamedIngest in;
    in.vectors = vectors_path;
    in.attributes = flags.Get("attributes");
    in.ids = flags.Get("ids");
    in.id_field = id_field;
    in.batch_rows = static_cast<size_t>(batch_rows);
    in.upsert = upsert;
    in.auto_ids = flags.Has("auto-ids");
    return RunStreamedIngest(collection.get(), stats.rows, in);
  }

  io::NpyMatrix vectors;
  s = io::ReadVectorsFile(vectors_path, &vectors);
  if (!s.ok()) return Fail("ingest", s);
  if (vectors.rows > 0 && vectors.cols != spec.dim) {
    return Fail("ingest", Status::InvalidArgument(
                              "file " + vectors_path + ": vectors have dim " +
                              std::to_string(vectors.cols) + ", collection '" + name +
                              "' has dim " + std::to_string(spec.dim)));
  }
  std::vector<int64_t> ids;
  if (flags.Has("ids")) {
    const std::string ids_path = flags.Get("ids");
    s = io::ReadNpyInt64Vector(ids_path, &ids);
    if (!s.ok()) return Fail("ingest", s);
    if (ids.size() != vectors.rows) {
      return Fail("ingest", Status::InvalidArgument(
                                "file " + ids_path + ": " + std::to_string(ids.size()) +
                                " ids for " + std::to_string(vectors.rows) + " vectors"));
    }
  }
  std::vector<std::vector<Value>> attributes;
  if (flags.Has("attributes")) {
    s = io::ReadAttributes(flags.Get("attributes"), spec.attributes, vectors.rows, &attributes,
                           id_field, &ids);
    if (!s.ok()) return Fail("ingest", s);
  }

  RowBatch batch;
  batch.num_rows = vectors.rows;
  batch.dim = static_cast<uint32_t>(vectors.cols);
  batch.vectors = vectors.data.data();
  batch.ids = flags.Has("ids") || !id_field.empty() ? ids.data() : nullptr;
  batch.attributes = flags.Has("attributes") ? attributes.data() : nullptr;
  IngestOptions options;
  options.batch_rows = static_cast<size_t>(batch_rows);
  options.auto_ids = flags.Has("auto-ids");
  auto t0 = std::chrono::steady_clock::now();
  if (vectors.rows > static_cast<size_t>(batch_rows)) {
    options.progress = [t0](size_t done, size_t total) {
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "ingest: %zu of %zu rows committed (%.0f%%, %.1f s)\n", done, total,
                   100.0 * done / total, s);
    };
  }
  IngestResult result;
  if (batch.ids == nullptr && batch.num_rows > 0 && stats.rows > 0 && !options.auto_ids) {
    return Fail("ingest", Status::InvalidArgument(
                              "collection '" + name + "' already has " +
                              std::to_string(stats.rows) +
                              " live rows and these rows have no ids: they would all be added "
                              "again as new rows; give --ids FILE or --id-field NAME, or add "
                              "them as new rows with new ids with --auto-ids"));
  }
  s = upsert ? collection->Upsert(batch, options, &result)
             : collection->Ingest(batch, options, &result);
  if (!s.ok()) return Fail("ingest", s);
  std::printf("{\"ingested\": %zu, \"replaced\": %llu, \"rows\": %llu}\n", result.ingested,
              static_cast<unsigned long long>(result.replaced),
              static_cast<unsigned long long>(result.live_rows));
  return 0;
}

// --text-field, --text and the fusion flags into the request (the engine checks the rest).
Status TextQueryFlags(const Flags& flags, SearchRequest* request) {
  request->text_field = flags.Get("text-field");
  request->text = flags.Get("text");
  Fusion& f = request->fusion;
  if (flags.Has("fusion")) SIEVE_RETURN_IF_ERROR(ParseFusionMethod(flags.Get("fusion"), &f.method));
  if (flags.Has("rrf-c")) SIEVE_RETURN_IF_ERROR(flags.GetDouble("rrf-c", 60, &f.rrf_c));
  if (flags.Has("vector-weight")) {
    SIEVE_RETURN_IF_ERROR(flags.GetDouble("vector-weight", 1, &f.vector_weight));
  }
  if (flags.Has("text-weight")) {
    SIEVE_RETURN_IF_ERROR(flags.GetDouble("text-weight", 1, &f.text_weight));
  }
  long long depth = 0;
  SIEVE_RETURN_IF_ERROR(flags.GetInt("depth", 0, 0, kMaxSearchK, &depth));
  f.depth = static_cast<int>(depth);
  return Status::OK();
}

int Query(const Args& args) {
  std::set<std::string> names = {"collection", "queries", "k",          "filter",
                                 "filters",    "device",  "path",       "max-memory",
                                 "include",    "group-by", "group-size", "group-strategy",
                                 "radius",     "limit",   "offset",     "after",
                                 "text-field", "text",    "fusion",     "rrf-c",
                                 "vector-weight", "text-weight", "depth"};
  names.insert(std::begin(kEngineFlags), std::end(kEngineFlags));
  Flags flags(names, {"explain"});
  std::string path;
  if (int rc = ParseFlags("query", kQueryUsage, args, &flags, &path, kEngineFlagsUsage); rc >= 0) {
    return rc;
  }
  std::string name, queries_path;
  long long k = 0;
  Status s = flags.Require("collection", &name);
  const bool text = flags.Has("text") || flags.Has("text-field");
  if (s.ok() && (!text || flags.Has("queries"))) s = flags.Require("queries", &queries_path);
  if (s.ok() && !flags.Has("k") && !flags.Has("radius")) {
    s = Status::InvalidArgument("missing required option --k (or --radius)");
  }
  // The bound is the engine's (kMaxSearchK); the flag is named here. --filter with --filters is
  // the engine's rule, and its message.
  if (s.ok()) s = flags.GetInt("k", 10, 1, kMaxSearchK, &k);
  SearchOptions options;
  if (s.ok()) s = ParseDevice(flags.Get("device", "auto"), &options.device);
  if (s.ok()) s = ParseSearchPath(flags.Get("path", "auto"), &options.path);
  // group_by's rules (the attribute, the size's bounds) are the engine's, and its messages.
  long long group_size = 1;
  if (s.ok()) s = flags.GetInt("group-size", 1, 1, kMaxGroupSize, &group_size);
  GroupStrategy group_strategy = GroupStrategy::kAuto;
  if (s.ok()) s = ParseGroupStrategy(flags.Get("group-strategy", "auto"), &group_strategy);
  uint64_t budget = 0;
  if (s.ok()) s = ParseMemoryBudget("max-memory", flags.Get("max-memory", "auto"), &budget);
  Options engine;
  if (s.ok()) s = ParseEngineFlags(flags, &engine);
  // Range search and pages: the bounds are the engine's rules (offset + k, limit), and its
  // messages; here only what makes a number.
  std::optional<double> radius;
  long long limit = 1000, offset = 0;
  if (s.ok() && flags.Has("radius")) {
    std::vector<double> r;
    s = ParseNumberList(flags, "radius", -std::numeric_limits<double>::max(),
                        std::numeric_limits<double>::max(), &r);
    if (s.ok() && r.size() != 1) s = Status::InvalidArgument("--radius takes one number");
    if (s.ok()) radius = r[0];
  }
  if (s.ok() && flags.Has("limit") && !flags.Has("radius")) {
    s = Status::InvalidArgument("--limit is the most rows of a range search: it needs --radius");
  }
  if (s.ok()) s = flags.GetInt("limit", 1000, 1, kMaxSearchK, &limit);
  if (s.ok()) s = flags.GetInt("offset", 0, 0, kMaxSearchK, &offset);
  if (!s.ok()) return Fail("query", s);

  std::unique_ptr<DB> db;
  s = OpenDb(path, OpenFor::kRead, &db, budget, engine);
  std::shared_ptr<Collection> collection;
  if (s.ok()) s = db->GetCollection(name, &collection);
  if (!s.ok()) return Fail("query", s);
  const CollectionSpec& spec = collection->spec();
  io::NpyMatrix queries;
  if (!queries_path.empty()) s = io::ReadVectorsFile(queries_path, &queries);
  if (!s.ok()) return Fail("query", s);
  if (queries.rows > 0 && queries.cols != spec.dim) {
    return Fail("query", Status::InvalidArgument(
                             "file " + queries_path + ": queries have dim " +
                             std::to_string(queries.cols) + ", collection '" + name +
                             "' has dim " + std::to_string(spec.dim)));
  }
  SearchRequest request;
  request.queries = queries.data.data();
  request.num_queries = queries.rows;
  request.dim = static_cast<uint32_t>(queries.cols);
  s = Include::Parse(flags.Get("include"), &request.include);
  if (!s.ok()) return Fail("query", s.WithContext("--include"));
  request.k = static_cast<int>(k);
  request.group_by = flags.Get("group-by");
  request.group_size = static_cast<int>(group_size);
  request.group_strategy = group_strategy;
  request.radius = radius;
  request.limit = static_cast<int>(limit);
  if (flags.Has("offset")) request.offset = offset;
  if (flags.Has("after")) {
    // One cursor per query; "" (as in --after '' or 'a,,b') starts that query from the first.
    const std::string text = flags.Get("after");
    size_t start = 0;
    while (true) {
      const size_t comma = text.find(',', start);
      request.after.push_back(text.substr(start, comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  request.filter = flags.Get("filter");
  s = TextQueryFlags(flags, &request);
  if (!s.ok()) return Fail("query", s);
  // A text-only search is one query: --filters then holds one line.
  const size_t lists = queries.rows == 0 && text ? 1 : queries.rows;
  if (flags.Has("filters")) {
    const std::string fpath = flags.Get("filters");
    std::ifstream in(fpath);
    if (!in) return Fail("query", Status::IOError("file " + fpath + ": cannot be opened"));
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      request.filters.push_back(line);
    }
    if (request.filters.size() != lists) {
      return Fail("query", Status::InvalidArgument(
                               "file " + fpath + ": " + std::to_string(request.filters.size()) +
                               " filter lines for " + std::to_string(lists) +
                               (lists == 1 ? " query" : " queries")));
    }
    if (lists == 0) request.filters.clear();
  }
  SearchResult result;
  s = collection->Search(request, options, &result);
  if (!s.ok() && flags.Has("filters")) s = AtFiltersLine(s, flags.Get("filters"), lists);
  // Every line is checked before the first is written: output is whole or absent.
  if (s.ok()) s = io::CheckNeighbors(result.results);
  if (!s.ok()) return Fail("query", s);
  std::string out;
  for (size_t q = 0; q < result.results.size(); ++q) {
    const Neighbors& nb = result.results[q];
    out += "{\"query\": " + std::to_string(q) + ", ";
    if (!request.group_by.empty()) {
      s = io::AppendGroupsJson(nb, result.attribute_names, request.include.vector, &out);
      if (!s.ok()) return Fail("query", s.WithContext("query " + std::to_string(q)));
    } else {
      s = io::AppendNeighborsJson(nb, &out);
      if (!s.ok()) return Fail("query", s.WithContext("query " + std::to_string(q)));
      if (request.radius) {
        out += nb.limit_reached ? ", \"limit_reached\": true" : ", \"limit_reached\": false";
      }
      if (request.offset || !request.after.empty()) {
        out += nb.next.empty() ? ", \"next\": null" : ", \"next\": \"" + nb.next + "\"";
      }
      if (!request.include.empty()) {
        if (!result.attribute_names.empty()) {
          out += ", \"attributes\": [";
          for (size_t i = 0; i < nb.attributes.size(); ++i) {
            if (i) out += ", ";
            io::AppendAttributesJson(result.attribute_names, nb.attributes[i], &out);
          }
          out += "]";
        }
        if (request.include.vector) {
          out += ", \"vectors\": [";
          for (size_t i = 0; i < nb.vectors.size(); ++i) {
            if (i) out += ", ";
            io::AppendVectorJson(nb.vectors[i], &out);
          }
          out += "]";
        }
      }
    }
    out += "}\n";
    if (out.size() > (1 << 20)) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      out.clear();
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  if (flags.Has("explain")) std::fprintf(stderr, "%s\n", result.explain.ToJson().c_str());
  return 0;
}

int Delete(const Args& args) {
  Flags flags({"collection", "ids", "id", "filter"}, {}, {"id"}, {"id"});
  std::string path;
  if (int rc = ParseFlags("delete", kDeleteUsage, args, &flags, &path); rc >= 0) return rc;
  std::string name;
  Status s = flags.Require("collection", &name);
  const bool by_ids = flags.Has("ids") || flags.Has("id");
  if (s.ok() && by_ids == flags.Has("filter")) {
    s = Status::InvalidArgument("give exactly one of --ids FILE, --id N or --filter EXPR");
  }
  std::vector<int64_t> ids;
  if (s.ok() && by_ids) s = ReadIds(flags, &ids);
  if (!s.ok()) return Fail("delete", s);
  std::unique_ptr<DB> db;
  s = OpenDb(path, OpenFor::kWrite, &db);
  std::shared_ptr<Collection> collection;
  if (s.ok()) s = db->GetCollection(name, &collection);
  if (!s.ok()) return Fail("delete", s);
  uint64_t deleted = 0;
  if (by_ids) {
    s = collection->DeleteByIds(ids.data(), ids.size(), &deleted);
  } else {
    s = collection->DeleteByFilter(flags.Get("filter"), &deleted);
  }
  if (!s.ok()) return Fail("delete", s);
  std::printf("{\"deleted\": %llu}\n", static_cast<unsigned long long>(deleted));
  return 0;
}

int Stats(const Args& args) {
  Flags flags({"collection"}, {});
  std::string path;
  if (int rc = ParseFlags("stats", kStatsUsage, args, &flags, &path); rc >= 0) return rc;
  std::unique_ptr<DB> db;
  Status s = OpenDb(path, OpenFor::kRead, &db);
  if (!s.ok()) return Fail("stats", s);
  std::vector<std::string> names;
  if (flags.Has("collection")) {
    names.push_back(flags.Get("collection"));
  } else {
    s = db->ListCollections(&names);
    if (!s.ok()) return Fail("stats", s);
  }
  std::string out;
  for (const auto& n : names) {
    CollectionStats st;
    s = db->GetStats(n, &st);
    if (!s.ok()) return Fail("stats", s);
    out += st.ToJson() + "\n";
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

int Collections(const Args& args) {
  Flags flags({}, {});
  std::string path;
  if (int rc = ParseFlags("collections", kCollectionsUsage, args, &flags, &path); rc >= 0) {
    return rc;
  }
  std::unique_ptr<DB> db;
  Status s = OpenDb(path, OpenFor::kRead, &db);
  std::vector<std::string> names;
  if (s.ok()) s = db->ListCollections(&names);
  if (!s.ok()) return Fail("collections", s);
  for (const auto& n : names) std::printf("{\"collection\": \"%s\"}\n", n.c_str());
  return 0;
}

int Check(const Args& args) {
  Flags flags({}, {});
  std::string path;
  if (int rc = ParseFlags("check", kCheckUsage, args, &flags, &path); rc >= 0) return rc;
  // Every problem is one JSON line on stdout, a store that cannot be opened included.
  auto problem = [](const std::string& text) {
    std::printf("%s\n", nlohmann::json{{"problem", text}}
                             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                             .c_str());
  };
  std::unique_ptr<DB> db;
  Status s = OpenDb(path, OpenFor::kRead, &db);
  if (!s.ok()) {
    if (!s.IsNotFound()) problem(s.ToString());
    return Fail("check", s);
  }
  std::vector<std::string> report;
  s = db->Check(&report);
  if (!s.ok()) {
    for (const std::string& line : report) problem(line);
    if (report.empty()) problem(s.ToString());
    std::fflush(stdout);
    return Fail("check", s);
  }
  std::vector<std::string> names;
  s = db->ListCollections(&names);
  if (!s.ok()) return Fail("check", s);
  std::printf("{\"ok\": true, \"collections\": %zu}\n", names.size());
  return 0;
}

int Repair(const Args& args) {
  Flags flags({}, {});
  std::string path;
  if (int rc = ParseFlags("repair", kRepairUsage, args, &flags, &path); rc >= 0) return rc;
  RepairReport report;
  Status s = DB::Repair(path, &report);
  if (!s.ok()) return Fail("repair", s);
  std::string out;
  for (const RepairLoss& loss : report.losses) out += "{\"lost\": " + loss.ToJson() + "}\n";
  out += report.ToJson() + "\n";
  std::fputs(out.c_str(), stdout);
  if (report.repaired) {
    std::fprintf(stderr,
                 "sieve repair: %llu rows kept, %llu rows lost; the damaged files are in %s\n",
                 static_cast<unsigned long long>(report.rows_kept),
                 static_cast<unsigned long long>(report.rows_lost), report.damaged_copy.c_str());
  } else {
    std::fprintf(stderr, "sieve repair: %s opens and checks clean; nothing was changed\n",
                 path.c_str());
  }
  return 0;
}

}  // namespace sieve::cli
