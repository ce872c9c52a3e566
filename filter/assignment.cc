// Copyright 2026 The Sieve Authors.
//
// ParseAssignment (include/sieve/db.h): `name = literal` for updates, in the filter
// language's words, so that the values an update writes are written as a filter tests them.

#include <string>

#include "filter/lexer.h"
#include "sieve/db.h"

namespace sieve {

namespace {

// "set: at position P: <what> (got '<token>')", the filter language's error with the
// assignment's name.
Status AssignmentError(const Token& t, std::string_view what) {
  const Status s = t.kind == TokenKind::kError
                       ? FilterError(t.pos, t.error, t.text)
                       : FilterError(t.pos, what, t.kind == TokenKind::kEnd ? "end of text" : t.text);
  const std::string prefix = "filter: ";
  return Status::InvalidArgument("set: " + s.message().substr(prefix.size()));
}

// One scalar literal (no tags list) as a Value.
bool ScalarValue(const Token& t, Value* v) {
  switch (t.kind) {
    case TokenKind::kInt: *v = t.int_value; return true;
    case TokenKind::kDecimal: *v = t.decimal_value; return true;
    case TokenKind::kString: *v = t.string_value; return true;
    case TokenKind::kTrue: *v = true; return true;
    case TokenKind::kFalse: *v = false; return true;
    case TokenKind::kNull: *v = std::monostate(); return true;
    default: return false;
  }
}

}  // namespace

Status ParseAssignment(std::string_view text, const CollectionSpec& spec, std::string* name,
                       Value* value) {
  Lexer lex(text);
  Token t = lex.Next();
  if (t.kind != TokenKind::kIdent) {
    return AssignmentError(t, "expected an attribute name, as in price = 3.5");
  }
  *name = std::string(IdentName(t));
  const AttributeSpec* attr = nullptr;
  for (const AttributeSpec& a : spec.attributes) {
    if (a.name == *name) attr = &a;
  }
  if (attr == nullptr) {
    std::string known;
    for (const AttributeSpec& a : spec.attributes) known += (known.empty() ? "" : ", ") + a.name;
    if (*name == "id") {
      return Status::InvalidArgument("set: the row id `id` cannot be set (upsert the row instead)");
    }
    return Status::InvalidArgument("set: unknown attribute '" + *name + "' (collection '" +
                                   spec.name + "' has " +
                                   (known.empty() ? std::string("no attributes") : known) + ")");
  }
  t = lex.Next();
  if (t.kind != TokenKind::kEq) return AssignmentError(t, "expected = after " + *name);
  t = lex.Next();
  if (t.kind == TokenKind::kLParen) {
    if (attr->type != AttrType::kTags) {
      return AssignmentError(t, "a list of strings is a value of a tags attribute only");
    }
    std::vector<std::string> tags;
    for (;;) {
      t = lex.Next();
      if (t.kind == TokenKind::kRParen && tags.empty()) break;
      if (t.kind != TokenKind::kString) return AssignmentError(t, "expected a string");
      tags.push_back(t.string_value);
      t = lex.Next();
      if (t.kind == TokenKind::kRParen) break;
      if (t.kind != TokenKind::kComma) return AssignmentError(t, "expected , or )");
    }
    *value = std::move(tags);
  } else if (!ScalarValue(t, value)) {
    return AssignmentError(t, "expected a value (a number, a 'string', true, false, NULL or a "
                              "list ('a', 'b') of tags)");
  }
  const Token end = lex.Next();
  if (end.kind != TokenKind::kEnd) return AssignmentError(end, "expected the end of the assignment");
  // A single string given for a tags attribute is one tag.
  if (attr->type == AttrType::kTags && std::holds_alternative<std::string>(*value)) {
    *value = std::vector<std::string>{std::get<std::string>(*value)};
  }
  const bool fits = std::holds_alternative<std::monostate>(*value) ||
                    (attr->type == AttrType::kInt && std::holds_alternative<int64_t>(*value)) ||
                    (attr->type == AttrType::kFloat && (std::holds_alternative<double>(*value) ||
                                                        std::holds_alternative<int64_t>(*value))) ||
                    ((attr->type == AttrType::kString || attr->type == AttrType::kText) &&
                     std::holds_alternative<std::string>(*value)) ||
                    (attr->type == AttrType::kBool && std::holds_alternative<bool>(*value)) ||
                    (attr->type == AttrType::kTags &&
                     std::holds_alternative<std::vector<std::string>>(*value));
  if (!fits) {
    return AssignmentError(t, std::string("'") + *name + "' is " + AttrTypeName(attr->type) +
                                  " and cannot take this value");
  }
  if (attr->type == AttrType::kFloat && std::holds_alternative<int64_t>(*value)) {
    *value = static_cast<double>(std::get<int64_t>(*value));
  }
  return Status::OK();
}

}  // namespace sieve
