// Copyright 2026 The Sieve Authors.
//
// Backups (storage/store_backup.cc): taken while batches commit, in this process and beside a
// writer process (through a secondary instance); incremental, numbered and purged; verified
// byte by byte; interrupted by a full disk; restored only whole.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <rocksdb/env.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "storage/format.h"
#include "storage/rocks_store.h"
#include "storage/store.h"
#include "tests/storage/batch_rows.h"
#include "tests/storage/fault_fs.h"
#include "tests/testutil.h"

namespace sieve {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kBatchRows = test::kBatchRows;
using test::BatchChunk;
using test::CommitBatch;

CollectionSpec Spec() { return test::BatchSpec("items"); }

// Opens the store at `path`, checks that it holds exactly batches [0, n), every row as
// written, and passes CheckFormat; returns n.
uint32_t WholeBatchesAt(const std::string& path) {
  std::unique_ptr<Store> store;
  Status s = Store::Open(StoreOptions(), path, &store);
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (!s.ok()) return 0;
  CollectionMeta meta;
  EXPECT_TRUE(store->GetCollection("items", &meta).ok());
  ShardState state;
  EXPECT_TRUE(store->ReadShardState(meta, 0, &state).ok());
  EXPECT_EQ(state.next_ordinal % kBatchRows, 0u) << "a partial batch is visible";
  uint32_t seen = 0;
  s = store->ScanChunks(meta, 0, kChunkAll, [&](Chunk&& chunk) {
    const Chunk want = BatchChunk(seen);
    EXPECT_EQ(chunk.first_ordinal, want.first_ordinal);
    EXPECT_EQ(chunk.ids, want.ids);
    EXPECT_EQ(chunk.vectors, want.vectors);
    EXPECT_EQ(chunk.columns[0].Get(7), want.columns[0].Get(7));
    EXPECT_EQ(chunk.columns[1].Get(5), want.columns[1].Get(5));
    ++seen;
    return Status::OK();
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(seen, state.next_ordinal / kBatchRows);
  std::vector<std::string> problems;
  s = store->CheckFormat(&problems);
  EXPECT_TRUE(s.ok() && problems.empty()) << s.ToString();
  return seen;
}

// A store at `path` with `batches` batches committed.
std::unique_ptr<Store> StoreWith(const std::string& path, uint32_t batches,
                                 StoreOptions options = StoreOptions()) {
  std::unique_ptr<Store> store;
  EXPECT_TRUE(Store::Open(options, path, &store).ok());
  CollectionMeta meta;
  EXPECT_TRUE(store->CreateCollection(Spec(), &meta).ok());
  for (uint32_t b = 0; b < batches; ++b) EXPECT_TRUE(CommitBatch(store.get(), meta, b).ok());
  return store;
}

uint32_t Restored(const std::string& dest, uint32_t id, const std::string& path) {
  RestoreResult restored;
  Status s = Store::RestoreBackup(StoreOptions(), dest, id, path, &restored);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return s.ok() ? WholeBatchesAt(path) : 0;
}

TEST(BackupTest, BackupDuringAppendsHoldsWholeCommittedBatchesOnly) {
  test::ScratchDir dir;
  StoreOptions options;
  options.vector_file_min_bytes = 2048;  // some batches through ingested files, some not
  std::unique_ptr<Store> store = StoreWith(dir.Join("db"), 2, options);
  CollectionMeta meta;
  ASSERT_TRUE(store->GetCollection("items", &meta).ok());
  std::atomic<uint32_t> committed{2};
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (uint32_t b = 2; !stop.load() && b < 4000; ++b) {
      ASSERT_TRUE(CommitBatch(store.get(), meta, b).ok());
      committed.store(b + 1);
    }
  });
  std::vector<std::pair<uint32_t, uint32_t>> bounds;  // batches committed before / after
  BackupOptions backup;
  backup.dest = dir.Join("backups");
  for (int i = 0; i < 3; ++i) {
    while (committed.load() < 10u * (i + 1)) std::this_thread::yield();
    const uint32_t before = committed.load();
    BackupResult result;
    Status s = store->Backup(backup, &result);
    ASSERT_TRUE(s.ok()) << s.ToString();
    bounds.emplace_back(before, committed.load());
    EXPECT_EQ(result.backup_id, static_cast<uint32_t>(i + 1));
    EXPECT_GT(result.commit_seq, 0u);
  }
  stop.store(true);
  writer.join();
  for (uint32_t i = 0; i < bounds.size(); ++i) {
    const uint32_t n = Restored(backup.dest, i + 1, dir.Join("r" + std::to_string(i)));
    EXPECT_GE(n, bounds[i].first) << "backup " << i + 1;
    EXPECT_LE(n, bounds[i].second) << "backup " << i + 1;
  }
  // The source is untouched and goes on.
  EXPECT_EQ(CommitBatch(store.get(), meta, committed.load()).ok(), true);
}

TEST(BackupTest, IncrementalNumberedPurgedAndRestoredById) {
  test::ScratchDir dir;
  std::unique_ptr<Store> store = StoreWith(dir.Join("db"), 40);
  CollectionMeta meta;
  ASSERT_TRUE(store->GetCollection("items", &meta).ok());
  BackupOptions backup;
  backup.dest = dir.Join("backups");
  backup.keep = 3;
  std::vector<BackupResult> results;
  for (uint32_t i = 0; i < 4; ++i) {
    if (i > 0) {
      ASSERT_TRUE(CommitBatch(store.get(), meta, 39 + i).ok());
    }
    BackupResult r;
    Status s = store->Backup(backup, &r);
    ASSERT_TRUE(s.ok()) << s.ToString();
    results.push_back(r);
  }
  for (const BackupResult& r : results) {
    // Flushed first and taken without the write-ahead logs, at the first attempt.
    EXPECT_FALSE(r.logs);
    EXPECT_EQ(r.attempts, 1u);
  }
  for (const auto& e : fs::recursive_directory_iterator(backup.dest)) {
    EXPECT_NE(e.path().extension(), ".log") << e.path();
  }
  EXPECT_EQ(results[0].files_reused, 0u);
  EXPECT_GT(results[0].bytes_copied, 0u);
  // The second backup shares the first's table files: it copies what changed only.
  EXPECT_GT(results[1].files_reused, 0u);
  EXPECT_LT(results[1].bytes_copied, results[0].bytes_copied / 2);
  EXPECT_TRUE(results[2].purged.empty());
  EXPECT_EQ(results[3].purged, std::vector<uint32_t>{1});
  BackupListing listing;
  ASSERT_TRUE(Store::ListBackups(backup.dest, &listing).ok());
  ASSERT_EQ(listing.backups.size(), 3u);
  EXPECT_EQ(listing.backups[0].id, 2u);
  EXPECT_EQ(listing.backups[2].id, 4u);
  EXPECT_EQ(listing.leftover_files, 0u);
  // Backup N holds 40 + N - 1 batches.
  EXPECT_EQ(Restored(backup.dest, 2, dir.Join("r2")), 41u);
  // Directories of killed restores into the path go first, unless their process lives.
  const std::string dead = dir.Join("latest.restore-20260101T000000Z-999999999");
  const std::string alive =
      dir.Join("latest.restore-20260101T000000Z-" + std::to_string(getppid()));
  fs::create_directories(dead + "/sub");
  fs::create_directories(alive);
  RestoreResult latest;
  ASSERT_TRUE(
      Store::RestoreBackup(StoreOptions(), backup.dest, 0, dir.Join("latest"), &latest).ok());
  EXPECT_EQ(latest.leftovers_removed, 1u);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(alive));
  EXPECT_EQ(WholeBatchesAt(dir.Join("latest")), 43u);
  RestoreResult restored;
  EXPECT_TRUE(
      Store::RestoreBackup(StoreOptions(), backup.dest, 1, dir.Join("r1"), &restored).IsNotFound());
  EXPECT_FALSE(fs::exists(dir.Join("r1")));
  // An existing store is never overwritten; an empty directory is taken.
  Status s = Store::RestoreBackup(StoreOptions(), backup.dest, 3, dir.Join("r2"), &restored);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(WholeBatchesAt(dir.Join("r2")), 41u);
  fs::create_directories(dir.Join("empty"));
  EXPECT_EQ(Restored(backup.dest, 3, dir.Join("empty")), 42u);
  // A destination inside the store is refused.
  BackupResult r;
  BackupOptions inside;
  inside.dest = dir.Join("db") + "/backups";
  EXPECT_TRUE(store->Backup(inside, &r).IsInvalidArgument());
}

// What vets each backup before it is kept: a store whose last batch has ids and attributes but
// no vectors (as a backup whose log holds a commit without the vector file it ingested) fails.
TEST(BackupTest, CheckStructureFindsABatchWithoutItsVectors) {
  test::ScratchDir dir;
  std::unique_ptr<Store> store = StoreWith(dir.Join("db"), 5);
  auto* rocks = dynamic_cast<RocksStore*>(store.get());
  ASSERT_NE(rocks, nullptr);
  std::vector<std::string> problems;
  ASSERT_TRUE(rocks->CheckStructure(&problems).ok());
  EXPECT_TRUE(problems.empty());
  CollectionMeta meta;
  ASSERT_TRUE(store->GetCollection("items", &meta).ok());
  rocksdb::WriteOptions wo;
  ASSERT_TRUE(rocks->db()
                  ->Delete(wo, rocks->vectors_family(),
                           format::ChunkKey(format::kVectorsTag, meta.id, 0, 4 * kBatchRows))
                  .ok());
  Status s = rocks->CheckStructure(&problems);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems[0].find("vectors chunks end at ordinal 200"), std::string::npos)
      << problems[0];
}

TEST(BackupTest, VerifyDetectsAFlippedByteAndRestoreRefusesIt) {
  test::ScratchDir dir;
  std::unique_ptr<Store> store = StoreWith(dir.Join("db"), 20);
  BackupOptions backup;
  backup.dest = dir.Join("backups");
  BackupResult r;
  ASSERT_TRUE(store->Backup(backup, &r).ok());
  BackupListing listing;
  ASSERT_TRUE(Store::VerifyBackup(backup.dest, 0, &listing).ok());
  ASSERT_EQ(listing.backups.size(), 1u);
  EXPECT_TRUE(listing.backups[0].problem.empty());
  // Flip one byte in the middle of the largest shared table file.
  std::string victim;
  uint64_t largest = 0;
  for (const auto& e : fs::directory_iterator(backup.dest + "/shared_checksum")) {
    if (e.file_size() > largest) largest = e.file_size(), victim = e.path().string();
  }
  ASSERT_FALSE(victim.empty());
  {
    std::fstream f(victim, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(largest / 2));
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x10);
    f.seekp(static_cast<std::streamoff>(largest / 2));
    f.write(&c, 1);
  }
  Status s = Store::VerifyBackup(backup.dest, 0, &listing);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  ASSERT_EQ(listing.backups.size(), 1u);
  EXPECT_FALSE(listing.backups[0].problem.empty());
  RestoreResult restored;
  s = Store::RestoreBackup(StoreOptions(), backup.dest, 0, dir.Join("r"), &restored);
  EXPECT_FALSE(s.ok());
  EXPECT_FALSE(fs::exists(dir.Join("r")));
  for (const auto& e : fs::directory_iterator(dir.path())) {
    EXPECT_EQ(e.path().filename().string().find("r.restore-"), std::string::npos)
        << "a failed restore left " << e.path();
  }
}

TEST(BackupTest, FullDiskDuringBackupLeavesNoBackupAndTheSourceIntact) {
  test::ScratchDir dir;
  auto fault_fs = std::make_shared<test::FaultFileSystem>();
  std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(fault_fs);
  StoreOptions options;
  options.env = env.get();
  std::unique_ptr<Store> store = StoreWith(dir.Join("db"), 30, options);
  ASSERT_TRUE(store->Flush().ok());
  BackupOptions backup;
  backup.dest = dir.Join("first");
  BackupResult r;
  const int64_t steps_before = fault_fs->steps();
  ASSERT_TRUE(store->Backup(backup, &r).ok());
  const int64_t steps = fault_fs->steps() - steps_before;
  ASSERT_GT(steps, 4);
  backup.dest = dir.Join("backups");
  // Well inside the measured count: a later backup into a folder that failed ones created
  // takes a few steps fewer (its folders exist), and RocksDB's own threads add a few of theirs.
  for (int64_t step : {int64_t{1}, steps / 3, steps / 2, steps * 2 / 3}) {
    fault_fs->Arm(test::Fault::kNoSpace, step, /*sticky=*/true);
    Status s = store->Backup(backup, &r);
    fault_fs->Disarm();
    EXPECT_FALSE(s.ok()) << "step " << step << " of " << steps;
    BackupListing listing;
    Status ls = Store::ListBackups(backup.dest, &listing);
    if (ls.ok()) {
      EXPECT_TRUE(listing.backups.empty()) << "step " << step;
    }
  }
  // The next backup succeeds and clears what the failed ones left.
  Status s = store->Backup(backup, &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  BackupListing listing;
  ASSERT_TRUE(Store::VerifyBackup(backup.dest, 0, &listing).ok());
  EXPECT_EQ(listing.backups.size(), 1u);
  EXPECT_EQ(listing.leftover_files, 0u);
  store.reset();
  EXPECT_EQ(WholeBatchesAt(dir.Join("db")), 30u);
  EXPECT_EQ(Restored(backup.dest, 0, dir.Join("r")), 30u);
}

// Run in a child process by the test below: commits batches forever (flushing now and then, so
// that write-ahead logs are retired while the parent backs up), appending the number of
// acknowledged batches to an ack file after each commit.
TEST(BackupChild, Writer) {
  const char* db = std::getenv("SIEVE_BACKUP_DB");
  const char* acks = std::getenv("SIEVE_BACKUP_ACKS");
  if (db == nullptr || acks == nullptr) {
    GTEST_SKIP() << "only run by BackupTest.BackupOfAStoreAnotherProcessHoldsOpenForWriting";
  }
  StoreOptions options;
  options.vector_file_min_bytes = 2048;
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(options, db, &store).ok());
  CollectionMeta meta;
  ASSERT_TRUE(store->GetCollection("items", &meta).ok());
  ShardState state;
  ASSERT_TRUE(store->ReadShardState(meta, 0, &state).ok());
  const int fd = ::open(acks, O_WRONLY | O_APPEND);
  ASSERT_GE(fd, 0);
  for (uint32_t b = state.next_ordinal / kBatchRows;; ++b) {
    ASSERT_TRUE(CommitBatch(store.get(), meta, b).ok());
    if (b % 7 == 0) {
      ASSERT_TRUE(store->Flush().ok());
    }
    const std::string line = std::to_string(b + 1) + "\n";
    ASSERT_EQ(::write(fd, line.data(), line.size()), static_cast<ssize_t>(line.size()));
  }
}

uint32_t Acked(const std::string& acks) {
  uint32_t acked = 0;
  std::ifstream in(acks);
  for (std::string line; std::getline(in, line);) acked = std::stoul(line);
  return acked;
}

TEST(BackupTest, BackupOfAStoreAnotherProcessHoldsOpenForWriting) {
  test::ScratchDir dir;
  const std::string db = dir.Join("db");
  const std::string acks = dir.Join("acks");
  StoreWith(db, 3).reset();
  { std::ofstream(acks).flush(); }
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setenv("SIEVE_BACKUP_DB", db.c_str(), 1);
    setenv("SIEVE_BACKUP_ACKS", acks.c_str(), 1);
    const int devnull = ::open("/dev/null", O_WRONLY);
    if (devnull >= 0) {
      dup2(devnull, STDOUT_FILENO);
      dup2(devnull, STDERR_FILENO);
    }
    execl("/proc/self/exe", "storage_tests", "--gtest_filter=BackupChild.Writer",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  struct Reaper {
    pid_t pid;
    ~Reaper() {
      kill(pid, SIGKILL);
      int status = 0;
      waitpid(pid, &status, 0);
    }
  } reaper{pid};
  for (int i = 0; i < 3000 && Acked(acks) < 10; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(Acked(acks), 10u) << "the writer did not start";

  BackupOptions backup;
  backup.dest = dir.Join("backups");
  BackupResult r;
  // Without a directory for a secondary instance, the held store is refused.
  Status s = Store::BackupClosed(StoreOptions(), db, backup, &r);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  backup.secondary_dir = dir.Join("secondary");
  backup.max_attempts = 20;
  std::vector<std::pair<uint32_t, uint32_t>> bounds;
  std::vector<uint32_t> ids;  // an attempt discarded takes an id too
  std::vector<bool> logs;
  for (int i = 0; i < 3; ++i) {
    const uint32_t before = Acked(acks);
    s = Store::BackupClosed(StoreOptions(), db, backup, &r);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ids.push_back(r.backup_id);
    logs.push_back(r.logs);
    // With the logs, everything acknowledged before the call; without, the writer's state at
    // its last flush (every 7 batches) before the call, at the latest.
    bounds.emplace_back(r.logs ? before : (before > 7 ? before - 7 : 0),
                        Acked(acks) + 1);  // + the one in flight
    std::printf("backup %u: %u attempt(s), %s\n", r.backup_id, r.attempts,
                r.logs ? "with the logs" : "tables only");
    EXPECT_TRUE(r.secondary);
    EXPECT_GE(r.attempts, 1u);
  }
  EXPECT_GT(Acked(acks), bounds[0].first) << "the writer stopped during the backups";
  // Nothing of the backup's was written into the store's directory.
  for (const auto& e : fs::directory_iterator(db)) {
    const std::string name = e.path().filename().string();
    EXPECT_EQ(name.find("secondary"), std::string::npos) << name;
  }
  for (uint32_t i = 0; i < bounds.size(); ++i) {
    const uint32_t n = Restored(backup.dest, ids[i], dir.Join("r" + std::to_string(i)));
    EXPECT_GE(n, bounds[i].first) << "backup " << ids[i];
    EXPECT_LE(n, bounds[i].second) << "backup " << ids[i];
  }
}

// Run in a child process by the test below: backs the store up into a directory forever,
// appending the number of completed backups to an ack file after each.
TEST(BackupChild, BackerUp) {
  const char* db = std::getenv("SIEVE_BACKUP_DB");
  const char* dest = std::getenv("SIEVE_BACKUP_DEST");
  const char* acks = std::getenv("SIEVE_BACKUP_ACKS");
  if (db == nullptr || dest == nullptr || acks == nullptr) {
    GTEST_SKIP() << "only run by BackupTest.KillNineDuringBackups";
  }
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(StoreOptions(), db, &store).ok());
  BackupOptions backup;
  backup.dest = dest;
  backup.keep = 2;
  const int fd = ::open(acks, O_WRONLY | O_APPEND);
  ASSERT_GE(fd, 0);
  for (uint32_t n = 1;; ++n) {
    BackupResult r;
    ASSERT_TRUE(store->Backup(backup, &r).ok());
    const std::string line = std::to_string(n) + "\n";
    ASSERT_EQ(::write(fd, line.data(), line.size()), static_cast<ssize_t>(line.size()));
  }
}

TEST(BackupTest, KillNineDuringBackupsLeavesOnlyCompleteBackups) {
  test::ScratchDir dir;
  const std::string db = dir.Join("db");
  const std::string dest = dir.Join("backups");
  const std::string acks = dir.Join("acks");
  StoreWith(db, 200).reset();
  { std::ofstream(acks).flush(); }
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setenv("SIEVE_BACKUP_DB", db.c_str(), 1);
    setenv("SIEVE_BACKUP_DEST", dest.c_str(), 1);
    setenv("SIEVE_BACKUP_ACKS", acks.c_str(), 1);
    const int devnull = ::open("/dev/null", O_WRONLY);
    if (devnull >= 0) {
      dup2(devnull, STDOUT_FILENO);
      dup2(devnull, STDERR_FILENO);
    }
    execl("/proc/self/exe", "storage_tests", "--gtest_filter=BackupChild.BackerUp",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  for (int i = 0; i < 3000 && Acked(acks) < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // Mid-backup, most likely: each takes a few milliseconds.
  std::this_thread::sleep_for(std::chrono::milliseconds(3));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the child exited by itself: status " << status;
  ASSERT_GE(Acked(acks), 3u);
  // Every backup listed is complete: it verifies and restores whole.
  BackupListing listing;
  Status s = Store::VerifyBackup(dest, 0, &listing);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_FALSE(listing.backups.empty());
  EXPECT_GE(listing.backups.back().id, Acked(acks));
  EXPECT_EQ(Restored(dest, 0, dir.Join("r")), 200u);
  // The source opens and checks clean; the next backup removes whatever the kill left.
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(StoreOptions(), db, &store).ok());
  BackupOptions backup;
  backup.dest = dest;
  BackupResult r;
  ASSERT_TRUE(store->Backup(backup, &r).ok());
  ASSERT_TRUE(Store::ListBackups(dest, &listing).ok());
  EXPECT_EQ(listing.leftover_files, 0u);
  store.reset();
  EXPECT_EQ(WholeBatchesAt(db), 200u);
}

}  // namespace
}  // namespace sieve
