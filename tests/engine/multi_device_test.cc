// Copyright 2026 The Sieve Authors.
//
// A search over several devices: CPU executors stand in for GPUs (the DBImpl seam that takes
// Executors), each counting what it searched. The shards are spread over every device and
// searched at once (a latch that only opens when every device is inside Search proves it),
// results equal the one-executor search and the float64 oracle for every metric, one filter
// and a filter per query, explain names each shard's device, growth lands on the emptiest
// device, and device memory is honoured: more than one device holds loads and searches, more
// than all of them is ResourceExhausted naming the sizes; a hybrid search runs its text side
// beside the devices with the CPU's answers. Options::cpu_executors and Options::devices
// through the public API.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "query/cpu_executor.h"
#include "engine/db_impl.h"
#include "engine/device_fanout.h"
#include "engine/executors.h"
#include "sieve/db.h"
#include "storage/store.h"
#include "tests/testutil.h"

namespace sieve {
namespace {

constexpr uint32_t kDim = 16;

// Waits until `n` searches are inside Search at once (or gives up after 10 s, counting it).
class Latch {
 public:
  explicit Latch(int n) : n_(n) {}
  void Arrive() {
    std::unique_lock<std::mutex> l(mu_);
    if (++arrived_ >= n_) {
      cv_.notify_all();
      return;
    }
    if (!cv_.wait_for(l, std::chrono::seconds(10), [&] { return arrived_ >= n_; })) {
      ++timeouts_;
    }
  }
  int timeouts() const { return timeouts_; }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int n_;
  int arrived_ = 0;
  int timeouts_ = 0;
};

// A CPU executor standing in for one device: counts its searches and the shards it saw.
class StandIn : public Executor {
 public:
  explicit StandIn(std::string name) : name_(std::move(name)) {
    CpuExecutorOptions o;
    o.threads = 1;
    cpu_ = std::make_unique<CpuExecutor>(o);
  }
  std::string name() const override { return name_; }
  Status Search(const ShardView& shard, const BatchFilters& filters, const ExecRequest& request,
                ExecResult* result) override {
    if (latch_ != nullptr) latch_->Arrive();
    if (!fail_.ok()) return fail_;
    {
      std::lock_guard<std::mutex> l(mu_);
      ++searches_;
      keys_.insert(shard.key);
    }
    return cpu_->Search(shard, filters, request, result);
  }
  Status EstimateMemory(const ShardView& shard, const BatchFilters& filters,
                        const ExecRequest& request, MemoryEstimate* estimate) const override {
    return cpu_->EstimateMemory(shard, filters, request, estimate);
  }
  Status Profile(const ShardView& shard, const BatchFilters& filters, const ExecRequest& request,
                 const ProfileOptions& options, ExecProfile* profile) override {
    return cpu_->Profile(shard, filters, request, options, profile);
  }
  void ClearCache() override { ++clears_; }
  void EvictShard(uint64_t key) override {
    std::lock_guard<std::mutex> l(mu_);
    evicted_.insert(key);
  }

  int searches() const {
    std::lock_guard<std::mutex> l(mu_);
    return searches_;
  }
  std::set<uint64_t> keys() const {
    std::lock_guard<std::mutex> l(mu_);
    return keys_;
  }
  std::set<uint64_t> evicted() const {
    std::lock_guard<std::mutex> l(mu_);
    return evicted_;
  }
  void set_latch(Latch* latch) { latch_ = latch; }
  void set_fail(Status s) { fail_ = std::move(s); }

 private:
  std::string name_;
  std::unique_ptr<CpuExecutor> cpu_;
  mutable std::mutex mu_;
  int searches_ = 0;
  std::set<uint64_t> keys_;
  std::set<uint64_t> evicted_;
  std::atomic<int> clears_{0};
  Latch* latch_ = nullptr;
  Status fail_;
};

struct Data {
  std::vector<float> v;
  std::vector<int64_t> ids;
  std::vector<std::vector<Value>> attrs;
};

Data MakeRows(size_t n, int64_t first_id, uint64_t seed) {
  Data d;
  d.v = test::RandomVectors(n, kDim, seed);
  for (size_t i = 0; i < n; ++i) {
    const int64_t id = first_id + static_cast<int64_t>(i) * 3;
    d.ids.push_back(id);
    d.attrs.push_back({Value(id % 7), Value(std::string(id % 2 ? "odd" : "even"))});
  }
  return d;
}

class MultiDeviceTest : public ::testing::Test {
 protected:
  // A DBImpl whose "GPUs" are `n` stand-ins, each holding `memory` bytes of resident shards.
  void OpenWithStandIns(int n, uint64_t memory = 0) {
    std::vector<std::unique_ptr<Executor>> cpu, gpu;
    cpu.push_back(std::make_unique<CpuExecutor>());
    stand_ins_.clear();
    for (int i = 0; i < n; ++i) {
      auto e = std::make_unique<StandIn>("gpu:stand-in");
      stand_ins_.push_back(e.get());
      gpu.push_back(std::move(e));
    }
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(StoreOptions(), dir_.Join("db"), &store).ok());
    // The stand-ins are GPUs without shipped thresholds: no first-use calibration here
    // (tests/query/first_use_calibration_test.cc has it).
    Options options;
    options.first_use_calibration.mode = FirstUseCalibration::Mode::kOff;
    db_ = std::make_unique<DBImpl>(
        std::move(store), options,
        std::make_unique<Executors>(std::move(cpu), std::move(gpu), memory));
  }

  void Create(DB* db, const std::string& name, uint32_t shards, Metric metric = Metric::kL2) {
    CollectionSpec spec;
    spec.name = name;
    spec.dim = kDim;
    spec.metric = metric;
    spec.shards = shards;
    spec.attributes = {{"cat", AttrType::kInt}, {"parity", AttrType::kString}};
    ASSERT_TRUE(db->CreateCollection(spec).ok());
  }

  void Ingest(DB* db, const std::string& name, const Data& d) {
    RowBatch b;
    b.num_rows = d.ids.size();
    b.dim = kDim;
    b.vectors = d.v.data();
    b.ids = d.ids.data();
    b.attributes = d.attrs.data();
    IngestResult r;
    Status s = db->Ingest(name, b, IngestOptions(), &r);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  static SearchRequest Request(const std::vector<float>& q, size_t nq, int k) {
    SearchRequest r;
    r.queries = q.data();
    r.num_queries = nq;
    r.dim = kDim;
    r.k = k;
    return r;
  }

  // The float64 oracle over `rows`, ids of the k best passing `pass`.
  template <typename Pass>
  static std::vector<int64_t> Oracle(const Data& rows, Metric metric, const float* q, int k,
                                     Pass&& pass) {
    auto top = test::OracleTopK(metric, q, rows.v.data(), rows.ids.size(), kDim, k,
                                [&](uint32_t i) { return pass(rows.ids[i]); });
    std::vector<int64_t> out;
    for (auto& [row, dist] : top) out.push_back(rows.ids[row]);
    return out;
  }

  test::ScratchDir dir_;
  std::unique_ptr<DB> db_;
  std::vector<StandIn*> stand_ins_;
};

TEST(RunConcurrentlyTest, EveryTaskRunsOnceAndAtTheSameTime) {
  Latch latch(4);
  std::atomic<int> runs{0};
  RunConcurrently(4, [&](size_t) {
    latch.Arrive();
    ++runs;
  });
  EXPECT_EQ(runs.load(), 4);
  EXPECT_EQ(latch.timeouts(), 0);
  RunConcurrently(0, [&](size_t) { ++runs; });
  EXPECT_EQ(runs.load(), 4);
}

TEST_F(MultiDeviceTest, ShardsSpreadOverEveryDeviceAndSearchAtOnce) {
  OpenWithStandIns(3);
  Create(db_.get(), "c", 6);
  const Data rows = MakeRows(3000, 4000, 1);  // ids are never negative
  Ingest(db_.get(), "c", rows);
  const std::vector<float> q = test::RandomVectors(5, kDim, 2);

  Latch latch(3);  // opens only when the three devices are inside Search together
  for (StandIn* e : stand_ins_) e->set_latch(&latch);
  SearchRequest req = Request(q, 5, 10);
  req.filter = "cat IN (1, 2, 3)";
  SearchOptions opts;
  opts.device = Device::kGpu;
  SearchResult res;
  ASSERT_TRUE(db_->Search("c", req, opts, &res).ok());
  EXPECT_EQ(latch.timeouts(), 0) << "the devices did not search at the same time";
  for (StandIn* e : stand_ins_) e->set_latch(nullptr);

  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(res.results[i].ids, Oracle(rows, Metric::kL2, q.data() + i * kDim, 10,
                                         [](int64_t id) { return id % 7 >= 1 && id % 7 <= 3; }))
        << i;
  }
  // Every device searched two of the six shards, each shard once, and explain says where.
  std::set<uint64_t> all;
  for (StandIn* e : stand_ins_) {
    EXPECT_EQ(e->searches(), 2);
    EXPECT_EQ(e->keys().size(), 2u);
    for (uint64_t k : e->keys()) EXPECT_TRUE(all.insert(k).second);
  }
  EXPECT_EQ(all.size(), 6u);
  ASSERT_EQ(res.explain.devices.size(), 3u);
  uint64_t rows_sum = 0;
  for (size_t d = 0; d < 3; ++d) {
    const DevicePlan& dp = res.explain.devices[d];
    EXPECT_EQ(dp.device, "gpu" + std::to_string(d));
    EXPECT_EQ(dp.executor, "gpu:stand-in");
    EXPECT_EQ(dp.shards.size(), 2u);
    ASSERT_EQ(dp.paths.size(), 2u);
    for (size_t j = 0; j < 2; ++j) EXPECT_EQ(dp.paths[j], res.explain.shards[dp.shards[j]].path);
    EXPECT_GT(dp.execute_ms, 0);
    rows_sum += dp.rows;
    std::set<uint32_t> searched;  // the shard numbers of the keys the stand-in saw
    for (uint64_t key : stand_ins_[d]->keys()) searched.insert(key & 0xffffffffu);
    EXPECT_EQ(searched, std::set<uint32_t>(dp.shards.begin(), dp.shards.end())) << d;
    for (uint32_t shard : dp.shards) {
      EXPECT_EQ(res.explain.shards[shard].device, dp.device);
      EXPECT_GT(res.explain.shards[shard].execute_ms, 0);
    }
  }
  EXPECT_EQ(rows_sum, 3000u);
  const std::string json = res.explain.ToJson();
  EXPECT_NE(json.find("\"devices\": [{\"device\": \"gpu0\", \"executor\": \"gpu:stand-in\""),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"device\": \"gpu2\""), std::string::npos) << json;
}

TEST_F(MultiDeviceTest, ResultsEqualOneExecutorForEveryMetricAndFilterMode) {
  OpenWithStandIns(3);
  std::unique_ptr<DB> one;
  ASSERT_TRUE(DB::Open(Options(), dir_.Join("one"), &one).ok());
  const Data rows = MakeRows(2500, 0, 3);
  const std::vector<float> q = test::RandomVectors(7, kDim, 4);
  std::vector<std::string> per_query = {
      "", "cat = 1", "parity = 'odd' AND cat > 2", "cat = 99", "id < 300", "NOT cat = 0", ""};
  for (Metric m : {Metric::kL2, Metric::kInnerProduct, Metric::kCosine}) {
    const std::string name = std::string("c_") + MetricName(m);
    Create(db_.get(), name, 5, m);
    Create(one.get(), name, 1, m);
    Ingest(db_.get(), name, rows);
    Ingest(one.get(), name, rows);
    for (SearchPath path :
         {SearchPath::kAuto, SearchPath::kSddmm, SearchPath::kGather, SearchPath::kDense}) {
      for (int mode = 0; mode < 3; ++mode) {
        SearchRequest req = Request(q, 7, 12);
        if (mode == 1) req.filter = "cat IN (0, 4) OR parity = 'even'";
        if (mode == 2) req.filters = per_query;
        SearchOptions multi, single;
        multi.device = Device::kGpu;
        multi.path = single.path = path;
        single.device = Device::kCpu;
        SearchResult a, b;
        ASSERT_TRUE(db_->Search(name, req, multi, &a).ok());
        ASSERT_TRUE(one->Search(name, req, single, &b).ok());
        for (size_t i = 0; i < 7; ++i) {
          EXPECT_EQ(a.results[i].ids, b.results[i].ids) << name << " mode " << mode << " q " << i;
          EXPECT_EQ(a.results[i].distances, b.results[i].distances);
        }
        EXPECT_EQ(a.explain.passing_rows, b.explain.passing_rows);
        std::set<std::string> used;
        for (const ShardPlan& p : a.explain.shards) {
          if (path != SearchPath::kAuto) {
            EXPECT_EQ(p.path, SearchPathName(path));
          }
          used.insert(p.device);
        }
        EXPECT_EQ(used.size(), 3u);
      }
    }
  }
  for (StandIn* e : stand_ins_) EXPECT_GT(e->searches(), 0);
}

// A hybrid search whose vector side runs on the (stand-in) GPUs runs its text side on a thread
// of its own beside them: the same rows and fused scores as the same search on the CPU alone
// (where the sides run one after the other), and a device's fault during it is the search's
// error, after which the store answers again.
TEST_F(MultiDeviceTest, HybridRunsItsTextSideBesideTheDevices) {
  OpenWithStandIns(2);
  CollectionSpec spec;
  spec.name = "t";
  spec.dim = kDim;
  spec.shards = 4;
  spec.attributes = {{"cat", AttrType::kInt}, {"title", AttrType::kText, "simple"}};
  ASSERT_TRUE(db_->CreateCollection(spec).ok());
  const char* words[] = {"red", "shoe", "river", "stone", "boot", "light", "road", "snow"};
  Data rows = MakeRows(1500, 0, 11);
  for (size_t i = 0; i < rows.ids.size(); ++i) {
    std::string title;
    for (size_t w = 0; w < 1 + i % 5; ++w) title += std::string(words[(i * 7 + w * 3) % 8]) + " ";
    rows.attrs[i] = {Value(rows.ids[i] % 7), i % 11 == 0 ? Value() : Value(title)};
  }
  Ingest(db_.get(), "t", rows);

  const std::vector<float> q = test::RandomVectors(3, kDim, 12);
  SearchRequest req = Request(q, 3, 10);
  req.filters = {"cat < 5", "", "cat = 2"};
  req.text_field = "title";
  req.text = "red river boot";
  SearchOptions gpu, cpu;
  gpu.device = Device::kGpu;
  cpu.device = Device::kCpu;
  SearchResult beside, serial;
  Status s = db_->Search("t", req, gpu, &beside);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(db_->Search("t", req, cpu, &serial).ok());
  EXPECT_TRUE(beside.explain.text.beside_vector);
  EXPECT_FALSE(serial.explain.text.beside_vector);
  EXPECT_EQ(beside.explain.device, "gpu:stand-in");
  EXPECT_EQ(beside.explain.text.passing_rows, serial.explain.text.passing_rows);
  EXPECT_GT(beside.explain.text.rows_scored, 0u);
  ASSERT_EQ(beside.results.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_FALSE(beside.results[i].ids.empty()) << i;
    EXPECT_EQ(beside.results[i].ids, serial.results[i].ids) << i;
    EXPECT_EQ(beside.results[i].scores, serial.results[i].scores) << i;
  }
  int searched = 0;
  for (StandIn* e : stand_ins_) searched += e->searches();
  EXPECT_GT(searched, 0);

  stand_ins_[1]->set_fail(Status::Internal("stand-in fault"));
  SearchResult failed;
  s = db_->Search("t", req, gpu, &failed);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("stand-in fault"), std::string::npos) << s.ToString();
  stand_ins_[1]->set_fail(Status::OK());
  SearchResult again;
  ASSERT_TRUE(db_->Search("t", req, gpu, &again).ok());
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(again.results[i].ids, serial.results[i].ids) << i;
}

TEST_F(MultiDeviceTest, NewCollectionsAndGrowthGoToTheEmptiestDevice) {
  OpenWithStandIns(3);
  SearchOptions opts;
  opts.device = Device::kGpu;
  const std::vector<float> q = test::RandomVectors(1, kDim, 5);
  std::vector<std::string> where;
  for (const char* name : {"a", "b", "c"}) {
    Create(db_.get(), name, 1);
    Ingest(db_.get(), name, MakeRows(name[0] == 'a' ? 900 : 300, 0, 6));
    SearchResult r;
    ASSERT_TRUE(db_->Search(name, Request(q, 1, 3), opts, &r).ok());
    where.push_back(r.explain.shards[0].device);
  }
  // One-shard collections, each on the device with the fewest rows when it was first searched.
  EXPECT_EQ(where, (std::vector<std::string>{"gpu0", "gpu1", "gpu2"}));
  // A collection of four shards then fills the two emptier devices first.
  Create(db_.get(), "d", 4);
  Ingest(db_.get(), "d", MakeRows(800, 10, 7));
  SearchResult r;
  ASSERT_TRUE(db_->Search("d", Request(q, 1, 3), opts, &r).ok());
  std::map<std::string, int> count;
  for (const ShardPlan& p : r.explain.shards) ++count[p.device];
  EXPECT_EQ(count["gpu0"], 0) << r.explain.ToJson();
  EXPECT_EQ(count["gpu1"] + count["gpu2"], 4);
  // Rows appended to "b" (on gpu1) stay on gpu1: its copy there only grows.
  Ingest(db_.get(), "b", MakeRows(300, 100000, 8));
  ASSERT_TRUE(db_->Search("b", Request(q, 1, 3), opts, &r).ok());
  EXPECT_EQ(r.explain.shards[0].device, "gpu1");
  EXPECT_EQ(r.explain.devices[0].rows, 600u);
}

TEST_F(MultiDeviceTest, LargerThanOneDeviceLoadsLargerThanAllIsAClearError) {
  const uint64_t row_bytes = kDim * 4 + 4;
  OpenWithStandIns(3, 1000 * row_bytes);  // 1,000 rows per device
  Create(db_.get(), "fits", 6);
  const Data rows = MakeRows(2400, 0, 9);  // 2.4 devices' worth
  Ingest(db_.get(), "fits", rows);
  SearchOptions opts;
  opts.device = Device::kGpu;
  const std::vector<float> q = test::RandomVectors(3, kDim, 10);
  SearchResult r;
  Status s = db_->Search("fits", Request(q, 3, 8), opts, &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r.results[i].ids,
              Oracle(rows, Metric::kL2, q.data() + i * kDim, 8, [](int64_t) { return true; }));
  }
  for (const DevicePlan& d : r.explain.devices) EXPECT_LE(d.rows, 1000u) << d.device;

  Create(db_.get(), "too_big", 2);
  Ingest(db_.get(), "too_big", MakeRows(700, 0, 11));  // 2,400 + 700 > 3,000
  s = db_->Search("too_big", Request(q, 3, 8), opts, &r);
  ASSERT_TRUE(s.IsResourceExhausted()) << s.ToString();
  const std::string m = s.message();
  EXPECT_NE(m.find("collection 'too_big' needs " + DescribeBytes(700 * row_bytes) +
                   " of device memory for its 700 rows"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("take " + DescribeBytes(2400 * row_bytes)), std::string::npos) << m;
  EXPECT_NE(m.find("3 devices hold together (" + DescribeBytes(3000 * row_bytes)),
            std::string::npos)
      << m;
  // Nothing moved: the first collection still searches, and after it is dropped the second
  // fits.
  ASSERT_TRUE(db_->Search("fits", Request(q, 3, 8), opts, &r).ok());
  ASSERT_TRUE(db_->DropCollection("fits").ok());
  s = db_->Search("too_big", Request(q, 3, 8), opts, &r);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST_F(MultiDeviceTest, AShardMovesOffADeviceItsGrowthFilledAndLeavesItsCopyThere) {
  const uint64_t row_bytes = kDim * 4 + 4;
  OpenWithStandIns(2, 1000 * row_bytes);
  SearchOptions opts;
  opts.device = Device::kGpu;
  const std::vector<float> q = test::RandomVectors(2, kDim, 30);
  Create(db_.get(), "a", 2);
  Data a = MakeRows(400, 0, 31);
  Ingest(db_.get(), "a", a);
  SearchResult r;
  ASSERT_TRUE(db_->Search("a", Request(q, 2, 5), opts, &r).ok());
  ASSERT_EQ(r.explain.devices.size(), 2u);  // one shard on each device
  Create(db_.get(), "b", 1);
  Ingest(db_.get(), "b", MakeRows(700, 0, 32));
  ASSERT_TRUE(db_->Search("b", Request(q, 2, 5), opts, &r).ok());
  const int with_b = r.explain.shards[0].device == "gpu0" ? 0 : 1;  // the emptier device
  // "a" grows by 400 rows: its shard beside "b" no longer fits there and moves to the other.
  const Data more = MakeRows(400, 100000, 33);
  Ingest(db_.get(), "a", more);
  ASSERT_TRUE(db_->Search("a", Request(q, 2, 5), opts, &r).ok());
  ASSERT_EQ(r.explain.devices.size(), 1u) << r.explain.ToJson();
  EXPECT_EQ(r.explain.devices[0].device, "gpu" + std::to_string(1 - with_b));
  EXPECT_EQ(r.explain.devices[0].rows, 800u);
  ASSERT_EQ(stand_ins_[with_b]->evicted().size(), 1u);  // told to drop its copy
  EXPECT_TRUE(stand_ins_[1 - with_b]->evicted().empty());
  a.v.insert(a.v.end(), more.v.begin(), more.v.end());
  a.ids.insert(a.ids.end(), more.ids.begin(), more.ids.end());
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(r.results[i].ids,
              Oracle(a, Metric::kL2, q.data() + i * kDim, 5, [](int64_t) { return true; }));
  }
}

TEST_F(MultiDeviceTest, ADeviceOutOfMemorySaysWhatItHolds) {
  OpenWithStandIns(3);
  Create(db_.get(), "c", 6);
  Ingest(db_.get(), "c", MakeRows(1200, 0, 40));
  stand_ins_[1]->set_fail(Status::ResourceExhausted("device memory ran out"));
  SearchOptions opts;
  opts.device = Device::kGpu;
  const std::vector<float> q = test::RandomVectors(1, kDim, 41);
  SearchResult r;
  Status s = db_->Search("c", Request(q, 1, 5), opts, &r);
  ASSERT_TRUE(s.IsResourceExhausted()) << s.ToString();
  EXPECT_NE(s.message().find("search on gpu1, which holds 2 shards of collection 'c' ("),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("device memory ran out"), std::string::npos) << s.message();
  stand_ins_[1]->set_fail(Status::OK());
  EXPECT_TRUE(db_->Search("c", Request(q, 1, 5), opts, &r).ok());
}

TEST_F(MultiDeviceTest, CpuExecutorsThroughOptions) {
  Options o;
  o.cpu_executors = 3;
  std::unique_ptr<DB> three, one;
  ASSERT_TRUE(DB::Open(o, dir_.Join("three"), &three).ok());
  ASSERT_TRUE(DB::Open(Options(), dir_.Join("one"), &one).ok());
  Create(three.get(), "c", 4, Metric::kCosine);
  Create(one.get(), "c", 4, Metric::kCosine);
  const Data rows = MakeRows(2000, 5, 12);
  Ingest(three.get(), "c", rows);
  Ingest(one.get(), "c", rows);
  const std::vector<float> q = test::RandomVectors(4, kDim, 13);
  SearchRequest req = Request(q, 4, 9);
  req.filter = "parity = 'even'";
  SearchOptions cpu;
  cpu.device = Device::kCpu;
  SearchResult a, b;
  ASSERT_TRUE(three->Search("c", req, cpu, &a).ok());
  ASSERT_TRUE(one->Search("c", req, cpu, &b).ok());
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(a.results[i].ids, b.results[i].ids);
  ASSERT_EQ(a.explain.devices.size(), 3u);
  EXPECT_EQ(a.explain.devices[0].device, "cpu0");
  EXPECT_EQ(a.explain.devices[2].device, "cpu2");
  ASSERT_EQ(b.explain.devices.size(), 1u);
  EXPECT_EQ(b.explain.devices[0].shards.size(), 4u);
}

// Three GPU executors on CUDA device 0 (Options::devices = {0, 0, 0}) stand in for three GPUs:
// every path on them answers what the CPU answers. Skipped without a GPU.
TEST_F(MultiDeviceTest, ThreeExecutorsOnOneGpu) {
  Options o;
  o.devices = {0, 0, 0};
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, dir_.Join("gpu"), &db).ok());
  Create(db.get(), "c", 6, Metric::kL2);
  const Data rows = MakeRows(30000, 0, 20);
  Ingest(db.get(), "c", rows);
  const std::vector<float> q = test::RandomVectors(8, kDim, 21);
  SearchOptions gpu, cpu;
  gpu.device = Device::kGpu;
  cpu.device = Device::kCpu;
  SearchResult probe;
  Status s = db->Search("c", Request(q, 8, 10), gpu, &probe);
  if (s.IsUnavailable()) GTEST_SKIP() << s.ToString();
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(probe.explain.devices.size(), 3u) << probe.explain.ToJson();
  EXPECT_EQ(probe.explain.devices[0].device, "gpu0");
  EXPECT_EQ(probe.explain.devices[1].device, "gpu0/1");
  EXPECT_EQ(probe.explain.devices[2].device, "gpu0/2");
  for (const DevicePlan& d : probe.explain.devices) {
    EXPECT_EQ(d.shards.size(), 2u);
    EXPECT_EQ(d.executor.rfind("gpu:", 0), 0u) << d.executor;
  }
  for (SearchPath path :
       {SearchPath::kAuto, SearchPath::kSddmm, SearchPath::kGather, SearchPath::kDense}) {
    for (int mode = 0; mode < 3; ++mode) {
      SearchRequest req = Request(q, 8, 10);
      if (mode == 1) req.filter = "cat IN (1, 5) AND parity = 'odd'";
      if (mode == 2)
        req.filters = {"",         "cat = 1",         "cat = 2", "cat != 3",
                       "id < 900", "parity = 'even'", "cat = 6", ""};
      gpu.path = cpu.path = path;
      SearchResult a, b;
      ASSERT_TRUE(db->Search("c", req, gpu, &a).ok());
      ASSERT_TRUE(db->Search("c", req, cpu, &b).ok());
      for (size_t i = 0; i < 8; ++i) {
        EXPECT_EQ(a.results[i].ids, b.results[i].ids) << SearchPathName(path) << mode << i;
        EXPECT_EQ(a.results[i].distances, b.results[i].distances);
      }
    }
  }
}

TEST_F(MultiDeviceTest, DeviceOptionsAreChecked) {
  std::unique_ptr<DB> db;
  Options o;
  o.devices = {0, -1};
  Status s = DB::Open(o, dir_.Join("x"), &db);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("devices[1]: -1"), std::string::npos) << s.ToString();
  o = Options();
  o.cpu_executors = 0;
  s = DB::Open(o, dir_.Join("x"), &db);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("cpu_executors"), std::string::npos) << s.ToString();
}

TEST_F(MultiDeviceTest, ListedDevicesThatCannotBeUsedAreUnavailable) {
  Options o;
  o.devices = {0, 1};
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, dir_.Join("gpu"), &db).ok());
  Create(db.get(), "c", 2);
  Ingest(db.get(), "c", MakeRows(100, 0, 14));
  const std::vector<float> q = test::RandomVectors(1, kDim, 15);
  SearchOptions gpu;
  gpu.device = Device::kGpu;
  SearchResult r;
  Status s = db->Search("c", Request(q, 1, 3), gpu, &r);
  if (s.ok()) GTEST_SKIP() << "this machine has CUDA devices 0 and 1";
  EXPECT_TRUE(s.IsUnavailable()) << s.ToString();
  EXPECT_NE(s.message().find("CUDA device"), std::string::npos) << s.ToString();
  SearchOptions automatic;  // kAuto: the CPU then
  ASSERT_TRUE(db->Search("c", Request(q, 1, 3), automatic, &r).ok());
  EXPECT_EQ(r.explain.device, "cpu");
}

}  // namespace
}  // namespace sieve
