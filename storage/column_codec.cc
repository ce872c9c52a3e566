// Copyright 2026 The Sieve Authors.
//
// Attribute columns (storage/format.h EncodeColumns / DecodeColumns / CheckColumns): each
// column's validity bitmap and values, and for a text column its inverted-index segment.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "storage/format.h"
#include "storage/format_reader.h"
#include "text/text_segment.h"

namespace sieve::format {

// --- Attribute columns ----------------------------------------------------------------------

Status CheckColumns(const std::vector<Column>& columns, const std::vector<AttributeSpec>& schema,
                    uint32_t num_rows) {
  if (columns.size() != schema.size()) {
    return Status::InvalidArgument("chunk has " + Num(columns.size()) +
                                   " attribute columns, the schema has " + Num(schema.size()));
  }
  for (size_t c = 0; c < columns.size(); ++c) {
    const Column& col = columns[c];
    const std::string at = "attribute '" + schema[c].name + "': ";
    if (col.type != schema[c].type) {
      return Status::InvalidArgument(at + "column type " + AttrTypeName(col.type) +
                                     " differs from the schema's " + AttrTypeName(schema[c].type));
    }
    size_t values = 0;
    switch (col.type) {
      case AttrType::kInt:
      case AttrType::kBool:
        values = col.ints.size();
        break;
      case AttrType::kFloat:
        values = col.floats.size();
        break;
      case AttrType::kString:
      case AttrType::kText:
        values = col.strings.size();
        break;
      case AttrType::kTags:
        values = col.tags.size();
        break;
    }
    if (col.valid.size() != num_rows || values != num_rows) {
      return Status::InvalidArgument(at + "column holds " + Num(col.valid.size()) +
                                     " validity flags and " + Num(values) +
                                     " values, the chunk has " + Num(num_rows) + " rows");
    }
    for (size_t r = 0; r < num_rows; ++r) {
      if ((col.type == AttrType::kString || col.type == AttrType::kText) && col.valid[r] &&
          col.strings[r].size() > UINT32_MAX) {
        return Status::InvalidArgument(at + "row " + Num(r) + ": string longer than 4 GiB");
      }
    }
    if (col.type == AttrType::kText) {
      if (!col.SegmentCurrent()) {
        return Status::InvalidArgument(at + "the text index of the column is not built "
                                            "(EnsureTextSegments)");
      }
      Status s = CheckTextSegment(*col.segment, col.valid);
      if (!s.ok()) return Status::InvalidArgument(at + s.message());
    }
  }
  return Status::OK();
}

namespace {

void PutBitmap(const std::vector<uint8_t>& flags, std::string* out) {
  const size_t at = out->size();
  out->append((flags.size() + 7) / 8, '\0');
  for (size_t i = 0; i < flags.size(); ++i) {
    if (flags[i]) (*out)[at + i / 8] |= static_cast<char>(1u << (i % 8));
  }
}

void PutString(std::string_view s, std::string* out) {
  PutFixed32(out, static_cast<uint32_t>(s.size()));
  out->append(s);
}

void PutVarint32(std::string* out, uint32_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// The text index of a text column (FORMAT.md, "Attribute chunk"): every count and gap LEB128.
void EncodeTextSegment(const TextSegment& s, std::string* out) {
  PutVarint32(out, static_cast<uint32_t>(s.terms.size()));
  for (size_t t = 0; t < s.terms.size(); ++t) {
    PutVarint32(out, static_cast<uint32_t>(s.terms[t].size()));
    out->append(s.terms[t]);
    PutVarint32(out, s.term_starts[t + 1] - s.term_starts[t]);
    for (uint32_t p = s.term_starts[t]; p < s.term_starts[t + 1]; ++p) {
      PutVarint32(out, p == s.term_starts[t] ? s.rows[p] : s.rows[p] - s.rows[p - 1] - 1);
      PutVarint32(out, s.tf(p));
      for (uint32_t i = s.position_starts[p]; i < s.position_starts[p + 1]; ++i) {
        PutVarint32(out, i == s.position_starts[p] ? s.positions[i]
                                                   : s.positions[i] - s.positions[i - 1] - 1);
      }
    }
  }
}

Status DecodeTextSegment(Reader* in, uint32_t num_rows, TextSegment* s) {
  auto bad = [&](const std::string& what) {
    return Status::Corruption("text index is damaged at byte " + Num(in->pos()) + ": " + what);
  };
  *s = TextSegment();
  s->num_rows = num_rows;
  uint32_t terms = 0;
  // Every count is bounded by the bytes left (each item takes at least one), so a damaged
  // count cannot drive a huge allocation.
  if (!in->Varint32(&terms) || terms > in->remaining()) return bad("term count");
  s->terms.reserve(terms);
  for (uint32_t t = 0; t < terms; ++t) {
    uint32_t len = 0, postings = 0;
    std::string_view term;
    if (!in->Varint32(&len) || !in->Bytes(len, &term)) return bad("term " + Num(t));
    if (!in->Varint32(&postings) || postings == 0 || postings > in->remaining()) {
      return bad("posting count of term " + Num(t));
    }
    s->terms.emplace_back(term);
    uint64_t row = 0;
    for (uint32_t p = 0; p < postings; ++p) {
      uint32_t gap = 0, tf = 0;
      if (!in->Varint32(&gap) || !in->Varint32(&tf) || tf == 0 || tf > in->remaining()) {
        return bad("posting " + Num(p) + " of term " + Num(t));
      }
      row = p == 0 ? gap : row + 1 + gap;
      if (row >= num_rows) return bad("row " + Num(row) + " beyond the chunk");
      s->rows.push_back(static_cast<uint32_t>(row));
      uint64_t position = 0;
      for (uint32_t i = 0; i < tf; ++i) {
        uint32_t pgap = 0;
        if (!in->Varint32(&pgap)) return bad("positions of term " + Num(t));
        position = i == 0 ? pgap : position + 1 + pgap;
        if (position > UINT32_MAX) return bad("position beyond 2^32");
        s->positions.push_back(static_cast<uint32_t>(position));
      }
      s->position_starts.push_back(static_cast<uint32_t>(s->positions.size()));
    }
    s->term_starts.push_back(static_cast<uint32_t>(s->rows.size()));
  }
  return Status::OK();
}

void EncodeColumnBody(const Column& col, uint32_t begin, uint32_t num_rows, std::string* out) {
  const std::vector<uint8_t> valid(col.valid.begin() + begin, col.valid.begin() + begin + num_rows);
  PutBitmap(valid, out);
  switch (col.type) {
    case AttrType::kInt:
      for (uint32_t r = 0; r < num_rows; ++r) {
        PutFixed64(out, valid[r] ? static_cast<uint64_t>(col.ints[begin + r]) : 0);
      }
      break;
    case AttrType::kFloat:
      for (uint32_t r = 0; r < num_rows; ++r) {
        PutFixed64(out, valid[r] ? std::bit_cast<uint64_t>(col.floats[begin + r]) : 0);
      }
      break;
    case AttrType::kBool: {
      std::vector<uint8_t> bits(num_rows);
      for (uint32_t r = 0; r < num_rows; ++r) bits[r] = valid[r] && col.ints[begin + r] != 0;
      PutBitmap(bits, out);
      break;
    }
    case AttrType::kString:
      for (uint32_t r = 0; r < num_rows; ++r) {
        if (valid[r]) PutString(col.strings[begin + r], out);
      }
      break;
    case AttrType::kTags:
      for (uint32_t r = 0; r < num_rows; ++r) {
        if (!valid[r]) continue;
        PutFixed32(out, static_cast<uint32_t>(col.tags[begin + r].size()));
        for (const std::string& t : col.tags[begin + r]) PutString(t, out);
      }
      break;
    case AttrType::kText:
      for (uint32_t r = 0; r < num_rows; ++r) {
        if (valid[r]) PutString(col.strings[begin + r], out);
      }
      if (begin == 0 && num_rows == col.segment->num_rows) {
        EncodeTextSegment(*col.segment, out);
      } else {
        EncodeTextSegment(SliceTextSegment(*col.segment, begin, num_rows), out);
      }
      break;
  }
}

bool BitAt(std::string_view bitmap, size_t i) {
  return (static_cast<unsigned char>(bitmap[i / 8]) >> (i % 8)) & 1;
}

Status DecodeColumnBody(std::string_view body, AttrType type, uint32_t num_rows, Column* col) {
  Reader in(body);
  std::string_view validity;
  const size_t bitmap_bytes = (size_t{num_rows} + 7) / 8;
  if (!in.Bytes(bitmap_bytes, &validity)) {
    return Truncated("validity bitmap", bitmap_bytes, body.size());
  }
  if (col != nullptr) {
    col->type = type;
    col->valid.resize(num_rows);
    for (uint32_t r = 0; r < num_rows; ++r) col->valid[r] = BitAt(validity, r);
  }
  auto truncated = [&](uint32_t row) {
    return Status::Corruption("column body is truncated at row " + Num(row));
  };
  switch (type) {
    case AttrType::kInt:
    case AttrType::kFloat: {
      std::string_view values;
      if (!in.Bytes(size_t{num_rows} * 8, &values)) return truncated(0);
      if (col == nullptr) break;
      if (type == AttrType::kInt) {
        col->ints.resize(num_rows);
        for (uint32_t r = 0; r < num_rows; ++r) {
          col->ints[r] = static_cast<int64_t>(GetFixed64(values.data() + 8 * r));
        }
      } else {
        col->floats.resize(num_rows);
        for (uint32_t r = 0; r < num_rows; ++r) {
          col->floats[r] = std::bit_cast<double>(GetFixed64(values.data() + 8 * r));
        }
      }
      break;
    }
    case AttrType::kBool: {
      std::string_view bits;
      if (!in.Bytes(bitmap_bytes, &bits)) return truncated(0);
      if (col == nullptr) break;
      col->ints.resize(num_rows);
      for (uint32_t r = 0; r < num_rows; ++r) col->ints[r] = BitAt(bits, r);
      break;
    }
    case AttrType::kText: {
      if (col != nullptr) col->strings.assign(num_rows, std::string());
      for (uint32_t r = 0; r < num_rows; ++r) {
        if (!BitAt(validity, r)) continue;
        uint32_t len = 0;
        std::string_view bytes;
        if (!in.U32(&len) || !in.Bytes(len, &bytes)) return truncated(r);
        if (col != nullptr) col->strings[r].assign(bytes);
      }
      auto segment = std::make_shared<TextSegment>();
      SIEVE_RETURN_IF_ERROR(DecodeTextSegment(&in, num_rows, segment.get()));
      std::vector<uint8_t> valid(num_rows);
      for (uint32_t r = 0; r < num_rows; ++r) valid[r] = BitAt(validity, r);
      SIEVE_RETURN_IF_ERROR(CheckTextSegment(*segment, valid));
      if (col != nullptr) col->segment = std::move(segment);
      break;
    }
    case AttrType::kString:
    case AttrType::kTags: {
      if (col != nullptr) {
        if (type == AttrType::kString) {
          col->strings.assign(num_rows, std::string());
        } else {
          col->tags.assign(num_rows, std::vector<std::string>());
        }
      }
      for (uint32_t r = 0; r < num_rows; ++r) {
        if (!BitAt(validity, r)) continue;
        uint32_t count = 1;
        if (type == AttrType::kTags && !in.U32(&count)) return truncated(r);
        // A corrupt count must not drive a huge allocation: each tag needs ≥ 4 bytes.
        if (type == AttrType::kTags && count > in.remaining() / 4) return truncated(r);
        if (col != nullptr && type == AttrType::kTags) col->tags[r].reserve(count);
        for (uint32_t t = 0; t < count; ++t) {
          uint32_t len = 0;
          std::string_view bytes;
          if (!in.U32(&len) || !in.Bytes(len, &bytes)) return truncated(r);
          if (col == nullptr) continue;
          if (type == AttrType::kString) {
            col->strings[r].assign(bytes);
          } else {
            col->tags[r].emplace_back(bytes);
          }
        }
      }
      break;
    }
  }
  if (in.remaining() != 0) {
    return Status::Corruption("column body has " + Num(in.remaining()) + " trailing bytes");
  }
  return Status::OK();
}

}  // namespace

void EncodeColumns(const std::vector<Column>& columns, uint32_t begin, uint32_t num_rows,
                   std::string* out) {
  out->push_back(static_cast<char>(kFormatVersion));
  out->append(3, '\0');
  PutFixed32(out, num_rows);
  PutFixed32(out, static_cast<uint32_t>(columns.size()));
  for (const Column& col : columns) {
    out->push_back(static_cast<char>(col.type));
    out->append(3, '\0');
    const size_t len_at = out->size();
    PutFixed32(out, 0);
    EncodeColumnBody(col, begin, num_rows, out);
    const size_t body = out->size() - len_at - 4;
    std::string len;
    PutFixed32(&len, static_cast<uint32_t>(body));
    out->replace(len_at, 4, len);
  }
}

Status DecodeColumns(std::string_view value, const std::vector<AttributeSpec>& schema,
                     uint32_t* num_rows, std::vector<Column>* out) {
  Reader in(value);
  uint8_t version = 0;
  uint32_t rows = 0, count = 0;
  if (!in.U8(&version) || !in.Skip(3) || !in.U32(&rows) || !in.U32(&count)) {
    return Truncated("attribute chunk", kColumnsHeaderSize, value.size());
  }
  SIEVE_RETURN_IF_ERROR(CheckVersion("attribute chunk", version));
  if (count != schema.size()) {
    return Status::Corruption("attribute chunk has " + Num(count) + " columns, the schema has " +
                              Num(schema.size()));
  }
  if (out != nullptr) {
    out->clear();
    out->resize(count);
  }
  for (uint32_t c = 0; c < count; ++c) {
    const std::string at = "attribute chunk column " + Num(c) + " '" + schema[c].name + "'";
    uint8_t type = 0;
    uint32_t len = 0;
    std::string_view body;
    if (!in.U8(&type) || !in.Skip(3) || !in.U32(&len) || !in.Bytes(len, &body)) {
      return Status::Corruption(at + " is truncated");
    }
    if (type != static_cast<uint8_t>(schema[c].type)) {
      return Status::Corruption(at + " has type code " + Num(type) + ", the schema says " +
                                AttrTypeName(schema[c].type));
    }
    Status s = DecodeColumnBody(body, schema[c].type, rows, out ? &(*out)[c] : nullptr);
    if (!s.ok()) return s.WithContext(at);
  }
  if (in.remaining() != 0) {
    return Status::Corruption("attribute chunk has " + Num(in.remaining()) + " trailing bytes");
  }
  *num_rows = rows;
  return Status::OK();
}

}  // namespace sieve::format
