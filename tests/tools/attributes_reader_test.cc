// Copyright 2026 The Sieve Authors.

#include "tools/io/attributes_reader.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "tests/testutil.h"

namespace sieve::io {
namespace {

using Tags = std::vector<std::string>;
using Row = std::vector<Value>;
constexpr std::monostate kNull;

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(f.good());
}

void ExpectInvalid(const Status& s, std::initializer_list<std::string> parts) {
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.IsInvalidArgument()) << s.message();
  for (const std::string& p : parts) {
    EXPECT_NE(s.message().find(p), std::string::npos) << "'" << p << "' not in: " << s.message();
  }
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
}

class AttributesReaderTest : public ::testing::Test {
 protected:
  const std::vector<AttributeSpec> schema_ = {{"id", AttrType::kInt},
                                              {"price", AttrType::kFloat},
                                              {"name", AttrType::kString},
                                              {"ok", AttrType::kBool},
                                              {"tags", AttrType::kTags}};

  // Writes `text` to a file called `name` and reads it with the schema above.
  Status Read(const std::string& name, const std::string& text, size_t expected_rows,
              std::vector<Row>* rows) {
    path_ = dir_.Join(name);
    WriteBytes(path_, text);
    return ReadAttributes(path_, schema_, expected_rows, rows);
  }

  // Expects reading `text` as `name` with `expected_rows` to fail naming the file and `parts`.
  void ExpectBad(const std::string& name, const std::string& text, size_t expected_rows,
                 std::initializer_list<std::string> parts) {
    std::vector<Row> rows;
    Status s = Read(name, text, expected_rows, &rows);
    ExpectInvalid(s, {"attributes file " + path_});
    ExpectInvalid(s, parts);
  }

  test::ScratchDir dir_;
  std::string path_;
};

// ---------------------------------------------------------------------------------------------
// JSON Lines

TEST_F(AttributesReaderTest, JsonlEveryTypeAndNull) {
  const std::string text =
      "{\"id\": 1, \"price\": 2.5, \"name\": \"caf\u00e9\", \"ok\": true, \"tags\": [\"a\", "
      "\"b\"]}\n"
      "{\"tags\": [], \"ok\": false, \"name\": \"\", \"price\": 3, \"id\": -9223372036854775808}\n"
      "{}\n"
      "{\"id\": null, \"price\": null, \"name\": null, \"ok\": null, \"tags\": null}\n"
      "{\"id\": 9223372036854775807, \"price\": -1e-300, \"name\": \"q\\\"\\n\"}\n"
      "  {\"id\": 3.0, \"price\": 1e308}  \n";
  std::vector<Row> rows;
  Status s = Read("a.jsonl", text, 6, &rows);
  ASSERT_TRUE(s.ok()) << s.message();
  const std::vector<Row> want = {
      {int64_t{1}, 2.5, std::string("caf\u00e9"), true, Tags{"a", "b"}},
      {std::numeric_limits<int64_t>::min(), 3.0, std::string(), false, Tags{}},
      {kNull, kNull, kNull, kNull, kNull},
      {kNull, kNull, kNull, kNull, kNull},
      {std::numeric_limits<int64_t>::max(), -1e-300, std::string("q\"\n"), kNull, kNull},
      {int64_t{3}, 1e308, kNull, kNull, kNull},
  };
  EXPECT_EQ(rows, want);
}

TEST_F(AttributesReaderTest, JsonlLineEndingsBomAndExtensions) {
  const std::vector<Row> want = {{int64_t{1}, kNull, kNull, kNull, kNull},
                                 {int64_t{2}, kNull, kNull, kNull, kNull}};
  std::vector<Row> rows;
  for (const char* text :
       {"{\"id\":1}\n{\"id\":2}\n", "{\"id\":1}\n{\"id\":2}", "{\"id\":1}\r\n{\"id\":2}\r\n",
        "\xEF\xBB\xBF{\"id\":1}\n{\"id\":2}\n"}) {
    SCOPED_TRACE(text);
    for (const char* name : {"a.jsonl", "a.JSONL", "a.ndjson", "a.json"}) {
      Status s = Read(name, text, 2, &rows);
      ASSERT_TRUE(s.ok()) << s.message();
      EXPECT_EQ(rows, want);
    }
  }
}

TEST_F(AttributesReaderTest, JsonlEmptyFileHasNoRows) {
  std::vector<Row> rows = {{}};
  ASSERT_TRUE(Read("a.jsonl", "", 0, &rows).ok());
  EXPECT_TRUE(rows.empty());
  ExpectBad("a.jsonl", "", 3, {"has 0 rows, vectors have 3"});
}

TEST_F(AttributesReaderTest, JsonlRejectsBadInput) {
  const std::string ok = "{\"id\": 1}\n{\"id\": 2}\n";
  ExpectBad("a.jsonl", ok + "{\"id\": 3,}\n", 3, {"line 3 (row 2)", "invalid JSON"});
  ExpectBad("a.jsonl", ok + "{\"id\": 3\n", 3, {"line 3 (row 2)", "invalid JSON"});
  ExpectBad("a.jsonl", "{\"id\": 1} {\"id\": 2}\n", 1, {"line 1 (row 0)", "invalid JSON"});
  ExpectBad("a.jsonl", "{\"name\": \"\xff\"}\n", 1, {"line 1 (row 0)", "invalid JSON", "UTF-8"});
  ExpectBad("a.jsonl", "{'id': 1}\n", 1, {"line 1 (row 0)", "invalid JSON"});
  ExpectBad("a.jsonl", ok + "[1, 2]\n", 3, {"line 3 (row 2)", "expected a JSON object"});
  ExpectBad("a.jsonl", ok + "7\n", 3, {"line 3 (row 2)", "expected a JSON object"});
  ExpectBad("a.json", "[{\"id\": 1}, {\"id\": 2}]", 2, {"JSON array", "JSON Lines"});
  ExpectBad("a.jsonl", ok + "\n{\"id\": 3}\n", 3, {"line 3 (row 2)", "blank line"});
  // Blank lines at the end hold no row (and are no error): the file has its two rows.
  std::vector<Row> rows;
  EXPECT_TRUE(Read("a.jsonl", ok + "\n \r\n\n", 2, &rows).ok());
  EXPECT_EQ(rows.size(), 2u);
  ExpectBad("a.jsonl", ok + "\n \n", 3, {"has 2 rows, vectors have 3"});
  ExpectBad("a.jsonl", ok + "{\"id\": 3, \"colour\": \"red\"}\n", 3,
            {"line 3 (row 2)", "unknown attribute 'colour'"});
  ExpectBad("a.jsonl", ok + "{\"id\": 3, \"price\": 1, \"id\": 4}\n", 3,
            {"line 3 (row 2)", "attribute 'id' appears twice"});
  ExpectBad("a.jsonl", ok, 3, {"has 2 rows, vectors have 3"});
  ExpectBad("a.jsonl", ok, 1, {"has 2 rows, vectors have 1"});
}

TEST_F(AttributesReaderTest, JsonlRejectsWrongTypes) {
  struct Case {
    std::string object;
    std::vector<std::string> parts;
  };
  const Case cases[] = {
      {"{\"id\": \"7\"}", {"attribute 'id' (int)", "expected int, found string \"7\""}},
      {"{\"id\": 3.5}", {"attribute 'id'", "non-integral number 3.5"}},
      {"{\"id\": true}", {"attribute 'id'", "found boolean"}},
      {"{\"id\": 9223372036854775808}", {"attribute 'id'", "out of int64 range"}},
      {"{\"id\": -9223372036854775809}", {"attribute 'id'", "out of int64 range"}},
      {"{\"id\": 1e300}", {"attribute 'id'", "out of int64 range"}},
      {"{\"id\": 9007199254740993.0}", {"attribute 'id'", "not an exact integer"}},
      {"{\"price\": \"1.5\"}", {"attribute 'price' (float)", "expected float, found string"}},
      {"{\"price\": [1]}", {"attribute 'price'", "found array"}},
      {"{\"price\": 1e999}", {"invalid JSON", "number overflow", "1e999"}},
      {"{\"name\": 5}", {"attribute 'name' (string)", "expected string, found number 5"}},
      {"{\"name\": {\"a\": 1}}", {"attribute 'name'", "found object"}},
      {"{\"ok\": 1}", {"attribute 'ok' (bool)", "expected bool"}},
      {"{\"ok\": \"true\"}", {"attribute 'ok'", "expected bool"}},
      {"{\"tags\": \"a\"}", {"attribute 'tags' (tags)", "expected tags"}},
      {"{\"tags\": [\"a\", 1]}", {"attribute 'tags'", "element 1 is number"}},
      {"{\"tags\": [\"a\", null]}", {"attribute 'tags'", "element 1 is null"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.object);
    std::vector<Row> rows;
    Status s = Read("a.jsonl", "{}\n" + c.object + "\n{}\n", 3, &rows);
    ExpectInvalid(s, {"line 2 (row 1)"});
    for (const std::string& p : c.parts) ExpectInvalid(s, {p});
  }
}

// Lines the SAX fast path must hand to the DOM path, which words the error as it always has.
TEST_F(AttributesReaderTest, JsonlErrorsAsTheDomPathWordsThem) {
  struct Case {
    std::string object;
    std::vector<std::string> parts;
  };
  const Case cases[] = {
      // A parse error later on the line outranks a wrong type before it.
      {"{\"id\": \"x\", \"price\": }", {"invalid JSON"}},
      {"{\"colour\": 1, \"id\": 1,}", {"invalid JSON"}},
      // A repeat outranks an unknown key or a wrong type before it.
      {"{\"colour\": 1, \"id\": 1, \"id\": 2}", {"attribute 'id' appears twice"}},
      {"{\"id\": \"x\", \"name\": \"a\", \"name\": \"b\"}", {"attribute 'name' appears twice"}},
      // Attributes are checked in name order, not line order.
      {"{\"price\": \"x\", \"id\": \"y\"}", {"attribute 'id' (int)", "found string \"y\""}},
      {"{\"zz\": 1, \"aa\": 2}", {"unknown attribute 'aa'"}},
      {"{\"tags\": [[\"a\"]]}", {"attribute 'tags'", "element 0 is array"}},
      {"{\"tags\": [\"a\", {\"b\": 1}]}", {"attribute 'tags'", "element 1 is object"}},
      {"{\"id\": 18446744073709551615}", {"attribute 'id'", "out of int64 range"}},
      {"{\"id\": 1e-5}", {"attribute 'id'", "non-integral"}},
      {"{\"name\": [\"a\"]}", {"attribute 'name'", "found array"}},
      {"{\"ok\": null, \"ok\": true}", {"attribute 'ok' appears twice"}},
      {"\"{}\"", {"expected a JSON object", "found string"}},
      {"null", {"expected a JSON object", "found null"}},
      {" \t ", {"blank line"}},
      // What follows a NUL would be dropped unread by the parser: refused, not truncated.
      {std::string("{\"id\": 1}") + '\0' + ", \"name\": \"x\"}", {"a NUL byte at column 10"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.object);
    std::vector<Row> rows;
    Status s = Read("a.jsonl", "{}\n" + c.object + "\n{}\n", 3, &rows);
    ExpectInvalid(s, {"line 2 (row 1)"});
    for (const std::string& p : c.parts) ExpectInvalid(s, {p});
  }
}

TEST_F(AttributesReaderTest, JsonlNumberConversions) {
  const std::string text =
      "{\"id\": 1.0e2, \"price\": 18446744073709551615}\n"
      "{\"id\": -0.0, \"price\": -5}\n"
      "{\"id\": 9007199254740991.0, \"price\": 9223372036854775807}\n"
      "{\"id\": 1.844674407e9, \"price\": 0}\n";
  std::vector<Row> rows;
  Status s = Read("a.jsonl", text, 4, &rows);
  ASSERT_TRUE(s.ok()) << s.message();
  const std::vector<Row> want = {
      {int64_t{100}, 18446744073709551615.0, kNull, kNull, kNull},
      {int64_t{0}, -5.0, kNull, kNull, kNull},
      {int64_t{9007199254740991}, 9223372036854775807.0, kNull, kNull, kNull},
      {int64_t{1844674407}, 0.0, kNull, kNull, kNull},
  };
  EXPECT_EQ(rows, want);
}

// Files of a few MiB are split into line-aligned ranges parsed on several threads (when the
// machine has more than one core); the rows must come back in order and the reported error
// must be the first by line number, whichever range holds it.
class JsonlLargeFileTest : public AttributesReaderTest {
 protected:
  static constexpr size_t kLines = 30000;  // about 2.2 MB

  static std::string Line(size_t i) {
    return "{\"id\": " + std::to_string(i) + ", \"price\": " + std::to_string(i) +
           ".5, \"name\": \"n" + std::to_string(i) + "\", \"ok\": " +
           (i % 2 ? "true" : "false") + ", \"tags\": [\"t\", \"u" + std::to_string(i % 7) +
           "\"]}";
  }
  static Row Want(size_t i) {
    return {static_cast<int64_t>(i), static_cast<double>(i) + 0.5, "n" + std::to_string(i),
            i % 2 == 1, Tags{"t", "u" + std::to_string(i % 7)}};
  }
  // The lines, with `bad` lines replaced by `bad_line`, joined by `eol`, ending in `eol` when
  // `final_eol`.
  static std::string Text(const std::vector<size_t>& bad, const std::string& eol = "\n",
                          bool final_eol = true, const std::string& bad_line = "{\"id\": \"x\"}") {
    std::string text;
    for (size_t i = 0; i < kLines; ++i) {
      bool is_bad = false;
      for (size_t b : bad) is_bad |= b == i;
      text += is_bad ? bad_line : Line(i);
      if (i + 1 < kLines || final_eol) text += eol;
    }
    return text;
  }
  // The 0-based line that holds byte `offset` of `text`.
  static size_t LineAt(const std::string& text, size_t offset) {
    size_t line = 0;
    for (size_t i = 0; i < offset; ++i) line += text[i] == '\n';
    return line;
  }
};

TEST_F(JsonlLargeFileTest, ReadsEveryRowInOrder) {
  for (const std::string& eol : {std::string("\n"), std::string("\r\n")}) {
    for (bool final_eol : {true, false}) {
      for (const std::string& bom : {std::string(), std::string("\xEF\xBB\xBF")}) {
        SCOPED_TRACE(eol.size() + 10 * final_eol + 100 * bom.size());
        std::vector<Row> rows;
        Status s = Read("big.jsonl", bom + Text({}, eol, final_eol), kLines, &rows);
        ASSERT_TRUE(s.ok()) << s.message();
        ASSERT_EQ(rows.size(), kLines);
        for (size_t i = 0; i < kLines; ++i) ASSERT_EQ(rows[i], Want(i)) << "row " << i;
      }
    }
  }
  std::vector<Row> rows;
  ExpectBad("big.jsonl", Text({}), kLines + 1, {"has 30000 rows, vectors have 30001"});
}

TEST_F(JsonlLargeFileTest, ReportsTheFirstErrorWhicheverRangeHoldsIt) {
  const std::string plain = Text({});
  // Lines around each point where a split into 2 to 4 ranges could fall, and near the ends.
  std::vector<size_t> lines = {0, 1, kLines - 2, kLines - 1};
  for (size_t parts = 2; parts <= 4; ++parts) {
    for (size_t k = 1; k < parts; ++k) {
      size_t at = LineAt(plain, plain.size() * k / parts);
      for (size_t l = at - 1; l <= at + 1; ++l) lines.push_back(l);
    }
  }
  for (size_t bad : lines) {
    SCOPED_TRACE(bad);
    const std::string where =
        "line " + std::to_string(bad + 1) + " (row " + std::to_string(bad) + ")";
    ExpectBad("big.jsonl", Text({bad}), kLines, {where + ", attribute 'id' (int)"});
  }
  // A later bad line, in the same range or another, does not change which is reported.
  for (size_t bad : {size_t{5}, lines[4], lines[5], kLines / 3}) {
    SCOPED_TRACE(bad);
    const std::string where =
        "line " + std::to_string(bad + 1) + " (row " + std::to_string(bad) + ")";
    ExpectBad("big.jsonl", Text({bad, bad + 1, kLines - 1}, "\n", true, "{\"id\": }"), kLines,
              {where, "invalid JSON"});
    ExpectBad("big.jsonl", Text({bad, kLines / 2 + 500, kLines - 1}, "\n", false,
                                "{\"id\": 1, \"id\": 2}"),
              kLines, {where, "attribute 'id' appears twice"});
  }
  // A blank line in the last range, and the last line bad without a final line break.
  std::string blank = plain;
  blank.insert(plain.size() - Line(kLines - 1).size() - 1, "\n");
  ExpectBad("big.jsonl", blank, kLines + 1,
            {"line " + std::to_string(kLines) + " (row " + std::to_string(kLines - 1) + ")",
             "blank line"});
  ExpectBad("big.jsonl", Text({kLines - 1}, "\r\n", false), kLines,
            {"line 30000 (row 29999), attribute 'id' (int)", "found string \"x\""});
}

TEST_F(JsonlLargeFileTest, VeryLongLines) {
  // One line longer than a thread's share: every split point lands inside it or after it.
  const std::string long_name(3 << 20, 'x');
  Tags many_tags;
  std::string tags_json = "[";
  for (size_t i = 0; i < 100000; ++i) {
    many_tags.push_back("tag" + std::to_string(i));
    tags_json += (i ? ", \"" : "\"") + many_tags.back() + "\"";
  }
  tags_json += "]";
  const std::string text = "{\"id\": 1}\n{\"name\": \"" + long_name + "\", \"tags\": " +
                           tags_json + "}\n{\"id\": 3}\n" + Line(3);
  std::vector<Row> rows;
  Status s = Read("long.jsonl", text, 4, &rows);
  ASSERT_TRUE(s.ok()) << s.message();
  const std::vector<Row> want = {{int64_t{1}, kNull, kNull, kNull, kNull},
                                 {kNull, kNull, long_name, kNull, many_tags},
                                 {int64_t{3}, kNull, kNull, kNull, kNull},
                                 Want(3)};
  EXPECT_EQ(rows, want);

  ExpectBad("long.jsonl", "{}\n{\"name\": \"" + long_name + "\", \"id\": \"x\"}\n{}\n", 3,
            {"line 2 (row 1), attribute 'id' (int)", "found string \"x\""});
  ExpectBad("long.jsonl", "{}\n{\"name\": \"" + long_name + "\"}\n{\"id\": 1.5}", 3,
            {"line 3 (row 2), attribute 'id' (int)", "non-integral"});
  ExpectBad("long.jsonl", "{}\n{\"name\": \"" + long_name + "\" \"id\": 1}\n{}\n", 3,
            {"line 2 (row 1)", "invalid JSON"});
}

// ---------------------------------------------------------------------------------------------
// CSV

TEST_F(AttributesReaderTest, CsvEveryTypeAndNull) {
  // Columns in another order than the schema, and "ok" absent (so always null).
  const std::string text =
      "tags,name,price,id\n"
      "a|b,plain,2.5,1\n"
      "\"\",\"\",-3,-9223372036854775808\n"
      ",,,\n"
      "\"x,y|z\",\"say \"\"hi\"\", then\nleave\",1e-3, +7 \n"
      "solo,caf\u00e9,  4 ,3.0\n"
      "\"\",\" padded \",\"\",\"\"\n";
  std::vector<Row> rows;
  Status s = Read("a.csv", text, 6, &rows);
  ASSERT_TRUE(s.ok()) << s.message();
  const std::vector<Row> want = {
      {int64_t{1}, 2.5, std::string("plain"), kNull, Tags{"a", "b"}},
      {std::numeric_limits<int64_t>::min(), -3.0, std::string(), kNull, Tags{}},
      {kNull, kNull, kNull, kNull, kNull},
      {int64_t{7}, 1e-3, std::string("say \"hi\", then\nleave"), kNull, Tags{"x,y", "z"}},
      {int64_t{3}, 4.0, std::string("caf\u00e9"), kNull, Tags{"solo"}},
      {kNull, kNull, std::string(" padded "), kNull, Tags{}},
  };
  EXPECT_EQ(rows, want);
}

TEST_F(AttributesReaderTest, CsvBoolsLineEndingsAndBom) {
  const std::vector<Row> want = {{kNull, kNull, kNull, true, kNull},
                                 {kNull, kNull, kNull, false, kNull},
                                 {kNull, kNull, kNull, true, kNull},
                                 {kNull, kNull, kNull, false, kNull},
                                 {kNull, kNull, kNull, kNull, kNull}};
  std::vector<Row> rows;
  for (const char* text : {"ok\ntrue\nFALSE\n1\n0\n\n", "ok\r\nTrue\r\nfalse\r\n1\r\n0\r\n\"\"",
                           "\xEF\xBB\xBFok\ntRUE\nfalse\n1\n0\n\"\"\n"}) {
    SCOPED_TRACE(text);
    Status s = Read("a.CSV", text, 5, &rows);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(rows, want);
  }
}

TEST_F(AttributesReaderTest, CsvHeaderOnlyAndEmptyFile) {
  std::vector<Row> rows = {{}};
  ASSERT_TRUE(Read("a.csv", "id,name\n", 0, &rows).ok());
  EXPECT_TRUE(rows.empty());
  ASSERT_TRUE(Read("a.csv", "", 0, &rows).ok());
  EXPECT_TRUE(rows.empty());
  ExpectBad("a.csv", "id,name\n", 2, {"has 0 rows, vectors have 2"});
}

TEST_F(AttributesReaderTest, CsvRejectsBadStructure) {
  ExpectBad("a.csv", "id,colour\n1,red\n", 1, {"line 1 (header)", "column 2 'colour'", "not an"});
  ExpectBad("a.csv", "id,price,id\n1,2,3\n", 1, {"line 1 (header)", "'id' appears twice"});
  ExpectBad("a.csv", "id,,price\n1,2,3\n", 1, {"line 1 (header)", "column 2 has an empty name"});
  ExpectBad("a.csv", "id,price\n1,2\n3\n", 2, {"line 3 (row 1)", "expected 2 fields", "found 1"});
  ExpectBad("a.csv", "id,price\n1,2\n3,4,5\n", 2, {"line 3 (row 1)", "found 3"});
  ExpectBad("a.csv", "id,price\n1,2\n\n3,4\n", 2, {"line 3 (row 1)", "blank line"});
  ExpectBad("a.csv", "id,name\n1,\"a\nb\"\n2,\"open\n3,x\n", 3,
            {"line 4 (row 1)", "field 2", "never closed"});
  ExpectBad("a.csv", "id,name\n1,ab\"c\n", 1, {"line 2 (row 0)", "quote inside an unquoted"});
  ExpectBad("a.csv", "id,name\n1,\"ab\"c\n", 1, {"line 2 (row 0)", "after its closing quote"});
  ExpectBad("a.csv", "id,name\n1,a\rb\n", 1, {"line 2 (row 0)", "carriage return"});
  ExpectBad("a.csv", "id\n1\n2\n", 1, {"has 2 rows, vectors have 1"});
  ExpectBad("a.csv", "id\n1\n2\n", 3, {"has 2 rows, vectors have 3"});
  ExpectBad("a.tsv", "id\n1\n", 1, {"unsupported format '.tsv'"});
}

TEST_F(AttributesReaderTest, CsvLineNumbersCountPhysicalLines) {
  // Row 1 spans lines 3-5, so row 2 starts on line 6.
  ExpectBad("a.csv", "id,name\n1,a\n2,\"x\ny\nz\"\nbad,c\n", 3,
            {"line 6 (row 2), column 'id' (int)", "expected int, found 'bad'"});
}

TEST_F(AttributesReaderTest, CsvRejectsBadValues) {
  struct Case {
    std::string header, field;
    std::vector<std::string> parts;
  };
  const Case cases[] = {
      {"id", "12abc", {"column 'id' (int)", "expected int, found '12abc'"}},
      {"id", "0x10", {"column 'id'", "expected int"}},
      {"id", "1.5", {"column 'id'", "non-integral number 1.5"}},
      {"id", "9223372036854775808", {"column 'id'", "9223372036854775808 is out of int64 range"}},
      {"id", "-9223372036854775809", {"column 'id'", "out of int64 range"}},
      {"id", "1e19", {"column 'id'", "out of int64 range"}},
      {"id", "9007199254740993.0", {"column 'id'", "not an exact integer"}},
      {"id", "nan", {"column 'id'", "expected int"}},
      {"id", "+-1", {"column 'id'", "expected int"}},
      {"id", "\"1 2\"", {"column 'id'", "expected int, found '1 2'"}},
      {"price", "abc", {"column 'price' (float)", "expected float, found 'abc'"}},
      {"price", "1.5x", {"column 'price'", "expected float"}},
      {"price", "nan", {"column 'price'", "finite", "'nan'"}},
      {"price", "-inf", {"column 'price'", "finite"}},
      {"price", "1e999", {"column 'price'", "out of float64 range"}},
      {"ok", "yes", {"column 'ok' (bool)", "expected bool", "'yes'"}},
      {"ok", "2", {"column 'ok'", "expected bool"}},
      {"tags", "a||b", {"column 'tags' (tags)", "empty tag"}},
      {"tags", "a|", {"column 'tags'", "empty tag"}},
      {"name", "\xff\xfe", {"column 'name' (string)", "not valid UTF-8", "\\xff\\xfe"}},
      {"tags", "ok|\xc3", {"column 'tags'", "not valid UTF-8"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.header + "=" + c.field);
    std::vector<Row> rows;
    Status s = Read("a.csv", "id_placeholder\n", 0, &rows);  // resets path_
    const std::string others = c.header == "name" ? "id" : "name";
    s = Read("a.csv", c.header + "," + others + "\n,\n" + c.field + ",\n,\n", 3, &rows);
    ExpectInvalid(s, {"line 3 (row 1)"});
    for (const std::string& p : c.parts) ExpectInvalid(s, {p});
  }
}

TEST_F(AttributesReaderTest, RejectsDuplicateSchemaNamesAndMissingFile) {
  std::vector<Row> rows;
  const std::string path = dir_.Join("a.jsonl");
  WriteBytes(path, "{}\n");
  ExpectInvalid(ReadAttributes(path, {{"a", AttrType::kInt}, {"a", AttrType::kInt}}, 1, &rows),
                {"'a' twice"});
  Status s = ReadAttributes(dir_.Join("nope.jsonl"), schema_, 1, &rows);
  EXPECT_TRUE(s.IsIOError()) << s.message();
  std::filesystem::create_directory(dir_.Join("d.csv"));
  ExpectInvalid(ReadAttributes(dir_.Join("d.csv"), schema_, 1, &rows), {"not a regular"});
}

TEST_F(AttributesReaderTest, ExplicitFormatFunctionsIgnoreExtension) {
  const std::string path = dir_.Join("attrs.txt");
  WriteBytes(path, "id\n5\n");
  std::vector<Row> rows;
  ASSERT_TRUE(ReadAttributesCsv(path, schema_, 1, &rows).ok());
  EXPECT_EQ(rows, (std::vector<Row>{{int64_t{5}, kNull, kNull, kNull, kNull}}));
  WriteBytes(path, "{\"id\": 6}\n");
  ASSERT_TRUE(ReadAttributesJsonl(path, schema_, 1, &rows).ok());
  EXPECT_EQ(rows, (std::vector<Row>{{int64_t{6}, kNull, kNull, kNull, kNull}}));
}

// ---------------------------------------------------------------------------------------------
// The id field (--id-field)

class IdFieldTest : public ::testing::Test {
 protected:
  const std::vector<AttributeSpec> schema_ = {{"price", AttrType::kFloat},
                                              {"tags", AttrType::kTags}};

  Status Read(const std::string& name, const std::string& text, size_t expected_rows,
              std::vector<Row>* rows, std::vector<int64_t>* ids,
              const std::string& id_field = "pk") {
    path_ = dir_.Join(name);
    WriteBytes(path_, text);
    return ReadAttributes(path_, schema_, expected_rows, rows, id_field, ids);
  }
  void ExpectBad(const std::string& name, const std::string& text, size_t expected_rows,
                 std::initializer_list<std::string> parts, const std::string& id_field = "pk") {
    std::vector<Row> rows;
    std::vector<int64_t> ids;
    Status s = Read(name, text, expected_rows, &rows, &ids, id_field);
    ExpectInvalid(s, {"attributes file " + path_});
    ExpectInvalid(s, parts);
  }

  test::ScratchDir dir_;
  std::string path_;
};

TEST_F(IdFieldTest, JsonlIdsComeFromTheField) {
  std::vector<Row> rows;
  std::vector<int64_t> ids;
  // The id anywhere in the object; the third line takes the slow path (a float for price
  // written as an integer goes fast too, so a duplicate-free odd spacing is used instead).
  const std::string text =
      "{\"pk\": 7, \"price\": 1.5}\n"
      "{\"tags\": [\"a\"], \"pk\": 9223372036854775807}\n"
      "{\"price\": 2, \"pk\": 0}\n";
  Status s = Read("a.jsonl", text, 3, &rows, &ids);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(ids, (std::vector<int64_t>{7, INT64_MAX, 0}));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], (Row{1.5, kNull}));  // the id is not an attribute
  EXPECT_EQ(rows[1], (Row{kNull, Tags{"a"}}));
  EXPECT_EQ(rows[2], (Row{2.0, kNull}));
  // Without an id field, the same key is an unknown attribute, as before.
  s = ReadAttributes(path_, schema_, 3, &rows);
  ExpectInvalid(s, {"line 1 (row 0): unknown attribute 'pk'", "attributes: price, tags"});
}

TEST_F(IdFieldTest, JsonlRejectsBadIds) {
  ExpectBad("a.jsonl", "{\"pk\": 1}\n{\"price\": 1.0}\n", 2,
            {"line 2 (row 1): no id field 'pk'; every row needs its id"});
  ExpectBad("a.jsonl", "{\"pk\": 1}\n{\"pk\": null}\n", 2,
            {"line 2 (row 1): id field 'pk': expected an integer id >= 0, found null"});
  ExpectBad("a.jsonl", "{\"pk\": -3}\n", 1,
            {"line 1 (row 0): id field 'pk': expected an integer id >= 0, found -3"});
  ExpectBad("a.jsonl", "{\"pk\": 3.0}\n", 1, {"expected an integer id >= 0, found 3.0"});
  ExpectBad("a.jsonl", "{\"pk\": \"3\"}\n", 1, {"expected an integer id >= 0, found string \"3\""});
  ExpectBad("a.jsonl", "{\"pk\": 9223372036854775808}\n", 1,
            {"found a number beyond int64's range"});
  ExpectBad("a.jsonl", "{\"pk\": 1, \"pk\": 2}\n", 1, {"attribute 'pk' appears twice"});
  ExpectBad("a.jsonl", "{\"pk\": 4}\n{\"pk\": 5}\n{\"pk\": 4}\n", 3,
            {"line 3 (row 2): id 4 repeats the id of line 1 (row 0); ids must be unique"});
  ExpectBad("a.jsonl", "{\"price\": 1}\n", 1,
            {"the id field 'price' is an attribute of the collection"}, "price");
}

TEST_F(IdFieldTest, JsonlLargeFileAcrossThreads) {
  // Enough bytes for several parsing ranges (one per MiB): ids and their repeats are found
  // whichever range holds them.
  const size_t n = 60000;
  std::string text;
  for (size_t i = 0; i < n; ++i) {
    text += "{\"price\": " + std::to_string(i) + ".25, \"tags\": [\"padding-padding\"], \"pk\": " +
            std::to_string(3 * i + 1) + "}\n";
  }
  ASSERT_GT(text.size(), size_t{3} << 20);
  std::vector<Row> rows;
  std::vector<int64_t> ids;
  Status s = Read("big.jsonl", text, n, &rows, &ids);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(ids.size(), n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(ids[i], static_cast<int64_t>(3 * i + 1)) << i;
  EXPECT_EQ(rows[n - 1][0], Value(static_cast<double>(n - 1) + 0.25));
  // The last line repeats the id of line 2.
  const std::string last = "\"pk\": " + std::to_string(3 * (n - 1) + 1) + "}";
  text.replace(text.rfind(last), last.size(), "\"pk\": 4}");
  ExpectBad("big.jsonl", text, n,
            {"line 60000 (row 59999): id 4 repeats the id of line 2 (row 1)"});
}

TEST_F(IdFieldTest, CsvIdsComeFromTheColumn) {
  std::vector<Row> rows;
  std::vector<int64_t> ids;
  Status s = Read("a.csv", "price,pk,tags\n1.5, 10 ,a|b\n,+11,\n", 2, &rows, &ids);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(ids, (std::vector<int64_t>{10, 11}));
  EXPECT_EQ(rows[0], (Row{1.5, Tags{"a", "b"}}));
  EXPECT_EQ(rows[1], (Row{kNull, kNull}));
}

TEST_F(IdFieldTest, CsvRejectsBadIds) {
  ExpectBad("a.csv", "price,tags\n1,a\n", 1, {"line 1 (header): no column 'pk', the id field"});
  ExpectBad("a.csv", "pk,price,pk\n1,2,3\n", 1,
            {"line 1 (header): id column 'pk' appears twice (columns 1 and 3)"});
  ExpectBad("a.csv", "pk,price\n1,2\n,3\n", 2,
            {"line 3 (row 1): id field 'pk' is empty; every row needs its id"});
  ExpectBad("a.csv", "pk,price\n-1,2\n", 1,
            {"line 2 (row 0): id field 'pk': expected an integer id >= 0, found '-1'"});
  ExpectBad("a.csv", "pk,price\n1.0,2\n", 1, {"expected an integer id >= 0, found '1.0'"});
  ExpectBad("a.csv", "pk,price\n99999999999999999999,2\n", 1, {"beyond int64's range"});
  // Line numbers count physical lines: the quoted field of row 0 spans two.
  ExpectBad("a.csv", "pk,tags\n5,\"a\nb\"\n6,c\n5,d\n", 3,
            {"line 5 (row 2): id 5 repeats the id of line 2 (row 0); ids must be unique"});
  ExpectBad("a.csv", "price\n1\n", 1, {"the id field 'price' is an attribute"}, "price");
}

}  // namespace
}  // namespace sieve::io
