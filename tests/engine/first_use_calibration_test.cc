// Copyright 2026 The Sieve Authors.
//
// A GPU's first-use calibration (Options::first_use_calibration): a device the project ships no
// thresholds for is calibrated by its first search, once, announced, stored and used. The
// device is a model (an unknown GPU whose path times follow known formulas, answered at once by
// Profile), so the fit must recover its crossovers; its searches run on a CPU executor, exactly.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "query/cpu_executor.h"
#include "engine/db_impl.h"
#include "engine/executors.h"
#include "query/planner.h"
#include "sieve/db.h"
#include "storage/store.h"
#include "tests/planner_rule_util.h"
#include "tests/testutil.h"

namespace sieve {
namespace {

constexpr uint32_t kDim = 16;

// SDDMM costs 5e-6 ms and the gather 1e-6 ms per passing row at dim 128 (both in proportion to
// the dim), over fixed costs of 0.02 and 0.1 ms: SDDMM wins below 20,000 passing rows at dim
// 128 (5,000 at dim 512). Dense costs 0.1 ms plus 0.3e-6 ms per row at dim 128: the gather wins
// below 30% passing.
constexpr double kSddmmCrossover = 20000;
constexpr double kGatherCrossover = 0.3;

class ModelDevice : public Executor {
 public:
  explicit ModelDevice(std::string name) : name_(std::move(name)) {
    CpuExecutorOptions o;
    o.threads = 1;
    cpu_ = std::make_unique<CpuExecutor>(o);
  }
  std::string name() const override { return name_; }
  Status Search(const ShardView& shard, const BatchFilters& filters, const ExecRequest& request,
                ExecResult* result) override {
    ++searches_;
    return cpu_->Search(shard, filters, request, result);
  }
  Status EstimateMemory(const ShardView& shard, const BatchFilters& filters,
                        const ExecRequest& request, MemoryEstimate* estimate) const override {
    return cpu_->EstimateMemory(shard, filters, request, estimate);
  }
  Status Profile(const ShardView& shard, const BatchFilters& filters, const ExecRequest& request,
                 const ProfileOptions& options, ExecProfile* profile) override {
    ++profiles_;
    if (!fail_.ok()) return fail_;
    uint64_t passing = 0;
    for (uint64_t p : filters.passing_rows) passing = std::max(passing, p);
    const double scale = shard.dim / 128.0;
    double ms = 0;
    switch (request.path) {
      case SearchPath::kSddmm:
        ms = 0.02 + 5e-6 * passing * scale;
        break;
      case SearchPath::kGather:
        ms = 0.1 + 1e-6 * passing * scale;
        break;
      default:
        ms = 0.1 + 0.3e-6 * shard.rows * scale;
        break;
    }
    profile->ms.assign(options.reps, ms);
    profile->result = ExecResult();
    return Status::OK();
  }
  void ClearCache() override {}

  int profiles() const { return profiles_; }
  int searches() const { return searches_; }
  void set_fail(Status s) { fail_ = std::move(s); }

 private:
  std::string name_;
  std::unique_ptr<CpuExecutor> cpu_;
  std::atomic<int> profiles_{0};
  std::atomic<int> searches_{0};
  Status fail_;
};

class FirstUseCalibrationTest : public ::testing::Test {
 protected:
  // A DB at `dir_`/db whose GPU is one ModelDevice named `name`, with these first-use options
  // (the notices collected in notices_).
  void Open(const std::string& name, FirstUseCalibration f, bool read_only = false) {
    db_.reset();
    std::vector<std::unique_ptr<Executor>> cpu, gpu;
    cpu.push_back(std::make_unique<CpuExecutor>());
    auto device = std::make_unique<ModelDevice>(name);
    device_ = device.get();
    if (!fail_.ok()) device_->set_fail(fail_);
    gpu.push_back(std::move(device));
    f.notice = [this](const std::string& line) {
      std::lock_guard<std::mutex> l(mu_);
      notices_.push_back(line);
    };
    Options options;
    options.read_only = read_only;
    options.first_use_calibration = f;
    StoreOptions so;
    so.read_only = read_only;
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(so, dir_.Join("db"), &store).ok());
    db_ = std::make_unique<DBImpl>(std::move(store), options,
                                   std::make_unique<Executors>(std::move(cpu), std::move(gpu)));
  }

  static FirstUseCalibration Small() {
    FirstUseCalibration f;
    f.max_rows = 100000;  // shards of 8,192 and 100,000 rows
    f.time_limit_s = 0;
    return f;
  }

  void CreateAndIngest() {
    CollectionSpec spec;
    spec.name = "c";
    spec.dim = kDim;
    spec.attributes = {{"cat", AttrType::kInt}};
    ASSERT_TRUE(db_->CreateCollection(spec).ok());
    const size_t n = 500;
    std::vector<float> v = test::RandomVectors(n, kDim, 7);
    std::vector<std::vector<Value>> attrs;
    for (size_t i = 0; i < n; ++i) attrs.push_back({Value(static_cast<int64_t>(i % 10))});
    RowBatch b;
    b.num_rows = n;
    b.dim = kDim;
    b.vectors = v.data();
    b.attributes = attrs.data();
    IngestResult r;
    ASSERT_TRUE(db_->Ingest("c", b, IngestOptions(), &r).ok());
    queries_ = test::RandomVectors(3, kDim, 11);
  }

  Status SearchGpu(SearchResult* res) { return SearchOn(Device::kGpu, res); }

  Status SearchOn(Device device, SearchResult* res) {
    SearchRequest req;
    req.queries = queries_.data();
    req.num_queries = 3;
    req.dim = kDim;
    req.k = 5;
    req.filter = "cat < 3";
    SearchOptions o;
    o.device = device;
    return db_->Search("c", req, o, res);
  }

  std::vector<std::string> notices() {
    std::lock_guard<std::mutex> l(mu_);
    return notices_;
  }

  test::ScratchDir dir_;
  std::unique_ptr<DBImpl> db_;
  ModelDevice* device_ = nullptr;
  Status fail_;
  std::vector<float> queries_;
  std::mutex mu_;
  std::vector<std::string> notices_;
};

TEST_F(FirstUseCalibrationTest, FirstSearchCalibratesOnceStoresAndUsesIt) {
  Open("gpu:Model Device 9000", Small());
  CreateAndIngest();
  // Reading the thresholds does not calibrate: only a search does.
  PlannerRule t;
  std::string name;
  ASSERT_TRUE(test::GetRule(db_.get(), Device::kGpu, &t, &name).ok());
  EXPECT_EQ(name, "gpu:Model Device 9000");
  EXPECT_EQ(t.source, PlannerRule::GpuDefaults().source);
  EXPECT_EQ(device_->profiles(), 0);

  SearchResult res;
  ASSERT_TRUE(SearchGpu(&res).ok());
  const int profiled = device_->profiles();
  EXPECT_GT(profiled, 50);  // every path of every point of the grid's two shards and two dims
  EXPECT_GT(device_->searches(), 0);
  EXPECT_NE(res.explain.thresholds.find("first use"), std::string::npos) << res.explain.thresholds;
  EXPECT_NE(res.explain.thresholds.find("gpu:Model Device 9000"), std::string::npos);

  // The announcement: that it starts, then what it found and that it was stored.
  const std::vector<std::string> lines = notices();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("calibrating it for first use"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("calibrated gpu:Model Device 9000"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("stored in the database"), std::string::npos) << lines[1];

  // The fit found the model's crossovers, not the generic defaults (2,000 rows, dim^0.5).
  ASSERT_TRUE(test::GetRule(db_.get(), Device::kGpu, &t, &name).ok());
  EXPECT_NE(t.source.find("first use"), std::string::npos);
  EXPECT_GE(t.sddmm_max_rows, kSddmmCrossover / 2.5);
  EXPECT_LE(t.sddmm_max_rows, kSddmmCrossover * 2.5);
  EXPECT_GT(t.sddmm_dim_exponent, 0.6);
  EXPECT_LT(t.sddmm_dim_exponent, 1.4);
  const double gather = GatherMaxSelectivity(t, 100000, 128);
  EXPECT_GE(gather, kGatherCrossover / 2) << gather;
  EXPECT_LE(gather, kGatherCrossover * 2) << gather;

  // Later searches use it without timing anything again.
  ASSERT_TRUE(SearchGpu(&res).ok());
  EXPECT_EQ(device_->profiles(), profiled);
  EXPECT_EQ(notices().size(), 2u);

  // Stored: a reopened database plans with it at once.
  const PlannerRule first = t;
  Open("gpu:Model Device 9000", Small());
  ASSERT_TRUE(SearchGpu(&res).ok());
  EXPECT_EQ(device_->profiles(), 0);
  EXPECT_TRUE(notices().size() == 2u);
  ASSERT_TRUE(test::GetRule(db_.get(), Device::kGpu, &t, &name).ok());
  EXPECT_EQ(t.ToJson(), first.ToJson());
}

TEST_F(FirstUseCalibrationTest, ResultsMatchTheCpu) {
  Open("gpu:Model Device 9000", Small());
  CreateAndIngest();
  SearchResult gpu, cpu;
  ASSERT_TRUE(SearchGpu(&gpu).ok());
  ASSERT_TRUE(SearchOn(Device::kCpu, &cpu).ok());
  ASSERT_EQ(gpu.results.size(), 3u);
  for (size_t q = 0; q < 3; ++q) {
    EXPECT_EQ(gpu.results[q].ids, cpu.results[q].ids);
    EXPECT_EQ(gpu.results[q].distances, cpu.results[q].distances);
  }
}

TEST_F(FirstUseCalibrationTest, ShippedDevicesAndOffSkipIt) {
  // A device with shipped thresholds plans with them.
  Open("gpu:NVIDIA H200", Small());
  CreateAndIngest();
  SearchResult res;
  ASSERT_TRUE(SearchGpu(&res).ok());
  EXPECT_EQ(device_->profiles(), 0);
  EXPECT_EQ(res.explain.thresholds, PlannerRule::DefaultsFor("gpu:NVIDIA H200").source);
  EXPECT_TRUE(notices().empty());

  // Off: the generic defaults until `sieve calibrate` runs.
  FirstUseCalibration off = Small();
  off.mode = FirstUseCalibration::Mode::kOff;
  Open("gpu:Model Device 9000", off);
  ASSERT_TRUE(SearchGpu(&res).ok());
  EXPECT_EQ(device_->profiles(), 0);
  EXPECT_EQ(res.explain.thresholds, PlannerRule::GpuDefaults().source);
  EXPECT_TRUE(notices().empty());

  // Always: a device with shipped thresholds is calibrated too.
  FirstUseCalibration always = Small();
  always.mode = FirstUseCalibration::Mode::kAlways;
  Open("gpu:NVIDIA H200", always);
  ASSERT_TRUE(SearchGpu(&res).ok());
  EXPECT_GT(device_->profiles(), 0);
  EXPECT_NE(res.explain.thresholds.find("first use"), std::string::npos);
}

TEST_F(FirstUseCalibrationTest, AStoredCalibrationWins) {
  Open("gpu:Model Device 9000", Small());
  CreateAndIngest();
  PlannerRule mine = PlannerRule::GpuDefaults();
  mine.sddmm_max_rows = 1234;
  mine.source = "calibrated by the test";
  ASSERT_TRUE(db_->PutPlannerThresholds("gpu:Model Device 9000", ToThresholds(mine)).ok());
  SearchResult res;
  ASSERT_TRUE(SearchGpu(&res).ok());
  EXPECT_EQ(device_->profiles(), 0);
  EXPECT_EQ(res.explain.thresholds, "calibrated by the test");
}

TEST_F(FirstUseCalibrationTest, ReadOnlyCalibratesWithoutStoring) {
  Open("gpu:Model Device 9000", Small());
  CreateAndIngest();
  db_.reset();
  Open("gpu:Model Device 9000", Small(), /*read_only=*/true);
  SearchResult res;
  ASSERT_TRUE(SearchGpu(&res).ok());
  EXPECT_GT(device_->profiles(), 0);
  EXPECT_NE(res.explain.thresholds.find("first use"), std::string::npos);
  std::vector<std::string> lines = notices();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[1].find("not stored"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("read-only"), std::string::npos) << lines[1];
  // Kept while the database is open; calibrated again by the next process.
  ASSERT_TRUE(SearchGpu(&res).ok());
  EXPECT_EQ(notices().size(), 2u);
  Open("gpu:Model Device 9000", Small(), /*read_only=*/true);
  ASSERT_TRUE(SearchGpu(&res).ok());
  EXPECT_GT(device_->profiles(), 0);
}

TEST_F(FirstUseCalibrationTest, AFailedSweepLeavesTheDefaultsAndTheSearchGoesOn) {
  fail_ = Status::ResourceExhausted("the model device is full");
  Open("gpu:Model Device 9000", Small());
  CreateAndIngest();
  SearchResult res;
  ASSERT_TRUE(SearchGpu(&res).ok());
  EXPECT_EQ(res.explain.thresholds, PlannerRule::GpuDefaults().source);
  ASSERT_EQ(res.results.size(), 3u);
  EXPECT_EQ(res.results[0].ids.size(), 5u);
  std::vector<std::string> lines = notices();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[1].find("failed"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("the model device is full"), std::string::npos) << lines[1];
  // Not retried at every search.
  const int tried = device_->profiles();
  ASSERT_TRUE(SearchGpu(&res).ok());
  EXPECT_EQ(device_->profiles(), tried);
}

TEST_F(FirstUseCalibrationTest, ConcurrentFirstSearchesCalibrateOnce) {
  Open("gpu:Model Device 9000", Small());
  CreateAndIngest();
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      SearchResult res;
      if (SearchGpu(&res).ok() && res.explain.thresholds.find("first use") != std::string::npos) {
        ++ok;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 4);
  EXPECT_EQ(notices().size(), 2u);
}

TEST_F(FirstUseCalibrationTest, OptionsOutOfRangeAreRefused) {
  Options o;
  o.first_use_calibration.time_limit_s = -1;
  EXPECT_TRUE(ValidateDeviceOptions(o).IsInvalidArgument());
  o = Options();
  o.first_use_calibration.max_rows = 0;
  EXPECT_TRUE(ValidateDeviceOptions(o).IsInvalidArgument());
  o = Options();
  o.first_use_calibration.mode = static_cast<FirstUseCalibration::Mode>(9);
  EXPECT_TRUE(ValidateDeviceOptions(o).IsInvalidArgument());
  std::unique_ptr<DB> db;
  o = Options();
  o.first_use_calibration.time_limit_s = std::numeric_limits<double>::infinity();
  Status s = DB::Open(o, dir_.Join("x"), &db);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("first_use_calibration.time_limit_s"), std::string::npos);
}

}  // namespace
}  // namespace sieve
