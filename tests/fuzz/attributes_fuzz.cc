// Copyright 2026 The Sieve Authors.
//
// Fuzzes the attributes readers (JSON Lines and CSV). The first input byte picks the format
// and the expected row count; the rest is the file. What is accepted must have exactly the
// expected rows, each with one value per attribute, null or of the attribute's type.

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "tests/fuzz/fuzz_util.h"
#include "tools/io/attributes_reader.h"

namespace {

bool HasType(const sieve::Value& v, sieve::AttrType t) {
  if (sieve::IsNull(v)) return true;
  switch (t) {
    case sieve::AttrType::kInt: return std::holds_alternative<int64_t>(v);
    case sieve::AttrType::kFloat: return std::holds_alternative<double>(v);
    case sieve::AttrType::kString: return std::holds_alternative<std::string>(v);
    case sieve::AttrType::kBool: return std::holds_alternative<bool>(v);
    case sieve::AttrType::kTags: return std::holds_alternative<std::vector<std::string>>(v);
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using sieve::fuzz::Fail;
  if (size == 0) return 0;
  const bool csv = data[0] & 1;
  const size_t expected_rows = (data[0] >> 1) & 7;
  const std::string path =
      sieve::fuzz::WriteInput(csv ? "input.csv" : "input.jsonl", data + 1, size - 1);
  static const std::vector<sieve::AttributeSpec> schema = {
      {"i", sieve::AttrType::kInt},    {"f", sieve::AttrType::kFloat},
      {"s", sieve::AttrType::kString}, {"b", sieve::AttrType::kBool},
      {"t", sieve::AttrType::kTags}};
  std::vector<std::vector<sieve::Value>> rows;
  sieve::Status s = csv ? sieve::io::ReadAttributesCsv(path, schema, expected_rows, &rows)
                        : sieve::io::ReadAttributesJsonl(path, schema, expected_rows, &rows);
  if (!s.ok()) {
    if (s.message().empty()) Fail("an error without a message: " + s.ToString());
    return 0;
  }
  if (rows.size() != expected_rows) Fail("accepted a file with the wrong row count");
  for (const auto& row : rows) {
    if (row.size() != schema.size()) Fail("a row without one value per attribute");
    for (size_t a = 0; a < schema.size(); ++a) {
      if (!HasType(row[a], schema[a].type)) Fail("a value of the wrong type");
    }
  }
  return 0;
}
