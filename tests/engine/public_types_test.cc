// Copyright 2026 The Sieve Authors.
//
// The JSON forms of the engine-level public types (engine/public_types.cc).

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sieve/db.h"
#include "sieve/types.h"

namespace sieve {
namespace {

TEST(ExplainTest, ToJsonIsOneLineWithPathAndPassingRows) {
  Explain e;
  e.device = "cpu";
  e.filter_mode = "bitset";
  e.passing_rows = 1500;
  for (uint32_t i = 0; i < 2; ++i) {
    ShardPlan plan;
    plan.shard = i;
    plan.path = i == 0 ? "sddmm" : "gather";
    plan.select = "heap";
    plan.passing_rows = {i == 0 ? 1000u : 500u};
    plan.rows = i == 0 ? 50000 : 40000;
    e.shards.push_back(plan);
  }
  e.shards[1].select = "candidates";
  e.shards[1].products = "tf32";
  e.shards[1].select_plan = "candidates: sample 6144, cap 4096, tile 32 MiB, tf32 products";
  e.stage_ms = {{"parse", 0.5}, {"compile", 1.25}, {"execute", 3.0}};
  const std::string line = e.ToJson();
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const auto j = nlohmann::ordered_json::parse(line);
  EXPECT_EQ(j["path"], "sddmm");
  EXPECT_EQ(j["passing_rows"], 1500);
  EXPECT_EQ(j["device"], "cpu");
  EXPECT_EQ(j["filter_mode"], "bitset");
  ASSERT_EQ(j["shards"].size(), 2u);
  EXPECT_EQ(j["shards"][1]["shard"], 1);
  EXPECT_EQ(j["shards"][1]["path"], "gather");
  EXPECT_EQ(j["shards"][1]["select"], "candidates");
  EXPECT_EQ(j["shards"][1]["products"], "tf32");
  EXPECT_FALSE(j["shards"][0].contains("products"));
  EXPECT_EQ(j["shards"][1]["passing_rows"], nlohmann::ordered_json::array({500}));
  EXPECT_EQ(j["shards"][1]["rows"], 40000);
  EXPECT_EQ(j["shards"][1]["select_plan"],
            "candidates: sample 6144, cap 4096, tile 32 MiB, tf32 products");
  EXPECT_FALSE(j["shards"][0].contains("select_plan"));
  // Stages keep the order they ran in.
  std::vector<std::string> stages;
  for (const auto& [k, v] : j["stages_ms"].items()) stages.push_back(k);
  EXPECT_EQ(stages, (std::vector<std::string>{"parse", "compile", "execute"}));
  EXPECT_DOUBLE_EQ(j["stages_ms"]["compile"].get<double>(), 1.25);

  const auto empty = nlohmann::json::parse(Explain().ToJson());
  EXPECT_TRUE(empty.contains("path"));
  EXPECT_TRUE(empty.contains("passing_rows"));
}

TEST(CollectionStatsTest, ToJson) {
  CollectionStats stats;
  stats.spec.name = "items";
  stats.spec.dim = 96;
  stats.spec.metric = Metric::kInnerProduct;
  stats.spec.dtype = DType::kFloat16;
  stats.spec.shards = 2;
  stats.spec.attributes = {{"year", AttrType::kInt}, {"tags", AttrType::kTags}};
  stats.rows = 10;
  stats.deleted_rows = 2;
  stats.total_rows = 12;
  const std::string line = stats.ToJson();
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const auto j = nlohmann::ordered_json::parse(line);
  EXPECT_EQ(j["collection"], "items");
  EXPECT_EQ(j["rows"], 10);
  EXPECT_EQ(j["deleted_rows"], 2);
  EXPECT_EQ(j["total_rows"], 12);
  EXPECT_EQ(j["dim"], 96);
  EXPECT_EQ(j["metric"], "ip");
  EXPECT_EQ(j["dtype"], "f16");
  EXPECT_EQ(j["shards"], 2);
  EXPECT_EQ(j["attributes"]["year"], "int");
  EXPECT_EQ(j["attributes"]["tags"], "tags");
  EXPECT_EQ(j["attributes"].begin().key(), "year");
}

// `stats` prints as `create` and `query` do: spaced, one line, keys in order.
TEST(CollectionStatsTest, ToJsonIsSpacedAsTheOtherCliOutput) {
  CollectionStats stats;
  stats.spec.name = "it's \"q\"";
  stats.spec.dim = 4;
  stats.spec.attributes = {{"a", AttrType::kInt}, {"b", AttrType::kString}};
  stats.rows = 3;
  EXPECT_EQ(stats.ToJson(),
            "{\"collection\": \"it's \\\"q\\\"\", \"rows\": 3, \"deleted_rows\": 0, "
            "\"total_rows\": 0, \"dim\": 4, \"metric\": \"l2\", \"dtype\": \"f32\", "
            "\"shards\": 1, \"attributes\": {\"a\": \"int\", \"b\": \"string\"}}");
  stats.spec.attributes.clear();
  EXPECT_NE(stats.ToJson().find("\"attributes\": {}"), std::string::npos) << stats.ToJson();
}

TEST(ExplainTest, StageTimesPrintToTheMicrosecond) {
  Explain e;
  e.stage_ms = {{"parse", 1.1492559999999998}, {"execute", 0.0004}, {"total", 12.3456789}};
  const std::string line = e.ToJson();
  EXPECT_NE(line.find("\"stages_ms\": {\"parse\": 1.149, \"execute\": 0.0, "
                      "\"total\": 12.346}"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("\"memory\": {\"host_bytes\": 0, "), std::string::npos) << line;
}

}  // namespace
}  // namespace sieve
