// Copyright 2026 The Sieve Authors.

#include "filter/lexer.h"

#include <charconv>
#include <cmath>
#include <system_error>

namespace sieve {

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentStart(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || IsDigit(c); }
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'a' && x <= 'z') x = static_cast<char>(x - 'a' + 'A');
    if (y >= 'a' && y <= 'z') y = static_cast<char>(y - 'a' + 'A');
    if (x != y) return false;
  }
  return true;
}

TokenKind KeywordOrIdent(std::string_view word) {
  static constexpr std::pair<std::string_view, TokenKind> kKeywords[] = {
      {"AND", TokenKind::kAnd},         {"OR", TokenKind::kOr},
      {"NOT", TokenKind::kNot},         {"IN", TokenKind::kIn},
      {"BETWEEN", TokenKind::kBetween}, {"CONTAINS", TokenKind::kContains},
      {"IS", TokenKind::kIs},           {"NULL", TokenKind::kNull},
      {"TRUE", TokenKind::kTrue},       {"FALSE", TokenKind::kFalse},
  };
  for (const auto& [name, kind] : kKeywords) {
    if (EqualsIgnoreCase(word, name)) return kind;
  }
  return TokenKind::kIdent;
}

// Length in bytes of the UTF-8 sequence starting with `lead` (1 for stray bytes), so an
// unexpected character is quoted whole in the message.
size_t Utf8Length(unsigned char lead) {
  if (lead >= 0xF0 && lead < 0xF8) return 4;
  if (lead >= 0xE0) return 3;
  if (lead >= 0xC0) return 2;
  return 1;
}

}  // namespace

Token Lexer::Make(TokenKind kind, size_t begin, size_t end) {
  Token t;
  t.kind = kind;
  t.offset = begin;
  t.text = text_.substr(begin, end - begin);
  for (; counted_ < begin; ++counted_) {
    if ((static_cast<unsigned char>(text_[counted_]) & 0xC0) != 0x80) ++counted_pos_;
  }
  t.pos = counted_pos_;
  pos_ = end;
  return t;
}

Token Lexer::Error(size_t begin, size_t end, std::string what) {
  Token t = Make(TokenKind::kError, begin, end);
  t.error = std::move(what);
  done_ = true;
  return t;
}

Token Lexer::Next() {
  while (pos_ < text_.size() && IsSpace(text_[pos_])) ++pos_;
  const size_t b = pos_;
  if (done_ || b >= text_.size()) {
    done_ = true;
    return Make(TokenKind::kEnd, text_.size(), text_.size());
  }
  const char c = text_[b];
  if (IsIdentStart(c)) {
    size_t e = b + 1;
    while (IsIdentChar(At(e))) ++e;
    return Make(KeywordOrIdent(text_.substr(b, e - b)), b, e);
  }
  if (IsDigit(c) || (c == '-' && IsDigit(At(b + 1)))) return Number(b);
  if (c == '\'') return String(b);
  if (c == '"') return QuotedIdent(b);
  switch (c) {
    case '=':
      return Make(TokenKind::kEq, b, b + 1);
    case '!':
      if (At(b + 1) == '=') return Make(TokenKind::kNe, b, b + 2);
      break;
    case '<':
      if (At(b + 1) == '=') return Make(TokenKind::kLe, b, b + 2);
      if (At(b + 1) == '>') return Make(TokenKind::kNe, b, b + 2);
      return Make(TokenKind::kLt, b, b + 1);
    case '>':
      if (At(b + 1) == '=') return Make(TokenKind::kGe, b, b + 2);
      return Make(TokenKind::kGt, b, b + 1);
    case '(':
      return Make(TokenKind::kLParen, b, b + 1);
    case ')':
      return Make(TokenKind::kRParen, b, b + 1);
    case ',':
      return Make(TokenKind::kComma, b, b + 1);
    default:
      break;
  }
  size_t len = std::min(Utf8Length(static_cast<unsigned char>(c)), text_.size() - b);
  return Error(b, b + len, "unexpected character");
}

// -?digits ( '.' digits )? ( [eE] [+-]? digits )?, not followed by an identifier character
// or '.', which would make "12abc" or "1.2.3" silently two tokens.
Token Lexer::Number(size_t b) {
  size_t e = b;
  if (At(e) == '-') ++e;
  while (IsDigit(At(e))) ++e;
  bool decimal = false, bad = false;
  if (At(e) == '.') {
    decimal = true;
    ++e;
    if (!IsDigit(At(e))) bad = true;
    while (IsDigit(At(e))) ++e;
  }
  if (!bad && (At(e) == 'e' || At(e) == 'E')) {
    decimal = true;
    ++e;
    if (At(e) == '+' || At(e) == '-') ++e;
    if (!IsDigit(At(e))) bad = true;
    while (IsDigit(At(e))) ++e;
  }
  if (IsIdentChar(At(e)) || At(e) == '.') bad = true;
  if (bad) {
    while (IsIdentChar(At(e)) || At(e) == '.' || At(e) == '+' || At(e) == '-') ++e;
    return Error(b, e, "malformed number");
  }
  Token t = Make(decimal ? TokenKind::kDecimal : TokenKind::kInt, b, e);
  const char* first = text_.data() + b;
  const char* last = text_.data() + e;
  if (decimal) {
    auto [ptr, ec] = std::from_chars(first, last, t.decimal_value);
    if (ec != std::errc() || ptr != last || !std::isfinite(t.decimal_value)) {
      return Error(b, e, "number out of the range of a float64");
    }
  } else {
    auto [ptr, ec] = std::from_chars(first, last, t.int_value);
    if (ec != std::errc() || ptr != last) {
      return Error(b, e, "integer out of the range of an int64");
    }
  }
  return t;
}

Token Lexer::String(size_t b) {
  std::string value;
  size_t e = b + 1;
  while (true) {
    if (e >= text_.size()) return Error(b, text_.size(), "unterminated string");
    if (text_[e] == '\'') {
      if (At(e + 1) == '\'') {
        value.push_back('\'');
        e += 2;
        continue;
      }
      ++e;
      break;
    }
    value.push_back(text_[e++]);
  }
  Token t = Make(TokenKind::kString, b, e);
  t.string_value = std::move(value);
  return t;
}

// SQL's delimited identifier: "name", with "" for a quote inside. It names attributes whose
// names are keywords or break today's naming rule (stores created under older rules).
Token Lexer::QuotedIdent(size_t b) {
  std::string name;
  size_t e = b + 1;
  while (true) {
    if (e >= text_.size()) return Error(b, text_.size(), "unterminated quoted name");
    if (text_[e] == '"') {
      if (At(e + 1) == '"') {
        name.push_back('"');
        e += 2;
        continue;
      }
      ++e;
      break;
    }
    name.push_back(text_[e++]);
  }
  if (name.empty()) return Error(b, e, "empty quoted name");
  Token t = Make(TokenKind::kIdent, b, e);
  t.quoted = true;
  t.string_value = std::move(name);
  return t;
}

bool IsFilterKeyword(std::string_view word) { return KeywordOrIdent(word) != TokenKind::kIdent; }

bool IsBareIdentifier(std::string_view name) {
  if (name.empty() || !IsIdentStart(name[0])) return false;
  for (char c : name) {
    if (!IsIdentChar(c)) return false;
  }
  return !IsFilterKeyword(name);
}

std::vector<Token> Tokenize(std::string_view text) {
  Lexer lexer(text);
  std::vector<Token> out;
  do {
    out.push_back(lexer.Next());
  } while (out.back().kind != TokenKind::kEnd && out.back().kind != TokenKind::kError);
  return out;
}

Status FilterError(size_t pos, std::string_view what, std::string_view got) {
  constexpr size_t kMaxGot = 40;
  std::string shown(got.substr(0, kMaxGot));
  if (got.size() > kMaxGot) {
    // Do not cut a UTF-8 sequence in half.
    while (!shown.empty() && (static_cast<unsigned char>(shown.back()) & 0xC0) == 0x80) {
      shown.pop_back();
    }
    if (!shown.empty() && static_cast<unsigned char>(shown.back()) >= 0xC0) shown.pop_back();
    shown += "...";
  }
  // A string literal's text brings its own quotes; a message that already quotes the token
  // ("unknown attribute 'colour'") does not repeat it.
  const std::string quoted = shown.starts_with('\'') ? shown : "'" + shown + "'";
  std::string message = "filter: at position " + std::to_string(pos) + ": " + std::string(what);
  if (got.empty() || what.find(quoted) == std::string_view::npos) {
    message += " (got " + quoted + ")";
  }
  return Status::InvalidArgument(message);
}

}  // namespace sieve
