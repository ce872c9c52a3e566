// Copyright 2026 The Sieve Authors.
//
// Batcher: dynamic batching of query requests. Requests on one collection with the same k,
// device and path that arrive within `window` of the first of them (or until `max_batch`
// query vectors are gathered) run as ONE DB::Search: when every request carries the same
// single filter the batch uses that one filter (a bitset), otherwise one filter per query
// vector (a bitmap). The results are split back per request, so batching never changes an
// answer. When a combined search fails (say one request's filter does not parse), each of its
// requests is run alone so that each gets its own answer or error.
//
// While every worker is busy, arrivals keep gathering past the window, so batches grow with
// the load (up to max_batch).
//
// Thread-safety: Submit may be called from any thread. Callbacks run on a worker thread and
// must not block for long. The DB must outlive the Batcher.

#ifndef SIEVE_TOOLS_SERVER_BATCHER_H_
#define SIEVE_TOOLS_SERVER_BATCHER_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "sieve/db.h"
#include "tools/server/metrics.h"

namespace sieve::server {

struct QueryJob {
  // The collection searched (DB::GetCollection): jobs merge only with jobs of the same handle,
  // which DB::GetCollection returns for one collection while it is held.
  std::shared_ptr<Collection> collection;
  int k = 10;
  SearchOptions options;
  std::vector<float> queries;  // num_queries × dim, row-major
  size_t num_queries = 0;
  uint32_t dim = 0;                  // of each query vector
  Include include;                   // stored fields with each neighbour (then run alone)
  std::string filter;                // used when `filters` is empty
  std::vector<std::string> filters;  // one per query vector, or empty
  // SearchRequest::group_by and its size and strategy (a grouped job runs alone).
  std::string group_by;
  int group_size = 1;
  GroupStrategy group_strategy = GroupStrategy::kAuto;
  // Range search and pages (SearchRequest::radius, limit, offset, after): such a job runs
  // alone.
  std::optional<double> radius;
  int limit = 1000;
  std::optional<int64_t> offset;
  std::vector<std::string> after;
  // A text query (SearchRequest::text_field, text, fusion); such a job runs alone.
  std::string text_field;
  std::string text;
  Fusion fusion;
  // Runs alone (never merged with other requests) and gets its Explain: for `explain`.
  bool solo = false;
  // Called exactly once. `explain` is set for solo jobs on success, and for a job whose own
  // search failed with ResourceExhausted (its memory figures); null otherwise.
  std::function<void(const Status&, std::vector<Neighbors>, const Explain* explain)> done;
};

class Batcher {
 public:
  struct Options {
    // How long the first request of a batch waits for company. Default: 200 µs.
    std::chrono::microseconds window{200};
    // Query vectors per search at most; 1 disables batching. A single request with more
    // vectors runs alone. Default: 256.
    size_t max_batch = 256;
    // Threads that run searches. Default: 2.
    int workers = 2;
  };

  Batcher(DB* db, Metrics* metrics, const Options& options);
  // Stop()s.
  ~Batcher();

  void Submit(QueryJob job);
  // Runs every job already submitted, then joins the workers. Later Submits fail with
  // Unavailable. Idempotent.
  void Stop();

 private:
  using Key = std::tuple<const Collection*, int, int, int>;  // collection, k, device, path
  struct Batch {
    std::chrono::steady_clock::time_point deadline;
    std::vector<QueryJob> jobs;
    size_t num_queries = 0;
  };

  void WorkerLoop();
  void Run(std::vector<QueryJob>* jobs);
  void RunOne(QueryJob* job);

  DB* const db_;
  Metrics* const metrics_;
  const Options options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<Key, Batch> pending_;  // gathering
  std::deque<Batch> ready_;       // full or past their deadline
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace sieve::server

#endif  // SIEVE_TOOLS_SERVER_BATCHER_H_
