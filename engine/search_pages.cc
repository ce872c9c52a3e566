// Copyright 2026 The Sieve Authors.
//
// Pages (SearchRequest::offset, after): the exact top-k over a window that reaches past the
// page, widened until the page's rows are proven (query/window_plan.h); and the cursor.

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "engine/search_window.h"
#include "query/topk.h"
#include "query/window_plan.h"

namespace sieve {

namespace {

constexpr char kCursorPrefix[] = "c1.";

bool ParseHex(const std::string& text, size_t* pos, uint64_t* out) {
  if (*pos + 16 > text.size()) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < 16; ++i) {
    const char c = text[*pos + i];
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else {
      return false;
    }
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  *pos += 16;
  *out = v;
  return true;
}

}  // namespace

std::string EncodeCursor(const PageCursor& cursor) {
  uint64_t bits;
  std::memcpy(&bits, &cursor.distance, sizeof(bits));
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%s%016" PRIx64 "%016" PRIx64 "%016" PRIx64, kCursorPrefix, bits,
                static_cast<uint64_t>(cursor.id), cursor.position);
  return buf;
}

Status DecodeCursor(const std::string& text, PageCursor* cursor) {
  const size_t prefix = std::strlen(kCursorPrefix);
  uint64_t bits = 0, id = 0, position = 0;
  size_t pos = prefix;
  const bool ok = text.size() == prefix + 48 && text.compare(0, prefix, kCursorPrefix) == 0 &&
                  ParseHex(text, &pos, &bits) && ParseHex(text, &pos, &id) &&
                  ParseHex(text, &pos, &position);
  double distance;
  std::memcpy(&distance, &bits, sizeof(distance));
  if (!ok || !std::isfinite(distance)) {
    return Status::InvalidArgument("'" + text.substr(0, 64) +
                                   "' is not a cursor a search gave (Neighbors::next, \"next\")");
  }
  cursor->distance = distance;
  cursor->id = static_cast<int64_t>(id);
  cursor->position = position;
  return Status::OK();
}

Status SearchPages(WindowSearch* ws, std::vector<std::vector<Candidate>>* kept,
                   SearchResult* result) {
  const SearchRequest& request = *ws->request;
  const size_t nq = request.num_queries;
  const uint64_t k = static_cast<uint64_t>(request.k);
  const bool larger_better = LargerIsBetter(ws->spec->metric);
  Explain& ex = result->explain;
  ex.shape = "page";
  kept->assign(nq, {});
  // Per query: its cursor (when it has one) and the rows before its page.
  std::vector<bool> has_cursor(nq, false);
  std::vector<PageCursor> cursors(nq);
  std::vector<uint64_t> before(nq, request.offset.value_or(0));
  for (size_t q = 0; q < nq; ++q) {
    if (request.after.empty() || request.after[q].empty()) continue;
    SIEVE_RETURN_IF_ERROR(DecodeCursor(request.after[q], &cursors[q]));  // checked by the rules
    has_cursor[q] = true;
    before[q] = cursors[q].position;
  }
  std::vector<size_t> pending(nq);
  std::vector<uint64_t> window(nq);
  for (size_t q = 0; q < nq; ++q) {
    pending[q] = q;
    window[q] = FirstPageWindow(before[q], k);
  }
  std::vector<WindowRows> rows;
  while (!pending.empty()) {
    uint64_t w = 0;
    for (size_t q : pending) w = std::max(w, window[q]);
    if (w == 0) {
      return Status::ResourceExhausted(
          "page: a page past row " + std::to_string(kMaxSearchWindow) +
          " of a query's order, or more rows tied at its edge, needs a wider window than a "
          "search takes");
    }
    SIEVE_RETURN_IF_ERROR(RunWindow(ws, pending, w, &rows, &ex));
    std::vector<size_t> widen;
    for (size_t i = 0; i < pending.size(); ++i) {
      const size_t q = pending[i];
      WindowRows& wr = rows[i];
      size_t start;
      if (has_cursor[q]) {
        const PageCursor& c = cursors[q];
        start =
            static_cast<size_t>(std::partition_point(wr.rows.begin(), wr.rows.end(),
                                                     [&](const Candidate& r) {
                                                       return !BetterThan(larger_better, c.distance,
                                                                          c.id, r.distance, r.id);
                                                     }) -
                                wr.rows.begin());
      } else {
        start = static_cast<size_t>(before[q]);
      }
      const WindowOutcome o = DecidePage(wr.keys.data(), wr.keys.size(), start, k, wr.bound);
      if (o.verdict == WindowVerdict::kWiden) {
        widen.push_back(q);
        window[q] = NextPageWindow(w);
        continue;
      }
      std::vector<Candidate> page(wr.rows.begin() + o.begin, wr.rows.begin() + o.end);
      Neighbors& out = result->results[q];
      if (page.size() == k) {
        const Candidate& last = page.back();
        out.next = EncodeCursor({last.distance, last.id, o.end});
      }
      (*kept)[q] = std::move(page);
      SIEVE_RETURN_IF_ERROR(FillNeighbors(q, (*kept)[q], &out));
    }
    pending.swap(widen);
  }
  return Status::OK();
}

}  // namespace sieve
