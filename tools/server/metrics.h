// Copyright 2026 The Sieve Authors.
//
// The server's counters and histograms, rendered in the Prometheus text exposition format
// (version 0.0.4) for GET /metrics.
//
// Thread-safety: every method may be called from any thread (one internal mutex).

#ifndef SIEVE_TOOLS_SERVER_METRICS_H_
#define SIEVE_TOOLS_SERVER_METRICS_H_

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "sieve/db.h"

namespace sieve::server {

class Metrics {
 public:
  // One answered HTTP request. Every label comes from a fixed set, so that no request can
  // add series: `method` is kept when it is one of HTTP's standard methods (GET, HEAD, POST,
  // PUT, DELETE, CONNECT, OPTIONS, TRACE, PATCH) and becomes "other" otherwise; `route` is kept
  // when it is the pattern of one of Routes() ("/collections/{name}/query", routes.h) and
  // becomes "other" otherwise;
  // `status` outside 100..599 is counted as 0.
  void RecordRequest(std::string_view method, std::string_view route, int status, double seconds);

  // The label RecordRequest uses for `method` and for `route`.
  static std::string_view MethodLabel(std::string_view method);
  static std::string_view RouteLabel(std::string_view route);
  // One DB::Search run by the batcher on behalf of `requests` HTTP requests holding `queries`
  // query vectors in all.
  void RecordSearch(const Explain& explain, size_t requests, size_t queries);

  // The whole exposition text.
  std::string Render() const;

 private:
  // Cumulative buckets are built at render time from per-bucket counts.
  template <size_t N>
  struct Histogram {
    std::array<uint64_t, N + 1> counts{};  // the last one is +Inf
    double sum = 0;
    uint64_t count = 0;
  };

  mutable std::mutex mu_;
  std::map<std::tuple<std::string, std::string, int>, uint64_t> requests_;
  Histogram<14> latency_;
  Histogram<11> batch_requests_;
  Histogram<11> batch_queries_;
  Histogram<9> passing_rows_;
  std::map<std::string, uint64_t> paths_;         // per shard plan
  std::map<std::string, uint64_t> filter_modes_;  // per search
  std::map<std::string, double> stage_seconds_;   // explain.stage_ms, summed
  uint64_t searches_ = 0;
  uint64_t queries_ = 0;
  uint64_t passing_rows_total_ = 0;
};

}  // namespace sieve::server

#endif  // SIEVE_TOOLS_SERVER_METRICS_H_
