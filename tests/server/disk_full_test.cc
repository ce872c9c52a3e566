// Copyright 2026 The Sieve Authors.
//
// The server over a disk that fills up and is then freed, through a fault-injecting
// rocksdb::FileSystem (tests/storage/fault_fs.h) under the same engine DB::Open builds. While
// the disk is full every write answers 503 naming the full disk, reads keep answering; once
// space is back the same server, without a restart, takes writes again, and what it answers
// then equals the float64 oracle over exactly the acknowledged rows.

#include <gtest/gtest.h>
#include <rocksdb/env.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/db_impl.h"
#include "storage/store.h"
#include "tests/server/http_client.h"
#include "tests/storage/fault_fs.h"
#include "tests/testutil.h"
#include "tools/server/server.h"

namespace sieve {
namespace {

using json = nlohmann::json;
using test::Http;
using test::HttpReply;

constexpr uint32_t kDim = 8;
constexpr size_t kBatchRows = 200;

std::string Batch(const std::vector<float>& v, size_t batch) {
  json ids = json::array(), vectors = json::array(), attrs = json::array();
  for (size_t i = batch * kBatchRows; i < (batch + 1) * kBatchRows; ++i) {
    ids.push_back(i);
    vectors.push_back(std::vector<float>(&v[i * kDim], &v[(i + 1) * kDim]));
    attrs.push_back({{"batch", batch}});
  }
  return json{{"ids", ids}, {"vectors", vectors}, {"attributes", attrs}}.dump();
}

TEST(ServerDiskFullTest, WritesWorkAgainOnceSpaceIsFreedWithoutARestart) {
  test::ScratchDir dir;
  auto fs = std::make_shared<test::FaultFileSystem>();
  std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(fs);
  StoreOptions so;
  so.env = env.get();
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(so, dir.Join("db"), &store).ok());
  DBImpl db(std::move(store), Options());
  server::ServerOptions o;
  o.port = 0;
  std::unique_ptr<server::Server> server;
  ASSERT_TRUE(server::Server::Start(&db, o, &server).ok());
  const uint16_t port = server->port();

  const std::vector<float> v = test::RandomVectors(4 * kBatchRows, kDim, 11);
  HttpReply r = Http(port, "POST", "/collections",
                     R"({"name": "c", "dim": 8, "attributes": {"batch": "int"}})");
  ASSERT_EQ(r.status, 201) << r.body;
  r = Http(port, "POST", "/collections/c/rows", Batch(v, 0));
  ASSERT_EQ(r.status, 200) << r.body;

  // The disk fills: every write-side file operation fails with ENOSPC from now on.
  fs->Arm(test::Fault::kNoSpace, 0, /*sticky=*/true);
  for (size_t batch : {1, 2}) {
    r = Http(port, "POST", "/collections/c/rows", Batch(v, batch));
    EXPECT_EQ(r.status, 503) << r.body;
    // RocksDB's "No space left on device", or the store's "the disk of ... is full".
    EXPECT_TRUE(r.body.find("space") != std::string::npos ||
                r.body.find("full") != std::string::npos)
        << r.body;
  }
  r = Http(port, "POST", "/collections/c/delete", R"({"filter": "batch = 0"})");
  EXPECT_EQ(r.status, 503) << r.body;
  EXPECT_GT(fs->failures(), 0);
  // Reads need no disk space.
  r = Http(port, "GET", "/collections/c");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["rows"].get<int64_t>(), int64_t{kBatchRows});

  // Space is freed; the same server, never restarted, writes again.
  fs->Disarm();
  r = Http(port, "POST", "/collections/c/rows", Batch(v, 3));
  ASSERT_EQ(r.status, 200) << r.body;
  r = Http(port, "POST", "/collections/c/delete", R"({"ids": [0, 1, 2]})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["deleted"].get<int64_t>(), 3);

  // Exactly batches 0 (less three rows) and 3 are there: nothing refused was half-written.
  auto live = [](uint32_t row) { return row >= 3 && (row < kBatchRows || row >= 3 * kBatchRows); };
  const std::vector<float> q = test::RandomVectors(1, kDim, 12);
  const int k = 2 * kBatchRows;
  r = Http(port, "POST", "/collections/c/query",
           json{{"vectors", {std::vector<float>(q.begin(), q.end())}}, {"k", k}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const json ids = json::parse(r.body)["results"][0]["ids"];
  auto expect = test::OracleTopK(Metric::kL2, q.data(), v.data(), 4 * kBatchRows, kDim, k, live);
  ASSERT_EQ(ids.size(), expect.size());
  for (size_t i = 0; i < expect.size(); ++i) {
    EXPECT_EQ(ids[i].get<int64_t>(), int64_t{expect[i].first}) << "#" << i;
  }
  r = Http(port, "GET", "/collections/c");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["rows"].get<int64_t>(), int64_t{2 * kBatchRows - 3});
  server->Shutdown();

  std::vector<std::string> report;
  EXPECT_TRUE(db.Check(&report).ok());
}

}  // namespace
}  // namespace sieve
