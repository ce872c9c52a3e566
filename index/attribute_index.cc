// Copyright 2026 The Sieve Authors.

#include "index/attribute_index.h"

#include <roaring/roaring.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sieve {

namespace {

// Entries per bucket bitmap of a sorted run. A range query adds at most two partial buckets
// entry by entry and ORs the rest, so this trades edge cost (~2 × 4096 adds) against the
// number of bitmaps OR'd (N / 4096); at 1M rows both are well under a millisecond.
constexpr size_t kBucketEntries = 4096;

// One sorted run of (value, ordinal) entries with a bitmap per block of kBucketEntries.
template <typename T>
struct SortedRun {
  std::vector<T> values;           // ascending
  std::vector<uint32_t> ordinals;  // ordinals[i] has values[i]
  std::vector<RowSet> buckets;     // buckets[b] = ordinals of entries [b * kBucketEntries, ...)

  size_t size() const { return values.size(); }

  void BuildBuckets() {
    buckets.clear();
    buckets.reserve((size() + kBucketEntries - 1) / kBucketEntries);
    std::vector<uint32_t> block;
    for (size_t begin = 0; begin < size(); begin += kBucketEntries) {
      size_t end = std::min(size(), begin + kBucketEntries);
      block.assign(ordinals.begin() + begin, ordinals.begin() + end);
      // Sorted input lets Roaring append containers instead of inserting them.
      std::sort(block.begin(), block.end());
      buckets.push_back(RowSet::Of(block.data(), block.size()));
    }
  }
};

// Answers "ordinals whose value lies in a range" from sorted runs, without touching rows.
// Appends go to an unsorted tail; the next query sorts the tail into a new run and merges runs
// of similar size (each run at least twice the next), so a row is merged O(log N) times and a
// query visits O(log N) runs. The mutex lets const queries do that flush concurrently.
template <typename T>
class RangeIndex {
 public:
  RangeIndex() = default;
  // A copy of everything, its unsorted tail included (AttributeIndex::Copy).
  RangeIndex(const RangeIndex& other) {
    std::lock_guard<std::mutex> lock(other.mu_);
    tail_ = other.tail_;
    runs_ = other.runs_;
    indexed_ = other.indexed_;
    stale_ = other.stale_;
    overlay_ = other.overlay_;
    overlay_of_ = other.overlay_of_;
    overlay_sorted_ = other.overlay_sorted_;
  }
  RangeIndex& operator=(const RangeIndex&) = delete;

  // Requires exclusive access (AttributeIndex::Append).
  void Add(T value, uint32_t ordinal) {
    tail_.emplace_back(value, ordinal);
    indexed_.Add(ordinal);
  }

  // Moves `ordinal`'s entry to `value` (absent: the row no longer has a number). Requires
  // exclusive access. The old entry stays in its run, masked by `stale_`; the new one lives in
  // a small overlay until the overlay grows past an eighth of the entries, when the caller
  // rebuilds the index from the current values (NeedsRebuild).
  void Update(uint32_t ordinal, std::optional<T> value) {
    auto it = overlay_of_.find(ordinal);
    if (it != overlay_of_.end()) {
      overlay_.erase(std::make_pair(it->second, ordinal));
      overlay_of_.erase(it);
    }
    if (indexed_.Contains(ordinal)) stale_.Add(ordinal);
    if (value) {
      overlay_.emplace(*value, ordinal);
      overlay_of_.emplace(ordinal, *value);
    }
    overlay_sorted_.reset();
  }
  bool NeedsRebuild() const {
    return overlay_.size() > 4096 && overlay_.size() * 8 > indexed_.Cardinality();
  }
  // Drops everything (for a rebuild by the caller through Add).
  void Clear() {
    std::lock_guard<std::mutex> lock(mu_);
    tail_.clear();
    runs_.clear();
    indexed_.Clear();
    stale_.Clear();
    overlay_.clear();
    overlay_of_.clear();
    overlay_sorted_.reset();
  }

  // Sorts the tail into the runs now.
  void Prepare() const {
    std::lock_guard<std::mutex> lock(mu_);
    Flush();
  }

  // The ordinals of entries at positions [begin, end) of each run, where
  // bounds(values) -> pair(begin, end) locates the range in one run's sorted values.
  template <typename Bounds>
  RowSet Query(Bounds&& bounds) const {
    RowSet base = QueryRuns(bounds);
    if (stale_.Empty() && overlay_.empty()) return base;
    base -= stale_;
    std::lock_guard<std::mutex> lock(mu_);
    if (overlay_sorted_ == nullptr) {
      auto sorted = std::make_shared<SortedRun<T>>();
      for (const auto& [v, o] : overlay_) {
        sorted->values.push_back(v);
        sorted->ordinals.push_back(o);
      }
      overlay_sorted_ = std::move(sorted);
    }
    const auto [b, e] = bounds(overlay_sorted_->values);
    std::vector<uint32_t> extra(overlay_sorted_->ordinals.begin() + b,
                                overlay_sorted_->ordinals.begin() + e);
    base.AddMany(extra.data(), extra.size());
    return base;
  }

 private:
  template <typename Bounds>
  RowSet QueryRuns(Bounds&& bounds) const {
    std::lock_guard<std::mutex> lock(mu_);
    Flush();
    std::vector<std::pair<size_t, size_t>> pos(runs_.size());
    size_t inside = 0, total = 0;
    for (size_t r = 0; r < runs_.size(); ++r) {
      pos[r] = bounds(runs_[r].values);
      inside += pos[r].second - pos[r].first;
      total += runs_[r].size();
    }
    if (inside == 0) return RowSet();
    if (inside * 2 <= total) {
      Collector c;
      for (size_t r = 0; r < runs_.size(); ++r) c.Take(runs_[r], pos[r].first, pos[r].second);
      return c.Finish();
    }
    // Most entries match: OR the smaller outside part and subtract it.
    Collector c;
    for (size_t r = 0; r < runs_.size(); ++r) {
      c.Take(runs_[r], 0, pos[r].first);
      c.Take(runs_[r], pos[r].second, runs_[r].size());
    }
    return indexed_ - c.Finish();
  }

  // Gathers whole buckets (OR'd at the end in one pass) and edge entries.
  struct Collector {
    std::vector<const roaring_bitmap_s*> whole;
    std::vector<uint32_t> edges;

    void Take(const SortedRun<T>& run, size_t begin, size_t end) {
      if (begin >= end) return;
      size_t first_full = (begin + kBucketEntries - 1) / kBucketEntries;
      size_t end_full = end / kBucketEntries;
      if (first_full >= end_full) {
        edges.insert(edges.end(), run.ordinals.begin() + begin, run.ordinals.begin() + end);
        return;
      }
      edges.insert(edges.end(), run.ordinals.begin() + begin,
                   run.ordinals.begin() + first_full * kBucketEntries);
      for (size_t b = first_full; b < end_full; ++b) whole.push_back(run.buckets[b].raw());
      edges.insert(edges.end(), run.ordinals.begin() + end_full * kBucketEntries,
                   run.ordinals.begin() + end);
    }

    RowSet Finish() {
      RowSet out = RowSet::UnionRaw(whole.data(), whole.size());
      std::sort(edges.begin(), edges.end());
      out.AddMany(edges.data(), edges.size());
      return out;
    }
  };

  // Sorts the tail by (value, ordinal) into `run` with an LSD radix sort on order-preserving
  // 64-bit keys: the tail's ordinals are already ascending (appends come in ordinal order)
  // and each pass is stable, so ties stay in ordinal order. Passes over a byte that every key
  // shares (most of them for small integers) are skipped; faster than std::sort on pairs.
  void SortTail(SortedRun<T>* run) const {
    struct Entry {
      uint64_t key;
      uint32_t ordinal;
    };
    const size_t n = tail_.size();
    std::vector<Entry> a(n), b(n);
    for (size_t i = 0; i < n; ++i) a[i] = {ToKey(tail_[i].first), tail_[i].second};
    for (int shift = 0; shift < 64; shift += 8) {
      size_t count[257] = {};
      for (const Entry& e : a) ++count[((e.key >> shift) & 0xFF) + 1];
      if (count[((a[0].key >> shift) & 0xFF) + 1] == n) continue;  // one digit: no reorder
      for (int d = 0; d < 256; ++d) count[d + 1] += count[d];
      for (const Entry& e : a) b[count[(e.key >> shift) & 0xFF]++] = e;
      a.swap(b);
    }
    run->values.resize(n);
    run->ordinals.resize(n);
    for (size_t i = 0; i < n; ++i) {
      run->values[i] = FromKey(a[i].key);
      run->ordinals[i] = a[i].ordinal;
    }
  }

  static uint64_t ToKey(int64_t v) { return static_cast<uint64_t>(v) ^ (uint64_t{1} << 63); }
  // IEEE order: flip every bit of negatives, only the sign bit of positives. -0.0 becomes
  // +0.0 first so that the two zeros, equal as values, are one key.
  static uint64_t ToKey(double v) {
    uint64_t bits = std::bit_cast<uint64_t>(v + 0.0);
    return (bits >> 63) ? ~bits : bits | (uint64_t{1} << 63);
  }
  static T FromKey(uint64_t k) {
    if constexpr (std::is_same_v<T, double>) {
      return std::bit_cast<double>((k >> 63) ? k ^ (uint64_t{1} << 63) : ~k);
    } else {
      return static_cast<int64_t>(k ^ (uint64_t{1} << 63));
    }
  }

  void Flush() const {
    if (tail_.empty()) return;
    SortedRun<T> run;
    SortTail(&run);
    tail_.clear();
    tail_.shrink_to_fit();
    runs_.push_back(std::move(run));
    while (runs_.size() >= 2 && runs_.back().size() * 2 > runs_[runs_.size() - 2].size()) {
      SortedRun<T> b = std::move(runs_.back());
      runs_.pop_back();
      SortedRun<T>& a = runs_.back();
      SortedRun<T> merged;
      merged.values.resize(a.size() + b.size());
      merged.ordinals.resize(a.size() + b.size());
      size_t i = 0, j = 0, k = 0;
      while (i < a.size() && j < b.size()) {
        // Ties keep ordinal order: every ordinal of a later run is larger.
        if (b.values[j] < a.values[i]) {
          merged.values[k] = b.values[j];
          merged.ordinals[k++] = b.ordinals[j++];
        } else {
          merged.values[k] = a.values[i];
          merged.ordinals[k++] = a.ordinals[i++];
        }
      }
      for (; i < a.size(); ++i, ++k) {
        merged.values[k] = a.values[i];
        merged.ordinals[k] = a.ordinals[i];
      }
      for (; j < b.size(); ++j, ++k) {
        merged.values[k] = b.values[j];
        merged.ordinals[k] = b.ordinals[j];
      }
      a = std::move(merged);
    }
    runs_.back().BuildBuckets();
  }

  mutable std::mutex mu_;
  mutable std::vector<std::pair<T, uint32_t>> tail_;
  mutable std::vector<SortedRun<T>> runs_;
  RowSet indexed_;  // every ordinal in the runs and the tail
  RowSet stale_;    // ordinals whose entry in the runs or the tail is outdated
  std::set<std::pair<T, uint32_t>> overlay_;     // current entries of updated ordinals
  std::unordered_map<uint32_t, T> overlay_of_;   // ordinal → its overlay value
  mutable std::shared_ptr<SortedRun<T>> overlay_sorted_;  // overlay_ as a run, built by queries
};

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};

using StringPostings = std::unordered_map<std::string, RowSet, StringHash, std::equal_to<>>;

RowSet Lookup(const std::unordered_map<int64_t, RowSet>& map, int64_t key) {
  auto it = map.find(key);
  return it == map.end() ? RowSet() : it->second;
}

RowSet Lookup(const StringPostings& map, std::string_view key) {
  auto it = map.find(key);
  return it == map.end() ? RowSet() : it->second;
}

}  // namespace

struct AttributeIndex::Impl {
  explicit Impl(AttrType t) : type(t) {}

  AttrType type;
  uint32_t rows = 0;
  RowSet nulls;
  RowSet non_null;
  std::unordered_map<int64_t, RowSet> int_postings;  // kInt, kBool
  StringPostings string_postings;                    // kString; kTags by element
  RangeIndex<int64_t> int_range;                     // kInt
  RangeIndex<double> float_range;                    // kFloat, NaN excluded
  // Values by ordinal for ValueAt; only the vector of `type` is used.
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;  // kString, kText
  std::vector<std::vector<std::string>> tags;
};

AttributeIndex::AttributeIndex(AttrType type) : impl_(std::make_unique<Impl>(type)) {}
AttributeIndex::~AttributeIndex() = default;
AttributeIndex::AttributeIndex(AttributeIndex&&) noexcept = default;
AttributeIndex& AttributeIndex::operator=(AttributeIndex&&) noexcept = default;

AttributeIndex AttributeIndex::Copy() const {
  AttributeIndex copy(impl_->type);
  copy.impl_ = std::make_unique<Impl>(*impl_);
  return copy;
}

AttrType AttributeIndex::type() const { return impl_->type; }
uint32_t AttributeIndex::rows() const { return impl_->rows; }
const RowSet& AttributeIndex::nulls() const { return impl_->nulls; }
const RowSet& AttributeIndex::non_null() const { return impl_->non_null; }

void AttributeIndex::Append(const Column& column) {
  Impl& m = *impl_;
  const uint32_t base = m.rows;
  const size_t n = column.size();
  std::vector<uint32_t> nulls, present;
  for (size_t i = 0; i < n; ++i) {
    (column.valid[i] ? present : nulls).push_back(base + static_cast<uint32_t>(i));
  }
  m.nulls.AddMany(nulls.data(), nulls.size());
  m.non_null.AddMany(present.data(), present.size());
  // Null and non-null sets are mostly long runs (all-null columns, dense columns).
  m.nulls.RunOptimize();
  m.non_null.RunOptimize();

  switch (m.type) {
    case AttrType::kInt:
    case AttrType::kBool:
      m.ints.insert(m.ints.end(), column.ints.begin(), column.ints.begin() + n);
      for (uint32_t o : present) {
        int64_t v = column.ints[o - base];
        if (m.type == AttrType::kBool) v = v != 0;
        m.int_postings[v].Add(o);
        if (m.type == AttrType::kInt) m.int_range.Add(v, o);
      }
      break;
    case AttrType::kFloat:
      m.floats.insert(m.floats.end(), column.floats.begin(), column.floats.begin() + n);
      for (uint32_t o : present) {
        double v = column.floats[o - base];
        if (!std::isnan(v)) m.float_range.Add(v, o);
      }
      break;
    case AttrType::kString:
      m.strings.insert(m.strings.end(), column.strings.begin(), column.strings.begin() + n);
      for (uint32_t o : present) m.string_postings[column.strings[o - base]].Add(o);
      break;
    case AttrType::kText:
      // The terms are the TextIndex's (index/text_index.h): only values and nulls here.
      m.strings.insert(m.strings.end(), column.strings.begin(), column.strings.begin() + n);
      break;
    case AttrType::kTags:
      m.tags.insert(m.tags.end(), column.tags.begin(), column.tags.begin() + n);
      for (uint32_t o : present) {
        // Duplicate tags in one list are harmless: Add is idempotent.
        for (const std::string& tag : column.tags[o - base]) m.string_postings[tag].Add(o);
      }
      break;
  }
  m.rows += static_cast<uint32_t>(n);
}

void AttributeIndex::Set(uint32_t ordinal, const Value& value) {
  Impl& m = *impl_;
  if (ordinal >= m.rows) return;
  const Value old = ValueAt(ordinal);
  if (old == value) return;
  auto unpost = [](auto& postings, const auto& key, uint32_t o) {
    auto it = postings.find(key);
    if (it == postings.end()) return;
    it->second.Remove(o);
    if (it->second.Empty()) postings.erase(it);
  };
  // Out of the old value's postings.
  if (!IsNull(old)) {
    switch (m.type) {
      case AttrType::kInt: unpost(m.int_postings, std::get<int64_t>(old), ordinal); break;
      case AttrType::kBool: unpost(m.int_postings, int64_t{std::get<bool>(old)}, ordinal); break;
      case AttrType::kFloat: break;
      case AttrType::kString:
        unpost(m.string_postings, std::get<std::string>(old), ordinal);
        break;
      case AttrType::kText:
        break;
      case AttrType::kTags:
        for (const std::string& t : std::get<std::vector<std::string>>(old)) {
          unpost(m.string_postings, t, ordinal);
        }
        break;
    }
  }
  // Into the new one's.
  if (IsNull(value)) {
    m.nulls.Add(ordinal);
    m.non_null.Remove(ordinal);
  } else {
    m.nulls.Remove(ordinal);
    m.non_null.Add(ordinal);
  }
  switch (m.type) {
    case AttrType::kInt: {
      const bool has = !IsNull(value);
      const int64_t v = has ? std::get<int64_t>(value) : 0;
      m.ints[ordinal] = v;
      if (has) m.int_postings[v].Add(ordinal);
      m.int_range.Update(ordinal, has ? std::optional<int64_t>(v) : std::nullopt);
      if (m.int_range.NeedsRebuild()) RebuildRange();
      break;
    }
    case AttrType::kBool: {
      const bool has = !IsNull(value);
      m.ints[ordinal] = has && std::get<bool>(value) ? 1 : 0;
      if (has) m.int_postings[m.ints[ordinal]].Add(ordinal);
      break;
    }
    case AttrType::kFloat: {
      const bool has = !IsNull(value);
      const double v = has ? std::get<double>(value) : 0;
      m.floats[ordinal] = v;
      m.float_range.Update(ordinal, has && !std::isnan(v) ? std::optional<double>(v)
                                                          : std::nullopt);
      if (m.float_range.NeedsRebuild()) RebuildRange();
      break;
    }
    case AttrType::kString:
      m.strings[ordinal] = IsNull(value) ? std::string() : std::get<std::string>(value);
      if (!IsNull(value)) m.string_postings[m.strings[ordinal]].Add(ordinal);
      break;
    case AttrType::kText:
      m.strings[ordinal] = IsNull(value) ? std::string() : std::get<std::string>(value);
      break;
    case AttrType::kTags:
      m.tags[ordinal] =
          IsNull(value) ? std::vector<std::string>() : std::get<std::vector<std::string>>(value);
      for (const std::string& t : m.tags[ordinal]) m.string_postings[t].Add(ordinal);
      break;
  }
}

void AttributeIndex::RebuildRange() {
  Impl& m = *impl_;
  if (m.type == AttrType::kInt) {
    m.int_range.Clear();
    m.non_null.ForEach([&](uint32_t o) { m.int_range.Add(m.ints[o], o); });
    m.int_range.Prepare();
  } else if (m.type == AttrType::kFloat) {
    m.float_range.Clear();
    m.non_null.ForEach([&](uint32_t o) {
      if (!std::isnan(m.floats[o])) m.float_range.Add(m.floats[o], o);
    });
    m.float_range.Prepare();
  }
}

RowSet AttributeIndex::EqualInt(int64_t v) const { return Lookup(impl_->int_postings, v); }

RowSet AttributeIndex::EqualString(std::string_view v) const {
  if (impl_->type != AttrType::kString) return RowSet();
  return Lookup(impl_->string_postings, v);
}

RowSet AttributeIndex::ContainsTag(std::string_view tag) const {
  if (impl_->type != AttrType::kTags) return RowSet();
  return Lookup(impl_->string_postings, tag);
}

RowSet AttributeIndex::Postings(const Value& value) const {
  switch (impl_->type) {
    case AttrType::kInt:
      if (auto* v = std::get_if<int64_t>(&value)) return EqualInt(*v);
      return RowSet();
    case AttrType::kBool:
      if (auto* v = std::get_if<bool>(&value)) return EqualInt(*v ? 1 : 0);
      return RowSet();
    case AttrType::kString:
    case AttrType::kTags:
      if (auto* v = std::get_if<std::string>(&value)) {
        return Lookup(impl_->string_postings, *v);
      }
      return RowSet();
    case AttrType::kFloat:
    case AttrType::kText:
      return RowSet();
  }
  return RowSet();
}

size_t AttributeIndex::distinct_values() const {
  switch (impl_->type) {
    case AttrType::kInt:
    case AttrType::kBool:
      return impl_->int_postings.size();
    case AttrType::kString:
    case AttrType::kTags:
      return impl_->string_postings.size();
    case AttrType::kFloat:
    case AttrType::kText:
      return 0;
  }
  return 0;
}

void AttributeIndex::ForEachPosting(
    const std::function<void(const Value&, const RowSet&)>& fn) const {
  const Impl& m = *impl_;
  switch (m.type) {
    case AttrType::kInt:
      for (const auto& [v, set] : m.int_postings) fn(Value(v), set);
      break;
    case AttrType::kBool:
      for (const auto& [v, set] : m.int_postings) fn(Value(v != 0), set);
      break;
    case AttrType::kString:
    case AttrType::kTags:
      for (const auto& [v, set] : m.string_postings) fn(Value(v), set);
      break;
    case AttrType::kFloat:
    case AttrType::kText:
      break;
  }
}

RowSet AttributeIndex::IntRange(int64_t lo, int64_t hi) const {
  if (impl_->type != AttrType::kInt || lo > hi) return RowSet();
  return impl_->int_range.Query([lo, hi](const std::vector<int64_t>& v) {
    auto b = std::lower_bound(v.begin(), v.end(), lo);
    auto e = std::upper_bound(b, v.end(), hi);
    return std::pair<size_t, size_t>(b - v.begin(), e - v.begin());
  });
}

RowSet AttributeIndex::FloatRange(double lo, bool lo_inclusive, double hi,
                                  bool hi_inclusive) const {
  if (impl_->type != AttrType::kFloat || std::isnan(lo) || std::isnan(hi)) return RowSet();
  if (lo > hi || (lo == hi && !(lo_inclusive && hi_inclusive))) return RowSet();
  return impl_->float_range.Query([=](const std::vector<double>& v) {
    auto b = lo_inclusive ? std::lower_bound(v.begin(), v.end(), lo)
                          : std::upper_bound(v.begin(), v.end(), lo);
    auto e = hi_inclusive ? std::upper_bound(b, v.end(), hi) : std::lower_bound(b, v.end(), hi);
    return std::pair<size_t, size_t>(b - v.begin(), e - v.begin());
  });
}

void AttributeIndex::BuildRangeIndex() const {
  if (impl_->type == AttrType::kInt) impl_->int_range.Prepare();
  if (impl_->type == AttrType::kFloat) impl_->float_range.Prepare();
}

Value AttributeIndex::ValueAt(uint32_t ordinal) const {
  const Impl& m = *impl_;
  if (ordinal >= m.rows || m.nulls.Contains(ordinal)) return Value();
  switch (m.type) {
    case AttrType::kInt:
      return Value(m.ints[ordinal]);
    case AttrType::kBool:
      return Value(m.ints[ordinal] != 0);
    case AttrType::kFloat:
      return Value(m.floats[ordinal]);
    case AttrType::kString:
    case AttrType::kText:
      return Value(m.strings[ordinal]);
    case AttrType::kTags:
      return Value(m.tags[ordinal]);
  }
  return Value();
}

}  // namespace sieve
