// Copyright 2026 The Sieve Authors.
//
// The filter language (DESIGN.md): parsing and type-checking filter text against a
// collection's schema, and compiling it against a shard's attribute indexes to the exact set
// of passing rows.
//
//   expr    := or
//   or      := and ( OR and )*
//   and     := unary ( AND unary )*
//   unary   := NOT unary | '(' expr ')' | test
//   test    := attr op literal | attr [NOT] IN '(' literal (',' literal)* ')'
//            | attr BETWEEN literal AND literal | attr CONTAINS literal | attr IS [NOT] NULL
//            | (MATCH | MATCH_ALL | PHRASE) '(' text_attr ',' 'string' ')'
//
// The full-text tests analyze their string with the attribute's analyzer when the filter is
// parsed (text/text_analyzer.h) and compile from the shard's TextIndex: MATCH holds for a row
// with any of the terms, MATCH_ALL for one with all of them, PHRASE for one with the terms at
// the same relative positions. A text that analyzes to no term matches no row.
//
// Nulls follow SQL's three-valued logic: only rows whose whole filter is TRUE pass.
//
// Thread-safety: a parsed Filter is immutable and may be compiled concurrently.

#ifndef SIEVE_FILTER_FILTER_H_
#define SIEVE_FILTER_FILTER_H_

#include <memory>
#include <string>
#include <string_view>

#include "index/row_set.h"
#include "index/shard_index.h"
#include "sieve/status.h"
#include "sieve/types.h"

namespace sieve {

struct FilterNode;  // the AST, defined in filter/ast.h

class Filter {
 public:
  ~Filter();
  Filter(Filter&&) noexcept;
  Filter& operator=(Filter&&) noexcept;

  // Parses and type-checks `text` against `spec`. Empty or all-blank text is the filter that
  // passes every live row. InvalidArgument on error, with a message of the form
  // "filter: at position P: ..." (P is the 1-based character position in `text`).
  static Status Parse(std::string_view text, const CollectionSpec& spec,
                      std::unique_ptr<Filter>* out);

  // True for the empty filter.
  bool MatchesAll() const;
  // Canonical text of the parsed filter (for explain and for grouping equal filters).
  std::string ToString() const;

  // The exact set of live rows of `shard` whose filter is TRUE (deleted rows removed).
  RowSet Compile(const ShardIndex& shard) const;

  const FilterNode& root() const { return *root_; }

 private:
  explicit Filter(std::unique_ptr<FilterNode> root);
  std::unique_ptr<FilterNode> root_;
};

}  // namespace sieve

#endif  // SIEVE_FILTER_FILTER_H_
