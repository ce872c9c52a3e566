// Copyright 2026 The Sieve Authors.
//
// GpuExecutorOptions (include/sieve/gpu_options.h): the ranges Validate() holds the fields to
// and the "name=value" list Changed() gives benchmarks. Runs without a GPU.

#include <gtest/gtest.h>

#include <string>

#include "sieve/gpu_options.h"

namespace sieve {
namespace {

TEST(GpuOptionsTest, ValidateHoldsTheRangesAndChangedListsTheOthers) {
  EXPECT_TRUE(GpuExecutorOptions().Validate().ok());
  EXPECT_EQ(GpuExecutorOptions().Changed(), "");
  GpuExecutorOptions o;
  o.candidate_sample_factor = 0.1;
  EXPECT_TRUE(o.Validate().IsInvalidArgument());
  o = GpuExecutorOptions();
  o.threshold_max_levels = 7;
  EXPECT_TRUE(o.Validate().IsInvalidArgument());
  o = GpuExecutorOptions();
  o.resident_slab_bytes = 0;
  EXPECT_TRUE(o.Validate().IsInvalidArgument());
  o = GpuExecutorOptions();
  o.list_upload_groups = GpuExecutorOptions::kMaxListUploadGroups + 1;
  EXPECT_TRUE(o.Validate().IsInvalidArgument());
  EXPECT_NE(o.Validate().message().find("list_upload_groups"), std::string::npos);
  o.list_upload_groups = GpuExecutorOptions::kMaxListUploadGroups;
  EXPECT_TRUE(o.Validate().ok());
  o.filter_pack_threads = 257;
  EXPECT_TRUE(o.Validate().IsInvalidArgument());
  o.filter_pack_threads = 256;
  EXPECT_TRUE(o.Validate().ok());
  o = GpuExecutorOptions();
  o.threshold_select = false;
  o.resident_slab_bytes = 65536;
  o.list_upload_groups = 1;
  EXPECT_EQ(o.Changed(), "resident_slab_bytes=65536 threshold_select=false list_upload_groups=1");
}

}  // namespace
}  // namespace sieve
