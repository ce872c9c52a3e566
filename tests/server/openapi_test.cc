// Copyright 2026 The Sieve Authors.
//
// The OpenAPI document (tools/server/openapi.json, compiled in): it lists exactly the routes
// and methods the router serves, each operation with its success and error answers, every
// reference resolves, the binary holds the repository's document, and a live server answers it
// at GET /openapi.json (behind the token like every route). tools/run-schemathesis.sh checks
// the live answers against it.

#include "tools/server/openapi.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

#include "sieve/db.h"
#include "tests/server/http_client.h"
#include "tests/testutil.h"
#include "tools/server/routes.h"
#include "tools/server/server.h"

namespace sieve {
namespace {

using json = nlohmann::json;

json Document() {
  json doc = json::parse(server::OpenApiDocument(), nullptr, /*allow_exceptions=*/false);
  EXPECT_TRUE(doc.is_object()) << "the embedded document is not JSON";
  return doc;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

TEST(OpenApiTest, ListsExactlyTheRoutesAndMethodsTheRouterServes) {
  const json doc = Document();
  ASSERT_EQ(doc.value("openapi", ""), "3.1.0");
  std::set<std::pair<std::string, std::string>> served, documented;
  for (const server::Route& r : server::Routes()) {
    for (std::string_view m : r.methods) served.emplace(r.pattern, Lower(m));
  }
  static const std::set<std::string> kMethods = {"get",     "put",  "post",  "delete",
                                                 "options", "head", "patch", "trace"};
  for (const auto& [path, item] : doc["paths"].items()) {
    for (const auto& [key, _] : item.items()) {
      if (kMethods.count(key)) documented.emplace(path, key);
    }
  }
  for (const auto& route : served) {
    EXPECT_TRUE(documented.count(route))
        << route.second << " " << route.first << " is served but not in openapi.json";
  }
  for (const auto& op : documented) {
    EXPECT_TRUE(served.count(op)) << op.second << " " << op.first
                                  << " is in openapi.json but not served";
  }
  EXPECT_EQ(served.size(), 23u);  // a new route: add it to openapi.json and docs/http-api.md
}

TEST(OpenApiTest, EveryOperationHasItsAnswersAndEveryReferenceResolves) {
  const json doc = Document();
  std::set<std::string> operation_ids;
  for (const auto& [path, item] : doc["paths"].items()) {
    for (const auto& [method, op] : item.items()) {
      if (method == "parameters") continue;
      const std::string where = method + " " + path;
      ASSERT_TRUE(op.contains("operationId")) << where;
      EXPECT_TRUE(operation_ids.insert(op["operationId"].get<std::string>()).second) << where;
      const json& responses = op["responses"];
      bool success = false;
      for (const auto& [status, _] : responses.items()) success |= status[0] == '2';
      EXPECT_TRUE(success) << where << " has no 2xx answer";
      // Every route needs the token when the server has one, and a body that is too large or
      // malformed is refused on every route.
      for (const char* status : {"400", "401", "413"}) {
        EXPECT_TRUE(responses.contains(status)) << where << " lacks " << status;
      }
      if (path.find('{') != std::string::npos) {
        EXPECT_TRUE(responses.contains("404")) << where << " names something and lacks 404";
      }
    }
  }
  // Every "$ref" names something the document holds.
  std::function<void(const json&)> walk = [&](const json& j) {
    if (j.is_object()) {
      for (const auto& [key, value] : j.items()) {
        if (key == "$ref") {
          const std::string ref = value.get<std::string>();
          ASSERT_TRUE(ref.starts_with("#/")) << ref;
          EXPECT_TRUE(doc.contains(json::json_pointer(ref.substr(1)))) << ref << " dangles";
        } else {
          walk(value);
        }
      }
    } else if (j.is_array()) {
      for (const json& v : j) walk(v);
    }
  };
  walk(doc);
  // Links name operations that exist.
  for (const auto& [path, item] : doc["paths"].items()) {
    for (const auto& [method, op] : item.items()) {
      if (method == "parameters") continue;
      for (const auto& [status, response] : op["responses"].items()) {
        if (!response.contains("links")) continue;
        for (const auto& [name, link] : response["links"].items()) {
          EXPECT_TRUE(operation_ids.count(link["operationId"].get<std::string>()))
              << method << " " << path << " link " << name;
        }
      }
    }
  }
}

TEST(OpenApiTest, TheBinaryHoldsTheRepositorysDocument) {
  const std::string source = test::ReadFile(test::SourceDir() + "/tools/server/openapi.json");
  ASSERT_FALSE(source.empty());
  EXPECT_EQ(json::parse(source), Document());
}

TEST(OpenApiTest, ALiveServerAnswersItBehindTheToken) {
  test::ScratchDir dir;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(Options(), dir.Join("db"), &db).ok());
  server::ServerOptions o;
  o.port = 0;
  o.token = "0123456789abcdef-openapi";
  std::unique_ptr<server::Server> srv;
  ASSERT_TRUE(server::Server::Start(db.get(), o, &srv).ok());
  EXPECT_EQ(test::Http(srv->port(), "GET", "/openapi.json").status, 401);
  test::HttpReply r = test::Http(srv->port(), "GET", "/openapi.json", "",
                                 {{"Authorization", "Bearer 0123456789abcdef-openapi"}});
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.headers["content-type"], "application/json");
  EXPECT_EQ(json::parse(r.body), Document());
  srv->Shutdown();
}

}  // namespace
}  // namespace sieve
