// Copyright 2026 The Sieve Authors.
//
// `sieve query --devices / --cpu-executors / --device-memory`: the shards spread over the CPU
// executors standing in for devices answer what one executor answers, --explain names each
// shard's device and time and each device's shards, a collection larger than the devices'
// memory fails with one line naming the sizes, and bad values fail naming the flag.

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/e2e/cli_run.h"
#include "tests/testutil.h"
#include "tools/io/npy.h"

namespace sieve {
namespace {

using json = nlohmann::json;

constexpr size_t kRows = 2000, kDim = 8, kQueries = 4;

class DevicesCliTest : public ::testing::Test {
 protected:
  using Result = test::CliRun;

  void SetUp() override {
    db_ = dir_.Join("db");
    ASSERT_EQ(Run({"create", db_, "--collection", "c", "--dim", std::to_string(kDim), "--attr",
                   "cat:int", "--shards", "6"})
                  .code,
              0);
    const std::vector<float> v = test::RandomVectors(kRows, kDim, 1);
    ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("v.npy"), v.data(), kRows, kDim).ok());
    std::ofstream attrs(dir_.Join("a.jsonl"));
    for (size_t i = 0; i < kRows; ++i) attrs << "{\"cat\": " << i % 5 << "}\n";
    attrs.close();
    Result r = Run({"ingest", db_, "--collection", "c", "--vectors", dir_.Join("v.npy"),
                    "--attributes", dir_.Join("a.jsonl")});
    ASSERT_EQ(r.code, 0) << r.err;
    const std::vector<float> q = test::RandomVectors(kQueries, kDim, 2);
    ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("q.npy"), q.data(), kQueries, kDim).ok());
  }

  Result Run(const std::vector<std::string>& args) { return test::RunCli(args, dir_); }

  Result Query(std::vector<std::string> extra) {
    std::vector<std::string> args = {
        "query", db_, "--collection", "c",        "--queries", dir_.Join("q.npy"),
        "--k",   "7", "--filter",     "cat != 2", "--device",  "cpu"};
    args.insert(args.end(), extra.begin(), extra.end());
    return Run(args);
  }

  test::ScratchDir dir_;
  std::string db_;
};

TEST_F(DevicesCliTest, ShardsSpreadOverExecutorsAnswerAsOne) {
  Result one = Query({});
  ASSERT_EQ(one.code, 0) << one.err;
  Result three = Query({"--cpu-executors", "3", "--explain"});
  ASSERT_EQ(three.code, 0) << three.err;
  EXPECT_EQ(three.out, one.out);  // the same ids and distances, line for line
  const json plan = json::parse(test::LastLine(three.err));
  ASSERT_EQ(plan["devices"].size(), 3u) << three.err;
  std::set<std::string> named;
  size_t shards = 0;
  for (const json& d : plan["devices"]) {
    named.insert(d["device"].get<std::string>());
    EXPECT_EQ(d["executor"], "cpu");
    EXPECT_EQ(d["shards"].size(), 2u) << three.err;
    EXPECT_GE(d["execute_ms"].get<double>(), 0);
    shards += d["shards"].size();
  }
  EXPECT_EQ(named, (std::set<std::string>{"cpu0", "cpu1", "cpu2"}));
  EXPECT_EQ(shards, 6u);
  for (const json& s : plan["shards"]) {
    EXPECT_TRUE(named.count(s["device"].get<std::string>())) << s.dump();
    EXPECT_TRUE(s.contains("execute_ms"));
  }
}

TEST_F(DevicesCliTest, TooLargeForTheDevicesNamesTheSizes) {
  // 2,000 rows of 8 floats and a norm: 72,000 bytes, over 2 × 30,000.
  Result r = Query({"--cpu-executors", "2", "--device-memory", "30000"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("sieve query: collection 'c' needs 70.3 KiB (72000 bytes) of device "
                       "memory for its 2000 rows"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("2 devices hold together (58.6 KiB (60000 bytes)"), std::string::npos)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  // Within both devices together (though not one): it answers.
  r = Query({"--cpu-executors", "2", "--device-memory", "40000"});
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST_F(DevicesCliTest, BadValuesNameTheFlag) {
  Result r = Query({"--devices", "0,x"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("--devices: 'x' is not a CUDA device number"), std::string::npos) << r.err;
  r = Query({"--devices", "0,,1"});
  EXPECT_EQ(r.code, 1);
  r = Query({"--cpu-executors", "0"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("cpu-executors"), std::string::npos) << r.err;
  r = Query({"--devices", "all"});
  EXPECT_EQ(r.code, 0) << r.err;  // the CPU search ignores the GPU list
  r = Query({"--first-use-calibration", "sometimes"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("--first-use-calibration is unknown, off or always"), std::string::npos)
      << r.err;
  for (const char* mode : {"unknown", "off", "always"}) {
    r = Query({"--first-use-calibration", mode});
    EXPECT_EQ(r.code, 0) << mode << ": " << r.err;
  }
  r = Run({"query", db_, "--collection", "c", "--queries", dir_.Join("q.npy"), "--k", "3",
           "--device", "gpu", "--devices", "0,7"});
  if (r.code == 0) GTEST_SKIP() << "this machine has CUDA devices 0 and 7";
  EXPECT_NE(r.err.find("CUDA device"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sieve
