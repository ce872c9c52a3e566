// Copyright 2026 The Sieve Authors.
//
// The naming rule of collections and attributes (include/sieve/types.h). It lives with the
// filter language because the language is why it exists: a name must be writable in a filter
// without quotes, and must not be read as a keyword.

#include <string>
#include <string_view>

#include "filter/lexer.h"
#include "sieve/types.h"

namespace sieve {

namespace {

constexpr size_t kMaxNameLength = 128;

bool IsAsciiLetter(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

// `what` is "collection" or "attribute"; `allow_dash` is the one difference between them.
Status ValidateName(std::string_view name, const char* what, bool allow_dash) {
  const std::string shown = "'" + std::string(name.substr(0, kMaxNameLength)) +
                            (name.size() > kMaxNameLength ? "...'" : "'");
  const std::string allowed = allow_dash ? "A-Z, a-z, 0-9, '_' and '-'" : "A-Z, a-z, 0-9 and '_'";
  if (name.empty() || name.size() > kMaxNameLength) {
    return Status::InvalidArgument(std::string(what) + " name " + shown + " must be 1 to " +
                                   std::to_string(kMaxNameLength) + " characters, got " +
                                   std::to_string(name.size()));
  }
  if (!IsAsciiLetter(name[0]) && name[0] != '_') {
    return Status::InvalidArgument(std::string(what) + " name " + shown +
                                   " must start with a letter or '_'");
  }
  for (char c : name) {
    if (!IsAsciiLetter(c) && !IsAsciiDigit(c) && c != '_' && !(allow_dash && c == '-')) {
      return Status::InvalidArgument(std::string(what) + " name " + shown + " may only contain " +
                                     allowed);
    }
  }
  if (IsFilterKeyword(name)) {
    return Status::InvalidArgument(std::string(what) + " name " + shown +
                                   " is a keyword of the filter language");
  }
  if (name == "id") {
    return Status::InvalidArgument(std::string(what) + " name " + shown +
                                   " is reserved for the row id");
  }
  return Status::OK();
}

}  // namespace

Status ValidateCollectionName(std::string_view name) {
  return ValidateName(name, "collection", /*allow_dash=*/true);
}

Status ValidateAttributeName(std::string_view name) {
  return ValidateName(name, "attribute", /*allow_dash=*/false);
}

}  // namespace sieve
