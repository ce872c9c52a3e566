// Copyright 2026 The Sieve Authors.

#include "tools/cli/serve_command.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <sstream>
#include <string>

#include "sieve/db.h"
#include "tools/cli/cli_util.h"
#include "tools/cli/flags.h"
#include "tools/server/server.h"

namespace sieve::cli {

namespace {

const char kServeUsage[] =
    "usage: sieve serve DB [--create] [--listen HOST:PORT] [--token-file F]\n"
    "                      [--batch-window-us N] [--max-batch N] [--max-body-bytes N]\n"
    "                      [--read-timeout-ms N] [--idle-timeout-ms N]\n"
    "                      [--max-request-queries N] [--max-memory BYTES|auto] [--threads N]\n"
    "                      [--search-threads N] [--devices LIST|all] [--cpu-executors N]\n"
    "                      [--device-memory BYTES] [--snapshot-idle-s N]\n"
    "                      [--first-use-calibration unknown|off|always] [--backup-dir DIR]\n"
    "  DB must hold a database unless --create is given (then an empty one is created).\n"
    "  --max-memory: host memory the searches and their answers may use at once (e.g. 2G;\n"
    "  default auto: half of the smaller of physical memory and the address-space limits); a\n"
    "  query that needs more is 413, one that finds memory exhausted 503.\n"
    "  HTTP/1.1 JSON API (docs/http-api.md). --listen defaults to 127.0.0.1:8080;\n"
    "  PORT 0 picks a free port. A non-loopback HOST requires --token-file (a file holding\n"
    "  the bearer token every request must then carry: at least 16 printable characters, e.g.\n"
    "  `openssl rand -hex 32`). Concurrent queries arriving within\n"
    "  --batch-window-us (default 200) run as one search of at most --max-batch query vectors\n"
    "  (default 256; 1 disables batching). A snapshot token (POST /snapshots, a scroll with\n"
    "  \"snapshot\": true) no read has used for --snapshot-idle-s (default 300) is released.\n"
    "  --backup-dir DIR: POST /backup writes only inside DIR (its \"dest\" a relative path\n"
    "  there); without it \"dest\" is any path the server's user may write.\n"
    "  SIGTERM/SIGINT drain and exit 0.\n"
    "  GET /openapi.json answers the OpenAPI 3.1 document of every route.\n"
    "  stdout: {\"listening\": \"HOST:PORT\"} once bound.\n";
// Then kEngineFlagsUsage (the engine's devices and calibration, as sieve query takes them).

int Fail(const Status& s) {
  std::string msg = s.message().empty() ? s.ToString() : s.message();
  for (char& c : msg) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::fprintf(stderr, "sieve serve: %s\n", msg.c_str());
  return 1;
}

Status ParseListen(const std::string& text, std::string* host, uint16_t* port) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) {
    return Status::InvalidArgument("--listen '" + text + "': expected HOST:PORT");
  }
  *host = text.substr(0, colon);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  if (host->empty()) *host = "127.0.0.1";
  const std::string p = text.substr(colon + 1);
  long long v = -1;
  try {
    size_t used = 0;
    v = std::stoll(p, &used);
    if (used != p.size()) v = -1;
  } catch (...) {
    v = -1;
  }
  if (v < 0 || v > 65535) {
    return Status::InvalidArgument("--listen '" + text + "': bad port '" + p + "'");
  }
  *port = static_cast<uint16_t>(v);
  return Status::OK();
}

Status ReadToken(const std::string& path, std::string* token) {
  const std::string where = "--token-file " + path + ": ";
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return Status::IOError(where + "cannot be read: " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) return Status::InvalidArgument(where + "is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError(where + "cannot be read: " + std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::IOError(where + "cannot be read: " + std::strerror(errno));
  std::string t = ss.str();
  const size_t a = t.find_first_not_of(" \t\r\n"), b = t.find_last_not_of(" \t\r\n");
  *token = a == std::string::npos ? "" : t.substr(a, b - a + 1);
  if (token->empty()) return Status::InvalidArgument(where + "empty token");
  for (char c : *token) {
    if (c < 0x21 || c > 0x7e) {
      return Status::InvalidArgument(where + "the token must be printable ASCII without spaces");
    }
  }
  if (token->size() < server::kMinTokenLength) {
    return Status::InvalidArgument(where + "the token has " + std::to_string(token->size()) +
                                   " characters, fewer than " +
                                   std::to_string(server::kMinTokenLength) +
                                   ": a short token can be guessed (make one with `openssl rand "
                                   "-hex 32 > " +
                                   path + "`)");
  }
  return Status::OK();
}

}  // namespace

int Serve(const Args& args) {
  std::set<std::string> names = {
      "listen",          "token-file",      "batch-window-us",     "max-batch",  "max-body-bytes",
      "read-timeout-ms", "idle-timeout-ms", "max-request-queries", "max-memory", "threads",
      "search-threads",  "snapshot-idle-s", "backup-dir"};
  names.insert(std::begin(kEngineFlags), std::end(kEngineFlags));
  Flags flags(names, {"create"});
  Status s = flags.Parse(args);
  if (flags.help()) {
    std::fputs(kServeUsage, stdout);
    std::fputs(kEngineFlagsUsage, stdout);
    return 0;
  }
  if (s.ok() && flags.positional().empty()) {
    s = Status::InvalidArgument("missing the database path");
  }
  if (!s.ok()) {
    std::fprintf(stderr, "sieve serve: %s (see sieve serve --help)\n", s.message().c_str());
    return 1;
  }
  const std::string path = flags.positional()[0];
  server::ServerOptions o;
  o.handle_signals = true;
  long long window = 0, max_batch = 0, max_body = 0, read_ms = 0, idle_ms = 0, threads = 0,
            search_threads = 0, max_request_queries = 0, snapshot_idle_s = 0;
  s = ParseListen(flags.Get("listen", "127.0.0.1:8080"), &o.host, &o.port);
  if (s.ok()) s = flags.GetInt("batch-window-us", 200, 0, 10000000, &window);
  if (s.ok()) s = flags.GetInt("max-batch", 256, 1, 1 << 20, &max_batch);
  if (s.ok()) s = flags.GetInt("max-body-bytes", 256LL << 20, 1, 1LL << 40, &max_body);
  if (s.ok()) s = flags.GetInt("read-timeout-ms", 30000, 1, 3600000, &read_ms);
  if (s.ok()) s = flags.GetInt("idle-timeout-ms", 60000, 1, 86400000, &idle_ms);
  if (s.ok()) s = flags.GetInt("max-request-queries", 65536, 1, 1 << 24, &max_request_queries);
  if (s.ok()) s = flags.GetInt("threads", 0, 0, 1024, &threads);
  if (s.ok()) s = flags.GetInt("search-threads", 2, 1, 256, &search_threads);
  if (s.ok()) s = flags.GetInt("snapshot-idle-s", 300, 1, 604800, &snapshot_idle_s);
  if (s.ok() && flags.Has("token-file")) s = ReadToken(flags.Get("token-file"), &o.token);
  if (s.ok()) {
    s = ParseMemoryBudget("max-memory", flags.Get("max-memory", "auto"), &o.memory_budget_bytes);
  }
  Options engine;
  if (s.ok()) s = ParseEngineFlags(flags, &engine);
  if (!s.ok()) return Fail(s);
  o.batch_window_us = window;
  o.max_batch = static_cast<size_t>(max_batch);
  o.max_body_bytes = static_cast<uint64_t>(max_body);
  o.read_timeout_ms = read_ms;
  o.idle_timeout_ms = idle_ms;
  o.max_request_queries = static_cast<size_t>(max_request_queries);
  o.threads = static_cast<int>(threads);
  o.search_workers = static_cast<int>(search_threads);
  o.snapshot_idle_ms = snapshot_idle_s * 1000;
  if (flags.Has("backup-dir")) {
    o.backup_dir = flags.Get("backup-dir");
    struct stat st;
    if (o.backup_dir.empty() || ::stat(o.backup_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return Fail(Status::InvalidArgument("--backup-dir '" + o.backup_dir +
                                          "': not an existing directory"));
    }
  }

  s = server::Server::Validate(o);
  if (!s.ok()) return Fail(s);
  std::unique_ptr<DB> db;
  s = OpenDb(path, flags.Has("create") ? OpenFor::kCreate : OpenFor::kWrite, &db,
             o.memory_budget_bytes, engine);
  if (s.IsNotFound()) {
    s = Status::NotFound(s.message() + " (give --create to create an empty database there)");
  }
  if (!s.ok()) return Fail(s);
  std::unique_ptr<server::Server> srv;
  s = server::Server::Start(db.get(), o, &srv);
  if (!s.ok()) return Fail(s);
  std::printf("{\"listening\": \"%s\"}\n", srv->address().c_str());
  std::fflush(stdout);
  srv->WaitForSignal();
  std::fprintf(stderr, "sieve serve: stopping: draining requests in flight\n");
  srv->Shutdown();
  srv.reset();
  db.reset();  // closes the store; everything acknowledged is already durable
  std::fprintf(stderr, "sieve serve: stopped\n");
  return 0;
}

}  // namespace sieve::cli
