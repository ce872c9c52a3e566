// Copyright 2026 The Sieve Authors.
//
// Exact BM25 top-k over one shard's TextIndex (the Lucene variant, as the PyPI package bm25s
// computes it with method "lucene"):
//
//   score(row) = Σ over the query's terms t (a term given twice counts twice) of
//                idf(t) · tf / (tf + k1 · ((1 − b) + b · dl / avgdl))
//   idf(t)     = ln(1 + (N − n_t + 0.5) / (n_t + 0.5))
//
// with N, n_t and avgdl over the whole collection (the caller sums them over its shards,
// Bm25Idf below). Rows holding none of the query's terms score 0 and are never returned.
//
// Bm25TopK runs block-max MaxScore by windows of ordinals that end where a block of postings
// ends: in each window the terms are ordered by their largest possible contribution there (their
// blocks' max_tf / min_length bounds); once k rows are held, the terms whose bounds together
// cannot lift a row to the k-th score stop producing candidates and are only probed for rows
// that other terms found, and a window where no term is left to produce candidates is skipped
// unread; a candidate is dropped as soon as what it has plus what it could still get falls
// below the k-th score. Every row it
// returns is scored afresh in the query's term order, so scores do not depend on what was
// pruned, and the result equals the exhaustive one (prune = false), ties included: ties are
// broken by the smaller id, and a bound that equals the k-th score never prunes.
//
// When the allowed rows (a selective filter) are few beside the terms' postings, it walks them
// instead, looking each up in every term's postings (skipping blocks by their last ordinal): the
// cost then follows the filter's rows.

#ifndef SIEVE_QUERY_BM25_H_
#define SIEVE_QUERY_BM25_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "index/row_set.h"
#include "index/text_index.h"

namespace sieve {

struct Bm25Params {
  double k1 = 1.5;
  double b = 0.75;
};

// ln(1 + (N − n_t + 0.5) / (n_t + 0.5)).
double Bm25Idf(uint64_t documents, uint64_t term_documents);

// One distinct term of the query.
struct Bm25Term {
  std::string term;
  uint32_t count = 1;  // its occurrences in the query
  double idf = 0;
};

// What one Bm25TopK call (or several, summed) read and skipped.
struct Bm25Counters {
  uint64_t postings = 0;          // entries of the query terms' postings in the shard
  uint64_t postings_read = 0;     // entries a cursor stepped onto
  uint64_t postings_skipped = 0;  // entries jumped over unread
  uint64_t blocks = 0;            // blocks of the query terms' postings
  uint64_t blocks_skipped = 0;    // blocks jumped over whole
  uint64_t rows_scored = 0;       // candidates scored in full
  uint64_t rows_pruned = 0;       // candidates dropped by a bound before that
  uint64_t rows_filtered = 0;     // candidates not in the allowed rows
  uint64_t filter_scans = 0;      // calls that walked the allowed rows instead (below)
  uint64_t windows = 0;           // windows of ordinals the postings were read by
  uint64_t windows_skipped = 0;   // windows no row of which could reach the k-th score
  Bm25Counters& operator+=(const Bm25Counters& o);
};

struct Bm25Hit {
  double score = 0;
  int64_t id = 0;
  uint32_t ordinal = 0;
};

// True when a ranks before b: the larger score, then the smaller id.
inline bool Bm25Before(const Bm25Hit& a, const Bm25Hit& b) {
  return a.score > b.score || (a.score == b.score && a.id < b.id);
}

// The best k rows of `allowed` (the filter's rows minus the deleted ones) by BM25 over `terms`
// in `index`, best first (Bm25Before). `ids` maps the shard's ordinals to ids; `avgdl` is the
// collection's (> 0 whenever any term has postings). `prune` false scores every row holding a
// term (the exhaustive oracle the pruned search must equal). `found`, when given, holds each
// term's postings in `index` as index.Find gives them (null where absent), one per term, so
// that a caller that looked the terms up already does not pay for it twice; null: looked up
// here. Adds to *counters.
void Bm25TopK(const TextIndex& index, const std::vector<Bm25Term>& terms, const Bm25Params& params,
              double avgdl, const RowSet& allowed, const std::vector<int64_t>& ids, size_t k,
              bool prune, std::vector<Bm25Hit>* hits, Bm25Counters* counters,
              const TextIndex::Postings* const* found = nullptr);

}  // namespace sieve

#endif  // SIEVE_QUERY_BM25_H_
