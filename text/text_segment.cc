// Copyright 2026 The Sieve Authors.

#include "text/text_segment.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace sieve {

namespace {

// Collects (term, row, position) entries in any order and lays them out as a segment.
class SegmentBuilder {
 public:
  explicit SegmentBuilder(uint32_t num_rows) : num_rows_(num_rows) {}

  void Add(std::string_view term, uint32_t row, uint32_t position) {
    auto it = ids_.find(term);
    if (it == ids_.end()) {
      it = ids_.emplace(std::string(term), static_cast<uint32_t>(entries_.size())).first;
      entries_.emplace_back();
    }
    entries_[it->second].push_back(uint64_t{row} << 32 | position);
  }

  Status AddText(const TextAnalyzer& analyzer, std::string_view text, uint32_t row) {
    SIEVE_RETURN_IF_ERROR(
        analyzer.Analyze(text, &tokens_).WithContext("row " + std::to_string(row)));
    for (const TextToken& t : tokens_) Add(t.term, row, t.position);
    return Status::OK();
  }

  TextSegment Finish() {
    std::vector<std::pair<std::string_view, uint32_t>> order;
    order.reserve(ids_.size());
    for (const auto& [term, id] : ids_) order.emplace_back(term, id);
    std::sort(order.begin(), order.end());
    TextSegment s;
    s.num_rows = num_rows_;
    s.terms.reserve(order.size());
    s.term_starts.reserve(order.size() + 1);
    for (const auto& [term, id] : order) {
      std::vector<uint64_t>& e = entries_[id];
      if (!std::is_sorted(e.begin(), e.end())) std::sort(e.begin(), e.end());
      e.erase(std::unique(e.begin(), e.end()), e.end());
      s.terms.emplace_back(term);
      for (size_t i = 0; i < e.size(); ++i) {
        const uint32_t row = static_cast<uint32_t>(e[i] >> 32);
        if (i == 0 || row != static_cast<uint32_t>(e[i - 1] >> 32)) {
          if (i > 0) s.position_starts.push_back(static_cast<uint32_t>(s.positions.size()));
          s.rows.push_back(row);
        }
        s.positions.push_back(static_cast<uint32_t>(e[i]));
      }
      if (!e.empty()) s.position_starts.push_back(static_cast<uint32_t>(s.positions.size()));
      s.term_starts.push_back(static_cast<uint32_t>(s.rows.size()));
    }
    return s;
  }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  const uint32_t num_rows_;
  std::unordered_map<std::string, uint32_t, Hash, std::equal_to<>> ids_;
  std::vector<std::vector<uint64_t>> entries_;  // per term id: row << 32 | position
  std::vector<TextToken> tokens_;
};

}  // namespace

std::vector<uint32_t> TextSegment::Lengths() const {
  std::vector<uint32_t> lengths(num_rows, 0);
  for (size_t p = 0; p < rows.size(); ++p) lengths[rows[p]] += tf(p);
  return lengths;
}

Status BuildTextSegment(const TextAnalyzer& analyzer, const std::vector<std::string>& values,
                        const std::vector<uint8_t>& valid, TextSegment* out) {
  const uint32_t n = static_cast<uint32_t>(valid.size());
  SegmentBuilder b(n);
  for (uint32_t r = 0; r < n; ++r) {
    if (valid[r]) SIEVE_RETURN_IF_ERROR(b.AddText(analyzer, values[r], r));
  }
  *out = b.Finish();
  return Status::OK();
}

Status RebuildTextSegment(const TextAnalyzer& analyzer, const TextSegment& old,
                          const std::vector<uint32_t>& changed,
                          const std::vector<std::string>& values, const std::vector<uint8_t>& valid,
                          TextSegment* out) {
  std::vector<uint8_t> is_changed(old.num_rows, 0);
  for (uint32_t r : changed) {
    if (r < old.num_rows) is_changed[r] = 1;
  }
  SegmentBuilder b(old.num_rows);
  for (size_t t = 0; t < old.terms.size(); ++t) {
    for (uint32_t p = old.term_starts[t]; p < old.term_starts[t + 1]; ++p) {
      const uint32_t row = old.rows[p];
      if (is_changed[row]) continue;
      for (uint32_t i = old.position_starts[p]; i < old.position_starts[p + 1]; ++i) {
        b.Add(old.terms[t], row, old.positions[i]);
      }
    }
  }
  for (uint32_t r = 0; r < old.num_rows; ++r) {
    if (is_changed[r] && valid[r]) SIEVE_RETURN_IF_ERROR(b.AddText(analyzer, values[r], r));
  }
  *out = b.Finish();
  return Status::OK();
}

namespace {

// The rows r with map[r] != kDrop, renumbered to map[r] (order-preserving).
constexpr uint32_t kDrop = UINT32_MAX;

TextSegment Remap(const TextSegment& s, const std::vector<uint32_t>& map, uint32_t num_rows) {
  TextSegment out;
  out.num_rows = num_rows;
  for (size_t t = 0; t < s.terms.size(); ++t) {
    const size_t before = out.rows.size();
    for (uint32_t p = s.term_starts[t]; p < s.term_starts[t + 1]; ++p) {
      const uint32_t to = map[s.rows[p]];
      if (to == kDrop) continue;
      out.rows.push_back(to);
      out.positions.insert(out.positions.end(), s.positions.begin() + s.position_starts[p],
                           s.positions.begin() + s.position_starts[p + 1]);
      out.position_starts.push_back(static_cast<uint32_t>(out.positions.size()));
    }
    if (out.rows.size() == before) continue;
    out.terms.push_back(s.terms[t]);
    out.term_starts.push_back(static_cast<uint32_t>(out.rows.size()));
  }
  return out;
}

}  // namespace

TextSegment SliceTextSegment(const TextSegment& segment, uint32_t begin, uint32_t n) {
  std::vector<uint32_t> map(segment.num_rows, kDrop);
  for (uint32_t r = begin; r < begin + n && r < segment.num_rows; ++r) map[r] = r - begin;
  return Remap(segment, map, n);
}

TextSegment SelectTextSegment(const TextSegment& segment, const std::vector<uint8_t>& keep) {
  std::vector<uint32_t> map(segment.num_rows, kDrop);
  uint32_t next = 0;
  for (uint32_t r = 0; r < segment.num_rows && r < keep.size(); ++r) {
    if (keep[r]) map[r] = next++;
  }
  return Remap(segment, map, next);
}

Status CheckTextSegment(const TextSegment& s, const std::vector<uint8_t>& valid) {
  auto bad = [](const std::string& what) { return Status::Corruption("text index: " + what); };
  if (valid.size() != s.num_rows) {
    return bad(std::to_string(s.num_rows) + " rows, the column has " +
               std::to_string(valid.size()));
  }
  if (s.term_starts.size() != s.terms.size() + 1 || s.term_starts.front() != 0 ||
      s.term_starts.back() != s.rows.size()) {
    return bad("term offsets disagree with the postings");
  }
  if (s.position_starts.size() != s.rows.size() + 1 || s.position_starts.front() != 0 ||
      s.position_starts.back() != s.positions.size()) {
    return bad("position offsets disagree with the positions");
  }
  for (size_t t = 0; t < s.terms.size(); ++t) {
    const std::string& term = s.terms[t];
    if (term.empty() || term.size() > kMaxTermBytes) {
      return bad("term " + std::to_string(t) + " has " + std::to_string(term.size()) +
                 " bytes (1 to " + std::to_string(kMaxTermBytes) + ")");
    }
    if (t > 0 && !(s.terms[t - 1] < term)) return bad("terms are not ascending at " + term);
    if (s.term_starts[t] >= s.term_starts[t + 1]) return bad("term '" + term + "' has no rows");
    for (uint32_t p = s.term_starts[t]; p < s.term_starts[t + 1]; ++p) {
      const uint32_t row = s.rows[p];
      if (row >= s.num_rows)
        return bad("term '" + term + "': row " + std::to_string(row) + " is beyond the " +
                   std::to_string(s.num_rows) + " rows");
      if (!valid[row]) return bad("term '" + term + "' is in null row " + std::to_string(row));
      if (p > s.term_starts[t] && s.rows[p - 1] >= row) {
        return bad("term '" + term + "': rows are not ascending at row " + std::to_string(row));
      }
      if (s.position_starts[p] >= s.position_starts[p + 1]) {
        return bad("term '" + term + "', row " + std::to_string(row) + ": no positions");
      }
      for (uint32_t i = s.position_starts[p] + 1; i < s.position_starts[p + 1]; ++i) {
        if (s.positions[i - 1] >= s.positions[i]) {
          return bad("term '" + term + "', row " + std::to_string(row) +
                     ": positions are not ascending");
        }
      }
    }
  }
  return Status::OK();
}

}  // namespace sieve
