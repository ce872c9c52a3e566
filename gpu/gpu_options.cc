// Copyright 2026 The Sieve Authors.

#include "sieve/gpu_options.h"

#include <cstdio>
#include <string>

namespace sieve {

Status GpuExecutorOptions::Validate() const {
  if (device < 0) {
    return Status::InvalidArgument("GPU options: device " + std::to_string(device) +
                                   " is negative");
  }
  if (resident_slab_bytes == 0) {
    return Status::InvalidArgument("GPU options: resident_slab_bytes is 0");
  }
  if (!(candidate_sample_factor >= 0.25 && candidate_sample_factor <= 16.0)) {
    return Status::InvalidArgument("GPU options: candidate_sample_factor " +
                                   std::to_string(candidate_sample_factor) +
                                   " is outside [0.25, 16]");
  }
  if (threshold_max_levels < 2 || threshold_max_levels > 6) {
    return Status::InvalidArgument("GPU options: threshold_max_levels " +
                                   std::to_string(threshold_max_levels) + " is outside [2, 6]");
  }
  if (list_upload_groups > kMaxListUploadGroups) {
    return Status::InvalidArgument("GPU options: list_upload_groups " +
                                   std::to_string(list_upload_groups) + " is outside [0, " +
                                   std::to_string(kMaxListUploadGroups) + "]");
  }
  if (filter_pack_threads > kMaxFilterPackThreads) {
    return Status::InvalidArgument("GPU options: filter_pack_threads " +
                                   std::to_string(filter_pack_threads) + " is outside [0, " +
                                   std::to_string(kMaxFilterPackThreads) + "]");
  }
  return Status::OK();
}

std::string GpuExecutorOptions::Changed() const {
  const GpuExecutorOptions d;
  std::string s;
  auto add = [&](const char* name, const std::string& value) {
    s += (s.empty() ? "" : " ") + std::string(name) + "=" + value;
  };
  auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  if (device != d.device) add("device", std::to_string(device));
  if (resident_slab_bytes != d.resident_slab_bytes) {
    add("resident_slab_bytes", std::to_string(resident_slab_bytes));
  }
  if (candidate_selection != d.candidate_selection) {
    add("candidate_selection", flag(candidate_selection));
  }
  if (candidate_sample_factor != d.candidate_sample_factor) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%g", candidate_sample_factor);
    add("candidate_sample_factor", buf);
  }
  if (candidate_tile_bytes != d.candidate_tile_bytes) {
    add("candidate_tile_bytes", std::to_string(candidate_tile_bytes));
  }
  if (candidate_tf32 != d.candidate_tf32) add("candidate_tf32", flag(candidate_tf32));
  if (candidate_int8 != d.candidate_int8) add("candidate_int8", flag(candidate_int8));
  if (threshold_select != d.threshold_select) add("threshold_select", flag(threshold_select));
  if (threshold_gather_min_rows != d.threshold_gather_min_rows) {
    add("threshold_gather_min_rows", std::to_string(threshold_gather_min_rows));
  }
  if (threshold_max_levels != d.threshold_max_levels) {
    add("threshold_max_levels", std::to_string(threshold_max_levels));
  }
  if (tma_page_copies != d.tma_page_copies) add("tma_page_copies", flag(tma_page_copies));
  if (list_upload_groups != d.list_upload_groups) {
    add("list_upload_groups", std::to_string(list_upload_groups));
  }
  if (filter_pack_threads != d.filter_pack_threads) {
    add("filter_pack_threads", std::to_string(filter_pack_threads));
  }
  return s;
}

}  // namespace sieve
