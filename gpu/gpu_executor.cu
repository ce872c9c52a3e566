// Copyright 2026 The Sieve Authors.
//
// GpuExecutor: validates a request, prepares its host side once (filters as pinned bitsets or id
// lists, queries and their float16 halves), runs its device part (device_run.cuh) with a rerun
// on the full path when a candidate list overflowed, and checks and assembles the results.
// Profile runs the same device part several times, timed by CUDA events.

#include "gpu/gpu_executor.h"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gpu/cuda_status.cuh"
#include "gpu/device_run.cuh"
#include "gpu/device_shard.cuh"
#include "gpu/filter_pack.h"
#include "gpu/gpu_backend.h"
#include "gpu/kernel_probe.cuh"
#include "gpu/memory.cuh"
#include "gpu/raft_select_k.cuh"
#include "gpu/page_pool.h"
#include "gpu/stage_timer.cuh"
#include "gpu/threshold_select/threshold_select.h"
#include "query/topk.h"
#include "query/topk_plan.h"

namespace sieve::gpu {
namespace {

// RAFT select_k workspace pool limit.
constexpr size_t kSelectWorkspaceBytes = size_t{2} << 30;

size_t WordsFor(uint32_t rows) { return (static_cast<size_t>(rows) + 31) / 32; }

size_t AlignUp(size_t x) { return (x + 255) & ~size_t{255}; }

// Threads that write a filter per query's packed sets (GpuExecutorOptions::
// filter_pack_threads): one below 8 MiB, where starting threads would cost more than it saves.
uint32_t PackThreads(const GpuExecutorOptions& o, size_t bytes) {
  constexpr size_t kMinBytes = size_t{8} << 20;
  if (bytes < kMinBytes) return 1;
  uint32_t n = o.filter_pack_threads;
  if (n == 0) n = std::clamp<uint32_t>(std::thread::hardware_concurrency(), 1, 8);
  return static_cast<uint32_t>(std::min<size_t>(n, bytes / (kMinBytes / 2)));
}

double MsBetween(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// OK when `t` names a strategy this executor has; InvalidArgument otherwise (a request that
// was not planned for it).
Status CheckPlanned(const TopKPlan& t) {
  if (t.strategy == TopKStrategy::kSelectK || t.strategy == TopKStrategy::kCandidates ||
      t.strategy == TopKStrategy::kThreshold) {
    return Status::OK();
  }
  return Status::InvalidArgument(
      std::string("the GPU executor carries out select_k, candidates or threshold top-k plans; "
                  "the request's is '") +
      TopKStrategyName(t.strategy) + "' (query/topk_plan.h PlanTopK; PlanRequest plans a request)");
}

// OK when the executor can carry out `t` for a search of path `path` over float16 or float32
// rows of `dim` whose top-k of k selects among `columns` columns (`per_query`: a filter per
// query whose sets differ); InvalidArgument naming what it cannot do otherwise.
Status ValidatePlan(const TopKPlan& t, SearchPath path, DType dtype, uint32_t dim, uint32_t k,
                    uint64_t columns, bool per_query) {
  auto refuse = [&](const std::string& why) {
    return Status::InvalidArgument("GPU top-k plan '" + t.ToString() + "': " + why);
  };
  const bool half = dtype == DType::kFloat16;
  SIEVE_RETURN_IF_ERROR(CheckPlanned(t));
  if (t.strategy == TopKStrategy::kSelectK) {
    if (t.products != Products::kFloat32) return refuse("select_k multiplies in float32");
    return Status::OK();
  }
  if (path == SearchPath::kSddmm) return refuse("the SDDMM path selects with select_k");
  if (columns > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
    return refuse("more than 2^31 - 1 columns");
  }
  if (t.strategy == TopKStrategy::kCandidates) {
    if (t.products == Products::kFloat16 && !half) return refuse("float16 products need float16 rows");
    if (t.products == Products::kTf32 && half) return refuse("tf32 products need float32 rows");
    if (t.products == Products::kInt8 && path != SearchPath::kDense) {
      return refuse("int8 products are the resident rows' codes: the dense path only");
    }
    if (t.sample == 0 || t.sample > columns || t.cap == 0 || t.cap > columns ||
        t.tile_bytes == 0) {
      return refuse("its sample, list or tile does not fit " + std::to_string(columns) +
                    " columns");
    }
    return Status::OK();
  }
  if (t.products != Products::kFloat32) return refuse("the threshold select sums in float32");
  if (!half || !ThresholdSelectUsesTensorCores(KeyType::kFloat16, dim) || k > kThresholdMaxK) {
    return refuse("the threshold select takes float16 rows of a dim that is a multiple of " +
                  std::to_string(kTensorCoreDimMultiple) + " up to " +
                  std::to_string(kTensorCoreMaxDim) + " and k up to " +
                  std::to_string(kThresholdMaxK));
  }
  if (path == SearchPath::kGather && per_query) {
    return refuse("the threshold select reads a gathered block unfiltered: one filter only");
  }
  const auto& ends = t.level_ends;
  bool ok = ends.size() >= 2 && t.level_caps.size() == ends.size() && ends.back() == columns;
  for (size_t i = 0; ok && i < ends.size(); ++i) {
    ok = (i == 0 || ends[i] > ends[i - 1]) && (i + 1 == ends.size() || ends[i] % kPageRows == 0) &&
         t.level_caps[i] >= 1 && t.level_caps[i] <= ends[i];
  }
  if (!ok) return refuse("its levels do not end at the " + std::to_string(columns) + " columns");
  return Status::OK();
}

}  // namespace

using detail::DeviceRun;
using detail::DeviceShard;
using detail::FromCuda;
using detail::kInvalidId;
using detail::NeedsCompaction;
using detail::PathName;
using detail::Prepared;

struct GpuExecutor::State {
  int device = 0;
  std::string name;
  GpuExecutorOptions options;
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  std::unique_ptr<detail::RaftSelectK> select;
  cudaEvent_t ev_start = nullptr;
  cudaEvent_t ev_stop = nullptr;
  // The upload lane (DeviceRun's UploadLane): a filter per query's lists a row range at a time.
  cudaStream_t copy_stream = nullptr;
  std::vector<cudaEvent_t> copy_events;

  mutable std::mutex mu;
  std::unique_ptr<detail::ResidentShards> resident;
  GpuPathCounts counts;
  detail::StageTimer stages;

  detail::PinnedBuffer pinned_filter;   // bitset or bitmap words (+ union bitset)
  detail::PinnedBuffer pinned_queries;  // float32 queries, split half queries, norms, starts
  detail::PinnedBuffer pinned_results;  // values and ids

  ~State() {
    resident.reset();
    select.reset();
    if (cublas != nullptr) (void)cublasDestroy(cublas);
    if (ev_start != nullptr) (void)cudaEventDestroy(ev_start);
    if (ev_stop != nullptr) (void)cudaEventDestroy(ev_stop);
    for (cudaEvent_t e : copy_events) (void)cudaEventDestroy(e);
    if (copy_stream != nullptr) (void)cudaStreamDestroy(copy_stream);
    if (stream != nullptr) (void)cudaStreamDestroy(stream);
  }
};

// One search as its device part sees it: prepared once, run once by Search, several times by
// Profile.
struct GpuExecutor::Batch {
  Prepared p;
  // Gather over a bitmap: the union of the sets (the caller's, or own_union built here), for
  // its size.
  const RowSet* union_set = nullptr;
  std::unique_ptr<RowSet> own_union;
  uint32_t* h_filter = nullptr;       // pinned: filter words or passing ids
  char* h_queries = nullptr;          // pinned: queries, halves, norms, list starts
  float* h_vals = nullptr;            // pinned results: nq × k values, ids, candidate counts
  uint32_t* h_ids = nullptr;
  uint32_t* h_counts = nullptr;
  // What the last run did.
  bool used_threshold = false;
  TopKStrategy ran_strategy = TopKStrategy::kSelectK;
  Products ran_products = Products::kFloat32;
  std::string select_plan;
};

GpuExecutor::GpuExecutor(std::unique_ptr<State> state) : state_(std::move(state)) {}
GpuExecutor::~GpuExecutor() = default;

Status GpuExecutor::Create(const GpuExecutorOptions& options, std::unique_ptr<GpuExecutor>* out) {
  out->reset();
  SIEVE_RETURN_IF_ERROR(options.Validate());
  const int device = options.device;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return Status::Unavailable(std::string("no usable CUDA device: cudaGetDeviceCount failed: ") +
                               cudaGetErrorString(err));
  }
  if (count == 0) return Status::Unavailable("no CUDA device is present");
  if (device < 0 || device >= count) {
    return Status::Unavailable("CUDA device " + std::to_string(device) + " does not exist (" +
                               std::to_string(count) + " present)");
  }
  auto state = std::make_unique<State>();
  state->device = device;
  state->options = options;
  cudaDeviceProp prop{};
  err = cudaGetDeviceProperties(&prop, device);
  if (err != cudaSuccess) {
    return Status::Unavailable(std::string("cannot query CUDA device: ") + cudaGetErrorString(err));
  }
  state->name = std::string("gpu:") + prop.name;
  err = cudaSetDevice(device);
  if (err != cudaSuccess) {
    return Status::Unavailable(std::string("cannot use CUDA device: ") + cudaGetErrorString(err));
  }
  // The kernels are built for one architecture (sm_90 by default): prove they load here.
  err = detail::ProbeKernels();
  if (err != cudaSuccess) {
    return Status::Unavailable(std::string("CUDA device ") + prop.name + " (sm_" +
                               std::to_string(prop.major) + std::to_string(prop.minor) +
                               ") cannot run this build's kernels: " + cudaGetErrorString(err));
  }
  // The radix-select kernels keep a row's keys in as much shared memory as a block may have.
  err = detail::EnableKeyCaches(detail::KeyCacheKeys());
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return Status::Unavailable(std::string("CUDA device ") + prop.name +
                               ": cannot raise the shared memory of the select kernels: " +
                               cudaGetErrorString(err));
  }
  // Keep freed stream-ordered memory in the pool: searches allocate their workspaces per call.
  cudaMemPool_t pool;
  SIEVE_CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool, device));
  uint64_t threshold = std::numeric_limits<uint64_t>::max();
  SIEVE_CUDA_TRY(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));

  SIEVE_CUDA_TRY(cudaStreamCreateWithFlags(&state->stream, cudaStreamNonBlocking));
  SIEVE_CUDA_TRY(cudaEventCreate(&state->ev_start));
  SIEVE_CUDA_TRY(cudaEventCreate(&state->ev_stop));
  SIEVE_CUDA_TRY(cudaStreamCreateWithFlags(&state->copy_stream, cudaStreamNonBlocking));
  const uint32_t most_groups = std::max(detail::kListGroupsAuto, options.list_upload_groups);
  for (uint32_t i = 0; i <= most_groups; ++i) {
    cudaEvent_t e = nullptr;
    SIEVE_CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    state->copy_events.push_back(e);
  }
  SIEVE_CUBLAS_TRY(cublasCreate(&state->cublas));
  SIEVE_CUBLAS_TRY(cublasSetStream(state->cublas, state->stream));
  // Products rounded to float16 (the candidate scan's) are summed in float32 even when cuBLAS
  // splits the inner dimension: their error bound counts one rounding.
  SIEVE_CUBLAS_TRY(cublasSetMathMode(
      state->cublas, static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH |
                                               CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
  SIEVE_RETURN_IF_ERROR(
      detail::RaftSelectK::Create(state->stream, kSelectWorkspaceBytes, &state->select));
  state->resident = std::make_unique<detail::ResidentShards>(
      state->stream, options.resident_slab_bytes, options.tma_page_copies,
      options.candidate_int8);
  out->reset(new GpuExecutor(std::move(state)));
  return Status::OK();
}

std::string GpuExecutor::name() const { return state_->name; }

TopKAbilities GpuExecutor::topk_abilities() const {
  TopKAbilities a;
  a.gpu = true;
  a.options = state_->options;
  a.max_query_chunk = detail::kMaxQueryChunk;
  a.threshold_max_dim = kTensorCoreMaxDim;
  a.threshold_dim_multiple = kTensorCoreDimMultiple;
  a.page_rows = kPageRows;
  // cuBLAS's int8 GEMM (CUBLAS_COMPUTE_32I) runs on the tensor cores of compute capability 7.5
  // and later; this build's kernels load only on such devices (ProbeKernels).
  a.int8_products = true;
  return a;
}

GpuPathCounts GpuExecutor::path_counts() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->counts;
}

uint64_t GpuExecutor::resident_bytes() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->resident->device_bytes();
}

uint64_t GpuExecutor::uploaded_rows() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->resident->uploaded_rows();
}

void GpuExecutor::ClearCache() {
  std::lock_guard<std::mutex> lock(state_->mu);
  (void)cudaStreamSynchronize(state_->stream);
  state_->resident->Clear();
}

Status GpuExecutor::Prepare(const ShardView& shard, const BatchFilters& filters,
                            const ExecRequest& request, Batch* b) {
  State& s = *state_;
  const uint32_t nq = request.num_queries;
  DeviceShard* dev = nullptr;
  SIEVE_RETURN_IF_ERROR(s.resident->EnsureResident(shard, &dev));
  switch (request.path) {
    case SearchPath::kSddmm: ++s.counts.sddmm; break;
    case SearchPath::kGather: ++s.counts.gather; break;
    default: ++s.counts.dense; break;
  }
  if (nq == 0) return Status::OK();
  Prepared& p = b->p;
  p.nq = nq;
  p.dim = shard.dim;
  p.k = request.k;
  p.metric = static_cast<int>(request.metric);
  p.select_min = request.metric != Metric::kInnerProduct;
  p.sentinel = p.select_min ? std::numeric_limits<float>::infinity()
                            : -std::numeric_limits<float>::infinity();
  p.path = request.path;
  p.shard = dev;
  p.rows = shard.rows;
  p.words = WordsFor(shard.rows);
  // A filter per query is uploaded as its distinct sets; when the queries all share one set,
  // the batch is searched as with one filter.
  std::vector<const RowSet*> slots;
  std::vector<uint32_t> slot_of;
  const RowSet* shared = filters.sets[0];
  if (filters.per_query()) {
    detail::DistinctSets(filters, &slots, &slot_of);
    shared = slots.size() == 1 ? slots[0] : nullptr;
  }
  p.per_query = shared == nullptr;
  if (filters.per_query() && !p.per_query) ++s.counts.filters_shared;
  p.filter_words = (p.per_query ? nq : 1) * p.words;
  if (p.per_query) {
    p.starts.assign(nq + 1, 0);
    for (uint32_t q = 0; q < nq; ++q) {
      p.starts[q + 1] = p.starts[q] + filters.passing_rows[q];
      p.max_passing = std::max(p.max_passing, filters.passing_rows[q]);
    }
    p.total_passing = p.starts[nq];
    if (p.path == SearchPath::kGather && p.total_passing > 0) {
      if (filters.union_set == nullptr) {
        b->own_union = std::make_unique<RowSet>(RowSet::Union(slots.data(), slots.size()));
      }
      b->union_set = filters.union_set != nullptr ? filters.union_set : b->own_union.get();
      p.union_count = b->union_set->Cardinality();
    }
  } else {
    p.total_passing = filters.passing_rows[0];
    p.max_passing = p.total_passing;
  }
  p.no_filter = p.path == SearchPath::kDense &&
                std::all_of(filters.passing_rows.begin(), filters.passing_rows.end(),
                            [&](uint64_t n) { return n == shard.rows; });
  p.ids_direct = !p.per_query && NeedsCompaction(p.path) && p.total_passing < p.words;
  p.topk = request.topk;
  p.columns = p.path == SearchPath::kDense ? shard.rows
              : p.per_query                ? p.union_count
                                           : p.total_passing;
  if (p.total_passing > 0 && shard.rows > 0) {
    SIEVE_RETURN_IF_ERROR(ValidatePlan(p.topk, p.path, shard.dtype, shard.dim, p.k, p.columns,
                                       p.per_query));
  }
  const bool upload = p.total_passing > 0 && !p.no_filter;
  if (!upload) {
    p.upload_words = 0;
  } else if (p.per_query) {
    // The lists go up a row range at a time where one SDDMM launch of every query can search
    // each range as it lands (16-byte rows, every query in one chunk).
    const size_t row_bytes = size_t{shard.dim} * (shard.dtype == DType::kFloat16 ? 2 : 4);
    const bool ranges = p.path == SearchPath::kSddmm && row_bytes % 16 == 0 &&
                        detail::SddmmQueryChunk(p.max_passing) >= nq;
    const detail::FilterPacker packer(slots, slot_of, shard.rows, p.words,
                                      ranges ? s.options.list_upload_groups : 1);
    p.packed = packer.layout();
    s.counts.filter_list_slots += p.packed.list_slots;
    s.counts.filter_bitset_slots += p.packed.bitset_slots;
    if (p.packed.groups > 1) {
      ++s.counts.list_range_uploads;
      s.counts.list_ranges += p.packed.groups;
    }
    SIEVE_RETURN_IF_ERROR(s.pinned_filter.Reserve(p.packed.bytes));
    b->h_filter = s.pinned_filter.as<uint32_t>();
    packer.Write(s.pinned_filter.as<char>(), PackThreads(s.options, p.packed.bytes));
  } else {
    p.upload_words = p.ids_direct ? p.total_passing : p.words;
    SIEVE_RETURN_IF_ERROR(s.pinned_filter.Reserve(p.upload_words * 4));
    b->h_filter = s.pinned_filter.as<uint32_t>();
    if (p.ids_direct) {
      shared->ToArray(b->h_filter);
    } else {
      shared->ToBitset(b->h_filter, p.words);
    }
  }

  // Queries: float32 (SDDMM, norms), and for float16 GEMMs each query q/s = hi + lo in halves,
  // laid out per chunk of kMaxQueryChunk queries as [hi rows of the chunk, lo rows of the chunk]
  // so one GEMM of 2m columns serves a chunk. s is a power of two ≥ max |q|, so the division is
  // exact and hi + lo carries 22 of float32's 24 significant bits.
  const bool gemm_path = p.path != SearchPath::kSddmm;
  p.split = gemm_path && shard.dtype == DType::kFloat16;
  const size_t qn = size_t{nq} * shard.dim;
  p.off_queries = 0;
  p.off_split = AlignUp(qn * 4);
  p.off_qnorms = p.off_split + AlignUp(p.split ? 2 * qn * 2 : 0);
  p.off_starts = p.off_qnorms + AlignUp(size_t{nq} * 4);
  p.queries_bytes = p.off_starts + AlignUp(p.per_query ? (size_t{nq} + 1) * 8 : 0);
  SIEVE_RETURN_IF_ERROR(s.pinned_queries.Reserve(p.queries_bytes));
  char* hq = b->h_queries = s.pinned_queries.as<char>();
  std::memcpy(hq + p.off_queries, request.queries, qn * 4);
  float* h_qnorms = reinterpret_cast<float*>(hq + p.off_qnorms);
  float max_abs = 0.0f;
  for (uint32_t q = 0; q < nq; ++q) {
    double acc = 0;
    for (uint32_t j = 0; j < shard.dim; ++j) {
      const double v = request.queries[size_t{q} * shard.dim + j];
      acc += v * v;
      max_abs = std::max(max_abs, static_cast<float>(std::fabs(v)));
    }
    h_qnorms[q] = static_cast<float>(acc);
    p.max_q_sq_norm = std::max(p.max_q_sq_norm, h_qnorms[q]);
  }
  if (p.split) {
    p.scale = QueryScale(max_abs);
    const float inv = 1.0f / p.scale;
    __half* h_split = reinterpret_cast<__half*>(hq + p.off_split);
    for (uint32_t c0 = 0; c0 < nq; c0 += detail::kMaxQueryChunk) {
      const uint32_t m = std::min(detail::kMaxQueryChunk, nq - c0);
      for (uint32_t i = 0; i < m; ++i) {
        const float* src = request.queries + size_t{c0 + i} * shard.dim;
        __half* hi = h_split + (size_t{2} * c0 + i) * shard.dim;
        __half* lo = h_split + (size_t{2} * c0 + m + i) * shard.dim;
        for (uint32_t j = 0; j < shard.dim; ++j) {
          const float v = src[j] * inv;
          const __half h = __float2half_rn(v);
          hi[j] = h;
          lo[j] = __float2half_rn(v - __half2float(h));
        }
      }
    }
  }
  if (p.per_query) {
    std::memcpy(hq + p.off_starts, p.starts.data(), (size_t{nq} + 1) * 8);
  }

  const size_t nk = size_t{nq} * p.k;
  SIEVE_RETURN_IF_ERROR(s.pinned_results.Reserve(nk * 8 + size_t{nq} * 8));
  b->h_vals = s.pinned_results.as<float>();
  b->h_ids = reinterpret_cast<uint32_t*>(b->h_vals + nk);
  b->h_counts = b->h_ids + nk;  // per query: candidates kept, then band rows (DeviceRun)
  return Status::OK();
}

Status GpuExecutor::RunTimed(Batch* b, bool stages, float* ms) {
  State& s = *state_;
  Prepared& p = b->p;
  const uint32_t nq = p.nq;
  uint64_t cand_cap = 0;
  auto run_once = [&]() -> Status {
    const detail::UploadLane lane{s.copy_stream, s.copy_events.data(),
                                  static_cast<uint32_t>(s.copy_events.size())};
    DeviceRun run(s.stream, s.cublas, s.select.get(), s.options, &s.counts, &s.stages, p,
                  b->h_filter, b->h_queries, b->h_vals, b->h_ids, b->h_counts, lane);
    Status st = run.Run();
    cand_cap = run.candidate_cap();
    b->used_threshold = run.used_threshold();
    b->ran_strategy = run.ran_strategy();
    b->ran_products = run.ran_products();
    b->select_plan = run.plan();
    // Buffers are freed (stream-ordered) as `run` goes; wait for the results either way.
    return st;
  };
  // One run between the executor's events: *elapsed gets its device milliseconds.
  auto timed = [&](float* elapsed) -> Status {
    s.stages.Start(stages);
    SIEVE_CUDA_TRY(cudaEventRecord(s.ev_start, s.stream));
    Status st = run_once();
    s.stages.Record("download", s.stream);
    SIEVE_CUDA_TRY(cudaEventRecord(s.ev_stop, s.stream));
    Status st2 = FromCuda(cudaStreamSynchronize(s.stream), "cudaStreamSynchronize");
    SIEVE_RETURN_IF_ERROR(st);
    SIEVE_RETURN_IF_ERROR(st2);
    SIEVE_CUDA_TRY(cudaEventElapsedTime(elapsed, s.ev_start, s.ev_stop));
    return Status::OK();
  };
  SIEVE_RETURN_IF_ERROR(timed(ms));
  // Did a query keep more candidates than its list holds? Then its results are incomplete,
  // and this search (and its later repetitions) use the full path, timed too.
  if (cand_cap == 0) return Status::OK();
  const uint32_t* over = std::find_if(b->h_counts, b->h_counts + nq,
                                      [&](uint32_t n) { return n > cand_cap; });
  if (over == b->h_counts + nq) {
    for (uint32_t q = 0; q < nq; ++q) {
      if (!b->used_threshold) s.counts.candidate_rows_kept += b->h_counts[q];
      s.counts.candidate_band_rows += b->h_counts[nq + q];
    }
    return Status::OK();
  }
  const std::string why = std::string(b->used_threshold ? "threshold select" : "candidate scan") +
                          " overflowed at query " + std::to_string(over - b->h_counts) +
                          " (code " + std::to_string(*over - cand_cap) + ")";
  const std::string first_plan = b->select_plan;
  p.no_candidates = true;
  ++s.counts.candidate_fallbacks;
  float again = 0;
  SIEVE_RETURN_IF_ERROR(timed(&again));
  *ms += again;
  b->select_plan = first_plan + "; " + why + "; then " + b->select_plan;
  return Status::OK();
}

Status GpuExecutor::Assemble(const Batch& b, const ShardView& shard, const BatchFilters& filters,
                             const ExecRequest& request, ExecResult* result) const {
  const uint32_t nq = request.num_queries;
  result->neighbors.assign(nq, {});
  result->select = TopKStrategyName(b.ran_strategy);
  result->products = ProductsName(b.ran_products);
  result->select_plan = b.select_plan;
  if (nq == 0) return Status::OK();
  const bool larger_better = request.metric == Metric::kInnerProduct;
  const Prepared& p = b.p;
  for (uint32_t q = 0; q < nq; ++q) {
    auto& out = result->neighbors[q];
    out.reserve(std::min<uint64_t>(p.k, filters.passing_rows[p.per_query ? q : 0]));
    for (uint32_t i = 0; i < p.k; ++i) {
      const uint32_t id = b.h_ids[size_t{q} * p.k + i];
      const float v = b.h_vals[size_t{q} * p.k + i];
      if (id == kInvalidId || !std::isfinite(v)) continue;
      if (id >= shard.rows) {
        return Status::Internal("GPU " + std::string(PathName(request.path)) +
                                " path returned row " + std::to_string(id) + " of a shard of " +
                                std::to_string(shard.rows) + " rows (query " +
                                std::to_string(q) + ")");
      }
      out.emplace_back(id, v);
    }
    std::sort(out.begin(), out.end(), [larger_better](const auto& x, const auto& y) {
      return BetterThan(larger_better, x.second, x.first, y.second, y.first);
    });
    for (size_t i = 1; i < out.size(); ++i) {
      if (out[i].first == out[i - 1].first && out[i].second == out[i - 1].second) {
        return Status::Internal("GPU path returned row " + std::to_string(out[i].first) +
                                " twice for query " + std::to_string(q));
      }
    }
  }
  return Status::OK();
}

Status GpuExecutor::Search(const ShardView& shard, const BatchFilters& filters,
                           const ExecRequest& request, ExecResult* result) {
  if (result == nullptr) return Status::InvalidArgument("result is null");
  SIEVE_RETURN_IF_ERROR(ValidateExecRequest(shard, filters, request));
  SIEVE_RETURN_IF_ERROR(CheckPlanned(request.topk));
  std::lock_guard<std::mutex> lock(state_->mu);
  SIEVE_CUDA_TRY(cudaSetDevice(state_->device));
  const auto t0 = std::chrono::steady_clock::now();
  *result = ExecResult();
  result->select = TopKStrategyName(TopKStrategy::kSelectK);
  result->products = ProductsName(Products::kFloat32);
  Batch b;
  SIEVE_RETURN_IF_ERROR(Prepare(shard, filters, request, &b));
  if (request.num_queries == 0) {
    result->neighbors.clear();
    return Status::OK();
  }
  const auto t1 = std::chrono::steady_clock::now();
  float device_ms = 0;
  SIEVE_RETURN_IF_ERROR(RunTimed(&b, /*stages=*/false, &device_ms));
  const auto t2 = std::chrono::steady_clock::now();
  SIEVE_RETURN_IF_ERROR(Assemble(b, shard, filters, request, result));
  const auto t3 = std::chrono::steady_clock::now();
  result->stage_ms.emplace_back("gpu.prepare", MsBetween(t0, t1));
  result->stage_ms.emplace_back(std::string("gpu.") + PathName(request.path), device_ms);
  result->stage_ms.emplace_back("gpu.assemble", MsBetween(t2, t3));
  return Status::OK();
}

Status GpuExecutor::Profile(const ShardView& shard, const BatchFilters& filters,
                            const ExecRequest& request, const ProfileOptions& options,
                            ExecProfile* profile) {
  if (profile == nullptr) return Status::InvalidArgument("profile is null");
  if (options.warmup < 0 || options.reps < 1) {
    return Status::InvalidArgument("Profile needs warmup >= 0 and reps >= 1");
  }
  SIEVE_RETURN_IF_ERROR(ValidateExecRequest(shard, filters, request));
  SIEVE_RETURN_IF_ERROR(CheckPlanned(request.topk));
  std::lock_guard<std::mutex> lock(state_->mu);
  SIEVE_CUDA_TRY(cudaSetDevice(state_->device));
  *profile = ExecProfile();
  ExecResult* result = &profile->result;
  result->select = TopKStrategyName(TopKStrategy::kSelectK);
  result->products = ProductsName(Products::kFloat32);
  const auto t0 = std::chrono::steady_clock::now();
  Batch b;
  SIEVE_RETURN_IF_ERROR(Prepare(shard, filters, request, &b));
  if (request.num_queries == 0) {
    profile->ms.assign(options.reps, 0.0);
    return Status::OK();
  }
  const auto t1 = std::chrono::steady_clock::now();
  float ms = 0;
  for (int i = 0; i < options.warmup; ++i) SIEVE_RETURN_IF_ERROR(RunTimed(&b, false, &ms));
  for (int i = 0; i < options.reps; ++i) {
    SIEVE_RETURN_IF_ERROR(RunTimed(&b, options.stages && i == options.reps - 1, &ms));
    profile->ms.push_back(ms);
  }
  if (options.stages) {
    SIEVE_RETURN_IF_ERROR(state_->stages.Read(state_->ev_start, &profile->stages));
  }
  const auto t2 = std::chrono::steady_clock::now();
  SIEVE_RETURN_IF_ERROR(Assemble(b, shard, filters, request, result));
  const auto t3 = std::chrono::steady_clock::now();
  result->stage_ms.emplace_back("gpu.prepare", MsBetween(t0, t1));
  result->stage_ms.emplace_back(std::string("gpu.") + PathName(request.path), ms);
  result->stage_ms.emplace_back("gpu.assemble", MsBetween(t2, t3));
  return Status::OK();
}

Status CreateGpuExecutor(const GpuExecutorOptions& options, std::unique_ptr<Executor>* executor) {
  executor->reset();
  std::unique_ptr<GpuExecutor> gpu;
  SIEVE_RETURN_IF_ERROR(GpuExecutor::Create(options, &gpu));
  *executor = std::move(gpu);
  return Status::OK();
}

}  // namespace sieve::gpu
