// Copyright 2026 The Sieve Authors.

#include "storage/ledger.h"

#include <cstring>
#include <utility>

#include "storage/file_checksum.h"
#include "storage/format.h"

namespace sieve {

namespace {

namespace fmt = ::sieve::format;

constexpr char kMagic[8] = {'S', 'I', 'E', 'V', 'E', 'L', 'G', '1'};
constexpr size_t kHeaderSize = 24;  // magic, base_seq, XXH3 of the two
constexpr uint8_t kRecordVersion = 1;
constexpr uint32_t kMaxRecordBytes = 16u << 20;

std::string PathOf(const std::string& dir) { return dir + "/" + kLedgerFileName; }

Status FromRocks(const rocksdb::Status& s, const std::string& what) {
  if (s.ok()) return Status::OK();
  if (s.IsNoSpace()) return Status::ResourceExhausted(what + ": " + s.ToString());
  return Status::IOError(what + ": " + s.ToString());
}

std::string EncodeHeader(uint64_t base_seq) {
  std::string h(kMagic, sizeof(kMagic));
  fmt::PutFixed64(&h, base_seq);
  fmt::PutFixed64(&h, Xxh3(h.data(), h.size()));
  return h;
}

std::string EncodeRecord(const LedgerRecord& r) {
  std::string p;
  p.push_back(static_cast<char>(kRecordVersion));
  p.push_back(static_cast<char>(r.kind));
  p.append(2, '\0');
  fmt::PutFixed64(&p, r.seq);
  fmt::PutFixed32(&p, r.collection_id);
  fmt::PutFixed32(&p, static_cast<uint32_t>(r.name.size()));
  p.append(r.name);
  fmt::PutFixed32(&p, static_cast<uint32_t>(r.shards.size()));
  for (const LedgerShard& s : r.shards) {
    fmt::PutFixed32(&p, s.shard);
    fmt::PutFixed32(&p, s.first_ordinal);
    fmt::PutFixed32(&p, s.next_ordinal);
    fmt::PutFixed64(&p, s.live_rows);
  }
  std::string out;
  fmt::PutFixed32(&out, static_cast<uint32_t>(p.size()));
  out.append(p);
  fmt::PutFixed64(&out, Xxh3(out.data(), out.size()));
  return out;
}

bool DecodePayload(std::string_view p, LedgerRecord* r) {
  size_t pos = 0;
  auto need = [&](size_t n) { return p.size() - pos >= n; };
  if (!need(20) || static_cast<uint8_t>(p[0]) != kRecordVersion) return false;
  const uint8_t kind = static_cast<uint8_t>(p[1]);
  if (kind < 1 || kind > 10) return false;
  r->kind = static_cast<LedgerKind>(kind);
  r->seq = fmt::GetFixed64(p.data() + 4);
  r->collection_id = fmt::GetFixed32(p.data() + 12);
  const uint32_t name_len = fmt::GetFixed32(p.data() + 16);
  pos = 20;
  if (!need(name_len)) return false;
  r->name.assign(p.data() + pos, name_len);
  pos += name_len;
  if (!need(4)) return false;
  const uint32_t count = fmt::GetFixed32(p.data() + pos);
  pos += 4;
  if ((p.size() - pos) != size_t{count} * 20) return false;
  r->shards.resize(count);
  for (LedgerShard& s : r->shards) {
    s.shard = fmt::GetFixed32(p.data() + pos);
    s.first_ordinal = fmt::GetFixed32(p.data() + pos + 4);
    s.next_ordinal = fmt::GetFixed32(p.data() + pos + 8);
    s.live_rows = fmt::GetFixed64(p.data() + pos + 12);
    pos += 20;
  }
  return true;
}

Status SyncDir(rocksdb::Env* env, const std::string& dir) {
  std::unique_ptr<rocksdb::Directory> d;
  rocksdb::Status s = env->NewDirectory(dir, &d);
  if (s.ok()) s = d->Fsync();
  return FromRocks(s, "syncing directory " + dir);
}

}  // namespace

const char* LedgerKindName(LedgerKind kind) {
  switch (kind) {
    case LedgerKind::kCreate: return "create";
    case LedgerKind::kAppend: return "append";
    case LedgerKind::kStates: return "delete";
    case LedgerKind::kSetting: return "setting";
    case LedgerKind::kDrop: return "drop";
    case LedgerKind::kRewrite: return "compact";
    case LedgerKind::kUpdate: return "update";
    case LedgerKind::kAlter: return "alter";
    case LedgerKind::kRename: return "rename";
    case LedgerKind::kAlias: return "alias";
  }
  return "unknown";
}

Status Ledger::Read(rocksdb::Env* env, const std::string& dir, LedgerContents* out) {
  *out = LedgerContents();
  const std::string path = PathOf(dir);
  if (env->FileExists(path).IsNotFound()) return Status::NotFound(path + " does not exist");
  std::unique_ptr<rocksdb::SequentialFile> file;
  SIEVE_RETURN_IF_ERROR(FromRocks(env->NewSequentialFile(path, &file, rocksdb::EnvOptions()),
                                  "opening " + path));
  std::string data;
  std::string scratch(1 << 20, '\0');
  while (true) {
    rocksdb::Slice got;
    SIEVE_RETURN_IF_ERROR(FromRocks(file->Read(scratch.size(), &got, scratch.data()),
                                    "reading " + path));
    if (got.empty()) break;
    data.append(got.data(), got.size());
  }
  if (data.size() < kHeaderSize || std::memcmp(data.data(), kMagic, sizeof(kMagic)) != 0 ||
      fmt::GetFixed64(data.data() + 16) != Xxh3(data.data(), 16)) {
    return Status::Corruption(path + ": the header (bytes 0.." + std::to_string(kHeaderSize - 1) +
                              ") is damaged");
  }
  out->base_seq = fmt::GetFixed64(data.data() + 8);
  size_t pos = kHeaderSize;
  uint64_t last = out->base_seq;
  while (pos < data.size()) {
    if (data.size() - pos < 4) {
      out->torn_tail = true;
      break;
    }
    const uint32_t len = fmt::GetFixed32(data.data() + pos);
    if (len > kMaxRecordBytes) {
      return Status::Corruption(path + ": the record at byte " + std::to_string(pos) +
                                " is damaged (length " + std::to_string(len) + ")");
    }
    if (data.size() - pos < size_t{4} + len + 8) {
      out->torn_tail = true;
      break;
    }
    const uint64_t want = fmt::GetFixed64(data.data() + pos + 4 + len);
    LedgerRecord r;
    if (Xxh3(data.data() + pos, 4 + len) != want ||
        !DecodePayload(std::string_view(data.data() + pos + 4, len), &r) || r.seq <= last) {
      return Status::Corruption(path + ": the record at byte " + std::to_string(pos) +
                                " is damaged");
    }
    last = r.seq;
    out->records.push_back(std::move(r));
    pos += 4 + len + 8;
  }
  out->valid_bytes = pos;
  return Status::OK();
}

Status Ledger::Create(rocksdb::Env* env, const std::string& dir, uint64_t base_seq,
                      std::unique_ptr<Ledger>* out) {
  const std::string path = PathOf(dir);
  const std::string tmp = path + ".tmp";
  const std::string header = EncodeHeader(base_seq);
  {
    std::unique_ptr<rocksdb::WritableFile> file;
    rocksdb::EnvOptions eo;
    rocksdb::Status s = env->NewWritableFile(tmp, &file, eo);
    if (s.ok()) s = file->Append(header);
    if (s.ok()) s = file->Sync();
    rocksdb::Status c = file ? file->Close() : rocksdb::Status::OK();
    if (s.ok()) s = c;
    if (!s.ok()) {
      (void)env->DeleteFile(tmp);
      return FromRocks(s, "writing " + tmp);
    }
  }
  SIEVE_RETURN_IF_ERROR(FromRocks(env->RenameFile(tmp, path), "renaming " + tmp));
  SIEVE_RETURN_IF_ERROR(SyncDir(env, dir));
  std::unique_ptr<rocksdb::WritableFile> file;
  SIEVE_RETURN_IF_ERROR(
      FromRocks(env->ReopenWritableFile(path, &file, rocksdb::EnvOptions()), "opening " + path));
  out->reset(new Ledger(std::move(file), path, header.size()));
  return Status::OK();
}

Status Ledger::OpenForAppend(rocksdb::Env* env, const std::string& dir,
                             const LedgerContents& contents, std::unique_ptr<Ledger>* out) {
  if (contents.torn_tail) return Create(env, dir, contents.last_seq(), out);
  const std::string path = PathOf(dir);
  std::unique_ptr<rocksdb::WritableFile> file;
  SIEVE_RETURN_IF_ERROR(
      FromRocks(env->ReopenWritableFile(path, &file, rocksdb::EnvOptions()), "opening " + path));
  out->reset(new Ledger(std::move(file), path, contents.valid_bytes));
  return Status::OK();
}

Status Ledger::Append(const LedgerRecord& record) {
  const std::string bytes = EncodeRecord(record);
  rocksdb::Status s = file_->Append(bytes);
  if (s.ok()) s = file_->Sync();
  SIEVE_RETURN_IF_ERROR(FromRocks(s, "appending to " + path_));
  size_ += bytes.size();
  return Status::OK();
}

}  // namespace sieve
