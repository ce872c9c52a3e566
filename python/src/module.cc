// Copyright 2026 The Sieve Authors.
//
// sieve._sieve: the nanobind module over include/sieve/. One class, _DB, with a method per DB
// call; sieve/_embedded.py wraps it in the package's Database and Collection. Arrays cross
// without copies (float32 C-contiguous vectors and int64 ids are read where numpy keeps them),
// and the GIL is released while the engine works.

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "python/src/columns.h"
#include "python/src/errors.h"
#include "python/src/numpy_arrays.h"
#include "sieve/db.h"
#include "sieve/status.h"
#include "sieve/text.h"
#include "sieve/types.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace sieve::python {

namespace {

// nb::ro: read-only arrays (np.load(mmap_mode="r"), np.frombuffer) are read in place too.
using Matrix = nb::ndarray<nb::ro, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using Ids = nb::ndarray<nb::ro, int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// The addresses the engine was last handed as RowBatch::vectors and SearchRequest::queries, for
// the tests that prove a float32 array crosses without a copy (_last_input_pointers).
std::atomic<uintptr_t> g_last_ingest_vectors{0};
std::atomic<uintptr_t> g_last_search_queries{0};
// How long the last DB::Ingest or DB::Search call took, in nanoseconds: the benchmarks set the
// C++ API's time of a call beside the Python call's wall time (_last_engine_seconds).
std::atomic<int64_t> g_last_engine_ns{0};

class EngineTimer {
 public:
  EngineTimer() : t0_(std::chrono::steady_clock::now()) {}
  ~EngineTimer() {
    g_last_engine_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::steady_clock::now() - t0_)
                           .count();
  }

 private:
  std::chrono::steady_clock::time_point t0_;
};

constexpr nb::dlpack::dtype kFloat16{static_cast<uint8_t>(nb::dlpack::dtype_code::Float), 16, 1};

// The rows of `m` as floats: m's own memory for float32 (no copy); float16 widened into
// *storage (RowBatch and SearchRequest take floats). REQUIRES: the GIL held.
Status FloatRows(const Matrix& m, uint32_t dim, const char* what, std::vector<float>* storage,
                 const float** out) {
  const bool f32 = m.dtype() == nb::dtype<float>();
  if (!f32 && m.dtype() != kFloat16) {
    return Status::InvalidArgument(std::string(what) + " must be float32 or float16");
  }
  if (m.shape(0) > 0 && m.shape(1) != dim) {
    return Status::InvalidArgument(std::string(what) + " have " + std::to_string(m.shape(1)) +
                                   " components, the collection has dim " + std::to_string(dim));
  }
  if (f32) {
    *out = static_cast<const float*>(m.data());
    return Status::OK();
  }
  const size_t n = m.shape(0) * m.shape(1);
  const _Float16* src = static_cast<const _Float16*>(m.data());
  nb::gil_scoped_release release;
  storage->resize(n);
  for (size_t i = 0; i < n; ++i) (*storage)[i] = static_cast<float>(src[i]);
  *out = storage->data();
  return Status::OK();
}

// A stored value as a Python object: None, int, float, str, bool or a list of str.
nb::object ValueToPython(const Value& v) {
  switch (v.index()) {
    case 1: return nb::int_(std::get<int64_t>(v));
    case 2: return nb::float_(std::get<double>(v));
    case 3: {
      const std::string& t = std::get<std::string>(v);
      return nb::steal(PyUnicode_DecodeUTF8(t.data(), static_cast<Py_ssize_t>(t.size()), "replace"));
    }
    case 4: return nb::bool_(std::get<bool>(v));
    case 5: {
      nb::list out;
      for (const std::string& t : std::get<std::vector<std::string>>(v)) {
        out.append(nb::steal(
            PyUnicode_DecodeUTF8(t.data(), static_cast<Py_ssize_t>(t.size()), "replace")));
      }
      return out;
    }
    default: return nb::none();
  }
}

// A Python value for an update: None, bool, int, float, str, or a list/tuple of str.
Status PythonToValue(nb::handle h, const std::string& name, Value* out) {
  if (h.is_none()) {
    *out = std::monostate();
  } else if (nb::isinstance<nb::bool_>(h)) {
    *out = nb::cast<bool>(h);
  } else if (nb::isinstance<nb::int_>(h)) {
    *out = nb::cast<int64_t>(h);
  } else if (nb::isinstance<nb::float_>(h)) {
    *out = nb::cast<double>(h);
  } else if (nb::isinstance<nb::str>(h)) {
    *out = nb::cast<std::string>(h);
  } else if (nb::isinstance<nb::list>(h) || nb::isinstance<nb::tuple>(h)) {
    std::vector<std::string> tags;
    for (nb::handle t : h) {
      if (!nb::isinstance<nb::str>(t)) {
        return Status::InvalidArgument("set '" + name + "': a tags value is a list of strings");
      }
      tags.push_back(nb::cast<std::string>(t));
    }
    *out = std::move(tags);
  } else {
    return Status::InvalidArgument("set '" + name +
                                   "': expected None, a bool, int, float, str or list of str");
  }
  return Status::OK();
}

// {"id": ..., attribute: value, ..., "vector": float32 array} for one row. REQUIRES: the GIL.
nb::dict RowToPython(const Row& row, const std::vector<std::string>& names, bool vector) {
  nb::dict d;
  d["id"] = nb::int_(row.id);
  for (size_t a = 0; a < names.size() && a < row.attributes.size(); ++a) {
    d[nb::str(names[a].c_str())] = ValueToPython(row.attributes[a]);
  }
  if (vector) {
    std::unique_ptr<float[]> v(new float[row.vector.size()]);
    std::copy(row.vector.begin(), row.vector.end(), v.get());
    const size_t n = row.vector.size();
    float* raw = v.release();
    nb::capsule owner(raw, [](void* q) noexcept { delete[] static_cast<float*>(q); });
    d["vector"] = nb::ndarray<nb::numpy, float, nb::ndim<1>>(raw, {n}, owner);
  }
  return d;
}

// A search's result arrays: ids [nq, kk] (-1 where a query has fewer rows), values [nq, kk]
// from each Neighbors' `field` (`fill` where missing) and counts [nq]. Made with the GIL held;
// a large result is copied into them without it. REQUIRES: the GIL held.
template <typename T>
nb::tuple ResultArrays(const SearchResult& result, size_t nq, size_t kk,
                       std::vector<T> Neighbors::*field, T fill) {
  int64_t* ids = nullptr;
  T* values = nullptr;
  int64_t* counts = nullptr;
  nb::object ids_array = NewArray2D(nq, kk, &ids);
  nb::object values_array = NewArray2D(nq, kk, &values);
  nb::object counts_array = NewArray1D(nq, &counts);
  auto copy = [&] {
    for (size_t q = 0; q < nq; ++q) {
      const Neighbors& nbr = result.results[q];
      const std::vector<T>& v = nbr.*field;
      const size_t m = std::min(nbr.ids.size(), kk);
      int64_t* qi = ids + q * kk;
      T* qv = values + q * kk;
      std::copy(nbr.ids.begin(), nbr.ids.begin() + m, qi);
      std::copy(v.begin(), v.begin() + m, qv);
      std::fill(qi + m, qi + kk, int64_t{-1});
      std::fill(qv + m, qv + kk, fill);
      counts[q] = static_cast<int64_t>(m);
    }
  };
  constexpr size_t kCopyWithGil = 4096;  // elements: below, releasing the GIL costs more
  if (nq * kk <= kCopyWithGil) {
    copy();
  } else {
    nb::gil_scoped_release release;
    copy();
  }
  return nb::make_tuple(ids_array, values_array, counts_array);
}

// With include: per query, a list of its first `width` neighbours' rows (dicts, best first);
// None without. REQUIRES: the GIL.
nb::object IncludedRows(const SearchRequest& request, const SearchResult& result, size_t width) {
  if (request.include.empty()) return nb::none();
  nb::list per_query;
  for (const Neighbors& nbr : result.results) {
    nb::list list;
    for (size_t i = 0; i < nbr.ids.size() && i < width; ++i) {
      Row row;
      row.id = nbr.ids[i];
      if (i < nbr.attributes.size()) row.attributes = nbr.attributes[i];
      if (i < nbr.vectors.size()) row.vector = nbr.vectors[i];
      list.append(RowToPython(row, result.attribute_names, request.include.vector));
    }
    per_query.append(list);
  }
  return std::move(per_query);
}

// A collection handle (DB::GetCollection) held by a Python Collection: every call through it
// acts on that one collection, and once it is dropped each raises NotFound, also after a
// collection of the same name is created again.
struct PyCollection {
  std::shared_ptr<Collection> c;
};

// A snapshot (DB::GetSnapshot) held by a Python Snapshot: released by Release() or when the
// object is collected; a database closed first has freed it already (the weak pointer says so).
// A read given a released one raises rather than reading the latest rows.
class PySnapshot {
 public:
  PySnapshot(std::weak_ptr<DB> db, const Snapshot* snapshot)
      : db_(std::move(db)), snapshot_(snapshot), id_(snapshot->id()) {}
  PySnapshot(const PySnapshot&) = delete;
  PySnapshot& operator=(const PySnapshot&) = delete;
  ~PySnapshot() { Release(); }

  uint64_t id() const { return id_; }
  bool released() {
    std::lock_guard<std::mutex> l(mu_);
    return snapshot_ == nullptr || db_.expired();
  }
  void Release() {
    const Snapshot* s = nullptr;
    {
      std::lock_guard<std::mutex> l(mu_);
      s = snapshot_;
      snapshot_ = nullptr;
    }
    if (s == nullptr) return;
    if (std::shared_ptr<DB> db = db_.lock()) (void)db->ReleaseSnapshot(s);
  }
  // The snapshot for a read of `db`; raises when released or taken from another database.
  const Snapshot* For(const std::shared_ptr<DB>& db) {
    std::lock_guard<std::mutex> l(mu_);
    if (snapshot_ == nullptr || db_.expired()) {
      Raise(Status::InvalidArgument("snapshot " + std::to_string(id_) + " was released"));
    }
    if (db_.lock() != db) {
      Raise(Status::InvalidArgument("snapshot " + std::to_string(id_) +
                                    " belongs to another database"));
    }
    return snapshot_;
  }

 private:
  std::mutex mu_;
  const std::weak_ptr<DB> db_;
  const Snapshot* snapshot_;
  const uint64_t id_;
};

class PyDB {
 public:
  // Opens (or creates) the database at path (DB::Open).
  PyDB(const std::string& path, bool create, bool error_if_exists, bool read_only,
       const std::vector<int>& devices, uint32_t cpu_executors, uint64_t device_memory_bytes,
       int first_use_mode, double first_use_time_limit_s) {
    Options options;
    options.create_if_missing = create;
    options.error_if_exists = error_if_exists;
    options.read_only = read_only;
    options.devices = devices;
    options.cpu_executors = cpu_executors;
    options.device_memory_bytes = device_memory_bytes;
    // sieve.open's modes, in order: "unknown", "off", "always" (FirstUseCalibration::Mode).
    options.first_use_calibration.mode = static_cast<FirstUseCalibration::Mode>(first_use_mode);
    options.first_use_calibration.time_limit_s = first_use_time_limit_s;
    std::unique_ptr<DB> db;
    Status s;
    {
      nb::gil_scoped_release release;
      s = DB::Open(options, path, &db);
    }
    ThrowIfError(s);
    db_ = std::move(db);
  }
  PyDB(const PyDB&) = delete;
  PyDB& operator=(const PyDB&) = delete;

  void Close() {
    std::shared_ptr<DB> db;
    {
      std::lock_guard<std::mutex> l(mu_);
      db = std::move(db_);
    }
    // The last reference closes the store; a call still running elsewhere holds its own.
    nb::gil_scoped_release release;
    db.reset();
  }

  bool closed() {
    std::lock_guard<std::mutex> l(mu_);
    return db_ == nullptr;
  }

  void CreateCollection(const std::string& name, uint32_t dim, const std::string& metric,
                        const std::string& dtype,
                        const std::vector<std::pair<std::string, std::string>>& attributes,
                        uint32_t shards, double bm25_k1, double bm25_b) {
    CollectionSpec spec;
    spec.name = name;
    spec.dim = dim;
    spec.shards = shards;
    spec.bm25_k1 = bm25_k1;
    spec.bm25_b = bm25_b;
    ThrowIfError(ParseMetric(metric, &spec.metric));
    ThrowIfError(ParseDType(dtype, &spec.dtype));
    for (const auto& [attr, type] : attributes) {
      AttributeSpec a;
      a.name = attr;
      Status s = ParseAttributeType(type, &a);
      if (!s.ok()) Raise(s.WithContext("attribute '" + attr + "'"));
      spec.attributes.push_back(std::move(a));
    }
    std::shared_ptr<DB> db = Get();
    Status s;
    {
      nb::gil_scoped_release release;
      s = db->CreateCollection(spec);
    }
    ThrowIfError(s);
  }

  std::vector<std::string> ListCollections() {
    std::shared_ptr<DB> db = Get();
    std::vector<std::string> names;
    Status s;
    {
      nb::gil_scoped_release release;
      s = db->ListCollections(&names);
    }
    ThrowIfError(s);
    return names;
  }

  // (next_auto_id, live rows): what an ingest without ids would start from (sieve.ray assigns
  // ids across shards from it).
  nb::tuple IdState(const PyCollection& h) {
    const CollectionStats stats = Stats(h);
    return nb::make_tuple(stats.next_auto_id, stats.rows);
  }

  std::string StatsJson(const PyCollection& h) { return Stats(h).ToJson(); }

  // DB::GetStats without the GIL; raises on failure.
  CollectionStats Stats(const PyCollection& h) {
    std::shared_ptr<DB> db = Get();
    CollectionStats stats;
    Status s;
    {
      nb::gil_scoped_release release;
      s = h.c->GetStats(&stats);
    }
    ThrowIfError(s);
    return stats;
  }

  nb::tuple Ingest(const PyCollection& h, const Matrix& vectors, std::optional<Ids> ids,
                   nb::handle columns, size_t batch_rows, bool upsert, bool auto_ids,
                   bool validate_only) {
    std::shared_ptr<DB> db = Get();
    const std::shared_ptr<Collection>& collection = h.c;
    const CollectionSpec& spec = collection->spec();
    const size_t n = vectors.shape(0);
    std::vector<float> widened;
    RowBatch batch;
    batch.num_rows = n;
    batch.dim = spec.dim;  // FloatRows checks the array's columns against it
    ThrowIfError(FloatRows(vectors, spec.dim, "vectors", &widened, &batch.vectors));
    if (ids) {
      if (ids->shape(0) != n) {
        Raise(Status::InvalidArgument(std::to_string(ids->shape(0)) + " ids for " +
                                      std::to_string(n) + " vectors"));
      }
      batch.ids = ids->data();
    }
    std::vector<std::vector<Value>> rows;
    if (!columns.is_none()) {
      ThrowIfError(ColumnsToRows(columns, n, spec.attributes.size(), &rows));
      batch.attributes = rows.data();
    }
    IngestOptions options;
    options.batch_rows = batch_rows;
    options.auto_ids = auto_ids;
    options.validate_only = validate_only;
    IngestResult result;
    g_last_ingest_vectors = reinterpret_cast<uintptr_t>(batch.vectors);
    Status s;
    {
      nb::gil_scoped_release release;
      {
        EngineTimer timer;
        s = upsert ? collection->Upsert(batch, options, &result)
                   : collection->Ingest(batch, options, &result);
      }
      // Freed here, not after the GIL is back: a million rows of values take a while.
      FreeRows(&rows);
    }
    ThrowIfError(s);
    return nb::make_tuple(result.ingested, result.live_rows, result.replaced);
  }

  // (found, rows): rows[i] is a dict (see RowToPython), or None when ids[i] is not live.
  nb::list GetRows(const PyCollection& h, const Ids& ids, const std::string& include,
                   PySnapshot* snapshot) {
    std::shared_ptr<DB> db = Get();
    Include inc;
    ThrowIfError(Include::Parse(include, &inc));
    ReadOptions read;
    if (snapshot != nullptr) read.snapshot = snapshot->For(db);
    GetResult result;
    Status s;
    {
      nb::gil_scoped_release release;
      s = h.c->Get(read, ids.data(), ids.shape(0), inc, &result);
    }
    ThrowIfError(s);
    nb::list out;
    for (size_t i = 0; i < result.rows.size(); ++i) {
      if (result.found[i]) {
        out.append(RowToPython(result.rows[i], result.attribute_names, inc.vector));
      } else {
        out.append(nb::none());
      }
    }
    return out;
  }

  uint64_t Count(const PyCollection& h, const std::string& filter, PySnapshot* snapshot) {
    std::shared_ptr<DB> db = Get();
    ReadOptions read;
    if (snapshot != nullptr) read.snapshot = snapshot->For(db);
    uint64_t count = 0;
    Status s;
    {
      nb::gil_scoped_release release;
      s = h.c->Count(read, filter, &count);
    }
    ThrowIfError(s);
    return count;
  }

  // One page: (rows, next cursor or None).
  nb::tuple Scan(const PyCollection& h, const std::string& filter, const std::string& include,
                 std::optional<int64_t> after, size_t limit, PySnapshot* snapshot) {
    std::shared_ptr<DB> db = Get();
    ScanRequest request;
    if (snapshot != nullptr) request.snapshot = snapshot->For(db);
    request.filter = filter;
    ThrowIfError(Include::Parse(include, &request.include));
    request.has_after = after.has_value();
    request.after = after.value_or(0);
    request.limit = limit;
    ScanResult result;
    Status s;
    {
      nb::gil_scoped_release release;
      s = h.c->Scan(request, &result);
    }
    ThrowIfError(s);
    nb::list rows;
    for (const Row& row : result.rows) {
      rows.append(RowToPython(row, result.attribute_names, request.include.vector));
    }
    return nb::make_tuple(rows, result.done ? nb::none() : nb::object(nb::int_(result.next)));
  }

  uint64_t Update(const PyCollection& h, std::optional<Ids> ids, const std::string& filter,
                  nb::dict set) {
    std::shared_ptr<DB> db = Get();
    UpdateRequest request;
    if (ids) {
      request.ids = ids->data();
      request.num_ids = ids->shape(0);
      if (request.num_ids == 0) return 0;
    }
    request.filter = filter;
    for (auto [key, value] : set) {
      if (!nb::isinstance<nb::str>(key)) Raise(Status::InvalidArgument("set: names are strings"));
      const std::string attr = nb::cast<std::string>(key);
      Value v;
      ThrowIfError(PythonToValue(value, attr, &v));
      request.set.emplace_back(attr, std::move(v));
    }
    uint64_t updated = 0;
    Status s;
    {
      nb::gil_scoped_release release;
      s = h.c->Update(request, &updated);
    }
    ThrowIfError(s);
    return updated;
  }

  // The handle a Python Collection keeps (DB::GetCollection); NotFound for an unknown name.
  PyCollection OpenCollection(const std::string& name) {
    std::shared_ptr<DB> db = Get();
    PyCollection h;
    Status s;
    {
      nb::gil_scoped_release release;
      s = db->GetCollection(name, &h.c);
    }
    ThrowIfError(s);
    return h;
  }

  void DropCollection(const std::string& name) {
    std::shared_ptr<DB> db = Get();
    Status s;
    {
      nb::gil_scoped_release release;
      s = db->DropCollection(name);
    }
    ThrowIfError(s);
  }

  // Collection::Alter: op is "add", "drop" or "rename"; returns the schema after it as
  // (name, [(attribute, type)...], rows rewritten, chunks rewritten).
  nb::tuple Alter(const PyCollection& h, const std::string& op, const std::string& name,
                  const std::string& type, nb::handle default_value,
                  const std::string& new_name) {
    std::shared_ptr<DB> db = Get();
    AlterRequest request;
    if (op == "add") {
      AttributeSpec parsed;
      ThrowIfError(ParseAttributeType(type, &parsed));
      Value v;
      if (!default_value.is_none()) {
        ThrowIfError(PythonToValue(default_value, name, &v).WithContext("default"));
      }
      request = AlterRequest::AddAttribute(name, parsed.type, std::move(v));
      request.analyzer = parsed.analyzer;
    } else if (op == "drop") {
      request = AlterRequest::DropAttribute(name);
    } else if (op == "rename") {
      request = AlterRequest::RenameAttribute(name, new_name);
    } else {
      Raise(Status::InvalidArgument("alter: unknown operation '" + op + "'"));
    }
    AlterResult result;
    Status s;
    {
      nb::gil_scoped_release release;
      s = h.c->Alter(request, &result);
    }
    ThrowIfError(s);
    nb::list attrs;
    for (const AttributeSpec& a : result.spec.attributes) {
      attrs.append(nb::make_tuple(a.name, AttributeTypeText(a)));
    }
    return nb::make_tuple(result.spec.name, attrs, result.rows, result.chunks_rewritten);
  }

  // Collection::Alter with AlterRequest::SetBm25; returns the (k1, b) now in force.
  std::pair<double, double> SetBm25(const PyCollection& h, double k1, double b) {
    std::shared_ptr<DB> db = Get();
    AlterResult result;
    Status s;
    {
      nb::gil_scoped_release release;
      s = h.c->Alter(AlterRequest::SetBm25(k1, b), &result);
    }
    ThrowIfError(s);
    return {result.spec.bm25_k1, result.spec.bm25_b};
  }

  // The collection's BM25 parameters (CollectionSpec::bm25_k1, bm25_b).
  std::pair<double, double> Bm25(const PyCollection& h) {
    const CollectionSpec spec = h.c->spec();
    return {spec.bm25_k1, spec.bm25_b};
  }

  // Collection::Rename.
  void RenameCollection(const PyCollection& h, const std::string& new_name) {
    std::shared_ptr<DB> db = Get();
    Status s;
    {
      nb::gil_scoped_release release;
      s = h.c->Rename(new_name);
    }
    ThrowIfError(s);
  }

  // DB::RenameCollection, by name.
  void RenameByName(const std::string& name, const std::string& new_name) {
    std::shared_ptr<DB> db = Get();
    Status s;
    {
      nb::gil_scoped_release release;
      s = db->RenameCollection(name, new_name);
    }
    ThrowIfError(s);
  }

  void PutAlias(const std::string& alias, const std::string& collection) {
    std::shared_ptr<DB> db = Get();
    Status s;
    {
      nb::gil_scoped_release release;
      s = db->PutAlias(alias, collection);
    }
    ThrowIfError(s);
  }

  void DropAlias(const std::string& alias) {
    std::shared_ptr<DB> db = Get();
    Status s;
    {
      nb::gil_scoped_release release;
      s = db->DropAlias(alias);
    }
    ThrowIfError(s);
  }

  std::vector<std::pair<std::string, std::string>> ListAliases() {
    std::shared_ptr<DB> db = Get();
    std::vector<AliasInfo> aliases;
    Status s;
    {
      nb::gil_scoped_release release;
      s = db->ListAliases(&aliases);
    }
    ThrowIfError(s);
    std::vector<std::pair<std::string, std::string>> out;
    for (const AliasInfo& a : aliases) out.emplace_back(a.alias, a.collection);
    return out;
  }

  // DB::Compact over every collection ("").
  nb::dict CompactAll(const std::string& name, bool force) {
    std::shared_ptr<DB> db = Get();
    CompactOptions options;
    options.force = force;
    CompactResult result;
    Status s;
    {
      nb::gil_scoped_release release;
      s = db->Compact(name, options, &result);
    }
    ThrowIfError(s);
    return CompactDict(result);
  }

  std::string Backup(const std::string& dest, uint32_t keep) {
    std::shared_ptr<DB> db = Get();
    BackupOptions options;
    options.dest = dest;
    options.keep = keep;
    BackupResult result;
    Status s;
    {
      nb::gil_scoped_release release;
      s = db->Backup(options, &result);
    }
    ThrowIfError(s);
    return result.ToJson();
  }

  nb::dict Compact(const PyCollection& h, bool force) {
    std::shared_ptr<DB> db = Get();
    CompactOptions options;
    options.force = force;
    CompactResult result;
    Status s;
    {
      nb::gil_scoped_release release;
      s = h.c->Compact(options, &result);
    }
    ThrowIfError(s);
    return CompactDict(result);
  }

  static nb::dict CompactDict(const CompactResult& result) {
    nb::dict d;
    d["bytes_before"] = result.bytes_before;
    d["bytes_after"] = result.bytes_after;
    d["rows_removed"] = result.rows_removed;
    d["shards_rewritten"] = result.shards_rewritten;
    d["shards_skipped"] = result.shards_skipped;
    d["rows_left_deleted"] = result.rows_left_deleted;
    if (!result.note.empty()) d["note"] = result.note;
    return d;
  }

  uint64_t DeleteIds(const PyCollection& h, const Ids& ids) {
    std::shared_ptr<DB> db = Get();
    uint64_t deleted = 0;
    Status s;
    {
      nb::gil_scoped_release release;
      s = h.c->DeleteByIds(ids.data(), ids.shape(0), &deleted);
    }
    ThrowIfError(s);
    return deleted;
  }

  uint64_t DeleteFilter(const PyCollection& h, const std::string& filter) {
    std::shared_ptr<DB> db = Get();
    uint64_t deleted = 0;
    Status s;
    {
      nb::gil_scoped_release release;
      s = h.c->DeleteByFilter(filter, &deleted);
    }
    ThrowIfError(s);
    return deleted;
  }

  nb::tuple Search(const PyCollection& h, const Matrix& queries, int k, const std::string& filter,
                   std::optional<std::vector<std::string>> filters, const std::string& device,
                   const std::string& path, bool explain, const std::string& include,
                   PySnapshot* snapshot, std::optional<double> radius, int limit,
                   std::optional<int64_t> offset, std::optional<std::vector<std::string>> after) {
    std::shared_ptr<DB> db = Get();
    const std::shared_ptr<Collection>& collection = h.c;
    const CollectionSpec& spec = collection->spec();
    SearchRequest request;
    std::vector<float> widened;
    ThrowIfError(FloatRows(queries, spec.dim, "queries", &widened, &request.queries));
    request.num_queries = queries.shape(0);
    request.dim = spec.dim;
    request.k = k;
    request.filter = filter;
    if (filters) request.filters = std::move(*filters);
    request.radius = radius;
    request.limit = limit;
    request.offset = offset;
    if (after) request.after = std::move(*after);
    ThrowIfError(Include::Parse(include, &request.include));
    SearchOptions options;
    ThrowIfError(ParseDevice(device, &options.device));
    ThrowIfError(ParseSearchPath(path, &options.path));
    if (snapshot != nullptr) options.snapshot = snapshot->For(db);
    options.stage_times = explain;  // the times are shown only in the plan
    g_last_search_queries = reinterpret_cast<uintptr_t>(request.queries);
    const size_t nq = request.num_queries;
    size_t kk = k > 0 ? static_cast<size_t>(k) : 0;
    SearchResult result;
    std::string plan;
    Status s;
    {
      nb::gil_scoped_release release;
      {
        EngineTimer timer;
        s = collection->Search(request, options, &result);
      }
      if (s.ok() && request.radius) {
        // A range search's rows per query vary: the arrays are as wide as the most.
        kk = 0;
        for (const Neighbors& nbr : result.results) kk = std::max(kk, nbr.ids.size());
      }
      if (s.ok() && explain) plan = result.explain.ToJson();
    }
    ThrowIfError(s);
    // Missing results (fewer than k rows pass): id -1 and the worst distance of the metric.
    const float fill = spec.metric == Metric::kInnerProduct
                           ? -std::numeric_limits<float>::infinity()
                           : std::numeric_limits<float>::infinity();
    nb::tuple arrays = ResultArrays(result, nq, kk, &Neighbors::distances, fill);
    nb::object rows = IncludedRows(request, result, kk);
    // Range search: per query, whether its limit was reached; pages: per query, the cursor of
    // the next page (None when no rows follow).
    nb::object limit_reached = nb::none(), next = nb::none();
    if (request.radius) {
      nb::list list;
      for (const Neighbors& nbr : result.results) list.append(nb::bool_(nbr.limit_reached));
      limit_reached = std::move(list);
    }
    if (request.offset || !request.after.empty()) {
      nb::list list;
      for (const Neighbors& nbr : result.results) {
        list.append(nbr.next.empty() ? nb::none() : nb::object(nb::str(nbr.next.c_str())));
      }
      next = std::move(list);
    }
    return nb::make_tuple(arrays[0], arrays[1], arrays[2],
                          explain ? nb::object(nb::str(plan.c_str())) : nb::none(), rows,
                          limit_reached, next);
  }

  // A grouped search (SearchRequest::group_by): (per query, a list of (value, ids, distances,
  // rows or None) per group, best first; plan JSON or None).
  nb::tuple SearchGroups(const PyCollection& h, const Matrix& queries, int k,
                         const std::string& filter,
                         std::optional<std::vector<std::string>> filters,
                         const std::string& device, const std::string& path, bool explain,
                         const std::string& include, PySnapshot* snapshot,
                         const std::string& group_by, int group_size,
                         const std::string& group_strategy) {
    std::shared_ptr<DB> db = Get();
    const std::shared_ptr<Collection>& collection = h.c;
    SearchRequest request;
    std::vector<float> widened;
    ThrowIfError(FloatRows(queries, collection->spec().dim, "queries", &widened,
                           &request.queries));
    request.num_queries = queries.shape(0);
    request.dim = collection->spec().dim;
    request.k = k;
    request.filter = filter;
    if (filters) request.filters = std::move(*filters);
    ThrowIfError(Include::Parse(include, &request.include));
    request.group_by = group_by;
    request.group_size = group_size;
    ThrowIfError(ParseGroupStrategy(group_strategy, &request.group_strategy));
    SearchOptions options;
    ThrowIfError(ParseDevice(device, &options.device));
    ThrowIfError(ParseSearchPath(path, &options.path));
    if (snapshot != nullptr) options.snapshot = snapshot->For(db);
    options.stage_times = explain;  // the times are shown only in the plan
    g_last_search_queries = reinterpret_cast<uintptr_t>(request.queries);
    SearchResult result;
    Status s;
    {
      nb::gil_scoped_release release;
      EngineTimer timer;
      s = collection->Search(request, options, &result);
    }
    ThrowIfError(s);
    nb::list per_query;
    for (const Neighbors& nbr : result.results) {
      nb::list groups;
      for (const Group& g : nbr.groups) {
        nb::object rows = nb::none();
        if (!request.include.empty()) {
          nb::list list;
          for (size_t i = 0; i < g.ids.size(); ++i) {
            Row row;
            row.id = g.ids[i];
            if (i < g.attributes.size()) row.attributes = g.attributes[i];
            if (i < g.vectors.size()) row.vector = g.vectors[i];
            list.append(RowToPython(row, result.attribute_names, request.include.vector));
          }
          rows = std::move(list);
        }
        groups.append(nb::make_tuple(ValueToPython(g.value), nb::cast(g.ids),
                                     nb::cast(g.distances), rows));
      }
      per_query.append(groups);
    }
    return nb::make_tuple(per_query, explain ? nb::object(nb::str(result.explain.ToJson().c_str()))
                                             : nb::none());
  }

  // A text or hybrid search (SearchRequest::text): (ids, scores as float64, counts, plan JSON
  // or None, rows or None); `queries` None for a text-only search (one result row). Missing
  // results: id -1 and score -inf.
  nb::tuple SearchText(const PyCollection& h, std::optional<Matrix> queries, int k,
                       const std::string& filter,
                       std::optional<std::vector<std::string>> filters,
                       const std::string& device, const std::string& path, bool explain,
                       const std::string& include, const std::string& text_field,
                       const std::string& text, const std::string& fusion, double rrf_c,
                       double vector_weight, double text_weight, int depth,
                       PySnapshot* snapshot) {
    std::shared_ptr<DB> db = Get();
    const std::shared_ptr<Collection>& collection = h.c;
    SearchRequest request;
    std::vector<float> widened;
    if (queries) {  // (a text-only search needs no copy of the spec)
      const uint32_t dim = collection->spec().dim;
      ThrowIfError(FloatRows(*queries, dim, "queries", &widened, &request.queries));
      request.num_queries = queries->shape(0);
      request.dim = dim;
    }
    request.k = k;
    request.filter = filter;
    if (filters) request.filters = std::move(*filters);
    ThrowIfError(Include::Parse(include, &request.include));
    request.text_field = text_field;
    request.text = text;
    ThrowIfError(ParseFusionMethod(fusion, &request.fusion.method));
    request.fusion.rrf_c = rrf_c;
    request.fusion.vector_weight = vector_weight;
    request.fusion.text_weight = text_weight;
    request.fusion.depth = depth;
    SearchOptions options;
    ThrowIfError(ParseDevice(device, &options.device));
    ThrowIfError(ParseSearchPath(path, &options.path));
    if (snapshot != nullptr) options.snapshot = snapshot->For(db);
    options.stage_times = explain;  // the times are shown only in the plan
    const size_t kk = k > 0 ? static_cast<size_t>(k) : 0;
    SearchResult result;
    std::string plan;
    Status s;
    {
      nb::gil_scoped_release release;
      {
        EngineTimer timer;
        s = collection->Search(request, options, &result);
      }
      if (s.ok() && explain) plan = result.explain.ToJson();
    }
    ThrowIfError(s);
    nb::tuple arrays = ResultArrays(result, result.results.size(), kk, &Neighbors::scores,
                                    -std::numeric_limits<double>::infinity());
    nb::object rows = IncludedRows(request, result, kk);
    return nb::make_tuple(arrays[0], arrays[1], arrays[2],
                          explain ? nb::object(nb::str(plan.c_str())) : nb::none(), rows);
  }

  // (None, report) when every invariant holds; (message, problems) on Corruption; other
  // failures raise.
  std::pair<std::optional<std::string>, std::vector<std::string>> Check() {
    std::shared_ptr<DB> db = Get();
    std::vector<std::string> report;
    Status s;
    {
      nb::gil_scoped_release release;
      s = db->Check(&report);
    }
    if (s.IsCorruption()) return {s.message(), report};
    ThrowIfError(s);
    return {std::nullopt, report};
  }

  std::pair<std::string, std::string> PlannerThresholdsJson(const std::string& device) {
    std::shared_ptr<DB> db = Get();
    Device d;
    ThrowIfError(ParseDevice(device, &d));
    PlannerThresholds t;
    std::string device_name;
    Status s;
    {
      nb::gil_scoped_release release;
      s = db->GetPlannerThresholds(d, &t, &device_name);
    }
    ThrowIfError(s);
    return {t.ToJson(), device_name};
  }

  void SetPlannerThresholds(const std::string& device_name, const std::string& json) {
    std::shared_ptr<DB> db = Get();
    PlannerThresholds t;
    ThrowIfError(PlannerThresholds::FromJson(json, &t));
    Status s;
    {
      nb::gil_scoped_release release;
      s = db->PutPlannerThresholds(device_name, t);
    }
    ThrowIfError(s);
  }

  // DB::Calibrate on this process's open database (what `sieve calibrate` does): times the
  // paths of the device's executor over its grid (a time limit stops it before the next shape),
  // fits the thresholds and stores them under the executor's name unless !store.
  // Returns (device name, stored, seconds, complete, points, thresholds JSON).
  std::tuple<std::string, bool, double, bool, size_t, std::string> Calibrate(
      const std::string& device, bool quick, bool store, double time_limit_s) {
    std::shared_ptr<DB> db = Get();
    CalibrateOptions options;
    ThrowIfError(ParseDevice(device, &options.device));
    if (!(time_limit_s >= 0)) Raise(Status::InvalidArgument("time_limit_s must be >= 0"));
    options.quick = quick;
    options.store = store;
    options.time_limit_s = time_limit_s;
    options.caller = quick ? "sieve.Database.calibrate quick" : "sieve.Database.calibrate";
    CalibrateReport report;
    Status s;
    {
      nb::gil_scoped_release release;
      s = db->Calibrate(options, &report);
    }
    ThrowIfError(s);
    return {report.device, report.stored, report.seconds, report.complete, report.points,
            report.thresholds.ToJson()};
  }

 private:
 public:
  // DB::GetSnapshot, held by the returned object.
  std::unique_ptr<PySnapshot> TakeSnapshot() {
    std::shared_ptr<DB> db = Get();
    const Snapshot* snapshot = nullptr;
    Status s;
    {
      nb::gil_scoped_release release;
      s = db->GetSnapshot(&snapshot);
    }
    ThrowIfError(s);
    return std::make_unique<PySnapshot>(db, snapshot);
  }

 private:
  std::shared_ptr<DB> Get() {
    std::lock_guard<std::mutex> l(mu_);
    if (db_ == nullptr) Raise(Status::InvalidArgument("the database is closed"));
    return db_;
  }

  std::mutex mu_;
  std::shared_ptr<DB> db_;
};

}  // namespace
}  // namespace sieve::python

NB_MODULE(_sieve, m) {
  using namespace sieve::python;
  using sieve::Status;
  m.doc() = "Sieve's C++ engine (include/sieve/). Use the sieve package, not this module.";
  nb::set_leak_warnings(false);
  InitErrors();
  InitNumpyArrays();

  nb::class_<PyCollection>(m, "_Collection",
                           "A collection handle (DB::GetCollection): what a Collection acts on.")
      .def_prop_ro("dropped", [](const PyCollection& h) { return h.c->dropped(); },
                   "Whether the collection was dropped (its calls then raise NotFound).")
      .def_prop_ro("name", [](const PyCollection& h) { return h.c->name(); });

  nb::class_<PySnapshot>(m, "_Snapshot",
                         "A snapshot (DB::GetSnapshot): reads given it see the store as it was.")
      .def_prop_ro("id", &PySnapshot::id, "Its number, unique among the database's snapshots.")
      .def_prop_ro("released", &PySnapshot::released,
                   "Whether it was released (or its database closed).")
      .def("release", &PySnapshot::Release, "DB::ReleaseSnapshot (once; later calls do nothing).");

  nb::class_<PyDB>(m, "_DB", "An open database (sieve::DB). Thread-safe.")
      .def(nb::init<const std::string&, bool, bool, bool, const std::vector<int>&, uint32_t,
                    uint64_t, int, double>(),
           "path"_a, "create"_a, "error_if_exists"_a, "read_only"_a,
           "devices"_a = std::vector<int>(), "cpu_executors"_a = 1, "device_memory_bytes"_a = 0,
           "first_use_mode"_a = 0, "first_use_time_limit_s"_a = 30.0,
           "Opens or creates the database at path (DB::Open; devices, cpu_executors, "
           "device_memory_bytes and the first-use calibration's mode and time limit as Options' "
           "fields).")
      .def("close", &PyDB::Close, "Closes the database once every running call has returned.")
      .def_prop_ro("closed", &PyDB::closed, "Whether close() was called.")
      .def("create_collection", &PyDB::CreateCollection, "name"_a, "dim"_a, "metric"_a,
           "dtype"_a, "attributes"_a, "shards"_a, "bm25_k1"_a = 1.5, "bm25_b"_a = 0.75,
           "DB::CreateCollection.")
      .def("list_collections", &PyDB::ListCollections, "DB::ListCollections.")
      .def("stats_json", &PyDB::StatsJson, "collection"_a, "DB::GetStats as CollectionStats::ToJson.")
      .def("id_state", &PyDB::IdState, "collection"_a,
           "DB::GetStats' (next_auto_id, rows): where ingest without ids starts.")
      .def("ingest", &PyDB::Ingest, "collection"_a, "vectors"_a.noconvert(), "ids"_a.noconvert().none(),
           "columns"_a.none(), "batch_rows"_a, "upsert"_a, "auto_ids"_a, "validate_only"_a,
           "DB::Ingest or DB::Upsert; returns (ingested, live_rows, replaced).")
      .def("get", &PyDB::GetRows, "collection"_a, "ids"_a.noconvert(), "include"_a,
           "snapshot"_a.none() = nb::none(),
           "DB::Get; a dict per id, None for an id without a live row.")
      .def("count", &PyDB::Count, "collection"_a, "filter"_a, "snapshot"_a.none() = nb::none(),
           "DB::Count.")
      .def("scan", &PyDB::Scan, "collection"_a, "filter"_a, "include"_a, "after"_a.none(), "limit"_a,
           "snapshot"_a.none() = nb::none(), "DB::Scan; returns (rows, next cursor or None).")
      .def("snapshot", &PyDB::TakeSnapshot, "DB::GetSnapshot: a snapshot of the whole store.")
      .def("update", &PyDB::Update, "collection"_a, "ids"_a.noconvert().none(), "filter"_a, "set"_a,
           "DB::Update; returns the rows updated.")
      .def("collection", &PyDB::OpenCollection, "name"_a,
           "DB::GetCollection: the handle of the collection called name.")
      .def("drop_collection", &PyDB::DropCollection, "name"_a, "DB::DropCollection.")
      .def("set_bm25", &PyDB::SetBm25, "collection"_a, "k1"_a, "b"_a,
           "Collection::Alter(AlterRequest::SetBm25(k1, b)); returns (k1, b).")
      .def("bm25", &PyDB::Bm25, "collection"_a, "The collection's (bm25_k1, bm25_b).")
      .def("alter", &PyDB::Alter, "collection"_a, "op"_a, "name"_a, "type"_a,
           "default"_a.none(), "new_name"_a,
           "Collection::Alter (op: add, drop or rename); returns (collection name, [(attribute, "
           "type)], rows rewritten, chunks rewritten).")
      .def("rename_collection", &PyDB::RenameCollection, "collection"_a, "new_name"_a,
           "Collection::Rename.")
      .def("rename", &PyDB::RenameByName, "name"_a, "new_name"_a, "DB::RenameCollection.")
      .def("put_alias", &PyDB::PutAlias, "alias"_a, "collection"_a, "DB::PutAlias.")
      .def("drop_alias", &PyDB::DropAlias, "alias"_a, "DB::DropAlias.")
      .def("list_aliases", &PyDB::ListAliases, "DB::ListAliases as (alias, collection) pairs.")
      .def("compact", &PyDB::CompactAll, "name"_a, "force"_a = false,
           "DB::Compact (\"\": every collection); returns its CompactResult.")
      .def("backup", &PyDB::Backup, "dest"_a, "keep"_a,
           "DB::Backup; returns BackupResult::ToJson().")
      .def("compact_collection", &PyDB::Compact, "collection"_a, "force"_a = false,
           "Collection::Compact; returns its CompactResult.")
      .def("delete_ids", &PyDB::DeleteIds, "collection"_a, "ids"_a.noconvert(), "DB::DeleteByIds.")
      .def("delete_filter", &PyDB::DeleteFilter, "collection"_a, "filter"_a, "DB::DeleteByFilter.")
      .def("search", &PyDB::Search, "collection"_a, "queries"_a.noconvert(), "k"_a, "filter"_a,
           "filters"_a.none(), "device"_a, "path"_a, "explain"_a, "include"_a,
           "snapshot"_a.none() = nb::none(), "radius"_a.none() = nb::none(), "limit"_a = 1000,
           "offset"_a.none() = nb::none(), "after"_a.none() = nb::none(),
           "DB::Search; returns (ids, distances, counts, plan JSON or None, rows or None, "
           "limit_reached list or None, next cursors or None).")
      .def("search_groups", &PyDB::SearchGroups, "collection"_a, "queries"_a.noconvert(), "k"_a,
           "filter"_a, "filters"_a.none(), "device"_a, "path"_a, "explain"_a, "include"_a,
           "snapshot"_a.none(), "group_by"_a, "group_size"_a, "group_strategy"_a,
           "DB::Search with SearchRequest::group_by; returns (per query, [(value, ids, "
           "distances, rows or None)] per group, plan JSON or None).")
      .def("search_text", &PyDB::SearchText, "collection"_a, "queries"_a.noconvert().none(),
           "k"_a, "filter"_a, "filters"_a.none(), "device"_a, "path"_a, "explain"_a,
           "include"_a, "text_field"_a, "text"_a, "fusion"_a, "rrf_c"_a, "vector_weight"_a,
           "text_weight"_a, "depth"_a, "snapshot"_a.none() = nb::none(),
           "DB::Search with a text query; returns (ids, scores, counts, plan JSON or None, "
           "rows or None).")
      .def("check", &PyDB::Check, "DB::Check; returns (None or the Corruption message, report).")
      .def("planner_thresholds_json", &PyDB::PlannerThresholdsJson, "device"_a,
           "DB::GetPlannerThresholds; returns (PlannerThresholds::ToJson(), device name).")
      .def("set_planner_thresholds", &PyDB::SetPlannerThresholds, "device_name"_a, "json"_a,
           "DB::PutPlannerThresholds from PlannerThresholds::FromJson.")
      .def("calibrate", &PyDB::Calibrate, "device"_a, "quick"_a, "store"_a, "time_limit_s"_a,
           "The sweep and fit of `sieve calibrate`; returns (device, stored, seconds, complete, "
           "points, thresholds JSON).");

  m.def(
      "_raise_status",
      [](int code, const std::string& message) {
        using C = Status::Code;
        switch (static_cast<C>(code)) {
          case C::kNotFound: Raise(Status::NotFound(message));
          case C::kCorruption: Raise(Status::Corruption(message));
          case C::kNotSupported: Raise(Status::NotSupported(message));
          case C::kInvalidArgument: Raise(Status::InvalidArgument(message));
          case C::kIOError: Raise(Status::IOError(message));
          case C::kAlreadyExists: Raise(Status::AlreadyExists(message));
          case C::kResourceExhausted: Raise(Status::ResourceExhausted(message));
          case C::kUnavailable: Raise(Status::Unavailable(message));
          case C::kInternal: Raise(Status::Internal(message));
          default: Raise(Status::InvalidArgument("no error status has code " +
                                                 std::to_string(code)));
        }
      },
      "code"_a, "message"_a,
      "Raises the exception of sieve::Status::Code `code` as an engine call would (for tests "
      "of the status → exception mapping, which user input cannot reach for every code).");
  m.def(
      "backup_store",
      [](const std::string& path, const std::string& dest, uint32_t keep,
         const std::string& secondary_dir, uint32_t max_attempts) {
        sieve::BackupOptions options;
        options.dest = dest;
        options.keep = keep;
        options.secondary_dir = secondary_dir;
        options.max_attempts = max_attempts;
        sieve::BackupResult result;
        sieve::Status s;
        {
          nb::gil_scoped_release release;
          s = sieve::DB::BackupStore(path, options, &result);
        }
        ThrowIfError(s);
        return result.ToJson();
      },
      "path"_a, "dest"_a, "keep"_a, "secondary_dir"_a, "max_attempts"_a,
      "DB::BackupStore; returns BackupResult::ToJson().");
  m.def(
      "restore_backup",
      [](const std::string& dest, uint32_t backup_id, const std::string& path) {
        sieve::RestoreResult result;
        sieve::Status s;
        {
          nb::gil_scoped_release release;
          s = sieve::DB::RestoreBackup(dest, backup_id, path, &result);
        }
        ThrowIfError(s);
        return result.ToJson();
      },
      "dest"_a, "backup_id"_a, "path"_a,
      "DB::RestoreBackup; returns RestoreResult::ToJson().");
  m.def(
      "list_backups",
      [](const std::string& dest, bool verify, uint32_t backup_id) {
        sieve::BackupListing listing;
        sieve::Status s;
        {
          nb::gil_scoped_release release;
          s = verify ? sieve::DB::VerifyBackup(dest, backup_id, &listing)
                     : sieve::DB::ListBackups(dest, &listing);
        }
        if (!s.ok() && !s.IsCorruption()) ThrowIfError(s);
        std::vector<std::string> entries;
        for (const sieve::BackupEntry& e : listing.backups) entries.push_back(e.ToJson());
        std::optional<std::string> problem;
        if (!s.ok()) problem = s.ToString();
        return std::make_tuple(problem, entries, listing.ToJson());
      },
      "dest"_a, "verify"_a, "backup_id"_a,
      "DB::ListBackups, or DB::VerifyBackup when verify; returns (None or the Corruption "
      "message, sieve::BackupEntry::ToJson() per backup, sieve::BackupListing::ToJson()).");
  m.def(
      "analyze",
      [](const std::string& text, const std::string& analyzer) {
        std::vector<std::string> terms;
        std::vector<uint32_t> positions;
        sieve::Status s;
        {
          nb::gil_scoped_release release;
          s = sieve::AnalyzeText(analyzer, text, &terms, &positions);
        }
        ThrowIfError(s);
        return std::make_pair(std::move(terms), std::move(positions));
      },
      "text"_a, "analyzer"_a,
      "sieve::AnalyzeText; returns (terms, positions).");
  m.def(
      "_last_engine_seconds", [] { return static_cast<double>(g_last_engine_ns.load()) * 1e-9; },
      "How long the last DB::Ingest or DB::Search call took inside the engine (for the "
      "benchmarks that set the C++ API's time beside the Python call's).");
  m.def(
      "_last_input_pointers",
      [] {
        nb::dict d;
        d["ingest_vectors"] = g_last_ingest_vectors.load();
        d["search_queries"] = g_last_search_queries.load();
        return d;
      },
      "The addresses last handed to the engine as RowBatch::vectors and SearchRequest::queries "
      "(for tests that check arrays cross without a copy).");
}
