// Copyright 2026 The Sieve Authors.
//
// DBImpl, the engine behind sieve::DB: every public call with its results against an
// independent oracle (float64 brute force over the rows ingested, counts kept by the test) and
// its error paths, each of which must leave the store as it was.

#include "engine/db_impl.h"
#include "query/planner.h"

#include <gtest/gtest.h>

#include <filesystem>

#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "sieve/db.h"
#include "tests/testutil.h"

namespace sieve {
namespace {

constexpr uint32_t kDim = 8;

class DBImplTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status s = DB::Open(Options(), dir_.Join("db"), &db_);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  CollectionSpec Spec(const std::string& name, Metric metric = Metric::kL2) const {
    CollectionSpec spec;
    spec.name = name;
    spec.dim = kDim;
    spec.metric = metric;
    spec.attributes = {{"cat", AttrType::kInt}, {"color", AttrType::kString}};
    return spec;
  }

  // Ingests n rows with ids first_id.., cat = id % 5, color "red" for even ids else null.
  void IngestRows(const std::string& name, size_t n, int64_t first_id, uint64_t seed) {
    const std::vector<float> v = test::RandomVectors(n, kDim, seed);
    std::vector<int64_t> ids(n);
    std::vector<std::vector<Value>> attrs(n);
    for (size_t i = 0; i < n; ++i) {
      ids[i] = first_id + static_cast<int64_t>(i);
      attrs[i] = {Value(ids[i] % 5),
                  ids[i] % 2 == 0 ? Value(std::string("red")) : Value(std::monostate())};
      rows_.push_back(
          {ids[i], std::vector<float>(v.begin() + i * kDim, v.begin() + (i + 1) * kDim)});
    }
    RowBatch batch;
    batch.num_rows = n;
    batch.dim = kDim;
    batch.vectors = v.data();
    batch.ids = ids.data();
    batch.attributes = attrs.data();
    IngestResult r;
    Status s = db_->Ingest(name, batch, IngestOptions(), &r);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(r.ingested, n);
  }

  struct Row {
    int64_t id;
    std::vector<float> v;
  };

  // The float64 top-k ids over the live rows that `pass` keeps.
  template <typename Pass>
  std::vector<int64_t> OracleIds(Metric metric, const float* q, int k, Pass&& pass) const {
    std::vector<std::pair<double, int64_t>> all;
    for (const Row& r : rows_) {
      if (dead_.count(r.id) || !pass(r.id)) continue;
      all.emplace_back(test::OracleDistance(metric, q, r.v.data(), kDim), r.id);
    }
    const bool larger = metric == Metric::kInnerProduct;
    std::sort(all.begin(), all.end(), [&](const auto& a, const auto& b) {
      if (a.first != b.first) return larger ? a.first > b.first : a.first < b.first;
      return a.second < b.second;
    });
    std::vector<int64_t> ids;
    for (size_t i = 0; i < all.size() && i < static_cast<size_t>(k); ++i) {
      ids.push_back(all[i].second);
    }
    return ids;
  }

  test::ScratchDir dir_;
  std::unique_ptr<DB> db_;
  std::vector<Row> rows_;
  std::set<int64_t> dead_;
};

TEST_F(DBImplTest, OpenHonoursItsOptions) {
  std::unique_ptr<DB> other;
  Options o;
  o.create_if_missing = false;
  EXPECT_TRUE(DB::Open(o, dir_.Join("absent"), &other).IsNotFound());
  EXPECT_FALSE(std::filesystem::exists(dir_.Join("absent")));
  CollectionSpec two_shards = Spec("c", Metric::kL2);
  two_shards.shards = 2;
  ASSERT_TRUE(db_->CreateCollection(two_shards).ok());
  IngestRows("c", 40, 0, 7);
  o = Options();
  o.error_if_exists = true;
  db_.reset();  // release the lock
  EXPECT_FALSE(DB::Open(o, dir_.Join("db"), &other).ok());

  // GPU options are read at Open, with or without a GPU: a bad one is refused, naming it.
  o = Options();
  o.gpu.threshold_max_levels = 9;
  Status s = DB::Open(o, dir_.Join("db"), &other);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("threshold_max_levels"), std::string::npos) << s.ToString();
  o.gpu.threshold_max_levels = 3;
  o.gpu.candidate_sample_factor = 100;
  s = DB::Open(o, dir_.Join("db"), &other);
  EXPECT_NE(s.message().find("candidate_sample_factor"), std::string::npos) << s.ToString();
  o.gpu.candidate_sample_factor = GpuExecutorOptions().candidate_sample_factor;
  o.cpu_executors = 0;
  EXPECT_TRUE(DB::Open(o, dir_.Join("db"), &other).IsInvalidArgument());

  // The host-side options shape every search: the budget, the filter cache, the executors.
  o.cpu_executors = 2;
  o.memory_budget_bytes = uint64_t{123} << 20;
  o.filter_cache_bytes = 0;
  ASSERT_TRUE(DB::Open(o, dir_.Join("db"), &other).ok());
  const std::vector<float> q = test::RandomVectors(1, kDim, 8);
  SearchRequest req;
  req.queries = q.data();
  req.num_queries = 1;
  req.dim = kDim;
  req.k = 3;
  req.filter = "cat = 1";
  SearchOptions so;
  so.device = Device::kCpu;
  SearchResult r;
  for (int i = 0; i < 2; ++i) {
    s = other->Search("c", req, so, &r);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  EXPECT_EQ(r.explain.memory_budget_bytes, uint64_t{123} << 20);
  EXPECT_EQ(r.explain.filters_cached, 0u);  // no cache: the second search compiled again
  ASSERT_EQ(r.explain.devices.size(), 2u);  // the two shards, one on each executor
  EXPECT_EQ(r.explain.devices[0].device, "cpu0");
  EXPECT_EQ(r.explain.devices[1].device, "cpu1");
  other.reset();
  o = Options();  // the default cache keeps the compiled filter
  ASSERT_TRUE(DB::Open(o, dir_.Join("db"), &other).ok());
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(other->Search("c", req, so, &r).ok());
  EXPECT_EQ(r.explain.filters_cached, 2u);  // one (filter, shard) set per shard
  EXPECT_EQ(r.explain.memory_budget_bytes, DefaultMemoryBudget());
  EXPECT_EQ(r.explain.devices.size(), 1u);
  other.reset();

  // read_only: searches work, writes are refused.
  o.read_only = true;
  ASSERT_TRUE(DB::Open(o, dir_.Join("db"), &other).ok());
  ASSERT_TRUE(other->Search("c", req, so, &r).ok());
  uint64_t deleted = 0;
  EXPECT_TRUE(other->DeleteByFilter("c", "cat = 1", &deleted).IsNotSupported());
}

TEST_F(DBImplTest, CreateListAndStats) {
  ASSERT_TRUE(db_->CreateCollection(Spec("b")).ok());
  ASSERT_TRUE(db_->CreateCollection(Spec("a")).ok());
  EXPECT_TRUE(db_->CreateCollection(Spec("a")).IsAlreadyExists());
  CollectionSpec bad = Spec("bad name!");
  EXPECT_TRUE(db_->CreateCollection(bad).IsInvalidArgument());
  bad = Spec("zero");
  bad.dim = 0;
  EXPECT_TRUE(db_->CreateCollection(bad).IsInvalidArgument());
  bad = Spec("twice");
  bad.attributes.push_back({"cat", AttrType::kFloat});
  EXPECT_TRUE(db_->CreateCollection(bad).IsInvalidArgument());
  std::vector<std::string> names;
  ASSERT_TRUE(db_->ListCollections(&names).ok());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b"}));

  CollectionStats stats;
  EXPECT_TRUE(db_->GetStats("nope", &stats).IsNotFound());
  IngestRows("a", 30, 0, 1);
  ASSERT_TRUE(db_->GetStats("a", &stats).ok());
  EXPECT_EQ(stats.rows, 30u);
  EXPECT_EQ(stats.total_rows, 30u);
  EXPECT_EQ(stats.deleted_rows, 0u);
  EXPECT_EQ(stats.spec.dim, kDim);
}

TEST_F(DBImplTest, IngestRejectsBadBatchesWritingNothing) {
  ASSERT_TRUE(db_->CreateCollection(Spec("c")).ok());
  IngestRows("c", 10, 0, 2);
  std::vector<float> v = test::RandomVectors(3, kDim, 3);
  IngestResult r;
  RowBatch batch;
  batch.num_rows = 3;
  batch.dim = kDim;
  batch.vectors = v.data();
  EXPECT_TRUE(db_->Ingest("nope", batch, IngestOptions(), &r).IsNotFound());
  v[kDim + 2] = std::numeric_limits<float>::quiet_NaN();
  Status s = db_->Ingest("c", batch, IngestOptions(), &r);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("row 1"), std::string::npos) << s.message();
  v[kDim + 2] = 0.5f;
  std::vector<int64_t> ids = {100, 101, 100};  // repeats within the batch
  batch.ids = ids.data();
  EXPECT_TRUE(db_->Ingest("c", batch, IngestOptions(), &r).IsInvalidArgument());
  ids = {100, 101, 5};  // 5 is live
  EXPECT_TRUE(db_->Ingest("c", batch, IngestOptions(), &r).IsInvalidArgument());
  ids = {100, 101, 102};
  std::vector<std::vector<Value>> attrs = {{Value(std::string("x"))}, {}, {}};  // cat is int
  batch.attributes = attrs.data();
  s = db_->Ingest("c", batch, IngestOptions(), &r);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("cat"), std::string::npos) << s.message();
  CollectionStats stats;
  ASSERT_TRUE(db_->GetStats("c", &stats).ok());
  EXPECT_EQ(stats.rows, 10u) << "a rejected batch wrote rows";
  // A good batch in commits of 2 rows reports its progress.
  attrs = {{Value(int64_t{1})}, {}, {Value(int64_t{2}), Value(std::string("red"))}};
  IngestOptions opts;
  opts.batch_rows = 2;
  std::vector<size_t> progress;
  opts.progress = [&](size_t done, size_t total) {
    progress.push_back(done);
    EXPECT_EQ(total, 3u);
  };
  ASSERT_TRUE(db_->Ingest("c", batch, opts, &r).ok());
  EXPECT_EQ(progress, (std::vector<size_t>{2, 3}));
  EXPECT_EQ(r.live_rows, 13u);
}

TEST_F(DBImplTest, SearchEqualsTheOracleWithFiltersAndDeletes) {
  for (Metric metric : {Metric::kL2, Metric::kInnerProduct, Metric::kCosine}) {
    SCOPED_TRACE(MetricName(metric));
    const std::string name = std::string("s_") + MetricName(metric);
    ASSERT_TRUE(db_->CreateCollection(Spec(name, metric)).ok());
    rows_.clear();
    dead_.clear();
    IngestRows(name, 400, 1000, 4);
    const std::vector<int64_t> gone = {1000, 1002, 1007, 99999};  // 99999 is unknown
    uint64_t deleted = 0;
    ASSERT_TRUE(db_->DeleteByIds(name, gone.data(), gone.size(), &deleted).ok());
    EXPECT_EQ(deleted, 3u);
    dead_.insert({1000, 1002, 1007});
    ASSERT_TRUE(db_->DeleteByFilter(name, "cat = 4 AND color IS NOT NULL", &deleted).ok());
    for (const Row& r : rows_) {
      if (r.id % 5 == 4 && r.id % 2 == 0 && !dead_.count(r.id)) dead_.insert(r.id);
    }
    EXPECT_EQ(deleted, dead_.size() - 3);

    const std::vector<float> q = test::RandomVectors(3, kDim, 5);
    SearchRequest req;
    req.queries = q.data();
    req.num_queries = 3;
    req.dim = kDim;
    req.k = 7;
    for (SearchPath path :
         {SearchPath::kAuto, SearchPath::kSddmm, SearchPath::kGather, SearchPath::kDense}) {
      SearchOptions opts;
      opts.device = Device::kCpu;
      opts.path = path;
      req.filter = "cat IN (1, 2) OR color = 'red'";
      SearchResult res;
      Status s = db_->Search(name, req, opts, &res);
      ASSERT_TRUE(s.ok()) << s.ToString();
      ASSERT_EQ(res.results.size(), 3u);
      for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(res.results[i].ids, OracleIds(metric, q.data() + i * kDim, 7, [](int64_t id) {
                    return id % 5 == 1 || id % 5 == 2 || id % 2 == 0;
                  }));
      }
      EXPECT_EQ(res.explain.device, "cpu");
      EXPECT_EQ(res.explain.filter_mode, "bitset");
      ASSERT_EQ(res.explain.shards.size(), 1u);
      if (path != SearchPath::kAuto) EXPECT_EQ(res.explain.shards[0].path, SearchPathName(path));
    }
    // A filter per query.
    req.filter.clear();
    req.filters = {"cat = 0", "", "color IS NULL"};
    SearchResult res;
    SearchOptions cpu;
    cpu.device = Device::kCpu;
    ASSERT_TRUE(db_->Search(name, req, cpu, &res).ok());
    EXPECT_EQ(res.explain.filter_mode, "bitmap");
    EXPECT_EQ(res.results[0].ids,
              OracleIds(metric, q.data(), 7, [](int64_t id) { return id % 5 == 0; }));
    EXPECT_EQ(res.results[1].ids,
              OracleIds(metric, q.data() + kDim, 7, [](int64_t) { return true; }));
    EXPECT_EQ(res.results[2].ids,
              OracleIds(metric, q.data() + 2 * kDim, 7, [](int64_t id) { return id % 2 != 0; }));
    req.filters.clear();
  }
}

TEST_F(DBImplTest, SearchRejectsBadRequests) {
  ASSERT_TRUE(db_->CreateCollection(Spec("r")).ok());
  IngestRows("r", 20, 0, 6);
  const std::vector<float> q = test::RandomVectors(2, kDim, 7);
  SearchRequest req;
  req.queries = q.data();
  req.num_queries = 2;
  req.dim = kDim;
  SearchResult res;
  SearchOptions cpu;
  cpu.device = Device::kCpu;
  req.k = 0;
  EXPECT_TRUE(db_->Search("r", req, cpu, &res).IsInvalidArgument());
  req.k = 3;
  EXPECT_TRUE(db_->Search("nope", req, cpu, &res).IsNotFound());
  req.filter = "cat <";
  Status s = db_->Search("r", req, cpu, &res);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("position"), std::string::npos) << s.message();
  req.filter = "price < 3";  // no such attribute
  EXPECT_TRUE(db_->Search("r", req, cpu, &res).IsInvalidArgument());
  req.filter.clear();
  req.filters = {"cat = 1"};  // one filter for two queries
  EXPECT_TRUE(db_->Search("r", req, cpu, &res).IsInvalidArgument());
  req.filters = {"cat = 1", "cat = 2"};
  req.filter = "cat = 3";  // both forms at once: which one was meant is not for us to guess
  s = db_->Search("r", req, cpu, &res);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("not both"), std::string::npos) << s.ToString();
  req.filter.clear();
  req.filters.clear();
  req.k = kMaxSearchK + 1;
  s = db_->Search("r", req, cpu, &res);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find(std::to_string(kMaxSearchK)), std::string::npos) << s.ToString();
  req.k = kMaxSearchK;  // the bound itself is a k like any other
  s = db_->Search("r", req, cpu, &res);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(res.results[0].ids.size(), 20u);
  req.k = 3;
  req.dim = kDim + 1;
  EXPECT_TRUE(db_->Search("r", req, cpu, &res).IsInvalidArgument());
  req.dim = kDim;
  std::vector<float> nan = q;
  nan[3] = std::numeric_limits<float>::infinity();
  req.queries = nan.data();
  EXPECT_TRUE(db_->Search("r", req, cpu, &res).IsInvalidArgument());
  req.queries = nullptr;
  EXPECT_TRUE(db_->Search("r", req, cpu, &res).IsInvalidArgument());
  uint64_t deleted = 0;
  EXPECT_TRUE(db_->DeleteByFilter("r", "cat ==", &deleted).IsInvalidArgument());
  EXPECT_TRUE(db_->DeleteByIds("nope", nullptr, 0, &deleted).IsNotFound());
}

// Explain names each step of the search once, in the order they ran, and "execute" holds the
// refinement it ran (engine/search_steps.h).
TEST_F(DBImplTest, ExplainTimesEveryStepInOrder) {
  CollectionSpec spec = Spec("steps");
  spec.shards = 3;
  ASSERT_TRUE(db_->CreateCollection(spec).ok());
  IngestRows("steps", 60, 0, 9);
  const std::vector<float> q = test::RandomVectors(2, kDim, 10);
  SearchRequest req;
  req.queries = q.data();
  req.num_queries = 2;
  req.dim = kDim;
  req.k = 4;
  req.filters = {"cat = 1", "cat != 1"};
  req.include.attributes = {"cat"};
  SearchOptions cpu;
  cpu.device = Device::kCpu;
  for (bool first : {true, false}) {
    SearchResult res;
    Status s = db_->Search("steps", req, cpu, &res);
    ASSERT_TRUE(s.ok()) << s.ToString();
    std::vector<std::string> names;
    for (const auto& [name, ms] : res.explain.stage_ms) {
      if (name.rfind("execute.", 0) == 0) continue;  // the executor's own stages
      names.push_back(name);
      EXPECT_GE(ms, 0) << name;
    }
    std::vector<std::string> want = {"parse", "devices", "load", "place", "compile",
                                     "plan", "reserve", "refine", "execute", "merge",
                                     "include", "total"};
    if (!first) want.erase(want.begin() + 2);  // loaded by the first search
    EXPECT_EQ(names, want);
    EXPECT_EQ(res.explain.filter_mode, "bitmap");
    ASSERT_EQ(res.explain.shards.size(), 3u);
    for (const ShardPlan& p : res.explain.shards) {
      EXPECT_EQ(p.passing_rows.size(), 2u);  // one count per distinct filter
      EXPECT_EQ(p.select, "heap");
      EXPECT_EQ(p.products, "float32");
    }
    // Every result carries the attribute it asked for, and it passes the query's filter.
    ASSERT_EQ(res.results.size(), 2u);
    for (size_t qi = 0; qi < 2; ++qi) {
      EXPECT_EQ(res.results[qi].ids.size(), 4u);
      ASSERT_EQ(res.results[qi].attributes.size(), res.results[qi].ids.size());
      for (size_t i = 0; i < res.results[qi].ids.size(); ++i) {
        EXPECT_EQ(res.results[qi].attributes[i][0], Value(res.results[qi].ids[i] % 5));
        EXPECT_EQ(res.results[qi].ids[i] % 5 == 1, qi == 0);
      }
      auto pass = [&](int64_t id) { return (id % 5 == 1) == (qi == 0); };
      EXPECT_EQ(res.results[qi].ids, OracleIds(Metric::kL2, q.data() + qi * kDim, 4, pass));
    }
  }
}

TEST_F(DBImplTest, GpuWithoutADeviceIsUnavailableAndAutoRunsOnTheCpu) {
  ASSERT_TRUE(db_->CreateCollection(Spec("g")).ok());
  IngestRows("g", 20, 0, 8);
  const std::vector<float> q = test::RandomVectors(1, kDim, 9);
  SearchRequest req;
  req.queries = q.data();
  req.num_queries = 1;
  req.dim = kDim;
  req.k = 2;
  SearchOptions opts;
  opts.device = Device::kGpu;
  SearchResult res;
  Status s = db_->Search("g", req, opts, &res);
  if (s.ok()) GTEST_SKIP() << "this machine has a GPU";
  EXPECT_TRUE(s.IsUnavailable()) << s.ToString();
  opts.device = Device::kAuto;
  ASSERT_TRUE(db_->Search("g", req, opts, &res).ok());
  EXPECT_EQ(res.explain.device, "cpu");
  PlannerThresholds t;
  std::string device;
  EXPECT_TRUE(db_->GetPlannerThresholds(Device::kGpu, &t, &device).IsUnavailable());
  // No queries: nothing runs on any device, so asking for the GPU is no error; the request is
  // still checked.
  req.num_queries = 0;
  opts.device = Device::kGpu;
  ASSERT_TRUE(db_->Search("g", req, opts, &res).ok());
  EXPECT_TRUE(res.results.empty());
  req.filter = "nope >";
  EXPECT_TRUE(db_->Search("g", req, opts, &res).IsInvalidArgument());
}

TEST_F(DBImplTest, PlannerThresholdsAreStoredPerDevice) {
  PlannerThresholds t;
  std::string device;
  ASSERT_TRUE(db_->GetPlannerThresholds(Device::kCpu, &t, &device).ok());
  EXPECT_EQ(device, "cpu");
  EXPECT_EQ(t.source(), PlannerRule::CpuDefaults().source);
  EXPECT_EQ(t, PlannerThresholds::DefaultsFor("cpu"));
  EXPECT_EQ(t.version(), PlannerThresholds::kVersion);
  PlannerRule mine = PlannerRule::CpuDefaults();
  mine.sddmm_max_rows = 1234;
  mine.source = "calibrated by the test";
  EXPECT_TRUE(db_->PutPlannerThresholds("", ToThresholds(mine)).IsInvalidArgument());
  EXPECT_TRUE(db_->PutPlannerThresholds("cpu", PlannerThresholds()).IsInvalidArgument());
  PlannerRule bad = mine;
  bad.gather_max_fraction = 2.0;  // the opaque value cannot even hold it
  PlannerThresholds refused;
  EXPECT_TRUE(PlannerThresholds::FromJson(bad.ToJson(), &refused).IsInvalidArgument());
  EXPECT_TRUE(refused.empty());
  ASSERT_TRUE(db_->PutPlannerThresholds("cpu", ToThresholds(mine)).ok());
  ASSERT_TRUE(db_->GetPlannerThresholds(Device::kCpu, &t, &device).ok());
  PlannerRule got;
  ASSERT_TRUE(FromThresholds(t, &got).ok());
  EXPECT_EQ(got.sddmm_max_rows, 1234u);
  // Durable: a reopened database reads them back, and searches name them in explain.
  db_.reset();
  ASSERT_TRUE(DB::Open(Options(), dir_.Join("db"), &db_).ok());
  ASSERT_TRUE(db_->GetPlannerThresholds(Device::kCpu, &t, &device).ok());
  ASSERT_TRUE(FromThresholds(t, &got).ok());
  EXPECT_EQ(got.sddmm_max_rows, 1234u);
  EXPECT_EQ(t.source(), "calibrated by the test");
  ASSERT_TRUE(db_->CreateCollection(Spec("p")).ok());
  IngestRows("p", 10, 0, 10);
  const std::vector<float> q = test::RandomVectors(1, kDim, 11);
  SearchRequest req;
  req.queries = q.data();
  req.num_queries = 1;
  req.dim = kDim;
  req.k = 1;
  SearchOptions cpu;
  cpu.device = Device::kCpu;
  SearchResult res;
  ASSERT_TRUE(db_->Search("p", req, cpu, &res).ok());
  EXPECT_EQ(res.explain.thresholds, "calibrated by the test");
}

// A compaction that removes a twentieth of the rows gives bytes back: its id and attribute
// files are compressed as the rows family's own (written with the vectors' options, which do
// not compress, the store grew instead).
TEST_F(DBImplTest, CompactOfAFewDeletedRowsShrinksTheStore) {
  constexpr uint32_t kWide = 32;
  constexpr size_t kRows = 20000;
  CollectionSpec spec;
  spec.name = "shrink";
  spec.dim = kWide;
  spec.attributes = {{"year", AttrType::kInt}, {"cat", AttrType::kString}};
  ASSERT_TRUE(db_->CreateCollection(spec).ok());
  const std::vector<float> v = test::RandomVectors(kRows, kWide, 21);
  std::vector<std::vector<Value>> attrs(kRows);
  for (size_t i = 0; i < kRows; ++i) {
    attrs[i] = {Value(static_cast<int64_t>(1990 + i % 30)),
                Value(std::string("c") + std::to_string(i % 50))};
  }
  RowBatch batch;
  batch.num_rows = kRows;
  batch.dim = kWide;
  batch.vectors = v.data();
  batch.attributes = attrs.data();
  IngestResult ingested;
  ASSERT_TRUE(db_->Ingest("shrink", batch, IngestOptions(), &ingested).ok());
  uint64_t deleted = 0;
  ASSERT_TRUE(db_->DeleteByFilter("shrink", "id < 1000", &deleted).ok());
  ASSERT_EQ(deleted, 1000u);
  CompactResult r;
  Status s = db_->Compact("shrink", &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(r.rows_removed, 1000u);
  EXPECT_LT(r.bytes_after, r.bytes_before);
  std::vector<std::string> report;
  s = db_->Check(&report);
  EXPECT_TRUE(s.ok()) << s.ToString();
  uint64_t count = 0;
  ASSERT_TRUE(db_->Count("shrink", "cat = 'c7'", &count).ok());
  EXPECT_EQ(count, 380u);  // ids 1007, 1057, ... below 20000: (20000 - 1000) / 50
}

// A compaction never leaves more bytes than it found, or says why (issue 33, item 5): with
// nothing deleted it writes nothing; 100 deleted rows of 20,000 hold less than a rewrite
// writes, so they are left in place and said to be; forced, the rewrite grows the store and
// the note says by how much.
TEST_F(DBImplTest, CompactLeavesAFewDeletedRowsAndNeverGrowsTheStoreUnsaid) {
  constexpr uint32_t kWide = 32;
  constexpr size_t kRows = 20000;
  CollectionSpec spec;
  spec.name = "few";
  spec.dim = kWide;
  spec.attributes = {{"year", AttrType::kInt}};
  ASSERT_TRUE(db_->CreateCollection(spec).ok());
  const std::vector<float> v = test::RandomVectors(kRows, kWide, 22);
  std::vector<std::vector<Value>> attrs(kRows);
  for (size_t i = 0; i < kRows; ++i) attrs[i] = {Value(static_cast<int64_t>(1990 + i % 30))};
  RowBatch batch;
  batch.num_rows = kRows;
  batch.dim = kWide;
  batch.vectors = v.data();
  batch.attributes = attrs.data();
  IngestResult ingested;
  ASSERT_TRUE(db_->Ingest("few", batch, IngestOptions(), &ingested).ok());
  CompactResult r;
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(db_->Compact("few", &r).ok());
    EXPECT_EQ(r.shards_rewritten, 0u);
    EXPECT_EQ(r.bytes_after, r.bytes_before);
    EXPECT_EQ(r.note, "");
  }
  uint64_t deleted = 0;
  ASSERT_TRUE(db_->DeleteByFilter("few", "id < 100", &deleted).ok());
  ASSERT_TRUE(db_->Compact("few", &r).ok());
  EXPECT_EQ(r.rows_removed, 0u);
  EXPECT_EQ(r.shards_skipped, 1u);
  EXPECT_EQ(r.rows_left_deleted, 100u);
  EXPECT_EQ(r.bytes_after, r.bytes_before);
  EXPECT_NE(r.note.find("100 deleted rows in 1 shards were left in place"), std::string::npos)
      << r.note;
  CollectionStats stats;
  ASSERT_TRUE(db_->GetStats("few", &stats).ok());
  EXPECT_EQ(stats.deleted_rows, 100u);
  CompactOptions force;
  force.force = true;
  ASSERT_TRUE(db_->Compact("few", force, &r).ok());
  EXPECT_EQ(r.rows_removed, 100u);
  EXPECT_EQ(r.shards_skipped, 0u);
  if (r.bytes_after > r.bytes_before) {
    EXPECT_NE(r.note.find("the store grew by " + std::to_string(r.bytes_after - r.bytes_before)),
              std::string::npos)
        << r.note;
  } else {
    EXPECT_EQ(r.note, "");
  }
  ASSERT_TRUE(db_->GetStats("few", &stats).ok());
  EXPECT_EQ(stats.deleted_rows, 0u);
  EXPECT_EQ(stats.rows, kRows - 100);
}

TEST_F(DBImplTest, CheckPassesOnAGoodStore) {
  ASSERT_TRUE(db_->CreateCollection(Spec("k")).ok());
  IngestRows("k", 50, 0, 12);
  uint64_t deleted = 0;
  ASSERT_TRUE(db_->DeleteByFilter("k", "cat = 3", &deleted).ok());
  std::vector<std::string> report;
  Status s = db_->Check(&report);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(report.empty());
}


// The compiled-filter cache (Options::filter_cache_bytes): a search that repeats a filter takes
// its row set from the cache (explain.filters_cached), and every write to the shard (ingest,
// delete, update) makes the next search compile again, with answers that follow the write.
TEST_F(DBImplTest, CompiledFiltersAreReusedUntilTheShardChanges) {
  ASSERT_TRUE(db_->CreateCollection(Spec("fc")).ok());
  IngestRows("fc", 300, 0, 21);
  const std::vector<float> q = test::RandomVectors(2, kDim, 22);
  SearchRequest req;
  req.queries = q.data();
  req.num_queries = 2;
  req.dim = kDim;
  req.k = 5;
  SearchOptions cpu;
  cpu.device = Device::kCpu;
  std::set<int64_t> cat1_red_off;  // ids whose cat the update below moves out of cat 1
  auto check = [&](uint64_t want_cached, const std::string& what) {
    SCOPED_TRACE(what);
    req.filter = "cat = 1";
    SearchResult res;
    Status s = db_->Search("fc", req, cpu, &res);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(res.explain.filters_cached, want_cached);
    EXPECT_NE(res.explain.ToJson().find("\"filters_cached\": " + std::to_string(want_cached)),
              std::string::npos)
        << res.explain.ToJson();
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(res.results[i].ids, OracleIds(Metric::kL2, q.data() + i * kDim, 5, [&](int64_t id) {
                  return id % 5 == 1 && cat1_red_off.count(id) == 0;
                }));
    }
  };
  check(0, "first search compiles");
  check(1, "the same filter again comes from the cache");
  IngestRows("fc", 50, 300, 23);
  check(0, "after an ingest");
  check(1, "again");
  const int64_t gone[] = {1, 6, 11, 301};
  uint64_t deleted = 0;
  ASSERT_TRUE(db_->DeleteByIds("fc", gone, 4, &deleted).ok());
  dead_.insert({1, 6, 11, 301});
  check(0, "after a delete");
  UpdateRequest up;
  const int64_t moved[] = {16, 21, 26};
  up.ids = moved;
  up.num_ids = 3;
  up.set = {{"cat", Value(int64_t{3})}};
  uint64_t updated = 0;
  ASSERT_TRUE(db_->Update("fc", up, &updated).ok());
  ASSERT_EQ(updated, 3u);
  cat1_red_off.insert({16, 21, 26});
  check(0, "after an update");
  check(1, "again");

  // A filter per query: each distinct text is cached on its own.
  req.filter.clear();
  req.filters = {"cat = 1", "cat = 2"};
  SearchResult res;
  ASSERT_TRUE(db_->Search("fc", req, cpu, &res).ok());
  EXPECT_EQ(res.explain.filters_cached, 1u);
  ASSERT_TRUE(db_->Search("fc", req, cpu, &res).ok());
  EXPECT_EQ(res.explain.filters_cached, 2u);
}

TEST_F(DBImplTest, NoFilterCacheWhenItsBoundIsZero) {
  Options o;
  o.filter_cache_bytes = 0;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, dir_.Join("nocache"), &db).ok());
  db_ = std::move(db);
  ASSERT_TRUE(db_->CreateCollection(Spec("nc")).ok());
  IngestRows("nc", 100, 0, 31);
  const std::vector<float> q = test::RandomVectors(1, kDim, 32);
  SearchRequest req;
  req.queries = q.data();
  req.num_queries = 1;
  req.dim = kDim;
  req.k = 3;
  req.filter = "cat = 2";
  SearchOptions cpu;
  cpu.device = Device::kCpu;
  for (int i = 0; i < 3; ++i) {
    SearchResult res;
    ASSERT_TRUE(db_->Search("nc", req, cpu, &res).ok());
    EXPECT_EQ(res.explain.filters_cached, 0u);
    EXPECT_EQ(res.results[0].ids, OracleIds(Metric::kL2, q.data(), 3,
                                            [](int64_t id) { return id % 5 == 2; }));
  }
}

// Issue 32 item 8a: a blank filter would select every row; update and delete refuse it alike,
// and the filter their message suggests really selects every row.
TEST_F(DBImplTest, BlankSelectingFiltersAreRefusedAndTheSuggestionSelectsEveryRow) {
  ASSERT_TRUE(db_->CreateCollection(Spec("bf")).ok());
  IngestRows("bf", 20, 0, 41);
  for (const std::string blank : {"", "  ", " \t\n "}) {
    uint64_t n = 99;
    Status s = db_->DeleteByFilter("bf", blank, &n);
    EXPECT_TRUE(s.IsInvalidArgument()) << "'" << blank << "': " << s.ToString();
    EXPECT_NE(s.message().find("delete: the filter is empty"), std::string::npos) << s.message();
    EXPECT_EQ(n, 0u);
    UpdateRequest u;
    u.filter = blank;
    u.set = {{"cat", Value(int64_t{7})}};
    s = db_->Update("bf", u, &n);
    EXPECT_TRUE(s.IsInvalidArgument()) << "'" << blank << "': " << s.ToString();
    EXPECT_NE(s.message().find("update: the filter is empty"), std::string::npos) << s.message();
  }
  uint64_t count = 0;
  ASSERT_TRUE(db_->Count("bf", "cat = 7", &count).ok());
  EXPECT_EQ(count, 0u) << "a refused update changed rows";
  ASSERT_TRUE(db_->Count("bf", "", &count).ok());
  EXPECT_EQ(count, 20u) << "a refused delete removed rows";

  // Ids and a filter together are still "exactly one".
  const int64_t one = 3;
  UpdateRequest both;
  both.ids = &one;
  both.num_ids = 1;
  both.filter = "cat = 1";
  both.set = {{"cat", Value(int64_t{7})}};
  uint64_t n = 0;
  Status s = db_->Update("bf", both, &n);
  EXPECT_NE(s.message().find("exactly one"), std::string::npos) << s.ToString();

  // The suggested filter, quoted from the message, selects every row.
  uint64_t unused = 0;
  s = db_->DeleteByFilter("bf", " ", &unused);
  const size_t open = s.message().find('"'), close = s.message().rfind('"');
  ASSERT_LT(open, close) << s.message();
  const std::string every = s.message().substr(open + 1, close - open - 1);
  ASSERT_TRUE(db_->Count("bf", every, &count).ok()) << every;
  EXPECT_EQ(count, 20u) << every;
  UpdateRequest all;
  all.filter = every;
  all.set = {{"cat", Value(int64_t{7})}};
  ASSERT_TRUE(db_->Update("bf", all, &n).ok());
  EXPECT_EQ(n, 20u);
  ASSERT_TRUE(db_->DeleteByFilter("bf", every, &n).ok());
  EXPECT_EQ(n, 20u);
}

// Issue 32 item 8b: ids are 0 to 2^63 - 1 in every write, the refusal naming the row.
TEST_F(DBImplTest, NegativeIdsAreRefusedNamingTheRow) {
  ASSERT_TRUE(db_->CreateCollection(Spec("neg")).ok());
  const std::vector<float> v = test::RandomVectors(3, kDim, 43);
  const std::vector<int64_t> ids = {5, 6, -1};
  RowBatch batch;
  batch.num_rows = 3;
  batch.dim = kDim;
  batch.vectors = v.data();
  batch.ids = ids.data();
  for (const bool upsert : {false, true}) {
    for (const bool validate_only : {false, true}) {
      IngestOptions o;
      o.validate_only = validate_only;
      IngestResult r;
      Status s = upsert ? db_->Upsert("neg", batch, o, &r) : db_->Ingest("neg", batch, o, &r);
      EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
      EXPECT_NE(s.message().find("row 2: id -1 is negative"), std::string::npos) << s.message();
    }
  }
  uint64_t count = 1;
  ASSERT_TRUE(db_->Count("neg", "", &count).ok());
  EXPECT_EQ(count, 0u);
}

// Issue 32 item 8i: new ids go on past the largest id ever written and never reuse one; an id
// at the top of the range leaves none, and the refusal says why and what to do.
TEST_F(DBImplTest, AutoIdsNeverReuseAnAcknowledgedIdAndSayWhenNoneAreLeft) {
  ASSERT_TRUE(db_->CreateCollection(Spec("auto")).ok());
  const std::vector<float> v = test::RandomVectors(2, kDim, 44);
  RowBatch batch;
  batch.num_rows = 2;
  batch.dim = kDim;
  batch.vectors = v.data();
  IngestResult r;
  ASSERT_TRUE(db_->Ingest("auto", batch, IngestOptions(), &r).ok());  // ids 0, 1
  const int64_t big = 1000;
  batch.num_rows = 1;
  batch.ids = &big;
  ASSERT_TRUE(db_->Ingest("auto", batch, IngestOptions(), &r).ok());
  uint64_t n = 0;
  ASSERT_TRUE(db_->DeleteByIds("auto", &big, 1, &n).ok());
  batch.ids = nullptr;
  IngestOptions auto_ids;
  auto_ids.auto_ids = true;
  ASSERT_TRUE(db_->Ingest("auto", batch, auto_ids, &r).ok());
  CollectionStats stats;
  ASSERT_TRUE(db_->GetStats("auto", &stats).ok());
  EXPECT_EQ(stats.next_auto_id, 1002) << "id 1000 was acknowledged: 1001 is the new row's";

  const int64_t top = std::numeric_limits<int64_t>::max();
  batch.ids = &top;
  ASSERT_TRUE(db_->Ingest("auto", batch, IngestOptions(), &r).ok()) << "the top id is valid";
  ASSERT_TRUE(db_->DeleteByIds("auto", &top, 1, &n).ok());
  EXPECT_EQ(n, 1u);
  batch.ids = nullptr;
  Status s = db_->Ingest("auto", batch, auto_ids, &r);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("no new ids left"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("largest id ever written"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("give these rows their ids"), std::string::npos) << s.message();
  // Rows with ids still go in.
  const int64_t given = 7;
  batch.ids = &given;
  EXPECT_TRUE(db_->Ingest("auto", batch, IngestOptions(), &r).ok());
}

// Issue 32 item 8e: a second Open of a database this process has open says so.
TEST_F(DBImplTest, OpeningADatabaseTwiceInOneProcessSaysThisProcessHasIt) {
  std::unique_ptr<DB> again;
  Status s = DB::Open(Options(), dir_.Join("db"), &again);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.message().find("already open in this process"), std::string::npos)
      << s.message();
  EXPECT_EQ(s.message().find("another process"), std::string::npos) << s.message();
  EXPECT_EQ(again, nullptr);
  db_.reset();
  EXPECT_TRUE(DB::Open(Options(), dir_.Join("db"), &again).ok()) << "closed, it opens";
}

}  // namespace
}  // namespace sieve
