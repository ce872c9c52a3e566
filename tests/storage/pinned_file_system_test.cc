// Copyright 2026 The Sieve Authors.

#include "storage/pinned_file_system.h"

#include <rocksdb/env.h>

#include <fstream>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "tests/testutil.h"

namespace sieve {
namespace {

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// A pinned file reads as it was when pinned after its name is deleted (as a writer's compaction
// deletes a table file): by random access, front to back, and its size; other names go to
// the file system below.
TEST(PinnedFileSystemTest, APinnedFileOutlivesItsName) {
  test::ScratchDir dir;
  const std::string path = dir.Join("000012.sst");
  const std::string text = "the bytes of one version";
  WriteText(path, text);
  auto fs = std::make_shared<PinnedFileSystem>(rocksdb::FileSystem::Default());
  ASSERT_TRUE(fs->Pin(dir.path() + "//000012.sst").ok());  // spelled as RocksDB may spell it
  ASSERT_TRUE(fs->Pin(path).ok());
  EXPECT_EQ(fs->pinned(), 1u);
  ASSERT_EQ(std::remove(path.c_str()), 0);

  std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(fs);
  EXPECT_TRUE(env->FileExists(path).ok());
  uint64_t size = 0;
  ASSERT_TRUE(env->GetFileSize(path, &size).ok());
  EXPECT_EQ(size, text.size());

  std::unique_ptr<rocksdb::RandomAccessFile> random;
  ASSERT_TRUE(env->NewRandomAccessFile(path, &random, rocksdb::EnvOptions()).ok());
  std::string scratch(64, '\0');
  rocksdb::Slice got;
  ASSERT_TRUE(random->Read(4, 5, &got, scratch.data()).ok());
  EXPECT_EQ(got.ToString(), "bytes");

  std::unique_ptr<rocksdb::SequentialFile> sequential;
  ASSERT_TRUE(env->NewSequentialFile(path, &sequential, rocksdb::EnvOptions()).ok());
  std::string all;
  while (true) {
    ASSERT_TRUE(sequential->Read(7, &got, scratch.data()).ok());
    if (got.empty()) break;
    all += got.ToString();
  }
  EXPECT_EQ(all, text);

  // A name never pinned is the file system's: gone is gone.
  const std::string other = dir.Join("000013.sst");
  WriteText(other, "x");
  ASSERT_EQ(std::remove(other.c_str()), 0);
  EXPECT_TRUE(env->FileExists(other).IsNotFound());
  EXPECT_FALSE(env->NewRandomAccessFile(other, &random, rocksdb::EnvOptions()).ok());
  // Pinning a name that is gone fails, so an open can tell its version lost a file.
  EXPECT_FALSE(fs->Pin(other).ok());
  EXPECT_EQ(fs->pinned(), 1u);
}

}  // namespace
}  // namespace sieve
