// Copyright 2026 The Sieve Authors.
//
// DB::Calibrate on the CPU: a sweep of seconds fills the report, stores what
// GetPlannerThresholds then returns (also after a reopen), stores nothing without `store`, is
// refused by a read-only database before it sweeps, and rejects options out of range.

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "sieve/db.h"
#include "tests/testutil.h"

namespace sieve {
namespace {

// Two small shapes, a few queries, two repetitions: a few seconds on a 2-core CPU.
CalibrateOptions Tiny(std::vector<std::string>* lines) {
  CalibrateOptions o;
  o.device = Device::kCpu;
  o.quick = true;
  o.rows_list = {2048};
  o.dims = {4, 8};
  o.queries = 8;
  o.k = 5;
  o.max_reps = 2;
  o.warmup = 0;
  o.time_limit_s = 20;
  o.caller = "calibrate_test";
  o.progress = [lines](const std::string& line) { lines->push_back(line); };
  return o;
}

class DBCalibrateTest : public ::testing::Test {
 protected:
  void Open(bool read_only = false) {
    db_.reset();
    Options options;
    options.read_only = read_only;
    ASSERT_TRUE(DB::Open(options, dir_.Join("db"), &db_).ok());
  }
  PlannerThresholds Current() {
    PlannerThresholds t;
    std::string name;
    EXPECT_TRUE(db_->GetPlannerThresholds(Device::kCpu, &t, &name).ok());
    EXPECT_EQ(name, "cpu");
    return t;
  }

  test::ScratchDir dir_;
  std::unique_ptr<DB> db_;
};

TEST_F(DBCalibrateTest, DryRunReportsAndStoresNothing) {
  Open();
  const PlannerThresholds before = Current();
  ASSERT_EQ(before.source().rfind("defaults", 0), 0u) << before.source();
  std::vector<std::string> lines;
  CalibrateOptions o = Tiny(&lines);
  o.store = false;
  CalibrateReport r;
  Status s = db_->Calibrate(o, &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(r.device, "cpu");
  EXPECT_FALSE(r.stored);
  EXPECT_TRUE(r.complete);
  EXPECT_GT(r.points, 0u);
  EXPECT_GT(r.seconds, 0.0);
  EXPECT_EQ(r.thresholds.source().rfind("calibrated ", 0), 0u) << r.thresholds.source();
  EXPECT_NE(
      r.thresholds.source().find(" on cpu (calibrate_test, " + std::to_string(r.points) + " points"),
      std::string::npos)
      << r.thresholds.source();
  EXPECT_FALSE(r.description.empty());
  EXPECT_EQ(r.summary_json.rfind("{\"device\":\"cpu\",\"stored\":false,", 0), 0u);
  EXPECT_NE(r.summary_json.find("\"penalty_in_sample\""), std::string::npos);
  // The announcement, then a line per shape.
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[0], "calibrating cpu (quick): 1 rows x 2 dims, 8 queries, k=5, f16");
  EXPECT_EQ(Current().ToJson(), before.ToJson());

  // The summary's points refit offline to the same number of points, stored nowhere.
  const std::string file = dir_.Join("summary.json");
  std::ofstream(file) << r.summary_json;
  CalibrateReport refit;
  s = DB::RefitCalibration(file, Device::kAuto, &refit);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(refit.device, "cpu");
  EXPECT_EQ(refit.points, r.points);
  EXPECT_FALSE(refit.stored);
  EXPECT_EQ(refit.thresholds.source().rfind("refitted ", 0), 0u) << refit.thresholds.source();
  EXPECT_FALSE(DB::RefitCalibration(dir_.Join("missing.json"), Device::kAuto, &refit).ok());
}

TEST_F(DBCalibrateTest, StoresWhatThePlannerThenUses) {
  Open();
  std::vector<std::string> lines;
  CalibrateReport r;
  Status s = db_->Calibrate(Tiny(&lines), &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(r.stored);
  EXPECT_EQ(r.summary_json.rfind("{\"device\":\"cpu\",\"stored\":true,", 0), 0u);
  EXPECT_EQ(Current().ToJson(), r.thresholds.ToJson());
  Open();  // durably
  EXPECT_EQ(Current().ToJson(), r.thresholds.ToJson());
}

TEST_F(DBCalibrateTest, ReadOnlyRefusesToStoreBeforeSweeping) {
  Open();
  Open(/*read_only=*/true);
  std::vector<std::string> lines;
  CalibrateReport r;
  EXPECT_TRUE(db_->Calibrate(Tiny(&lines), &r).IsNotSupported());
  EXPECT_TRUE(lines.empty());
  // Fitting without storing is a read.
  CalibrateOptions o = Tiny(&lines);
  o.store = false;
  Status s = db_->Calibrate(o, &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(r.stored);
  EXPECT_EQ(Current().source().rfind("defaults", 0), 0u);
}

TEST_F(DBCalibrateTest, BadOptionsAreInvalidArgument) {
  Open();
  std::vector<std::string> lines;
  std::vector<CalibrateOptions> bad(9, Tiny(&lines));
  bad[0].time_limit_s = -1;
  bad[1].time_limit_s = std::numeric_limits<double>::quiet_NaN();
  bad[2].time_limit_s = std::numeric_limits<double>::infinity();
  bad[3].dims = {0};
  bad[4].rows_list = {0};
  bad[5].k = 2000000;
  bad[6].queries = 200000;
  bad[7].warmup = -2;
  bad[8].max_reps = -1;
  for (size_t i = 0; i < bad.size(); ++i) {
    CalibrateReport r;
    Status s = db_->Calibrate(bad[i], &r);
    EXPECT_TRUE(s.IsInvalidArgument()) << i << ": " << s.ToString();
    EXPECT_NE(s.message().find("CalibrateOptions::"), std::string::npos) << s.ToString();
  }
  EXPECT_TRUE(lines.empty());  // nothing was swept
  EXPECT_EQ(Current().source().rfind("defaults", 0), 0u);
}

}  // namespace
}  // namespace sieve
