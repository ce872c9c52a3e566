// Copyright 2026 The Sieve Authors.
//
// The GPU entry points of a build without the CUDA backend: every request for the GPU answers
// Unavailable, saying why, and neither GpuExecutor nor PagePool can ever be created (their
// other members exist only so that code naming them links).

#include <memory>
#include <utility>
#include <string>
#include <vector>

#include "gpu/gpu_backend.h"
#include "gpu/gpu_executor.h"
#include "gpu/page_pool.h"
#include "gpu/threshold_select/threshold_select.h"

#ifndef SIEVE_GPU_UNAVAILABLE_REASON
#define SIEVE_GPU_UNAVAILABLE_REASON "this build of Sieve has no CUDA backend"
#endif

namespace sieve::gpu {

Status CreateGpuExecutor(const GpuExecutorOptions&, std::unique_ptr<Executor>* executor) {
  executor->reset();
  return Status::Unavailable(SIEVE_GPU_UNAVAILABLE_REASON);
}

struct GpuExecutor::State {};

Status GpuExecutor::Create(const GpuExecutorOptions&, std::unique_ptr<GpuExecutor>* out) {
  out->reset();
  return Status::Unavailable(SIEVE_GPU_UNAVAILABLE_REASON);
}

GpuExecutor::GpuExecutor(std::unique_ptr<State> state) : state_(std::move(state)) {}
GpuExecutor::~GpuExecutor() = default;
std::string GpuExecutor::name() const { return "gpu:unavailable"; }
TopKAbilities GpuExecutor::topk_abilities() const { return {}; }
Status GpuExecutor::Search(const ShardView&, const BatchFilters&, const ExecRequest&,
                           ExecResult*) {
  return Status::Unavailable(SIEVE_GPU_UNAVAILABLE_REASON);
}
GpuPathCounts GpuExecutor::path_counts() const { return {}; }
uint64_t GpuExecutor::resident_bytes() const { return 0; }
uint64_t GpuExecutor::uploaded_rows() const { return 0; }
void GpuExecutor::ClearCache() {}
Status GpuExecutor::Profile(const ShardView&, const BatchFilters&, const ExecRequest&,
                            const ProfileOptions&, ExecProfile*) {
  return Status::Unavailable(SIEVE_GPU_UNAVAILABLE_REASON);
}

struct PagePool::Rep {};

Status PagePool::Create(KeyType /*type*/, uint32_t /*dim*/, size_t /*slab_bytes*/,
                        std::unique_ptr<PagePool>* out) {
  out->reset();
  return Status::Unavailable(SIEVE_GPU_UNAVAILABLE_REASON);
}
PagePool::PagePool(std::unique_ptr<Rep> rep) : rep_(std::move(rep)) {}
PagePool::~PagePool() = default;
Status PagePool::Allocate(uint32_t, std::vector<int32_t>*) {
  return Status::Unavailable(SIEVE_GPU_UNAVAILABLE_REASON);
}
void PagePool::Release(const std::vector<int32_t>&) {}
Status PagePool::Write(const std::vector<int32_t>&, uint64_t, const float*, uint64_t, void*) {
  return Status::Unavailable(SIEVE_GPU_UNAVAILABLE_REASON);
}
PagedKeys PagePool::view() const { return {}; }
KeyType PagePool::type() const { return KeyType::kFloat16; }
uint32_t PagePool::dim() const { return 0; }
uint32_t PagePool::pages_per_slab() const { return 0; }
uint64_t PagePool::allocated_pages() const { return 0; }
uint64_t PagePool::capacity_pages() const { return 0; }
size_t PagePool::device_bytes() const { return 0; }

Status ThresholdSelect(const ThresholdSelectArgs&, void*) {
  return Status::Unavailable(SIEVE_GPU_UNAVAILABLE_REASON);
}
const char* ThresholdSelectKernelName(const PagedKeys&) { return "none"; }
bool ThresholdSelectHasTma() { return false; }
Status EncodePageMap(KeyType, uint32_t, const void*, uint64_t, void*) {
  return Status::Unavailable(SIEVE_GPU_UNAVAILABLE_REASON);
}
Status TopKFromCandidates(const int32_t*, const int32_t*, const int32_t*, const float*, uint32_t,
                          uint32_t, uint32_t, uint32_t, int32_t*, float*, void*) {
  return Status::Unavailable(SIEVE_GPU_UNAVAILABLE_REASON);
}
Status ThresholdsFromTopK(const float*, uint32_t, uint32_t, const float*, float*, int32_t*,
                          void*) {
  return Status::Unavailable(SIEVE_GPU_UNAVAILABLE_REASON);
}

}  // namespace sieve::gpu
