// Copyright 2026 The Sieve Authors.
//
// TextIndex is the in-memory inverted index of one text attribute of one shard, joined from
// the segments storage keeps beside each chunk's text column (text/text_segment.h) and kept
// exact under appends, updates and deletes. It answers the full-text predicates (MATCH,
// MATCH_ALL, PHRASE: filter/) and holds what a BM25 scorer reads:
//
//   - per term, its postings in ordinal order, in blocks of about kBlockSize: each entry the
//     row's ordinal, the term frequency tf in that row and the token positions; per block the
//     largest tf and the smallest document length among its entries, so that
//     tf / (tf + k1 · (1 − b + b · dl / avgdl)) ≤ bound(max_tf, min_length) for every entry of
//     the block (the score grows with tf and falls with dl), and the block's peaks (below), a
//     tighter bound: block-max WAND skips a block whose bound cannot reach the current
//     threshold;
//   - per term, the set of its rows as a RowSet (what the filter language unions and
//     intersects);
//   - per row, its document length dl (its number of tokens; 0 for a null row);
//   - per shard, the live rows holding a value and the sum of their lengths.
//
// For BM25 over a collection (docs/filter-language.md, "What BM25 reads"): N = the live rows
// of every shard (ShardIndex::live_rows), n_t = Σ over shards of LiveCount(term, deleted),
// avgdl = Σ live_length() / N. Postings (and their block bounds) include deleted rows, as every
// index of a shard does; a scorer skips ordinals in ShardIndex::deleted().
//
// Thread-safety: mutation (Append, Set, Delete) needs exclusive access; const methods may run
// concurrently. A Postings pointer lives until the next mutation.

#ifndef SIEVE_INDEX_TEXT_INDEX_H_
#define SIEVE_INDEX_TEXT_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "index/row_set.h"
#include "sieve/status.h"
#include "text/text_analyzer.h"
#include "text/text_segment.h"

namespace sieve {

class TextIndex {
 public:
  // Entries a block takes while postings are appended; an update may grow a block to twice
  // this before it is split, or shrink it to one entry.
  static constexpr uint32_t kBlockSize = 128;
  // Block::lengths' mark of a row of this many tokens or more.
  static constexpr uint8_t kLongRow = 255;

  // Consecutive postings of one term.
  struct Block {
    std::vector<uint32_t> ordinals;  // ascending
    std::vector<uint32_t> tfs;       // tfs[i]: the term's tokens in row ordinals[i]
    // lengths[i]: DocumentLength(ordinals[i]) below kLongRow, else kLongRow (then read it from
    // the index): a scorer reads a row's length beside its tf instead of at a random place.
    std::vector<uint8_t> lengths;
    std::vector<uint32_t> position_starts;  // ordinals.size() + 1 entries from 0
    std::vector<uint32_t> positions;        // entry i's: [position_starts[i], [i + 1]), ascending
    uint32_t max_tf = 0;                    // the largest of tfs
    uint32_t min_length = 0;                // the smallest document length of ordinals
    // The (tf, document length) pairs of the entries that no other entry of the block matches
    // with a tf at least as large and a length at least as small, as tf, length, tf, length...
    // by tf ascending (so by length ascending). Every entry's pair is dominated by one of them,
    // so the largest term-frequency part among them bounds the block's for any k1, b and avgdl,
    // more tightly than (max_tf, min_length), which seldom belong to one entry.
    std::vector<uint32_t> peaks;
    size_t size() const { return ordinals.size(); }
  };

  // One term's postings.
  class Postings {
   public:
    // Every row holding the term (deleted rows included).
    const RowSet& rows() const { return rows_; }
    // Blocks in ordinal order, none empty: block i's ordinals all precede block i + 1's.
    const std::vector<Block>& blocks() const { return blocks_; }
    // The term's positions in row `ordinal`, as [*begin, *end); false when it has none.
    bool Positions(uint32_t ordinal, const uint32_t** begin, const uint32_t** end) const;
    // The peaks of all its entries (as Block::peaks): they bound the term's part in any row.
    const std::vector<uint32_t>& peaks() const { return peaks_; }

   private:
    friend class TextIndex;
    RowSet rows_;
    std::vector<Block> blocks_;
    std::vector<uint32_t> peaks_;
  };

  // `analyzer` is the attribute's analyzer name (Set analyzes with it).
  explicit TextIndex(std::string analyzer);
  ~TextIndex();
  TextIndex(TextIndex&&) noexcept;
  TextIndex& operator=(TextIndex&&) noexcept;
  // A deep copy (ShardIndex::CopyForWrite).
  TextIndex Copy() const;

  const std::string& analyzer() const { return analyzer_; }
  uint32_t rows() const { return static_cast<uint32_t>(lengths_.size()); }

  // Appends rows [rows(), rows() + segment.num_rows): valid[r] says whether row r has a value
  // (a null row has no postings). The new rows count as live.
  void Append(const TextSegment& segment, const std::vector<uint8_t>& valid);
  // Replaces row `ordinal`'s text: `old_text` and `new_text` are its values before and after
  // (null: no value). The old text is analyzed again to find its postings. Throws
  // std::bad_alloc when analysis fails (only an allocation failure can: stored texts were
  // analyzed when they were written).
  void Set(uint32_t ordinal, const std::string* old_text, const std::string* new_text);
  // Rows that became deleted (each live until now): they leave the live statistics.
  void Delete(const RowSet& newly_deleted);

  // The term's postings, or null when no row holds it.
  const Postings* Find(std::string_view term) const;
  // The live rows among the term's: n_t of this shard.
  uint64_t LiveCount(std::string_view term, const RowSet& deleted) const;
  // The same for postings Find gave (null: 0), without looking the term up again.
  static uint64_t LiveCount(const Postings* postings, const RowSet& deleted);
  uint32_t DocumentLength(uint32_t ordinal) const { return lengths_[ordinal]; }
  // DocumentLength of every row, rows() values (a scorer's hot loop reads them directly).
  const uint32_t* lengths() const { return lengths_.data(); }
  // Live rows with a value (null rows and deleted rows excluded).
  uint64_t live_documents() const { return live_documents_; }
  // Σ DocumentLength over the live rows.
  uint64_t live_length() const { return live_length_; }
  size_t num_terms() const { return terms_.size(); }
  // Calls fn(term, postings) for every term with postings, in no particular order.
  void ForEachTerm(const std::function<void(const std::string&, const Postings&)>& fn) const;

  // Empty when `other` holds the same postings, positions, lengths and statistics; else what
  // differs first (for DB::Check, which compares the loaded index with one rebuilt from rows).
  std::string Difference(const TextIndex& other) const;

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  Postings* Mutable(std::string_view term);
  void AppendEntry(Postings* p, uint32_t ordinal, const uint32_t* positions, uint32_t tf);
  void InsertEntry(Postings* p, uint32_t ordinal, const uint32_t* positions, uint32_t tf);
  void RemoveEntry(Postings* p, uint32_t ordinal);
  void BoundBlock(Block* b) const;
  // Adds (tf, length) to the peaks `peaks` (Block::peaks).
  static void AddPeak(std::vector<uint32_t>* peaks, uint32_t tf, uint32_t length);

  std::string analyzer_;
  std::unordered_map<std::string, Postings, Hash, std::equal_to<>> terms_;
  std::vector<uint32_t> lengths_;
  std::vector<uint8_t> has_value_;
  std::vector<uint8_t> live_;
  uint64_t live_documents_ = 0;
  uint64_t live_length_ = 0;
};

}  // namespace sieve

#endif  // SIEVE_INDEX_TEXT_INDEX_H_
