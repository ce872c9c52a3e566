// Copyright 2026 The Sieve Authors.
//
// The commands that change a collection without rewriting its rows: `alter` (add, drop or
// rename an attribute, or rename the collection), `rename`, `alias` and `aliases`.

#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sieve/db.h"
#include "tools/cli/cli_util.h"
#include "tools/cli/commands.h"
#include "tools/cli/flags.h"

namespace sieve::cli {

namespace {

using json = nlohmann::ordered_json;

const char kAlterUsage[] =
    "usage: sieve alter DB --collection NAME (--add-attr NAME:TYPE [--default VALUE]\n"
    "                      | --drop-attr NAME | --rename-attr OLD NEW | --rename NEW\n"
    "                      | --bm25-k1 K1 --bm25-b B)\n"
    "  One atomic, durable schema change; vectors are never rewritten (the attribute columns\n"
    "  are). --add-attr appends an attribute (TYPE as create's); rows already stored get\n"
    "  --default (a literal of the filter language: 3, 2.5, 'text', true, ('a', 'b'), NULL;\n"
    "  default NULL). --drop-attr removes one and gives its bytes back. --rename-attr renames\n"
    "  one. --rename renames the collection (as `sieve rename`). --bm25-k1 and --bm25-b set\n"
    "  BM25's parameters for text queries (k1 0 to 1000, b 0 to 1; the one not given keeps\n"
    "  its value). NAME may be an alias.\n"
    "  stdout: {\"altered\": NAME, \"attributes\": [...], \"rows\": N, \"chunks_rewritten\": C}\n"
    "          (--rename: {\"renamed\": OLD, \"to\": NEW})\n";

const char kRenameUsage[] =
    "usage: sieve rename DB OLD NEW\n"
    "  Renames collection OLD to NEW in one atomic, durable commit; no row is rewritten and\n"
    "  aliases naming OLD follow it. stdout: {\"renamed\": OLD, \"to\": NEW}\n";

const char kAliasUsage[] =
    "usage: sieve alias DB NAME --to COLLECTION | sieve alias DB NAME --drop\n"
    "  Creates alias NAME for COLLECTION, or switches it there (one atomic, durable write:\n"
    "  calls through NAME that start afterwards use COLLECTION); --drop removes it. Every\n"
    "  command that takes --collection also takes an alias, except drop and rename.\n"
    "  stdout: {\"alias\": NAME, \"collection\": COLLECTION} or {\"dropped_alias\": NAME}\n";

const char kAliasesUsage[] =
    "usage: sieve aliases DB\n"
    "  stdout: one {\"alias\": NAME, \"collection\": COLLECTION} line per alias, by name\n";

// Splits `args` into positional arguments and the flags (with the values of `value_flags`),
// so a command can take several positional arguments and still parse its flags with Flags.
void SplitArgs(const Args& args, const std::set<std::string>& value_flags,
               std::vector<std::string>* positional, Args* flags) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() > 2 && a.compare(0, 2, "--") == 0) {
      flags->push_back(a);
      if (value_flags.count(a.substr(2)) && i + 1 < args.size()) flags->push_back(args[++i]);
    } else if (a == "-h") {
      flags->push_back(a);
    } else {
      positional->push_back(a);
    }
  }
}

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

json AttributesJson(const CollectionSpec& spec) {
  json attrs = json::array();
  for (const AttributeSpec& a : spec.attributes) {
    attrs.push_back({{"name", a.name}, {"type", AttributeTypeText(a)}});
  }
  return attrs;
}

}  // namespace

int Alter(const Args& args) {
  // --rename-attr takes two values: OLD NEW.
  Args rewritten;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--rename-attr" && i + 2 < args.size()) {
      rewritten.insert(rewritten.end(), {"--rename-attr", args[i + 1], "--rename-attr-to",
                                         args[i + 2]});
      i += 2;
    } else {
      rewritten.push_back(args[i]);
    }
  }
  Flags flags({"collection", "add-attr", "default", "drop-attr", "rename-attr",
               "rename-attr-to", "rename", "bm25-k1", "bm25-b"},
              {});
  std::string path;
  if (int rc = ParseFlags("alter", kAlterUsage, rewritten, &flags, &path); rc >= 0) return rc;
  std::string name;
  Status s = flags.Require("collection", &name);
  const bool bm25 = flags.Has("bm25-k1") || flags.Has("bm25-b");
  const int ops = flags.Has("add-attr") + flags.Has("drop-attr") + flags.Has("rename-attr") +
                  flags.Has("rename") + bm25;
  if (s.ok() && ops != 1) {
    s = Status::InvalidArgument(
        "give exactly one of --add-attr NAME:TYPE, --drop-attr NAME, --rename-attr OLD NEW, "
        "--rename NEW and --bm25-k1/--bm25-b");
  }
  if (s.ok() && flags.Has("default") && !flags.Has("add-attr")) {
    s = Status::InvalidArgument("--default goes with --add-attr");
  }
  if (s.ok() && flags.Has("rename-attr") != flags.Has("rename-attr-to")) {
    s = Status::InvalidArgument("--rename-attr takes two values: OLD NEW");
  }
  AlterRequest request;
  if (s.ok() && flags.Has("add-attr")) {
    const std::string a = flags.Get("add-attr");
    const auto colon = a.find(':');
    AttributeSpec attr;
    if (colon == std::string::npos) {
      s = Status::InvalidArgument("--add-attr '" + a + "': expected NAME:TYPE");
    } else {
      attr.name = a.substr(0, colon);
      s = ParseAttributeType(a.substr(colon + 1), &attr).WithContext("--add-attr '" + a + "'");
    }
    if (s.ok()) s = ValidateAttributeName(attr.name).WithContext("--add-attr '" + a + "'");
    Value value;
    if (s.ok() && flags.Has("default")) {
      // The literal as update's --set reads it, against the new attribute alone.
      CollectionSpec one;
      one.name = name;
      one.attributes = {attr};
      std::string unused;
      s = ParseAssignment(attr.name + " = " + flags.Get("default"), one, &unused, &value);
      if (!s.ok()) {
        // Its positions count in "NAME = VALUE", which the user did not write: keep the what.
        std::string what = s.message();
        const size_t at = what.find("position ");
        if (at != std::string::npos && what.find(": ", at) != std::string::npos) {
          what = what.substr(what.find(": ", at) + 2);
        }
        s = Status::InvalidArgument("--default '" + flags.Get("default") + "': " + what);
      }
    }
    request = AlterRequest::AddAttribute(attr.name, attr.type, value);
    request.analyzer = attr.analyzer;
  } else if (s.ok() && flags.Has("drop-attr")) {
    request = AlterRequest::DropAttribute(flags.Get("drop-attr"));
  } else if (s.ok() && flags.Has("rename-attr")) {
    request = AlterRequest::RenameAttribute(flags.Get("rename-attr"), flags.Get("rename-attr-to"));
  }
  if (!s.ok()) return Fail("alter", s);
  std::unique_ptr<DB> db;
  s = OpenDb(path, OpenFor::kWrite, &db);
  if (!s.ok()) return Fail("alter", s);
  if (bm25) {
    // The one not given keeps the collection's value.
    std::shared_ptr<Collection> c;
    s = db->GetCollection(name, &c);
    double k1 = 0, b = 0;
    if (s.ok()) s = flags.GetDouble("bm25-k1", c->spec().bm25_k1, &k1);
    if (s.ok()) s = flags.GetDouble("bm25-b", c->spec().bm25_b, &b);
    if (!s.ok()) return Fail("alter", s);
    request = AlterRequest::SetBm25(k1, b);
  }
  if (flags.Has("rename")) {
    s = db->RenameCollection(name, flags.Get("rename"));
    if (!s.ok()) return Fail("alter", s);
    std::printf("%s\n", Dump(json{{"renamed", name}, {"to", flags.Get("rename")}}).c_str());
    return 0;
  }
  AlterResult result;
  s = db->AlterCollection(name, request, &result);
  if (!s.ok()) return Fail("alter", s);
  std::printf("%s\n", Dump(json{{"altered", result.spec.name},
                                {"attributes", AttributesJson(result.spec)},
                                {"rows", result.rows},
                                {"chunks_rewritten", result.chunks_rewritten},
                                {"bm25", {{"k1", result.spec.bm25_k1}, {"b", result.spec.bm25_b}}}})
                          .c_str());
  return 0;
}

int Rename(const Args& args) {
  std::vector<std::string> positional;
  Args rest;
  SplitArgs(args, {}, &positional, &rest);
  Flags flags({}, {});
  if (!positional.empty()) rest.insert(rest.begin(), positional[0]);
  std::string path;
  if (int rc = ParseFlags("rename", kRenameUsage, rest, &flags, &path); rc >= 0) return rc;
  if (positional.size() != 3) {
    return Fail("rename", Status::InvalidArgument("expected DB OLD NEW, got " +
                                                  std::to_string(positional.size()) +
                                                  " arguments"));
  }
  std::unique_ptr<DB> db;
  Status s = OpenDb(path, OpenFor::kWrite, &db);
  if (s.ok()) s = db->RenameCollection(positional[1], positional[2]);
  if (!s.ok()) return Fail("rename", s);
  std::printf("%s\n", Dump(json{{"renamed", positional[1]}, {"to", positional[2]}}).c_str());
  return 0;
}

int Alias(const Args& args) {
  std::vector<std::string> positional;
  Args rest;
  SplitArgs(args, {"to"}, &positional, &rest);
  Flags flags({"to"}, {"drop"});
  if (!positional.empty()) rest.insert(rest.begin(), positional[0]);
  std::string path;
  if (int rc = ParseFlags("alias", kAliasUsage, rest, &flags, &path); rc >= 0) return rc;
  Status s;
  if (positional.size() != 2) {
    s = Status::InvalidArgument("expected DB NAME, got " + std::to_string(positional.size()) +
                                " arguments");
  } else if (flags.Has("to") == flags.Has("drop")) {
    s = Status::InvalidArgument("give exactly one of --to COLLECTION and --drop");
  }
  if (!s.ok()) return Fail("alias", s);
  const std::string& alias = positional[1];
  std::unique_ptr<DB> db;
  s = OpenDb(path, OpenFor::kWrite, &db);
  if (s.ok()) s = flags.Has("drop") ? db->DropAlias(alias) : db->PutAlias(alias, flags.Get("to"));
  if (!s.ok()) return Fail("alias", s);
  const json out = flags.Has("drop") ? json{{"dropped_alias", alias}}
                                     : json{{"alias", alias}, {"collection", flags.Get("to")}};
  std::printf("%s\n", Dump(out).c_str());
  return 0;
}

int Aliases(const Args& args) {
  Flags flags({}, {});
  std::string path;
  if (int rc = ParseFlags("aliases", kAliasesUsage, args, &flags, &path); rc >= 0) return rc;
  std::unique_ptr<DB> db;
  Status s = OpenDb(path, OpenFor::kRead, &db);
  std::vector<AliasInfo> aliases;
  if (s.ok()) s = db->ListAliases(&aliases);
  if (!s.ok()) return Fail("aliases", s);
  std::string out;
  for (const AliasInfo& a : aliases) {
    out += Dump(json{{"alias", a.alias}, {"collection", a.collection}}) + "\n";
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace sieve::cli
