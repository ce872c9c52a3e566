// Copyright 2026 The Sieve Authors.
//
// load_client: N concurrent keep-alive HTTP clients sending single-vector queries to a
// `sieve serve` on loopback for a bounded time; prints one JSON line with the throughput and
// the latency percentiles. Each client may carry its own filter (a bitmap batch when merged).
//
//   load_client --port P --collection C --dim D --clients N --seconds S [--k K]
//               [--filter EXPR] [--filter-per-client 'cat >= {i}' --filter-mod M]

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tools/bench/bench_flags.h"

namespace {

struct Config {
  int port = 8080;
  std::string collection = "items";
  int dim = 128;
  int clients = 1;
  double seconds = 10;
  int k = 10;
  std::string filter;
  std::string filter_per_client;  // "{i}" is replaced by client % filter_mod
  int filter_mod = 10;
};

int Connect(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Sends one request and reads its response; returns the HTTP status (0 on a broken connection).
int RoundTrip(int fd, const std::string& request, std::string* buf) {
  size_t off = 0;
  while (off < request.size()) {
    ssize_t n = ::send(fd, request.data() + off, request.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return 0;
    off += static_cast<size_t>(n);
  }
  buf->clear();
  size_t end;
  char tmp[65536];
  while ((end = buf->find("\r\n\r\n")) == std::string::npos) {
    ssize_t n = ::recv(fd, tmp, sizeof(tmp), 0);
    if (n <= 0) return 0;
    buf->append(tmp, static_cast<size_t>(n));
  }
  const int status = std::atoi(buf->c_str() + 9);
  size_t length = 0;
  const char* cl = strcasestr(buf->c_str(), "content-length:");
  if (cl != nullptr && cl < buf->c_str() + end) length = std::strtoull(cl + 15, nullptr, 10);
  while (buf->size() < end + 4 + length) {
    ssize_t n = ::recv(fd, tmp, sizeof(tmp), 0);
    if (n <= 0) return 0;
    buf->append(tmp, static_cast<size_t>(n));
  }
  return status;
}

std::string FilterOf(const Config& c, int client) {
  if (c.filter_per_client.empty()) return c.filter;
  std::string f = c.filter_per_client;
  size_t p = f.find("{i}");
  if (p != std::string::npos) f.replace(p, 3, std::to_string(client % c.filter_mod));
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  sieve::bench::BenchFlags f(
      "load_client",
      "usage: load_client --port P --collection C --dim D --clients N --seconds S [--k K]\n"
      "         [--filter EXPR] [--filter-per-client 'cat >= {i}' --filter-mod M]\n",
      {"port", "collection", "dim", "clients", "seconds", "k", "filter", "filter-per-client",
       "filter-mod"});
  f.Parse(argc, argv);
  Config c;
  c.port = f.Int("port", c.port);
  c.collection = f.Str("collection", c.collection);
  c.dim = f.Int("dim", c.dim);
  c.clients = f.Int("clients", c.clients);
  c.seconds = f.Double("seconds", c.seconds);
  c.k = f.Int("k", c.k);
  c.filter = f.Str("filter", c.filter);
  c.filter_per_client = f.Str("filter-per-client", c.filter_per_client);
  c.filter_mod = f.Int("filter-mod", c.filter_mod);
  if (c.clients < 1 || c.dim < 1 || c.seconds <= 0 || c.filter_mod < 1) {
    f.Die("--clients, --dim, --seconds and --filter-mod must be positive");
  }
  std::vector<std::vector<double>> latencies(c.clients);
  std::vector<int> errors(c.clients, 0);
  std::atomic<bool> go{false};
  const auto duration = std::chrono::duration<double>(c.seconds);
  std::vector<std::thread> threads;
  for (int t = 0; t < c.clients; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(1234 + t);
      std::uniform_real_distribution<float> u(-1, 1);
      // 64 distinct bodies per client, cycled.
      std::vector<std::string> requests;
      const std::string filter = FilterOf(c, t);
      for (int r = 0; r < 64; ++r) {
        std::string body = "{\"k\": " + std::to_string(c.k);
        if (!filter.empty()) body += ", \"filter\": \"" + filter + "\"";
        body += ", \"vectors\": [[";
        for (int j = 0; j < c.dim; ++j) {
          char buf[24];
          std::snprintf(buf, sizeof(buf), j ? ",%.6f" : "%.6f", u(rng));
          body += buf;
        }
        body += "]]}";
        requests.push_back("POST /collections/" + c.collection +
                           "/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                           "application/json\r\nContent-Length: " +
                           std::to_string(body.size()) + "\r\n\r\n" + body);
      }
      int fd = Connect(c.port);
      std::string buf;
      while (!go) std::this_thread::yield();
      const auto start = std::chrono::steady_clock::now();
      for (size_t r = 0; std::chrono::steady_clock::now() - start < duration; ++r) {
        if (fd < 0) fd = Connect(c.port);
        const auto t0 = std::chrono::steady_clock::now();
        const int status = fd < 0 ? 0 : RoundTrip(fd, requests[r % requests.size()], &buf);
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count();
        if (status == 200) {
          latencies[t].push_back(ms);
        } else {
          ++errors[t];
          if (fd >= 0) ::close(fd);
          fd = -1;
        }
      }
      if (fd >= 0) ::close(fd);
    });
  }
  const auto t0 = std::chrono::steady_clock::now();
  go = true;
  for (auto& t : threads) t.join();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<double> all;
  int errs = 0;
  for (int t = 0; t < c.clients; ++t) {
    all.insert(all.end(), latencies[t].begin(), latencies[t].end());
    errs += errors[t];
  }
  std::sort(all.begin(), all.end());
  auto pct = [&](double p) {
    if (all.empty()) return 0.0;
    size_t i = std::min(all.size() - 1, static_cast<size_t>(p * (all.size() - 1) + 0.5));
    return all[i];
  };
  std::printf(
      "{\"clients\": %d, \"seconds\": %.2f, \"requests\": %zu, \"errors\": %d, \"qps\": %.1f, "
      "\"p50_ms\": %.3f, \"p99_ms\": %.3f, \"max_ms\": %.3f}\n",
      c.clients, wall, all.size(), errs, all.size() / wall, pct(0.5), pct(0.99),
      all.empty() ? 0.0 : all.back());
  return errs > 0 && all.empty() ? 1 : 0;
}
