// Copyright 2026 The Sieve Authors.
//
// Recursive-descent parser and type checker of the filter language. Private to filter/.

#ifndef SIEVE_FILTER_PARSER_H_
#define SIEVE_FILTER_PARSER_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "filter/ast.h"
#include "sieve/status.h"
#include "sieve/types.h"

namespace sieve {

// Parentheses and NOTs nested deeper than this are rejected, so that hostile input cannot
// overflow the stack of the parser or of the recursive passes over the tree.
inline constexpr size_t kMaxFilterDepth = 256;

// Parses and type-checks `text` against `spec` into *out. Blank text gives a kAll node.
// InvalidArgument "filter: at position P: ..." on any error.
Status ParseFilter(std::string_view text, const CollectionSpec& spec,
                   std::unique_ptr<FilterNode>* out);

// The canonical text of a tree (keywords upper-case, every AND/OR group parenthesized,
// literals normalized); parsing it gives an equal tree. "" for kAll.
std::string FilterToString(const FilterNode& node);

}  // namespace sieve

#endif  // SIEVE_FILTER_PARSER_H_
