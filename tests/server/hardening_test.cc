// Copyright 2026 The Sieve Authors.
//
// What a red-team pass on the server found, each held: POST .../get within the memory budget
// and a cap on its ids; a request without the token refused before its body is read; a route
// that takes no body refusing one it cannot read; the bearer scheme in any letter case; short
// tokens refused; JSON bodies parsed only within the budget; backups confined to
// --backup-dir; every route labelled in /metrics; integer fields as JSON Schema's integers.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "sieve/db.h"
#include "tests/server/http_client.h"
#include "tests/testutil.h"
#include "tools/server/metrics.h"
#include "tools/server/routes.h"
#include "tools/server/server.h"

namespace sieve {
namespace {

using json = nlohmann::json;
using test::Http;
using test::HttpConnection;
using test::HttpReply;

constexpr char kToken[] = "0123456789abcdef-hardening";
const std::vector<std::pair<std::string, std::string>> kAuth = {
    {"Authorization", std::string("Bearer ") + kToken}};

class HardeningTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(DB::Open(Options(), dir_.Join("db"), &db_).ok()); }

  void Start(server::ServerOptions o) {
    o.port = 0;
    ASSERT_TRUE(server::Server::Start(db_.get(), o, &server_).ok());
    port_ = server_->port();
  }

  // "items": dim 16, attributes cat (int) and note (string), rows 0..n-1.
  void CreateItems(size_t n, const std::vector<std::pair<std::string, std::string>>& h = {}) {
    HttpReply r = Http(port_, "POST", "/collections",
                       R"({"name": "items", "dim": 16,
                           "attributes": {"cat": "int", "note": "string"}})",
                       h);
    ASSERT_EQ(r.status, 201) << r.body;
    json body = {{"ids", json::array()}, {"vectors", json::array()}, {"attributes", json::array()}};
    const std::vector<float> v = test::RandomVectors(n, 16, 7);
    for (size_t i = 0; i < n; ++i) {
      body["ids"].push_back(i);
      body["vectors"].push_back(std::vector<float>(&v[i * 16], &v[(i + 1) * 16]));
      body["attributes"].push_back({{"cat", i % 3}, {"note", "row " + std::to_string(i)}});
    }
    r = Http(port_, "POST", "/collections/items/rows", body.dump(), h);
    ASSERT_EQ(r.status, 200) << r.body;
  }

  int64_t Counter(const std::string& series) {
    HttpReply r = Http(port_, "GET", "/metrics", "", auth_);
    std::istringstream in(r.body);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind(series + " ", 0) == 0) return std::stoll(line.substr(series.size() + 1));
    }
    return 0;
  }

  test::ScratchDir dir_;
  std::unique_ptr<DB> db_;
  std::unique_ptr<server::Server> server_;
  uint16_t port_ = 0;
  std::vector<std::pair<std::string, std::string>> auth_;
};

TEST_F(HardeningTest, GetStaysWithinTheMemoryBudgetAndCapsItsIds) {
  server::ServerOptions o;
  o.memory_budget_bytes = 4 << 20;
  Start(o);
  CreateItems(100);
  // 30,000 repeats of one id with every attribute and the vector: tens of megabytes of rows
  // and text from a 60 KB body, over a 4 MiB budget, refused before a row is read.
  json ids = json::array();
  for (int i = 0; i < 30000; ++i) ids.push_back(1);
  HttpReply r = Http(port_, "POST", "/collections/items/get",
                     json{{"ids", ids}, {"include", {"*", "vector"}}}.dump());
  EXPECT_EQ(r.status, 413) << r.body.substr(0, 200);
  EXPECT_NE(r.body.find("memory budget"), std::string::npos) << r.body;
  // A get within the budget answers every id, repeats included.
  r = Http(port_, "POST", "/collections/items/get",
           R"({"ids": [1, 1, 99, 1000], "include": ["cat", "vector"]})");
  ASSERT_EQ(r.status, 200) << r.body;
  const json rows = json::parse(r.body)["rows"];
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[1]["attributes"]["cat"], 1);
  EXPECT_EQ(rows[1]["vector"].size(), 16u);
  EXPECT_EQ(rows[2]["id"], 99);
  EXPECT_FALSE(rows[3]["found"].get<bool>());
}

TEST_F(HardeningTest, GetTakesAtMostAScrollPageOfIds) {
  Start(server::ServerOptions());
  CreateItems(10);
  std::string ids = "[0";
  for (int i = 1; i <= 100000; ++i) ids += ",0";
  HttpReply r = Http(port_, "POST", "/collections/items/get",
                     "{\"ids\": " + ids + "], \"include\": \"cat\"}");
  EXPECT_EQ(r.status, 413) << r.body.substr(0, 200);
  EXPECT_NE(r.body.find("100001 ids"), std::string::npos) << r.body;
}

TEST_F(HardeningTest, ARequestWithoutTheTokenIsRefusedBeforeItsBodyIsRead) {
  server::ServerOptions o;
  o.token = kToken;
  o.read_timeout_ms = 120000;  // a server that waited for the body would answer nothing soon
  Start(o);
  auth_ = kAuth;
  // Announces a 200 MiB body and sends none of it: the answer comes from the head alone.
  HttpConnection c(port_, /*timeout_ms=*/30000);
  ASSERT_TRUE(
      c.SendAll("POST /collections/items/rows HTTP/1.1\r\nHost: x\r\n"
                "Content-Type: application/json\r\nContent-Length: 209715200\r\n\r\n"));
  HttpReply r = c.ReadReply();
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.headers["www-authenticate"], "Bearer");
  EXPECT_EQ(r.headers["connection"], "close");
  // curl's "Expect: 100-continue": the 401 comes instead of the 100, before any body.
  HttpConnection c2(port_, 30000);
  ASSERT_TRUE(
      c2.SendAll("POST /collections HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer no\r\n"
                 "Expect: 100-continue\r\nContent-Length: 1000000\r\n\r\n"));
  EXPECT_EQ(c2.ReadReply().status, 401);
  // No route and a wrong method are refused from the head too.
  HttpConnection c3(port_, 30000);
  ASSERT_TRUE(c3.SendAll("POST /nowhere HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                         std::string(kToken) + "\r\nContent-Length: 1000000\r\n\r\n"));
  EXPECT_EQ(c3.ReadReply().status, 404);
  EXPECT_EQ(Counter("sieve_http_requests_total{method=\"POST\",route=\"/collections/{name}/rows\","
                    "status=\"401\"}"),
            1);
}

TEST_F(HardeningTest, TheBearerSchemeIsCaseInsensitive) {
  server::ServerOptions o;
  o.token = kToken;
  Start(o);
  const std::string t = kToken;
  for (const std::string& h : {"Bearer " + t, "bearer " + t, "BEARER " + t, "Bearer   " + t}) {
    EXPECT_EQ(Http(port_, "GET", "/health", "", {{"Authorization", h}}).status, 200) << h;
  }
  for (const std::string& h :
       {"Basic " + t, "Bearer" + t, t, std::string("Bearer"), "Bearer " + t + "x",
        "Bearer " + t.substr(1), std::string("Bearer  ")}) {
    EXPECT_EQ(Http(port_, "GET", "/health", "", {{"Authorization", h}}).status, 401) << h;
  }
}

TEST_F(HardeningTest, ShortOrUnprintableTokensAreRefused) {
  server::ServerOptions o;
  o.port = 0;
  std::unique_ptr<server::Server> s;
  o.token = "x";
  Status st = server::Server::Start(db_.get(), o, &s);
  EXPECT_TRUE(st.IsInvalidArgument());
  EXPECT_NE(st.message().find("fewer than 16"), std::string::npos) << st.message();
  o.token = "0123456789abcde";  // 15
  EXPECT_TRUE(server::Server::Validate(o).IsInvalidArgument());
  o.token = "0123456789 abcdef";
  EXPECT_TRUE(server::Server::Validate(o).IsInvalidArgument());
  o.token = "0123456789abcdef";  // 16
  EXPECT_TRUE(server::Server::Validate(o).ok());
}

TEST_F(HardeningTest, RoutesWithoutABodyRefuseOneTheyCannotRead) {
  Start(server::ServerOptions());
  CreateItems(4);
  EXPECT_EQ(Http(port_, "POST", "/collections/items/compact", "garbage").status, 400);
  EXPECT_EQ(Http(port_, "POST", "/snapshots", "garbage").status, 400);
  EXPECT_EQ(Http(port_, "POST", "/snapshots", R"({"x": 1})").status, 400);
  EXPECT_EQ(Http(port_, "DELETE", "/aliases/a", "garbage").status, 400);
  HttpReply r = Http(port_, "DELETE", "/collections/items", "[1]");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("takes no body"), std::string::npos) << r.body;
  // None, blanks or {} are no body.
  EXPECT_EQ(Http(port_, "POST", "/snapshots", "{}").status, 200);
  EXPECT_EQ(Http(port_, "POST", "/snapshots", " \r\n").status, 200);
  EXPECT_EQ(Http(port_, "GET", "/collections/items").status, 200);
  EXPECT_EQ(Http(port_, "POST", "/collections/items/compact", "{}").status, 200);
}

TEST_F(HardeningTest, AJsonBodyIsParsedOnlyWithinTheBudget) {
  server::ServerOptions o;
  o.memory_budget_bytes = 4 << 20;
  Start(o);
  CreateItems(4);
  // 1 MiB of "0," is half a million values: a document of tens of megabytes.
  std::string body = "{\"vectors\": [[0";
  while (body.size() < (1 << 20)) body += ",0";
  body += "]], \"k\": 1}";
  HttpReply r = Http(port_, "POST", "/collections/items/query", body);
  EXPECT_EQ(r.status, 413) << r.body.substr(0, 200);
  EXPECT_NE(r.body.find("parsing"), std::string::npos) << r.body;
  // An ordinary query still parses.
  r = Http(port_, "POST", "/collections/items/query",
           R"({"vectors": [[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1]], "k": 2})");
  EXPECT_EQ(r.status, 200) << r.body;
}

TEST_F(HardeningTest, BackupsStayInsideTheBackupDirectory) {
  server::ServerOptions o;
  o.backup_dir = dir_.Join("backups");
  ASSERT_EQ(::mkdir(o.backup_dir.c_str(), 0755), 0);
  std::ofstream(o.backup_dir + "/file") << "x";
  Start(o);
  CreateItems(4);
  for (const char* dest :
       {"/tmp/elsewhere", "../escape", "a/../../b", "./x", "a//b", "a/", "sp ace", "", "file",
        "file/x", "n/private", "shared/x"}) {
    HttpReply r = Http(port_, "POST", "/backup", json{{"dest", dest}}.dump());
    EXPECT_EQ(r.status, 400) << dest << ": " << r.body;
  }
  HttpReply r = Http(port_, "POST", "/backup", R"({"dest": "nightly/one", "keep": 1.0})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["backup_id"], 1);
  EXPECT_FALSE(test::ReadFile(dir_.Join("backups/nightly/one/meta/1")).empty());
}

TEST_F(HardeningTest, EveryRouteHasItsOwnMetricsLabel) {
  Start(server::ServerOptions());
  CreateItems(4);
  Http(port_, "POST", "/collections/items/get", R"({"ids": [1]})");
  Http(port_, "POST", "/collections/items/scroll", "{}");
  Http(port_, "POST", "/collections/items/count", "{}");
  Http(port_, "POST", "/collections/items/update", R"({"ids": [1], "set": {"cat": 5}})");
  Http(port_, "GET", "/openapi.json");
  for (const char* route : {"get", "scroll", "count", "update"}) {
    EXPECT_EQ(Counter(std::string("sieve_http_requests_total{method=\"POST\",route=\"/collections/"
                                  "{name}/") +
                      route + "\",status=\"200\"}"),
              1)
        << route;
  }
  EXPECT_EQ(Counter("sieve_http_requests_total{method=\"GET\",route=\"/openapi.json\","
                    "status=\"200\"}"),
            1);
  for (const server::Route& r : server::Routes()) {
    EXPECT_EQ(server::Metrics::RouteLabel(r.pattern), r.pattern);
  }
  EXPECT_EQ(server::Metrics::RouteLabel("/collections/items"), "other");
}

TEST_F(HardeningTest, IntegerFieldsTakeWholeNumbersAndPathsArePercentDecoded) {
  Start(server::ServerOptions());
  CreateItems(10);
  HttpReply r = Http(port_, "POST", "/collections/it%65ms/query",
                     R"({"vectors": [[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1]], "k": 3.0})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["results"][0]["ids"].size(), 3u);
  EXPECT_EQ(Http(port_, "POST", "/collections/items/query",
                 R"({"vectors": [[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1]], "k": 2.5})")
                .status,
            400);
  r = Http(port_, "POST", "/collections/items/scroll", R"({"limit": 2.0, "after": 3.0})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["rows"][0]["id"], 4);
  EXPECT_EQ(Http(port_, "POST", "/collections/items%zz/count", "{}").status, 400);
  EXPECT_EQ(Http(port_, "POST", "/collections//count", "{}").status, 404);
}

}  // namespace
}  // namespace sieve
