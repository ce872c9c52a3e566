// Copyright 2026 The Sieve Authors.

#include "tools/io/attributes_reader.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <exception>
#include <new>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tools/io/file_util.h"
#include "tools/io/json_value.h"

namespace sieve::io {
namespace {

using Json = nlohmann::json;

// An integral value of 2^53 or more written with a fraction or exponent may already have been
// rounded by the parse (9007199254740993.0 reads as 2^53), so only smaller ones are exact.
constexpr double kTwoTo53 = 9007199254740992.0;
constexpr double kTwoTo63 = 9223372036854775808.0;

using SchemaIndex = std::unordered_map<std::string, size_t>;

Status BuildIndex(const std::string& path, const std::vector<AttributeSpec>& schema,
                  const std::string& id_field, SchemaIndex* index) {
  for (size_t i = 0; i < schema.size(); ++i) {
    if (!index->emplace(schema[i].name, i).second) {
      return Status::InvalidArgument("attributes file " + Printable(path) + ": schema names '" +
                                     Printable(schema[i].name) + "' twice");
    }
  }
  if (index->count(id_field)) {
    return Status::InvalidArgument("attributes file " + Printable(path) + ": the id field '" +
                                   Printable(id_field) + "' is an attribute of the collection; " +
                                   "ids are not attributes, so name a field that is not one");
  }
  return Status::OK();
}

// The message for an id field's value that is not an integer >= 0 within int64.
std::string IdError(const std::string& id_field, const std::string& found) {
  return "id field '" + Printable(id_field) + "': expected an integer id >= 0, found " + found;
}

// Rejects an id that appeared on an earlier row. `line_of_row(r)` gives row r's line.
template <typename LineOfRow>
Status CheckUniqueIds(const std::string& path, const std::vector<int64_t>& ids,
                      LineOfRow line_of_row) {
  std::unordered_map<int64_t, size_t> first_row;
  first_row.reserve(ids.size());
  for (size_t r = 0; r < ids.size(); ++r) {
    auto [it, inserted] = first_row.emplace(ids[r], r);
    if (inserted) continue;
    return Status::InvalidArgument(
        "attributes file " + Printable(path) + ": line " + std::to_string(line_of_row(r)) +
        " (row " + std::to_string(r) + "): id " + std::to_string(ids[r]) +
        " repeats the id of line " + std::to_string(line_of_row(it->second)) + " (row " +
        std::to_string(it->second) + "); ids must be unique");
  }
  return Status::OK();
}

std::string SchemaNames(const std::vector<AttributeSpec>& schema) {
  if (schema.empty()) return "the collection has no attributes";
  std::string s = "attributes:";
  for (size_t i = 0; i < schema.size(); ++i) s += (i ? ", " : " ") + Printable(schema[i].name);
  return Printable(s, 200);
}

std::string Where(const std::string& path, size_t line, size_t row) {
  return "attributes file " + Printable(path) + ": line " + std::to_string(line) + " (row " +
         std::to_string(row) + ")";
}

Status CheckRowCount(const std::string& path, size_t rows, size_t expected) {
  if (rows == expected) return Status::OK();
  return Status::InvalidArgument("attributes file " + Printable(path) + " has " +
                                 std::to_string(rows) + " rows, vectors have " +
                                 std::to_string(expected));
}

// Skips a UTF-8 byte-order mark, which Excel and some Windows editors put first.
size_t BomLength(const std::string& text) { return text.starts_with("\xEF\xBB\xBF") ? 3 : 0; }

// ---------------------------------------------------------------------------------------------
// JSON Lines

// nlohmann's messages start with "[json.exception.parse_error.101] parse error at line 1, ";
// the id means nothing to users and the line is ours to give.
std::string ParseErrorText(const std::string& what) {
  std::string_view s = what;
  if (s.starts_with("[json.exception.")) {
    size_t close = s.find("] ");
    if (close != std::string_view::npos) s.remove_prefix(close + 2);
  }
  std::string out(s);
  size_t at = out.find("at line 1, column");
  if (at != std::string::npos) out.replace(at, 17, "at column");
  return Printable(out, 200);
}

// Names the first top-level key of `line` that appears twice; only called once a duplicate is
// known to exist, so its cost does not matter.
std::string FindDuplicateKey(std::string_view line) {
  std::set<std::string> seen;
  std::string dup;
  Json::parser_callback_t cb = [&](int depth, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::key && depth == 1 && dup.empty()) {
      const std::string& k = parsed.get_ref<const std::string&>();
      if (!seen.insert(k).second) dup = k;
    }
    return true;
  };
  Json parsed = Json::parse(line.begin(), line.end(), cb, /*allow_exceptions=*/false);
  (void)parsed;
  return dup;
}

// Reads one line the slow way, through a DOM: the reference for what a line means and the only
// code that words JSON Lines errors. REQUIRES: `values` holds schema.size() nulls.
// With an id field (`id_field` not empty), its value goes to *id.
Status ReadJsonlLine(const std::string& path, std::string_view line, size_t line_no, size_t row,
                     const std::vector<AttributeSpec>& schema, const SchemaIndex& index,
                     const std::string& id_field, std::vector<Value>* values, int64_t* id) {
  if (line.find_first_not_of(" \t") == std::string_view::npos) {
    return Status::InvalidArgument(Where(path, line_no, row) +
                                   ": blank line; each line must hold one JSON object");
  }
  // The JSON parser ends its input at a NUL byte, so what follows one would be dropped unread.
  if (size_t at = line.find('\0'); at != std::string_view::npos) {
    return Status::InvalidArgument(Where(path, line_no, row) + ": a NUL byte at column " +
                                   std::to_string(at + 1) + " (JSON text holds none)");
  }
  size_t top_level_keys = 0;
  Json::parser_callback_t count_keys = [&top_level_keys](int depth, Json::parse_event_t event,
                                                         Json&) {
    if (event == Json::parse_event_t::key && depth == 1) ++top_level_keys;
    return true;
  };
  Json obj;
  try {
    obj = Json::parse(line.begin(), line.end(), count_keys);
  } catch (const Json::exception& e) {  // parse_error, or out_of_range for 1e999
    return Status::InvalidArgument(Where(path, line_no, row) +
                                   ": invalid JSON: " + ParseErrorText(e.what()));
  }
  if (!obj.is_object()) {
    return Status::InvalidArgument(Where(path, line_no, row) + ": expected a JSON object, " +
                                   "found " + DescribeJson(obj));
  }
  if (top_level_keys != obj.size()) {
    return Status::InvalidArgument(Where(path, line_no, row) + ": attribute '" +
                                   Printable(FindDuplicateKey(line)) + "' appears twice");
  }
  bool has_id = false;
  for (const auto& [key, value] : obj.items()) {
    if (!id_field.empty() && key == id_field) {
      has_id = true;
      if (value.is_number_unsigned() &&
          value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
        return Status::InvalidArgument(Where(path, line_no, row) + ": " +
                                       IdError(id_field, "a number beyond int64's range"));
      }
      if (!value.is_number_integer() || value.get<int64_t>() < 0) {
        return Status::InvalidArgument(
            Where(path, line_no, row) + ": " +
            IdError(id_field, value.is_number() ? Printable(value.dump()) : DescribeJson(value)));
      }
      *id = value.get<int64_t>();
      continue;
    }
    auto it = index.find(key);
    if (it == index.end()) {
      return Status::InvalidArgument(Where(path, line_no, row) + ": unknown attribute '" +
                                     Printable(key) + "' (" + SchemaNames(schema) + ")");
    }
    const AttributeSpec& spec = schema[it->second];
    std::string error = JsonToValue(value, spec.type, &(*values)[it->second]);
    if (!error.empty()) {
      return Status::InvalidArgument(Where(path, line_no, row) + ", attribute '" +
                                     Printable(spec.name) + "' (" + AttrTypeName(spec.type) +
                                     "): " + error);
    }
  }
  if (!id_field.empty() && !has_id) {
    return Status::InvalidArgument(Where(path, line_no, row) + ": no id field '" +
                                   Printable(id_field) + "'; every row needs its id");
  }
  return Status::OK();
}

// Fills one row straight from nlohmann's SAX events, so that the common line costs no DOM. It
// accepts only what ReadJsonlLine accepts, with the same values: one object whose keys are
// distinct schema attributes holding null or a value of the attribute's type. On anything else
// it stops the parse and the line goes to ReadJsonlLine, which finds and words the problem
// (for instance a parse error later on the line outranks a wrong type before it).
class JsonlRowHandler {
 public:
  JsonlRowHandler(const std::vector<AttributeSpec>& schema, const SchemaIndex& index,
                  const std::string& id_field)
      : schema_(schema), index_(index), id_field_(id_field), seen_(schema.size()) {}

  // Parses `line` into `values` (schema.size() nulls) and, with an id field, `*id`; false when
  // the slow path must decide.
  bool Parse(std::string_view line, std::vector<Value>* values, int64_t* id) {
    values_ = values;
    id_ = id;
    depth_ = kTopLevel;
    seen_id_ = false;
    std::fill(seen_.begin(), seen_.end(), 0);
    if (line.find('\0') != std::string_view::npos) return false;  // ReadJsonlLine words it
    return Json::sax_parse(line.data(), line.data() + line.size(), this) && depth_ == kDone &&
           (id_field_.empty() || seen_id_);
  }

  // The SAX interface (nlohmann::json_sax); returning false ends the parse. The id field takes
  // only an integer >= 0 (number_integer, number_unsigned).
  bool null() { return depth_ == kInObject && !InId(); }  // the row's values start null
  bool boolean(bool b) { return Put(AttrType::kBool, b); }
  bool number_integer(int64_t i) {
    if (depth_ != kInObject) return false;
    if (InId()) return i >= 0 && SetId(i);
    if (type() == AttrType::kInt) return Set(i);
    return type() == AttrType::kFloat && Set(static_cast<double>(i));
  }
  bool number_unsigned(uint64_t u) {
    if (depth_ != kInObject) return false;
    if (InId()) return u <= static_cast<uint64_t>(INT64_MAX) && SetId(static_cast<int64_t>(u));
    if (type() == AttrType::kInt) {
      return u <= static_cast<uint64_t>(INT64_MAX) && Set(static_cast<int64_t>(u));
    }
    return type() == AttrType::kFloat && Set(static_cast<double>(u));
  }
  bool number_float(double d, const std::string&) {
    if (depth_ != kInObject || InId()) return false;
    if (type() == AttrType::kFloat) return std::isfinite(d) && Set(d);
    // The int rules of JsonToValue (json_value.h); NaN and infinities fail the first test.
    return type() == AttrType::kInt && std::fabs(d) < kTwoTo53 && d == std::trunc(d) &&
           Set(static_cast<int64_t>(d));
  }
  bool string(std::string& s) {
    if (InId()) return false;
    if (depth_ == kInTags) {
      tags_.push_back(std::move(s));
      return true;
    }
    if (type() == AttrType::kText) return Put(AttrType::kText, std::move(s));
    return Put(AttrType::kString, std::move(s));
  }
  bool binary(Json::binary_t&) { return false; }
  bool start_object(size_t) {
    if (depth_ != kTopLevel) return false;
    depth_ = kInObject;
    return true;
  }
  bool key(std::string& k) {
    if (!id_field_.empty() && k == id_field_) {
      if (seen_id_) return false;
      seen_id_ = true;
      current_ = kIdSlot;
      return true;
    }
    size_t i = Find(k);
    if (i == kNotFound || seen_[i]) return false;
    seen_[i] = 1;
    current_ = i;
    return true;
  }
  bool end_object() {
    depth_ = kDone;
    return true;
  }
  bool start_array(size_t) {
    if (depth_ != kInObject || InId() || type() != AttrType::kTags) return false;
    depth_ = kInTags;
    tags_.clear();
    return true;
  }
  bool end_array() {
    depth_ = kInObject;
    (*values_)[current_] = std::move(tags_);
    tags_.clear();
    return true;
  }
  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception&) {
    return false;
  }

 private:
  // Where the parse is; nested objects and arrays other than tags are refused, so these are all.
  enum Depth { kTopLevel, kInObject, kInTags, kDone };

  static constexpr size_t kNotFound = SIZE_MAX;
  static constexpr size_t kIdSlot = SIZE_MAX - 1;  // current_ while the id field's value comes

  bool InId() const { return current_ == kIdSlot; }
  bool SetId(int64_t id) {
    *id_ = id;
    return true;
  }

  // A few names are faster to compare than to hash.
  size_t Find(const std::string& k) const {
    if (schema_.size() > kMaxScan) {
      auto it = index_.find(k);
      return it == index_.end() ? kNotFound : it->second;
    }
    for (size_t i = 0; i < schema_.size(); ++i) {
      if (schema_[i].name == k) return i;
    }
    return kNotFound;
  }
  static constexpr size_t kMaxScan = 8;

  AttrType type() const { return schema_[current_].type; }
  template <typename T>
  bool Set(T v) {
    (*values_)[current_].emplace<T>(std::move(v));
    return true;
  }
  template <typename T>
  bool Put(AttrType type, T v) {
    return depth_ == kInObject && !InId() && this->type() == type && Set(std::move(v));
  }

  const std::vector<AttributeSpec>& schema_;
  const SchemaIndex& index_;
  const std::string& id_field_;
  std::vector<char> seen_;  // per attribute: has this line named it yet?
  bool seen_id_ = false;
  std::vector<Value>* values_ = nullptr;
  int64_t* id_ = nullptr;
  Depth depth_ = kTopLevel;
  size_t current_ = 0;  // the attribute whose value comes next
  std::vector<std::string> tags_;
};

// One line-aligned piece of a JSON Lines file, parsed by one thread.
struct JsonlRange {
  size_t begin = 0, end = 0;  // byte offsets; `end` is just past a '\n' or the end of the text
  std::vector<std::vector<Value>> rows;
  std::vector<int64_t> ids;   // with an id field: one per row of `rows`
  bool failed = false;        // stopped at a bad line: the one after `rows`, at `failed_at`
  size_t failed_at = 0;
  std::exception_ptr exception;
};

// Parses the lines of `range` into range->rows until the first bad one. Stops early, leaving
// `failed` false, once `stop` says an earlier range failed (its error outranks any here).
void ParseJsonlRange(const std::string& path, const std::string& text,
                     const std::vector<AttributeSpec>& schema, const SchemaIndex& index,
                     const std::string& id_field, size_t range_no, std::atomic<size_t>* stop,
                     JsonlRange* range) {
  try {
    JsonlRowHandler handler(schema, index, id_field);
    size_t pos = range->begin;
    while (pos < range->end) {
      if ((range->rows.size() & 4095) == 0 && stop->load(std::memory_order_relaxed) < range_no) {
        return;
      }
      size_t end = text.find('\n', pos);
      if (end == std::string::npos || end > range->end) end = range->end;
      std::string_view line(text.data() + pos, end - pos);
      if (line.ends_with('\r')) line.remove_suffix(1);
      std::vector<Value>& values = range->rows.emplace_back(schema.size());
      int64_t id = 0;
      if (!handler.Parse(line, &values, &id)) {
        // Line and row numbers are found later, when the ranges before are counted; this only
        // asks whether the line is bad.
        std::fill(values.begin(), values.end(), Value());
        if (!ReadJsonlLine(path, line, 0, 0, schema, index, id_field, &values, &id).ok()) {
          range->rows.pop_back();
          range->failed = true;
          range->failed_at = pos;
          size_t seen = stop->load();
          while (range_no < seen && !stop->compare_exchange_weak(seen, range_no)) {
          }
          return;
        }
      }
      if (!id_field.empty()) range->ids.push_back(id);
      pos = end + 1;
    }
  } catch (...) {
    range->exception = std::current_exception();
  }
}

// Files below this size are read on one thread; above it, one thread per this many bytes, up
// to the core count. A thread costs tens of microseconds to start and a mebibyte of JSON Lines
// tens of milliseconds to parse.
constexpr size_t kBytesPerThread = size_t{1} << 20;
constexpr size_t kMaxThreads = 8;

Status ReadJsonlText(const std::string& path, const std::string& text,
                     const std::vector<AttributeSpec>& schema, const SchemaIndex& index,
                     const std::string& id_field, std::vector<std::vector<Value>>* rows,
                     std::vector<int64_t>* ids) {
  const size_t start = BomLength(text);
  // Blank lines at the end of the file hold no row (editors and `echo >>` leave them); a blank
  // line before a row is still an error, since every row's line number is its row's.
  size_t end_of_rows = start;
  if (size_t last = text.find_last_not_of(" \t\r\n"); last != std::string::npos && last >= start) {
    const size_t nl = text.find('\n', last);
    end_of_rows = nl == std::string::npos ? text.size() : nl + 1;
  }
  {
    size_t first = text.find_first_not_of(" \t\r\n", start);
    if (first != std::string::npos && text[first] == '[') {
      return Status::InvalidArgument("attributes file " + Printable(path) +
                                     ": holds a JSON array; expected JSON Lines, one object "
                                     "per line");
    }
  }
  size_t threads = std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()),
                                    kMaxThreads);
  threads = std::max<size_t>(1, std::min(threads, (end_of_rows - start) / kBytesPerThread));

  // Cut at the first line break at or after each even share of the bytes.
  std::vector<JsonlRange> ranges;
  for (size_t i = 0, begin = start; i < threads && begin < end_of_rows; ++i) {
    size_t end = end_of_rows;
    if (i + 1 < threads) {
      size_t nl =
          text.find('\n', std::max(begin, start + (end_of_rows - start) * (i + 1) / threads));
      if (nl != std::string::npos && nl < end_of_rows) end = nl + 1;
    }
    JsonlRange& r = ranges.emplace_back();
    r.begin = begin;
    r.end = end;
    begin = end;
  }
  // Rows come in proportion to bytes, and a row takes at least 3 ("{}\n"); the first range
  // takes over the caller's reservation.
  const size_t capacity = rows->capacity();
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (i == 0) {
      ranges[i].rows.swap(*rows);
    } else {
      ranges[i].rows.reserve(std::min(capacity / ranges.size() + capacity / 16,
                                      (ranges[i].end - ranges[i].begin) / 3 + 1));
    }
  }
  rows->clear();

  std::atomic<size_t> stop{ranges.size()};
  std::vector<std::thread> workers;
  workers.reserve(ranges.size());
  std::vector<size_t> inline_ranges;  // parsed on this thread, in this order
  inline_ranges.reserve(ranges.size());  // nothing may throw once a thread runs
  inline_ranges.push_back(0);
  for (size_t i = 1; i < ranges.size(); ++i) {
    try {
      workers.emplace_back(ParseJsonlRange, std::cref(path), std::cref(text), std::cref(schema),
                           std::cref(index), std::cref(id_field), i, &stop, &ranges[i]);
    } catch (const std::system_error&) {  // no thread to be had: do its share here
      inline_ranges.push_back(i);
    }
  }
  for (size_t i : inline_ranges) {
    if (i < ranges.size()) {
      ParseJsonlRange(path, text, schema, index, id_field, i, &stop, &ranges[i]);
    }
  }
  for (std::thread& t : workers) t.join();

  // Ranges join in file order; the first that failed holds the error to report, since every
  // range before it parsed whole and fixes the line and row numbers.
  for (JsonlRange& r : ranges) {
    if (r.exception) std::rethrow_exception(r.exception);
    ids->insert(ids->end(), r.ids.begin(), r.ids.end());
    r.ids = {};
    if (rows->empty()) {
      rows->swap(r.rows);
    } else {
      rows->insert(rows->end(), std::make_move_iterator(r.rows.begin()),
                   std::make_move_iterator(r.rows.end()));
      r.rows = {};
    }
    if (r.failed) {
      size_t end = text.find('\n', r.failed_at);
      if (end == std::string::npos) end = text.size();
      std::string_view line(text.data() + r.failed_at, end - r.failed_at);
      if (line.ends_with('\r')) line.remove_suffix(1);
      std::vector<Value> values(schema.size());
      const size_t row = rows->size();
      int64_t id = 0;
      return ReadJsonlLine(path, line, row + 1, row, schema, index, id_field, &values, &id);
    }
  }
  // Every line holds one row (blank lines are errors), so row r is on line r + 1.
  if (!id_field.empty()) return CheckUniqueIds(path, *ids, [](size_t r) { return r + 1; });
  return Status::OK();
}

// ---------------------------------------------------------------------------------------------
// CSV

struct CsvField {
  std::string text;
  bool quoted = false;
};

// Splits RFC 4180 text into records, tracking physical line numbers for messages.
class CsvReader {
 public:
  CsvReader(const std::string& path, std::string_view text) : path_(path), text_(text) {}

  bool Done() const { return pos_ >= text_.size(); }

  // Reads the next record into `fields`; `*line` is the line it starts on. REQUIRES: !Done().
  Status Next(std::vector<CsvField>* fields, size_t* line) {
    fields->clear();
    *line = line_;
    ++records_;
    while (true) {
      CsvField& f = fields->emplace_back();
      if (pos_ < text_.size() && text_[pos_] == '"') {
        SIEVE_RETURN_IF_ERROR(ReadQuoted(&f, fields->size()));
      } else {
        size_t end = text_.find_first_of(",\r\n\"", pos_);
        if (end == std::string_view::npos) end = text_.size();
        if (end < text_.size() && text_[end] == '"') {
          return Error("field " + std::to_string(fields->size()) +
                       " has a quote inside an unquoted field; quote the whole field and "
                       "write an inner quote as \"\"");
        }
        f.text.assign(text_.substr(pos_, end - pos_));
        pos_ = end;
      }
      if (pos_ >= text_.size()) return Status::OK();
      const char c = text_[pos_];
      if (c == ',') {
        ++pos_;
        continue;
      }
      if (c == '\n') {
        ++pos_;
        ++line_;
        return Status::OK();
      }
      if (c == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') {
        pos_ += 2;
        ++line_;
        return Status::OK();
      }
      if (c == '\r') return Error("carriage return not followed by a line feed");
      return Error("field " + std::to_string(fields->size()) + " has '" +
                   Printable(text_.substr(pos_, 1)) + "' after its closing quote; write a " +
                   "quote inside a quoted field as \"\"");
    }
  }

 private:
  Status ReadQuoted(CsvField* f, size_t field_no) {
    const size_t start_line = line_;
    f->quoted = true;
    ++pos_;
    while (true) {
      size_t q = text_.find('"', pos_);
      if (q == std::string_view::npos) {
        return Status::InvalidArgument(Location(start_line) + ": field " +
                                       std::to_string(field_no) +
                                       " opens a quote that is never closed");
      }
      std::string_view chunk = text_.substr(pos_, q - pos_);
      for (char c : chunk) line_ += c == '\n';
      f->text.append(chunk);
      pos_ = q + 1;
      if (pos_ < text_.size() && text_[pos_] == '"') {
        f->text.push_back('"');
        ++pos_;
        continue;
      }
      return Status::OK();
    }
  }

  // The header is record 1; data row r is record r + 2.
  std::string Location(size_t line) const {
    std::string s = "attributes file " + Printable(path_) + ": line " + std::to_string(line);
    return s + (records_ <= 1 ? " (header)" : " (row " + std::to_string(records_ - 2) + ")");
  }

  Status Error(const std::string& what) const {
    return Status::InvalidArgument(Location(line_) + ": " + what);
  }

  const std::string& path_;
  std::string_view text_;
  size_t pos_ = 0;
  size_t line_ = 1;
  size_t records_ = 0;  // records started so far
};

std::string_view TrimSpaces(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// Full-consumption parses; from_chars ignores the locale and rejects leading spaces, but does
// not take a '+' sign, which people do write.
bool ParseDouble(std::string_view s, double* out, bool* out_of_range) {
  if (s.size() > 1 && s[0] == '+' && s[1] != '-' && s[1] != '+') s.remove_prefix(1);
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  *out_of_range = ec == std::errc::result_out_of_range && ptr == s.data() + s.size();
  return ec == std::errc() && ptr == s.data() + s.size();
}

std::string ConvertCsvInt(std::string_view s, Value* out) {
  std::string_view digits = s;
  if (digits.size() > 1 && digits[0] == '+' && digits[1] != '-' && digits[1] != '+') {
    digits.remove_prefix(1);
  }
  int64_t v;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ptr == digits.data() + digits.size()) {
    if (ec == std::errc()) {
      *out = v;
      return "";
    }
    if (ec == std::errc::result_out_of_range)
      return "value " + Printable(s) +
             " is out of int64 "
             "range";
  }
  double d;
  bool out_of_range;
  if (!ParseDouble(s, &d, &out_of_range) || !std::isfinite(d)) {
    if (out_of_range) return "value " + Printable(s) + " is out of int64 range";
    return "expected int, found '" + Printable(s) + "'";
  }
  if (d != std::trunc(d)) return "expected int, found non-integral number " + Printable(s);
  if (std::fabs(d) >= kTwoTo63) return "value " + Printable(s) + " is out of int64 range";
  if (std::fabs(d) >= kTwoTo53) {
    return "value " + Printable(s) +
           " is not an exact integer; write it without a fraction or exponent";
  }
  *out = static_cast<int64_t>(d);
  return "";
}

std::string ConvertCsvFloat(std::string_view s, Value* out) {
  double d;
  bool out_of_range;
  if (!ParseDouble(s, &d, &out_of_range)) {
    if (out_of_range) return "value " + Printable(s) + " is out of float64 range";
    return "expected float, found '" + Printable(s) + "'";
  }
  if (!std::isfinite(d)) return "expected a finite float, found '" + Printable(s) + "'";
  *out = d;
  return "";
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (x != b[i]) return false;
  }
  return true;
}

// Converts one CSV field to `type`; returns "" or what is wrong with it.
std::string ConvertCsv(const CsvField& f, AttrType type, Value* out) {
  *out = std::monostate();
  switch (type) {
    case AttrType::kInt:
    case AttrType::kFloat:
    case AttrType::kBool: {
      std::string_view s = TrimSpaces(f.text);
      if (s.empty()) return "";
      if (type == AttrType::kInt) return ConvertCsvInt(s, out);
      if (type == AttrType::kFloat) return ConvertCsvFloat(s, out);
      if (EqualsIgnoreCase(s, "true") || s == "1") {
        *out = true;
      } else if (EqualsIgnoreCase(s, "false") || s == "0") {
        *out = false;
      } else {
        return "expected bool (true, false, 1 or 0), found '" + Printable(s) + "'";
      }
      return "";
    }
    case AttrType::kString:
    case AttrType::kText: {
      // Unquoted text is trimmed of spaces and tabs, as headers and numbers are ("a, red" is
      // "red"); quotes keep them.
      const std::string_view text = f.quoted ? std::string_view(f.text) : TrimSpaces(f.text);
      if (text.empty() && !f.quoted) return "";
      if (!IsValidUtf8(text)) return "text is not valid UTF-8: '" + Printable(text) + "'";
      *out = std::string(text);
      return "";
    }
    case AttrType::kTags: {
      const std::string_view text = f.quoted ? std::string_view(f.text) : TrimSpaces(f.text);
      if (text.empty()) {
        if (f.quoted) *out = std::vector<std::string>();
        return "";
      }
      if (!IsValidUtf8(text)) return "text is not valid UTF-8: '" + Printable(text) + "'";
      std::vector<std::string> tags;
      std::string_view rest = text;
      while (true) {
        size_t bar = rest.find('|');
        std::string_view tag = rest.substr(0, bar);
        if (!f.quoted) tag = TrimSpaces(tag);
        if (tag.empty()) {
          return "empty tag in '" + Printable(text) + "' (tags are separated by '|')";
        }
        tags.emplace_back(tag);
        if (bar == std::string_view::npos) break;
        rest.remove_prefix(bar + 1);
      }
      *out = std::move(tags);
      return "";
    }
  }
  return "unknown attribute type";
}

// The id column's field as an id: an optionally '+'-signed decimal integer >= 0 within int64.
std::string ConvertCsvId(const std::string& id_field, const CsvField& f, int64_t* id) {
  std::string_view s = TrimSpaces(f.text);
  if (s.empty()) return "id field '" + Printable(id_field) + "' is empty; every row needs its id";
  std::string_view digits = s;
  if (digits.size() > 1 && digits[0] == '+' && digits[1] != '-') digits.remove_prefix(1);
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), *id);
  if (ptr == digits.data() + digits.size() && ec == std::errc::result_out_of_range) {
    return IdError(id_field, "'" + Printable(s) + "', beyond int64's range");
  }
  if (ec != std::errc() || ptr != digits.data() + digits.size() || *id < 0) {
    return IdError(id_field, "'" + Printable(s) + "'");
  }
  return "";
}

Status ReadCsvText(const std::string& path, const std::string& text,
                   const std::vector<AttributeSpec>& schema, const SchemaIndex& index,
                   const std::string& id_field, std::vector<std::vector<Value>>* rows,
                   std::vector<int64_t>* ids) {
  std::string_view body(text);
  body.remove_prefix(BomLength(text));
  CsvReader reader(path, body);
  if (reader.Done()) return Status::OK();  // no header, no rows

  std::vector<CsvField> fields;
  size_t line;
  SIEVE_RETURN_IF_ERROR(reader.Next(&fields, &line));
  constexpr size_t kIdColumn = SIZE_MAX;  // column_attr's mark for the id column
  std::vector<size_t> column_attr(fields.size());
  std::vector<int> column_of_attr(schema.size(), -1);
  int id_column = -1;
  const std::string header = "attributes file " + Printable(path) + ": line 1 (header): ";
  for (size_t c = 0; c < fields.size(); ++c) {
    const std::string name(TrimSpaces(fields[c].text));
    const std::string& where = header;
    if (name.empty()) {
      return Status::InvalidArgument(where + "column " + std::to_string(c + 1) +
                                     " has an empty name");
    }
    if (!id_field.empty() && name == id_field) {
      if (id_column >= 0) {
        return Status::InvalidArgument(where + "id column '" + Printable(name) +
                                       "' appears twice (columns " +
                                       std::to_string(id_column + 1) + " and " +
                                       std::to_string(c + 1) + ")");
      }
      id_column = static_cast<int>(c);
      column_attr[c] = kIdColumn;
      continue;
    }
    auto it = index.find(name);
    if (it == index.end()) {
      return Status::InvalidArgument(where + "column " + std::to_string(c + 1) + " '" +
                                     Printable(name) + "' is not an attribute of the " +
                                     "collection (" + SchemaNames(schema) + ")");
    }
    if (column_of_attr[it->second] >= 0) {
      return Status::InvalidArgument(where + "column '" + Printable(name) + "' appears twice " +
                                     "(columns " + std::to_string(column_of_attr[it->second] + 1) +
                                     " and " + std::to_string(c + 1) + ")");
    }
    column_of_attr[it->second] = static_cast<int>(c);
    column_attr[c] = it->second;
  }
  if (!id_field.empty() && id_column < 0) {
    return Status::InvalidArgument(header + "no column '" + Printable(id_field) +
                                   "', the id field");
  }
  std::vector<size_t> row_lines;  // with an id column: the line each row starts on

  while (!reader.Done()) {
    SIEVE_RETURN_IF_ERROR(reader.Next(&fields, &line));
    const size_t row = rows->size();
    if (fields.size() != column_attr.size()) {
      const bool blank = fields.size() == 1 && fields[0].text.empty() && !fields[0].quoted;
      return Status::InvalidArgument(
          Where(path, line, row) + ": expected " + std::to_string(column_attr.size()) +
          " fields as in the header, found " +
          (blank ? std::string("a blank line") : std::to_string(fields.size())));
    }
    std::vector<Value>& values = rows->emplace_back(schema.size());
    if (id_column >= 0) {
      int64_t id = 0;
      std::string error = ConvertCsvId(id_field, fields[id_column], &id);
      if (!error.empty()) return Status::InvalidArgument(Where(path, line, row) + ": " + error);
      ids->push_back(id);
      row_lines.push_back(line);
    }
    for (size_t c = 0; c < fields.size(); ++c) {
      if (column_attr[c] == kIdColumn) continue;
      const AttributeSpec& spec = schema[column_attr[c]];
      std::string error = ConvertCsv(fields[c], spec.type, &values[column_attr[c]]);
      if (!error.empty()) {
        return Status::InvalidArgument(Where(path, line, row) + ", column '" +
                                       Printable(spec.name) + "' (" + AttrTypeName(spec.type) +
                                       "): " + error);
      }
    }
  }
  if (id_column >= 0) {
    return CheckUniqueIds(path, *ids, [&row_lines](size_t r) { return row_lines[r]; });
  }
  return Status::OK();
}

using TextReader = Status (*)(const std::string&, const std::string&,
                              const std::vector<AttributeSpec>&, const SchemaIndex&,
                              const std::string&, std::vector<std::vector<Value>>*,
                              std::vector<int64_t>*);

Status ReadWith(TextReader read_text, const std::string& path,
                const std::vector<AttributeSpec>& schema, size_t expected_rows,
                std::vector<std::vector<Value>>* rows, const std::string& id_field,
                std::vector<int64_t>* ids) {
  try {
    SchemaIndex index;
    SIEVE_RETURN_IF_ERROR(BuildIndex(path, schema, id_field, &index));
    std::string text;
    SIEVE_RETURN_IF_ERROR(ReadWholeFile(path, &text));
    rows->clear();
    rows->reserve(expected_rows);
    std::vector<int64_t> no_ids;
    if (ids == nullptr) ids = &no_ids;
    ids->clear();
    if (!id_field.empty()) ids->reserve(expected_rows);
    SIEVE_RETURN_IF_ERROR(read_text(path, text, schema, index, id_field, rows, ids));
    return CheckRowCount(path, rows->size(), expected_rows);
  } catch (const std::bad_alloc&) {
    return Status::ResourceExhausted("attributes file " + Printable(path) +
                                     ": not enough memory to hold its rows");
  } catch (const std::exception& e) {
    return Status::Internal("attributes file " + Printable(path) + ": " + e.what());
  }
}

}  // namespace

Status ReadAttributesJsonl(const std::string& path, const std::vector<AttributeSpec>& schema,
                           size_t expected_rows, std::vector<std::vector<Value>>* rows,
                           const std::string& id_field, std::vector<int64_t>* ids) {
  return ReadWith(ReadJsonlText, path, schema, expected_rows, rows, id_field, ids);
}

Status ReadAttributesCsv(const std::string& path, const std::vector<AttributeSpec>& schema,
                         size_t expected_rows, std::vector<std::vector<Value>>* rows,
                         const std::string& id_field, std::vector<int64_t>* ids) {
  return ReadWith(ReadCsvText, path, schema, expected_rows, rows, id_field, ids);
}

Status ReadAttributes(const std::string& path, const std::vector<AttributeSpec>& schema,
                      size_t expected_rows, std::vector<std::vector<Value>>* rows,
                      const std::string& id_field, std::vector<int64_t>* ids) {
  const std::string ext = LowerExtension(path);
  if (ext == ".jsonl" || ext == ".ndjson" || ext == ".json") {
    return ReadAttributesJsonl(path, schema, expected_rows, rows, id_field, ids);
  }
  if (ext == ".csv") return ReadAttributesCsv(path, schema, expected_rows, rows, id_field, ids);
  return Status::InvalidArgument("attributes file " + Printable(path) + ": unsupported format '" +
                                 Printable(ext) + "'; expected .jsonl or .csv");
}

}  // namespace sieve::io
