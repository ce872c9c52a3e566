// Copyright 2026 The Sieve Authors.
//
// TextSegment is the inverted index of one text attribute over a run of consecutive rows (a
// stored chunk): for each term the rows holding it, and in each of them the positions of its
// tokens (so the term frequency tf is the number of positions). A row's document length, the
// number of its tokens, is the sum of its tf over the terms. storage/ stores one segment beside
// each chunk's text column (FORMAT.md, "Attribute chunk"); index/ joins a shard's segments
// into its in-memory TextIndex.
//
// Rows are 0-based within the segment. A null row has no postings; so has a row whose text
// has no tokens (its length is 0).
//
// Thread-safety: a value type; const methods may run concurrently.

#ifndef SIEVE_TEXT_TEXT_SEGMENT_H_
#define SIEVE_TEXT_TEXT_SEGMENT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sieve/status.h"
#include "text/text_analyzer.h"

namespace sieve {

struct TextSegment {
  uint32_t num_rows = 0;
  // Ascending in byte order, unique, each 1 to kMaxTermBytes bytes.
  std::vector<std::string> terms;
  // terms.size() + 1 entries from 0: term t's postings are [term_starts[t], term_starts[t + 1]).
  std::vector<uint32_t> term_starts = {0};
  // Per posting: its row, strictly ascending within a term.
  std::vector<uint32_t> rows;
  // postings + 1 entries from 0: posting p's positions are positions[position_starts[p],
  // position_starts[p + 1]), strictly ascending; there is at least one.
  std::vector<uint32_t> position_starts = {0};
  std::vector<uint32_t> positions;

  size_t num_postings() const { return rows.size(); }
  uint32_t tf(size_t posting) const {
    return position_starts[posting + 1] - position_starts[posting];
  }
  // Per row, its number of tokens.
  std::vector<uint32_t> Lengths() const;
  bool operator==(const TextSegment&) const = default;
};

// The segment of `values.size()` rows: row r holds the tokens of values[r] when valid[r] (and
// nothing when it is null). InvalidArgument naming the row when a text cannot be analyzed.
Status BuildTextSegment(const TextAnalyzer& analyzer, const std::vector<std::string>& values,
                        const std::vector<uint8_t>& valid, TextSegment* out);

// `old` with the rows in `changed` (ascending, each < old.num_rows) analyzed again from
// values/valid (which cover every row): what an update of those rows makes of the segment,
// without analyzing the others.
Status RebuildTextSegment(const TextAnalyzer& analyzer, const TextSegment& old,
                          const std::vector<uint32_t>& changed,
                          const std::vector<std::string>& values, const std::vector<uint8_t>& valid,
                          TextSegment* out);

// Rows [begin, begin + n) of `segment`, renumbered from 0 (terms left without postings go).
TextSegment SliceTextSegment(const TextSegment& segment, uint32_t begin, uint32_t n);

// The rows of `segment` whose keep[r] is set, renumbered densely in order (for a compaction
// or a repair, which keep the live rows only).
TextSegment SelectTextSegment(const TextSegment& segment, const std::vector<uint8_t>& keep);

// Corruption naming the first broken rule of the layout above, or a posting in a row whose
// valid[r] is 0 (`valid` has num_rows flags).
Status CheckTextSegment(const TextSegment& segment, const std::vector<uint8_t>& valid);

}  // namespace sieve

#endif  // SIEVE_TEXT_TEXT_SEGMENT_H_
