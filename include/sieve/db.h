// Copyright 2026 The Sieve Authors.
//
// sieve::DB is an embedded vector database: named collections of rows (a 64-bit id, a vector
// and typed nullable attributes) persisted in RocksDB, answering exact attribute-filtered
// k-nearest-neighbour queries on the CPU or an NVIDIA GPU.
//
//   std::unique_ptr<sieve::DB> db;
//   sieve::Status s = sieve::DB::Open(sieve::Options(), "/tmp/db", &db);
//   s = db->CreateCollection(spec);
//   s = db->Ingest("items", batch, sieve::IngestOptions(), &ingested);
//   s = db->Search("items", request, sieve::SearchOptions(), &result);
//
// Thread-safety: a DB may be used from many threads at once. Searches of one collection run
// concurrently with each other; ingests and deletes of a collection are serialized with its
// searches, so a search sees each write batch wholly or not at all. Only one process may open
// a database at a time (Open returns IOError when another holds its lock).

#ifndef SIEVE_INCLUDE_SIEVE_DB_H_
#define SIEVE_INCLUDE_SIEVE_DB_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sieve/gpu_options.h"
#include "sieve/status.h"
#include "sieve/types.h"
#include "sieve/version.h"

namespace sieve {

// A GPU's first-use calibration: what the first search on a GPU does when the database holds no
// calibration for it (`sieve calibrate`) and Sieve ships no thresholds for it
// (PlannerThresholds::DefaultsFor): a short timed sweep of its three paths on synthetic shards
// and a fit of the thresholds to it, announced through `notice` and stored in the database as
// `sieve calibrate` stores its own (not in a read-only database: there it lasts as long as the
// DB), so it runs once per device and database. Searches on that device wait for it; a sweep
// that fails leaves the device on the GPU defaults (cuVS 26.10's rule), announced too, and the
// search goes on. docs/planner.md#first-use-calibration.
struct FirstUseCalibration {
  enum class Mode : uint8_t {
    kUnknownDevices = 0,  // on GPUs without shipped thresholds
    kOff = 1,             // never: those GPUs plan with the GPU defaults until calibrated
    kAlways = 2,          // on every GPU without a stored calibration, shipped thresholds or not
  };
  Mode mode = Mode::kUnknownDevices;
  // The sweep stops before its next shape once this many seconds have passed, and fits what it
  // measured (a limit that leaves nothing measured leaves the GPU defaults, announced). Finite,
  // >= 0; 0: no limit. Default: 30.
  double time_limit_s = 30;
  // Its largest shard, in rows (1 to 2^32 - 1): the sweep times shards of 8,192, 200,000 and
  // 2,000,000 rows below this, then this many when it is below 2,000,000, at dims 128 and 512
  // (2,000,000 x 512 holds 2 GB on the device and 4 GB of host memory while it is timed).
  // Default: 2,000,000.
  uint64_t max_rows = 2000000;
  // Gets the announcements (the calibration starts; what it found and where it is stored, or
  // why it failed), one line a call, from the searching thread. Null: standard error.
  std::function<void(const std::string&)> notice;
};

struct Options {
  // Create the database when `path` does not hold one. Default: true.
  bool create_if_missing = true;
  // Refuse to open an existing database. Default: false.
  bool error_if_exists = false;
  // Open without writing anything, for read-only work (search, stats, check): no file is
  // created, changed or removed, so it works on a read-only copy, on a full disk, and while
  // another process (`sieve serve`) has the database open for writing; it sees what that
  // process had committed when Open ran. Writes return NotSupported. With read_only, a path
  // without a database is NotFound whatever create_if_missing says. Default: false.
  bool read_only = false;
  // With read_only: every read of this DB sees one version of the store, the one committed when
  // Open ran, however long it stays open and whatever a writer does meanwhile (its ingests,
  // compactions and RocksDB's background work delete files; the files of that version are kept
  // open, so their space returns to the file system when this DB is closed). Open tries a few
  // times when the writer moves files during it, and uses the plain mode below when no whole
  // version can be held. false: RocksDB's plain read-only mode, which opens files by name as it
  // reads and may report a file a writer deleted meanwhile as missing. Default: true.
  bool read_only_fixed_view = true;
  // Host memory that the searches of this DB may hold at once, in bytes. Every Search computes
  // what it will allocate (filter row sets, the executor's tiles, bitsets and heaps, the
  // candidates of every shard and the results) before allocating it and reserves that much:
  // a search that needs more than the whole budget returns ResourceExhausted at once (naming
  // the sizes); one that fits waits, first come first served, until concurrent searches have
  // released enough. Memory that outlives a search (loaded vectors and indexes, RocksDB's
  // caches) is not counted. 0 means DefaultMemoryBudget(). Default: 0.
  uint64_t memory_budget_bytes = 0;
  // Compiled filters kept between searches, in bytes: the row set of each (filter text,
  // shard) that a search compiled, until a write changes the shard (least recently used out
  // at the bound), so searches that repeat filters compile each once. Shown by explain as
  // "filters_cached". 0 keeps none. Default: 64 MiB.
  uint64_t filter_cache_bytes = uint64_t{64} << 20;
  // How the GPU executors run searches (sieve/gpu_options.h); each executor's `device` is
  // taken from `devices` below. Default: its defaults.
  GpuExecutorOptions gpu;
  // The CUDA devices that searches on the GPU (SearchOptions::device kGpu, or kAuto with a GPU)
  // spread a collection's shards over: one GPU executor per entry, each holding the shards
  // placed on it resident and searching them, all devices at once; results merge exactly, as
  // across the shards of one device. A device may be listed more than once (several executors
  // on one GPU, each with its own copy of its shards: a stand-in for several GPUs). Shards are
  // placed balanced by rows, new ones on the device holding the fewest
  // (docs/gpu-options.md#many-gpus-one-process).
  // Empty: every CUDA device present (0, 1, … up to the first that cannot be used). Numbers
  // must be 0 to 1023 (Open returns InvalidArgument otherwise); a listed device that cannot be
  // used makes GPU searches Unavailable, naming it. Default: empty.
  std::vector<int> devices;
  // CPU executors that searches on the CPU spread a collection's shards over in the same way,
  // each with its share of the cores (one CPU executor uses them all). Stands in for several
  // devices where there is no GPU. 1 to 1024. Default: 1.
  uint32_t cpu_executors = 1;
  // Bytes of resident shards each device (each executor above) may hold: shards are placed so
  // that every device's resident rows (each row's components and norm) fit, and a search over
  // a collection that the devices cannot hold together returns ResourceExhausted naming the
  // sizes. 0: each executor's own figure (Executor::device_memory_bytes), and no limit where it
  // has none. Default: 0.
  uint64_t device_memory_bytes = 0;
  // What the first search on an uncalibrated GPU does (FirstUseCalibration above). Default: a
  // first-use calibration on GPUs without shipped thresholds.
  FirstUseCalibration first_use_calibration;
};

// Half of the smallest of: this machine's physical memory, the process's address-space and
// data-segment limits (RLIMIT_AS, RLIMIT_DATA soft limits) and its cgroup's memory limit
// (cgroup v2 memory.max), read when called. At least 64 MiB.
uint64_t DefaultMemoryBudget();

// A batch of rows to ingest. Nothing is owned: every pointer must stay valid for the call.
struct RowBatch {
  size_t num_rows = 0;
  // The vectors' dimension: must equal the collection's (a caller whose buffer is laid out for
  // another dimension gets InvalidArgument instead of reads past its end). 0 is accepted only
  // for an empty batch.
  uint32_t dim = 0;
  // num_rows × dim floats, row-major. Required. NaN or infinite components are rejected, and
  // so is a vector whose Euclidean norm is neither 0 nor within [kMinVectorNorm,
  // kMaxVectorNorm] (see types.h): every squared norm, dot product and distance between such
  // vectors then stays finite and normal in float32, on every path and backend.
  const float* vectors = nullptr;
  // num_rows user ids, each 0 to 2^63 - 1 (a negative id is InvalidArgument naming its row),
  // or nullptr to have ids assigned in ingest order: one past the largest id ever assigned or
  // given in the collection (0 for the first rows of a new collection), so that no id ever
  // acknowledged is assigned again, even after its row is deleted. Once the ids assigned would
  // pass 2^63 - 1 (a row was given an id near it), rows without ids are InvalidArgument.
  // Rows without ids go into a collection that has live rows only with IngestOptions::auto_ids.
  const int64_t* ids = nullptr;
  // num_rows rows of attribute values, each in the collection's attribute order, or nullptr
  // for rows whose attributes are all null. A row may be shorter than the schema: the missing
  // trailing attributes are null.
  const std::vector<Value>* attributes = nullptr;
};

struct IngestOptions {
  // Rows per atomic, WAL-synced commit. 0 means the whole batch in one commit. Default: 65536.
  size_t batch_rows = 65536;
  // Called after each committed batch with (rows committed so far, total). Default: none.
  std::function<void(size_t, size_t)> progress;
  // Lets rows without ids (RowBatch::ids == nullptr) go into a collection that already has
  // live rows; they get new ids. Without it that is InvalidArgument, so running the same ingest
  // twice cannot duplicate every row silently. Default: false.
  bool auto_ids = false;
  // Check the whole batch as the call would (dims, vectors, attribute values, ids among
  // themselves and against the live rows) and write nothing: the call returns what it would
  // have refused with, or OK with result->ingested == 0 and result->live_rows as they are.
  // A writer that splits one batch over several databases (the Python package's sieve.ray)
  // checks every part first, so that bad input changes none of them. Default: false.
  bool validate_only = false;
};

struct IngestResult {
  size_t ingested = 0;   // rows written by this call
  uint64_t replaced = 0;   // of them, rows that replaced a live row with the same id (Upsert)
  uint64_t live_rows = 0;  // live rows in the collection afterwards
};

// Which stored fields come back with each row of a search, a Get or a Scan. Attribute values
// come in `attribute_names` order of the result (nulls as monostate).
struct Include {
  std::vector<std::string> attributes;  // attribute names, in the order wanted
  bool all_attributes = false;          // every attribute, in schema order (after `attributes`)
  bool vector = false;                  // the stored vector (float16: the rounded values)
  bool empty() const { return attributes.empty() && !all_attributes && !vector; }
  // Parses a comma-separated list: attribute names, "*" for every attribute, "vector" for the
  // vector (an attribute named "vector" is written as the quoted "\"vector\""). Blank items are
  // ignored. InvalidArgument for a malformed list; unknown names are refused by the call
  // that uses it, which knows the schema.
  static Status Parse(std::string_view text, Include* out);
  // The names of the attributes this yields for a collection of `spec`, in result order
  // (SearchResult::attribute_names). InvalidArgument for an unknown name, listing the valid
  // ones.
  Status AttributeNames(const CollectionSpec& spec, std::vector<std::string>* names) const;
};

// One row as stored.
struct Row {
  int64_t id = 0;
  std::vector<Value> attributes;  // the included attributes, in the result's attribute order
  std::vector<float> vector;      // when included
};

enum class Device : uint8_t { kAuto = 0, kCpu = 1, kGpu = 2 };
// kSddmm computes only (query, passing row) distances; kGather compacts the passing rows and
// runs a dense search over them; kDense computes every distance and filters before selection.
enum class SearchPath : uint8_t { kAuto = 0, kSddmm = 1, kGather = 2, kDense = 3 };

const char* DeviceName(Device d);
Status ParseDevice(std::string_view text, Device* out);
const char* SearchPathName(SearchPath p);
Status ParseSearchPath(std::string_view text, SearchPath* out);
// How a grouped search (SearchRequest::group_by) finds its groups (docs/planner.md#group-by):
// kFewGroups runs one filtered search per group (the filter ∩ the value's postings) and keeps
// the k groups whose best row is nearest; kManyGroups scans the filtered top-K', doubling K'
// until it holds k distinct groups, then fills each group's rows. kAuto lets the planner choose
// from the counts. Both give the same groups.
enum class GroupStrategy : uint8_t { kAuto = 0, kFewGroups = 1, kManyGroups = 2 };
const char* GroupStrategyName(GroupStrategy s);  // "auto" | "few_groups" | "many_groups"
Status ParseGroupStrategy(std::string_view text, GroupStrategy* out);

// One committed version of the whole store, for reads (DB::GetSnapshot): a search, get, count
// or scan given a snapshot reads the rows as they were when it was taken, however many writes
// land meanwhile, until DB::ReleaseSnapshot. Opaque; owned by the DB that gave it.
class Snapshot {
 public:
  Snapshot(const Snapshot&) = delete;
  Snapshot& operator=(const Snapshot&) = delete;
  // A number unique among the snapshots one DB gives out (never reused while it is open).
  virtual uint64_t id() const = 0;

 protected:
  Snapshot() = default;
  virtual ~Snapshot() = default;
};

// Options of Get and Count.
struct ReadOptions {
  // Read this snapshot (DB::GetSnapshot) rather than the latest rows. Default: null.
  const Snapshot* snapshot = nullptr;
};

struct SearchOptions {
  // kAuto uses the GPU when the build has CUDA and a device is present, else the CPU.
  // kGpu without a usable GPU returns Unavailable (a request with nothing to search, no query
  // vectors and no text query, asks for no device and is only checked). Default: kAuto.
  Device device = Device::kAuto;
  // kAuto lets the planner choose from the passing-row counts. Default: kAuto.
  SearchPath path = SearchPath::kAuto;
  // Search this snapshot (DB::GetSnapshot) rather than the latest rows. Default: null.
  const Snapshot* snapshot = nullptr;
  // Time the search's steps into SearchResult::explain.stage_ms. false leaves stage_ms empty
  // (every other field of explain is filled as ever) and reads no clock per step, which is a
  // measurable part of a small search's cost: for callers that do not show the times (the
  // Python package without explain=True). Default: true.
  bool stage_times = true;
};

// The largest k a search takes (SearchRequest::k); the CLI, the server and Python pass the
// engine's message on.
inline constexpr int kMaxSearchK = 1000000;

// How a hybrid search (SearchRequest::text with query vectors) fuses each query's two lists:
// the vector side's exact top `depth` and the text side's exact BM25 top `depth`, both under
// that query's filter. A row's fused score sums one term per list it is in; rows are ranked by
// it, larger first, ties by the smaller id (docs/cpp-api.md#text-and-hybrid-search).
struct Fusion {
  enum class Method : uint8_t {
    // Reciprocal rank fusion: w / (rrf_c + rank) per list, rank 1 for its best row.
    kRrf = 0,
    // Each list's scores min-max normalized to [0, 1] over its `depth` rows (a list whose scores
    // are all equal gives 1), w · normalized per list. The vector side's score is its distance
    // negated for l2 and cosine (so larger is better) and the inner product itself for ip.
    kWeighted = 1,
  };
  Method method = Method::kRrf;
  // RRF's constant, finite and >= 0. Default: 60.
  double rrf_c = 60;
  // Each list's weight w, finite and >= 0, not both 0. Default: 1 and 1.
  double vector_weight = 1;
  double text_weight = 1;
  // Rows each side contributes, k to kMaxSearchK; 0: max(k, kDefaultFusionDepth). Default: 0.
  int depth = 0;
};
// The depth of each side of a hybrid search when Fusion::depth is 0 (and k is smaller).
inline constexpr int kDefaultFusionDepth = 100;

const char* FusionMethodName(Fusion::Method m);  // "rrf" | "weighted"
Status ParseFusionMethod(std::string_view text, Fusion::Method* out);

struct SearchRequest {
  const float* queries = nullptr;  // num_queries × dim floats, row-major
  size_t num_queries = 0;
  int k = 10;  // 1 to kMaxSearchK
  // One filter for every query ("" = none). A request sets `filter` or `filters`, never both
  // (InvalidArgument).
  std::string filter;
  // One filter per query ("" = none for that query); when non-empty its size must equal
  // num_queries.
  std::vector<std::string> filters;
  // The queries' dimension: must equal the collection's (0 is accepted only without queries).
  uint32_t dim = 0;
  // Stored fields to return with each neighbour (none by default).
  Include include;

  // Group-by (issue 37): with `group_by` naming an int, string, bool or tags attribute, the
  // result of each query is the k groups (rows sharing a value of that attribute) whose best
  // passing row is nearest, each with its `group_size` nearest passing rows, in
  // Neighbors::groups. A tags row belongs to the group of each of its values (so a row may be
  // in several groups); rows whose value is null belong to no group. Groups rank by their best
  // row's (distance, id), then by value; rows within a group by (distance, id). A text or
  // float attribute, an unknown name, or group_size outside [1, kMaxGroupSize] is
  // InvalidArgument; so is k × group_size over kMaxSearchK.
  std::string group_by;  // "" = no grouping. Default: "".
  int group_size = 1;    // rows per group. Default: 1.
  // Forces the plan of the groups (GroupStrategy). Default: kAuto.
  GroupStrategy group_strategy = GroupStrategy::kAuto;

  // Range search and pages (issue 37 items 2-3; docs/cpp-api.md#range-search-and-pages). Both
  // return rows in the exact (distance, id) order, distances refined in float64.
  //
  // Range search, when set: every passing row within `radius` (l2 and cosine: distance <=
  // radius; ip: score >= radius), best first, ties by id, at most `limit` per query (`k` is
  // then not used); Neighbors::limit_reached says more rows lie within it. The float64
  // distance decides a row exactly on the radius. Finite. Not with `offset` or `after`.
  std::optional<double> radius;
  // With `radius`: the most rows a query returns, 1 to kMaxSearchK. Default: 1000.
  int limit = 1000;
  // Pages, when set: rows offset .. offset + k - 1 of the query's (distance, id) order;
  // offset + k <= kMaxSearchK. Neighbors::next is the cursor of the page after. Default: unset
  // (a plain top-k, which sets no cursor); 0 is the first page, with a cursor.
  std::optional<int64_t> offset;
  // Search-after, when non-empty: one cursor per query (Neighbors::next of an earlier page of
  // the same query and collection; "" = from the start): the k rows after it in (distance, id)
  // order. Not with `offset`. Pages read under one SearchOptions::snapshot hold every row once;
  // without one, a cursor resumes after its (distance, id) in the rows as they are now.
  std::vector<std::string> after;

  // Text and hybrid search (issue 34). `text`, analyzed by the analyzer of the text attribute
  // `text_field`, is one BM25 query (query/bm25.h; docs/filter-language.md#bm25): with no query
  // vectors the search returns one list, the top k rows by BM25 among the rows passing
  // `filter` (or filters[0]; `filters` then has one entry); with query vectors, each query's
  // list fuses its vector top `fusion.depth` with the text query's top `fusion.depth` under
  // that query's filter (`fusion`). Set both or neither (InvalidArgument); a text whose
  // analysis leaves no term (only stop words) matches no row.
  std::string text_field;
  std::string text;
  Fusion fusion;
};

// The most rows per group a grouped search returns (SearchRequest::group_size).
inline constexpr int kMaxGroupSize = 100000;

// One group of a grouped search: its value and its nearest passing rows, best first.
struct Group {
  Value value;  // an int64_t, std::string (string, or one tag of a tags attribute) or bool
  std::vector<int64_t> ids;
  std::vector<float> distances;
  // With SearchRequest::include, as in Neighbors.
  std::vector<std::vector<Value>> attributes;
  std::vector<std::vector<float>> vectors;
};

struct Neighbors {
  std::vector<int64_t> ids;      // best first; fewer than k when fewer rows pass
  std::vector<float> distances;  // as the metric defines them (see Metric)
  // With SearchRequest::include: per neighbour, its attributes (SearchResult::attribute_names
  // order) and its vector; empty otherwise.
  std::vector<std::vector<Value>> attributes;
  std::vector<std::vector<float>> vectors;
  // With SearchRequest::group_by: the groups, best first (at most k); ids, distances,
  // attributes and vectors are then empty.
  std::vector<Group> groups;

  // Range search and pages (SearchRequest::radius, offset, after).
  // Range search: more rows than SearchRequest::limit lie within the radius (the best `limit`
  // were returned).
  bool limit_reached = false;
  // Pages: the cursor to pass in SearchRequest::after for the next page (the last row's
  // (distance, id) and position, opaque); the request's own cursor when this page is empty.
  std::string next;

  // Text and hybrid searches (SearchRequest::text): the BM25 scores (text only) or the fused
  // scores (hybrid) in float64, larger is better; `distances` holds them rounded to float.
  // Empty for a vector search.
  std::vector<double> scores;
};

// What the planner decided and how long each stage took. One entry per shard.
struct ShardPlan {
  uint32_t shard = 0;
  std::string path;              // "sddmm" | "gather" | "dense"
  // How the top-k was selected: "heap" (CPU), "select_k", "candidates" or "threshold" (GPU),
  // as the planner chose for the shard's device; after a candidate list overflowed, "select_k",
  // the full path the GPU reran (docs/planner.md#top-k).
  std::string select;
  // What the rows were multiplied in before any exact rescoring: "float32", "tf32",
  // "float16" or "int8" (GPU candidate scans); "products" in explain.
  std::string products;
  // The top-k plan with its sizes (GPU: the strategy's sample, lists and tiles or levels, and
  // what happened to it: an overflow and the rerun); "select_plan" in explain, absent when
  // empty.
  std::string select_plan;
  std::vector<uint64_t> passing_rows;  // one per distinct filter of the batch
  uint64_t rows = 0;                   // live rows in the shard
  std::string device;                  // the device that searched it ("cpu0", "gpu1", …)
  double execute_ms = 0;               // its executor's wall time
};

// One device of a search (Options::devices, Options::cpu_executors): the shards it searched,
// one after another, while the other devices searched theirs.
struct DevicePlan {
  std::string device;    // "cpu0", "gpu1", "gpu0/1" (a second executor on CUDA device 0)
  std::string executor;  // its executor's name ("cpu", "gpu:<device name>")
  std::vector<uint32_t> shards;
  std::vector<std::string> paths;  // the path of each of those shards (ShardPlan::path)
  uint64_t rows = 0;               // rows of those shards it holds (live and deleted)
  double execute_ms = 0;           // wall time of its shards' searches and refinement
};

// The planner's thresholds for one device (an executor name: "cpu" or "gpu:<device name>"):
// where a shard's search moves from SDDMM to gather to dense, for one filter (bitset) and for
// one filter per query (bitmap). An opaque, versioned value: DB::Calibrate fits one to a
// device, GetPlannerThresholds reads the one a device plans with, PutPlannerThresholds stores
// one. Its text form (ToJson) is one JSON object: "version", the rule's numbers, "source".
// The rule and the meaning of each number are defined with the rule, in query/planner.h
// (docs/planner.md#planner-thresholds).
class PlannerThresholds {
 public:
  // The format ToJson writes. FromJson reads it and every earlier one (version 1 had no
  // "version" field; numbers added since read as the values that keep its meaning).
  static constexpr int kVersion = 2;

  // Empty: no thresholds (empty() is true); ToJson() is "".
  PlannerThresholds() = default;

  bool empty() const { return json_.empty(); }
  // The format version of the text it was read from (kVersion for thresholds fitted or made
  // by this release).
  int version() const { return version_; }
  // Where the numbers came from ("defaults: ..." or "calibrated <date> on <device> ..."), as
  // explain shows it.
  const std::string& source() const { return source_; }
  // One line of JSON, every number in the current format.
  std::string ToJson() const { return json_; }
  // InvalidArgument (naming the field) for text that is not such an object, a missing or
  // out-of-range number (negative, NaN, a fraction above 1), or a version newer than kVersion.
  static Status FromJson(const std::string& text, PlannerThresholds* out);

  // What a device with no stored calibration plans with, by its executor name: the CPU's
  // defaults for "cpu"; for a GPU the project has calibrated (NVIDIA H200), the thresholds
  // shipped for it; for any other GPU, the GPU defaults (cuVS 26.10's rule).
  static PlannerThresholds DefaultsFor(const std::string& executor_name);

  friend bool operator==(const PlannerThresholds& a, const PlannerThresholds& b) {
    return a.json_ == b.json_;
  }
  friend bool operator!=(const PlannerThresholds& a, const PlannerThresholds& b) {
    return !(a == b);
  }

 private:
  std::string json_;
  std::string source_;
  int version_ = 0;
};

// What DB::Calibrate measures and what it does with the fit. The grid (shapes, passing-row
// counts, filters) is the device's, full or quick (docs/planner.md "sieve calibrate"); the
// fields below that are empty or 0 keep the grid's own value.
struct CalibrateOptions {
  // The device whose executor is timed and whose thresholds are fitted, resolved as Search
  // resolves SearchOptions::device. Default: kAuto.
  Device device = Device::kAuto;
  // The smaller grid (about 11 s on a 2-core CPU, 15 s on an H200). Default: false.
  bool quick = false;
  // Store the fit as the device's calibration (as PutPlannerThresholds does); false fits and
  // reports without storing. Default: true.
  bool store = true;
  // Stop the sweep before its next shape once this many seconds have passed, and fit what was
  // measured (CalibrateReport::complete is then false). Finite, >= 0; 0: no limit. Default: 0.
  double time_limit_s = 0;
  // The shard sizes (each 1 to 2^32 - 1) and dims (each 1 to 65,536) swept. Default: empty,
  // the grid's.
  std::vector<uint64_t> rows_list;
  std::vector<uint32_t> dims;
  // Queries per batch (1 to 100,000) and k (1 to 1,000,000). Default: 0, the grid's (100, 64).
  uint32_t queries = 0;
  uint32_t k = 0;
  // The vectors' element type: kFloat16 or kFloat32. Default: kFloat16 (the grid's).
  DType dtype = DType::kFloat16;
  // Timed repetitions per path per point at most (1 to 100,000), and untimed warm-up runs
  // before them (0 to 100,000). Default: 0 and -1, the grid's.
  int max_reps = 0;
  int warmup = -1;
  // Who calibrated, named in the fitted thresholds' source ("calibrated <time> on <device>
  // (<caller>, <points> points, <seconds> s)"). Default: "DB::Calibrate".
  std::string caller = "DB::Calibrate";
  // Gets one line before the sweep (the device and the grid) and one per shape swept, from the
  // calling thread. Default: null (nothing is said).
  std::function<void(const std::string&)> progress;
};

// What DB::Calibrate (or DB::RefitCalibration) fitted.
struct CalibrateReport {
  std::string device;            // the executor name the thresholds belong to ("cpu", "gpu:...")
  PlannerThresholds thresholds;  // the fit; its source names the time, device and points
  bool stored = false;           // stored as the device's calibration
  double seconds = 0;            // the sweep and the fit
  size_t points = 0;             // points measured (or read back)
  bool complete = true;          // the whole grid was measured (no time limit cut it)
  // The thresholds in one readable line (planner.md "Planner thresholds").
  std::string description;
  // The summary `sieve calibrate` prints, one JSON object: device, stored, seconds (to 0.1),
  // complete, thresholds, fit (the fitted forms, per-series crossovers, residuals),
  // penalty_in_sample (the fit's and the defaults' penalties over the points, bitset and
  // bitmap) and points (each point's times per path and winner: what RefitCalibration reads).
  std::string summary_json;
};

// The text side of a text or hybrid search (Explain::text; "text" in its JSON).
struct TextSearchPlan {
  struct Term {
    std::string term;    // as the analyzer made it
    uint32_t count = 0;  // in the query
    uint64_t rows = 0;   // n_t: the live rows holding it
    double idf = 0;
  };
  std::string field;
  std::vector<Term> terms;  // distinct, in the query's order
  uint64_t documents = 0;   // N: live rows whose text is not null
  double avgdl = 0;         // their mean length, in tokens
  double k1 = 0, b = 0;     // the collection's BM25 parameters
  // "maxscore" (block-max MaxScore over the postings), "filter" (the filter's rows were few
  // beside the postings: each was looked up in the terms' postings), "maxscore+filter" (some
  // shards or filters one, some the other), or "none" (no term has postings).
  std::string strategy;
  uint64_t passing_rows = 0;  // rows of the filter(s) the text side ranked, summed over shards
  uint32_t depth = 0;         // rows the text side returned per filter (k when text only)
  // What the scorer read and skipped, summed over shards and filters (query/bm25.h,
  // Bm25Counters): the terms' postings and blocks, those read, those skipped unread, the
  // candidates scored in full, pruned by a bound, or not passing the filter.
  uint64_t postings = 0, postings_read = 0, postings_skipped = 0;
  uint64_t blocks = 0, blocks_skipped = 0;
  uint64_t rows_scored = 0, rows_pruned = 0, rows_filtered = 0;
  std::string fusion;  // hybrid: "rrf" or "weighted"; "" for a text-only search
  // Hybrid: the text side ran on a thread of its own beside the vector side (a GPU searched
  // some of its shards), so the search took about the longer of the two, not their sum;
  // "beside_vector" in ToJson(). False for a text-only search and on the CPU alone.
  bool beside_vector = false;
};

// How a grouped search (SearchRequest::group_by) found its groups: Explain::group. Declared
// here, outside Explain, so that std::optional<GroupPlan> sees a complete, default-constructible
// type (clang checks it while Explain is still being defined).
// One batch of the searches a grouped search issued (Explain::GroupSearch).
struct GroupSearchPlan {
  // "groups" (one search per (query, group): few groups), "scan" (a round of the filtered
  // top-K': many groups) or "fill" (the groups whose rows the scan did not hold).
  std::string kind;
  uint64_t queries = 0;  // searches in the batch: (query, group) pairs, or queries
  uint64_t k = 0;        // rows each asked for (group_size, or K')
  std::vector<ShardPlan> shards;
};
struct GroupPlan {
  std::string field;
  std::string strategy;  // "few_groups" | "many_groups"
  std::string reason;    // why the planner chose it
  // Values with postings in the searched shards, summed over shards (at least the number of
  // groups among the passing rows).
  uint64_t distinct_values = 0;
  uint64_t groups = 0;            // groups returned, summed over queries
  uint32_t rounds = 0;            // many_groups: scans of the top-K'
  std::vector<uint64_t> scan_k;   // many_groups: K' of each round
  uint64_t searches = 0;          // (query, filter) searches issued, summed over batches
  std::vector<GroupSearchPlan> batches;
};

struct Explain {
  std::string device;       // "cpu" | "gpu:<name>": the executor of the first device
  std::string filter_mode;  // "none" | "bitset" (one filter) | "bitmap" (one per query)
  // Rows that pass the filter, summed over shards; for bitmaps (a filter per query), rows that
  // pass at least one query's filter (each filter's own count is in shards[].passing_rows).
  uint64_t passing_rows = 0;
  std::vector<ShardPlan> shards;
  // The devices that held shards of the collection, in device order ("devices" in ToJson).
  std::vector<DevicePlan> devices;
  // Stage name → milliseconds, in the order the steps of the search ran: "parse" (request
  // rules, include, filter texts), "devices" (the executors and their thresholds; a GPU's
  // first-use calibration), "load" (only when the rows were read into memory), "place" (which
  // device holds each shard), "compile" (filter row sets), "plan" (paths and candidate
  // counts), "reserve" (host memory from the budget), the executors' own stages as
  // "execute.<stage>", "refine" (float64 re-ranking of the candidates, summed over shards; it
  // runs within "execute"), "execute" (wall time of every device's searches and refinement,
  // the devices at once), "merge" (the exact merge over shards), "include" (when asked for),
  // "total". Empty when SearchOptions::stage_times is false.
  std::vector<std::pair<std::string, double>> stage_ms;
  // Where the planner's thresholds came from (PlannerThresholds::source); "thresholds" in
  // ToJson().
  std::string thresholds;
  // Host memory the search computed it needs (and reserved from the budget), device memory
  // its executor said it would allocate, and the budget (Options::memory_budget_bytes, or
  // the default in force). Set also when Search returns ResourceExhausted for the budget, so
  // that a caller can tell "too large for the budget" (host_memory_bytes >
  // memory_budget_bytes) from memory that ran out. "memory" in ToJson().
  uint64_t host_memory_bytes = 0;
  uint64_t device_memory_bytes = 0;
  uint64_t memory_budget_bytes = 0;
  // (filter, shard) row sets taken from the compiled-filter cache (Options::filter_cache_bytes)
  // rather than compiled; "filters_cached" in ToJson().
  uint64_t filters_cached = 0;

  // Group-by (SearchRequest::group_by): how the groups were found; "group" in ToJson, absent
  // without group_by. `shards` and `devices` above are then those of the first search issued.
  using GroupSearch = GroupSearchPlan;
  using GroupPlan = sieve::GroupPlan;
  std::optional<GroupPlan> group;

  // Range search and pages (SearchRequest::radius, offset, after): they run the exact top-k
  // over a window of K rows per query, widened until it provably holds every row they return
  // (docs/planner.md#range-search-and-pages). "shape" in ToJson: "range" or "page"; empty for
  // a plain top-k (then the fields below are absent).
  std::string shape;
  // The window of each round, in order (its largest when queries differ); "windows".
  std::vector<uint64_t> windows;
  // Queries searched in each round (those whose window did not yet hold their rows);
  // "window_queries".
  std::vector<uint64_t> window_queries;

  // Text and hybrid searches: the text side (has_text; "text" in ToJson()). The vector side of
  // a hybrid search fills the fields above as a vector search does; stage_ms adds "text" (the
  // text side), "vector" (the vector side's steps, summed) and "fusion".
  bool has_text = false;
  TextSearchPlan text;
  std::string ToJson() const;  // one line
};

struct SearchResult {
  std::vector<Neighbors> results;  // one per query, in order
  std::vector<std::string> attribute_names;  // of Neighbors::attributes (with include)
  Explain explain;
};

// Get: one entry per requested id, in request order.
struct GetResult {
  std::vector<std::string> attribute_names;  // of each Row::attributes
  std::vector<bool> found;                   // false: no live row has that id
  std::vector<Row> rows;                     // rows[i].id is the i-th requested id
};

// A page of the rows passing a filter, in ascending id order (Scan).
struct ScanRequest {
  std::string filter;  // "" = every live row
  Include include;
  // Rows with ids greater than `after` only (the cursor a previous page returned), when
  // has_after; else from the smallest id.
  bool has_after = false;
  int64_t after = 0;
  size_t limit = 1000;  // rows per page, 1 .. 1,000,000
  // Read this snapshot (DB::GetSnapshot) rather than the latest rows: pages read with one
  // snapshot together hold every passing row of that version exactly once. Default: null.
  const Snapshot* snapshot = nullptr;
};

struct ScanResult {
  std::vector<std::string> attribute_names;
  std::vector<Row> rows;  // ascending id
  bool done = false;      // no passing row has an id past the last one returned
  int64_t next = 0;       // the cursor for the next page (the last id returned), unless done
};

// An attribute-only change of rows chosen by id or by filter (Update).
struct UpdateRequest {
  const int64_t* ids = nullptr;  // num_ids ids (unknown ones are ignored), or
  size_t num_ids = 0;
  std::string filter;            // a filter, when ids is null (blank is refused: use "id >= ...")
  // (attribute, new value) pairs; a value may be null. At least one.
  std::vector<std::pair<std::string, Value>> set;
};

// Parses "name = literal" (the filter language's literals, NULL, or a tags list
// ('a', 'b') ) against `spec`: InvalidArgument naming the position of what is wrong. For the CLI's
// and the server's update.
Status ParseAssignment(std::string_view text, const CollectionSpec& spec, std::string* name,
                       Value* value);

// One schema change of a collection (DB::AlterCollection): adds, drops or renames one
// attribute. Vectors are never rewritten; the attribute columns of the stored rows are (ids
// untouched), in one atomic, durable commit. Build one with the factories below.
struct AlterRequest {
  enum class Op : uint8_t {
    kAddAttribute = 0,
    kDropAttribute = 1,
    kRenameAttribute = 2,
    kSetBm25 = 3,  // sets CollectionSpec::bm25_k1 and bm25_b (the fields below)
  };
  Op op = Op::kAddAttribute;
  // The attribute added, dropped or renamed. An added name follows ValidateAttributeName and
  // must not be taken (as CreateCollection's attributes).
  std::string name;
  AttrType type = AttrType::kInt;  // kAddAttribute: its type
  // kAddAttribute of a kText attribute: its analyzer (AttributeSpec::analyzer). Default: ""
  // (stored as "english").
  std::string analyzer;
  // kAddAttribute: the value every row stored before the change gets; null (monostate) by
  // default. Checked as an ingested value is (an int is taken for a float attribute).
  Value default_value;
  std::string new_name;  // kRenameAttribute: the new name (rules as for an added one)
  // kSetBm25: BM25's k1 and b for the collection's text searches (ranges: CollectionSpec).
  // The attribute chunks are rewritten as for any alter; the text index is unchanged.
  double bm25_k1 = 1.5;
  double bm25_b = 0.75;

  static AlterRequest AddAttribute(std::string name, AttrType type, Value default_value = Value());
  static AlterRequest DropAttribute(std::string name);
  static AlterRequest RenameAttribute(std::string name, std::string new_name);
  static AlterRequest SetBm25(double k1, double b);
};

struct AlterResult {
  CollectionSpec spec;           // the collection's schema after the change
  uint64_t rows = 0;             // stored rows (live and deleted) whose columns were rewritten
  uint64_t chunks_rewritten = 0; // attribute chunks replaced
};

// A name that stands for a collection (DB::PutAlias).
struct AliasInfo {
  std::string alias;
  std::string collection;
};

struct CompactOptions {
  // Rewrite every shard that holds deleted rows, even where the rows hold fewer bytes than the
  // rewrite costs (the store may then grow; CompactResult::note says by how much and why), for
  // example to remove deleted rows' data from the disk. Default: false.
  bool force = false;
};

struct CompactResult {
  // The store's files (every file of its directory) when the compaction began and when it
  // ended, each counted once RocksDB's background work was done. bytes_after is at most
  // bytes_before, unless `note` says why not.
  uint64_t bytes_before = 0;
  uint64_t bytes_after = 0;
  uint64_t rows_removed = 0;      // deleted rows whose space was reclaimed
  uint32_t shards_rewritten = 0;
  // Shards holding deleted rows that were left as they are, because their deleted rows hold
  // fewer bytes than rewriting the shard writes (CompactOptions::force rewrites them), and
  // the deleted rows they still hold.
  uint32_t shards_skipped = 0;
  uint64_t rows_left_deleted = 0;
  // Empty, or one sentence for an operator: why deleted rows were left, or why the store grew.
  std::string note;
};

// What DB::Backup and DB::BackupStore do. A backup directory holds numbered backups of one
// store (RocksDB's BackupEngine layout: meta/, private/, shared_checksum/); table files that
// several backups share are stored once.
struct BackupOptions {
  // The backup directory; created (with its parents) when missing. Required. Must lie outside
  // the store's directory. One backup at a time may write into it (a second gets IOError).
  std::string dest;
  // After the new backup is complete, keep only the newest `keep` backups in dest, deleting the
  // older ones and the files only they used. 0 keeps every backup. Default: 0.
  uint32_t keep = 0;
  // DB::BackupStore only, used when another process holds the store open for writing: a
  // directory of the caller's choosing, outside the store, where a RocksDB secondary instance
  // (which reads the store without its lock) keeps its own files. Created when missing; the
  // caller removes it afterwards. Empty: such a store is refused (IOError, "in use").
  // Default: empty.
  std::string secondary_dir;
  // How many times a backup is taken before the call gives up. Every backup is vetted before
  // it is kept (opened where it lies and its structure checked: every shard's chunks whole up
  // to its next_ordinal); one that fails, or whose copy a writer's file changes overtook (a
  // compaction deleting a file being copied, a flush retiring a write-ahead log), is deleted
  // and taken again, copying only what changed. In this process the first attempt succeeds
  // unless the disk fails; beside a busy writer several may be needed. 1 to 100. Default: 8.
  uint32_t max_attempts = 8;
};

struct BackupResult {
  uint32_t backup_id = 0;  // the new backup's number in dest (1, 2, ...)
  int64_t timestamp = 0;   // when it was taken, seconds since the Unix epoch
  // Files (and their bytes) written into dest by this backup, and those it shares with
  // earlier backups in dest, which were not copied again.
  uint64_t files_copied = 0;
  uint64_t bytes_copied = 0;
  uint64_t files_reused = 0;
  uint64_t bytes_reused = 0;
  uint64_t commit_seq = 0;       // the store's commit count at the backup's point in time
  std::vector<uint32_t> purged;  // backups deleted by BackupOptions::keep
  uint32_t attempts = 1;         // 1, or more when a backup beside a writer was taken again
  // Taken through a secondary instance, because another process held the store.
  bool secondary = false;
  // The backup holds RocksDB's write-ahead logs. False: its table files alone, flushed first in
  // this process, or beside another process the writer's state at its last flush (see
  // DB::BackupStore).
  bool logs = false;
  std::string ToJson() const;  // one line
};

// One backup in a backup directory.
struct BackupEntry {
  uint32_t id = 0;
  int64_t timestamp = 0;  // seconds since the Unix epoch
  uint64_t bytes = 0;     // the sum of its files' sizes (shared files counted in full)
  uint32_t files = 0;
  // DB::VerifyBackup only: what is wrong with it ("" when every byte matched its checksum).
  std::string problem;
  std::string ToJson() const;  // one line
};

// What a backup directory holds (DB::ListBackups, DB::VerifyBackup).
struct BackupListing {
  std::vector<BackupEntry> backups;  // complete backups, by id
  // Backups whose description (meta file) cannot be read: they cannot be restored.
  std::vector<uint32_t> corrupt;
  // Files an interrupted backup (a killed process, a full disk) left behind: no backup refers
  // to them, and the next backup into the directory deletes them.
  uint64_t leftover_files = 0;
  uint64_t leftover_bytes = 0;
  std::string ToJson() const;  // one line, without the backups
};

struct RestoreResult {
  uint32_t backup_id = 0;  // the backup restored
  uint64_t files = 0;      // files written into the new store
  uint64_t bytes = 0;
  uint64_t commit_seq = 0;  // the restored store's commit count
  // Directories `path`.restore-<time>-<pid> of earlier restores into `path` that were killed
  // (their process is gone), removed before this one began.
  uint32_t leftovers_removed = 0;
  std::string ToJson() const;  // one line
};

struct CollectionStats {
  CollectionSpec spec;
  uint64_t rows = 0;          // live rows
  uint64_t deleted_rows = 0;  // rows deleted and not yet reclaimed
  uint64_t total_rows = 0;    // rows ever ingested (live + deleted)
  // The id the next row ingested without one gets: one past the largest id the collection has
  // ever held (0 for a new collection). Not in ToJson().
  int64_t next_auto_id = 0;
  std::string ToJson() const;
};

// Rows `sieve repair` (DB::Repair) could not salvage: one entry per damaged range of one
// shard, split by the ingest batch (commit) that appended the rows when the commit ledger
// knows it.
struct RepairLoss {
  std::string collection;
  uint32_t shard = 0;
  uint64_t first_ordinal = 0;  // the range's row ordinals in the damaged store
  uint64_t rows = 0;           // rows in the range
  uint64_t lost_rows = 0;      // of them, rows that were live (not deleted)
  uint64_t commit = 0;         // the commit (batch) that appended them; 0 when unknown
  std::string cause;           // what was unreadable or missing
  std::string ToJson() const;  // one line
};

struct RepairReport {
  bool repaired = false;    // false: every check passed and nothing was changed
  uint64_t rows_kept = 0;   // live rows in the repaired store
  uint64_t rows_lost = 0;   // live rows that could not be salvaged (sum of lost_rows)
  std::vector<RepairLoss> losses;
  std::vector<std::string> notes;  // other findings, e.g. deletes whose commit was lost
  std::string damaged_copy;        // where the damaged files were moved
  std::string ToJson() const;      // one line (without the losses)
};

// A handle on one collection of an open DB (DB::GetCollection): its schema, read once, and
// the collection's operations without a name lookup or a schema fetch per call. Each method
// behaves, and returns the codes, as the DB method of the same name documents, on this
// collection.
//
// A handle names one collection, not a name: dropping the collection (DB::DropCollection,
// through any handle or by name) invalidates every handle to it for good. Every operation
// through a stale handle then returns NotFound ("collection 'x' was dropped"), including one
// that raced the drop, and a collection created later under the same name is a new collection
// that a stale handle never reaches; get a new handle for it. Renaming the collection
// (DB::RenameCollection) and changing its schema (DB::AlterCollection) keep every handle
// working: it follows the collection to its new name and schema. A handle taken through an
// alias (DB::PutAlias) is a handle to the collection the alias named then; it does not follow
// later switches of the alias (call by the alias's name, or take a new handle, for that).
//
// Thread-safety: a handle may be used from many threads at once, as the DB may.
// Ownership: shared (std::shared_ptr). A handle may be destroyed before or after its DB, but
// REQUIRES: no method is called after the DB that gave it is destroyed.
class Collection {
 public:
  Collection() = default;
  Collection(const Collection&) = delete;
  Collection& operator=(const Collection&) = delete;
  virtual ~Collection() = default;

  // The collection's schema now (a copy: AlterCollection and RenameCollection change it);
  // after a drop, the schema it had when it was dropped.
  virtual CollectionSpec spec() const = 0;
  std::string name() const { return spec().name; }
  // Whether the collection has been dropped. A false answer may be out of date by the time
  // the caller reads it; the operations themselves check under the collection's lock.
  virtual bool dropped() const = 0;

  virtual Status GetStats(CollectionStats* stats) = 0;
  virtual Status Ingest(const RowBatch& rows, const IngestOptions& options,
                        IngestResult* result) = 0;
  virtual Status Upsert(const RowBatch& rows, const IngestOptions& options,
                        IngestResult* result) = 0;
  virtual Status DeleteByIds(const int64_t* ids, size_t n, uint64_t* deleted) = 0;
  virtual Status DeleteByFilter(const std::string& filter, uint64_t* deleted) = 0;
  virtual Status Update(const UpdateRequest& request, uint64_t* updated) = 0;
  Status Get(const int64_t* ids, size_t n, const Include& include, GetResult* result) {
    return Get(ReadOptions(), ids, n, include, result);
  }
  virtual Status Get(const ReadOptions& options, const int64_t* ids, size_t n,
                     const Include& include, GetResult* result) = 0;
  Status Count(const std::string& filter, uint64_t* count) {
    return Count(ReadOptions(), filter, count);
  }
  virtual Status Count(const ReadOptions& options, const std::string& filter,
                       uint64_t* count) = 0;
  virtual Status Scan(const ScanRequest& request, ScanResult* result) = 0;
  virtual Status Search(const SearchRequest& request, const SearchOptions& options,
                        SearchResult* result) = 0;
  virtual Status Alter(const AlterRequest& request, AlterResult* result) = 0;
  // DB::RenameCollection of this collection to `new_name`.
  virtual Status Rename(const std::string& new_name) = 0;
  virtual Status Compact(const CompactOptions& options, CompactResult* result) = 0;
  Status Compact(CompactResult* result) { return Compact(CompactOptions(), result); }
};

class DB {
 public:
  // Opens (or creates, per `options`) the database at `path`. On success stores it in *db.
  // Returns NotFound when there is no database at `path` and !options.create_if_missing
  // (nothing is created then), IOError when the path cannot be used, is locked by another
  // process, or is already open in this process (use that DB), Corruption when its contents
  // are damaged.
  static Status Open(const Options& options, const std::string& path, std::unique_ptr<DB>* db);

  // Salvages a damaged database at `path` (no other process may have it open): every row
  // whose id, vector and attributes can still be read is copied, with the settings, into a new
  // store that takes the damaged one's place; the damaged files move aside to
  // report->damaged_copy. report->losses says exactly which rows of which batches were lost
  // and why. Ids stay as they were; deleted rows are not copied. When the database opens and
  // checks clean nothing is changed (report->repaired is false). NotFound without a database;
  // Corruption when not even its collections can be read; IOError when the new store cannot
  // be written.
  static Status Repair(const std::string& path, RepairReport* report);

  // Backs up the store at `path` into options.dest, as Backup below does, without holding it
  // open longer than the call. When no other process has the store open, it is opened for
  // writing (as DB::Open) for the call. When another process holds it (a server, a long
  // ingest), the backup reads it through a RocksDB secondary instance in
  // options.secondary_dir, never writing into the store's directory: the instance catches up
  // with the writer and backs up what it sees: odd attempts with the write-ahead logs (every
  // commit the writer acknowledged before the call), even ones the table files alone (the
  // writer's state at its last flush, which RocksDB's atomic flush keeps whole; result->logs
  // says which). An attempt that a writer's commit, flush or compaction overtook fails its
  // vetting or its copy and is discarded and taken again (up to options.max_attempts), so a
  // backup is whole or absent, never partial. NotFound without a
  // database; IOError when the store is held and options.secondary_dir is empty, when another
  // backup writes into dest, or when every attempt was overtaken (the message says how many);
  // InvalidArgument for an empty dest, a dest or secondary_dir inside the store, or
  // max_attempts outside [1, 100]; ResourceExhausted when dest's disk fills (dest then holds
  // no new backup, and its leftovers are removed by the next backup).
  static Status BackupStore(const std::string& path, const BackupOptions& options,
                            BackupResult* result);

  // Creates a new store at `path` from backup `backup_id` of `dest` (0: the newest). The
  // backup is restored into a sibling directory (`path`.restore-<time>-<pid>), checked to
  // open, given a fresh commit ledger, and only then renamed to `path`: a restore interrupted
  // at any moment leaves `path` as it was (absent or empty), with the sibling, which the next
  // restore into `path` removes (result->leftovers_removed); a restore that fails removes its
  // sibling before it returns. Every file's checksum is verified as it is copied.
  // InvalidArgument when `path` exists and is not an empty directory; NotFound when dest holds
  // no such backup (or no backup); Corruption when a file of the backup fails its checksum;
  // IOError when the store cannot be written.
  static Status RestoreBackup(const std::string& dest, uint32_t backup_id,
                              const std::string& path, RestoreResult* result);

  // Lists the backups in `dest` (reads only their descriptions). NotFound when dest is not a
  // backup directory.
  static Status ListBackups(const std::string& dest, BackupListing* listing);

  // Reads every file of backup `backup_id` of `dest` (0: every backup) and compares its size
  // and checksum (CRC32C, recorded when it was copied) with the backup's description;
  // listing->backups holds the backups verified, each with its problem if any. Corruption
  // (naming the first problem) when any file is missing, has the wrong size or fails its
  // checksum, or when a backup's description is unreadable; NotFound when dest is not a backup
  // directory or holds no such backup.
  static Status VerifyBackup(const std::string& dest, uint32_t backup_id, BackupListing* listing);

  DB() = default;
  DB(const DB&) = delete;
  DB& operator=(const DB&) = delete;
  // Closes the database; everything acknowledged is already durable.
  virtual ~DB() = default;

  // Returns InvalidArgument for a bad name, dim, or attribute list; AlreadyExists when a
  // collection of that name exists.
  virtual Status CreateCollection(const CollectionSpec& spec) = 0;
  virtual Status ListCollections(std::vector<std::string>* names) = 0;
  // NotFound when there is no such collection.
  virtual Status GetStats(const std::string& collection, CollectionStats* stats) = 0;

  // A handle on the collection called `name` (Collection above), stored in *handle: its schema
  // and its operations. Cheap (no read of the store once the collection has been used), so a
  // caller may take one per request instead of keeping schemas of its own. While a handle to
  // the collection is held anywhere, every call returns that same handle (equal pointers mean
  // the same collection, e.g. as a map key); after a drop and a re-create, a new call gives a
  // handle to the new collection. NotFound when there is no such collection.
  virtual Status GetCollection(const std::string& name, std::shared_ptr<Collection>* handle) = 0;

  // Validates the whole batch first (dims, finite components, ids unique among themselves and
  // the collection's live rows, attribute types); on any error returns InvalidArgument naming
  // the row and attribute and writes nothing. Then commits atomic batches of
  // options.batch_rows rows, each synced to the WAL before the next begins: after a crash
  // the collection holds whole batches only.
  virtual Status Ingest(const std::string& collection, const RowBatch& rows,
                        const IngestOptions& options, IngestResult* result) = 0;

  // Deletes the live rows with these ids (unknown ids are ignored) or passing this filter.
  // Atomic and durable on return. *deleted is the number of rows deleted. A blank filter
  // ("" or whitespace) is InvalidArgument: to delete every row, say so with a filter such as
  // "id >= -9223372036854775808" (every id a store can hold).
  virtual Status DeleteByIds(const std::string& collection, const int64_t* ids, size_t n,
                             uint64_t* deleted) = 0;
  virtual Status DeleteByFilter(const std::string& collection, const std::string& filter,
                                uint64_t* deleted) = 0;

  // Like Ingest, except that a row whose id is live replaces that row (vector and attributes),
  // atomically within each batch: after a crash a batch is wholly old or wholly new. Every row
  // needs an id (InvalidArgument otherwise). result->replaced counts the replaced rows.
  virtual Status Upsert(const std::string& collection, const RowBatch& rows,
                        const IngestOptions& options, IngestResult* result) = 0;

  // Sets attributes of the live rows chosen by id or filter, without rewriting their vectors,
  // in one atomic, durable commit. *updated counts the rows. InvalidArgument for an unknown
  // attribute (the message lists the valid ones), a value of the wrong type, no assignment,
  // both or neither of ids and filter, or a blank filter (as for DeleteByFilter).
  virtual Status Update(const std::string& collection, const UpdateRequest& request,
                        uint64_t* updated) = 0;

  // The live rows with these ids, with what `include` asks for; an id with no live row is
  // reported as not found (result->found), not as an error. InvalidArgument for an unknown
  // included attribute. With options.snapshot, the rows of that snapshot.
  Status Get(const std::string& collection, const int64_t* ids, size_t n,
             const Include& include, GetResult* result) {
    return Get(ReadOptions(), collection, ids, n, include, result);
  }
  virtual Status Get(const ReadOptions& options, const std::string& collection,
                     const int64_t* ids, size_t n, const Include& include,
                     GetResult* result) = 0;

  // The exact number of live rows passing `filter` ("" = every live row), from the filter's
  // bitmaps alone (no vector is read). InvalidArgument for a bad filter. With
  // options.snapshot, the rows of that snapshot.
  Status Count(const std::string& collection, const std::string& filter, uint64_t* count) {
    return Count(ReadOptions(), collection, filter, count);
  }
  virtual Status Count(const ReadOptions& options, const std::string& collection,
                       const std::string& filter, uint64_t* count) = 0;

  // Takes a snapshot of the whole store (Snapshot above) and stores it in *snapshot; cheap (no
  // row is copied when it is taken). Reads given it see every collection as it was then: rows
  // written, deleted, updated or compacted later, and collections created, dropped or renamed
  // later, are not seen (a collection dropped since stays readable through it). While a
  // snapshot is held, the first write to each collection it has not read yet keeps that
  // collection's image for it (loading the vectors when they are not in memory), and each
  // later write to a shard it holds copies that shard's ids and attribute indexes once
  // (vectors are shared): memory the snapshot holds until it is released, outside
  // Options::memory_budget_bytes. Release every snapshot (ReleaseSnapshot) before the DB is
  // destroyed; the DB frees those left then.
  virtual Status GetSnapshot(const Snapshot** snapshot) = 0;
  // Releases a snapshot GetSnapshot gave; reads that run with it meanwhile finish on its
  // version. InvalidArgument for a snapshot this DB did not give or that was released already.
  virtual Status ReleaseSnapshot(const Snapshot* snapshot) = 0;

  // One page of the live rows passing request.filter, in ascending id order, after the
  // cursor. Memory is bounded by the page. Each page reflects the collection when it is read;
  // rows written between pages appear on a later page when their id is past the cursor, unless
  // the pages are read with one snapshot (request.snapshot), which makes them one version.
  // InvalidArgument for a bad filter, an unknown included attribute, or a limit outside
  // [1, 1000000].
  virtual Status Scan(const std::string& collection, const ScanRequest& request,
                      ScanResult* result) = 0;

  // Removes the collection and every row of it, durably; its name may be reused. NotFound when
  // there is no such collection; InvalidArgument when `name` is an alias, or when an alias
  // names the collection (the message lists them). Every handle to it becomes stale (Collection
  // above); a call on the collection that runs while it is dropped, by name or through a
  // handle, returns OK (it ran first) or NotFound (it came second), never another error.
  virtual Status DropCollection(const std::string& name) = 0;

  // Changes the schema of the collection `name` (an alias is followed): adds, drops or
  // renames one attribute (AlterRequest), in one atomic, durable commit (after a crash the
  // collection has the old schema or the new, whole). Vectors and ids are never rewritten;
  // the stored attribute columns are. An added attribute goes last in the schema and rows
  // stored before it hold request.default_value; dropping one gives its bytes back to the file
  // system (its stored columns are rewritten without it and the rows family's files holding the
  // old ones compacted away) and its index back to memory. Filters, includes, gets, scans,
  // updates and ingests see the new schema as soon as the call returns; a search or read of the
  // collection running meanwhile finishes on the old schema (writes and reads wait for the
  // commit), and the first search after it reloads the collection's image from the store, as
  // after opening. Handles stay valid (Collection). InvalidArgument for an unknown attribute
  // (the message lists the valid ones), a name taken or breaking the naming rules, or a default
  // of the wrong type; NotFound without such a collection; NotSupported when read-only.
  virtual Status AlterCollection(const std::string& name, const AlterRequest& request,
                                 AlterResult* result) = 0;

  // Renames the collection `name` to `new_name` in one atomic, durable commit: no row is
  // rewritten (rows are keyed by the collection's internal id). Aliases naming it follow it, in
  // the same commit. Handles to it stay valid and report the new name; calls by the old name
  // get NotFound, and the old name is free for a new collection. InvalidArgument for a bad new
  // name, or when `name` is an alias (rename the collection it names); AlreadyExists when
  // `new_name` is a collection or an alias; NotFound without such a collection.
  virtual Status RenameCollection(const std::string& name, const std::string& new_name) = 0;

  // Aliases: names that stand for a collection, stored durably in the database. Every call that
  // takes a collection's name also takes an alias (reads and writes alike: search, get, count,
  // scan, stats, ingest, upsert, delete, update, compact, alter, GetCollection), resolved when
  // the call starts, so switching an alias (PutAlias on an existing alias) swaps a rebuilt
  // collection in under live readers: each call runs wholly on the collection the alias named
  // when it started. DropCollection and RenameCollection take only a collection's own name.
  //
  // PutAlias creates `alias` or switches it to `collection` (which must be a collection, not an
  // alias), in one durable write. An alias and a collection never share a name: InvalidArgument
  // for a bad alias name (the rules of ValidateCollectionName) or an alias naming an alias,
  // AlreadyExists when `alias` is a collection's name, NotFound without such a collection.
  // A collection that an alias names cannot be dropped (DropCollection returns InvalidArgument
  // naming the aliases): switch or drop them first, so no alias is ever left dangling.
  virtual Status PutAlias(const std::string& alias, const std::string& collection) = 0;
  // Removes an alias (the collection stays). NotFound when there is no such alias.
  virtual Status DropAlias(const std::string& alias) = 0;
  // Every alias and the collection it names, sorted by alias.
  virtual Status ListAliases(std::vector<AliasInfo>* aliases) = 0;

  // Rewrites every shard holding deleted rows without them (collection "" = every
  // collection) and gives their space back to the file system; ids stay as they are and
  // searches stay exact. A shard whose deleted rows hold fewer bytes than its rewrite would
  // write is left as it is (result->shards_skipped, rows_left_deleted and note say so) unless
  // options.force; a compaction with nothing to rewrite writes nothing. result reports the
  // store's bytes before and after. Searches go on meanwhile (they wait only for each shard's
  // switch); other writes to the collection wait.
  virtual Status Compact(const std::string& collection, const CompactOptions& options,
                         CompactResult* result) = 0;
  Status Compact(const std::string& collection, CompactResult* result) {
    return Compact(collection, CompactOptions(), result);
  }

  // Takes a point-in-time backup of the store into options.dest while it stays open: searches
  // and reads go on unpaused, and writes go on too (the backup holds what was committed at one
  // moment: whole commits only, an ingest's whole batches). Everything the store needs is
  // covered (RocksDB's files through its BackupEngine; the commit ledger is rebuilt for that
  // moment at restore). Backups into the same dest are incremental: files an earlier backup
  // there already holds are not copied again (result says how many were copied and reused).
  // Nothing pauses: every family's memtable is flushed at once (RocksDB's atomic flush, which
  // holds commits only for its switch to new memtables), then the table files are copied
  // without the write-ahead logs, so the backup holds exactly the commits made before the
  // flush (and maybe some after it, whole); RocksDB's file deletions wait until the copy is
  // done. Each backup is vetted before it is kept (BackupOptions::max_attempts). When the flush
  // fails (a full disk) the logs are copied instead (result->logs).
  // Files are written synced, their checksums recorded; the backup's description is written
  // last, so a backup interrupted by a crash or a full disk does not exist (its leftovers are
  // removed by the next backup into dest) and the store is never changed by a failure.
  // NotSupported when the DB was opened read-only (use BackupStore, which works beside a
  // writer); otherwise returns what BackupStore documents (secondary_dir is ignored).
  virtual Status Backup(const BackupOptions& options, BackupResult* result) = 0;

  // Exact filtered k-nearest-neighbour search. Returns InvalidArgument for k < 1 or k >
  // 1000000, a query component that is not finite, a query whose norm is outside the range of
  // RowBatch::vectors, a filter that does not parse or type-check (the message names the
  // position), or a filters list of the wrong size; Unavailable when options.device is kGpu
  // and no GPU can be used; ResourceExhausted when the search needs more host memory than
  // Options::memory_budget_bytes (result->explain then holds both figures) or memory runs out.
  // Every distance returned is finite.
  virtual Status Search(const std::string& collection, const SearchRequest& request,
                        const SearchOptions& options, SearchResult* result) = 0;

  // Verifies every invariant of the store (chunks contiguous, ids unique, counts and delete
  // bitmaps consistent, attribute indexes agreeing with the rows). Returns Corruption with
  // the first problems found.
  virtual Status Check(std::vector<std::string>* report) = 0;

  // The thresholds the planner uses on `device` (kAuto: the device a search with kAuto would
  // use), and that device's executor name in *device_name: the calibration stored for it when
  // there is one, else its defaults (see PlannerThresholds::source). Unavailable as Search.
  virtual Status GetPlannerThresholds(Device device, PlannerThresholds* thresholds,
                                      std::string* device_name) = 0;
  // Stores `thresholds` as the calibration of the device named `device_name` (an executor
  // name, as GetPlannerThresholds returns it), durably (WAL synced); searches started after
  // the call returns use them. InvalidArgument for an empty name or thresholds outside their
  // ranges (negative, fractions above 1, NaN).
  virtual Status PutPlannerThresholds(const std::string& device_name,
                                      const PlannerThresholds& thresholds) = 0;

  // Calibrates the planner on options.device: times its SDDMM, gather and dense paths on
  // synthetic data over the grid, fits the thresholds to the timings (from the device's
  // defaults, PlannerThresholds::DefaultsFor, for what the points cannot settle) and, with
  // options.store, stores them as PutPlannerThresholds does, so searches started after the call
  // returns use them. Blocks for the sweep (seconds to minutes); other calls go on meanwhile,
  // though searches on the device compete with it for time. Fills *report (also without store).
  // InvalidArgument for options out of their ranges, or when no point was timed within
  // options.time_limit_s; NotSupported when options.store and the database is open read-only
  // (checked before the sweep); Unavailable when options.device is kGpu and no GPU can be used;
  // ResourceExhausted or Internal when the device fails the sweep (Internal names the first
  // path's failure).
  virtual Status Calibrate(const CalibrateOptions& options, CalibrateReport* report) = 0;

  // Fits thresholds to the points recorded in `records_path` (a CalibrateReport::summary_json,
  // or the CSV of `sieve bench --csv`) instead of timing anything, and stores nothing (no
  // database is involved; report->stored is false). The base thresholds (for what the points
  // cannot settle) are PlannerThresholds::DefaultsFor the summary's device; for a file naming
  // none (a CSV), the device is "cpu" when `device` is kCpu, else "gpu".
  // IOError when the file cannot be read; InvalidArgument naming the file (and the line of a
  // CSV) when it is neither form, a point is malformed, or it holds no point.
  static Status RefitCalibration(const std::string& records_path, Device device,
                                 CalibrateReport* report);
};

}  // namespace sieve

#endif  // SIEVE_INCLUDE_SIEVE_DB_H_
