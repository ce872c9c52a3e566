// Copyright 2026 The Sieve Authors.
//
// Router: the server's HTTP API, independent of the transport. It turns one parsed request
// into one response (JSON unless stated), calling the DB directly for writes and reads and the
// Batcher for queries. The routes are routes.h's table (docs/http-api.md#routes; the OpenAPI
// document openapi.json, served at GET /openapi.json, describes each):
//
//   GET  /health   GET /metrics   GET /openapi.json   GET /collections   POST /collections
//   GET  /collections/NAME        DELETE /collections/NAME (drop)
//   POST /collections/NAME/rows   (ingest; "upsert": true replaces live rows)
//   POST /collections/NAME/query  POST /collections/NAME/delete
//   POST /collections/NAME/get    POST /collections/NAME/scroll   POST /collections/NAME/count
//   POST /collections/NAME/update POST /collections/NAME/compact
//   POST /collections/NAME/alter  POST /collections/NAME/rename
//   GET  /aliases   PUT /aliases/NAME   DELETE /aliases/NAME
//   POST /snapshots               DELETE /snapshots/TOKEN     POST /backup
//   (query, get, count and scroll read a snapshot named by "snapshot": TOKEN)
//
// Errors answer 4xx with {"error": "..."} naming what was wrong; 5xx only for internal
// failures. A write is answered only after the DB call returned, i.e. once it is durable.
// Every answer a route builds, and the JSON document a body parses into, is bounded by the
// memory budget (413 beyond it).
//
// Thread-safety: Handle and Admit may be called from many threads at once. `db`, `batcher` and
// `metrics` must outlive the Router.

#ifndef SIEVE_TOOLS_SERVER_ROUTER_H_
#define SIEVE_TOOLS_SERVER_ROUTER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "sieve/db.h"
#include "tools/server/batcher.h"
#include "tools/server/metrics.h"
#include "tools/server/routes.h"
#include "tools/server/snapshots.h"

namespace sieve::server {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query, e.g. "/collections/items/query"
  std::string content_type;
  std::string authorization;  // the Authorization header, "" when absent
  std::string body;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::string allow;  // the Allow header of a 405
};

class Router {
 public:
  struct Options {
    // When non-empty every request needs "Authorization: Bearer <token>". Default: none.
    std::string token;
    // Query vectors per request at most (a larger request is 413). Default: 65536.
    size_t max_request_queries = 65536;
    // The host memory a query's answer may take: a response body that would be larger is
    // 413 before it is built. It is also the DB's Options::memory_budget_bytes, whose refusals
    // (the search alone needs more) are 413 too, while memory that runs out is 503.
    // 0: DefaultMemoryBudget(). Default: 0.
    uint64_t memory_budget_bytes = 0;
    // A snapshot token no read has used for this long is released (Snapshots). Default: 5 min.
    int64_t snapshot_idle_ms = 300000;
    // When non-empty, POST /backup writes only under this directory: its "dest" is then a
    // relative path of plain names inside it. Empty: "dest" is any path. Default: empty.
    std::string backup_dir;
  };

  Router(DB* db, Batcher* batcher, Metrics* metrics, const Options& options);

  // The checks a request's head alone decides (its method, target and Authorization header;
  // `head.body` is not read): false, with the refusal in *refusal (401 for a missing or wrong
  // token, 404 for no route, 405 for a method the route does not take, 400 for a malformed
  // path) counted in the metrics, when the request is refused. The transport calls it before
  // it reads a body, so that a request without the token costs no body's memory.
  bool Admit(const HttpRequest& head, HttpResponse* refusal);

  // Calls `reply` exactly once, on this thread or (for queries) on a batcher thread. Runs
  // Admit's checks first.
  void Handle(const HttpRequest& request, std::function<void(HttpResponse)> reply);

 private:
  HttpResponse Collections(const HttpRequest& req);
  HttpResponse CreateCollection(const HttpRequest& req);
  HttpResponse Stats(const std::string& name);
  HttpResponse Ingest(const std::string& name, const HttpRequest& req);
  HttpResponse Delete(const std::string& name, const HttpRequest& req);
  HttpResponse Get(const std::string& name, const HttpRequest& req);
  HttpResponse Scroll(const std::string& name, const HttpRequest& req);
  HttpResponse Count(const std::string& name, const HttpRequest& req);
  HttpResponse Update(const std::string& name, const HttpRequest& req);
  HttpResponse Drop(const std::string& name);
  HttpResponse Compact(const std::string& name, const HttpRequest& req);
  HttpResponse OpenSnapshot();
  HttpResponse ReleaseSnapshot(const std::string& token);
  // The snapshot a read's body names ("snapshot": a token), leased into *lease (null when it
  // names none); false with *err set for a bad or unknown token.
  bool ReadSnapshot(const nlohmann::ordered_json& body, std::shared_ptr<Snapshots::Lease>* lease,
                    HttpResponse* err);
  HttpResponse Alter(const std::string& name, const HttpRequest& req);
  HttpResponse Rename(const std::string& name, const HttpRequest& req);
  HttpResponse Aliases();
  HttpResponse PutAlias(const std::string& alias, const HttpRequest& req);
  HttpResponse DropAlias(const std::string& alias);
  HttpResponse Backup(const HttpRequest& req);
  // Replies itself: at once for a bad request, else later from a batcher thread.
  void Query(const std::string& name, const HttpRequest& req,
             const std::function<void(HttpResponse)>& reply);
  // Whether `authorization` carries the token ("Bearer TOKEN", the scheme in any letter case);
  // true when the server has none.
  bool Authorized(const std::string& authorization) const;
  // Admit's checks, without counting: the route matched (null when none) and its {name} or
  // {token} segment, percent-decoded.
  bool Check(const HttpRequest& req, const Route** route, std::string* param,
             HttpResponse* refusal) const;

  DB* const db_;
  Batcher* const batcher_;
  Metrics* const metrics_;
  const Options options_;
  const uint64_t memory_budget_bytes_;  // options_.memory_budget_bytes, or the default
  Snapshots snapshots_;
};

}  // namespace sieve::server

#endif  // SIEVE_TOOLS_SERVER_ROUTER_H_
