// Copyright 2026 The Sieve Authors.
//
// The store's schema changes, renames and aliases (store_alter.cc): an alter rewrites the
// attribute chunks and never a vector byte (the vectors family's files and every one of its
// key/value pairs are the same before and after), dropping an attribute gives its bytes back,
// a writer killed with SIGKILL mid-alter leaves the old schema or the new and a clean store,
// renames move the name (and the aliases naming it), and names are never shared between a
// collection and an alias.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <rocksdb/metadata.h>
#include <rocksdb/options.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "storage/roaring.h"
#include "storage/store.h"
#include "tests/storage/fault_fs.h"
#include "tests/testutil.h"

namespace sieve {
namespace {

constexpr uint32_t kDim = 16;

CollectionSpec Spec(const std::string& name = "c") {
  CollectionSpec spec;
  spec.name = name;
  spec.dim = kDim;
  spec.attributes = {{"n", AttrType::kInt}, {"s", AttrType::kString}};
  return spec;
}

// Rows [first, first + n) with ids 10 * ordinal; s is a long string so dropping it frees bytes.
Chunk Rows(uint32_t first, uint32_t n, uint64_t seed) {
  Chunk c;
  c.first_ordinal = first;
  c.num_rows = n;
  c.vectors = test::RandomVectors(n, kDim, seed);
  c.columns.resize(2);
  c.columns[0].type = AttrType::kInt;
  c.columns[1].type = AttrType::kString;
  for (uint32_t r = 0; r < n; ++r) {
    c.ids.push_back(10 * int64_t{first + r});
    c.columns[0].Append(Value(int64_t{first + r}));
    std::string text(200, ' ');
    uint64_t x = seed * 7919 + first + r;
    for (char& ch : text) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      ch = static_cast<char>('a' + (x >> 59) % 26);  // incompressible enough
    }
    c.columns[1].Append(Value(std::move(text)));
  }
  return c;
}

Status Append(Store* store, const CollectionMeta& meta, uint32_t shard, const Chunk& chunk) {
  ShardState state;
  SIEVE_RETURN_IF_ERROR(store->ReadShardState(meta, shard, &state));
  ShardState next = state;
  next.next_ordinal += chunk.num_rows;
  next.live_rows += chunk.num_rows;
  Store::ShardAppend a{shard, {&chunk}, next};
  return store->CommitAppend(meta, chunk.ids.back() + 1, {a});
}

std::vector<Chunk> Scan(Store* store, const CollectionMeta& meta, uint32_t shard) {
  std::vector<Chunk> out;
  Status s = store->ScanChunks(meta, shard, kChunkAll, [&](Chunk&& c) {
    out.push_back(std::move(c));
    return Status::OK();
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

void ExpectClean(Store* store) {
  std::vector<std::string> problems;
  Status s = store->CheckFormat(&problems);
  EXPECT_TRUE(s.ok()) << s.ToString();
  for (const std::string& p : problems) ADD_FAILURE() << p;
}

// What RocksDB holds of one family of the closed store at `path`: its live table and blob files
// (name → size) and, for the vectors family, every key and value.
struct FamilyImage {
  std::map<std::string, uint64_t> files;
  std::map<std::string, std::string> pairs;
  uint64_t bytes = 0;
};

FamilyImage ReadFamily(const std::string& path, const std::string& family, bool pairs) {
  FamilyImage image;
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  for (const char* name : {"default", "meta", "vectors", "rows"}) {
    families.emplace_back(name, rocksdb::ColumnFamilyOptions());
  }
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status rs =
      rocksdb::DB::OpenForReadOnly(rocksdb::DBOptions(), path, families, &handles, &raw);
  EXPECT_TRUE(rs.ok()) << rs.ToString();
  if (!rs.ok()) return image;
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::ColumnFamilyHandle* h = handles[family == "vectors" ? 2 : 3];
  rocksdb::ColumnFamilyMetaData meta;
  db->GetColumnFamilyMetaData(h, &meta);
  for (const auto& level : meta.levels) {
    for (const auto& f : level.files) image.files[f.name] = f.size;
  }
  for (const auto& b : meta.blob_files) image.files[b.blob_file_name] = b.blob_file_size;
  image.bytes = meta.size;
  if (pairs) {
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), h));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      image.pairs[it->key().ToString()] = it->value().ToString();
    }
    EXPECT_TRUE(it->status().ok());
  }
  for (auto* handle : handles) (void)db->DestroyColumnFamilyHandle(handle);
  return image;
}

TEST(AlterStoreTest, AlterRewritesColumnsAndNeverAVectorByte) {
  test::ScratchDir dir;
  const std::string path = dir.Join("db");
  StoreOptions bulk;
  bulk.vector_file_min_bytes = 0;  // every append's vectors in an ingested file, as bulk ingests
  CollectionMeta meta;
  {
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(bulk, path, &store).ok());
    ASSERT_TRUE(store->CreateCollection(Spec(), &meta).ok());
    ASSERT_TRUE(Append(store.get(), meta, 0, Rows(0, 6000, 1)).ok());
    ASSERT_TRUE(Append(store.get(), meta, 0, Rows(6000, 4000, 2)).ok());
    ASSERT_TRUE(store->Flush().ok());
  }
  const FamilyImage vectors_before = ReadFamily(path, "vectors", /*pairs=*/true);
  const FamilyImage rows_before = ReadFamily(path, "rows", /*pairs=*/false);
  ASSERT_FALSE(vectors_before.files.empty());
  ASSERT_EQ(vectors_before.pairs.size(), 2u);

  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(bulk, path, &store).ok());
  // Add w:float = 2.5 after the others.
  CollectionSpec added = Spec();
  added.attributes.push_back({"w", AttrType::kFloat});
  CollectionMeta altered;
  Store::AlterStats stats;
  Status s = store->AlterColumns(meta, added, {{0, Value()}, {1, Value()}, {-1, Value(2.5)}},
                                 /*reclaim=*/false, &altered, &stats);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(stats.rows, 10000u);
  EXPECT_EQ(stats.chunks, 2u);
  EXPECT_EQ(altered.spec.attributes.size(), 3u);
  CollectionMeta got;
  ASSERT_TRUE(store->GetCollection("c", &got).ok());
  EXPECT_EQ(got.spec.attributes.size(), 3u);
  std::vector<Chunk> chunks = Scan(store.get(), got, 0);
  ASSERT_EQ(chunks.size(), 2u);
  const std::vector<float> first = test::RandomVectors(6000, kDim, 1);
  EXPECT_EQ(chunks[0].vectors, first);
  for (const Chunk& c : chunks) {
    ASSERT_EQ(c.columns.size(), 3u);
    for (uint32_t r = 0; r < c.num_rows; ++r) {
      ASSERT_EQ(c.ids[r], 10 * int64_t{c.first_ordinal + r});
      ASSERT_EQ(std::get<int64_t>(c.columns[0].Get(r)), int64_t{c.first_ordinal + r});
      ASSERT_EQ(std::get<double>(c.columns[2].Get(r)), 2.5);
    }
  }
  ExpectClean(store.get());

  // Drop s (the 200-byte strings): its bytes go back once the alter returns.
  CollectionSpec dropped = added;
  dropped.attributes.erase(dropped.attributes.begin() + 1);
  s = store->AlterColumns(got, dropped, {{0, Value()}, {2, Value()}}, /*reclaim=*/true,
                          &altered, &stats);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(store->GetCollection("c", &got).ok());
  chunks = Scan(store.get(), got, 0);
  ASSERT_EQ(chunks[1].columns.size(), 2u);
  EXPECT_EQ(std::get<double>(chunks[1].columns[1].Get(7)), 2.5);
  ExpectClean(store.get());
  // A column of the wrong count or type is refused, nothing written.
  EXPECT_TRUE(store->AlterColumns(got, dropped, {{0, Value()}}, false, &altered, &stats)
                  .IsInvalidArgument());
  EXPECT_TRUE(store->AlterColumns(got, added, {{0, Value()}, {1, Value()}, {-1, Value(true)}},
                                  false, &altered, &stats)
                  .IsInvalidArgument());
  ASSERT_TRUE(store->Flush().ok());
  store.reset();

  const FamilyImage vectors_after = ReadFamily(path, "vectors", /*pairs=*/true);
  const FamilyImage rows_after = ReadFamily(path, "rows", /*pairs=*/false);
  EXPECT_EQ(vectors_after.files, vectors_before.files);  // the same files, none rewritten
  EXPECT_EQ(vectors_after.pairs, vectors_before.pairs);  // and the same bytes under each key
  // 10,000 random strings of 200 bytes were stored (over 1 MB even compressed); the rows
  // family now holds ids, n and w only.
  EXPECT_GT(rows_before.bytes, 1000000u);
  EXPECT_LT(rows_after.bytes, 400000u) << rows_before.bytes << " -> " << rows_after.bytes;
}

TEST(AlterStoreTest, RenameAndAliasesShareOneNamespace) {
  test::ScratchDir dir;
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(StoreOptions(), dir.path(), &store).ok());
  CollectionMeta a, b;
  ASSERT_TRUE(store->CreateCollection(Spec("a"), &a).ok());
  ASSERT_TRUE(store->CreateCollection(Spec("b"), &b).ok());
  ASSERT_TRUE(Append(store.get(), a, 0, Rows(0, 100, 1)).ok());
  ASSERT_TRUE(store->PutAlias("live", "a").ok());
  EXPECT_TRUE(store->PutAlias("b", "a").IsAlreadyExists());     // a collection's name
  EXPECT_TRUE(store->PutAlias("x", "live").IsInvalidArgument());  // an alias of an alias
  EXPECT_TRUE(store->PutAlias("x", "nope").IsNotFound());
  EXPECT_TRUE(store->PutAlias("bad name", "a").IsInvalidArgument());
  EXPECT_TRUE(store->CreateCollection(Spec("live"), nullptr).IsAlreadyExists());
  EXPECT_TRUE(store->DropCollection(a).IsInvalidArgument());  // the alias names it
  CollectionMeta renamed;
  EXPECT_TRUE(store->RenameCollection(a, "b", &renamed).IsAlreadyExists());
  EXPECT_TRUE(store->RenameCollection(a, "live", &renamed).IsAlreadyExists());
  ASSERT_TRUE(store->RenameCollection(a, "a2", &renamed).ok());
  EXPECT_EQ(renamed.id, a.id);
  CollectionMeta got;
  EXPECT_TRUE(store->GetCollection("a", &got).IsNotFound());
  ASSERT_TRUE(store->GetCollection("a2", &got).ok());
  EXPECT_EQ(Scan(store.get(), got, 0).size(), 1u);  // its rows did not move
  std::vector<std::pair<std::string, std::string>> aliases;
  ASSERT_TRUE(store->ListAliases(&aliases).ok());
  ASSERT_EQ(aliases.size(), 1u);
  EXPECT_EQ(aliases[0], std::make_pair(std::string("live"), std::string("a2")));  // it followed
  ASSERT_TRUE(store->PutAlias("live", "b").ok());  // the switch
  ASSERT_TRUE(store->DropCollection(got).ok());    // nothing names a2 any more
  ExpectClean(store.get());
  store.reset();
  ASSERT_TRUE(Store::Open(StoreOptions(), dir.path(), &store).ok());
  ASSERT_TRUE(store->ListAliases(&aliases).ok());
  ASSERT_EQ(aliases.size(), 1u);
  EXPECT_EQ(aliases[0].second, "b");
  ASSERT_TRUE(store->DropAlias("live").ok());
  EXPECT_TRUE(store->DropAlias("live").IsNotFound());
  ASSERT_TRUE(store->GetCollection("b", &got).ok());
  ASSERT_TRUE(store->DropCollection(got).ok());
  ExpectClean(store.get());
}

// Repair rebuilds a damaged store with its altered schema and its aliases.
TEST(AlterStoreTest, RepairKeepsTheSchemaAndTheAliases) {
  test::ScratchDir dir;
  const std::string path = dir.Join("db");
  {
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(StoreOptions(), path, &store).ok());
    CollectionMeta meta, altered;
    ASSERT_TRUE(store->CreateCollection(Spec(), &meta).ok());
    ASSERT_TRUE(Append(store.get(), meta, 0, Rows(0, 500, 1)).ok());
    CollectionSpec spec = Spec();
    spec.attributes.push_back({"x", AttrType::kInt});
    Store::AlterStats stats;
    ASSERT_TRUE(store
                    ->AlterColumns(meta, spec,
                                   {{0, Value()}, {1, Value()}, {-1, Value(int64_t{3})}}, false,
                                   &altered, &stats)
                    .ok());
    ASSERT_TRUE(store->PutAlias("live", "c").ok());
    ASSERT_TRUE(store->Flush().ok());
  }
  std::remove((path + "/SIEVE-LEDGER").c_str());  // damage: the commit ledger is gone
  RepairReport report;
  Status s = Store::Repair(StoreOptions(), path, &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(report.repaired);
  EXPECT_EQ(report.rows_lost, 0u);
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(StoreOptions(), path, &store).ok());
  ExpectClean(store.get());
  std::vector<std::pair<std::string, std::string>> aliases;
  ASSERT_TRUE(store->ListAliases(&aliases).ok());
  ASSERT_EQ(aliases.size(), 1u);
  EXPECT_EQ(aliases[0], std::make_pair(std::string("live"), std::string("c")));
  CollectionMeta meta;
  ASSERT_TRUE(store->GetCollection("c", &meta).ok());
  ASSERT_EQ(meta.spec.attributes.size(), 3u);
  std::vector<Chunk> chunks = Scan(store.get(), meta, 0);
  ASSERT_FALSE(chunks.empty());
  EXPECT_EQ(std::get<int64_t>(chunks[0].columns[2].Get(0)), 3);
}

// Run in a child process by the test below: adds attribute x then drops it, again and again,
// printing how many alters were acknowledged.
TEST(AlterCrashChild, Alterer) {
  const char* db = std::getenv("SIEVE_ALTER_DB");
  const char* acks = std::getenv("SIEVE_ALTER_ACKS");
  if (db == nullptr || acks == nullptr) GTEST_SKIP() << "only run by the kill -9 test";
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(StoreOptions(), db, &store).ok());
  const int fd = ::open(acks, O_WRONLY | O_APPEND);
  ASSERT_GE(fd, 0);
  CollectionSpec with = Spec();
  with.attributes.push_back({"x", AttrType::kInt});
  for (int i = 1;; ++i) {
    CollectionMeta meta, altered;
    Store::AlterStats stats;
    ASSERT_TRUE(store->GetCollection("c", &meta).ok());
    if (meta.spec.attributes.size() == 2) {
      ASSERT_TRUE(store
                      ->AlterColumns(meta, with,
                                     {{0, Value()}, {1, Value()}, {-1, Value(int64_t{i})}}, false,
                                     &altered, &stats)
                      .ok());
    } else {
      ASSERT_TRUE(store->AlterColumns(meta, Spec(), {{0, Value()}, {1, Value()}}, i % 4 == 0,
                                      &altered, &stats)
                      .ok());
    }
    const std::string line = std::to_string(i) + "\n";
    ASSERT_EQ(::write(fd, line.data(), line.size()), static_cast<ssize_t>(line.size()));
  }
}

TEST(AlterStoreTest, KillNineDuringAlterLeavesOldOrNewSchema) {
  for (int round = 0; round < 3; ++round) {
    test::ScratchDir dir;
    const std::string db = dir.Join("db");
    const std::string acks = dir.Join("acks");
    { std::ofstream(acks).flush(); }
    {
      std::unique_ptr<Store> store;
      ASSERT_TRUE(Store::Open(StoreOptions(), db, &store).ok());
      CollectionMeta meta;
      ASSERT_TRUE(store->CreateCollection(Spec(), &meta).ok());
      ASSERT_TRUE(Append(store.get(), meta, 0, Rows(0, 20000, 10)).ok());
    }
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      setenv("SIEVE_ALTER_DB", db.c_str(), 1);
      setenv("SIEVE_ALTER_ACKS", acks.c_str(), 1);
      const int devnull = ::open("/dev/null", O_WRONLY);
      if (devnull >= 0) {
        dup2(devnull, STDOUT_FILENO);
        dup2(devnull, STDERR_FILENO);
      }
      execl("/proc/self/exe", "storage_tests", "--gtest_filter=AlterCrashChild.Alterer",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    int acked = 0;
    for (int i = 0; i < 3000 && acked < 2 + round; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      std::ifstream in(acks);
      for (std::string line; std::getline(in, line);) acked = std::stoi(line);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(11 * round));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the alterer exited by itself: " << status;
    ASSERT_GE(acked, 2 + round) << "the alterer acknowledged too little before the kill";
    std::unique_ptr<Store> store;
    Status s = Store::Open(StoreOptions(), db, &store);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ExpectClean(store.get());
    CollectionMeta meta;
    ASSERT_TRUE(store->GetCollection("c", &meta).ok());
    const size_t nattr = meta.spec.attributes.size();
    ASSERT_TRUE(nattr == 2 || nattr == 3) << nattr;
    uint32_t rows = 0;
    for (const Chunk& c : Scan(store.get(), meta, 0)) {
      ASSERT_EQ(c.columns.size(), nattr);  // every chunk in the schema the metadata says
      for (uint32_t r = 0; r < c.num_rows; r += 97) {
        ASSERT_EQ(c.ids[r], 10 * int64_t{c.first_ordinal + r});
        ASSERT_EQ(std::get<int64_t>(c.columns[0].Get(r)), int64_t{c.first_ordinal + r});
      }
      rows += c.num_rows;
    }
    EXPECT_EQ(rows, 20000u);
  }
}

// A failed write at any step of a schema change, a rename, an alias and a drop of a column
// (a full disk that stays full, an I/O error, a short write, a failed sync) fails that call
// cleanly: after reopening, the store checks clean and holds every acknowledged change and
// none after the failed one, the failed one whole or absent.
struct AlterFault {
  test::Fault fault;
  bool sticky;
};

constexpr int kAlterOps = 4;

// Whether the drop's reclaiming compaction runs under the faults too. Not under
// AddressSanitizer: RocksDB 7.8 leaks the memtable that a failing atomic flush switched in
// (inside librocksdb), which LeakSanitizer reports; the commit, which is
// what must stay atomic, is swept either way.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kReclaimUnderFaults = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kReclaimUnderFaults = false;
#else
constexpr bool kReclaimUnderFaults = true;
#endif
#else
constexpr bool kReclaimUnderFaults = true;
#endif

// Runs the changes in order until one fails; returns how many were acknowledged.
int RunAlterOps(Store* store) {
  for (int op = 0; op < kAlterOps; ++op) {
    CollectionMeta meta, altered;
    Store::AlterStats stats;
    Status s = store->GetCollection(op < 2 ? "c" : "d", &meta);
    if (s.ok()) {
      switch (op) {
        case 0: {
          CollectionSpec spec = meta.spec;
          spec.attributes.push_back({"x", AttrType::kInt});
          s = store->AlterColumns(meta, spec, {{0, Value()}, {1, Value()}, {-1, Value(int64_t{5})}},
                                  false, &altered, &stats);
          break;
        }
        case 1:
          s = store->RenameCollection(meta, "d", &altered);
          break;
        case 2:
          s = store->PutAlias("live", "d");
          break;
        case 3: {
          CollectionSpec spec = meta.spec;
          spec.attributes.erase(spec.attributes.begin() + 1);
          s = store->AlterColumns(meta, spec, {{0, Value()}, {2, Value()}}, kReclaimUnderFaults,
                                  &altered, &stats);
          break;
        }
      }
    }
    if (!s.ok()) return op;
  }
  return kAlterOps;
}

// How many of the changes the reopened store holds (they must form a prefix).
int AppliedAlterOps(Store* store) {
  CollectionMeta meta;
  const bool renamed = store->GetCollection("d", &meta).ok();
  if (!renamed) EXPECT_TRUE(store->GetCollection("c", &meta).ok());
  std::vector<std::pair<std::string, std::string>> aliases;
  EXPECT_TRUE(store->ListAliases(&aliases).ok());
  const auto& attrs = meta.spec.attributes;
  const bool has_x = attrs.back().name == "x";
  const bool s_gone = attrs.size() == 2 && has_x;
  const bool applied[kAlterOps] = {has_x, renamed, !aliases.empty(), s_gone};
  int n = 0;
  while (n < kAlterOps && applied[n]) ++n;
  for (int op = n; op < kAlterOps; ++op) EXPECT_FALSE(applied[op]) << "change " << op;
  // The rows are intact in whichever schema the metadata holds.
  uint32_t rows = 0;
  Status st = store->ScanChunks(meta, 0, kChunkAll, [&](Chunk&& c) {
    EXPECT_EQ(c.columns.size(), attrs.size());
    for (uint32_t r = 0; r < c.num_rows; ++r) {
      EXPECT_EQ(c.ids[r], 10 * int64_t{c.first_ordinal + r});
      EXPECT_EQ(std::get<int64_t>(c.columns[0].Get(r)), int64_t{c.first_ordinal + r});
      if (has_x) EXPECT_EQ(std::get<int64_t>(c.columns.back().Get(r)), 5);
    }
    rows += c.num_rows;
    return Status::OK();
  });
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(rows, 3000u);
  return n;
}

class AlterFaultTest : public ::testing::TestWithParam<AlterFault> {};

TEST_P(AlterFaultTest, EveryStepFailsCleanly) {
  const AlterFault c = GetParam();
  const bool syncs = c.fault == test::Fault::kSyncFails;
  auto setup = [](const std::string& path, rocksdb::Env* env) {
    StoreOptions options;
    options.env = env;
    std::unique_ptr<Store> store;
    EXPECT_TRUE(Store::Open(options, path, &store).ok());
    CollectionMeta meta;
    EXPECT_TRUE(store->CreateCollection(Spec(), &meta).ok());
    EXPECT_TRUE(Append(store.get(), meta, 0, Rows(0, 2000, 3)).ok());
    EXPECT_TRUE(Append(store.get(), meta, 0, Rows(2000, 1000, 4)).ok());
    return store;
  };
  int64_t steps = 0;
  {
    test::ScratchDir dir;
    auto fs = std::make_shared<test::FaultFileSystem>();
    std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(fs);
    std::unique_ptr<Store> store = setup(dir.path(), env.get());
    const int64_t before = syncs ? fs->sync_steps() : fs->steps();
    ASSERT_EQ(RunAlterOps(store.get()), kAlterOps);
    steps = (syncs ? fs->sync_steps() : fs->steps()) - before;
  }
  ASSERT_GT(steps, 4);
  RecordProperty("steps", static_cast<int>(steps));
  // Every step of the first 8, then 8 spread over the rest: each run costs a store (and the
  // other faults of fault_fs.h are covered, for every write path the alter shares, by
  // fault_fs_test.cc).
  std::vector<int64_t> chosen;
  for (int64_t step = 0; step < steps; step += step < 8 ? 1 : std::max<int64_t>(1, steps / 8)) {
    chosen.push_back(step);
  }
  int failed_runs = 0;
  for (int64_t step : chosen) {
    SCOPED_TRACE(std::string(test::FaultName(c.fault)) + " at step " + std::to_string(step) +
                 " of " + std::to_string(steps));
    test::ScratchDir dir;
    auto fs = std::make_shared<test::FaultFileSystem>();
    std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(fs);
    int acked = 0;
    {
      std::unique_ptr<Store> store = setup(dir.path(), env.get());
      fs->Arm(c.fault, step, c.sticky);
      acked = RunAlterOps(store.get());
      fs->Disarm();
      if (fs->failures() > 0) ++failed_runs;
    }
    std::unique_ptr<Store> store;
    StoreOptions read_only;  // what a restart finds, read without writing (and without fsyncs)
    read_only.read_only = true;
    Status s = Store::Open(read_only, dir.path(), &store);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ExpectClean(store.get());
    const int applied = AppliedAlterOps(store.get());
    EXPECT_GE(applied, acked);  // nothing acknowledged is lost
    EXPECT_LE(applied, std::min(acked + 1, kAlterOps));  // the failed change whole or absent
  }
  EXPECT_GT(failed_runs, static_cast<int>(chosen.size()) / 2);
}

INSTANTIATE_TEST_SUITE_P(Faults, AlterFaultTest,
                         ::testing::Values(AlterFault{test::Fault::kNoSpace, true},
                                           AlterFault{test::Fault::kSyncFails, false}),
                         [](const ::testing::TestParamInfo<AlterFault>& info) {
                           std::string name = test::FaultName(info.param.fault);
                           for (char& ch : name) {
                             if (ch == ' ') ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace sieve
