// Copyright 2026 The Sieve Authors.
//
// Server: Sieve's HTTP/1.1 server (Boost.Asio + Beast, keep-alive) over one open DB. It owns
// the Router, the Batcher and the Metrics; Boost stays inside server.cc.
//
//   std::unique_ptr<Server> server;
//   Status s = Server::Start(db.get(), options, &server);   // bound and serving
//   server->WaitForSignal();                                 // SIGTERM / SIGINT
//   server->Shutdown();                                      // drains, then returns
//
// Safety: a non-loopback address needs a token (Start refuses otherwise). Every request must
// arrive whole within read_timeout (a slow client is dropped without holding a thread); an
// idle keep-alive connection is closed after idle_timeout; bodies over max_body_bytes get 413.
//
// Thread-safety: Shutdown and WaitForSignal may be called from any thread. The DB must outlive
// the Server; the Server never closes it.

#ifndef SIEVE_TOOLS_SERVER_SERVER_H_
#define SIEVE_TOOLS_SERVER_SERVER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "sieve/db.h"

namespace sieve::server {

// The shortest bearer token a server takes: 16 characters of a random token hold about 100
// bits, beyond guessing over the network.
constexpr size_t kMinTokenLength = 16;

struct ServerOptions {
  // An IP address or "localhost". Default: 127.0.0.1.
  std::string host = "127.0.0.1";
  // 0 picks a free port (see Server::port()). Default: 8080.
  uint16_t port = 8080;
  // Bearer token every request must carry; required for a non-loopback host. At least
  // kMinTokenLength printable ASCII characters without spaces (Start refuses others), compared
  // in constant time; the scheme "Bearer" is taken in any letter case. Default: none.
  std::string token;
  // Batching window in microseconds. Default: 200.
  int64_t batch_window_us = 200;
  // Query vectors per search at most; 1 disables batching. Default: 256.
  size_t max_batch = 256;
  // Query vectors per request at most (more is 413). Default: 65536.
  size_t max_request_queries = 65536;
  // Request body limit in bytes (more is 413). Default: 256 MiB.
  uint64_t max_body_bytes = 256ull << 20;
  // A request (headers and body) must arrive within this. Default: 30 s.
  int64_t read_timeout_ms = 30000;
  // A keep-alive connection with no request for this long is closed. Default: 60 s.
  int64_t idle_timeout_ms = 60000;
  // Network threads (which also run ingests and deletes). 0 = hardware threads, at least 4.
  int threads = 0;
  // The memory budget of query answers (Router::Options::memory_budget_bytes; pass the same
  // number as the DB's Options::memory_budget_bytes). 0: DefaultMemoryBudget(). Default: 0.
  uint64_t memory_budget_bytes = 0;
  // Threads running batched searches. Default: 2.
  int search_workers = 2;
  // A snapshot token no read has used for this long is released. Default: 5 min.
  int64_t snapshot_idle_ms = 300000;
  // POST /backup writes only under this directory when set (Router::Options::backup_dir).
  // Default: empty (anywhere the server's user may write).
  std::string backup_dir;
  // Install SIGTERM/SIGINT handlers that WaitForSignal waits for. Default: false.
  bool handle_signals = false;
};

class Server {
 public:
  // Binds, listens and starts serving. InvalidArgument for a bad host, or a non-loopback host
  // without a token; IOError when the address cannot be bound.
  static Status Start(DB* db, const ServerOptions& options, std::unique_ptr<Server>* server);

  // The checks of Start that need no DB and bind nothing (host, token), so that a caller can
  // refuse bad options before opening the database: InvalidArgument for a host that is not an
  // IP address or "localhost", a non-loopback host without a token, or a token shorter than
  // kMinTokenLength or holding anything but printable ASCII without spaces.
  static Status Validate(const ServerOptions& options);

  // Shutdown()s.
  ~Server();

  // The bound port (useful with port 0) and "HOST:PORT".
  uint16_t port() const;
  std::string address() const;

  // Blocks until SIGTERM/SIGINT (with handle_signals) or Shutdown() from another thread.
  void WaitForSignal();

  // Stops accepting, closes idle connections, waits (up to `drain_ms`) for the requests in
  // flight to be answered, then stops every thread. Idempotent.
  void Shutdown(int64_t drain_ms = 30000);

  // The /metrics text.
  std::string MetricsText() const;

  class Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sieve::server

#endif  // SIEVE_TOOLS_SERVER_SERVER_H_
