// Copyright 2026 The Sieve Authors.
//
// IngestOptions::validate_only: an ingest or upsert that checks its batch as the real call
// would, refuses what it would refuse, and writes nothing either way.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sieve/db.h"
#include "tests/testutil.h"

namespace sieve {
namespace {

constexpr uint32_t kDim = 4;

class ValidateOnlyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(DB::Open(Options(), dir_.Join("db"), &db_).ok());
    CollectionSpec spec;
    spec.name = "c";
    spec.dim = kDim;
    spec.shards = 3;
    spec.attributes = {{"cat", AttrType::kInt}};
    ASSERT_TRUE(db_->CreateCollection(spec).ok());
    ASSERT_TRUE(Write({0, 1, 2, 3}, false, false).ok());
  }

  Status Write(std::vector<int64_t> ids, bool upsert, bool validate_only,
               std::vector<std::vector<Value>> attrs = {}) {
    const std::vector<float> v = test::RandomVectors(ids.size(), kDim, ids.size() + 7);
    if (attrs.empty()) attrs.assign(ids.size(), {Value(int64_t{1})});
    RowBatch b;
    b.num_rows = ids.size();
    b.dim = kDim;
    b.vectors = v.data();
    b.ids = ids.data();
    b.attributes = attrs.data();
    IngestOptions o;
    o.validate_only = validate_only;
    last_ = IngestResult();
    return upsert ? db_->Upsert("c", b, o, &last_) : db_->Ingest("c", b, o, &last_);
  }

  uint64_t TotalRows() {
    CollectionStats st;
    EXPECT_TRUE(db_->GetStats("c", &st).ok());
    return st.total_rows;
  }

  test::ScratchDir dir_;
  std::unique_ptr<DB> db_;
  IngestResult last_;
};

TEST_F(ValidateOnlyTest, RefusesWhatTheWriteWouldRefuse) {
  Status s = Write({7, 2}, false, true);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("row 1: id 2 already exists"), std::string::npos) << s.ToString();
  s = Write({7, 8, 7}, false, true);
  EXPECT_NE(s.message().find("row 2: id 7 repeats row 0"), std::string::npos) << s.ToString();
  s = Write({7, 8}, false, true, {{Value(int64_t{1})}, {Value(std::string("x"))}});
  EXPECT_NE(s.message().find("row 1, attribute 'cat'"), std::string::npos) << s.ToString();
  EXPECT_EQ(TotalRows(), 4u);
}

TEST_F(ValidateOnlyTest, AcceptsAndWritesNothing) {
  ASSERT_TRUE(Write({7, 8, 9}, false, true).ok());
  EXPECT_EQ(last_.ingested, 0u);
  EXPECT_EQ(last_.live_rows, 4u);
  ASSERT_TRUE(Write({2, 8}, true, true).ok());  // an upsert may name live ids
  EXPECT_EQ(last_.replaced, 0u);
  EXPECT_EQ(TotalRows(), 4u);
  uint64_t n = 0;
  ASSERT_TRUE(db_->Count("c", "id >= 7", &n).ok());
  EXPECT_EQ(n, 0u);
  // The same batches then write as checked.
  ASSERT_TRUE(Write({7, 8, 9}, false, false).ok());
  EXPECT_EQ(last_.ingested, 3u);
  ASSERT_TRUE(Write({2, 8}, true, false).ok());
  EXPECT_EQ(last_.replaced, 2u);
  EXPECT_EQ(TotalRows(), 9u);
}

}  // namespace
}  // namespace sieve
