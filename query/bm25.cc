// Copyright 2026 The Sieve Authors.

#include "query/bm25.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sieve {

namespace {

constexpr uint32_t kEnd = std::numeric_limits<uint32_t>::max();
// A selective filter's rows (at most 1/kFilterScanShare of the shard's) are walked instead of
// the postings when rows × terms is below kFilterScanPostings × the postings: a lookup (a block
// skip and a binary search in 128 entries) costs a few sequential reads of a posting, and under
// such a filter MaxScore prunes little (its k-th score rises only with the passing rows it
// meets), so it reads most of the essential postings.
constexpr uint64_t kFilterScanShare = 16;
constexpr uint64_t kFilterScanPostings = 4;

// The term-frequency part, in bm25s's order of operations: tf / (Norm(dl) + tf), Norm(dl) =
// k1 · ((1 − b) + b · dl / avgdl).
inline double Norm(double dl, const Bm25Params& p, double avgdl) {
  return p.k1 * ((1 - p.b) + p.b * dl / avgdl);
}
inline double TfcOfNorm(double tf, double norm) { return tf / (norm + tf); }

// Tfc of one call, remembered for the short documents and small term frequencies that most
// rows have, so a row's term part is usually a load instead of two divisions. Each value is
// the same double Tfc computes.
class TfcCache {
 public:
  TfcCache(const Bm25Params& p, double avgdl) : p_(p), avgdl_(avgdl) {
    std::fill(known_, known_ + kLengths, uint8_t{0});
  }
  double NormOf(uint32_t dl) {
    if (dl >= kLengths) return Norm(dl, p_, avgdl_);
    if (!(known_[dl] & kNormKnown)) {
      norm_[dl] = Norm(dl, p_, avgdl_);
      known_[dl] |= kNormKnown;
    }
    return norm_[dl];
  }
  double Of(uint32_t tf, uint32_t dl) {
    if (dl >= kLengths || tf > kTfs) return TfcOfNorm(tf, NormOf(dl));
    const uint8_t bit = static_cast<uint8_t>(1u << (tf - 1));
    if (!(known_[dl] & bit)) {
      tfc_[dl][tf - 1] = TfcOfNorm(tf, NormOf(dl));
      known_[dl] |= bit;
    }
    return tfc_[dl][tf - 1];
  }

 private:
  static constexpr uint32_t kLengths = 128, kTfs = 4;
  static constexpr uint8_t kNormKnown = 1u << kTfs;
  const Bm25Params p_;
  const double avgdl_;
  uint8_t known_[kLengths];  // per length: which of norm_ and tfc_ are computed
  double norm_[kLengths];
  double tfc_[kLengths][kTfs];
};

// The largest term-frequency part among `peaks` (Block::peaks): a bound for every entry they
// dominate.
double PeakTfc(const std::vector<uint32_t>& peaks, TfcCache* tfc) {
  double v = 0;
  for (size_t i = 0; i < peaks.size(); i += 2) v = std::max(v, tfc->Of(peaks[i], peaks[i + 1]));
  return v;
}

// A position in one term's postings. The current block's arrays and the current entry's
// ordinal are kept beside the position, since every step of the scorer reads them.
class Cursor {
 public:
  Cursor(const std::vector<TextIndex::Block>* blocks, size_t term, double weight)
      : blocks_(blocks), term_(term), weight_(weight) {
    LoadBlock();
  }

  size_t term() const { return term_; }
  double weight() const { return weight_; }
  uint32_t doc() const { return doc_; }
  uint32_t tf() const { return tfs_[pi_]; }
  // The current row's document length; `lengths` is the index's (TextIndex::lengths()).
  uint32_t length(const uint32_t* lengths) const {
    const uint8_t l = short_lengths_[pi_];
    return l < TextIndex::kLongRow ? l : lengths[doc_];
  }
  bool exhausted() const { return bi_ == blocks_->size(); }
  // The current block's first and last ordinals (not exhausted()).
  uint32_t block_first() const { return ordinals_[0]; }
  uint32_t block_last() const { return ordinals_[size_ - 1]; }
  // The largest contribution of any entry of the current block, from its peaks (computed once
  // a block: a cursor is asked for it at every window and row it stands on).
  double BlockBound(TfcCache* tfc) const {
    if (bound_block_ != bi_) {
      bound_ = weight_ * PeakTfc((*blocks_)[bi_].peaks, tfc);
      bound_block_ = bi_;
    }
    return bound_;
  }

  void Next(Bm25Counters* c) {
    if (++pi_ == size_) {
      ++bi_;
      LoadBlock();
    } else {
      doc_ = ordinals_[pi_];
    }
    if (doc_ != kEnd) ++c->postings_read;
  }
  // To the block that holds or would hold `target`, reading no entry.
  void ShallowSeek(uint32_t target, Bm25Counters* c) {
    if (doc_ >= target) return;
    if (ordinals_[size_ - 1] >= target) return;
    c->postings_skipped += size_ - pi_;
    if (pi_ == 0) ++c->blocks_skipped;
    ++bi_;
    while (bi_ < blocks_->size() && (*blocks_)[bi_].ordinals.back() < target) {
      c->postings_skipped += (*blocks_)[bi_].size();
      ++c->blocks_skipped;
      ++bi_;
    }
    LoadBlock();
  }
  // To the first entry at or after `target`.
  void SeekTo(uint32_t target, Bm25Counters* c) {
    ShallowSeek(target, c);
    if (doc_ >= target) return;
    const size_t to = static_cast<size_t>(
        std::lower_bound(ordinals_ + pi_, ordinals_ + size_, target) - ordinals_);
    c->postings_skipped += to - pi_ - 1;
    ++c->postings_read;
    pi_ = to;
    doc_ = ordinals_[pi_];
  }

 private:
  // Onto block bi_'s first entry (or past the end).
  void LoadBlock() {
    pi_ = 0;
    if (bi_ < blocks_->size()) {
      const TextIndex::Block& b = (*blocks_)[bi_];
      ordinals_ = b.ordinals.data();
      tfs_ = b.tfs.data();
      short_lengths_ = b.lengths.data();
      size_ = b.size();
      doc_ = ordinals_[0];
    } else {
      doc_ = kEnd;
    }
  }

  const std::vector<TextIndex::Block>* blocks_;
  size_t bi_ = 0, pi_ = 0;
  const uint32_t* ordinals_ = nullptr;  // block bi_'s
  const uint32_t* tfs_ = nullptr;
  const uint8_t* short_lengths_ = nullptr;
  size_t size_ = 0;
  uint32_t doc_ = kEnd;  // the current entry's ordinal; kEnd past the last
  size_t term_;
  double weight_;
  mutable size_t bound_block_ = std::numeric_limits<size_t>::max();  // block of bound_
  mutable double bound_ = 0;
};

struct Scratch {
  std::vector<Cursor> cur;
  std::vector<const TextIndex::Postings*> postings_of;
  std::vector<double> weight_of, ub, wb, prefix;
  std::vector<uint32_t> tf_of, touched;
  std::vector<size_t> order;
  std::vector<uint8_t> defines;
};

// The calling thread's Scratch. Out of line, so that a call takes the thread-local's address
// once: in a shared object each use of a thread_local inside Bm25TopK could go through
// __tls_get_addr again (it did in its loops).
[[gnu::noinline]] Scratch* ThreadScratch() {
  static thread_local Scratch scratch;
  return &scratch;
}

struct Before {
  bool operator()(const Bm25Hit& a, const Bm25Hit& b) const { return Bm25Before(a, b); }
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
  windows += o.windows;
  windows_skipped += o.windows_skipped;
  return *this;
}

void Bm25TopK(const TextIndex& index, const std::vector<Bm25Term>& terms, const Bm25Params& params,
              double avgdl, const RowSet& allowed, const std::vector<int64_t>& ids, size_t k,
              bool prune, std::vector<Bm25Hit>* hits, Bm25Counters* counters,
              const TextIndex::Postings* const* found) {
  hits->clear();
  if (k == 0) return;
  // The call's working vectors keep their capacity from one call to the next on a thread, so a
  // query's fixed cost holds no allocation.
  Scratch& scratch = *ThreadScratch();
  std::vector<Cursor>& cur = scratch.cur;
  cur.clear();
  std::vector<const TextIndex::Postings*>& postings_of = scratch.postings_of;  // per cursor
  postings_of.clear();
  std::vector<double>& weight_of = scratch.weight_of;
  weight_of.assign(terms.size(), 0);
  uint64_t postings = 0;
  for (size_t t = 0; t < terms.size(); ++t) {
    const TextIndex::Postings* p = found != nullptr ? found[t] : index.Find(terms[t].term);
    if (p == nullptr || p->blocks().empty()) continue;
    weight_of[t] = terms[t].count * terms[t].idf;
    cur.emplace_back(&p->blocks(), t, weight_of[t]);
    postings_of.push_back(p);
    postings += p->rows().Cardinality();  // one entry per row holding the term
    counters->blocks += p->blocks().size();
    ++counters->postings_read;  // each cursor starts on its first entry
  }
  counters->postings += postings;
  if (cur.empty()) return;
  const size_t m = cur.size();
  std::vector<Bm25Hit>& heap = *hits;  // worst first (std heap with "ranks before" as less)
  heap.reserve(k);
  TfcCache tfc(params, avgdl);
  std::vector<uint32_t>& tf_of = scratch.tf_of;
  tf_of.assign(terms.size(), 0);
  // The row's score from tf_of, in the query's term order (whatever order found them).
  auto score_of = [&](uint32_t dl) {
    double score = 0;
    for (size_t t = 0; t < terms.size(); ++t) {
      if (tf_of[t] != 0) score += weight_of[t] * tfc.Of(tf_of[t], dl);
    }
    return score;
  };
  // The row's id is read only when the row may enter the heap.
  double cut = 0;  // the k-th score less the margin (below), once k rows are held
  bool full = false;
  const double slack = std::max(1e-12, 1e-15 * static_cast<double>(m + 1));
  auto offer = [&](uint32_t d, double score) {
    if (heap.size() < k) {
      heap.push_back({score, ids[d], d});
      std::push_heap(heap.begin(), heap.end(), Before());
    } else {
      const Bm25Hit& worst = heap.front();
      if (score < worst.score || (score == worst.score && ids[d] >= worst.id)) return;
      std::pop_heap(heap.begin(), heap.end(), Before());
      heap.back() = {score, ids[d], d};
      std::push_heap(heap.begin(), heap.end(), Before());
    }
    if (heap.size() == k) {
      full = true;
      cut = heap.front().score * (1 - slack);
    }
  };
  // Few allowed rows beside the postings: each allowed row is looked up in every term's
  // postings (cursors only move forward, skipping blocks by their last ordinal), so the cost
  // follows the filter's rows, not the postings.
  const uint64_t allowed_rows = allowed.Cardinality();
  if (prune && allowed_rows * kFilterScanShare <= index.rows() &&
      allowed_rows * m < postings * kFilterScanPostings) {
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
      ++counters->rows_scored;
      offer(d, score_of(index.DocumentLength(d)));
      for (Cursor& c : cur) tf_of[c.term()] = 0;
    });
    std::sort(heap.begin(), heap.end(), Before());
    return;
  }
  // Counted here and added at the end, so the hot loops keep them in registers.
  Bm25Counters local;
  // Each term's largest contribution anywhere: the bound of a term whose blocks change inside
  // a window.
  std::vector<double>& ub = scratch.ub;
  ub.resize(m);
  for (size_t j = 0; j < m; ++j) {
    ub[j] = cur[j].weight() * PeakTfc(postings_of[j]->peaks(), &tfc);
  }
  // A bound prunes only below the k-th score less a margin wider than the rounding of sums
  // taken in different orders (slack), so a row that ties the k-th score is always scored.
  auto below = [&](double bound) { return prune && full && bound < cut; };

  // A filter that passes every row of the shard (no filter, no deletes) needs no lookups.
  const bool every_row = allowed_rows >= index.rows();
  const uint32_t* lengths = index.lengths();
  // Block-max MaxScore by windows of ordinals [lo, hi]: hi is the first end of a current block
  // among the cursors that were essential in the previous window (all, until k rows are held),
  // so inside the window each of them stands in one block and its block's bound holds for it.
  // Per window the cursors are ordered by their bound there; the first ones, whose bounds sum
  // below the k-th score, are non-essential: they produce no candidates and are only probed for
  // rows the essential ones found. A window with no essential cursor is skipped unread.
  std::vector<size_t>& order = scratch.order;  // cursors by window bound, smallest first
  order.resize(m);
  std::vector<double>& wb = scratch.wb;  // per cursor: its bound in the window
  wb.resize(m);
  std::vector<double>& prefix = scratch.prefix;  // prefix[j]: Σ wb of order[0, j)
  prefix.assign(m + 1, 0);
  std::vector<uint8_t>& defines = scratch.defines;  // per cursor: essential in the previous window
  defines.assign(m, 1);
  std::vector<uint32_t>& touched = scratch.touched;
  touched.clear();
  uint32_t lo = 0;
  while (true) {
    uint32_t hi = kEnd;
    bool any = false;
    for (size_t j = 0; j < m; ++j) {
      if (!defines[j]) continue;
      cur[j].ShallowSeek(lo, &local);
      if (cur[j].exhausted()) continue;
      any = true;
      hi = std::min(hi, cur[j].block_last());
    }
    if (!any) {
      // The previous essential cursors are exhausted; the others may still hold rows.
      bool rest = false;
      for (size_t j = 0; j < m; ++j) {
        if (defines[j]) continue;
        defines[j] = 1;
        rest = true;
      }
      if (rest) continue;
      break;
    }
    ++local.windows;
    for (size_t j = 0; j < m; ++j) {
      if (!defines[j]) cur[j].ShallowSeek(lo, &local);
    }
    // The cursors' bounds in [lo, hi] and the partition; an essential cursor whose block ends
    // before hi (it was not essential before) would have only its term's bound there, so the
    // window is cut at its block's end and partitioned again (bounds only fall as hi does).
    size_t p = 0;  // order[p, m) are essential
    for (size_t pass = 0; pass <= m; ++pass) {
      for (size_t j = 0; j < m; ++j) {
        order[j] = j;
        if (cur[j].exhausted() || cur[j].block_first() > hi) {
          wb[j] = 0;
        } else if (cur[j].block_last() >= hi) {
          wb[j] = cur[j].BlockBound(&tfc);
        } else {
          wb[j] = ub[j];  // the window crosses its blocks
        }
      }
      p = 0;
      if (prune && full) {
        std::sort(order.begin(), order.end(),
                  [&](size_t a, size_t b) { return wb[a] != wb[b] ? wb[a] < wb[b] : a < b; });
        for (size_t j = 0; j < m; ++j) prefix[j + 1] = prefix[j] + wb[order[j]];
        while (p < m && prefix[p + 1] < cut) ++p;
      } else {
        for (size_t j = 0; j < m; ++j) prefix[j + 1] = prefix[j] + wb[order[j]];
      }
      uint32_t end = hi;
      for (size_t j = p; j < m; ++j) {
        const Cursor& c = cur[order[j]];
        if (!c.exhausted() && c.block_first() <= hi) end = std::min(end, c.block_last());
      }
      if (end == hi) break;
      hi = end;
    }
    if (p == m) {
      ++local.windows_skipped;
      if (hi == kEnd) break;
      lo = hi + 1;
      continue;
    }
    for (size_t j = 0; j < m; ++j) defines[order[j]] = j >= p;
    for (size_t j = p; j < m; ++j) cur[order[j]].SeekTo(lo, &local);
    // Row d with s, the essential terms' part (their tf_of set): the non-essential terms are
    // probed while they can still matter, then the row is scored in the query's term order.
    auto finish = [&](uint32_t d, uint32_t dl, double s) {
      for (size_t j = p; j-- > 0;) {
        if (below(s + prefix[j + 1])) break;
        Cursor& c = cur[order[j]];
        c.ShallowSeek(d, &local);
        if (c.doc() > d) continue;  // its block starts after d, or it is exhausted
        if (below(s + c.BlockBound(&tfc) + prefix[j])) break;
        c.SeekTo(d, &local);
        if (c.doc() != d) continue;
        const size_t t = c.term();
        tf_of[t] = c.tf();
        touched.push_back(static_cast<uint32_t>(t));
        s += c.weight() * tfc.Of(tf_of[t], dl);
      }
      // s is the row's score summed in another order: below the margin it cannot be a hit.
      if (below(s)) {
        ++local.rows_pruned;
      } else {
        ++local.rows_scored;
        offer(d, score_of(dl));
      }
      for (uint32_t t : touched) tf_of[t] = 0;
      touched.clear();
    };
    if (m - p == 1) {
      // One essential term: its entries in the window, in a loop of their own.
      Cursor& c = cur[order[p]];
      const size_t t = c.term();
      const double w = c.weight();
      for (; c.doc() <= hi; c.Next(&local)) {
        const uint32_t d = c.doc();
        if (!every_row && !allowed.Contains(d)) {
          ++local.rows_filtered;
          continue;
        }
        const uint32_t dl = c.length(lengths);
        const uint32_t tf = c.tf();
        const double s = w * tfc.Of(tf, dl);
        if (below(s + prefix[p])) {
          ++local.rows_pruned;
          continue;
        }
        tf_of[t] = tf;
        touched.push_back(static_cast<uint32_t>(t));
        finish(d, dl, s);
      }
    } else {
      while (true) {
        uint32_t d = kEnd;
        size_t at = p;  // a cursor on d
        for (size_t j = p; j < m; ++j) {
          if (cur[order[j]].doc() < d) {
            d = cur[order[j]].doc();
            at = j;
          }
        }
        if (d > hi) break;
        if (every_row || allowed.Contains(d)) {
          const uint32_t dl = cur[order[at]].length(lengths);
          double s = 0;
          for (size_t j = p; j < m; ++j) {
            Cursor& c = cur[order[j]];
            if (c.doc() != d) continue;
            const size_t t = c.term();
            tf_of[t] = c.tf();
            touched.push_back(static_cast<uint32_t>(t));
            s += c.weight() * tfc.Of(tf_of[t], dl);
          }
          finish(d, dl, s);
        } else {
          ++local.rows_filtered;
        }
        for (size_t j = p; j < m; ++j) {
          if (cur[order[j]].doc() == d) cur[order[j]].Next(&local);
        }
      }
    }
    if (hi == kEnd) break;
    lo = hi + 1;
  }
  *counters += local;
  std::sort(heap.begin(), heap.end(), Before());
}

}  // namespace sieve
