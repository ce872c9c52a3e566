// Copyright 2026 The Sieve Authors.

#include "tools/server/router.h"

#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>
#include <vector>

#include "tools/io/json_value.h"
#include "tools/io/neighbors_json.h"
#include "tools/io/rows_json.h"
#include "tools/server/npy_body.h"
#include "tools/server/openapi.h"
#include "tools/server/routes.h"

namespace sieve::server {

namespace {

using json = nlohmann::ordered_json;


// A body's JSON text. Messages quote what the client sent (a method, a target), which need not
// be UTF-8: invalid bytes become U+FFFD instead of throwing.
std::string Dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

HttpResponse Error(int status, const std::string& message) {
  HttpResponse r;
  r.status = status;
  r.body = Dump(json{{"error", message}}) + "\n";
  return r;
}

int HttpStatusOf(const Status& s) {
  switch (s.code()) {
    case Status::Code::kOk:
      return 200;
    case Status::Code::kInvalidArgument:
      return 400;
    case Status::Code::kNotSupported:
      return 400;
    case Status::Code::kNotFound:
      return 404;
    case Status::Code::kAlreadyExists:
      return 409;
    case Status::Code::kUnavailable:
      return 503;
    case Status::Code::kResourceExhausted:
      return 503;
    default:
      return 500;
  }
}

HttpResponse Error(const Status& s) {
  return Error(HttpStatusOf(s), s.message().empty() ? s.ToString() : s.message());
}

HttpResponse Json(int status, const json& j) {
  HttpResponse r;
  r.status = status;
  r.body = Dump(j) + "\n";
  return r;
}

// Our bodies nest at most 3 levels; a deeper body is refused before parsing, because building
// (and destroying) a deeply nested document recurses and could overflow the stack.
constexpr int kMaxJsonDepth = 32;

// The first byte offset at which `body` nests deeper than kMaxJsonDepth, or npos.
size_t TooDeepAt(const std::string& body) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::string::npos;
}

// nlohmann's message without its "[json.exception.parse_error.101] " id, which means nothing
// to a client.
std::string JsonErrorText(const std::exception& e) {
  std::string_view s = e.what();
  if (s.starts_with("[json.exception.")) {
    size_t close = s.find("] ");
    if (close != std::string_view::npos) s.remove_prefix(close + 2);
  }
  return std::string(s);
}

// Parses an object body; on failure stores the 400 in *err.
bool ParseObject(const std::string& body, json* out, HttpResponse* err) {
  if (body.starts_with("\x93NUMPY")) {
    *err = Error(400,
                 "the body is a .npy array, not JSON: this route takes a JSON object (only POST "
                 "/collections/{name}/rows takes .npy vectors, with Content-Type "
                 "application/x-npy)");
    return false;
  }
  if (size_t at = TooDeepAt(body); at != std::string::npos) {
    *err = Error(400, "malformed JSON body: nested deeper than " + std::to_string(kMaxJsonDepth) +
                          " levels at byte " + std::to_string(at));
    return false;
  }
  // The JSON parser ends its input at a NUL byte; JSON text holds none, so what follows one
  // would be dropped unread.
  if (size_t at = body.find('\0'); at != std::string::npos) {
    *err = Error(400, "malformed JSON body: a NUL byte at byte " + std::to_string(at) +
                          " (JSON text holds none)");
    return false;
  }
  try {
    *out = json::parse(body);
  } catch (const json::parse_error& e) {
    *err = Error(400, "malformed JSON body: " + JsonErrorText(e));
    return false;
  }
  if (!out->is_object()) {
    *err = Error(400, "the JSON body must be an object");
    return false;
  }
  return true;
}

// 400 naming the first key of `j` not in `allowed`.
bool OnlyKeys(const json& j, std::initializer_list<std::string_view> allowed, HttpResponse* err) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool ok = false;
    for (auto a : allowed) ok = ok || it.key() == a;
    if (!ok) {
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      *err = Error(400, "unknown field '" + it.key() + "' (expected: " + list + ")");
      return false;
    }
  }
  return true;
}

Status ParseVectors(const json& v, uint32_t dim, const std::string& collection,
                    std::vector<float>* out, size_t* n) {
  if (!v.is_array()) return Status::InvalidArgument("'vectors' must be an array of arrays");
  *n = v.size();
  out->clear();
  out->reserve(v.size() * dim);
  for (size_t i = 0; i < v.size(); ++i) {
    const json& row = v[i];
    const std::string where = "vectors[" + std::to_string(i) + "]";
    if (!row.is_array()) return Status::InvalidArgument(where + " is not an array of numbers");
    if (row.size() != dim) {
      return Status::InvalidArgument(where + " has " + std::to_string(row.size()) +
                                     " components, collection '" + collection + "' has dim " +
                                     std::to_string(dim));
    }
    for (size_t j = 0; j < row.size(); ++j) {
      if (!row[j].is_number()) {
        return Status::InvalidArgument(where + "[" + std::to_string(j) + "] is not a number");
      }
      out->push_back(static_cast<float>(row[j].get<double>()));
    }
  }
  return Status::OK();
}

// An integer field: a JSON integer within int64, or a number without a fractional part below
// 2^53 (JSON Schema's "integer", and the rule int attributes follow: 3.0 is 3).
bool GetInt64(const json& v, int64_t* out) {
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!(std::fabs(d) < 9007199254740992.0) || d != std::trunc(d)) return false;
    *out = static_cast<int64_t>(d);
    return true;
  }
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
    *out = static_cast<int64_t>(u);
    return true;
  }
  if (v.is_number_integer()) {
    *out = v.get<int64_t>();
    return true;
  }
  return false;
}

Status ParseIds(const json& v, const char* what, std::vector<int64_t>* ids) {
  if (!v.is_array()) return Status::InvalidArgument(std::string("'") + what + "' must be an array");
  ids->reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t id;
    if (!GetInt64(v[i], &id)) {
      return Status::InvalidArgument(std::string(what) + "[" + std::to_string(i) +
                                     "] is not a 64-bit signed integer");
    }
    ids->push_back(id);
  }
  return Status::OK();
}

Status ParseValue(const json& v, AttrType type, Value* out) {
  const std::string error = io::JsonToValue(v, type, out);
  return error.empty() ? Status::OK() : Status::InvalidArgument(error);
}

Status ParseAttributes(const json& v, const std::vector<AttributeSpec>& schema, size_t n,
                       std::vector<std::vector<Value>>* rows) {
  if (!v.is_array()) return Status::InvalidArgument("'attributes' must be an array of objects");
  if (v.size() != n) {
    return Status::InvalidArgument(std::to_string(v.size()) + " attribute rows for " +
                                   std::to_string(n) + " vectors");
  }
  rows->assign(n, std::vector<Value>(schema.size()));
  for (size_t i = 0; i < n; ++i) {
    const json& obj = v[i];
    const std::string where = "attributes[" + std::to_string(i) + "]";
    if (obj.is_null()) continue;
    if (!obj.is_object()) return Status::InvalidArgument(where + " is not an object");
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      size_t a = 0;
      while (a < schema.size() && schema[a].name != it.key()) ++a;
      if (a == schema.size()) {
        return Status::InvalidArgument(where + ": unknown attribute '" + it.key() + "'");
      }
      Status s = ParseValue(it.value(), schema[a].type, &(*rows)[i][a]);
      if (!s.ok()) return s.WithContext(where + "." + it.key());
    }
  }
  return Status::OK();
}

// Ids one get may ask for (more is 413): a scroll page's limit.
constexpr size_t kMaxGetIds = 100000;

// The most text one result takes: an int64 id (20 characters), a distance in its shortest
// form (a float: at most 15, "-1.2345678e-38"; a text or hybrid search's float64 score: at
// most 24), and their separators.
constexpr uint64_t kMaxResultTextBytes = 20 + 24 + 4;

// The text attribute values can take in a response, names included (an upper bound: every
// byte escaped as \uXXXX).
uint64_t ValuesTextBound(const std::vector<Value>& values) {
  uint64_t bytes = 2;
  for (const Value& v : values) {
    bytes += 2 * 64 + 8;  // the name (names are short identifiers) and punctuation
    if (const auto* s = std::get_if<std::string>(&v)) {
      bytes += 6 * s->size() + 2;
    } else if (const auto* t = std::get_if<std::vector<std::string>>(&v)) {
      for (const std::string& x : *t) bytes += 6 * x.size() + 4;
    } else {
      bytes += 32;
    }
  }
  return bytes;
}

// The size ResultsBody's text can reach for `results` (an upper bound).
uint64_t ResultsBodyBound(const std::vector<Neighbors>& results) {
  uint64_t bytes = 64;
  for (const Neighbors& nb : results) {
    bytes += 60 + 80 + nb.ids.size() * kMaxResultTextBytes;  // 80: limit_reached, next
    for (const auto& row : nb.attributes) bytes += ValuesTextBound(row);
    for (const auto& v : nb.vectors) bytes += 4 + v.size() * 17;
    for (const Group& g : nb.groups) {
      bytes += 80 + ValuesTextBound({g.value}) + g.ids.size() * kMaxResultTextBytes;
      for (const auto& row : g.attributes) bytes += ValuesTextBound(row);
      for (const auto& v : g.vectors) bytes += 4 + v.size() * 17;
    }
  }
  return bytes;
}

// The query response body, or the error why it cannot be given: a distance that is not
// finite (JSON has no infinity; DB::Search never returns one).
// `range`: each result says "limit_reached"; `pages`: each says "next" (null: no rows follow).
Status ResultsBody(const std::vector<Neighbors>& results, const Explain* explain,
                   const std::vector<std::string>& names, bool vectors, bool grouped,
                   bool range, bool pages,
                   std::string* body) {
  SIEVE_RETURN_IF_ERROR(io::CheckNeighbors(results));
  std::string& out = *body;
  out.reserve(ResultsBodyBound(results) + (explain != nullptr ? 4096 : 0));
  out = "{\"results\": [";
  for (size_t q = 0; q < results.size(); ++q) {
    const Neighbors& nb = results[q];
    out += q ? ", {" : "{";
    if (grouped) {
      Status s = io::AppendGroupsJson(nb, names, vectors, &out);
      if (!s.ok()) return s.WithContext("query " + std::to_string(q));
      out += "}";
      continue;
    }
    SIEVE_RETURN_IF_ERROR(io::AppendNeighborsJson(nb, &out));
    if (!names.empty()) {
      out += ", \"attributes\": [";
      for (size_t i = 0; i < nb.attributes.size(); ++i) {
        if (i) out += ", ";
        io::AppendAttributesJson(names, nb.attributes[i], &out);
      }
      out += "]";
    }
    if (vectors) {
      out += ", \"vectors\": [";
      for (size_t i = 0; i < nb.vectors.size(); ++i) {
        if (i) out += ", ";
        io::AppendVectorJson(nb.vectors[i], &out);
      }
      out += "]";
    }
    if (range) out += nb.limit_reached ? ", \"limit_reached\": true" : ", \"limit_reached\": false";
    if (pages) out += nb.next.empty() ? ", \"next\": null" : ", \"next\": \"" + nb.next + "\"";
    out += "}";
  }
  out += "]";
  if (explain != nullptr) out += ", \"plan\": " + explain->ToJson();
  out += "}\n";
  return Status::OK();
}

// "text_field", "text" and "fusion": {"method", "rrf_c", "vector_weight", "text_weight",
// "depth"} into the job; the error text, or "" (the engine checks the values' ranges).
std::string ParseTextQuery(const json& j, QueryJob* job) {
  for (const char* key : {"text_field", "text"}) {
    if (!j.contains(key) || j[key].is_null()) continue;
    if (!j[key].is_string()) return std::string("'") + key + "' must be a string";
    (key[4] == '_' ? job->text_field : job->text) = j[key].get<std::string>();
  }
  if (!j.contains("fusion") || j["fusion"].is_null()) return "";
  const json& f = j["fusion"];
  if (!f.is_object()) return "'fusion' must be an object";
  for (const auto& [key, value] : f.items()) {
    if (key == "method") {
      if (!value.is_string()) return "'fusion.method' must be \"rrf\" or \"weighted\"";
      Status s = ParseFusionMethod(value.get<std::string>(), &job->fusion.method);
      if (!s.ok()) return s.message();
    } else if (key == "rrf_c" || key == "vector_weight" || key == "text_weight") {
      if (!value.is_number()) return "'fusion." + key + "' must be a number";
      double* out = key == "rrf_c"           ? &job->fusion.rrf_c
                    : key == "vector_weight" ? &job->fusion.vector_weight
                                             : &job->fusion.text_weight;
      *out = value.get<double>();
    } else if (key == "depth") {
      int64_t depth = 0;
      if (!GetInt64(value, &depth) || depth < 0 || depth > kMaxSearchK) {
        return "'fusion.depth' must be an integer in [0, " + std::to_string(kMaxSearchK) +
               "], got " + value.dump();
      }
      job->fusion.depth = static_cast<int>(depth);
    } else {
      return "'fusion' has an unknown key '" + key +
             "' (keys: method, rrf_c, vector_weight, text_weight, depth)";
    }
  }
  return "";
}

// "include": "price,color" (Include::Parse's list) or ["price", "*", "vector"].
Status ParseInclude(const json& v, Include* out) {
  *out = Include();
  if (v.is_string()) return Include::Parse(v.get<std::string>(), out);
  if (!v.is_array()) {
    return Status::InvalidArgument("'include' must be a string or an array of strings");
  }
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) {
      return Status::InvalidArgument("include[" + std::to_string(i) + "] is not a string");
    }
    const std::string item = v[i].get<std::string>();
    if (item == "*") {
      out->all_attributes = true;
    } else if (item == "vector") {
      out->vector = true;
    } else {
      out->attributes.push_back(item);
    }
  }
  return Status::OK();
}

// The memory a JSON document parsed from `body` can take (an upper bound, from one scan of its
// structure): each value a json node (16 bytes) in an array grown by doubling, each object
// member a key string beside it, each string and container its own heap block, and every byte
// of the text at most once more in strings.
uint64_t JsonDomBytes(const std::string& body) {
  uint64_t values = 1, containers = 0, members = 0, strings = 0;
  bool in_string = false;
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        ++strings;
        break;
      case '[':
      case '{':
        ++containers;
        break;
      case ',':
        ++values;
        break;
      case ':':
        ++members;
        break;
      default:
        break;
    }
  }
  return 32 * (values + containers + members) + 64 * (containers + strings) + 64 * members +
         body.size();
}

// A route that takes no body takes an empty one, or an empty JSON object ("{}", which some
// clients send with every POST); anything else is refused as every other route refuses what it
// does not understand.
bool NoBody(const HttpRequest& req, std::string_view pattern, HttpResponse* err) {
  const size_t first = req.body.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return true;
  json j;
  if (ParseObject(req.body, &j, err) && j.empty()) return true;
  *err = Error(
      400, req.method + " " + std::string(pattern) + " takes no body (or an empty JSON object {})");
  return false;
}

bool IsNpy(const std::string& content_type) {
  const std::string_view ct(content_type);
  return ct.starts_with("application/octet-stream") || ct.starts_with("application/x-npy");
}

// Whether `s` equals `lower` (lower case) in any letter case.
bool EqualsLower(std::string_view s, std::string_view lower) {
  if (s.size() != lower.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return true;
}

}  // namespace

Router::Router(DB* db, Batcher* batcher, Metrics* metrics, const Options& options)
    : db_(db),
      batcher_(batcher),
      metrics_(metrics),
      options_(options),
      memory_budget_bytes_(options.memory_budget_bytes != 0 ? options.memory_budget_bytes
                                                            : DefaultMemoryBudget()),
      snapshots_(db, std::chrono::milliseconds(options.snapshot_idle_ms)) {}

bool Router::Authorized(const std::string& authorization) const {
  if (options_.token.empty()) return true;
  // "Bearer <token>": the scheme in any letter case (HTTP's auth schemes are case-insensitive),
  // then one or more spaces.
  std::string_view got = authorization;
  const size_t space = got.find(' ');
  bool scheme_ok = space != std::string_view::npos && EqualsLower(got.substr(0, space), "bearer");
  if (scheme_ok) {
    got.remove_prefix(space);
    got.remove_prefix(std::min(got.size(), got.find_first_not_of(' ')));
  }
  // Constant time in the token's content: every byte is compared whatever differs first.
  const std::string& expected = options_.token;
  unsigned char diff = scheme_ok && got.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); ++i) {
    const unsigned char g = i < got.size() ? static_cast<unsigned char>(got[i]) : 0;
    diff |= g ^ static_cast<unsigned char>(expected[i]);
  }
  return diff == 0;
}

bool Router::Check(const HttpRequest& req, const Route** route, std::string* param,
                   HttpResponse* refusal) const {
  bool param_ok = true;
  *route = MatchRoute(req.target, param, &param_ok);
  if (!Authorized(req.authorization)) {
    *refusal =
        Error(401, req.authorization.empty() ? "missing 'Authorization: Bearer <token>' header"
                                             : "wrong bearer token");
    return false;
  }
  if (*route == nullptr) {
    *refusal = Error(404, "no route for " + req.method + " " + req.target);
    return false;
  }
  bool allowed = false;
  for (std::string_view m : (*route)->methods) allowed = allowed || m == req.method;
  if (!allowed) {
    const std::string list = AllowHeader(**route);
    *refusal = Error(405, "method " + req.method + " is not allowed on " +
                              std::string((*route)->pattern) + " (use " + list + ")");
    refusal->allow = list;
    return false;
  }
  if (!param_ok) {
    *refusal = Error(400, "malformed percent-encoding in the path " + req.target);
    return false;
  }
  return true;
}

bool Router::Admit(const HttpRequest& head, HttpResponse* refusal) {
  const Route* route = nullptr;
  std::string param;
  if (Check(head, &route, &param, refusal)) return true;
  metrics_->RecordRequest(head.method, route != nullptr ? route->pattern : "other", refusal->status,
                          0);
  return false;
}

void Router::Handle(const HttpRequest& req, std::function<void(HttpResponse)> reply) {
  const auto t0 = std::chrono::steady_clock::now();
  const Route* route = nullptr;
  std::string name;  // the {name} or {token} segment
  HttpResponse refusal;
  const bool admitted = Check(req, &route, &name, &refusal);
  const std::string_view label = route != nullptr ? route->pattern : "other";
  auto done = [this, reply = std::move(reply), method = req.method, label, t0](HttpResponse r) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    metrics_->RecordRequest(method, label, r.status, s);
    reply(std::move(r));
  };
  if (!admitted) return done(std::move(refusal));
  // Parsing a JSON body builds a document several times its size: that memory is the budget's
  // too, and a body that would take more is refused before it is parsed.
  if (!req.body.empty() && !IsNpy(req.content_type)) {
    const uint64_t dom = JsonDomBytes(req.body);
    if (dom > memory_budget_bytes_) {
      return done(Error(413, "parsing this " + std::to_string(req.body.size()) +
                                 "-byte JSON body could take " + std::to_string(dom) +
                                 " bytes, over the server's memory budget of " +
                                 std::to_string(memory_budget_bytes_) +
                                 " bytes; send the rows in smaller requests"));
    }
  }
  const std::string_view route_pattern = route->pattern;
  const std::string& method = req.method;
  HttpResponse err;
  try {
    if (route_pattern == "/health") {
      if (NoBody(req, route_pattern, &err)) done(Json(200, json{{"status", "ok"}}));
    } else if (route_pattern == "/metrics") {
      if (!NoBody(req, route_pattern, &err)) return done(std::move(err));
      HttpResponse r;
      r.content_type = "text/plain; version=0.0.4; charset=utf-8";
      r.body = metrics_->Render();
      done(std::move(r));
    } else if (route_pattern == "/openapi.json") {
      if (!NoBody(req, route_pattern, &err)) return done(std::move(err));
      HttpResponse r;
      r.body = std::string(OpenApiDocument());
      done(std::move(r));
    } else if (route_pattern == "/collections") {
      if (method == "POST") {
        done(CreateCollection(req));
      } else if (NoBody(req, route_pattern, &err)) {
        done(Collections(req));
      }
    } else if (route_pattern == "/snapshots") {
      if (NoBody(req, route_pattern, &err)) done(OpenSnapshot());
    } else if (route_pattern == "/snapshots/{token}") {
      if (NoBody(req, route_pattern, &err)) done(ReleaseSnapshot(name));
    } else if (route_pattern == "/collections/{name}") {
      if (!NoBody(req, route_pattern, &err)) return done(std::move(err));
      done(method == "GET" ? Stats(name) : Drop(name));
    } else if (route_pattern == "/collections/{name}/rows") {
      done(Ingest(name, req));
    } else if (route_pattern == "/collections/{name}/delete") {
      done(Delete(name, req));
    } else if (route_pattern == "/collections/{name}/query") {
      Query(name, req, done);
    } else if (route_pattern == "/collections/{name}/get") {
      done(Get(name, req));
    } else if (route_pattern == "/collections/{name}/scroll") {
      done(Scroll(name, req));
    } else if (route_pattern == "/collections/{name}/count") {
      done(Count(name, req));
    } else if (route_pattern == "/collections/{name}/update") {
      done(Update(name, req));
    } else if (route_pattern == "/collections/{name}/compact") {
      done(Compact(name, req));
    } else if (route_pattern == "/collections/{name}/alter") {
      done(Alter(name, req));
    } else if (route_pattern == "/collections/{name}/rename") {
      done(Rename(name, req));
    } else if (route_pattern == "/aliases") {
      if (NoBody(req, route_pattern, &err)) done(Aliases());
    } else if (route_pattern == "/aliases/{name}") {
      if (method == "PUT") {
        done(PutAlias(name, req));
      } else if (NoBody(req, route_pattern, &err)) {
        done(DropAlias(name));
      }
    } else if (route_pattern == "/backup") {
      done(Backup(req));
    } else {
      done(Error(500, "internal error: route " + std::string(route_pattern) + " has no handler"));
    }
    if (err.status != 200) done(std::move(err));
  } catch (const json::exception& e) {
    done(Error(400, "bad request body: " + JsonErrorText(e)));
  } catch (const std::bad_alloc&) {
    done(Error(503, "out of memory"));
  } catch (const std::exception& e) {
    done(Error(500, std::string("internal error: ") + e.what()));
  }
}

bool Router::ReadSnapshot(const json& j, std::shared_ptr<Snapshots::Lease>* lease,
                          HttpResponse* err) {
  if (!j.contains("snapshot") || j["snapshot"].is_null()) return true;
  if (!j["snapshot"].is_string()) {
    *err = Error(400, "'snapshot' must be a token (a string from POST /snapshots)");
    return false;
  }
  Status s = snapshots_.Acquire(j["snapshot"].get<std::string>(), lease);
  if (!s.ok()) {
    *err = Error(s);
    return false;
  }
  return true;
}

HttpResponse Router::OpenSnapshot() {
  std::string token;
  Status s = snapshots_.Open(/*scroll=*/false, &token);
  if (!s.ok()) return Error(s);
  return Json(200, json{{"snapshot", token}, {"idle_timeout_s", snapshots_.idle_timeout_s()}});
}

HttpResponse Router::ReleaseSnapshot(const std::string& token) {
  Status s = snapshots_.Release(token);
  if (!s.ok()) return Error(s);
  return Json(200, json{{"released", token}});
}

HttpResponse Router::Collections(const HttpRequest& req) {
  std::vector<std::string> names;
  Status s = db_->ListCollections(&names);
  if (!s.ok()) return Error(s);
  return Json(200, json{{"collections", names}});
}

HttpResponse Router::CreateCollection(const HttpRequest& req) {
  json j;
  HttpResponse err;
  if (!ParseObject(req.body, &j, &err)) return err;
  if (!OnlyKeys(j, {"name", "dim", "metric", "dtype", "attributes", "shards", "bm25"}, &err)) {
    return err;
  }
  CollectionSpec spec;
  if (!j.contains("name") || !j["name"].is_string()) {
    return Error(400, "'name' (a string) is required");
  }
  spec.name = j["name"].get<std::string>();
  int64_t dim = 0;
  if (!j.contains("dim") || !GetInt64(j["dim"], &dim) || dim < 1 || dim > 65536) {
    return Error(400, "'dim' must be an integer in [1, 65536]");
  }
  spec.dim = static_cast<uint32_t>(dim);
  if (j.contains("shards")) {
    int64_t shards = 0;
    if (!GetInt64(j["shards"], &shards) || shards < 1 || shards > 1024) {
      return Error(400, "'shards' must be an integer in [1, 1024]");
    }
    spec.shards = static_cast<uint32_t>(shards);
  }
  if (j.contains("bm25")) {
    // {"k1": number, "b": number}, either may be absent (its default); ranges are the engine's.
    const json& bm25 = j["bm25"];
    if (!bm25.is_object()) return Error(400, "'bm25' must be an object {\"k1\": K1, \"b\": B}");
    for (const auto& [key, value] : bm25.items()) {
      if (key != "k1" && key != "b") {
        return Error(400, "'bm25' has an unknown key '" + key + "' (keys: k1, b)");
      }
      if (!value.is_number()) return Error(400, "'bm25." + key + "' must be a number");
      (key == "k1" ? spec.bm25_k1 : spec.bm25_b) = value.get<double>();
    }
  }
  Status s;
  if (j.contains("metric")) {
    if (!j["metric"].is_string()) return Error(400, "'metric' must be a string");
    s = ParseMetric(j["metric"].get<std::string>(), &spec.metric);
    if (!s.ok()) return Error(s);
  }
  if (j.contains("dtype")) {
    if (!j["dtype"].is_string()) return Error(400, "'dtype' must be a string");
    s = ParseDType(j["dtype"].get<std::string>(), &spec.dtype);
    if (!s.ok()) return Error(s);
  }
  if (j.contains("attributes")) {
    const json& attrs = j["attributes"];
    if (!attrs.is_object()) {
      return Error(400, "'attributes' must be an object {\"NAME\": \"TYPE\", ...}");
    }
    for (auto it = attrs.begin(); it != attrs.end(); ++it) {
      AttributeSpec a;
      a.name = it.key();
      if (!it.value().is_string()) {
        return Error(400, "attributes." + it.key() + ": the type must be a string");
      }
      s = ParseAttributeType(it.value().get<std::string>(), &a);
      if (!s.ok()) return Error(s.WithContext("attributes." + it.key()));
      spec.attributes.push_back(std::move(a));
    }
  }
  s = db_->CreateCollection(spec);
  if (!s.ok()) return Error(s);
  return Json(201, json{{"created", spec.name},
                        {"dim", spec.dim},
                        {"metric", MetricName(spec.metric)},
                        {"dtype", DTypeName(spec.dtype)}});
}

HttpResponse Router::Stats(const std::string& name) {
  CollectionStats stats;
  Status s = db_->GetStats(name, &stats);
  if (!s.ok()) return Error(s);
  HttpResponse r;
  r.body = stats.ToJson() + "\n";
  return r;
}

HttpResponse Router::Ingest(const std::string& name, const HttpRequest& req) {
  std::shared_ptr<Collection> collection;
  Status s = db_->GetCollection(name, &collection);
  CollectionStats stats;  // the live rows, for the ids rule below
  if (s.ok()) s = collection->GetStats(&stats);
  if (!s.ok()) return Error(s);
  const CollectionSpec& spec = collection->spec();
  std::vector<float> vectors;
  size_t n = 0;
  std::vector<int64_t> ids;
  std::vector<std::vector<Value>> attributes;
  bool have_ids = false, have_attributes = false, upsert = false, auto_ids = false;
  const std::string_view ct(req.content_type);
  if (ct.rfind("application/octet-stream", 0) == 0 || ct.rfind("application/x-npy", 0) == 0) {
    io::NpyMatrix m;
    s = ParseNpyMatrix(req.body, &m);
    if (!s.ok()) return Error(s);
    if (m.rows > 0 && m.cols != spec.dim) {
      return Error(400, "npy body: vectors have dim " + std::to_string(m.cols) + ", collection '" +
                            name + "' has dim " + std::to_string(spec.dim));
    }
    n = m.rows;
    vectors = std::move(m.data);
    auto_ids = true;  // a body of bare vectors has no ids: it always adds new rows
  } else {
    json j;
    HttpResponse err;
    if (!ParseObject(req.body, &j, &err)) return err;
    if (!OnlyKeys(j, {"ids", "vectors", "attributes", "upsert", "auto_ids"}, &err)) return err;
    for (const char* flag : {"upsert", "auto_ids"}) {
      if (j.contains(flag) && !j[flag].is_boolean()) {
        return Error(400, std::string("'") + flag + "' must be true or false");
      }
    }
    upsert = j.value("upsert", false);
    auto_ids = j.value("auto_ids", false);
    if (upsert && auto_ids) return Error(400, "give 'upsert' or 'auto_ids', not both");
    if (!j.contains("vectors")) return Error(400, "'vectors' is required");
    s = ParseVectors(j["vectors"], spec.dim, name, &vectors, &n);
    if (s.ok() && j.contains("ids") && !j["ids"].is_null()) {
      have_ids = true;
      s = ParseIds(j["ids"], "ids", &ids);
      if (s.ok() && ids.size() != n) {
        s = Status::InvalidArgument(std::to_string(ids.size()) + " ids for " + std::to_string(n) +
                                    " vectors");
      }
    }
    if (s.ok() && j.contains("attributes") && !j["attributes"].is_null()) {
      have_attributes = true;
      s = ParseAttributes(j["attributes"], spec.attributes, n, &attributes);
    }
    if (!s.ok()) return Error(s);
  }
  RowBatch batch;
  batch.num_rows = n;
  batch.dim = spec.dim;
  batch.vectors = vectors.data();
  batch.ids = have_ids ? ids.data() : nullptr;
  batch.attributes = have_attributes ? attributes.data() : nullptr;
  IngestOptions options;
  options.batch_rows = 0;  // one request, one atomic commit
  options.auto_ids = auto_ids;
  if (!have_ids && !upsert && !auto_ids && n > 0 && stats.rows > 0) {
    return Error(400, "collection '" + name + "' already has " + std::to_string(stats.rows) +
                          " live rows and these rows have no ids: they would all be added again "
                          "as new rows; send their \"ids\", or \"auto_ids\": true to add them "
                          "as new rows with new ids");
  }
  IngestResult result;
  s = upsert ? collection->Upsert(batch, options, &result)
             : collection->Ingest(batch, options, &result);
  if (!s.ok()) return Error(s);
  return Json(200, json{{"ingested", result.ingested},
                        {"replaced", result.replaced},
                        {"rows", result.live_rows}});
}

HttpResponse Router::Delete(const std::string& name, const HttpRequest& req) {
  json j;
  HttpResponse err;
  if (!ParseObject(req.body, &j, &err)) return err;
  if (!OnlyKeys(j, {"ids", "filter"}, &err)) return err;
  if (j.contains("ids") == j.contains("filter")) {
    return Error(400, "give exactly one of 'ids' or 'filter'");
  }
  uint64_t deleted = 0;
  Status s;
  if (j.contains("ids")) {
    std::vector<int64_t> ids;
    s = ParseIds(j["ids"], "ids", &ids);
    if (s.ok()) s = db_->DeleteByIds(name, ids.data(), ids.size(), &deleted);
  } else {
    if (!j["filter"].is_string()) return Error(400, "'filter' must be a string");
    s = db_->DeleteByFilter(name, j["filter"].get<std::string>(), &deleted);
  }
  if (!s.ok()) return Error(s);
  return Json(200, json{{"deleted", deleted}});
}

void Router::Query(const std::string& name, const HttpRequest& req,
                   const std::function<void(HttpResponse)>& reply) {
  json j;
  HttpResponse err;
  if (!ParseObject(req.body, &j, &err)) return reply(err);
  if (!OnlyKeys(j, {"vectors", "k", "filter", "filters", "device", "path", "explain", "include",
                    "snapshot", "group_by", "group_size", "group_strategy", "radius", "limit",
                    "offset", "after", "text_field", "text", "fusion"},
                &err)) {
    return reply(err);
  }
  std::shared_ptr<Snapshots::Lease> lease;
  if (!ReadSnapshot(j, &lease, &err)) return reply(err);
  // The handle, not the name, goes to the batcher: a request is answered by the collection it
  // was checked against (its dim), or NotFound when that one is dropped meanwhile.
  std::shared_ptr<Collection> collection;
  Status s = db_->GetCollection(name, &collection);
  if (!s.ok()) return reply(Error(s));
  const uint32_t dim = collection->spec().dim;
  QueryJob job;
  job.collection = collection;
  std::string text_err = ParseTextQuery(j, &job);
  if (!text_err.empty()) return reply(Error(400, text_err));
  const bool text = !job.text_field.empty() || !job.text.empty();
  if (!j.contains("vectors") && !text) {
    return reply(Error(400, "'vectors' is required (or a text query: 'text_field' and 'text')"));
  }
  if (j.contains("vectors")) {
    s = ParseVectors(j["vectors"], dim, name, &job.queries, &job.num_queries);
  }
  job.dim = dim;
  if (!s.ok()) return reply(Error(s));
  // A text-only search is one query (one result list).
  const size_t lists = job.num_queries == 0 && text ? 1 : job.num_queries;
  if (job.num_queries > options_.max_request_queries) {
    return reply(Error(413, std::to_string(job.num_queries) + " query vectors in one request, " +
                                "the limit is " + std::to_string(options_.max_request_queries)));
  }
  // Range search and pages run alone (the batcher never merges them): the engine's rules
  // (ValidateRangeAndPages) check the values, and their messages are its. A key given is used
  // (null is not a value of any of them), so that which ones go together is decided by the
  // keys alone, as the OpenAPI document says.
  const bool range = j.contains("radius");
  if (range) {
    if (!j["radius"].is_number()) return reply(Error(400, "'radius' must be a number"));
    job.radius = j["radius"].get<double>();
  }
  if ((range && (j.contains("offset") || j.contains("after"))) ||
      (j.contains("offset") && j.contains("after"))) {
    return reply(Error(400, "a search takes one of radius (a range search), offset or after "
                            "(pages), not two"));
  }
  if (j.contains("limit")) {
    int64_t limit = 0;
    if (!range) {
      return reply(Error(400, "'limit' is the most rows of a range search: it needs 'radius'"));
    }
    if (!GetInt64(j["limit"], &limit) || limit < 1 || limit > kMaxSearchK) {
      // The engine's words (ValidateRangeAndPages), for a number it cannot be handed.
      return reply(Error(400, "limit must be 1 to " + std::to_string(kMaxSearchK) + ", got " +
                                  j["limit"].dump()));
    }
    job.limit = static_cast<int>(limit);
  }
  if (j.contains("offset")) {
    int64_t offset = 0;
    if (!GetInt64(j["offset"], &offset)) {
      return reply(Error(400, "'offset' must be an integer, got " + j["offset"].dump()));
    }
    job.offset = offset;
  }
  if (j.contains("after")) {
    const json& a = j["after"];
    if (!a.is_array()) {
      return reply(Error(400, "'after' must be an array of cursors, one per query vector"));
    }
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].is_null()) {
        job.after.emplace_back();
      } else if (a[i].is_string()) {
        job.after.push_back(a[i].get<std::string>());
      } else {
        return reply(Error(400, "after[" + std::to_string(i) + "] is not a string"));
      }
    }
  }
  const bool pages = job.offset || !job.after.empty();
  int64_t k = 10;
  if (!j.contains("k") && !range) return reply(Error(400, "'k' is required"));
  // The batcher merges requests into one search, so a request is checked by the engine's own
  // rules (kMaxSearchK, filter or filters) before it joins one: its error stays its own.
  if (j.contains("k") && (!GetInt64(j["k"], &k) || k < 1 || k > kMaxSearchK)) {
    return reply(Error(400, "'k' must be an integer in [1, " + std::to_string(kMaxSearchK) +
                                "], got " + j["k"].dump()));
  }
  job.k = static_cast<int>(k);
  if (j.contains("filter") && j.contains("filters")) {
    return reply(Error(400, "a search takes one filter for every query (filter) or one per "
                            "query (filters), not both"));
  }
  if (j.contains("filter") && !j["filter"].is_null()) {
    if (!j["filter"].is_string()) return reply(Error(400, "'filter' must be a string"));
    job.filter = j["filter"].get<std::string>();
  }
  if (j.contains("filters") && !j["filters"].is_null()) {
    const json& f = j["filters"];
    if (!f.is_array()) return reply(Error(400, "'filters' must be an array of strings"));
    if (f.size() != lists) {
      return reply(Error(400, std::to_string(f.size()) + " filters for " +
                                  (job.num_queries == 0 && text
                                       ? std::string("a text query (give one)")
                                       : std::to_string(job.num_queries) + " query vectors")));
    }
    for (size_t i = 0; i < f.size(); ++i) {
      if (f[i].is_null()) {
        job.filters.emplace_back();
      } else if (f[i].is_string()) {
        job.filters.push_back(f[i].get<std::string>());
      } else {
        return reply(Error(400, "filters[" + std::to_string(i) + "] is not a string"));
      }
    }
  }
  if (j.contains("device")) {
    if (!j["device"].is_string()) return reply(Error(400, "'device' must be a string"));
    s = ParseDevice(j["device"].get<std::string>(), &job.options.device);
    if (!s.ok()) return reply(Error(s));
  }
  if (j.contains("path")) {
    if (!j["path"].is_string()) return reply(Error(400, "'path' must be a string"));
    s = ParseSearchPath(j["path"].get<std::string>(), &job.options.path);
    if (!s.ok()) return reply(Error(s));
  }
  // group_by's rules (the attribute, the size's bounds, k × size) are the engine's.
  if (j.contains("group_by") && !j["group_by"].is_null()) {
    if (!j["group_by"].is_string()) return reply(Error(400, "'group_by' must be a string"));
    job.group_by = j["group_by"].get<std::string>();
  }
  if (j.contains("group_size") && !j["group_size"].is_null()) {
    int64_t size = 0;
    if (!GetInt64(j["group_size"], &size) || size < 1 || size > kMaxGroupSize) {
      return reply(Error(400, "'group_size' must be an integer in [1, " +
                                  std::to_string(kMaxGroupSize) + "], got " +
                                  j["group_size"].dump()));
    }
    job.group_size = static_cast<int>(size);
  }
  if (j.contains("group_strategy") && !j["group_strategy"].is_null()) {
    if (!j["group_strategy"].is_string()) {
      return reply(Error(400, "'group_strategy' must be a string"));
    }
    s = ParseGroupStrategy(j["group_strategy"].get<std::string>(), &job.group_strategy);
    if (!s.ok()) return reply(Error(s));
  }
  bool want_explain = false;
  if (j.contains("explain")) {
    if (!j["explain"].is_boolean()) return reply(Error(400, "'explain' must be true or false"));
    want_explain = j["explain"].get<bool>();
    job.solo = want_explain;
  }
  if (lease != nullptr) {
    // Searched alone: a batch shares one version of the rows.
    job.options.snapshot = lease->snapshot();
    job.solo = true;
  }
  std::vector<std::string> names;
  if (j.contains("include") && !j["include"].is_null()) {
    s = ParseInclude(j["include"], &job.include);
    if (s.ok()) s = job.include.AttributeNames(collection->spec(), &names);
    if (!s.ok()) return reply(Error(s));
  }
  if (job.num_queries == 0 || text) {
    // Still validate the filter and k against the collection: run it (cheap, nothing to do).
    // A text query is never merged with other requests.
    job.solo = true;
  }
  const bool explain = want_explain && lists > 0;
  const uint64_t budget = memory_budget_bytes_;
  // The lease lives as long as the job: the snapshot stays open until the search has run.
  job.done = [reply, explain, budget, names, vectors = job.include.vector, lease,
              grouped = !job.group_by.empty(), range, pages](
                 const Status& st, std::vector<Neighbors> results, const Explain* ex) {
    if (!st.ok()) {
      // A search that alone needs more than the budget can never be served: 413. Memory that
      // ran out (other searches hold it, or the machine has less) may be there later: 503.
      if (st.IsResourceExhausted() && ex != nullptr &&
          ex->host_memory_bytes > ex->memory_budget_bytes) {
        return reply(Error(413, st.message()));
      }
      return reply(Error(st));
    }
    const uint64_t bound = ResultsBodyBound(results);
    if (bound > budget) {
      return reply(Error(413, "the response to " + std::to_string(results.size()) +
                                  " queries could take " + std::to_string(bound) +
                                  " bytes, over the server's memory budget of " +
                                  std::to_string(budget) +
                                  " bytes; ask for fewer queries or a smaller k"));
    }
    HttpResponse r;
    Status s =
        ResultsBody(results, explain ? ex : nullptr, names, vectors, grouped, range, pages,
                    &r.body);
    if (!s.ok()) return reply(Error(500, s.message()));
    reply(std::move(r));
  };
  batcher_->Submit(std::move(job));
}

HttpResponse Router::Get(const std::string& name, const HttpRequest& req) {
  json j;
  HttpResponse err;
  if (!ParseObject(req.body, &j, &err)) return err;
  if (!OnlyKeys(j, {"ids", "include", "snapshot"}, &err)) return err;
  std::shared_ptr<Snapshots::Lease> lease;
  if (!ReadSnapshot(j, &lease, &err)) return err;
  ReadOptions read;
  read.snapshot = lease != nullptr ? lease->snapshot() : nullptr;
  if (!j.contains("ids")) return Error(400, "'ids' is required");
  std::vector<int64_t> ids;
  Status s = ParseIds(j["ids"], "ids", &ids);
  if (!s.ok()) return Error(s);
  if (ids.size() > kMaxGetIds) {
    return Error(413, std::to_string(ids.size()) + " ids in one get, the limit is " +
                          std::to_string(kMaxGetIds) + " (as a scroll page's)");
  }
  Include include;
  include.all_attributes = true;
  if (j.contains("include") && !j["include"].is_null()) s = ParseInclude(j["include"], &include);
  std::shared_ptr<Collection> collection;
  if (s.ok()) s = db_->GetCollection(name, &collection);
  std::vector<std::string> names;
  if (s.ok()) s = include.AttributeNames(collection->spec(), &names);
  if (!s.ok()) return Error(s);
  // What the rows take in memory and as text, before they are read: every id may repeat, and
  // each answers a whole row. The attribute values' own bytes are counted once they are read.
  const uint64_t dim = collection->spec().dim;
  const uint64_t per_row = sizeof(Row) + 64 + names.size() * (sizeof(Value) + 2 * 64 + 8 + 32) +
                           (include.vector ? dim * (sizeof(float) + 17) : 0);
  if (ids.size() * per_row > memory_budget_bytes_) {
    return Error(413, "a get of " + std::to_string(ids.size()) + " ids could take " +
                          std::to_string(ids.size() * per_row) +
                          " bytes, over the server's memory budget of " +
                          std::to_string(memory_budget_bytes_) + " bytes; ask for fewer ids" +
                          (include.vector ? " or leave out the vector" : ""));
  }
  GetResult result;
  s = collection->Get(read, ids.data(), ids.size(), include, &result);
  if (!s.ok()) return Error(s);
  uint64_t bound = 64;
  for (const Row& row : result.rows) {
    bound += 64 + ValuesTextBound(row.attributes) + row.vector.size() * 17;
  }
  if (bound > memory_budget_bytes_) {
    return Error(413, "the rows of this get could take " + std::to_string(bound) +
                          " bytes as text, over the server's memory budget; ask for fewer ids");
  }
  HttpResponse r;
  std::string& out = r.body;
  out.reserve(bound);
  out = "{\"rows\": [";
  for (size_t i = 0; i < result.rows.size(); ++i) {
    out += i ? ", {" : "{";
    if (result.found[i]) {
      io::AppendRowJson(result.rows[i], result.attribute_names, include.vector, &out);
      out += ", \"found\": true}";
    } else {
      out += "\"id\": " + std::to_string(result.rows[i].id) + ", \"found\": false}";
    }
  }
  out += "]}\n";
  return r;
}

HttpResponse Router::Scroll(const std::string& name, const HttpRequest& req) {
  json j;
  HttpResponse err;
  if (!ParseObject(req.body, &j, &err)) return err;
  if (!OnlyKeys(j, {"filter", "include", "limit", "after", "snapshot"}, &err)) return err;
  std::shared_ptr<Snapshots::Lease> lease;
  if (j.contains("snapshot") && j["snapshot"].is_boolean()) {
    // true: this scroll reads one snapshot, opened now and released with its last page.
    if (j["snapshot"].get<bool>()) {
      std::string token;
      Status opened = snapshots_.Open(/*scroll=*/true, &token);
      if (opened.ok()) opened = snapshots_.Acquire(token, &lease);
      if (!opened.ok()) return Error(opened);
    }
  } else if (!ReadSnapshot(j, &lease, &err)) {
    return err;
  }
  ScanRequest request;
  request.snapshot = lease != nullptr ? lease->snapshot() : nullptr;
  request.include.all_attributes = true;
  Status s;
  if (j.contains("filter") && !j["filter"].is_null()) {
    if (!j["filter"].is_string()) return Error(400, "'filter' must be a string");
    request.filter = j["filter"].get<std::string>();
  }
  if (j.contains("include") && !j["include"].is_null()) s = ParseInclude(j["include"], &request.include);
  if (!s.ok()) return Error(s);
  if (j.contains("limit")) {
    int64_t limit = 0;
    if (!GetInt64(j["limit"], &limit) || limit < 1 || limit > 100000) {
      return Error(400, "'limit' must be an integer in [1, 100000], got " + j["limit"].dump());
    }
    request.limit = static_cast<size_t>(limit);
  }
  if (j.contains("after") && !j["after"].is_null()) {
    if (!GetInt64(j["after"], &request.after)) {
      return Error(400, "'after' must be an integer id (the 'next' of the previous page)");
    }
    request.has_after = true;
  }
  ScanResult result;
  s = db_->Scan(name, request, &result);
  if (!s.ok()) return Error(s);
  uint64_t bound = 64;
  for (const Row& row : result.rows) {
    bound += 64 + ValuesTextBound(row.attributes) + row.vector.size() * 17;
  }
  if (bound > memory_budget_bytes_) {
    return Error(413, "this page could take " + std::to_string(bound) +
                          " bytes, over the server's memory budget; ask for a smaller 'limit'");
  }
  HttpResponse r;
  std::string& out = r.body;
  out.reserve(bound);
  out = "{\"rows\": [";
  for (size_t i = 0; i < result.rows.size(); ++i) {
    out += i ? ", {" : "{";
    io::AppendRowJson(result.rows[i], result.attribute_names, request.include.vector, &out);
    out += "}";
  }
  out += "], \"next\": ";
  out += result.done ? "null" : std::to_string(result.next);
  if (lease != nullptr) {
    out += ", \"snapshot\": \"" + lease->token() + "\"";
    if (result.done) snapshots_.EndScroll(lease->token());
  }
  out += "}\n";
  return r;
}

HttpResponse Router::Count(const std::string& name, const HttpRequest& req) {
  json j;
  HttpResponse err;
  if (!ParseObject(req.body, &j, &err)) return err;
  if (!OnlyKeys(j, {"filter", "snapshot"}, &err)) return err;
  std::shared_ptr<Snapshots::Lease> lease;
  if (!ReadSnapshot(j, &lease, &err)) return err;
  ReadOptions read;
  read.snapshot = lease != nullptr ? lease->snapshot() : nullptr;
  std::string filter;
  if (j.contains("filter") && !j["filter"].is_null()) {
    if (!j["filter"].is_string()) return Error(400, "'filter' must be a string");
    filter = j["filter"].get<std::string>();
  }
  uint64_t count = 0;
  Status s = db_->Count(read, name, filter, &count);
  if (!s.ok()) return Error(s);
  return Json(200, json{{"count", count}});
}

HttpResponse Router::Update(const std::string& name, const HttpRequest& req) {
  json j;
  HttpResponse err;
  if (!ParseObject(req.body, &j, &err)) return err;
  if (!OnlyKeys(j, {"ids", "filter", "set"}, &err)) return err;
  if (j.contains("ids") == j.contains("filter")) {
    return Error(400, "give exactly one of 'ids' or 'filter'");
  }
  if (!j.contains("set") || !j["set"].is_object() || j["set"].empty()) {
    return Error(400, "'set' must be an object of attribute values, e.g. {\"price\": 3.5}");
  }
  std::shared_ptr<Collection> collection;
  Status s = db_->GetCollection(name, &collection);
  if (!s.ok()) return Error(s);
  UpdateRequest request;
  const CollectionSpec schema = collection->spec();
  for (const auto& [attr, value] : j["set"].items()) {
    const AttributeSpec* spec = nullptr;
    for (const AttributeSpec& a : schema.attributes) {
      if (a.name == attr) spec = &a;
    }
    Value v;
    if (spec == nullptr) {
      request.set.emplace_back(attr, Value());  // the engine names the valid attributes
      continue;
    }
    s = ParseValue(value, spec->type, &v);
    if (!s.ok()) return Error(s.WithContext("set '" + attr + "'"));
    request.set.emplace_back(attr, std::move(v));
  }
  std::vector<int64_t> ids;
  if (j.contains("ids")) {
    s = ParseIds(j["ids"], "ids", &ids);
    if (!s.ok()) return Error(s);
    if (ids.empty()) return Json(200, json{{"updated", 0}});
    request.ids = ids.data();
    request.num_ids = ids.size();
  } else {
    if (!j["filter"].is_string()) return Error(400, "'filter' must be a string");
    request.filter = j["filter"].get<std::string>();
  }
  uint64_t updated = 0;
  s = collection->Update(request, &updated);
  if (!s.ok()) return Error(s);
  return Json(200, json{{"updated", updated}});
}

HttpResponse Router::Drop(const std::string& name) {
  Status s = db_->DropCollection(name);
  if (!s.ok()) return Error(s);
  return Json(200, json{{"dropped", name}});
}

HttpResponse Router::Compact(const std::string& name, const HttpRequest& req) {
  CompactOptions options;
  // The body is optional: none, or {"force": bool}.
  if (req.body.find_first_not_of(" \t\r\n") != std::string::npos) {
    json j;
    HttpResponse err;
    if (!ParseObject(req.body, &j, &err)) return err;
    if (!OnlyKeys(j, {"force"}, &err)) return err;
    if (j.contains("force") && !j["force"].is_null()) {
      if (!j["force"].is_boolean()) return Error(400, "'force' must be true or false");
      options.force = j["force"].get<bool>();
    }
  }
  CompactResult result;
  Status s = db_->Compact(name, options, &result);
  if (!s.ok()) return Error(s);
  json out = {{"bytes_before", result.bytes_before},
              {"bytes_after", result.bytes_after},
              {"rows_removed", result.rows_removed},
              {"shards_rewritten", result.shards_rewritten},
              {"shards_skipped", result.shards_skipped},
              {"rows_left_deleted", result.rows_left_deleted}};
  if (!result.note.empty()) out["note"] = result.note;
  return Json(200, out);
}

HttpResponse Router::Alter(const std::string& name, const HttpRequest& req) {
  json j;
  HttpResponse err;
  if (!ParseObject(req.body, &j, &err)) return err;
  if (!OnlyKeys(j, {"add_attribute", "drop_attribute", "rename_attribute", "rename", "set_bm25"},
                &err)) {
    return err;
  }
  if (j.size() != 1) {
    return Error(400, "give exactly one of 'add_attribute', 'drop_attribute', "
                      "'rename_attribute', 'rename' and 'set_bm25'");
  }
  if (j.contains("rename")) {
    if (!j["rename"].is_string()) return Error(400, "'rename' must be a string");
    const std::string to = j["rename"].get<std::string>();
    Status s = db_->RenameCollection(name, to);
    if (!s.ok()) return Error(s);
    return Json(200, json{{"renamed", name}, {"to", to}});
  }
  AlterRequest request;
  if (j.contains("add_attribute")) {
    const json& a = j["add_attribute"];
    if (!a.is_object()) {
      return Error(400, "'add_attribute' must be an object {\"name\": ..., \"type\": ..., "
                        "\"default\": ...}");
    }
    if (!OnlyKeys(a, {"name", "type", "default"}, &err)) return err;
    if (!a.contains("name") || !a["name"].is_string() || !a.contains("type") ||
        !a["type"].is_string()) {
      return Error(400, "'add_attribute' needs a string 'name' and a string 'type'");
    }
    AttributeSpec parsed;
    Status s = ParseAttributeType(a["type"].get<std::string>(), &parsed);
    if (!s.ok()) return Error(s.WithContext("add_attribute.type"));
    const AttrType type = parsed.type;
    Value value;
    if (a.contains("default")) {
      s = ParseValue(a["default"], type, &value);
      if (!s.ok()) return Error(s.WithContext("add_attribute.default"));
    }
    request = AlterRequest::AddAttribute(a["name"].get<std::string>(), type, std::move(value));
    request.analyzer = parsed.analyzer;
  } else if (j.contains("set_bm25")) {
    // {"k1": K1, "b": B}; one absent keeps the collection's value.
    const json& b = j["set_bm25"];
    if (!b.is_object()) return Error(400, "'set_bm25' must be an object {\"k1\": K1, \"b\": B}");
    std::shared_ptr<Collection> c;
    Status s = db_->GetCollection(name, &c);
    if (!s.ok()) return Error(s);
    request = AlterRequest::SetBm25(c->spec().bm25_k1, c->spec().bm25_b);
    for (const auto& [key, value] : b.items()) {
      if (key != "k1" && key != "b") {
        return Error(400, "'set_bm25' has an unknown key '" + key + "' (keys: k1, b)");
      }
      if (!value.is_number()) return Error(400, "'set_bm25." + key + "' must be a number");
      (key == "k1" ? request.bm25_k1 : request.bm25_b) = value.get<double>();
    }
  } else if (j.contains("drop_attribute")) {
    if (!j["drop_attribute"].is_string()) return Error(400, "'drop_attribute' must be a string");
    request = AlterRequest::DropAttribute(j["drop_attribute"].get<std::string>());
  } else {
    const json& r = j["rename_attribute"];
    if (!r.is_object() || !r.contains("from") || !r["from"].is_string() || !r.contains("to") ||
        !r["to"].is_string() || r.size() != 2) {
      return Error(400, "'rename_attribute' must be {\"from\": OLD, \"to\": NEW}");
    }
    request = AlterRequest::RenameAttribute(r["from"].get<std::string>(),
                                            r["to"].get<std::string>());
  }
  AlterResult result;
  Status s = db_->AlterCollection(name, request, &result);
  if (!s.ok()) return Error(s);
  json attrs = json::array();
  for (const AttributeSpec& a : result.spec.attributes) {
    attrs.push_back({{"name", a.name}, {"type", AttributeTypeText(a)}});
  }
  return Json(200, json{{"altered", result.spec.name},
                        {"attributes", std::move(attrs)},
                        {"rows", result.rows},
                        {"chunks_rewritten", result.chunks_rewritten},
                        {"bm25", {{"k1", result.spec.bm25_k1}, {"b", result.spec.bm25_b}}}});
}

HttpResponse Router::Rename(const std::string& name, const HttpRequest& req) {
  json j;
  HttpResponse err;
  if (!ParseObject(req.body, &j, &err)) return err;
  if (!OnlyKeys(j, {"to"}, &err)) return err;
  if (!j.contains("to") || !j["to"].is_string()) return Error(400, "'to' (a string) is required");
  const std::string to = j["to"].get<std::string>();
  Status s = db_->RenameCollection(name, to);
  if (!s.ok()) return Error(s);
  return Json(200, json{{"renamed", name}, {"to", to}});
}

HttpResponse Router::Aliases() {
  std::vector<AliasInfo> aliases;
  Status s = db_->ListAliases(&aliases);
  if (!s.ok()) return Error(s);
  json list = json::array();
  for (const AliasInfo& a : aliases) {
    list.push_back({{"alias", a.alias}, {"collection", a.collection}});
  }
  return Json(200, json{{"aliases", std::move(list)}});
}

HttpResponse Router::PutAlias(const std::string& alias, const HttpRequest& req) {
  json j;
  HttpResponse err;
  if (!ParseObject(req.body, &j, &err)) return err;
  if (!OnlyKeys(j, {"collection"}, &err)) return err;
  if (!j.contains("collection") || !j["collection"].is_string()) {
    return Error(400, "'collection' (a string) is required");
  }
  const std::string collection = j["collection"].get<std::string>();
  Status s = db_->PutAlias(alias, collection);
  if (!s.ok()) return Error(s);
  return Json(200, json{{"alias", alias}, {"collection", collection}});
}

HttpResponse Router::DropAlias(const std::string& alias) {
  Status s = db_->DropAlias(alias);
  if (!s.ok()) return Error(s);
  return Json(200, json{{"dropped_alias", alias}});
}

HttpResponse Router::Backup(const HttpRequest& req) {
  json j;
  HttpResponse err;
  if (!ParseObject(req.body, &j, &err)) return err;
  if (!OnlyKeys(j, {"dest", "keep"}, &err)) return err;
  if (!j.contains("dest") || !j["dest"].is_string() || j["dest"].get<std::string>().empty()) {
    return Error(400, "'dest' must be the backup directory's path on the server, a string");
  }
  BackupOptions options;
  options.dest = j["dest"].get<std::string>();
  if (!options_.backup_dir.empty()) {
    // Confined: a relative path of plain names under the server's backup directory.
    const std::string& dest = options.dest;
    bool ok = dest.size() <= 1024 && dest.front() != '/';
    for (size_t i = 0; ok && i < dest.size();) {
      size_t end = dest.find('/', i);
      if (end == std::string::npos) end = dest.size();
      const std::string_view part(dest.data() + i, end - i);
      ok = !part.empty() && part.size() <= 255 && part != "." && part != ".." &&
           part.find_first_not_of(
               "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
               "0123456789._-") == std::string_view::npos;
      i = end + 1;
    }
    if (!ok || dest.back() == '/') {
      return Error(400,
                   "'dest' must be a relative path under the server's backup directory: "
                   "names of A-Z, a-z, 0-9, '.', '_' and '-' separated by '/', none '.' or "
                   "'..', got '" +
                       dest + "'");
    }
    // Every folder on the way must be one (a file there is the client's mistake, not the
    // server's failure), and none a backup directory's own (a backup nested in another's
    // private/ or shared/ would be deleted as the outer one's garbage).
    std::string path = options_.backup_dir;
    for (size_t i = 0; i < dest.size();) {
      size_t end = dest.find('/', i);
      if (end == std::string::npos) end = dest.size();
      const std::string part = dest.substr(i, end - i);
      if (part == "meta" || part == "private" || part == "shared" || part == "shared_checksum") {
        return Error(400, "'dest' may not name '" + part +
                              "', a folder a backup directory keeps its own files in");
      }
      path += "/" + part;
      struct stat st;
      if (::stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
        return Error(400, "'dest': '" + dest.substr(0, end) + "' exists and is not a directory");
      }
      i = end + 1;
    }
    options.dest = options_.backup_dir + "/" + dest;
  }
  if (j.contains("keep") && !j["keep"].is_null()) {
    int64_t keep = 0;
    if (!GetInt64(j["keep"], &keep) || keep < 0 || keep > 1000000) {
      return Error(400, "'keep' must be an integer from 0 (keep every backup) to 1000000");
    }
    options.keep = static_cast<uint32_t>(keep);
  }
  BackupResult result;
  Status s = db_->Backup(options, &result);
  if (!s.ok()) return Error(s);
  return Json(200, json::parse(result.ToJson()));
}

}  // namespace sieve::server
