// Copyright 2026 The Sieve Authors.

#include "tools/server/batcher.h"

#include <utility>

namespace sieve::server {

namespace {

void Finish(QueryJob* job, const Status& s, std::vector<Neighbors> results,
            const Explain* explain) {
  try {
    job->done(s, std::move(results), explain);
  } catch (...) {
    // A callback that throws must not take a worker down; the session times out instead.
  }
}

}  // namespace

Batcher::Batcher(DB* db, Metrics* metrics, const Options& options)
    : db_(db), metrics_(metrics), options_(options) {
  const int n = options_.workers < 1 ? 1 : options_.workers;
  for (int i = 0; i < n; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

Batcher::~Batcher() { Stop(); }

void Batcher::Submit(QueryJob job) {
  std::unique_lock<std::mutex> l(mu_);
  if (stopping_) {
    l.unlock();
    Finish(&job, Status::Unavailable("the server is shutting down"), {}, nullptr);
    return;
  }
  const size_t max_batch = options_.max_batch < 1 ? 1 : options_.max_batch;
  if (job.solo || !job.include.empty() || !job.group_by.empty() ||
      job.num_queries >= max_batch || job.radius || job.offset || !job.after.empty()) {
    Batch b;
    b.num_queries = job.num_queries;
    b.jobs.push_back(std::move(job));
    ready_.push_back(std::move(b));
    cv_.notify_one();
    return;
  }
  Key key{job.collection.get(), job.k, static_cast<int>(job.options.device),
          static_cast<int>(job.options.path)};
  auto it = pending_.find(key);
  if (it != pending_.end() && it->second.num_queries + job.num_queries > max_batch) {
    ready_.push_back(std::move(it->second));
    pending_.erase(it);
    it = pending_.end();
  }
  if (it == pending_.end()) {
    it = pending_.emplace(key, Batch()).first;
    it->second.deadline = std::chrono::steady_clock::now() + options_.window;
  }
  it->second.num_queries += job.num_queries;
  it->second.jobs.push_back(std::move(job));
  if (it->second.num_queries >= max_batch) {
    ready_.push_back(std::move(it->second));
    pending_.erase(it);
  }
  cv_.notify_one();
}

void Batcher::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stopping_ && workers_.empty()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) {
    if (t.joinable()) t.join();
  }
  workers_.clear();
}

void Batcher::WorkerLoop() {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    if (!ready_.empty()) {
      Batch b = std::move(ready_.front());
      ready_.pop_front();
      l.unlock();
      Run(&b.jobs);
      l.lock();
      continue;
    }
    if (pending_.empty()) {
      if (stopping_) return;
      cv_.wait(l);
      continue;
    }
    auto earliest = pending_.begin();
    for (auto it = pending_.begin(); it != pending_.end(); ++it) {
      if (it->second.deadline < earliest->second.deadline) earliest = it;
    }
    if (stopping_ || earliest->second.deadline <= std::chrono::steady_clock::now()) {
      ready_.push_back(std::move(earliest->second));
      pending_.erase(earliest);
      continue;
    }
    // A copy: wait_until reads its deadline after the wait too, and while the lock is released
    // another worker may take this batch and erase its node.
    const auto deadline = earliest->second.deadline;
    cv_.wait_until(l, deadline);
  }
}

void Batcher::RunOne(QueryJob* job) {
  SearchRequest req;
  req.queries = job->queries.data();
  req.num_queries = job->num_queries;
  req.dim = job->dim;
  req.include = job->include;
  req.k = job->k;
  req.filter = job->filter;
  req.filters = job->filters;
  req.group_by = job->group_by;
  req.group_size = job->group_size;
  req.group_strategy = job->group_strategy;
  req.radius = job->radius;
  req.limit = job->limit;
  req.offset = job->offset;
  req.after = job->after;
  req.text_field = job->text_field;
  req.text = job->text;
  req.fusion = job->fusion;
  SearchResult result;
  Status s = job->collection->Search(req, job->options, &result);
  if (s.ok()) metrics_->RecordSearch(result.explain, 1, job->num_queries);
  Finish(job, s, std::move(result.results),
         s.ok() || s.IsResourceExhausted() ? &result.explain : nullptr);
}

void Batcher::Run(std::vector<QueryJob>* jobs) {
  if (jobs->size() == 1) return RunOne(&jobs->front());
  const QueryJob& first = jobs->front();
  bool one_filter = true;
  size_t nq = 0;
  for (const QueryJob& j : *jobs) {
    nq += j.num_queries;
    if (!j.filters.empty() || j.filter != first.filter) one_filter = false;
  }
  SearchRequest req;
  std::vector<float> queries;
  try {
    queries.reserve(nq * (first.num_queries ? first.queries.size() / first.num_queries : 0));
    for (const QueryJob& j : *jobs) {
      queries.insert(queries.end(), j.queries.begin(), j.queries.end());
      if (one_filter) continue;
      if (j.filters.empty()) {
        req.filters.insert(req.filters.end(), j.num_queries, j.filter);
      } else {
        req.filters.insert(req.filters.end(), j.filters.begin(), j.filters.end());
      }
    }
  } catch (const std::bad_alloc&) {
    for (QueryJob& j : *jobs) RunOne(&j);
    return;
  }
  req.queries = queries.data();
  req.num_queries = nq;
  req.dim = first.dim;
  req.k = first.k;
  if (one_filter) req.filter = first.filter;
  SearchResult result;
  Status s = first.collection->Search(req, first.options, &result);
  if (!s.ok() || result.results.size() != nq) {
    // Let each request get its own answer or its own error.
    for (QueryJob& j : *jobs) RunOne(&j);
    return;
  }
  metrics_->RecordSearch(result.explain, jobs->size(), nq);
  size_t offset = 0;
  for (QueryJob& j : *jobs) {
    std::vector<Neighbors> mine(
        std::make_move_iterator(result.results.begin() + offset),
        std::make_move_iterator(result.results.begin() + offset + j.num_queries));
    offset += j.num_queries;
    Finish(&j, Status::OK(), std::move(mine), nullptr);
  }
}

}  // namespace sieve::server
