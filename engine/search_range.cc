// Copyright 2026 The Sieve Authors.
//
// Range search (SearchRequest::radius): the exact top-k over a window that widens until it
// holds every row within the radius, or limit + 1 of them (query/window_plan.h).

#include <string>

#include "engine/search_window.h"
#include "query/window_plan.h"

namespace sieve {

Status SearchRange(WindowSearch* ws, std::vector<std::vector<Candidate>>* kept,
                   SearchResult* result) {
  const SearchRequest& request = *ws->request;
  const size_t nq = request.num_queries;
  const uint64_t limit = static_cast<uint64_t>(request.limit);
  const double radius_key = LargerIsBetter(ws->spec->metric) ? -*request.radius : *request.radius;
  Explain& ex = result->explain;
  ex.shape = "range";
  kept->assign(nq, {});
  std::vector<size_t> pending(nq);
  for (size_t q = 0; q < nq; ++q) pending[q] = q;
  uint64_t window = FirstRangeWindow(limit);
  std::vector<WindowRows> rows;
  while (!pending.empty()) {
    SIEVE_RETURN_IF_ERROR(RunWindow(ws, pending, window, &rows, &ex));
    std::vector<size_t> widen;
    for (size_t i = 0; i < pending.size(); ++i) {
      const size_t q = pending[i];
      WindowRows& wr = rows[i];
      const WindowOutcome o =
          DecideRange(wr.keys.data(), wr.keys.size(), radius_key, limit, wr.bound);
      if (o.verdict == WindowVerdict::kWiden) {
        widen.push_back(q);
        continue;
      }
      wr.rows.resize(o.end);
      (*kept)[q] = std::move(wr.rows);
      result->results[q].limit_reached = o.verdict == WindowVerdict::kLimitReached;
      SIEVE_RETURN_IF_ERROR(FillNeighbors(q, (*kept)[q], &result->results[q]));
    }
    pending.swap(widen);
    if (pending.empty()) break;
    const uint64_t next = NextRangeWindow(window, limit);
    if (next == 0) {
      return Status::ResourceExhausted(
          "range search: query " + std::to_string(pending[0]) + " needs a window wider than " +
          std::to_string(kMaxSearchWindow) + " rows to prove its rows (over " +
          std::to_string(window) + " rows tie at its edge); use a smaller limit");
    }
    window = next;
  }
  return Status::OK();
}

}  // namespace sieve
