// Copyright 2026 The Sieve Authors.
//
// sieve query --radius/--limit, --offset and --after: the lines against a float64 oracle
// (limit_reached, next), pages by cursor through exact ties equal one exact order, and each
// bad option's one line on stderr with exit 1.

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tests/e2e/cli_run.h"
#include "tests/testutil.h"
#include "tools/io/npy.h"

namespace sieve {
namespace {

using json = nlohmann::json;

constexpr size_t kDim = 4;

class RangePagesCliTest : public ::testing::Test {
 protected:
  struct Result {
    int code = -1;
    std::vector<json> lines;
    std::string err;
  };

  Result Run(std::vector<std::string> args) {
    const test::CliRun run = test::RunCli(args, dir_);
    return {run.code, run.Lines(), run.err};
  }

  void SetUp() override {
    // 300 rows of 10 distinct small-integer vectors (30 exact ties each), ids falling.
    std::vector<float> base = test::RandomVectors(10, kDim, 1);
    for (float& x : base) x = static_cast<float>(static_cast<int>(x * 3));
    for (size_t i = 0; i < 300; ++i) {
      rows_.insert(rows_.end(), base.begin() + (i % 10) * kDim, base.begin() + (i % 10 + 1) * kDim);
      ids_.push_back(1000 - static_cast<int64_t>(i));
    }
    q_ = {0.5f, -1, 1, 0};
    ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("v.npy"), rows_.data(), 300, kDim).ok());
    ASSERT_TRUE(io::WriteNpyInt64(dir_.Join("ids.npy"), ids_.data(), ids_.size()).ok());
    ASSERT_TRUE(io::WriteNpyMatrix(dir_.Join("q.npy"), q_.data(), 1, kDim).ok());
    db_ = dir_.Join("db");
    ASSERT_EQ(Run({"create", db_, "--collection", "c", "--dim", "4", "--shards", "2"}).code, 0);
    ASSERT_EQ(Run({"ingest", db_, "--collection", "c", "--vectors", dir_.Join("v.npy"), "--ids",
                   dir_.Join("ids.npy")})
                  .code,
              0);
    for (size_t i = 0; i < 300; ++i) {
      order_.push_back(
          {test::OracleDistance(Metric::kL2, q_.data(), rows_.data() + i * kDim, kDim), ids_[i]});
    }
    std::sort(order_.begin(), order_.end());
  }

  std::vector<int64_t> Ids(size_t begin, size_t end) const {
    std::vector<int64_t> v;
    for (size_t i = begin; i < end; ++i) v.push_back(order_[i].second);
    return v;
  }

  test::ScratchDir dir_;
  std::string db_;
  std::vector<float> rows_, q_;
  std::vector<int64_t> ids_;
  std::vector<std::pair<double, int64_t>> order_;
};

TEST_F(RangePagesCliTest, RadiusAndLimit) {
  const double r = order_[44].first;  // inside a tie group: all of it is within
  size_t within = 0;
  while (within < order_.size() && order_[within].first <= r) ++within;
  ASSERT_GT(within, 45u);
  char rs[64];
  std::snprintf(rs, sizeof(rs), "%.17g", r);
  Result res = Run({"query", db_, "--collection", "c", "--queries", dir_.Join("q.npy"), "--radius",
                    rs, "--limit", "100000"});
  ASSERT_EQ(res.code, 0) << res.err;
  ASSERT_EQ(res.lines.size(), 1u);
  EXPECT_EQ(res.lines[0]["ids"].get<std::vector<int64_t>>(), Ids(0, within));
  EXPECT_FALSE(res.lines[0]["limit_reached"].get<bool>());
  res = Run({"query", db_, "--collection", "c", "--queries", dir_.Join("q.npy"), "--radius", rs,
             "--limit", "40", "--explain"});
  ASSERT_EQ(res.code, 0) << res.err;
  EXPECT_EQ(res.lines[0]["ids"].get<std::vector<int64_t>>(), Ids(0, 40));
  EXPECT_TRUE(res.lines[0]["limit_reached"].get<bool>());
  EXPECT_NE(res.err.find("\"shape\": \"range\""), std::string::npos) << res.err;
}

TEST_F(RangePagesCliTest, PagesByCursorAndOffsetEqualOneExactOrder) {
  std::vector<int64_t> by_cursor, by_offset;
  std::string after = "";
  for (int page = 0; page < 100; ++page) {
    Result res = Run({"query", db_, "--collection", "c", "--queries", dir_.Join("q.npy"), "--k",
                      "13", "--after", after});
    ASSERT_EQ(res.code, 0) << res.err;
    auto ids = res.lines[0]["ids"].get<std::vector<int64_t>>();
    by_cursor.insert(by_cursor.end(), ids.begin(), ids.end());
    res = Run({"query", db_, "--collection", "c", "--queries", dir_.Join("q.npy"), "--k", "13",
               "--offset", std::to_string(page * 13)});
    ASSERT_EQ(res.code, 0) << res.err;
    ids = res.lines[0]["ids"].get<std::vector<int64_t>>();
    by_offset.insert(by_offset.end(), ids.begin(), ids.end());
    if (res.lines[0]["next"].is_null()) break;
    after = res.lines[0]["next"].get<std::string>();
  }
  EXPECT_EQ(by_cursor, Ids(0, 300));
  EXPECT_EQ(by_offset, Ids(0, 300));
}

TEST_F(RangePagesCliTest, BadOptionsFailWithOneLine) {
  const std::string q = dir_.Join("q.npy");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--k", "3", "--after", "nope"}, "after: query 0: 'nope' is not a cursor"},
      {{"--k", "3", "--offset", "-1"}, "--offset"},
      {{"--k", "3", "--offset", "2", "--after", ""}, "not both"},
      {{"--radius", "1", "--offset", "2"}, "takes no offset or after"},
      {{"--radius", "nan"}, "--radius"},
      {{"--k", "3", "--limit", "5"}, "needs --radius"},
      {{"--k", "3", "--after", ","}, "2 cursors for 1 queries"},
  };
  for (const auto& [extra, needle] : cases) {
    std::vector<std::string> args = {"query", db_, "--collection", "c", "--queries", q};
    args.insert(args.end(), extra.begin(), extra.end());
    Result res = Run(args);
    EXPECT_EQ(res.code, 1) << needle;
    EXPECT_TRUE(res.lines.empty()) << needle;
    EXPECT_NE(res.err.find(needle), std::string::npos) << res.err;
    EXPECT_EQ(std::count(res.err.begin(), res.err.end(), '\n'), 1) << res.err;
  }
}

}  // namespace
}  // namespace sieve
