// Copyright 2026 The Sieve Authors.
//
// Tokens of the filter language (DESIGN.md, "The filter language"). Keywords are
// case-insensitive; identifiers are case-sensitive. Private to filter/.

#ifndef SIEVE_FILTER_LEXER_H_
#define SIEVE_FILTER_LEXER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sieve/status.h"

namespace sieve {

enum class TokenKind : uint8_t {
  kEnd,
  kError,  // a lexical error; `error` says what, reported when the parser reaches it
  kIdent,
  kInt,
  kDecimal,
  kString,
  kEq,  // =
  kNe,  // != or <>
  kLt,
  kLe,
  kGt,
  kGe,
  kLParen,
  kRParen,
  kComma,
  // Keywords.
  kAnd,
  kOr,
  kNot,
  kIn,
  kBetween,
  kContains,
  kIs,
  kNull,
  kTrue,
  kFalse,
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  size_t offset = 0;      // byte offset of the token's first character in the text
  std::string_view text;  // the lexeme as written (a view into the filter text)
  int64_t int_value = 0;     // kInt
  double decimal_value = 0;  // kDecimal
  std::string string_value;  // kString (unescaped)
  std::string error;         // kError
};

// Splits `text` into tokens, always ending with one kEnd token (at offset text.size()). A
// lexical error becomes a kError token and ends the list there (followed by kEnd), so that
// errors are reported in text order. The tokens view `text`, which must outlive them.
std::vector<Token> Tokenize(std::string_view text);

// The 1-based character (UTF-8 code point) position of byte `offset` of `text`.
size_t CharPosition(std::string_view text, size_t offset);

// InvalidArgument "filter: at position P: <what> (got '<token>')", P per CharPosition; long
// lexemes are shortened.
Status FilterError(std::string_view text, size_t offset, std::string_view what,
                   std::string_view got);

}  // namespace sieve

#endif  // SIEVE_FILTER_LEXER_H_
