// Copyright 2026 The Sieve Authors.

#include "filter/filter.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "filter/ast.h"
#include "filter/parser.h"

namespace sieve {

namespace {

// long double (x87 80-bit) holds every int64 and every double exactly, so comparisons
// between int attributes and decimal literals, or float attributes and large integer
// literals, are decided exactly rather than after a rounding conversion.
static_assert(std::numeric_limits<long double>::digits >= 64,
              "exact int64/double comparisons need a 64-bit long double mantissa");
using Exact = long double;

Exact LiteralValue(const FilterLiteral& lit) {
  return lit.kind == FilterLiteral::Kind::kInt ? static_cast<Exact>(lit.i)
                                               : static_cast<Exact>(lit.d);
}

constexpr Exact kInf = std::numeric_limits<Exact>::infinity();

// Rows of an int attribute whose value v satisfies lo (<= or <) v (<= or <) hi.
RowSet IntInterval(const AttributeIndex& index, Exact lo, bool lo_incl, Exact hi, bool hi_incl) {
  constexpr Exact kMin = static_cast<Exact>(std::numeric_limits<int64_t>::min());
  constexpr Exact kMax = static_cast<Exact>(std::numeric_limits<int64_t>::max());
  Exact first = lo_incl ? std::ceil(lo) : std::floor(lo) + 1;
  Exact last = hi_incl ? std::floor(hi) : std::ceil(hi) - 1;
  first = std::max(first, kMin);
  last = std::min(last, kMax);
  if (first > last) return RowSet();
  return index.IntRange(static_cast<int64_t>(first), static_cast<int64_t>(last));
}

// The same for a float attribute: rewrites each bound as an equivalent double bound (a bound
// no double equals sits strictly between two doubles, which fixes its inclusivity).
RowSet FloatInterval(const AttributeIndex& index, Exact lo, bool lo_incl, Exact hi, bool hi_incl) {
  auto lower = [](Exact v, bool incl, double* out, bool* out_incl) {
    double d = static_cast<double>(v);
    if (static_cast<Exact>(d) == v || std::isinf(v)) {
      *out = d;
      *out_incl = incl;
    } else {
      *out = static_cast<Exact>(d) > v ? d : std::nextafter(d, HUGE_VAL);
      *out_incl = true;
    }
  };
  auto upper = [](Exact v, bool incl, double* out, bool* out_incl) {
    double d = static_cast<double>(v);
    if (static_cast<Exact>(d) == v || std::isinf(v)) {
      *out = d;
      *out_incl = incl;
    } else {
      *out = static_cast<Exact>(d) < v ? d : std::nextafter(d, -HUGE_VAL);
      *out_incl = true;
    }
  };
  double dlo, dhi;
  bool dlo_incl, dhi_incl;
  lower(lo, lo_incl, &dlo, &dlo_incl);
  upper(hi, hi_incl, &dhi, &dhi_incl);
  return index.FloatRange(dlo, dlo_incl, dhi, dhi_incl);
}

// Rows (non-null) whose value equals `lit`; the literal type-checked against the attribute.
RowSet Equal(const AttributeIndex& index, const FilterLiteral& lit) {
  switch (index.type()) {
    case AttrType::kInt: {
      // Equality goes to the postings (a hash lookup), not the range index.
      Exact v = LiteralValue(lit);
      constexpr Exact kMin = static_cast<Exact>(std::numeric_limits<int64_t>::min());
      constexpr Exact kMax = static_cast<Exact>(std::numeric_limits<int64_t>::max());
      if (std::floor(v) != v || v < kMin || v > kMax) return RowSet();
      return index.EqualInt(static_cast<int64_t>(v));
    }
    case AttrType::kFloat: {
      Exact v = LiteralValue(lit);
      return FloatInterval(index, v, true, v, true);
    }
    case AttrType::kString:
      return index.EqualString(lit.s);
    case AttrType::kBool:
      return index.EqualInt(lit.b ? 1 : 0);
    case AttrType::kTags:
    case AttrType::kText:
      break;
  }
  return RowSet();
}

RowSet Interval(const AttributeIndex& index, Exact lo, bool lo_incl, Exact hi, bool hi_incl) {
  if (index.type() == AttrType::kInt) return IntInterval(index, lo, lo_incl, hi, hi_incl);
  return FloatInterval(index, lo, lo_incl, hi, hi_incl);
}

// The non-null rows for which a test (not IS [NOT] NULL) is TRUE; its nulls are UNKNOWN and
// every other row FALSE. A negated test is TRUE exactly where its positive form is FALSE,
// which for a non-null NaN includes `x != 1.5`.
RowSet TestTrue(const FilterNode& n, const AttributeIndex& index) {
  using K = FilterNode::Kind;
  switch (n.kind) {
    case K::kCompare: {
      const FilterLiteral& lit = n.literals[0];
      switch (n.op) {
        case CompareOp::kEq:
          return Equal(index, lit);
        case CompareOp::kNe:
          return index.non_null() - Equal(index, lit);
        case CompareOp::kLt:
          return Interval(index, -kInf, true, LiteralValue(lit), false);
        case CompareOp::kLe:
          return Interval(index, -kInf, true, LiteralValue(lit), true);
        case CompareOp::kGt:
          return Interval(index, LiteralValue(lit), false, kInf, true);
        case CompareOp::kGe:
          return Interval(index, LiteralValue(lit), true, kInf, true);
      }
      break;
    }
    case K::kIn: {
      std::vector<RowSet> parts;
      parts.reserve(n.literals.size());
      for (const FilterLiteral& lit : n.literals) parts.push_back(Equal(index, lit));
      std::vector<const RowSet*> ptrs;
      for (const RowSet& p : parts) ptrs.push_back(&p);
      RowSet any = RowSet::Union(ptrs.data(), ptrs.size());
      return n.negated ? index.non_null() - any : any;
    }
    case K::kBetween:
      return Interval(index, LiteralValue(n.literals[0]), true, LiteralValue(n.literals[1]), true);
    case K::kContains:
      return index.ContainsTag(n.literals[0].s);
    default:
      break;
  }
  return RowSet();
}

// The rows (non-null) for which MATCH, MATCH_ALL or PHRASE is TRUE. A text that analyzes to
// no terms (only stop words, say) holds no term for a row to match: no row.
RowSet TextTrue(const FilterNode& n, const TextIndex& index) {
  using Op = FilterNode::TextOp;
  if (n.tokens.empty()) return RowSet();
  std::vector<const TextIndex::Postings*> postings;
  for (const TextToken& t : n.tokens) postings.push_back(index.Find(t.term));
  if (n.text_op == Op::kMatch) {
    std::vector<const roaring_bitmap_s*> sets;
    for (const TextIndex::Postings* p : postings) {
      if (p != nullptr) sets.push_back(p->rows().raw());
    }
    return RowSet::UnionRaw(sets.data(), sets.size());
  }
  // Every term, rarest first so the intersection shrinks at once.
  for (const TextIndex::Postings* p : postings) {
    if (p == nullptr) return RowSet();
  }
  std::vector<const TextIndex::Postings*> order = postings;
  std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return a->rows().Cardinality() < b->rows().Cardinality();
  });
  RowSet all = order[0]->rows();
  for (size_t i = 1; i < order.size() && !all.Empty(); ++i) all &= order[i]->rows();
  if (n.text_op == Op::kMatchAll || n.tokens.size() == 1) return all;
  // PHRASE: some start s with token i's term at s + (position_i - position_0) for every i.
  std::vector<uint32_t> passing;
  all.ForEach([&](uint32_t ordinal) {
    const uint32_t *b0 = nullptr, *e0 = nullptr;
    postings[0]->Positions(ordinal, &b0, &e0);
    for (const uint32_t* p = b0; p != e0; ++p) {
      bool found = true;
      for (size_t i = 1; i < postings.size() && found; ++i) {
        const uint64_t want = uint64_t{*p} + (n.tokens[i].position - n.tokens[0].position);
        const uint32_t *b = nullptr, *e = nullptr;
        found = postings[i]->Positions(ordinal, &b, &e) && std::binary_search(b, e, want);
      }
      if (found) {
        passing.push_back(ordinal);
        break;
      }
    }
  });
  return RowSet::Of(passing.data(), passing.size());
}

// The live rows for which a test of the row id is TRUE (ids are never null).
RowSet IdTestTrue(const FilterNode& n, const ShardIndex& shard) {
  using K = FilterNode::Kind;
  auto one = [&](int64_t id) {
    uint32_t ordinal = 0;
    RowSet r;
    if (shard.FindLive(id, &ordinal)) r.Add(ordinal);
    return r;
  };
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  switch (n.kind) {
    case K::kCompare: {
      const int64_t v = n.literals[0].i;
      switch (n.op) {
        case CompareOp::kEq: return one(v);
        case CompareOp::kNe: return shard.Live() - one(v);
        case CompareOp::kLt: return v == kMin ? RowSet() : shard.IdRange(kMin, v - 1);
        case CompareOp::kLe: return shard.IdRange(kMin, v);
        case CompareOp::kGt: return v == kMax ? RowSet() : shard.IdRange(v + 1, kMax);
        case CompareOp::kGe: return shard.IdRange(v, kMax);
      }
      break;
    }
    case K::kIn: {
      RowSet any;
      for (const FilterLiteral& lit : n.literals) {
        uint32_t ordinal = 0;
        if (shard.FindLive(lit.i, &ordinal)) any.Add(ordinal);
      }
      return n.negated ? shard.Live() - any : any;
    }
    case K::kBetween:
      return shard.IdRange(n.literals[0].i, n.literals[1].i);
    default:
      break;
  }
  return RowSet();
}

// A node's value under SQL's three-valued logic: the rows where it is TRUE and, when asked
// for, the rows where it is UNKNOWN; FALSE is the rest of [0, rows). Only NOT needs UNKNOWN
// (NOT UNKNOWN stays UNKNOWN while NOT FALSE becomes TRUE), so it is computed only beneath a
// NOT; above, TRUE alone composes exactly.
struct Truth {
  RowSet t;
  RowSet u;  // valid only when computed with need_unknown
};

class Compiler {
 public:
  explicit Compiler(const ShardIndex& shard) : shard_(shard) {}

  Truth Eval(const FilterNode& n, bool need_unknown) {
    using K = FilterNode::Kind;
    Truth out;
    switch (n.kind) {
      case K::kAll:
        out.t = RowSet::Range(0, shard_.rows());
        break;
      case K::kIsNull: {
        if (n.is_id) {
          if (n.negated) out.t = shard_.Live();
          break;
        }
        const AttributeIndex& index = shard_.attribute(n.attr);
        out.t = n.negated ? index.non_null() : index.nulls();
        break;
      }
      case K::kCompare:
      case K::kIn:
      case K::kBetween:
      case K::kContains: {
        if (n.is_id) {
          out.t = IdTestTrue(n, shard_);
          break;
        }
        const AttributeIndex& index = shard_.attribute(n.attr);
        out.t = TestTrue(n, index);
        if (need_unknown) out.u = index.nulls();
        break;
      }
      case K::kText: {
        out.t = TextTrue(n, *shard_.text(n.attr));
        if (need_unknown) out.u = shard_.attribute(n.attr).nulls();
        break;
      }
      case K::kNot: {
        Truth c = Eval(*n.children[0], true);
        out.t = RowSet::Range(0, shard_.rows());
        out.t -= c.t;
        out.t -= c.u;
        out.u = std::move(c.u);
        break;
      }
      case K::kAnd:
        out = Eval(*n.children[0], need_unknown);
        for (size_t i = 1; i < n.children.size(); ++i) {
          if (!need_unknown && out.t.Empty()) break;
          Truth c = Eval(*n.children[i], need_unknown);
          if (need_unknown) {
            // UNKNOWN: neither side FALSE and at least one UNKNOWN.
            bool u1 = !out.u.Empty(), u2 = !c.u.Empty();
            RowSet u;
            if (u1) u = out.u & (c.t | c.u);
            if (u2) u |= c.u & out.t;
            out.u = std::move(u);
          }
          out.t &= c.t;
        }
        break;
      case K::kOr: {
        out = Eval(*n.children[0], need_unknown);
        for (size_t i = 1; i < n.children.size(); ++i) {
          Truth c = Eval(*n.children[i], need_unknown);
          out.t |= c.t;
          if (need_unknown) {
            // UNKNOWN: not TRUE and at least one UNKNOWN.
            out.u |= c.u;
            out.u -= out.t;
          }
        }
        break;
      }
    }
    return out;
  }

 private:
  const ShardIndex& shard_;
};

}  // namespace

Filter::Filter(std::unique_ptr<FilterNode> root) : root_(std::move(root)) {}
Filter::~Filter() = default;
Filter::Filter(Filter&&) noexcept = default;
Filter& Filter::operator=(Filter&&) noexcept = default;

Status Filter::Parse(std::string_view text, const CollectionSpec& spec,
                     std::unique_ptr<Filter>* out) {
  std::unique_ptr<FilterNode> root;
  SIEVE_RETURN_IF_ERROR(ParseFilter(text, spec, &root));
  out->reset(new Filter(std::move(root)));
  return Status::OK();
}

bool Filter::MatchesAll() const { return root_->kind == FilterNode::Kind::kAll; }

std::string Filter::ToString() const { return FilterToString(*root_); }

RowSet Filter::Compile(const ShardIndex& shard) const {
  if (MatchesAll()) return shard.Live();
  RowSet out = Compiler(shard).Eval(*root_, false).t;
  out -= shard.deleted();
  return out;
}

}  // namespace sieve
