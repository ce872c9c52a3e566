// Copyright 2026 The Sieve Authors.
//
// The parsed and type-checked form of a filter. Private to filter/ (and its tests): the rest of
// the engine sees only sieve::Filter.

#ifndef SIEVE_FILTER_AST_H_
#define SIEVE_FILTER_AST_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sieve/types.h"
#include "text/text_analyzer.h"

namespace sieve {

struct FilterLiteral {
  enum class Kind : uint8_t { kInt, kDecimal, kString, kBool };
  Kind kind = Kind::kInt;
  int64_t i = 0;   // kInt
  double d = 0;    // kDecimal
  std::string s;   // kString, unescaped
  bool b = false;  // kBool
  size_t pos = 0;  // 1-based character position in the filter text
};

enum class CompareOp : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe };

struct FilterNode {
  enum class Kind : uint8_t {
    kAll,       // the empty filter
    kAnd,       // children, at least two
    kOr,        // children, at least two
    kNot,       // children[0]
    kCompare,   // attr op literals[0]
    kIn,        // attr IN literals (negated: NOT IN)
    kBetween,   // attr BETWEEN literals[0] AND literals[1] (both inclusive)
    kContains,  // tags attr CONTAINS literals[0]
    kIsNull,    // attr IS NULL (negated: IS NOT NULL)
    kText,      // MATCH / MATCH_ALL / PHRASE (text_op) of text attr and literals[0]
  };
  enum class TextOp : uint8_t {
    kMatch,     // MATCH(attr, '...'): a row holding any of the terms
    kMatchAll,  // MATCH_ALL(attr, '...'): a row holding every term
    kPhrase,    // PHRASE(attr, '...'): the terms at the same relative positions
  };

  Kind kind = Kind::kAll;
  size_t pos = 0;  // 1-based character position of the node's first token
  std::vector<std::unique_ptr<FilterNode>> children;

  // Attribute tests (the leaves) only.
  size_t attr = 0;  // index into the collection's attributes (unused for `id`)
  bool is_id = false;  // a test of the row id (the pseudo-attribute `id`, an int that is never null)
  std::string attr_name;
  AttrType attr_type = AttrType::kInt;
  CompareOp op = CompareOp::kEq;
  bool negated = false;  // kIn: NOT IN; kIsNull: IS NOT NULL
  std::vector<FilterLiteral> literals;
  // kText: the operator and literals[0] analyzed by the attribute's analyzer.
  TextOp text_op = TextOp::kMatch;
  std::vector<TextToken> tokens;
};

}  // namespace sieve

#endif  // SIEVE_FILTER_AST_H_
