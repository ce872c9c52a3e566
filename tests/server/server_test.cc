// Copyright 2026 The Sieve Authors.
//
// The HTTP server in-process on an ephemeral loopback port, driven by a real HTTP client:
// round trips against the float64 oracle and DB::Search, every kind of bad request, tokens,
// slow and idle clients, and concurrent clients whose queries the batcher merges.

#include "tools/server/server.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sieve/db.h"
#include "tests/server/http_client.h"
#include "tests/testutil.h"
#include "tools/io/npy.h"

namespace sieve {
namespace {

using json = nlohmann::json;
using test::Http;
using test::HttpConnection;
using test::HttpReply;

constexpr uint32_t kDim = 16;
constexpr size_t kRows = 3000;

struct RowAttrs {
  int64_t cat;  // 0..6, null for every 11th row
  bool has_cat;
  double price;  // [0, 100)
};

// Evaluates the filters the tests use, independently of Sieve.
bool Passes(const std::string& filter, const RowAttrs& a) {
  if (filter.empty()) return true;
  int c = 0;
  double p = 0;
  if (std::sscanf(filter.c_str(), "cat = %d AND price < %lf", &c, &p) == 2) {
    return a.has_cat && a.cat == c && a.price < p;
  }
  if (std::sscanf(filter.c_str(), "cat = %d", &c) == 1) return a.has_cat && a.cat == c;
  if (std::sscanf(filter.c_str(), "price < %lf", &p) == 1) return a.price < p;
  ADD_FAILURE() << "test filter not understood: " << filter;
  return false;
}

std::string VectorsJson(const float* v, size_t n, size_t dim) {
  std::string out = "[";
  for (size_t i = 0; i < n; ++i) {
    out += i ? ",[" : "[";
    for (size_t j = 0; j < dim; ++j) {
      if (j) out += ",";
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.9g", v[i * dim + j]);
      out += buf;
    }
    out += "]";
  }
  return out + "]";
}

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(DB::Open(Options(), dir_.Join("db"), &db_).ok());
    vectors_ = test::RandomVectors(kRows, kDim, 42);
    for (size_t i = 0; i < kRows; ++i) {
      RowAttrs a;
      a.has_cat = i % 11 != 0;
      a.cat = static_cast<int64_t>((i * 7919) % 7);
      a.price = static_cast<double>((i * 104729) % 10000) / 100.0;
      attrs_.push_back(a);
      ids_.push_back(static_cast<int64_t>(1000 + 3 * i));
    }
  }

  void StartServer(server::ServerOptions o = server::ServerOptions()) {
    o.port = 0;
    ASSERT_TRUE(server::Server::Start(db_.get(), o, &server_).ok());
    port_ = server_->port();
  }

  // Creates "items" and ingests every row through the API in two requests.
  void CreateAndIngest(const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    HttpReply r = Http(port_, "POST", "/collections",
                       R"({"name": "items", "dim": 16, "metric": "l2",
                           "attributes": {"cat": "int", "price": "float"}})",
                       headers);
    ASSERT_EQ(r.status, 201) << r.body;
    for (size_t begin = 0; begin < kRows; begin += kRows / 2) {
      const size_t n = std::min(kRows / 2, kRows - begin);
      json attrs = json::array(), ids = json::array();
      for (size_t i = begin; i < begin + n; ++i) {
        json a = json::object();
        if (attrs_[i].has_cat) a["cat"] = attrs_[i].cat;
        a["price"] = attrs_[i].price;
        attrs.push_back(a);
        ids.push_back(ids_[i]);
      }
      std::string body = "{\"ids\": " + ids.dump() + ", \"attributes\": " + attrs.dump() +
                         ", \"vectors\": " + VectorsJson(&vectors_[begin * kDim], n, kDim) + "}";
      r = Http(port_, "POST", "/collections/items/rows", body, headers);
      ASSERT_EQ(r.status, 200) << r.body;
      EXPECT_EQ(json::parse(r.body)["ingested"], n);
    }
  }

  // Checks one query's answer against the float64 oracle over the live rows.
  void ExpectOracle(const float* q, int k, const std::string& filter, const json& result,
                    const std::vector<bool>& deleted = {}) {
    auto expect = test::OracleTopK(
        Metric::kL2, q, vectors_.data(), kRows, kDim, k,
        [&](uint32_t r) { return (deleted.empty() || !deleted[r]) && Passes(filter, attrs_[r]); });
    ASSERT_EQ(result["ids"].size(), expect.size()) << filter;
    for (size_t i = 0; i < expect.size(); ++i) {
      EXPECT_EQ(result["ids"][i].get<int64_t>(), ids_[expect[i].first]) << filter << " #" << i;
      EXPECT_NEAR(result["distances"][i].get<double>(), expect[i].second,
                  1e-4 * (1 + expect[i].second));
    }
  }

  int64_t MetricValue(const std::string& name) {
    HttpReply r = Http(port_, "GET", "/metrics");
    std::istringstream in(r.body);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind(name + " ", 0) == 0) return std::llround(std::stod(line.substr(name.size())));
    }
    return -1;
  }

  test::ScratchDir dir_;
  std::unique_ptr<DB> db_;
  std::unique_ptr<server::Server> server_;
  uint16_t port_ = 0;
  std::vector<float> vectors_;
  std::vector<RowAttrs> attrs_;
  std::vector<int64_t> ids_;
};

TEST_F(ServerTest, RoundTripsEqualOracleAndDbSearch) {
  StartServer();
  CreateAndIngest();
  HttpReply r = Http(port_, "GET", "/health");
  EXPECT_EQ(r.status, 200);
  r = Http(port_, "GET", "/collections");
  EXPECT_EQ(json::parse(r.body)["collections"], json::array({"items"}));
  r = Http(port_, "GET", "/collections/items");
  ASSERT_EQ(r.status, 200);
  CollectionStats stats;
  ASSERT_TRUE(db_->GetStats("items", &stats).ok());
  EXPECT_EQ(json::parse(r.body), json::parse(stats.ToJson()));
  EXPECT_EQ(json::parse(r.body)["rows"], kRows);

  const std::vector<float> queries = test::RandomVectors(6, kDim, 7);
  const std::vector<std::string> filters = {"", "cat = 3", "price < 1.5", "cat = 2 AND price < 30"};
  for (const std::string& f : filters) {
    for (int k : {1, 10, 50}) {
      json body = {{"k", k}, {"filter", f}};
      std::string text = body.dump();
      text.insert(1, "\"vectors\": " + VectorsJson(queries.data(), 6, kDim) + ", ");
      r = Http(port_, "POST", "/collections/items/query", text);
      ASSERT_EQ(r.status, 200) << r.body;
      json res = json::parse(r.body)["results"];
      ASSERT_EQ(res.size(), 6u);
      SearchRequest req;
      req.queries = queries.data();
      req.num_queries = 6;
      req.dim = kDim;
      req.k = k;
      req.filter = f;
      SearchResult direct;
      ASSERT_TRUE(db_->Search("items", req, SearchOptions(), &direct).ok());
      for (size_t q = 0; q < 6; ++q) {
        ExpectOracle(&queries[q * kDim], k, f, res[q]);
        EXPECT_EQ(res[q]["ids"].get<std::vector<int64_t>>(), direct.results[q].ids);
      }
    }
  }
  // Per-query filters, each path forced, and explain.
  for (const char* path : {"sddmm", "gather", "dense"}) {
    std::string text = "{\"vectors\": " + VectorsJson(queries.data(), 4, kDim) +
                       ", \"k\": 5, \"filters\": " + json(filters).dump() +
                       ", \"device\": \"cpu\", \"path\": \"" + path + "\", \"explain\": true}";
    r = Http(port_, "POST", "/collections/items/query", text);
    ASSERT_EQ(r.status, 200) << r.body;
    json j = json::parse(r.body);
    EXPECT_EQ(j["plan"]["path"], path);
    EXPECT_EQ(j["plan"]["filter_mode"], "bitmap");
    for (size_t q = 0; q < 4; ++q) ExpectOracle(&queries[q * kDim], 5, filters[q], j["results"][q]);
  }

  // Delete by ids and by filter; the answers follow.
  std::vector<bool> deleted(kRows, false);
  r = Http(port_, "POST", "/collections/items/delete",
           json{{"ids", {ids_[0], ids_[5], ids_[6], 999999}}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["deleted"], 3);
  deleted[0] = deleted[5] = deleted[6] = true;
  r = Http(port_, "POST", "/collections/items/delete", R"({"filter": "cat = 4"})");
  ASSERT_EQ(r.status, 200) << r.body;
  uint64_t n4 = 0;
  for (size_t i = 0; i < kRows; ++i) {
    if (!deleted[i] && Passes("cat = 4", attrs_[i])) {
      deleted[i] = true;
      ++n4;
    }
  }
  EXPECT_EQ(json::parse(r.body)["deleted"], n4);
  r = Http(port_, "GET", "/collections/items");
  EXPECT_EQ(json::parse(r.body)["rows"], kRows - 3 - n4);
  std::string text = "{\"vectors\": " + VectorsJson(queries.data(), 6, kDim) + ", \"k\": 20}";
  r = Http(port_, "POST", "/collections/items/query", text);
  ASSERT_EQ(r.status, 200);
  for (size_t q = 0; q < 6; ++q) {
    ExpectOracle(&queries[q * kDim], 20, "", json::parse(r.body)["results"][q], deleted);
  }
}

TEST_F(ServerTest, NpyBodyIngests) {
  StartServer();
  ASSERT_EQ(Http(port_, "POST", "/collections", R"({"name": "v", "dim": 16})").status, 201);
  const std::string file = dir_.Join("v.npy");
  ASSERT_TRUE(io::WriteNpyMatrix(file, vectors_.data(), 100, kDim).ok());
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  HttpReply r =
      Http(port_, "POST", "/collections/v/rows", ss.str(), {{"Content-Type", "application/x-npy"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["rows"], 100);
  // A truncated array is refused whole.
  r = Http(port_, "POST", "/collections/v/rows", ss.str().substr(0, ss.str().size() - 4),
           {{"Content-Type", "application/octet-stream"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("npy body"), std::string::npos) << r.body;
  std::string text = "{\"vectors\": " + VectorsJson(&vectors_[7 * kDim], 1, kDim) + ", \"k\": 1}";
  r = Http(port_, "POST", "/collections/v/query", text);
  EXPECT_EQ(json::parse(r.body)["results"][0]["ids"][0], 7);
}

TEST_F(ServerTest, BadRequestsAnswer4xxWithTheReason) {
  server::ServerOptions o;
  o.max_body_bytes = 1 << 20;
  StartServer(o);
  CreateAndIngest();
  const std::string q1 = VectorsJson(vectors_.data(), 1, kDim);
  std::string npy;  // one query vector as a .npy file, posted where JSON is expected
  {
    const std::string file = dir_.Join("q1.npy");
    ASSERT_TRUE(io::WriteNpyMatrix(file, vectors_.data(), 1, kDim).ok());
    std::ifstream in(file, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    npy = ss.str();
  }
  struct Case {
    std::string method, target, body;
    int status;
    std::string needle;  // in the error message
  };
  const std::vector<Case> cases = {
      {"POST", "/collections/items/query", "{\"vectors\": [[1, 2", 400,
       "malformed JSON body: parse error at line 1, column "},
      {"POST", "/collections", std::string(R"({"name": "c2", "dim": 2})") + '\0' + "garbage",
       400, "malformed JSON body: a NUL byte at byte 24"},
      {"POST", "/collections/items/query", npy, 400,
       "the body is a .npy array, not JSON: this route takes a JSON object"},
      {"POST", "/collections/items/delete", npy, 400, "the body is a .npy array"},
      {"POST", "/collections/items/query", "[1, 2]", 400, "must be an object"},
      {"POST", "/collections/items/query",
       "{\"vectors\": " + q1 + ", \"k\": 5, \"filter\": \"cat = = 3\"}", 400, "position"},
      {"POST", "/collections/items/query",
       "{\"vectors\": " + q1 + ", \"k\": 5, \"filter\": \"nope = 3\"}", 400, "nope"},
      {"POST", "/collections/items/query", "{\"vectors\": [[1, 2, 3]], \"k\": 5}", 400, "dim 16"},
      {"POST", "/collections/items/query", "{\"vectors\": " + q1 + ", \"k\": 0}", 400, "'k'"},
      {"POST", "/collections/items/query", "{\"vectors\": " + q1 + ", \"k\": -3}", 400, "'k'"},
      {"POST", "/collections/items/query", "{\"vectors\": " + q1 + ", \"k\": \"5\"}", 400, "'k'"},
      {"POST", "/collections/items/query", "{\"vectors\": " + q1 + "}", 400, "'k'"},
      {"POST", "/collections/items/query",
       "{\"vectors\": " + q1 + ", \"k\": 5, \"filters\": [\"\", \"\"]}", 400, "2 filters for 1"},
      {"POST", "/collections/items/query",
       "{\"vectors\": " + q1 + ", \"k\": 5, \"device\": \"tpu\"}", 400, "tpu"},
      {"POST", "/collections/items/query", "{\"vectors\": " + q1 + ", \"k\": 5, \"kk\": 1}", 400,
       "unknown field 'kk'"},
      {"POST", "/collections/items/query",
       "{\"vectors\": [[1e39" +
           std::string(15 * 2, ' ').replace(0, 30, ",0,0,0,0,0,0,0,0,0,0,0,0,0,0,0") +
           "]], \"k\": 5}",
       400, "finite"},
      {"POST", "/collections/nope/query", "{\"vectors\": " + q1 + ", \"k\": 5}", 404, "nope"},
      {"GET", "/collections/nope", "", 404, "nope"},
      {"GET", "/nothing/here", "", 404, "no route"},
      // Bytes that are not UTF-8 in the target are quoted back as U+FFFD, in valid JSON.
      {"GET", "/nothing/\xff\xfe", "", 404, "no route"},
      {"POST", "/collections/items/\xc3", "", 404, "no route"},
      {"GET", "/collections/items/query", "", 405, "POST"},
      {"PUT", "/health", "", 405, "GET"},
      {"POST", "/collections", R"({"name": "items", "dim": 16})", 409, "items"},
      {"POST", "/collections", R"({"name": "x", "dim": 0})", 400, "'dim'"},
      {"POST", "/collections", R"({"name": "x", "dim": 4, "attributes": {"a": "complex"}})", 400,
       "complex"},
      {"POST", "/collections/items/rows", "{\"vectors\": [[1, 2]]}", 400, "dim 16"},
      {"POST", "/collections/items/rows",
       "{\"vectors\": " + q1 + ", \"attributes\": [{\"cat\": \"x\"}]}", 400, "attributes[0].cat"},
      // One JSON rule with CLI ingest (tools/io/json_value.h): 3.0 is an int, 3.5 is not.
      {"POST", "/collections/items/rows",
       "{\"vectors\": " + q1 + ", \"attributes\": [{\"cat\": 3.5}]}", 400, "non-integral"},
      {"POST", "/collections/items/rows", "{\"vectors\": " + q1 + ", \"ids\": [1, 2]}", 400,
       "2 ids for 1"},
      {"POST", "/collections/items/rows",
       "{\"vectors\": " + q1 + ", \"ids\": [" + std::to_string(1000) + "]}", 400, "1000"},
      {"POST", "/collections/items/delete", "{}", 400, "exactly one"},
      {"POST", "/collections/items/query", "{\"vectors\": " + std::string(100000, '['), 400,
       "nested deeper"},
      {"POST", "/collections/items/query",
       "{\"vectors\": " + q1 + ", \"k\": 1, \"filter\": \"" + std::string(5000, '(') + "\"}", 400,
       "filter"},
      {"POST", "/collections/items/delete", R"({"filter": "cat <"})", 400, "position"},
      // Issue 32 item 8: a blank filter would select every row; ids are never negative.
      {"POST", "/collections/items/delete", R"({"filter": "  "})", 400,
       "delete: the filter is empty"},
      {"POST", "/collections/items/update", R"({"filter": "  ", "set": {"cat": 1}})", 400,
       "update: the filter is empty"},
      {"POST", "/collections/items/update", R"({"filter": "", "set": {"cat": 1}})", 400,
       "update: the filter is empty"},
      {"POST", "/collections/items/rows", "{\"vectors\": " + q1 + ", \"ids\": [-3]}", 400,
       "row 0: id -3 is negative"},
      {"POST", "/collections/items/rows", std::string(2 << 20, ' '), 413, "limit"},
  };
  for (const Case& c : cases) {
    HttpReply r = Http(port_, c.method, c.target, c.body);
    EXPECT_EQ(r.status, c.status) << c.method << " " << c.target << " " << c.body.substr(0, 200)
                                  << " → " << r.body;
    json j = json::parse(r.body, nullptr, false);
    ASSERT_TRUE(j.is_object() && j.contains("error")) << r.body;
    const std::string error = j["error"].get<std::string>();
    EXPECT_NE(error.find(c.needle), std::string::npos)
        << c.target << " " << c.body.substr(0, 200) << " → " << r.body;
    // A client sees neither the JSON library's exception ids nor the CLI's flags.
    EXPECT_EQ(error.find("json.exception"), std::string::npos) << error;
    EXPECT_EQ(error.find("--"), std::string::npos) << error;
  }
  // Asked for the GPU where there is none (a CPU build, or no device), the reason names no flag.
  HttpReply r0 = Http(port_, "POST", "/collections/items/query",
            "{\"vectors\": " + q1 + ", \"k\": 5, \"device\": \"gpu\"}");
  if (r0.status != 200) {
    EXPECT_EQ(r0.body.find("--"), std::string::npos) << r0.body;
    EXPECT_NE(r0.body.find("device gpu requested: "), std::string::npos) << r0.body;
  }
  // Nothing was written by the bad requests, and the server still serves.
  HttpReply r = Http(port_, "GET", "/collections/items");
  EXPECT_EQ(json::parse(r.body)["rows"], kRows);
  std::vector<std::string> report;
  EXPECT_TRUE(db_->Check(&report).ok());
  // Malformed HTTP is 400 too, and closes the connection.
  HttpConnection c(port_);
  ASSERT_TRUE(c.SendAll("NOT HTTP AT ALL\r\n\r\n"));
  EXPECT_EQ(c.ReadReply().status, 400);
}

TEST_F(ServerTest, TokenIsRequiredWhenSet) {
  server::ServerOptions o;
  o.token = "s3cret-token-0123456789abcdef";
  StartServer(o);
  HttpReply r = Http(port_, "GET", "/health");
  EXPECT_EQ(r.status, 401);
  EXPECT_NE(r.body.find("missing"), std::string::npos);
  r = Http(port_, "GET", "/collections", "",
           {{"Authorization", "Bearer s3cret-token-0123456789abcdeF"}});
  EXPECT_EQ(r.status, 401);
  EXPECT_NE(r.body.find("wrong"), std::string::npos);
  r = Http(port_, "GET", "/collections", "",
           {{"Authorization", "Bearer s3cret-token-0123456789abcdef-longer"}});
  EXPECT_EQ(r.status, 401);
  r = Http(port_, "POST", "/collections", R"({"name": "x", "dim": 2})");
  EXPECT_EQ(r.status, 401);
  std::vector<std::string> names;
  ASSERT_TRUE(db_->ListCollections(&names).ok());
  EXPECT_TRUE(names.empty());
  CreateAndIngest({{"Authorization", "Bearer s3cret-token-0123456789abcdef"}});
  r = Http(port_, "GET", "/collections/items", "",
           {{"Authorization", "Bearer s3cret-token-0123456789abcdef"}});
  EXPECT_EQ(r.status, 200);
}

TEST_F(ServerTest, NonLoopbackNeedsAToken) {
  server::ServerOptions o;
  o.host = "0.0.0.0";
  o.port = 0;
  std::unique_ptr<server::Server> s;
  Status st = server::Server::Start(db_.get(), o, &s);
  EXPECT_TRUE(st.IsInvalidArgument());
  EXPECT_NE(st.message().find("--token-file"), std::string::npos) << st.message();
  o.token = "0123456789abcdef";
  EXPECT_TRUE(server::Server::Start(db_.get(), o, &s).ok());
  o.host = "not-an-address";
  std::unique_ptr<server::Server> s2;
  EXPECT_TRUE(server::Server::Start(db_.get(), o, &s2).IsInvalidArgument());
}

TEST_F(ServerTest, SlowClientIsDroppedWithoutBlockingOthers) {
  server::ServerOptions o;
  o.read_timeout_ms = 1500;
  o.threads = 1;  // one network thread: a blocked one would stall everyone
  StartServer(o);
  HttpConnection slow(port_, 5000);
  ASSERT_TRUE(
      slow.SendAll("POST /collections HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"));
  HttpConnection slow_headers(port_, 5000);
  ASSERT_TRUE(slow_headers.SendAll("GET /health HTTP/1.1\r\nHos"));
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) EXPECT_EQ(Http(port_, "GET", "/health").status, 200);
  // Had the slow clients held the one network thread, these would have waited 1.5 s.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(1000));
  // Trickling bytes does not extend the deadline (slowloris).
  for (int i = 0; i < 8; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    slow_headers.SendAll("t");
  }
  EXPECT_TRUE(slow.WaitClosed());
  EXPECT_TRUE(slow_headers.WaitClosed());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(5000));
  EXPECT_EQ(Http(port_, "GET", "/health").status, 200);
}

TEST_F(ServerTest, IdleKeepAliveConnectionIsClosed) {
  server::ServerOptions o;
  o.idle_timeout_ms = 200;
  StartServer(o);
  HttpConnection c(port_, 5000);
  EXPECT_EQ(c.Request("GET", "/health").status, 200);
  EXPECT_EQ(c.Request("GET", "/health").status, 200);  // keep-alive
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(c.WaitClosed());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(2000));
}

// 32 clients, each with its own filter, at once: every answer equals the oracle and the
// unbatched DB::Search, and the batcher did merge requests.
TEST_F(ServerTest, ConcurrentClientsWithDifferentFiltersAreBatchedCorrectly) {
  server::ServerOptions o;
  o.batch_window_us = 20000;  // wide, so that batches form even on a loaded machine
  o.max_batch = 64;
  StartServer(o);
  CreateAndIngest();
  constexpr int kClients = 32, kRounds = 4;
  const std::vector<float> queries = test::RandomVectors(kClients * kRounds, kDim, 99);
  auto filter_of = [](int c) -> std::string {
    switch (c % 4) {
      case 0:
        return "";
      case 1:
        return "cat = " + std::to_string(c % 7);
      case 2:
        return "price < " + std::to_string(5 + c);
      default:
        return "cat = " + std::to_string(c % 7) + " AND price < 60";
    }
  };
  std::vector<json> answers(kClients * kRounds);
  std::vector<int> statuses(kClients * kRounds, 0);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      HttpConnection conn(port_);
      ++ready;
      while (ready < kClients) std::this_thread::yield();
      for (int r = 0; r < kRounds; ++r) {
        const int i = r * kClients + c;
        json body = {{"k", 10}, {"filter", filter_of(c)}};
        std::string text = body.dump();
        text.insert(1, "\"vectors\": " + VectorsJson(&queries[i * kDim], 1, kDim) + ", ");
        HttpReply reply = conn.Request("POST", "/collections/items/query", text);
        statuses[i] = reply.status;
        if (reply.status == 200) answers[i] = json::parse(reply.body)["results"][0];
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int c = 0; c < kClients; ++c) {
    for (int r = 0; r < kRounds; ++r) {
      const int i = r * kClients + c;
      ASSERT_EQ(statuses[i], 200);
      ExpectOracle(&queries[i * kDim], 10, filter_of(c), answers[i]);
      SearchRequest req;
      req.queries = &queries[i * kDim];
      req.num_queries = 1;
      req.dim = kDim;
      req.k = 10;
      req.filter = filter_of(c);
      SearchResult direct;
      ASSERT_TRUE(db_->Search("items", req, SearchOptions(), &direct).ok());
      EXPECT_EQ(answers[i]["ids"].get<std::vector<int64_t>>(), direct.results[0].ids);
    }
  }
  const int64_t searches = MetricValue("sieve_batch_requests_count");
  const int64_t requests = MetricValue("sieve_batch_requests_sum");
  EXPECT_EQ(requests, kClients * kRounds);
  EXPECT_LT(searches, requests) << "no batch of more than one request formed";
  HttpReply m = Http(port_, "GET", "/metrics");
  EXPECT_NE(m.body.find("sieve_search_filter_mode_total{mode=\"bitmap\"}"), std::string::npos);
  // Every search compiled its filters: the stage counter holds time for it.
  const size_t at = m.body.find("sieve_search_stage_seconds_total{stage=\"compile\"} ");
  ASSERT_NE(at, std::string::npos) << m.body;
  EXPECT_GT(std::stod(m.body.substr(
                at + std::string("sieve_search_stage_seconds_total{stage=\"compile\"} ").size())),
            0.0);
}

// Requests sharing one filter are served as one bitset batch; a bad request in a batch gets its
// own error without failing its neighbours.
TEST_F(ServerTest, SharedFilterBatchesAndBadNeighbours) {
  server::ServerOptions o;
  o.batch_window_us = 50000;
  StartServer(o);
  CreateAndIngest();
  constexpr int kClients = 8;
  const std::vector<float> queries = test::RandomVectors(kClients, kDim, 5);
  for (int bad : {-1, 3}) {
    std::vector<HttpReply> replies(kClients);
    std::vector<std::thread> threads;
    for (int c = 0; c < kClients; ++c) {
      threads.emplace_back([&, c] {
        const std::string filter = c == bad ? "cat = = 1" : "cat = 2";
        std::string text = "{\"vectors\": " + VectorsJson(&queries[c * kDim], 1, kDim) +
                           ", \"k\": 7, \"filter\": \"" + filter + "\"}";
        replies[c] = Http(port_, "POST", "/collections/items/query", text);
      });
    }
    for (auto& t : threads) t.join();
    for (int c = 0; c < kClients; ++c) {
      if (c == bad) {
        EXPECT_EQ(replies[c].status, 400) << replies[c].body;
        continue;
      }
      ASSERT_EQ(replies[c].status, 200) << replies[c].body;
      ExpectOracle(&queries[c * kDim], 7, "cat = 2", json::parse(replies[c].body)["results"][0]);
    }
    if (bad < 0) {
      EXPECT_LT(MetricValue("sieve_batch_requests_count"), kClients);
      EXPECT_GT(MetricValue("sieve_search_filter_mode_total{mode=\"bitset\"}"), 0);
      EXPECT_EQ(MetricValue("sieve_search_filter_mode_total{mode=\"bitmap\"}"), -1);
    }
  }
}

TEST_F(ServerTest, MaxBatchOneNeverMerges) {
  server::ServerOptions o;
  o.max_batch = 1;
  StartServer(o);
  CreateAndIngest();
  const std::vector<float> queries = test::RandomVectors(16, kDim, 11);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int c = 0; c < 16; ++c) {
    threads.emplace_back([&, c] {
      std::string text = "{\"vectors\": " + VectorsJson(&queries[c * kDim], 1, kDim) +
                         ", \"k\": 3, \"filter\": \"price < 50\"}";
      if (Http(port_, "POST", "/collections/items/query", text).status == 200) ++ok;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, 16);
  EXPECT_EQ(MetricValue("sieve_batch_requests_count"), 16);
  EXPECT_EQ(MetricValue("sieve_batch_requests_sum"), 16);
}

TEST_F(ServerTest, RowRoutesGetScrollCountUpdateUpsertCompactAndDrop) {
  StartServer();
  CreateAndIngest();
  // Query with include: each neighbour's attributes, as ingested.
  std::string q = VectorsJson(vectors_.data(), 1, kDim);
  HttpReply r = Http(port_, "POST", "/collections/items/query",
                     "{\"vectors\": " + q + ", \"k\": 4, \"include\": [\"*\", \"vector\"]}");
  ASSERT_EQ(r.status, 200) << r.body;
  json res = json::parse(r.body)["results"][0];
  ExpectOracle(vectors_.data(), 4, "", res);
  ASSERT_EQ(res["attributes"].size(), 4u);
  EXPECT_EQ(res["attributes"][0]["price"].get<double>(), attrs_[0].price);
  EXPECT_EQ(res["vectors"][0].get<std::vector<float>>(),
            std::vector<float>(vectors_.begin(), vectors_.begin() + kDim));
  r = Http(port_, "POST", "/collections/items/query",
           "{\"vectors\": " + q + ", \"k\": 4, \"include\": \"colour\"}");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("cat, price"), std::string::npos) << r.body;
  // get: per id.
  r = Http(port_, "POST", "/collections/items/get",
           "{\"ids\": [" + std::to_string(ids_[11]) + ", 7], \"include\": \"cat\"}");
  ASSERT_EQ(r.status, 200) << r.body;
  json rows = json::parse(r.body)["rows"];
  EXPECT_EQ(rows[0]["id"], ids_[11]);
  EXPECT_TRUE(rows[0]["attributes"]["cat"].is_null());  // every 11th row has no cat
  EXPECT_EQ(rows[1], json::parse(R"({"id": 7, "found": false})"));
  // count and scroll against the oracle.
  size_t want = 0;
  for (const RowAttrs& a : attrs_) want += Passes("cat = 3", a);
  r = Http(port_, "POST", "/collections/items/count", R"({"filter": "cat = 3"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["count"], want);
  std::vector<int64_t> scrolled;
  json after = nullptr;
  for (int pages = 0; pages < 1000; ++pages) {
    json body = {{"filter", "cat = 3"}, {"limit", 17}, {"after", after}, {"include", "price"}};
    r = Http(port_, "POST", "/collections/items/scroll", body.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    json page = json::parse(r.body);
    for (const json& row : page["rows"]) scrolled.push_back(row["id"].get<int64_t>());
    after = page["next"];
    if (after.is_null()) break;
  }
  std::vector<int64_t> expect;
  for (size_t i = 0; i < kRows; ++i) {
    if (Passes("cat = 3", attrs_[i])) expect.push_back(ids_[i]);
  }
  std::sort(expect.begin(), expect.end());
  EXPECT_EQ(scrolled, expect);
  // update by filter; upsert; ingest of a live id without upsert is refused.
  r = Http(port_, "POST", "/collections/items/update",
           R"({"filter": "cat = 3", "set": {"price": 1000.5, "cat": null}})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["updated"], want);
  r = Http(port_, "POST", "/collections/items/count", R"({"filter": "price = 1000.5"})");
  EXPECT_EQ(json::parse(r.body)["count"], want);
  r = Http(port_, "POST", "/collections/items/update", R"({"ids": [1000], "set": {"colour": 1}})");
  EXPECT_EQ(r.status, 400);
  const std::string one = VectorsJson(vectors_.data() + kDim, 1, kDim);
  r = Http(port_, "POST", "/collections/items/rows",
           "{\"ids\": [" + std::to_string(ids_[0]) + "], \"vectors\": " + one + "}");
  EXPECT_EQ(r.status, 400) << r.body;
  r = Http(port_, "POST", "/collections/items/rows",
           "{\"ids\": [" + std::to_string(ids_[0]) + "], \"vectors\": " + one +
               ", \"upsert\": true}");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["replaced"], 1);
  r = Http(port_, "POST", "/collections/items/rows", "{\"vectors\": " + one + "}");
  EXPECT_EQ(r.status, 400) << r.body;  // no ids into a collection with rows
  EXPECT_NE(r.body.find("auto"), std::string::npos) << r.body;
  // One replaced row holds less than a rewrite writes: left, unless forced.
  r = Http(port_, "POST", "/collections/items/compact", "");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["rows_removed"], 0);
  EXPECT_EQ(json::parse(r.body)["rows_left_deleted"], 1);
  EXPECT_TRUE(json::parse(r.body).contains("note")) << r.body;
  r = Http(port_, "POST", "/collections/items/compact", "{\"force\": 1}");
  EXPECT_EQ(r.status, 400) << r.body;
  r = Http(port_, "POST", "/collections/items/compact", "{\"force\": true}");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["rows_removed"], 1);
  EXPECT_EQ(json::parse(r.body)["rows_left_deleted"], 0);
  // drop, then the name is free for another dim.
  r = Http(port_, "DELETE", "/collections/items");
  ASSERT_EQ(r.status, 200) << r.body;
  r = Http(port_, "GET", "/collections/items");
  EXPECT_EQ(r.status, 404);
  r = Http(port_, "POST", "/collections", R"({"name": "items", "dim": 2})");
  ASSERT_EQ(r.status, 201) << r.body;
  r = Http(port_, "POST", "/collections/items/query", R"({"vectors": [[1, 2]], "k": 1})");
  EXPECT_EQ(r.status, 200) << r.body;
}

TEST_F(ServerTest, AlterRenameAndAliasRoutes) {
  StartServer();
  CreateAndIngest();
  // Add an attribute with a default: every stored row has it, filters and includes see it.
  HttpReply r = Http(port_, "POST", "/collections/items/alter",
                     R"({"add_attribute": {"name": "w", "type": "int", "default": 7}})");
  ASSERT_EQ(r.status, 200) << r.body;
  json res = json::parse(r.body);
  EXPECT_EQ(res["rows"], kRows);
  EXPECT_EQ(res["attributes"].size(), 3u);
  r = Http(port_, "POST", "/collections/items/count", R"({"filter": "w = 7"})");
  EXPECT_EQ(json::parse(r.body)["count"], kRows);
  r = Http(port_, "POST", "/collections/items/alter",
           R"({"rename_attribute": {"from": "price", "to": "cost"}})");
  ASSERT_EQ(r.status, 200) << r.body;
  r = Http(port_, "POST", "/collections/items/get",
           "{\"ids\": [" + std::to_string(ids_[3]) + "], \"include\": \"cost,w\"}");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["rows"][0]["attributes"]["cost"].get<double>(), attrs_[3].price);
  r = Http(port_, "POST", "/collections/items/alter", R"({"drop_attribute": "cat"})");
  ASSERT_EQ(r.status, 200) << r.body;
  r = Http(port_, "POST", "/collections/items/count", R"({"filter": "cat = 3"})");
  EXPECT_EQ(r.status, 400) << r.body;
  // Bad requests: two operations, a default of the wrong type, an unknown attribute.
  r = Http(port_, "POST", "/collections/items/alter",
           R"({"drop_attribute": "w", "rename": "x"})");
  EXPECT_EQ(r.status, 400);
  r = Http(port_, "POST", "/collections/items/alter",
           R"({"add_attribute": {"name": "b", "type": "bool", "default": "yes"}})");
  EXPECT_EQ(r.status, 400) << r.body;
  r = Http(port_, "POST", "/collections/items/alter", R"({"drop_attribute": "nope"})");
  EXPECT_EQ(r.status, 400) << r.body;
  // Rename, then an alias that queries reach the collection through.
  r = Http(port_, "POST", "/collections/items/rename", R"({"to": "items_v1"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Http(port_, "GET", "/collections/items").status, 404);
  r = Http(port_, "PUT", "/aliases/items", R"({"collection": "items_v1"})");
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string q = VectorsJson(vectors_.data(), 1, kDim);
  r = Http(port_, "POST", "/collections/items/query", "{\"vectors\": " + q + ", \"k\": 4}");
  ASSERT_EQ(r.status, 200) << r.body;
  ExpectOracle(vectors_.data(), 4, "", json::parse(r.body)["results"][0]);
  r = Http(port_, "GET", "/aliases");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["aliases"],
            json::parse(R"([{"alias": "items", "collection": "items_v1"}])"));
  EXPECT_EQ(Http(port_, "POST", "/collections", R"({"name": "items", "dim": 2})").status, 409);
  EXPECT_EQ(Http(port_, "DELETE", "/collections/items_v1").status, 400);  // an alias names it
  EXPECT_EQ(Http(port_, "PUT", "/aliases/x", R"({"collection": "none"})").status, 404);
  EXPECT_EQ(Http(port_, "POST", "/aliases/items", "{}").status, 405);
  r = Http(port_, "DELETE", "/aliases/items");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Http(port_, "DELETE", "/aliases/items").status, 404);
  EXPECT_EQ(Http(port_, "DELETE", "/collections/items_v1").status, 200);
}

// Requests that race a DELETE of their collection answer 200 (they ran first) or 404 (second),
// never 500; the name is then free for a collection of another dim, searched with its own.
TEST_F(ServerTest, RequestsRacingADropAnswer404) {
  StartServer();
  CreateAndIngest();
  const std::string q = VectorsJson(vectors_.data(), 2, kDim);
  const std::vector<std::pair<std::string, std::string>> requests = {
      {"/collections/items/query", "{\"vectors\": " + q + ", \"k\": 5, \"filter\": \"cat < 4\"}"},
      {"/collections/items/get", "{\"ids\": [1000, 1003], \"include\": \"*\"}"},
      {"/collections/items/count", R"({"filter": "cat = 3"})"},
      {"/collections/items/scroll", R"({"filter": "cat >= 1", "limit": 50})"},
      {"/collections/items/update", R"({"filter": "cat = 6", "set": {"price": 1.5}})"},
      {"/collections/items", ""},
  };
  std::atomic<bool> dropped{false};
  std::mutex mu;
  std::vector<std::string> bad;
  int not_found = 0;
  std::vector<std::thread> threads;
  for (size_t t = 0; t < requests.size(); ++t) {
    threads.emplace_back([&, t] {
      const auto& [target, body] = requests[t];
      for (int after = 0, i = 0; after < 3 && i < 2000; ++i) {
        if (dropped) ++after;
        HttpReply r = Http(port_, body.empty() ? "GET" : "POST", target, body);
        std::lock_guard<std::mutex> l(mu);
        if (r.status == 404) {
          ++not_found;
          EXPECT_NE(r.body.find("items"), std::string::npos) << r.body;
        } else if (r.status != 200) {
          bad.push_back(target + ": " + std::to_string(r.status) + " " + r.body);
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  HttpReply r = Http(port_, "DELETE", "/collections/items");
  dropped = true;
  for (auto& t : threads) t.join();
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(bad.empty()) << bad.size() << " answers other than 200 or 404, e.g. " << bad[0];
  EXPECT_GE(not_found, static_cast<int>(requests.size()));
  r = Http(port_, "POST", "/collections", R"({"name": "items", "dim": 3})");
  ASSERT_EQ(r.status, 201) << r.body;
  r = Http(port_, "POST", "/collections/items/rows",
           R"({"ids": [7, 8], "vectors": [[1, 0, 0], [0, 0, 1]]})");
  ASSERT_EQ(r.status, 200) << r.body;
  r = Http(port_, "POST", "/collections/items/query", R"({"vectors": [[0, 0.1, 0.9]], "k": 2})");
  ASSERT_EQ(r.status, 200) << r.body;
  json res = json::parse(r.body)["results"][0];
  EXPECT_EQ(res["ids"], json::parse("[8, 7]"));
  EXPECT_NEAR(res["distances"][0].get<double>(), 0.02, 1e-6);  // 0.1^2 + 0.1^2
  r = Http(port_, "POST", "/collections/items/query",
           "{\"vectors\": " + VectorsJson(vectors_.data(), 1, kDim) + ", \"k\": 1}");
  EXPECT_EQ(r.status, 400) << r.body;  // the old dim is not remembered
}

// Snapshot tokens: a scroll opened with "snapshot": true reads one version while rows are
// deleted and added between its pages, and releases its token with its last page; a token
// from POST /snapshots serves count, get, query and scroll until DELETE; unknown, released
// and idle-expired tokens are 404, a token that is not a string 400.
TEST_F(ServerTest, SnapshotTokensReadOneVersion) {
  server::ServerOptions o;
  o.snapshot_idle_ms = 60000;
  StartServer(o);
  CreateAndIngest();
  // A paged scroll with a snapshot while the rows change between pages.
  std::vector<int64_t> scrolled;
  json body = {{"limit", 400}, {"include", json::array()}, {"snapshot", true}};
  std::string token;
  int64_t next_delete = ids_.back();
  for (int page_no = 0;; ++page_no) {
    HttpReply r = Http(port_, "POST", "/collections/items/scroll", body.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    json page = json::parse(r.body);
    ASSERT_TRUE(page.contains("snapshot")) << r.body;
    if (token.empty()) token = page["snapshot"].get<std::string>();
    EXPECT_EQ(page["snapshot"], token);
    for (const json& row : page["rows"]) scrolled.push_back(row["id"].get<int64_t>());
    if (page["next"].is_null()) break;
    body["after"] = page["next"];
    body["snapshot"] = token;
    // Delete rows past the cursor and add new ones: the scroll must not see either.
    r = Http(port_, "POST", "/collections/items/delete",
             json{{"ids", {next_delete, next_delete - 3}}}.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    next_delete -= 6;
    std::vector<float> v = test::RandomVectors(1, kDim, 500 + page_no);
    r = Http(port_, "POST", "/collections/items/rows",
             "{\"ids\": [" + std::to_string(900000 + page_no) + "], \"vectors\": " +
                 VectorsJson(v.data(), 1, kDim) + "}");
    ASSERT_EQ(r.status, 200) << r.body;
  }
  std::vector<int64_t> want = ids_;
  EXPECT_EQ(scrolled, want);
  // The scroll's token went with its last page.
  HttpReply r = Http(port_, "POST", "/collections/items/count",
                     json{{"snapshot", token}}.dump());
  EXPECT_EQ(r.status, 404) << r.body;

  // An explicit token: count, get, query and scroll read it until it is released.
  r = Http(port_, "POST", "/snapshots", "");
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string held = json::parse(r.body)["snapshot"].get<std::string>();
  EXPECT_EQ(json::parse(r.body)["idle_timeout_s"], 60);
  r = Http(port_, "POST", "/collections/items/count", "{}");
  const int64_t before = json::parse(r.body)["count"].get<int64_t>();
  r = Http(port_, "POST", "/collections/items/delete",
           json{{"filter", "price < 50"}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  r = Http(port_, "POST", "/collections/items/count", json{{"snapshot", held}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["count"], before);
  r = Http(port_, "POST", "/collections/items/count", "{}");
  EXPECT_LT(json::parse(r.body)["count"].get<int64_t>(), before);
  // A row deleted by the filter is still there through the token.
  int64_t cheap = -1;
  for (size_t i = 0; i < kRows && cheap < 0; ++i) {
    if (attrs_[i].price < 50 && i + 1 < kRows / 2) cheap = ids_[i];
  }
  r = Http(port_, "POST", "/collections/items/get",
           json{{"ids", {cheap}}, {"snapshot", held}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(json::parse(r.body)["rows"][0]["found"].get<bool>()) << r.body;
  r = Http(port_, "POST", "/collections/items/get", json{{"ids", {cheap}}}.dump());
  EXPECT_FALSE(json::parse(r.body)["rows"][0]["found"].get<bool>()) << r.body;
  // A query through the token: its nearest neighbour of a stored vector is that row itself.
  const size_t row = static_cast<size_t>(std::find(ids_.begin(), ids_.end(), cheap) - ids_.begin());
  r = Http(port_, "POST", "/collections/items/query",
           "{\"k\": 1, \"snapshot\": \"" + held + "\", \"vectors\": " +
               VectorsJson(&vectors_[row * kDim], 1, kDim) + "}");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find(std::to_string(cheap)), std::string::npos) << r.body;
  r = Http(port_, "POST", "/collections/items/scroll",
           json{{"snapshot", held}, {"limit", 100000}, {"include", json::array()}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["rows"].size(), static_cast<size_t>(before));
  r = Http(port_, "DELETE", "/snapshots/" + held, "");
  ASSERT_EQ(r.status, 200) << r.body;
  r = Http(port_, "DELETE", "/snapshots/" + held, "");
  EXPECT_EQ(r.status, 404) << r.body;
  r = Http(port_, "POST", "/collections/items/count", json{{"snapshot", held}}.dump());
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_NE(r.body.find("not open"), std::string::npos) << r.body;
  r = Http(port_, "POST", "/collections/items/count", json{{"snapshot", 7}}.dump());
  EXPECT_EQ(r.status, 400) << r.body;
  r = Http(port_, "GET", "/snapshots", "");
  EXPECT_EQ(r.status, 405) << r.body;
}

// A token no read uses for the idle timeout is released.
TEST_F(ServerTest, IdleSnapshotTokensExpire) {
  server::ServerOptions o;
  o.snapshot_idle_ms = 1;
  StartServer(o);
  CreateAndIngest();
  HttpReply r = Http(port_, "POST", "/snapshots", "");
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string token = json::parse(r.body)["snapshot"].get<std::string>();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  r = Http(port_, "POST", "/collections/items/count", json{{"snapshot", token}}.dump());
  EXPECT_EQ(r.status, 404) << r.body;
}

}  // namespace
}  // namespace sieve
