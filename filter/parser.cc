// Copyright 2026 The Sieve Authors.

#include "filter/parser.h"

#include <charconv>
#include <utility>
#include <vector>

#include "filter/lexer.h"

namespace sieve {

namespace {

bool IsNumeric(AttrType t) { return t == AttrType::kInt || t == AttrType::kFloat; }

const char* OpText(CompareOp op) {
  switch (op) {
    case CompareOp::kEq:
      return "=";
    case CompareOp::kNe:
      return "!=";
    case CompareOp::kLt:
      return "<";
    case CompareOp::kLe:
      return "<=";
    case CompareOp::kGt:
      return ">";
    case CompareOp::kGe:
      return ">=";
  }
  return "?";
}

class Parser {
 public:
  Parser(std::string_view text, const CollectionSpec& spec) : spec_(spec), lexer_(text) {
    cur_ = lexer_.Next();
  }

  Status Parse(std::unique_ptr<FilterNode>* out) {
    if (Peek().kind == TokenKind::kEnd) {
      *out = std::make_unique<FilterNode>();  // kAll
      (*out)->pos = 1;
      return Status::OK();
    }
    std::unique_ptr<FilterNode> root;
    SIEVE_RETURN_IF_ERROR(ParseOr(0, &root));
    if (Peek().kind != TokenKind::kEnd) return Unexpected("expected AND, OR or end of filter");
    *out = std::move(root);
    return Status::OK();
  }

 private:
  // One token of lookahead; the lexer runs only as far as the parser reads.
  const Token& Peek() const { return cur_; }
  Token Take() {
    Token t = cur_;
    if (t.kind != TokenKind::kEnd) cur_ = lexer_.Next();
    return t;
  }

  Status ErrorAt(const Token& t, std::string_view what) const {
    return FilterError(t.pos, what, t.text);
  }

  // "attributes: a, b, c" for messages, as the attributes readers word it.
  std::string AttributeList() const {
    if (spec_.attributes.empty()) return "the collection has no attributes";
    std::string s = "attributes:";
    for (size_t i = 0; i < spec_.attributes.size(); ++i) {
      s += (i ? ", " : " ") + spec_.attributes[i].name;
      if (s.size() > 200) return s.substr(0, 200) + "...";
    }
    return s;
  }

  // The error for the next token when it is not what the grammar needs here. A lexical error
  // and the end of input take precedence, since they are what is really wrong.
  Status Unexpected(std::string_view expected) const {
    const Token& t = Peek();
    if (t.kind == TokenKind::kError) return ErrorAt(t, t.error);
    if (t.kind == TokenKind::kEnd) {
      return ErrorAt(t, "unexpected end of filter, " + std::string(expected));
    }
    return ErrorAt(t, expected);
  }

  Status Expect(TokenKind kind, std::string_view expected) {
    if (Peek().kind != kind) return Unexpected(expected);
    Take();
    return Status::OK();
  }

  // Joins `child` into `parent` of the same kind, so (a AND b) AND c is one three-way AND.
  static void Absorb(FilterNode* parent, std::unique_ptr<FilterNode> child) {
    if (child->kind == parent->kind) {
      for (auto& grandchild : child->children) parent->children.push_back(std::move(grandchild));
    } else {
      parent->children.push_back(std::move(child));
    }
  }

  // or := and ( OR and )*  and  and := unary ( AND unary )*: one operand alone stays itself;
  // several become one n-ary node.
  Status ParseChain(size_t depth, TokenKind op, FilterNode::Kind kind,
                    Status (Parser::*operand)(size_t, std::unique_ptr<FilterNode>*),
                    std::unique_ptr<FilterNode>* out) {
    std::unique_ptr<FilterNode> first;
    SIEVE_RETURN_IF_ERROR((this->*operand)(depth, &first));
    if (Peek().kind != op) {
      *out = std::move(first);
      return Status::OK();
    }
    auto node = std::make_unique<FilterNode>();
    node->kind = kind;
    node->pos = first->pos;
    Absorb(node.get(), std::move(first));
    while (Peek().kind == op) {
      Take();
      std::unique_ptr<FilterNode> next;
      SIEVE_RETURN_IF_ERROR((this->*operand)(depth, &next));
      Absorb(node.get(), std::move(next));
    }
    *out = std::move(node);
    return Status::OK();
  }

  Status ParseOr(size_t depth, std::unique_ptr<FilterNode>* out) {
    return ParseChain(depth, TokenKind::kOr, FilterNode::Kind::kOr, &Parser::ParseAnd, out);
  }

  Status ParseAnd(size_t depth, std::unique_ptr<FilterNode>* out) {
    return ParseChain(depth, TokenKind::kAnd, FilterNode::Kind::kAnd, &Parser::ParseUnary, out);
  }

  Status ParseUnary(size_t depth, std::unique_ptr<FilterNode>* out) {
    if (Peek().kind == TokenKind::kNot || Peek().kind == TokenKind::kLParen) {
      if (depth >= kMaxFilterDepth) {
        return ErrorAt(Peek(), "filter nested deeper than " + std::to_string(kMaxFilterDepth) +
                                   " levels of NOT and parentheses");
      }
      Token t = Take();
      if (t.kind == TokenKind::kNot) {
        auto node = std::make_unique<FilterNode>();
        node->kind = FilterNode::Kind::kNot;
        node->pos = t.pos;
        std::unique_ptr<FilterNode> child;
        SIEVE_RETURN_IF_ERROR(ParseUnary(depth + 1, &child));
        node->children.push_back(std::move(child));
        *out = std::move(node);
        return Status::OK();
      }
      SIEVE_RETURN_IF_ERROR(ParseOr(depth + 1, out));
      return Expect(TokenKind::kRParen, "expected ')'");
    }
    return ParseTest(out);
  }

  Status ParseLiteral(FilterLiteral* lit) {
    const Token& t = Peek();
    lit->pos = t.pos;
    switch (t.kind) {
      case TokenKind::kInt:
        lit->kind = FilterLiteral::Kind::kInt;
        lit->i = t.int_value;
        break;
      case TokenKind::kDecimal:
        lit->kind = FilterLiteral::Kind::kDecimal;
        lit->d = t.decimal_value;
        break;
      case TokenKind::kString:
        lit->kind = FilterLiteral::Kind::kString;
        lit->s = t.string_value;
        break;
      case TokenKind::kTrue:
      case TokenKind::kFalse:
        lit->kind = FilterLiteral::Kind::kBool;
        lit->b = t.kind == TokenKind::kTrue;
        break;
      case TokenKind::kNull:
        return ErrorAt(t, "NULL is not a value; test for it with IS NULL or IS NOT NULL");
      default:
        return Unexpected("expected a literal (number, 'string', true or false)");
    }
    Take();
    return Status::OK();
  }

  // Checks that `lit` (at token `t`) may be compared with attribute `a` by =, != or IN.
  Status CheckComparable(const AttributeSpec& a, const FilterLiteral& lit, const Token& t) {
    using K = FilterLiteral::Kind;
    if (&a == &IdSpec() && lit.kind != K::kInt) {
      return ErrorAt(t, "the row id `id` is an integer and can only be compared with an integer");
    }
    bool ok = false;
    const char* want = "";
    switch (a.type) {
      case AttrType::kInt:
      case AttrType::kFloat:
        ok = lit.kind == K::kInt || lit.kind == K::kDecimal;
        want = "a number";
        break;
      case AttrType::kString:
        ok = lit.kind == K::kString;
        want = "a 'string'";
        break;
      case AttrType::kBool:
        ok = lit.kind == K::kBool;
        want = "true or false";
        break;
      case AttrType::kTags:
      case AttrType::kText:
        break;
    }
    if (ok) return Status::OK();
    return ErrorAt(t, "attribute '" + a.name + "' is " + AttrTypeName(a.type) +
                          " and can only be compared with " + want);
  }

  static const AttributeSpec& IdSpec() {
    static const AttributeSpec kId{"id", AttrType::kInt};
    return kId;
  }

  // MATCH, MATCH_ALL and PHRASE, in any letter case.
  static bool TextOpOf(std::string_view word, FilterNode::TextOp* op) {
    static constexpr std::pair<std::string_view, FilterNode::TextOp> kOps[] = {
        {"MATCH", FilterNode::TextOp::kMatch},
        {"MATCH_ALL", FilterNode::TextOp::kMatchAll},
        {"PHRASE", FilterNode::TextOp::kPhrase}};
    for (const auto& [name, value] : kOps) {
      if (word.size() != name.size()) continue;
      bool same = true;
      for (size_t i = 0; i < word.size() && same; ++i) {
        char c = word[i];
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
        same = c == name[i];
      }
      if (same) {
        *op = value;
        return true;
      }
    }
    return false;
  }

  // The attribute an identifier token names, or an error at it.
  Status ResolveAttribute(const Token& name, size_t* attr, bool* is_id) const {
    const std::string_view wanted = IdentName(name);
    *attr = spec_.attributes.size();
    for (size_t i = 0; i < spec_.attributes.size(); ++i) {
      if (spec_.attributes[i].name == wanted) *attr = i;
    }
    *is_id = *attr == spec_.attributes.size() && !name.quoted && wanted == "id";
    if (*attr == spec_.attributes.size() && !*is_id) {
      return ErrorAt(name, "unknown attribute '" + std::string(wanted) + "' (" + AttributeList() +
                               ")");
    }
    return Status::OK();
  }

  // FN '(' attr ',' 'text' ')' after FN: the attribute must be text; the text is analyzed with
  // its analyzer now, so each shard compiles the same terms.
  Status ParseTextTest(const Token& fn, FilterNode::TextOp op, std::unique_ptr<FilterNode>* out) {
    std::string fn_name(fn.text);
    for (char& c : fn_name) {
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    }
    Take();  // (
    const Token field = Peek();
    if (field.kind != TokenKind::kIdent) {
      return Unexpected("expected the name of a text attribute after " + fn_name + "(");
    }
    size_t attr = 0;
    bool is_id = false;
    SIEVE_RETURN_IF_ERROR(ResolveAttribute(field, &attr, &is_id));
    if (is_id || spec_.attributes[attr].type != AttrType::kText) {
      const std::string type = is_id ? "the row id" : AttrTypeName(spec_.attributes[attr].type);
      return ErrorAt(field, fn_name + " applies only to text attributes; '" +
                                std::string(IdentName(field)) + "' is " + type);
    }
    Take();
    const AttributeSpec& a = spec_.attributes[attr];
    SIEVE_RETURN_IF_ERROR(Expect(TokenKind::kComma, "expected ',' after the attribute of " +
                                                        fn_name));
    const Token lt = Peek();
    if (lt.kind != TokenKind::kString) {
      return Unexpected(fn_name + " needs a 'string' (the text to look for) after the attribute");
    }
    FilterLiteral lit;
    SIEVE_RETURN_IF_ERROR(ParseLiteral(&lit));
    SIEVE_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "expected ')' to close " + fn_name));
    auto node = std::make_unique<FilterNode>();
    node->kind = FilterNode::Kind::kText;
    node->pos = fn.pos;
    node->attr = attr;
    node->attr_name = a.name;
    node->attr_type = a.type;
    node->text_op = op;
    std::shared_ptr<const TextAnalyzer> analyzer;
    Status s = TextAnalyzer::Get(a.analyzer.empty() ? kDefaultTextAnalyzer : a.analyzer,
                                 &analyzer);
    if (s.ok()) s = analyzer->Analyze(lit.s, &node->tokens);
    if (!s.ok()) return FilterError(lt.pos, fn_name + ": " + s.message(), lt.text);
    node->literals.push_back(std::move(lit));
    *out = std::move(node);
    return Status::OK();
  }

  Status ParseTest(std::unique_ptr<FilterNode>* out) {
    const Token name = Peek();
    if (name.kind != TokenKind::kIdent) {
      if (name.kind == TokenKind::kError || name.kind == TokenKind::kEnd) {
        return Unexpected("expected an attribute name, NOT or '('");
      }
      return ErrorAt(name, "expected an attribute name, NOT or '('");
    }
    // A function is its name and '(' (an attribute is never followed by one), so attributes
    // may still be called match or phrase.
    bool taken = false;
    FilterNode::TextOp text_op;
    if (!name.quoted && TextOpOf(name.text, &text_op)) {
      Take();
      taken = true;
      if (Peek().kind == TokenKind::kLParen) return ParseTextTest(name, text_op, out);
    }
    const std::string_view wanted = IdentName(name);
    size_t attr = spec_.attributes.size();
    for (size_t i = 0; i < spec_.attributes.size(); ++i) {
      if (spec_.attributes[i].name == wanted) attr = i;
    }
    // The row id: a bare `id`, unless an attribute of a store from before the naming rule
    // holds that name (it is then reached as the attribute).
    const bool is_id = attr == spec_.attributes.size() && !name.quoted && wanted == "id";
    if (attr == spec_.attributes.size() && !is_id) {
      return ErrorAt(name, "unknown attribute '" + std::string(wanted) + "' (" + AttributeList() +
                               ")");
    }
    if (!taken) Take();
    const AttributeSpec& a = is_id ? IdSpec() : spec_.attributes[attr];
    auto node = std::make_unique<FilterNode>();
    node->pos = name.pos;
    node->attr = is_id ? 0 : attr;
    node->is_id = is_id;
    node->attr_name = a.name;
    node->attr_type = a.type;

    const Token op = Peek();
    const std::string type_name = AttrTypeName(a.type);
    auto only_tags_ops = [&] {
      return ErrorAt(
          op, "attribute '" + a.name + "' is tags and supports only CONTAINS and IS [NOT] NULL");
    };
    if (a.type == AttrType::kText && op.kind != TokenKind::kIs) {
      if (op.kind == TokenKind::kEnd || op.kind == TokenKind::kError) {
        return Unexpected("expected IS [NOT] NULL after the text attribute '" + a.name + "'");
      }
      return ErrorAt(op, "attribute '" + a.name +
                             "' is text: test it with MATCH, MATCH_ALL, PHRASE or IS [NOT] NULL");
    }
    switch (op.kind) {
      case TokenKind::kEq:
      case TokenKind::kNe:
      case TokenKind::kLt:
      case TokenKind::kLe:
      case TokenKind::kGt:
      case TokenKind::kGe: {
        static constexpr CompareOp kOps[] = {CompareOp::kEq, CompareOp::kNe, CompareOp::kLt,
                                             CompareOp::kLe, CompareOp::kGt, CompareOp::kGe};
        node->kind = FilterNode::Kind::kCompare;
        node->op = kOps[static_cast<int>(op.kind) - static_cast<int>(TokenKind::kEq)];
        bool range = node->op != CompareOp::kEq && node->op != CompareOp::kNe;
        if (a.type == AttrType::kTags) return only_tags_ops();
        if (range && !IsNumeric(a.type)) {
          return ErrorAt(op, std::string("'") + OpText(node->op) +
                                 "' applies only to int and float attributes; '" + a.name +
                                 "' is " + type_name);
        }
        Take();
        FilterLiteral lit;
        const Token lt = Peek();
        SIEVE_RETURN_IF_ERROR(ParseLiteral(&lit));
        SIEVE_RETURN_IF_ERROR(CheckComparable(a, lit, lt));
        node->literals.push_back(std::move(lit));
        break;
      }
      case TokenKind::kNot:
      case TokenKind::kIn: {
        node->kind = FilterNode::Kind::kIn;
        if (op.kind == TokenKind::kNot) {
          Take();
          node->negated = true;
          if (Peek().kind != TokenKind::kIn) return Unexpected("expected IN after NOT");
        }
        if (a.type == AttrType::kTags) return only_tags_ops();
        Take();  // IN
        SIEVE_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "expected '(' after IN"));
        if (Peek().kind == TokenKind::kRParen) return ErrorAt(Peek(), "empty IN list");
        while (true) {
          FilterLiteral lit;
          const Token lt = Peek();
          SIEVE_RETURN_IF_ERROR(ParseLiteral(&lit));
          SIEVE_RETURN_IF_ERROR(CheckComparable(a, lit, lt));
          node->literals.push_back(std::move(lit));
          if (Peek().kind == TokenKind::kComma) {
            Take();
            continue;
          }
          SIEVE_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "expected ',' or ')' in IN list"));
          break;
        }
        break;
      }
      case TokenKind::kBetween: {
        node->kind = FilterNode::Kind::kBetween;
        if (a.type == AttrType::kTags) return only_tags_ops();
        if (!IsNumeric(a.type)) {
          return ErrorAt(op, "BETWEEN applies only to int and float attributes; '" + a.name +
                                 "' is " + type_name);
        }
        Take();
        for (int i = 0; i < 2; ++i) {
          if (i == 1) SIEVE_RETURN_IF_ERROR(Expect(TokenKind::kAnd, "expected AND in BETWEEN"));
          FilterLiteral lit;
          const Token lt = Peek();
          SIEVE_RETURN_IF_ERROR(ParseLiteral(&lit));
          SIEVE_RETURN_IF_ERROR(CheckComparable(a, lit, lt));
          node->literals.push_back(std::move(lit));
        }
        break;
      }
      case TokenKind::kContains: {
        node->kind = FilterNode::Kind::kContains;
        if (a.type != AttrType::kTags) {
          return ErrorAt(
              op, "CONTAINS applies only to tags attributes; '" + a.name + "' is " + type_name);
        }
        Take();
        FilterLiteral lit;
        const Token lt = Peek();
        SIEVE_RETURN_IF_ERROR(ParseLiteral(&lit));
        if (lit.kind != FilterLiteral::Kind::kString) {
          return ErrorAt(lt, "CONTAINS needs a 'string' literal");
        }
        node->literals.push_back(std::move(lit));
        break;
      }
      case TokenKind::kIs: {
        node->kind = FilterNode::Kind::kIsNull;
        Take();
        if (Peek().kind == TokenKind::kNot) {
          Take();
          node->negated = true;
        }
        SIEVE_RETURN_IF_ERROR(Expect(TokenKind::kNull, node->negated
                                                           ? "expected NULL after IS NOT"
                                                           : "expected NULL or NOT NULL after IS"));
        break;
      }
      default:
        return Unexpected(
            "expected an operator (=, !=, <, <=, >, >=, IN, NOT IN, BETWEEN, "
            "CONTAINS or IS) after '" +
            a.name + "'");
    }
    *out = std::move(node);
    return Status::OK();
  }

  const CollectionSpec& spec_;
  Lexer lexer_;
  Token cur_;
};

void AppendLiteral(const FilterLiteral& lit, std::string* out) {
  switch (lit.kind) {
    case FilterLiteral::Kind::kInt:
      *out += std::to_string(lit.i);
      break;
    case FilterLiteral::Kind::kDecimal: {
      char buf[64];
      auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), lit.d);
      std::string s(buf, end);
      // Keep it a decimal when read back ("2500" would become an integer literal).
      if (s.find_first_of(".e") == std::string::npos) s += ".0";
      *out += s;
      break;
    }
    case FilterLiteral::Kind::kString:
      out->push_back('\'');
      for (char c : lit.s) {
        if (c == '\'') out->push_back('\'');
        out->push_back(c);
      }
      out->push_back('\'');
      break;
    case FilterLiteral::Kind::kBool:
      *out += lit.b ? "true" : "false";
      break;
  }
}

// The attribute as the lexer reads it back: bare when it can be, else double-quoted.
std::string NameText(const std::string& name) {
  if (IsBareIdentifier(name)) return name;
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  return out + "\"";
}

void AppendNode(const FilterNode& n, std::string* out) {
  using K = FilterNode::Kind;
  switch (n.kind) {
    case K::kAll:
      break;
    case K::kAnd:
    case K::kOr:
      out->push_back('(');
      for (size_t i = 0; i < n.children.size(); ++i) {
        if (i > 0) *out += n.kind == K::kAnd ? " AND " : " OR ";
        AppendNode(*n.children[i], out);
      }
      out->push_back(')');
      break;
    case K::kNot:
      *out += "NOT ";
      AppendNode(*n.children[0], out);
      break;
    case K::kCompare:
      *out += NameText(n.attr_name) + " " + OpText(n.op) + " ";
      AppendLiteral(n.literals[0], out);
      break;
    case K::kIn:
      *out += NameText(n.attr_name) + (n.negated ? " NOT IN (" : " IN (");
      for (size_t i = 0; i < n.literals.size(); ++i) {
        if (i > 0) *out += ", ";
        AppendLiteral(n.literals[i], out);
      }
      out->push_back(')');
      break;
    case K::kBetween:
      *out += NameText(n.attr_name) + " BETWEEN ";
      AppendLiteral(n.literals[0], out);
      *out += " AND ";
      AppendLiteral(n.literals[1], out);
      break;
    case K::kContains:
      *out += NameText(n.attr_name) + " CONTAINS ";
      AppendLiteral(n.literals[0], out);
      break;
    case K::kIsNull:
      *out += NameText(n.attr_name) + (n.negated ? " IS NOT NULL" : " IS NULL");
      break;
    case K::kText:
      *out += n.text_op == FilterNode::TextOp::kMatch      ? "MATCH("
              : n.text_op == FilterNode::TextOp::kMatchAll ? "MATCH_ALL("
                                                           : "PHRASE(";
      *out += NameText(n.attr_name) + ", ";
      AppendLiteral(n.literals[0], out);
      out->push_back(')');
      break;
  }
}

}  // namespace

Status ParseFilter(std::string_view text, const CollectionSpec& spec,
                   std::unique_ptr<FilterNode>* out) {
  return Parser(text, spec).Parse(out);
}

std::string FilterToString(const FilterNode& node) {
  std::string out;
  AppendNode(node, &out);
  return out;
}

}  // namespace sieve
