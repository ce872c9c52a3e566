// Copyright 2026 The Sieve Authors.

#include "index/text_index.h"

#include <roaring/roaring.h>

#include <algorithm>
#include <map>
#include <new>
#include <utility>

namespace sieve {

namespace {

// The block of `blocks` that holds, or would hold, `ordinal`: the last whose first ordinal is
// not above it (the first block when every block starts above it).
size_t BlockOf(const std::vector<TextIndex::Block>& blocks, uint32_t ordinal) {
  auto it = std::upper_bound(
      blocks.begin(), blocks.end(), ordinal,
      [](uint32_t o, const TextIndex::Block& b) { return o < b.ordinals.front(); });
  return it == blocks.begin() ? 0 : static_cast<size_t>(it - blocks.begin()) - 1;
}

uint8_t ShortLength(uint32_t length) {
  return static_cast<uint8_t>(std::min<uint32_t>(length, TextIndex::kLongRow));
}

// Token positions per term of one analyzed text.
std::map<std::string, std::vector<uint32_t>> ByTerm(const std::vector<TextToken>& tokens) {
  std::map<std::string, std::vector<uint32_t>> out;
  for (const TextToken& t : tokens) out[t.term].push_back(t.position);
  return out;
}

void AnalyzeOrThrow(const std::string& analyzer, const std::string& text,
                    std::vector<TextToken>* tokens) {
  std::shared_ptr<const TextAnalyzer> a;
  if (!TextAnalyzer::Get(analyzer, &a).ok() || !a->Analyze(text, tokens).ok()) {
    throw std::bad_alloc();
  }
}

}  // namespace

bool TextIndex::Postings::Positions(uint32_t ordinal, const uint32_t** begin,
                                    const uint32_t** end) const {
  if (blocks_.empty()) return false;
  const Block& b = blocks_[BlockOf(blocks_, ordinal)];
  auto it = std::lower_bound(b.ordinals.begin(), b.ordinals.end(), ordinal);
  if (it == b.ordinals.end() || *it != ordinal) return false;
  const size_t i = static_cast<size_t>(it - b.ordinals.begin());
  *begin = b.positions.data() + b.position_starts[i];
  *end = b.positions.data() + b.position_starts[i + 1];
  return true;
}

TextIndex::TextIndex(std::string analyzer) : analyzer_(std::move(analyzer)) {}
TextIndex::~TextIndex() = default;
TextIndex::TextIndex(TextIndex&&) noexcept = default;
TextIndex& TextIndex::operator=(TextIndex&&) noexcept = default;

TextIndex TextIndex::Copy() const {
  TextIndex copy(analyzer_);
  copy.terms_ = terms_;
  copy.lengths_ = lengths_;
  copy.has_value_ = has_value_;
  copy.live_ = live_;
  copy.live_documents_ = live_documents_;
  copy.live_length_ = live_length_;
  return copy;
}

TextIndex::Postings* TextIndex::Mutable(std::string_view term) {
  auto it = terms_.find(term);
  if (it == terms_.end()) it = terms_.emplace(std::string(term), Postings()).first;
  return &it->second;
}

void TextIndex::BoundBlock(Block* b) const {
  b->max_tf = 0;
  b->min_length = UINT32_MAX;
  b->peaks.clear();
  for (size_t i = 0; i < b->size(); ++i) {
    b->max_tf = std::max(b->max_tf, b->tfs[i]);
    b->min_length = std::min(b->min_length, lengths_[b->ordinals[i]]);
    AddPeak(&b->peaks, b->tfs[i], lengths_[b->ordinals[i]]);
  }
}

void TextIndex::AddPeak(std::vector<uint32_t>* peaks, uint32_t tf, uint32_t length) {
  std::vector<uint32_t>& p = *peaks;
  // The first peak with a tf at least tf: it or a later one may dominate the pair.
  size_t i = 0;
  while (i < p.size() && p[i] < tf) i += 2;
  for (size_t j = i; j < p.size(); j += 2) {
    if (p[j + 1] <= length) return;
  }
  // The pair dominates the peaks before i (smaller tf) whose length is at least its own: the
  // last ones before i, lengths ascending; and those from i on with the same tf (their length
  // is larger, or they would have dominated it).
  size_t from = i;
  while (from > 0 && p[from - 1] >= length) from -= 2;
  size_t to = i;
  while (to < p.size() && p[to] == tf) to += 2;
  p.erase(p.begin() + static_cast<std::ptrdiff_t>(from),
          p.begin() + static_cast<std::ptrdiff_t>(to));
  const uint32_t pair[2] = {tf, length};
  p.insert(p.begin() + static_cast<std::ptrdiff_t>(from), pair, pair + 2);
}

void TextIndex::AppendEntry(Postings* p, uint32_t ordinal, const uint32_t* positions, uint32_t tf) {
  if (p->blocks_.empty() || p->blocks_.back().size() >= kBlockSize) {
    p->blocks_.emplace_back();
    p->blocks_.back().position_starts.push_back(0);
    p->blocks_.back().min_length = UINT32_MAX;
  }
  Block& b = p->blocks_.back();
  b.ordinals.push_back(ordinal);
  b.tfs.push_back(tf);
  b.lengths.push_back(ShortLength(lengths_[ordinal]));
  b.positions.insert(b.positions.end(), positions, positions + tf);
  b.position_starts.push_back(static_cast<uint32_t>(b.positions.size()));
  b.max_tf = std::max(b.max_tf, tf);
  b.min_length = std::min(b.min_length, lengths_[ordinal]);
  AddPeak(&b.peaks, tf, lengths_[ordinal]);
  AddPeak(&p->peaks_, tf, lengths_[ordinal]);
}

void TextIndex::InsertEntry(Postings* p, uint32_t ordinal, const uint32_t* positions, uint32_t tf) {
  p->rows_.Add(ordinal);
  if (p->blocks_.empty() || ordinal > p->blocks_.back().ordinals.back()) {
    AppendEntry(p, ordinal, positions, tf);
    return;
  }
  const size_t bi = BlockOf(p->blocks_, ordinal);
  Block& b = p->blocks_[bi];
  const size_t i = static_cast<size_t>(
      std::lower_bound(b.ordinals.begin(), b.ordinals.end(), ordinal) - b.ordinals.begin());
  const uint32_t at = b.position_starts[i];
  b.ordinals.insert(b.ordinals.begin() + i, ordinal);
  b.tfs.insert(b.tfs.begin() + i, tf);
  b.lengths.insert(b.lengths.begin() + i, ShortLength(lengths_[ordinal]));
  b.positions.insert(b.positions.begin() + at, positions, positions + tf);
  b.position_starts.insert(b.position_starts.begin() + i + 1, at + tf);
  for (size_t j = i + 2; j < b.position_starts.size(); ++j) b.position_starts[j] += tf;
  b.max_tf = std::max(b.max_tf, tf);
  b.min_length = std::min(b.min_length, lengths_[ordinal]);
  AddPeak(&b.peaks, tf, lengths_[ordinal]);
  AddPeak(&p->peaks_, tf, lengths_[ordinal]);
  if (b.size() <= 2 * kBlockSize) return;
  // Split in halves, so both keep room for further inserts.
  Block right;
  const size_t half = b.size() / 2;
  const uint32_t cut = b.position_starts[half];
  right.ordinals.assign(b.ordinals.begin() + half, b.ordinals.end());
  right.tfs.assign(b.tfs.begin() + half, b.tfs.end());
  right.lengths.assign(b.lengths.begin() + half, b.lengths.end());
  right.positions.assign(b.positions.begin() + cut, b.positions.end());
  for (size_t j = half; j < b.position_starts.size(); ++j) {
    right.position_starts.push_back(b.position_starts[j] - cut);
  }
  b.ordinals.resize(half);
  b.tfs.resize(half);
  b.lengths.resize(half);
  b.positions.resize(cut);
  b.position_starts.resize(half + 1);
  BoundBlock(&b);
  BoundBlock(&right);
  p->blocks_.insert(p->blocks_.begin() + bi + 1, std::move(right));
}

void TextIndex::RemoveEntry(Postings* p, uint32_t ordinal) {
  p->rows_.Remove(ordinal);
  if (p->blocks_.empty()) return;
  const size_t bi = BlockOf(p->blocks_, ordinal);
  Block& b = p->blocks_[bi];
  auto it = std::lower_bound(b.ordinals.begin(), b.ordinals.end(), ordinal);
  if (it == b.ordinals.end() || *it != ordinal) return;
  const size_t i = static_cast<size_t>(it - b.ordinals.begin());
  const uint32_t from = b.position_starts[i], to = b.position_starts[i + 1];
  b.ordinals.erase(b.ordinals.begin() + i);
  b.tfs.erase(b.tfs.begin() + i);
  b.lengths.erase(b.lengths.begin() + i);
  b.positions.erase(b.positions.begin() + from, b.positions.begin() + to);
  b.position_starts.erase(b.position_starts.begin() + i + 1);
  for (size_t j = i + 1; j < b.position_starts.size(); ++j) b.position_starts[j] -= to - from;
  if (b.ordinals.empty()) {
    p->blocks_.erase(p->blocks_.begin() + bi);
  } else {
    BoundBlock(&b);
  }
  p->peaks_.clear();
  for (const Block& rest : p->blocks_) {
    for (size_t j = 0; j < rest.peaks.size(); j += 2) {
      AddPeak(&p->peaks_, rest.peaks[j], rest.peaks[j + 1]);
    }
  }
}

void TextIndex::Append(const TextSegment& segment, const std::vector<uint8_t>& valid) {
  const uint32_t base = rows();
  const std::vector<uint32_t> lengths = segment.Lengths();
  lengths_.insert(lengths_.end(), lengths.begin(), lengths.end());
  has_value_.insert(has_value_.end(), valid.begin(), valid.begin() + segment.num_rows);
  live_.insert(live_.end(), segment.num_rows, 1);
  for (uint32_t r = 0; r < segment.num_rows; ++r) {
    if (!valid[r]) continue;
    ++live_documents_;
    live_length_ += lengths[r];
  }
  std::vector<uint32_t> ordinals;
  for (size_t t = 0; t < segment.terms.size(); ++t) {
    Postings* p = Mutable(segment.terms[t]);
    ordinals.clear();
    for (uint32_t q = segment.term_starts[t]; q < segment.term_starts[t + 1]; ++q) {
      const uint32_t ordinal = base + segment.rows[q];
      ordinals.push_back(ordinal);
      AppendEntry(p, ordinal, segment.positions.data() + segment.position_starts[q], segment.tf(q));
    }
    p->rows_.AddMany(ordinals.data(), ordinals.size());
  }
}

void TextIndex::Set(uint32_t ordinal, const std::string* old_text, const std::string* new_text) {
  if (ordinal >= rows()) return;
  std::vector<TextToken> tokens;
  if (old_text != nullptr) {
    AnalyzeOrThrow(analyzer_, *old_text, &tokens);
    for (const auto& [term, unused] : ByTerm(tokens)) {
      auto it = terms_.find(term);
      if (it == terms_.end()) continue;
      RemoveEntry(&it->second, ordinal);
      if (it->second.blocks_.empty()) terms_.erase(it);
    }
  }
  tokens.clear();
  if (new_text != nullptr) AnalyzeOrThrow(analyzer_, *new_text, &tokens);
  const uint32_t length = static_cast<uint32_t>(tokens.size());
  if (live_[ordinal]) {
    live_documents_ += (new_text != nullptr) - int{has_value_[ordinal] != 0};
    live_length_ += length;
    live_length_ -= lengths_[ordinal];
  }
  lengths_[ordinal] = length;
  has_value_[ordinal] = new_text != nullptr;
  for (const auto& [term, positions] : ByTerm(tokens)) {
    InsertEntry(Mutable(term), ordinal, positions.data(), static_cast<uint32_t>(positions.size()));
  }
}

void TextIndex::Delete(const RowSet& newly_deleted) {
  newly_deleted.ForEach([this](uint32_t ordinal) {
    if (ordinal >= rows() || !live_[ordinal]) return;
    live_[ordinal] = 0;
    if (!has_value_[ordinal]) return;
    --live_documents_;
    live_length_ -= lengths_[ordinal];
  });
}

const TextIndex::Postings* TextIndex::Find(std::string_view term) const {
  auto it = terms_.find(term);
  return it == terms_.end() ? nullptr : &it->second;
}

uint64_t TextIndex::LiveCount(std::string_view term, const RowSet& deleted) const {
  return LiveCount(Find(term), deleted);
}

uint64_t TextIndex::LiveCount(const Postings* postings, const RowSet& deleted) {
  if (postings == nullptr) return 0;
  return roaring_bitmap_andnot_cardinality(postings->rows_.raw(), deleted.raw());
}

void TextIndex::ForEachTerm(
    const std::function<void(const std::string&, const Postings&)>& fn) const {
  for (const auto& [term, postings] : terms_) fn(term, postings);
}

std::string TextIndex::Difference(const TextIndex& other) const {
  if (rows() != other.rows()) {
    return std::to_string(rows()) + " rows, the rebuilt index has " + std::to_string(other.rows());
  }
  for (uint32_t r = 0; r < rows(); ++r) {
    if (lengths_[r] != other.lengths_[r] || has_value_[r] != other.has_value_[r]) {
      return "row " + std::to_string(r) + ": document length " + std::to_string(lengths_[r]) +
             ", the rebuilt index says " + std::to_string(other.lengths_[r]);
    }
  }
  if (live_documents_ != other.live_documents_ || live_length_ != other.live_length_) {
    return "live statistics (" + std::to_string(live_documents_) + " documents, length " +
           std::to_string(live_length_) + ") differ from the rebuilt index's (" +
           std::to_string(other.live_documents_) + ", " + std::to_string(other.live_length_) + ")";
  }
  // Entries by term, compared flat: blocks may be cut differently after updates.
  auto flatten = [](const Postings& p, std::vector<uint32_t>* out) {
    out->clear();
    for (const Block& b : p.blocks_) {
      for (size_t i = 0; i < b.size(); ++i) {
        out->push_back(b.ordinals[i]);
        out->push_back(b.tfs[i]);
        out->insert(out->end(), b.positions.begin() + b.position_starts[i],
                    b.positions.begin() + b.position_starts[i + 1]);
      }
    }
  };
  std::vector<uint32_t> mine, theirs;
  for (const auto& [term, p] : terms_) {
    const Postings* q = other.Find(term);
    if (q == nullptr) return "term '" + term + "' is not in the rebuilt index";
    flatten(p, &mine);
    flatten(*q, &theirs);
    if (mine != theirs || p.rows_ != q->rows_) {
      return "term '" + term + "': postings differ from the rebuilt index's";
    }
    std::vector<uint32_t> peaks;
    for (const Block& b : p.blocks_) {
      for (size_t j = 0; j < b.peaks.size(); j += 2) AddPeak(&peaks, b.peaks[j], b.peaks[j + 1]);
    }
    if (peaks != p.peaks_) return "term '" + term + "': its peaks are stale";
    for (const Block& b : p.blocks_) {
      Block bounded = b;
      BoundBlock(&bounded);
      for (size_t i = 0; i < b.size(); ++i) {
        if (b.lengths[i] != ShortLength(lengths_[b.ordinals[i]])) {
          return "term '" + term + "': row " + std::to_string(b.ordinals[i]) +
                 "'s length in its postings is stale";
        }
      }
      if (b.max_tf != bounded.max_tf || b.min_length != bounded.min_length ||
          b.peaks != bounded.peaks) {
        return "term '" + term + "': a block's bounds are stale";
      }
    }
  }
  for (const auto& [term, q] : other.terms_) {
    if (Find(term) == nullptr) return "term '" + term + "' is missing";
  }
  return "";
}

}  // namespace sieve
