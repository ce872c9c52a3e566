// Copyright 2026 The Sieve Authors.

#include "tools/server/metrics.h"

#include <cstdio>
#include <tuple>

#include "tools/server/routes.h"

namespace sieve::server {

namespace {

constexpr double kLatencyBounds[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                     0.1,    0.25,  0.5,    1,     2.5,  5,     10};
constexpr double kBatchBounds[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
constexpr double kPassingBounds[] = {0, 10, 100, 1000, 2000, 10000, 100000, 1000000, 10000000};

template <typename H, size_t N>
void Observe(H* h, const double (&bounds)[N], double v) {
  size_t i = 0;
  while (i < N && v > bounds[i]) ++i;
  ++h->counts[i];
  h->sum += v;
  ++h->count;
}

std::string Num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.10g", v);
  return buf;
}

template <typename H, size_t N>
void RenderHistogram(std::string* out, const char* name, const char* help, const H& h,
                     const double (&bounds)[N]) {
  *out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " histogram\n";
  uint64_t cum = 0;
  for (size_t i = 0; i < N; ++i) {
    cum += h.counts[i];
    *out +=
        std::string(name) + "_bucket{le=\"" + Num(bounds[i]) + "\"} " + std::to_string(cum) + "\n";
  }
  cum += h.counts[N];
  *out += std::string(name) + "_bucket{le=\"+Inf\"} " + std::to_string(cum) + "\n";
  *out += std::string(name) + "_sum " + Num(h.sum) + "\n";
  *out += std::string(name) + "_count " + std::to_string(h.count) + "\n";
}

}  // namespace

std::string_view Metrics::MethodLabel(std::string_view method) {
  static constexpr std::string_view kMethods[] = {"GET",     "HEAD",    "POST",  "PUT",  "DELETE",
                                                  "CONNECT", "OPTIONS", "TRACE", "PATCH"};
  for (std::string_view m : kMethods) {
    if (m == method) return m;
  }
  return "other";
}

std::string_view Metrics::RouteLabel(std::string_view route) {
  for (const Route& r : Routes()) {
    if (r.pattern == route) return r.pattern;
  }
  return "other";
}

void Metrics::RecordRequest(std::string_view method, std::string_view route, int status,
                            double seconds) {
  if (status < 100 || status > 599) status = 0;
  std::lock_guard<std::mutex> l(mu_);
  ++requests_[{std::string(MethodLabel(method)), std::string(RouteLabel(route)), status}];
  Observe(&latency_, kLatencyBounds, seconds);
}

void Metrics::RecordSearch(const Explain& explain, size_t requests, size_t queries) {
  std::lock_guard<std::mutex> l(mu_);
  ++searches_;
  queries_ += queries;
  Observe(&batch_requests_, kBatchBounds, static_cast<double>(requests));
  Observe(&batch_queries_, kBatchBounds, static_cast<double>(queries));
  Observe(&passing_rows_, kPassingBounds, static_cast<double>(explain.passing_rows));
  passing_rows_total_ += explain.passing_rows;
  for (const ShardPlan& p : explain.shards) ++paths_[p.path];
  ++filter_modes_[explain.filter_mode];
  for (const auto& [stage, ms] : explain.stage_ms) {
    // Stage names are the engine's own (a fixed set), but a name of another form is pooled
    // rather than trusted as a label value.
    const bool plain =
        !stage.empty() && stage.size() <= 32 &&
        stage.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_.") == std::string::npos;
    stage_seconds_[plain ? stage : "other"] += ms / 1e3;
  }
}

std::string Metrics::Render() const {
  std::lock_guard<std::mutex> l(mu_);
  std::string out;
  out +=
      "# HELP sieve_http_requests_total HTTP requests answered, by method, route and status.\n"
      "# TYPE sieve_http_requests_total counter\n";
  for (const auto& [key, n] : requests_) {
    const auto& [method, route, status] = key;
    out += "sieve_http_requests_total{method=\"" + method + "\",route=\"" + route + "\",status=\"" +
           std::to_string(status) + "\"} " + std::to_string(n) + "\n";
  }
  RenderHistogram(&out, "sieve_http_request_duration_seconds",
                  "Time from a request read to its response handed to the socket.", latency_,
                  kLatencyBounds);
  out +=
      "# HELP sieve_searches_total DB::Search calls run by the batcher.\n"
      "# TYPE sieve_searches_total counter\n"
      "sieve_searches_total " +
      std::to_string(searches_) + "\n";
  out +=
      "# HELP sieve_queries_total Query vectors searched.\n"
      "# TYPE sieve_queries_total counter\n"
      "sieve_queries_total " +
      std::to_string(queries_) + "\n";
  RenderHistogram(&out, "sieve_batch_requests", "HTTP query requests served by one search.",
                  batch_requests_, kBatchBounds);
  RenderHistogram(&out, "sieve_batch_queries", "Query vectors in one search.", batch_queries_,
                  kBatchBounds);
  out +=
      "# HELP sieve_search_path_total Shard plans by the path chosen.\n"
      "# TYPE sieve_search_path_total counter\n";
  for (const auto& [path, n] : paths_) {
    out += "sieve_search_path_total{path=\"" + path + "\"} " + std::to_string(n) + "\n";
  }
  out +=
      "# HELP sieve_search_filter_mode_total Searches by filter mode.\n"
      "# TYPE sieve_search_filter_mode_total counter\n";
  for (const auto& [mode, n] : filter_modes_) {
    out += "sieve_search_filter_mode_total{mode=\"" + mode + "\"} " + std::to_string(n) + "\n";
  }
  out +=
      "# HELP sieve_passing_rows_total Passing rows over all searches (bitmaps: summed "
      "over queries).\n"
      "# TYPE sieve_passing_rows_total counter\n"
      "sieve_passing_rows_total " +
      std::to_string(passing_rows_total_) + "\n";
  RenderHistogram(&out, "sieve_search_passing_rows", "Passing rows of one search.", passing_rows_,
                  kPassingBounds);
  out +=
      "# HELP sieve_search_stage_seconds_total Time of each stage of the batcher's searches "
      "(explain's stage_ms), summed.\n"
      "# TYPE sieve_search_stage_seconds_total counter\n";
  for (const auto& [stage, seconds] : stage_seconds_) {
    out += "sieve_search_stage_seconds_total{stage=\"" + stage + "\"} " + Num(seconds) + "\n";
  }
  return out;
}

}  // namespace sieve::server
