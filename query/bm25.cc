// Copyright 2026 The Sieve Authors.

#include "query/bm25.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sieve {

namespace {

constexpr uint32_t kEnd = std::numeric_limits<uint32_t>::max();
// The filter's rows are walked instead of the postings when rows × terms × this is below the
// postings: a lookup (a block skip and a binary search in 128 entries) costs several sequential
// reads of a posting.
constexpr uint64_t kFilterScanFactor = 8;

// The term-frequency part, in bm25s's order of operations: tf / (Norm(dl) + tf), Norm(dl) =
// k1 · ((1 − b) + b · dl / avgdl). A row's norm is computed once for all its terms (the same
// double either way).
inline double Norm(double dl, const Bm25Params& p, double avgdl) {
  return p.k1 * ((1 - p.b) + p.b * dl / avgdl);
}
inline double TfcOfNorm(double tf, double norm) { return tf / (norm + tf); }
inline double Tfc(double tf, double dl, const Bm25Params& p, double avgdl) {
  return TfcOfNorm(tf, Norm(dl, p, avgdl));
}

// A position in one term's postings. The current entry's ordinal is kept beside the position
// (doc()), since every step of the scorer asks for it several times.
class Cursor {
 public:
  Cursor(const std::vector<TextIndex::Block>* blocks, size_t term, double weight)
      : blocks_(blocks), term_(term), weight_(weight) {
    Load();
  }

  size_t term() const { return term_; }
  double weight() const { return weight_; }
  uint32_t doc() const { return doc_; }
  uint32_t tf() const { return block().tfs[pi_]; }
  // The largest contribution of any entry of the current block (computed once a block: a
  // cursor is asked for it at every row it stands on).
  double BlockBound(const Bm25Params& p, double avgdl) const {
    if (bound_block_ != bi_) {
      bound_ = weight_ * Tfc(block().max_tf, block().min_length, p, avgdl);
      bound_block_ = bi_;
    }
    return bound_;
  }

  void Next(Bm25Counters* c) {
    if (++pi_ == block().size()) {
      ++bi_;
      pi_ = 0;
    }
    Load();
    if (doc_ != kEnd) ++c->postings_read;
  }
  // To the block that holds or would hold `target`, reading no entry.
  void ShallowSeek(uint32_t target, Bm25Counters* c) {
    if (doc_ >= target) return;
    bool moved = false;
    while (bi_ < blocks_->size() && block().ordinals.back() < target) {
      c->postings_skipped += block().size() - pi_;
      if (pi_ == 0) ++c->blocks_skipped;
      ++bi_;
      pi_ = 0;
      moved = true;
    }
    if (moved) Load();
  }
  // To the first entry at or after `target`.
  void SeekTo(uint32_t target, Bm25Counters* c) {
    ShallowSeek(target, c);
    if (doc_ >= target) return;
    const auto& o = block().ordinals;
    const size_t to =
        static_cast<size_t>(std::lower_bound(o.begin() + pi_, o.end(), target) - o.begin());
    c->postings_skipped += to - pi_ - 1;
    ++c->postings_read;
    pi_ = to;
    Load();
  }

 private:
  const TextIndex::Block& block() const { return (*blocks_)[bi_]; }
  void Load() { doc_ = bi_ < blocks_->size() ? block().ordinals[pi_] : kEnd; }

  const std::vector<TextIndex::Block>* blocks_;
  size_t bi_ = 0, pi_ = 0;
  uint32_t doc_ = kEnd;  // the current entry's ordinal; kEnd past the last
  size_t term_;
  double weight_;
  mutable size_t bound_block_ = std::numeric_limits<size_t>::max();  // block of bound_
  mutable double bound_ = 0;
};

}  // namespace

double Bm25Idf(uint64_t documents, uint64_t term_documents) {
  const double n = static_cast<double>(documents), nt = static_cast<double>(term_documents);
  return std::log(1 + (n - nt + 0.5) / (nt + 0.5));
}

Bm25Counters& Bm25Counters::operator+=(const Bm25Counters& o) {
  postings += o.postings;
  postings_read += o.postings_read;
  postings_skipped += o.postings_skipped;
  blocks += o.blocks;
  blocks_skipped += o.blocks_skipped;
  rows_scored += o.rows_scored;
  rows_pruned += o.rows_pruned;
  rows_filtered += o.rows_filtered;
  filter_scans += o.filter_scans;
  return *this;
}

void Bm25TopK(const TextIndex& index, const std::vector<Bm25Term>& terms, const Bm25Params& params,
              double avgdl, const RowSet& allowed, const std::vector<int64_t>& ids, size_t k,
              bool prune, std::vector<Bm25Hit>* hits, Bm25Counters* counters) {
  hits->clear();
  if (k == 0) return;
  const uint64_t postings0 = counters->postings;
  std::vector<Cursor> cur;
  std::vector<double> ub;  // per cursor: the largest contribution of any of its entries
  std::vector<double> weight_of(terms.size(), 0);
  for (size_t t = 0; t < terms.size(); ++t) {
    const TextIndex::Postings* p = index.Find(terms[t].term);
    if (p == nullptr || p->blocks().empty()) continue;
    weight_of[t] = terms[t].count * terms[t].idf;
    cur.emplace_back(&p->blocks(), t, weight_of[t]);
    double bound = 0;
    for (const TextIndex::Block& b : p->blocks()) {
      counters->postings += b.size();
      ++counters->blocks;
      bound = std::max(bound, weight_of[t] * Tfc(b.max_tf, b.min_length, params, avgdl));
    }
    ub.push_back(bound);
    ++counters->postings_read;  // each cursor starts on its first entry
  }
  if (cur.empty()) return;
  const size_t m = cur.size();
  std::vector<Bm25Hit> heap;  // worst first (std heap with "ranks before" as less)
  heap.reserve(k);
  auto offer = [&](const Bm25Hit& h) {
    if (heap.size() < k) {
      heap.push_back(h);
      std::push_heap(heap.begin(), heap.end(), Bm25Before);
    } else if (Bm25Before(h, heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), Bm25Before);
      heap.back() = h;
      std::push_heap(heap.begin(), heap.end(), Bm25Before);
    }
  };
  std::vector<uint32_t> tf_of(terms.size(), 0);
  // tfc_of[t]: the term-frequency part of term t in the row being scored, where tf_of[t] != 0.
  std::vector<double> tfc_of(terms.size(), 0);
  // The row's score from tfc_of, in the query's term order (whatever order found them).
  auto score_of = [&](uint32_t d) {
    Bm25Hit h;
    h.ordinal = d;
    h.id = ids[d];
    for (size_t t = 0; t < terms.size(); ++t) {
      if (tf_of[t] != 0) h.score += weight_of[t] * tfc_of[t];
    }
    return h;
  };
  // Few allowed rows beside the postings: each allowed row is looked up in every term's
  // postings (cursors only move forward, skipping blocks by their last ordinal), so the cost
  // follows the filter's rows, not the postings.
  if (prune && allowed.Cardinality() * m * kFilterScanFactor < counters->postings - postings0) {
    ++counters->filter_scans;
    allowed.ForEach([&](uint32_t d) {
      bool any = false;
      for (Cursor& c : cur) {
        c.SeekTo(d, counters);
        if (c.doc() != d) continue;
        tf_of[c.term()] = c.tf();
        any = true;
      }
      if (!any) return;
      const double norm = Norm(index.DocumentLength(d), params, avgdl);
      for (size_t t = 0; t < terms.size(); ++t) {
        if (tf_of[t] != 0) tfc_of[t] = TfcOfNorm(tf_of[t], norm);
      }
      ++counters->rows_scored;
      offer(score_of(d));
      for (Cursor& c : cur) tf_of[c.term()] = 0;
    });
    std::sort(heap.begin(), heap.end(), Bm25Before);
    *hits = std::move(heap);
    return;
  }
  // Terms by their bound, smallest first: the first p are the non-essential ones.
  {
    std::vector<size_t> order(m);
    for (size_t i = 0; i < m; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return ub[a] != ub[b] ? ub[a] < ub[b] : cur[a].term() < cur[b].term();
    });
    std::vector<Cursor> sorted_cur;
    std::vector<double> sorted_ub;
    for (size_t i : order) {
      sorted_cur.push_back(cur[i]);
      sorted_ub.push_back(ub[i]);
    }
    cur.swap(sorted_cur);
    ub.swap(sorted_ub);
  }
  std::vector<double> prefix(m + 1, 0);  // prefix[j]: Σ ub of cursors [0, j)
  for (size_t j = 0; j < m; ++j) prefix[j + 1] = prefix[j] + ub[j];
  // A bound prunes only below the k-th score less a margin wider than the rounding of sums
  // taken in different orders, so a row that ties the k-th score is always scored.
  const double slack = std::max(1e-12, 1e-15 * static_cast<double>(m + 1));
  double cut = 0;  // the k-th score less the margin, once k rows are held
  bool full = false;
  auto below = [&](double bound) { return prune && full && bound < cut; };

  // A filter that passes every row of the shard (no filter, no deletes) needs no lookups.
  const bool every_row = allowed.Cardinality() >= index.rows();
  std::vector<size_t> touched;
  size_t p = 0;  // cursors [p, m) are essential: they make the candidates
  while (true) {
    uint32_t d = kEnd;
    for (size_t j = p; j < m; ++j) d = std::min(d, cur[j].doc());
    if (d == kEnd) break;
    bool keep = every_row || allowed.Contains(d);
    if (!keep) {
      ++counters->rows_filtered;
    } else if (prune && full) {
      double bound = prefix[p];
      for (size_t j = p; j < m; ++j) {
        if (cur[j].doc() == d) bound += cur[j].BlockBound(params, avgdl);
      }
      keep = !below(bound);
      if (!keep) ++counters->rows_pruned;
    }
    if (keep) {
      const double norm = Norm(index.DocumentLength(d), params, avgdl);
      double s = 0;
      for (size_t j = p; j < m; ++j) {
        if (cur[j].doc() != d) continue;
        const size_t t = cur[j].term();
        tf_of[t] = cur[j].tf();
        tfc_of[t] = TfcOfNorm(tf_of[t], norm);
        touched.push_back(t);
        s += cur[j].weight() * tfc_of[t];
      }
      for (size_t j = p; j-- > 0;) {
        if (below(s + prefix[j + 1])) {
          keep = false;
          break;
        }
        cur[j].ShallowSeek(d, counters);
        if (cur[j].doc() > d) continue;  // its block starts after d, or it is exhausted
        if (below(s + cur[j].BlockBound(params, avgdl) + prefix[j])) {
          keep = false;
          break;
        }
        cur[j].SeekTo(d, counters);
        if (cur[j].doc() != d) continue;
        const size_t t = cur[j].term();
        tf_of[t] = cur[j].tf();
        tfc_of[t] = TfcOfNorm(tf_of[t], norm);
        touched.push_back(t);
        s += cur[j].weight() * tfc_of[t];
      }
      if (!keep) {
        ++counters->rows_pruned;
      } else {
        ++counters->rows_scored;
        offer(score_of(d));
        if (heap.size() == k) {
          full = true;
          cut = heap.front().score * (1 - slack);
        }
      }
    }
    for (size_t j = p; j < m; ++j) {
      if (cur[j].doc() == d) cur[j].Next(counters);
    }
    for (size_t t : touched) tf_of[t] = 0;
    touched.clear();
    if (prune && full) {
      while (p < m && prefix[p + 1] < cut) ++p;
    }
  }
  std::sort(heap.begin(), heap.end(), Bm25Before);
  *hits = std::move(heap);
}

}  // namespace sieve
