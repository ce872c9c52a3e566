// Copyright 2026 The Sieve Authors.
//
// The first-use calibration on a real GPU (skipped without one): with FirstUseCalibration::
// kAlways the first GPU search of a fresh database calibrates the device, announces it, stores
// the thresholds, and answers exactly as the CPU does. Prints the thresholds and the seconds it
// took (the H200 runs keep them, tools/bench/results/).

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sieve/db.h"
#include "tests/planner_rule_util.h"
#include "tests/testutil.h"

namespace sieve {
namespace {

TEST(FirstUseOnTheGpu, CalibratesStoresAndAnswersExactly) {
  test::ScratchDir dir;
  std::mutex mu;
  std::vector<std::string> notices;
  Options options;
  options.first_use_calibration.mode = FirstUseCalibration::Mode::kAlways;
  options.first_use_calibration.notice = [&](const std::string& line) {
    std::lock_guard<std::mutex> l(mu);
    notices.push_back(line);
  };
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.Join("db"), &db).ok());
  PlannerRule t;
  std::string device;
  if (!test::GetRule(db.get(), Device::kGpu, &t, &device).ok()) GTEST_SKIP() << "no GPU";

  constexpr uint32_t kDim = 64;
  constexpr size_t kRows = 20000;
  CollectionSpec spec;
  spec.name = "c";
  spec.dim = kDim;
  spec.attributes = {{"cat", AttrType::kInt}};
  ASSERT_TRUE(db->CreateCollection(spec).ok());
  std::vector<float> v = test::RandomVectors(kRows, kDim, 3);
  std::vector<std::vector<Value>> attrs;
  for (size_t i = 0; i < kRows; ++i) attrs.push_back({Value(static_cast<int64_t>(i % 100))});
  RowBatch b;
  b.num_rows = kRows;
  b.dim = kDim;
  b.vectors = v.data();
  b.attributes = attrs.data();
  IngestResult ingested;
  ASSERT_TRUE(db->Ingest("c", b, IngestOptions(), &ingested).ok());

  std::vector<float> q = test::RandomVectors(8, kDim, 5);
  SearchRequest req;
  req.queries = q.data();
  req.num_queries = 8;
  req.dim = kDim;
  req.k = 10;
  req.filter = "cat < 30";
  SearchOptions gpu;
  gpu.device = Device::kGpu;
  SearchResult on_gpu, on_cpu;
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(db->Search("c", req, gpu, &on_gpu).ok());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(on_gpu.explain.thresholds.find("first use"), std::string::npos)
      << on_gpu.explain.thresholds;
  ASSERT_EQ(notices.size(), 2u);
  EXPECT_NE(notices[1].find("stored in the database"), std::string::npos) << notices[1];
  ASSERT_TRUE(test::GetRule(db.get(), Device::kGpu, &t, &device).ok());
  EXPECT_NE(t.source.find("first use"), std::string::npos) << t.source;
  std::printf("first-use calibration of %s: first search %.1f s\n%s\n%s\nthresholds %s\n",
              device.c_str(), seconds, notices[0].c_str(), notices[1].c_str(),
              t.ToJson().c_str());

  SearchOptions cpu;
  cpu.device = Device::kCpu;
  ASSERT_TRUE(db->Search("c", req, cpu, &on_cpu).ok());
  ASSERT_EQ(on_gpu.results.size(), on_cpu.results.size());
  for (size_t i = 0; i < on_gpu.results.size(); ++i) {
    EXPECT_EQ(on_gpu.results[i].ids, on_cpu.results[i].ids) << "query " << i;
  }

  // Stored: reopened, the database plans with it without calibrating again.
  db.reset();
  notices.clear();
  ASSERT_TRUE(DB::Open(options, dir.Join("db"), &db).ok());
  ASSERT_TRUE(db->Search("c", req, gpu, &on_gpu).ok());
  EXPECT_TRUE(notices.empty());
  EXPECT_EQ(on_gpu.explain.thresholds, t.source);
}

}  // namespace
}  // namespace sieve
