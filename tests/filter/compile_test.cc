// Copyright 2026 The Sieve Authors.
//
// Compiles random filters over random rows and compares the passing rows with an independent
// oracle: the test generates its own expression tree, renders it as filter text (random case,
// spacing and redundant parentheses), and evaluates the tree row by row in SQL's three-valued
// logic. Nothing of filter/ is reused by the oracle.

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "filter/filter.h"
#include "tests/testutil.h"

namespace sieve {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

CollectionSpec Spec() {
  CollectionSpec spec;
  spec.name = "c";
  spec.dim = 1;
  spec.attributes = {{"i", AttrType::kInt},  {"f", AttrType::kFloat}, {"s", AttrType::kString},
                     {"b", AttrType::kBool}, {"t", AttrType::kTags},  {"j", AttrType::kInt},
                     {"g", AttrType::kFloat}};
  return spec;
}

// ---- Random rows ----

using Row = std::vector<Value>;

Value RandomValue(std::mt19937_64& rng, AttrType type, double null_rate) {
  if (std::uniform_real_distribution<double>(0, 1)(rng) < null_rate) return Value();
  switch (type) {
    case AttrType::kInt:
      if (rng() % 40 == 0) return Value(rng() % 2 ? kMin : kMax);
      return Value(static_cast<int64_t>(rng() % 11) - 5);
    case AttrType::kFloat:
      switch (rng() % 40) {
        case 0:
          return Value(kNaN);
        case 1:
          return Value(rng() % 2 ? kInf : -kInf);
        case 2:
          return Value(9007199254740992.0);  // 2^53: tests exact int-literal comparisons
        default:
          return Value(static_cast<double>(static_cast<int>(rng() % 25) - 12) * 0.25);
      }
    case AttrType::kString: {
      static const char* kStrings[] = {"a", "b", "c", "it's", "", "A"};
      return Value(std::string(kStrings[rng() % 6]));
    }
    case AttrType::kBool:
      return Value(rng() % 2 == 0);
    case AttrType::kTags: {
      static const char* kTags[] = {"x", "y", "z"};
      std::vector<std::string> tags;
      size_t n = rng() % 4;  // includes the empty list, which is not null
      for (size_t k = 0; k < n; ++k) tags.push_back(kTags[rng() % 3]);
      return Value(tags);
    }
    case AttrType::kText:  // text_compile_test.cc
      break;
  }
  return Value();
}

Column ToColumn(const std::vector<Row>& rows, size_t begin, size_t end, size_t attr,
                AttrType type) {
  Column c;
  c.type = type;
  for (size_t r = begin; r < end; ++r) {
    const Value& v = rows[r][attr];
    c.valid.push_back(!IsNull(v));
    c.ints.push_back(0);
    c.floats.push_back(0);
    c.strings.emplace_back();
    c.tags.emplace_back();
    if (IsNull(v)) continue;
    if (type == AttrType::kInt) c.ints.back() = std::get<int64_t>(v);
    if (type == AttrType::kBool) c.ints.back() = std::get<bool>(v);
    if (type == AttrType::kFloat) c.floats.back() = std::get<double>(v);
    if (type == AttrType::kString) c.strings.back() = std::get<std::string>(v);
    if (type == AttrType::kTags) c.tags.back() = std::get<std::vector<std::string>>(v);
  }
  return c;
}

Chunk ToChunk(const CollectionSpec& spec, const std::vector<Row>& rows, size_t begin, size_t end) {
  Chunk c;
  c.first_ordinal = static_cast<uint32_t>(begin);
  c.num_rows = static_cast<uint32_t>(end - begin);
  c.vectors.assign(end - begin, 0.5f);
  for (size_t r = begin; r < end; ++r) c.ids.push_back(static_cast<int64_t>(r) * 7);
  for (size_t a = 0; a < spec.attributes.size(); ++a) {
    c.columns.push_back(ToColumn(rows, begin, end, a, spec.attributes[a].type));
  }
  return c;
}

// ---- The oracle's own expression tree ----

struct Lit {
  enum Kind { kInt, kDec, kStr, kBool };
  explicit Lit(Kind k) : kind(k) {}
  Kind kind;
  int64_t i = 0;
  double d = 0;
  std::string s;
  bool b = false;
};

struct Expr {
  enum Kind { kAnd, kOr, kNot, kCmp, kIn, kNotIn, kBetween, kContains, kIsNull, kIsNotNull };
  Kind kind;
  std::vector<Expr> kids;
  size_t attr = 0;
  std::string op;  // kCmp: "=", "!=", "<>", "<", "<=", ">", ">="
  std::vector<Lit> lits;
};

enum class Tri { kFalse, kTrue, kUnknown };

Tri Not(Tri x) {
  if (x == Tri::kUnknown) return x;
  return x == Tri::kTrue ? Tri::kFalse : Tri::kTrue;
}

// Exact comparison of a numeric value with a literal: long double holds every int64 and
// double exactly. Returns -1, 0, 1, or 2 when unordered (NaN).
int Cmp(long double v, const Lit& l) {
  long double w = l.kind == Lit::kInt ? static_cast<long double>(l.i) : l.d;
  if (std::isnan(v)) return 2;
  return v < w ? -1 : v > w ? 1 : 0;
}

long double Numeric(const Value& v) {
  if (std::holds_alternative<int64_t>(v)) return static_cast<long double>(std::get<int64_t>(v));
  return std::get<double>(v);
}

bool Equal(const Value& v, const Lit& l) {
  if (std::holds_alternative<std::string>(v)) return std::get<std::string>(v) == l.s;
  if (std::holds_alternative<bool>(v)) return std::get<bool>(v) == l.b;
  return Cmp(Numeric(v), l) == 0;
}

Tri Eval(const Expr& e, const Row& row) {
  auto tri = [](bool x) { return x ? Tri::kTrue : Tri::kFalse; };
  switch (e.kind) {
    case Expr::kAnd: {
      Tri out = Tri::kTrue;
      for (const Expr& k : e.kids) {
        Tri x = Eval(k, row);
        if (x == Tri::kFalse) return Tri::kFalse;
        if (x == Tri::kUnknown) out = Tri::kUnknown;
      }
      return out;
    }
    case Expr::kOr: {
      Tri out = Tri::kFalse;
      for (const Expr& k : e.kids) {
        Tri x = Eval(k, row);
        if (x == Tri::kTrue) return Tri::kTrue;
        if (x == Tri::kUnknown) out = Tri::kUnknown;
      }
      return out;
    }
    case Expr::kNot:
      return Not(Eval(e.kids[0], row));
    case Expr::kIsNull:
      return tri(IsNull(row[e.attr]));
    case Expr::kIsNotNull:
      return tri(!IsNull(row[e.attr]));
    default:
      break;
  }
  const Value& v = row[e.attr];
  if (IsNull(v)) return Tri::kUnknown;
  switch (e.kind) {
    case Expr::kCmp: {
      if (e.op == "=") return tri(Equal(v, e.lits[0]));
      if (e.op == "!=" || e.op == "<>") return tri(!Equal(v, e.lits[0]));
      int c = Cmp(Numeric(v), e.lits[0]);
      if (c == 2) return Tri::kFalse;  // NaN is unordered
      if (e.op == "<") return tri(c < 0);
      if (e.op == "<=") return tri(c <= 0);
      if (e.op == ">") return tri(c > 0);
      return tri(c >= 0);
    }
    case Expr::kIn:
    case Expr::kNotIn: {
      bool any = false;
      for (const Lit& l : e.lits) any = any || Equal(v, l);
      return tri(e.kind == Expr::kIn ? any : !any);
    }
    case Expr::kBetween: {
      int lo = Cmp(Numeric(v), e.lits[0]), hi = Cmp(Numeric(v), e.lits[1]);
      return tri(lo != 2 && lo >= 0 && hi != 2 && hi <= 0);
    }
    case Expr::kContains: {
      for (const std::string& t : std::get<std::vector<std::string>>(v)) {
        if (t == e.lits[0].s) return Tri::kTrue;
      }
      return Tri::kFalse;
    }
    default:
      return Tri::kFalse;
  }
}

// ---- Random filters and their text ----

class Generator {
 public:
  Generator(const CollectionSpec& spec, uint64_t seed) : spec_(spec), rng_(seed) {}

  Expr Random(int depth) {
    int pick = static_cast<int>(rng_() % 10);
    if (depth <= 0 || pick < 4) return Test();
    Expr e;
    if (pick < 6) {
      e.kind = Expr::kNot;
      e.kids.push_back(Random(depth - 1));
      return e;
    }
    e.kind = pick < 8 ? Expr::kAnd : Expr::kOr;
    size_t n = 2 + rng_() % 3;
    for (size_t k = 0; k < n; ++k) e.kids.push_back(Random(depth - 1));
    return e;
  }

  // Renders with the minimal parentheses the precedence needs, plus random redundant ones,
  // random keyword case and random spacing.
  std::string Render(const Expr& e) {
    std::string s = RenderBare(e);
    if (rng_() % 8 == 0) s = "(" + Space() + s + Space() + ")";
    return s;
  }

 private:
  Lit IntLit() {
    Lit l{Lit::kInt};
    switch (rng_() % 12) {
      case 0:
        l.i = rng_() % 2 ? kMin : kMax;
        break;
      case 1:
        l.i = 9007199254740993;  // 2^53 + 1: no double equals it
        break;
      default:
        l.i = static_cast<int64_t>(rng_() % 15) - 7;
    }
    return l;
  }

  Lit NumLit() {
    if (rng_() % 2) return IntLit();
    Lit l{Lit::kDec};
    switch (rng_() % 10) {
      case 0:
        l.d = 1e300;
        break;
      case 1:
        l.d = -0.0;
        break;
      default:
        // Quarter steps hit stored values exactly; tenths fall between them.
        l.d = rng_() % 2 ? static_cast<double>(static_cast<int>(rng_() % 29) - 14) * 0.25
                         : static_cast<double>(static_cast<int>(rng_() % 141) - 70) * 0.1;
    }
    return l;
  }

  Lit LitFor(AttrType type) {
    switch (type) {
      case AttrType::kInt:
      case AttrType::kFloat:
        return NumLit();
      case AttrType::kString: {
        static const char* kStrings[] = {"a", "b", "it's", "", "zz", "A"};
        Lit l{Lit::kStr};
        l.s = kStrings[rng_() % 6];
        return l;
      }
      case AttrType::kBool: {
        Lit l{Lit::kBool};
        l.b = rng_() % 2;
        return l;
      }
      case AttrType::kTags: {
        static const char* kTags[] = {"x", "y", "w"};
        Lit l{Lit::kStr};
        l.s = kTags[rng_() % 3];
        return l;
      }
      case AttrType::kText:  // text_compile_test.cc
        break;
    }
    return Lit{Lit::kInt};
  }

  Expr Test() {
    Expr e;
    e.attr = rng_() % spec_.attributes.size();
    AttrType type = spec_.attributes[e.attr].type;
    bool numeric = type == AttrType::kInt || type == AttrType::kFloat;
    int pick = static_cast<int>(rng_() % 12);
    if (pick == 0) {
      e.kind = Expr::kIsNull;
    } else if (pick == 1) {
      e.kind = Expr::kIsNotNull;
    } else if (type == AttrType::kTags) {
      e.kind = Expr::kContains;
      e.lits.push_back(LitFor(type));
    } else if (pick < 6) {
      static const char* kEq[] = {"=", "!=", "<>"};
      static const char* kAll[] = {"=", "!=", "<>", "<", "<=", ">", ">="};
      e.kind = Expr::kCmp;
      e.op = numeric ? kAll[rng_() % 7] : kEq[rng_() % 3];
      e.lits.push_back(LitFor(type));
    } else if (pick < 9 || !numeric) {
      e.kind = rng_() % 2 ? Expr::kIn : Expr::kNotIn;
      size_t n = 1 + rng_() % 3;
      for (size_t k = 0; k < n; ++k) e.lits.push_back(LitFor(type));
    } else {
      e.kind = Expr::kBetween;
      e.lits.push_back(LitFor(type));
      e.lits.push_back(LitFor(type));
    }
    return e;
  }

  std::string Space() {
    static const char* kSpaces[] = {"", " ", "  ", "\t", "\n "};
    return kSpaces[rng_() % 5];
  }
  std::string Sep() {  // at least one space
    static const char* kSeps[] = {" ", "  ", "\t", " \n"};
    return kSeps[rng_() % 4];
  }
  std::string Kw(std::string word) {
    for (char& c : word) {
      if (rng_() % 3 == 0) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return word;
  }

  std::string LitText(const Lit& l) {
    switch (l.kind) {
      case Lit::kInt:
        return std::to_string(l.i);
      case Lit::kDec: {
        char buf[64];
        // Several spellings of the same decimal.
        switch (rng_() % 3) {
          case 0:
            std::snprintf(buf, sizeof(buf), "%.17g", l.d);
            break;
          case 1:
            std::snprintf(buf, sizeof(buf), "%.17e", l.d);
            break;
          default:
            std::snprintf(buf, sizeof(buf), "%.17E", l.d);
        }
        std::string s = buf;
        if (s.find_first_of(".eE") == std::string::npos) s += ".0";
        return s;
      }
      case Lit::kStr: {
        std::string s = "'";
        for (char c : l.s) s += c == '\'' ? "''" : std::string(1, c);
        return s + "'";
      }
      case Lit::kBool:
        return Kw(l.b ? "TRUE" : "FALSE");
    }
    return "";
  }

  std::string RenderBare(const Expr& e) {
    const std::string& name = spec_.attributes[e.attr].name;
    switch (e.kind) {
      case Expr::kAnd:
      case Expr::kOr: {
        std::string out;
        for (size_t k = 0; k < e.kids.size(); ++k) {
          if (k > 0) out += Sep() + Kw(e.kind == Expr::kAnd ? "AND" : "OR") + Sep();
          const Expr& kid = e.kids[k];
          std::string s = Render(kid);
          // OR inside AND needs parentheses; AND inside OR does not.
          bool needs = e.kind == Expr::kAnd && kid.kind == Expr::kOr;
          out += needs ? "(" + s + ")" : s;
        }
        return out;
      }
      case Expr::kNot: {
        const Expr& kid = e.kids[0];
        bool needs = kid.kind == Expr::kAnd || kid.kind == Expr::kOr;
        std::string s = Render(kid);
        return Kw("NOT") + Sep() + (needs ? "(" + s + ")" : s);
      }
      case Expr::kCmp:
        return name + Space() + e.op + Space() + LitText(e.lits[0]);
      case Expr::kIn:
      case Expr::kNotIn: {
        std::string out = name + Sep() +
                          (e.kind == Expr::kNotIn ? Kw("NOT") + Sep() : std::string()) + Kw("IN") +
                          Space() + "(";
        for (size_t k = 0; k < e.lits.size(); ++k) {
          if (k > 0) out += Space() + "," + Space();
          out += LitText(e.lits[k]);
        }
        return out + ")";
      }
      case Expr::kBetween:
        return name + Sep() + Kw("BETWEEN") + Sep() + LitText(e.lits[0]) + Sep() + Kw("AND") +
               Sep() + LitText(e.lits[1]);
      case Expr::kContains:
        return name + Sep() + Kw("CONTAINS") + Sep() + LitText(e.lits[0]);
      case Expr::kIsNull:
        return name + Sep() + Kw("IS") + Sep() + Kw("NULL");
      case Expr::kIsNotNull:
        return name + Sep() + Kw("IS") + Sep() + Kw("NOT") + Sep() + Kw("NULL");
    }
    return "";
  }

  const CollectionSpec& spec_;
  std::mt19937_64 rng_;
};

std::vector<uint32_t> Rows(const RowSet& s) {
  std::vector<uint32_t> out;
  s.ForEach([&](uint32_t v) { out.push_back(v); });
  return out;
}

struct Config {
  size_t rows;
  std::vector<double> null_rates;  // per attribute
  uint64_t seed;
};

void RunRandom(const Config& cfg, int filters) {
  const CollectionSpec spec = Spec();
  std::mt19937_64 rng(cfg.seed);
  std::vector<Row> rows(cfg.rows);
  for (Row& r : rows) {
    for (size_t a = 0; a < spec.attributes.size(); ++a) {
      r.push_back(RandomValue(rng, spec.attributes[a].type, cfg.null_rates[a]));
    }
  }
  ShardIndex shard(spec, 0);
  Generator gen(spec, cfg.seed * 31 + 7);
  // Appended in uneven chunks with queries in between, so the range indexes see appends after
  // queries; then some rows are deleted.
  size_t applied = 0;
  std::vector<bool> deleted(cfg.rows, false);
  int checked = 0, nonempty = 0, not_all = 0;
  for (int round = 0; round < 4; ++round) {
    size_t target = round == 3 ? cfg.rows : std::min(cfg.rows, applied + 1 + rng() % cfg.rows / 3);
    if (target > applied) {
      shard.ApplyChunk(ToChunk(spec, rows, applied, target));
      applied = target;
    }
    if (round >= 2) {
      RowSet del = shard.deleted();
      for (size_t r = 0; r < applied; ++r) {
        if (rng() % 10 == 0) {
          del.Add(static_cast<uint32_t>(r));
          deleted[r] = true;
        }
      }
      shard.SetDeleted(del);
    }
    for (int q = 0; q < filters / 4; ++q) {
      Expr e = gen.Random(1 + q % 5);
      std::string text = gen.Render(e);
      std::unique_ptr<Filter> f;
      Status s = Filter::Parse(text, spec, &f);
      ASSERT_TRUE(s.ok()) << s.ToString() << "\nfilter: " << text;
      std::vector<uint32_t> expect;
      for (size_t r = 0; r < applied; ++r) {
        if (!deleted[r] && Eval(e, rows[r]) == Tri::kTrue) expect.push_back(r);
      }
      RowSet got = f->Compile(shard);
      ASSERT_EQ(Rows(got), expect) << "filter: " << text << "\ncanonical: " << f->ToString();
      ASSERT_EQ(got.Cardinality(), expect.size());
      // The canonical text means the same filter.
      std::unique_ptr<Filter> again;
      ASSERT_TRUE(Filter::Parse(f->ToString(), spec, &again).ok()) << f->ToString();
      ASSERT_EQ(again->ToString(), f->ToString());
      ASSERT_TRUE(again->Compile(shard) == got) << f->ToString();
      ++checked;
      nonempty += !expect.empty();
      not_all += expect.size() < shard.live_rows();
    }
  }
  // The generator must produce informative filters, not only empty or full results.
  EXPECT_GT(nonempty, checked / 5);
  EXPECT_GT(not_all, checked / 5);
}

TEST(FilterCompileTest, RandomFiltersMatchThreeValuedOracle) {
  RunRandom({3000, {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}, 1}, 2000);
}

TEST(FilterCompileTest, RandomFiltersWithManyNulls) {
  RunRandom({2000, {0.5, 0.3, 0.6, 0.5, 0.4, 0.0, 0.9}, 2}, 2000);
}

TEST(FilterCompileTest, RandomFiltersWithAllAndNoNulls) {
  RunRandom({1500, {1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0}, 3}, 1200);
}

TEST(FilterCompileTest, RandomFiltersOverManyContainers) {
  // Rows spread over several 65536-row Roaring containers.
  RunRandom({150000, {0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2}, 4}, 80);
}

// Hand-picked cases whose answer is known without an oracle.
class FilterCompileFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_ = Spec();
    rows_ = {
        // i,     f,       s,     b,     t,                        j,    g
        {Value(int64_t{1}), Value(0.5), Value(std::string("a")), Value(true),
         Value(std::vector<std::string>{"x"}), Value(int64_t{2}), Value(kNaN)},
        {Value(), Value(), Value(), Value(), Value(), Value(), Value()},
        {Value(int64_t{3}), Value(2.5), Value(std::string("b")), Value(false),
         Value(std::vector<std::string>{}), Value(kMax), Value(1.0)},
        {Value(kMin), Value(-kInf), Value(std::string("")), Value(true),
         Value(std::vector<std::string>{"x", "y"}), Value(), Value(9007199254740992.0)},
    };
    shard_ = std::make_unique<ShardIndex>(spec_, 0);
    shard_->ApplyChunk(ToChunk(spec_, rows_, 0, rows_.size()));
  }

  std::vector<uint32_t> Pass(const std::string& text) {
    std::unique_ptr<Filter> f;
    Status s = Filter::Parse(text, spec_, &f);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!s.ok()) return {99};
    return Rows(f->Compile(*shard_));
  }

  CollectionSpec spec_;
  std::vector<Row> rows_;
  std::unique_ptr<ShardIndex> shard_;
};

using V = std::vector<uint32_t>;

TEST_F(FilterCompileFixture, NullsAreUnknownNotFalse) {
  EXPECT_EQ(Pass("i = 1"), V({0}));
  EXPECT_EQ(Pass("NOT i = 1"), V({2, 3}));  // row 1 (null) is UNKNOWN either way
  EXPECT_EQ(Pass("i != 1"), V({2, 3}));
  EXPECT_EQ(Pass("NOT NOT i = 1"), V({0}));
  EXPECT_EQ(Pass("i IS NULL"), V({1}));
  EXPECT_EQ(Pass("NOT i IS NULL"), V({0, 2, 3}));
  EXPECT_EQ(Pass("i = 1 OR i IS NULL"), V({0, 1}));
  EXPECT_EQ(Pass("NOT (i = 1 AND s = 'zz')"), V({0, 2, 3}));  // FALSE AND UNKNOWN = FALSE
  EXPECT_EQ(Pass("NOT (i = 7 OR s = 'a')"), V({2, 3}));
  EXPECT_EQ(Pass("NOT (j = 2 AND i = 1)"), V({2, 3}));  // row 3: NOT (UNKNOWN AND FALSE)
  EXPECT_EQ(Pass("NOT (j = 2 OR i = 1)"), V({2}));      // row 3: NOT (UNKNOWN OR FALSE)
  EXPECT_EQ(Pass("i NOT IN (1, 3)"), V({3}));
  EXPECT_EQ(Pass("NOT i IN (1, 3)"), V({3}));
}

TEST_F(FilterCompileFixture, TagsEmptyListIsNotNull) {
  EXPECT_EQ(Pass("t CONTAINS 'x'"), V({0, 3}));
  EXPECT_EQ(Pass("NOT t CONTAINS 'x'"), V({2}));  // the empty list: FALSE, so NOT is TRUE
  EXPECT_EQ(Pass("t IS NULL"), V({1}));
  EXPECT_EQ(Pass("t IS NOT NULL"), V({0, 2, 3}));
}

TEST_F(FilterCompileFixture, NumericEdges) {
  EXPECT_EQ(Pass("i < 2.5"), V({0, 3}));  // int vs decimal compares numerically
  EXPECT_EQ(Pass("i <= 2"), V({0, 3}));
  EXPECT_EQ(Pass("i = 2.5"), V({}));
  EXPECT_EQ(Pass("i = 3.0"), V({2}));
  EXPECT_EQ(Pass("i > -9223372036854775808"), V({0, 2}));
  EXPECT_EQ(Pass("i >= -9223372036854775808"), V({0, 2, 3}));
  EXPECT_EQ(Pass("j >= 9223372036854775807"), V({2}));
  EXPECT_EQ(Pass("j > 9223372036854775807"), V({}));
  EXPECT_EQ(Pass("j > 1e300"), V({}));
  EXPECT_EQ(Pass("j < 1e300"), V({0, 2}));
  EXPECT_EQ(Pass("i > -1e300"), V({0, 2, 3}));
  EXPECT_EQ(Pass("f < 0"), V({3}));  // -inf is a value
  EXPECT_EQ(Pass("f BETWEEN 0.5 AND 2.5"), V({0, 2}));
  EXPECT_EQ(Pass("f BETWEEN 2.5 AND 0.5"), V({}));
  EXPECT_EQ(Pass("g = 1"), V({2}));
  EXPECT_EQ(Pass("g > 0"), V({2, 3}));             // NaN never matches a range
  EXPECT_EQ(Pass("g != 1"), V({0, 3}));            // but NaN != 1 is TRUE (IEEE)
  EXPECT_EQ(Pass("g = 9007199254740993"), V({}));  // 2^53 + 1 is no double
  EXPECT_EQ(Pass("g < 9007199254740993"), V({2, 3}));
  EXPECT_EQ(Pass("g > 9007199254740991"), V({3}));
  EXPECT_EQ(Pass("b = true"), V({0, 3}));
  EXPECT_EQ(Pass("b != true"), V({2}));
  EXPECT_EQ(Pass("s = ''"), V({3}));
  EXPECT_EQ(Pass("s IN ('a', 'b')"), V({0, 2}));
}

TEST_F(FilterCompileFixture, DeletedRowsNeverPass) {
  RowSet del;
  del.Add(0);
  del.Add(1);
  shard_->SetDeleted(del);
  EXPECT_EQ(Pass(""), V({2, 3}));
  EXPECT_EQ(Pass("i = 1"), V({}));
  EXPECT_EQ(Pass("i IS NULL"), V({}));
  EXPECT_EQ(Pass("NOT i = 3"), V({3}));
}

TEST_F(FilterCompileFixture, EmptyFilterIsLive) {
  EXPECT_EQ(Pass(""), V({0, 1, 2, 3}));
  EXPECT_EQ(Pass("  "), V({0, 1, 2, 3}));
}

// The brief's target: a 3-clause filter over 1M rows compiles in about 2 ms (Release).
// A three-clause filter over a shard loaded in batches counts exactly the rows a brute force
// counts, also when compiled again (the timing is tools/bench/filter_bench's).
TEST(CompileTest, ThreeClausesOverManyRows) {
  CollectionSpec spec;
  spec.name = "perf";
  spec.dim = 1;
  spec.attributes = {{"a", AttrType::kInt}, {"b", AttrType::kFloat}, {"c", AttrType::kString}};
  const uint32_t n = 200000;
  std::mt19937_64 rng(9);
  std::vector<int64_t> a(n);
  std::vector<double> b(n);
  std::vector<std::string> c(n);
  static const char* kC[] = {"x", "y", "z", "w", "v"};
  ShardIndex shard(spec, 0);
  const uint32_t batch = 65536;
  for (uint32_t first = 0; first < n; first += batch) {
    uint32_t m = std::min(batch, n - first);
    Chunk ch;
    ch.first_ordinal = first;
    ch.num_rows = m;
    ch.vectors.assign(m, 0.f);
    ch.columns.resize(3);
    ch.columns[0].type = AttrType::kInt;
    ch.columns[1].type = AttrType::kFloat;
    ch.columns[2].type = AttrType::kString;
    for (uint32_t r = first; r < first + m; ++r) {
      a[r] = static_cast<int64_t>(rng() % 10);
      b[r] = std::uniform_real_distribution<double>(0, 1)(rng);
      c[r] = kC[rng() % 5];
      ch.ids.push_back(r);
      for (auto& col : ch.columns) col.valid.push_back(1);
      ch.columns[0].ints.push_back(a[r]);
      ch.columns[1].floats.push_back(b[r]);
      ch.columns[2].strings.push_back(c[r]);
    }
    shard.ApplyChunk(ch);
  }
  std::unique_ptr<Filter> f;
  ASSERT_TRUE(Filter::Parse("a = 3 AND b BETWEEN 0.2 AND 0.5 AND c IN ('x','y')", spec, &f).ok());
  uint64_t expect = 0;
  for (uint32_t r = 0; r < n; ++r) {
    expect += a[r] == 3 && b[r] >= 0.2 && b[r] <= 0.5 && (c[r] == "x" || c[r] == "y");
  }
  RowSet first = f->Compile(shard);  // also merges the range index's appended tail
  ASSERT_EQ(first.Cardinality(), expect);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(f->Compile(shard), first);
}

}  // namespace
}  // namespace sieve
