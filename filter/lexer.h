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
  kIdent,  // an attribute name, bare or "double-quoted"
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
  size_t offset = 0;         // byte offset of the token's first character in the text
  size_t pos = 1;            // its 1-based character (UTF-8 code point) position
  std::string_view text;     // the lexeme as written (a view into the filter text)
  int64_t int_value = 0;     // kInt
  double decimal_value = 0;  // kDecimal
  std::string string_value;  // kString, and kIdent when quoted (unescaped)
  bool quoted = false;       // kIdent written as "..."
  std::string error;         // kError
};

// Produces tokens on demand, so memory stays constant whatever the length of the filter. A
// lexical error is a kError token (the parser reports it when it reaches it, so errors come
// in text order); after the end or an error, Next() keeps returning kEnd. Tokens view `text`,
// which must outlive them.
class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}
  Token Next();

 private:
  Token Make(TokenKind kind, size_t begin, size_t end);
  Token Error(size_t begin, size_t end, std::string what);
  char At(size_t i) const { return i < text_.size() ? text_[i] : '\0'; }
  Token Number(size_t begin);
  Token String(size_t begin);
  Token QuotedIdent(size_t begin);

  std::string_view text_;
  size_t pos_ = 0;  // byte offset of the next token
  bool done_ = false;
  // Character position of byte `counted_`, advanced as tokens are made, so positions cost
  // O(length) in total.
  size_t counted_ = 0;
  size_t counted_pos_ = 1;
};

// The name an identifier token stands for: its text, or for a quoted one the unescaped name.
inline std::string_view IdentName(const Token& t) {
  return t.quoted ? std::string_view(t.string_value) : t.text;
}

// True when `word` is a keyword of the language (AND, OR, NOT, IN, BETWEEN, CONTAINS, IS,
// NULL, TRUE, FALSE), in any letter case.
bool IsFilterKeyword(std::string_view word);

// True when `name` can be written in a filter without quotes: [A-Za-z_][A-Za-z0-9_]* and not
// a keyword.
bool IsBareIdentifier(std::string_view name);

// Every token of `text` up to and including the first kEnd or kError (for tests).
std::vector<Token> Tokenize(std::string_view text);

// InvalidArgument "filter: at position P: <what> (got '<token>')"; long lexemes are
// shortened. A string literal is shown as written ("(got 'abc')", not "(got ''abc'')"), and the
// "(got ...)" part is left out when <what> already quotes the token.
Status FilterError(size_t pos, std::string_view what, std::string_view got);

}  // namespace sieve

#endif  // SIEVE_FILTER_LEXER_H_
