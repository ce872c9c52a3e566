// Copyright 2026 The Sieve Authors.
//
// MATCH, MATCH_ALL and PHRASE against a brute-force oracle: every stored value is analyzed by
// the attribute's analyzer and the predicate decided row by row from those tokens, under SQL's
// three-valued logic, for random filters that mix them with other tests, AND, OR and NOT, and
// again after updates and deletes.

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "filter/filter.h"
#include "index/shard_index.h"
#include "text/text_analyzer.h"

namespace sieve {
namespace {

enum class Tri { kFalse, kTrue, kUnknown };

Tri Not(Tri x) { return x == Tri::kUnknown ? x : (x == Tri::kTrue ? Tri::kFalse : Tri::kTrue); }
Tri And(Tri a, Tri b) {
  if (a == Tri::kFalse || b == Tri::kFalse) return Tri::kFalse;
  return a == Tri::kTrue && b == Tri::kTrue ? Tri::kTrue : Tri::kUnknown;
}
Tri Or(Tri a, Tri b) {
  if (a == Tri::kTrue || b == Tri::kTrue) return Tri::kTrue;
  return a == Tri::kFalse && b == Tri::kFalse ? Tri::kFalse : Tri::kUnknown;
}

struct Row {
  std::optional<int64_t> n;
  std::optional<std::string> body;   // text, "english"
  std::optional<std::string> title;  // text, "simple"
};

const char* kWords[] = {"Red", "red",   "shoes", "shoe", "running", "runs", "the",
                        "of",  "boots", "Boot",  "new",  "York",    "and",  "blue"};

std::optional<std::string> RandomText(std::mt19937& rng) {
  if (rng() % 7 == 0) return std::nullopt;
  std::string s;
  const size_t words = rng() % 8;
  for (size_t w = 0; w < words; ++w)
    s += std::string(kWords[rng() % 14]) + (rng() % 4 ? " " : ", ");
  return s;
}

CollectionSpec Spec() {
  CollectionSpec spec;
  spec.name = "t";
  spec.dim = 1;
  spec.attributes = {{"n", AttrType::kInt},
                     {"body", AttrType::kText, "english"},
                     {"title", AttrType::kText, "simple"}};
  return spec;
}

std::vector<TextToken> Tokens(const std::string& analyzer, const std::string& text) {
  std::shared_ptr<const TextAnalyzer> a;
  EXPECT_TRUE(TextAnalyzer::Get(analyzer, &a).ok());
  std::vector<TextToken> out;
  EXPECT_TRUE(a->Analyze(text, &out).ok());
  return out;
}

// The oracle's expression: a text test, `n < k`, an IS NULL, or AND/OR/NOT of them.
struct Expr {
  enum Kind { kText, kLess, kIsNull, kAnd, kOr, kNot } kind = kText;
  std::string fn;     // kText: MATCH, MATCH_ALL or PHRASE
  bool body = true;   // kText / kIsNull: body (english) or title (simple)
  std::string query;  // kText
  int64_t k = 0;      // kLess
  std::vector<Expr> kids;

  std::string Text() const {
    switch (kind) {
      case kText:
        return fn + "(" + (body ? "body" : "title") + ", '" + query + "')";
      case kLess:
        return "n < " + std::to_string(k);
      case kIsNull:
        return std::string(body ? "body" : "title") + " IS NULL";
      case kNot:
        return "NOT (" + kids[0].Text() + ")";
      default: {
        std::string s = "(";
        for (size_t i = 0; i < kids.size(); ++i) {
          if (i) s += kind == kAnd ? " AND " : " OR ";
          s += kids[i].Text();
        }
        return s + ")";
      }
    }
  }
};

Tri TextTruth(const Expr& e, const Row& row) {
  const std::optional<std::string>& v = e.body ? row.body : row.title;
  if (!v) return Tri::kUnknown;
  const std::string analyzer = e.body ? "english" : "simple";
  const auto doc = Tokens(analyzer, *v);
  const auto q = Tokens(analyzer, e.query);
  if (q.empty()) return Tri::kFalse;
  auto has = [&](const std::string& term, uint64_t pos, bool any_pos) {
    for (const TextToken& t : doc) {
      if (t.term == term && (any_pos || t.position == pos)) return true;
    }
    return false;
  };
  if (e.fn == "MATCH") {
    for (const TextToken& t : q) {
      if (has(t.term, 0, true)) return Tri::kTrue;
    }
    return Tri::kFalse;
  }
  if (e.fn == "MATCH_ALL") {
    for (const TextToken& t : q) {
      if (!has(t.term, 0, true)) return Tri::kFalse;
    }
    return Tri::kTrue;
  }
  for (const TextToken& start : doc) {  // PHRASE
    if (start.term != q[0].term) continue;
    bool all = true;
    for (const TextToken& t : q) {
      all = all && has(t.term, uint64_t{start.position} + t.position - q[0].position, false);
    }
    if (all) return Tri::kTrue;
  }
  return Tri::kFalse;
}

Tri Eval(const Expr& e, const Row& row) {
  switch (e.kind) {
    case Expr::kText:
      return TextTruth(e, row);
    case Expr::kLess:
      return row.n ? (*row.n < e.k ? Tri::kTrue : Tri::kFalse) : Tri::kUnknown;
    case Expr::kIsNull:
      return (e.body ? !row.body : !row.title) ? Tri::kTrue : Tri::kFalse;
    case Expr::kNot:
      return Not(Eval(e.kids[0], row));
    case Expr::kAnd: {
      Tri t = Tri::kTrue;
      for (const Expr& k : e.kids) t = And(t, Eval(k, row));
      return t;
    }
    case Expr::kOr: {
      Tri t = Tri::kFalse;
      for (const Expr& k : e.kids) t = Or(t, Eval(k, row));
      return t;
    }
  }
  return Tri::kUnknown;
}

Expr RandomExpr(std::mt19937& rng, int depth) {
  Expr e;
  const int pick = depth >= 3 ? static_cast<int>(rng() % 3) : static_cast<int>(rng() % 7);
  if (pick <= 1) {
    static const char* kFns[] = {"MATCH", "MATCH_ALL", "PHRASE"};
    e.kind = Expr::kText;
    e.fn = kFns[rng() % 3];
    e.body = rng() % 3 != 0;
    const size_t words = 1 + rng() % 3;
    for (size_t w = 0; w < words; ++w) e.query += std::string(w ? " " : "") + kWords[rng() % 14];
  } else if (pick == 2) {
    e.kind = rng() % 2 ? Expr::kLess : Expr::kIsNull;
    e.k = static_cast<int64_t>(rng() % 10);
    e.body = rng() % 2;
  } else if (pick == 3) {
    e.kind = Expr::kNot;
    e.kids.push_back(RandomExpr(rng, depth + 1));
  } else {
    e.kind = pick % 2 ? Expr::kAnd : Expr::kOr;
    const size_t n = 2 + rng() % 2;
    for (size_t i = 0; i < n; ++i) e.kids.push_back(RandomExpr(rng, depth + 1));
  }
  return e;
}

Value ToValue(const std::optional<std::string>& v) { return v ? Value(*v) : Value(); }

class TextCompileTest : public ::testing::Test {
 protected:
  void Build(size_t rows) {
    shard_ = std::make_unique<ShardIndex>(spec_, 0);
    for (size_t begin = 0; begin < rows; begin += 97) {
      const size_t n = std::min<size_t>(97, rows - begin);
      Chunk c;
      c.first_ordinal = static_cast<uint32_t>(begin);
      c.num_rows = static_cast<uint32_t>(n);
      c.vectors.assign(n, 1.0f);
      c.columns.resize(3);
      for (size_t a = 0; a < 3; ++a) c.columns[a].type = spec_.attributes[a].type;
      for (size_t i = 0; i < n; ++i) {
        Row r;
        if (rng_() % 8) r.n = static_cast<int64_t>(rng_() % 10);
        r.body = RandomText(rng_);
        r.title = RandomText(rng_);
        c.ids.push_back(static_cast<int64_t>(rows_.size()));
        c.columns[0].Append(r.n ? Value(*r.n) : Value());
        c.columns[1].Append(ToValue(r.body));
        c.columns[2].Append(ToValue(r.title));
        rows_.push_back(r);
        deleted_.push_back(0);
      }
      ASSERT_TRUE(EnsureTextSegments(spec_.attributes, &c.columns).ok());
      shard_->ApplyChunk(c);
    }
  }

  void ExpectMatchesOracle(const std::string& text, const Expr* e) {
    std::unique_ptr<Filter> f;
    Status s = Filter::Parse(text, spec_, &f);
    ASSERT_TRUE(s.ok()) << text << ": " << s.ToString();
    const RowSet got = f->Compile(*shard_);
    std::vector<uint32_t> want;
    for (uint32_t r = 0; r < rows_.size(); ++r) {
      if (!deleted_[r] && Eval(*e, rows_[r]) == Tri::kTrue) want.push_back(r);
    }
    ASSERT_EQ(got, RowSet::Of(want.data(), want.size()))
        << text << ": " << got.Cardinality() << " rows, the oracle has " << want.size();
    // The canonical text compiles to the same rows.
    std::unique_ptr<Filter> again;
    ASSERT_TRUE(Filter::Parse(f->ToString(), spec_, &again).ok()) << f->ToString();
    EXPECT_EQ(again->ToString(), f->ToString());
    EXPECT_EQ(again->Compile(*shard_), got);
    ++checked_;
    if (!want.empty()) ++nonempty_;
  }

  void RandomFilters(int count) {
    for (int i = 0; i < count; ++i) {
      const Expr e = RandomExpr(rng_, 0);
      ExpectMatchesOracle(e.Text(), &e);
    }
  }

  std::mt19937 rng_{2026};
  CollectionSpec spec_ = Spec();
  std::unique_ptr<ShardIndex> shard_;
  std::vector<Row> rows_;
  std::vector<uint8_t> deleted_;
  int checked_ = 0, nonempty_ = 0;
};

TEST_F(TextCompileTest, RandomFiltersMatchTheOracleThroughUpdatesAndDeletes) {
  Build(600);
  RandomFilters(400);
  // Updates (text to text, to null, from null) and deletes, applied as the engine does.
  for (int step = 0; step < 300; ++step) {
    const uint32_t r = static_cast<uint32_t>(rng_() % rows_.size());
    if (deleted_[r]) continue;
    if (rng_() % 5 == 0) {
      deleted_[r] = 1;
      std::vector<uint32_t> all;
      for (uint32_t o = 0; o < deleted_.size(); ++o) {
        if (deleted_[o]) all.push_back(o);
      }
      shard_->SetDeleted(RowSet::Of(all.data(), all.size()));
      continue;
    }
    const bool body = rng_() % 2;
    auto v = RandomText(rng_);
    shard_->SetValue(body ? 1 : 2, r, ToValue(v));
    (body ? rows_[r].body : rows_[r].title) = v;
  }
  RandomFilters(400);
  EXPECT_GT(nonempty_, checked_ / 3) << "too few filters pass any row to prove much";
}

TEST_F(TextCompileTest, DocumentedCases) {
  Build(0);
  Chunk c;
  c.num_rows = 5;
  c.vectors.assign(5, 1.0f);
  c.ids = {0, 1, 2, 3, 4};
  c.columns.resize(3);
  for (size_t a = 0; a < 3; ++a) c.columns[a].type = spec_.attributes[a].type;
  const std::optional<std::string> bodies[] = {"Red running shoes for men", "Shoes of running",
                                               "running boots", std::nullopt, "New York new shoes"};
  for (int i = 0; i < 5; ++i) {
    c.columns[0].Append(Value(int64_t{i}));
    c.columns[1].Append(ToValue(bodies[i]));
    c.columns[2].Append(Value());
    rows_.push_back(Row{i, bodies[i], std::nullopt});
    deleted_.push_back(0);
  }
  shard_->ApplyChunk(c);
  auto count = [&](const std::string& text) {
    std::unique_ptr<Filter> f;
    Status s = Filter::Parse(text, spec_, &f);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return s.ok() ? f->Compile(*shard_).Cardinality() : 0;
  };
  EXPECT_EQ(count("MATCH(body, 'shoe')"), 3u);
  EXPECT_EQ(count("MATCH(body, 'Boot SHOE')"), 4u);
  EXPECT_EQ(count("MATCH_ALL(body, 'running shoes')"), 2u);
  EXPECT_EQ(count("PHRASE(body, 'running shoes')"), 1u);
  // Stop words keep their place: 'for' and 'of' both sit between the two words.
  EXPECT_EQ(count("PHRASE(body, 'shoes for running')"), 1u);
  EXPECT_EQ(count("PHRASE(body, 'new york')"), 1u);
  EXPECT_EQ(count("PHRASE(body, 'york new shoes')"), 1u);
  EXPECT_EQ(count("PHRASE(body, 'shoes new')"), 0u);
  // Only stop words: no term, no row; NOT of it passes every non-null row.
  EXPECT_EQ(count("MATCH(body, 'the of')"), 0u);
  EXPECT_EQ(count("NOT MATCH(body, 'the')"), 4u);
  // A null text is unknown: neither MATCH nor NOT MATCH passes it.
  EXPECT_EQ(count("NOT MATCH(body, 'shoe')"), 1u);
  EXPECT_EQ(count("MATCH(body, 'boot') AND n < 3"), 1u);
  EXPECT_EQ(count("match(body, 'boot') or phrase(body, 'new york') or body is null"), 3u);
}

TEST(TextParseTest, ErrorsArePositioned) {
  CollectionSpec spec = Spec();
  spec.attributes.push_back({"match", AttrType::kInt});  // a function name is no keyword
  auto error = [&](const std::string& text) {
    std::unique_ptr<Filter> f;
    Status s = Filter::Parse(text, spec, &f);
    EXPECT_TRUE(s.IsInvalidArgument()) << text;
    return s.message();
  };
  EXPECT_EQ(error("MATCH(n, 'x')"),
            "filter: at position 7: MATCH applies only to text attributes; 'n' is int");
  EXPECT_EQ(error("PHRASE(nope, 'x')").substr(0, 51),
            "filter: at position 8: unknown attribute 'nope' (at");
  EXPECT_EQ(error("body = 'x'"),
            "filter: at position 6: attribute 'body' is text: test it with MATCH, MATCH_ALL, "
            "PHRASE or IS [NOT] NULL (got '=')");
  EXPECT_EQ(error("MATCH_ALL(body 'x')"),
            "filter: at position 16: expected ',' after the attribute of MATCH_ALL (got 'x')");
  EXPECT_EQ(error("n < 3 AND MATCH(body, 3)"),
            "filter: at position 23: MATCH needs a 'string' (the text to look for) after the "
            "attribute (got '3')");
  EXPECT_EQ(error("MATCH(body, 'x'"),
            "filter: at position 16: unexpected end of filter, expected ')' to close MATCH "
            "(got '')");
  EXPECT_EQ(error("MATCH(id, 'x')"),
            "filter: at position 7: MATCH applies only to text attributes; 'id' is the row id");
  std::unique_ptr<Filter> f;
  ASSERT_TRUE(Filter::Parse("match = 3 AND Phrase(title, 'it''s')", spec, &f).ok());
  EXPECT_EQ(f->ToString(), "(match = 3 AND PHRASE(title, 'it''s'))");
  ASSERT_TRUE(Filter::Parse("title IS NOT NULL", spec, &f).ok());
}

}  // namespace
}  // namespace sieve
