// Copyright 2026 The Sieve Authors.
//
// storage/FORMAT.md states the rule names are created by; it must be the code's
// (ValidateCollectionName, ValidateAttributeName): a red-team pass found them apart.

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "sieve/types.h"
#include "tests/testutil.h"

namespace sieve {
namespace {

// The backquoted text after `marker` in FORMAT.md.
std::string Quoted(const std::string& doc, const std::string& marker) {
  const size_t at = doc.find(marker);
  if (at == std::string::npos) return "";
  const size_t open = doc.find('`', at + marker.size());
  const size_t close = doc.find('`', open + 1);
  return doc.substr(open + 1, close - open - 1);
}

TEST(NamingRuleDocTest, FormatMdStatesTheRuleNamesAreCreatedBy) {
  std::string doc = test::ReadFile(test::SourceDir() + "/storage/FORMAT.md");
  for (char& c : doc) c = c == '\n' ? ' ' : c;
  const std::string pattern = Quoted(doc, "collection and alias names created now:");
  ASSERT_FALSE(pattern.empty()) << "FORMAT.md does not state the naming rule";
  const std::regex rule(pattern);
  const std::string long_name(128, 'a');
  const std::vector<std::string> names = {
      "items", "_x",  "a-b", "a_b9", "A",  long_name, long_name + "a", "9a", "-a", "a.b",
      "a b",   "é",   "",    "a/b",  "x-", "Z_-0"};
  for (const std::string& name : names) {
    EXPECT_EQ(std::regex_match(name, rule), ValidateCollectionName(name).ok()) << name;
    // Attribute names: the same rule without '-'.
    const bool attribute_ok = std::regex_match(name, rule) && name.find('-') == std::string::npos;
    EXPECT_EQ(attribute_ok, ValidateAttributeName(name).ok()) << name;
  }
  // The words the rule leaves out, in any letter case.
  for (const char* word : {"AND", "or", "Not", "in", "BETWEEN", "contains", "is", "NULL", "true",
                           "False", "id"}) {
    EXPECT_NE(doc.find(std::string(word) == "id" ? "nor `id`" : "CONTAINS IS NULL"),
              std::string::npos);
    EXPECT_FALSE(ValidateCollectionName(word).ok()) << word;
    EXPECT_FALSE(ValidateAttributeName(word).ok()) << word;
  }
}

}  // namespace
}  // namespace sieve
