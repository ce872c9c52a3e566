// Copyright 2026 The Sieve Authors.
//
// The device part of one search (DeviceRun): the uploads of the filter and the queries from
// pinned memory, the compaction of the passing ids, the chunk loop over the queries, the path
// of each chunk and the download of nq × k (value, id) pairs into pinned memory. Each path's
// code lives in gpu/paths/: sddmm.cu, gather.cu, gemm_tiles.cu (cuBLAS tiles and select_k),
// candidates.cu (the candidate scan), threshold_dense.cu (the threshold select), rescore.cu
// (exact rescoring and the final top-k of both), compact.cu.

#ifndef SIEVE_GPU_DEVICE_RUN_CUH_
#define SIEVE_GPU_DEVICE_RUN_CUH_

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gpu/device_shard.cuh"
#include "gpu/filter_pack.h"
#include "gpu/gpu_executor.h"
#include "gpu/memory.cuh"
#include "gpu/page_pool.h"
#include "gpu/raft_select_k.cuh"
#include "query/topk_plan.h"
#include "gpu/stage_timer.cuh"
#include "sieve/db.h"
#include "sieve/gpu_options.h"
#include "sieve/status.h"

namespace sieve::gpu::detail {

constexpr uint32_t kInvalidId = 0xffffffffu;
// Queries per chunk: bounds grid.y and the per-query buffers.
constexpr uint32_t kMaxQueryChunk = 1024;

// Queries per SDDMM chunk for lists of up to `ld` ids: the chunk's distances fit the tile
// budget.
inline uint32_t SddmmQueryChunk(uint64_t ld) {
  const uint64_t fit = kTileBudgetBytes / (std::max<uint64_t>(1, ld) * 4);
  return static_cast<uint32_t>(std::clamp<uint64_t>(fit, 1, kMaxQueryChunk));
}

// A second stream for uploads beside the search (the lists of a filter per query, a row range
// at a time: PackedFilters::groups), and the events that hand each upload over: events[0]
// orders the copies after the buffer's allocation, events[g + 1] marks group g landed.
struct UploadLane {
  cudaStream_t stream = nullptr;
  const cudaEvent_t* events = nullptr;
  uint32_t n_events = 0;
};

inline unsigned GridFor(int64_t n, int block, int64_t cap = 65535LL * 16) {
  int64_t g = (n + block - 1) / block;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(g, cap)));
}

// What one search needs on the host side, prepared once (Profile re-runs the device part).
struct Prepared {
  uint32_t nq = 0;
  uint32_t dim = 0;
  uint32_t k = 0;
  int metric = 0;
  bool select_min = true;
  float sentinel = 0;
  bool per_query = false;
  SearchPath path = SearchPath::kDense;
  const DeviceShard* shard = nullptr;
  uint32_t rows = 0;              // the snapshot's rows (the resident copy may hold more)
  size_t words = 0;               // per filter row
  size_t filter_words = 0;        // words of the filter the paths read (bitset: words; bitmap:
                                  // nq*words, built on the device from `packed`)
  size_t upload_words = 0;        // a shared filter: the words uploaded (bitset or ids)
  PackedFilters packed;           // a filter per query: what is uploaded
  TopKPlan topk;                  // the request's plan (ValidatePlan has checked it)
  uint64_t columns = 0;           // the columns the top-k selects among (dense: rows; gather:
                                  // the passing rows, or a bitmap's union)
  bool no_candidates = false;     // set after a candidate list overflowed: use the full path
  bool no_filter = false;         // dense with every row passing every query's filter: none
                                  // is uploaded or tested
  bool ids_direct = false;        // sddmm/gather over a sparse bitset: the pinned buffer holds
                                  // the passing ordinals (fewer words than the bitset), which
                                  // are uploaded as the compacted list
  uint64_t union_count = 0;       // gather over a bitmap: rows passing some query's filter
  uint64_t total_passing = 0;     // bitset: n_pass; bitmap: sum over queries
  std::vector<uint64_t> starts;   // bitmap: prefix sums of per-query counts (nq + 1)
  uint64_t max_passing = 0;       // bitmap: largest per-query count
  bool split = false;             // float16 GEMM with hi/lo query halves
  float scale = 1.0f;
  float max_q_sq_norm = 0.0f;     // the largest squared norm of a query
  // Offsets (bytes) into pinned_queries.
  size_t off_queries = 0, off_split = 0, off_qnorms = 0, off_starts = 0, queries_bytes = 0;
};

const char* PathName(SearchPath p);
inline bool NeedsCompaction(SearchPath p) {
  return p == SearchPath::kSddmm || p == SearchPath::kGather;
}

// The keys a radix-select kernel's CTA may keep in shared memory on the current device (see
// KeyCacheBytes in paths/distance.cuh): the device's opt-in limit a block, less what the kernels
// hold statically; the default 48 KB's share where the device cannot be asked.
int64_t KeyCacheKeys();
// Lets the kernels that keep keys (KthBestKernel, CandidateBandKernel, SelectRowsKernel) take
// `cache_keys` keys of dynamic shared memory on the current device (paths/candidates.cu).
cudaError_t EnableKeyCaches(int64_t cache_keys);
// SelectRowsKernel's part of it (paths/rescore.cu), `bytes` of dynamic shared memory.
cudaError_t EnableSelectRowsKeyCache(int bytes);

// Device rows for cuBLAS, which takes plain row-major blocks: resident rows are contiguous only
// within a slab, so a GEMM over rows [off, off + n) is issued in pieces that never cross a
// block end. The gathered block of the gather path is one block.
struct RowBlocks {
  const char* const* bases = nullptr;  // block b holds rows [b * block_rows, (b + 1) * block_rows)
  uint64_t block_rows = std::numeric_limits<uint64_t>::max();
  size_t row_bytes = 0;

  const char* At(uint64_t row) const {
    return bases[row / block_rows] + (row % block_rows) * row_bytes;
  }
  // Rows from `row` to the end of its block.
  uint64_t ToEnd(uint64_t row) const { return block_rows - row % block_rows; }
};

// Positions of select_k mapped back to ordinals (MapPositionsKernel, gemm_tiles.cu).
struct MapArgs {
  const uint32_t* pos;      // m × kf positions from select_k; null: position i is i
  const float* vals;        // m × kf values (copied along when vals_out is set)
  int m;
  int kf;
  const uint32_t* table;    // nullable: id = table[index], else id = index
  int64_t table_stride;     // index = q * table_stride + base + pos (+ starts[q])
  int64_t base;
  const uint64_t* starts;   // nullable: per-query lists; pos >= its length → kInvalidId
  uint32_t* ids_out;        // ids_out[q * out_ld + out_off + i]
  float* vals_out;          // nullable, same layout
  int64_t out_ld;
  int64_t out_off;
};

// The device part of one search: uploads, compaction, the path, top-k and the download of
// nq × k (value, id) pairs into pinned memory (slots a path left empty hold kInvalidId).
class DeviceRun {
 public:
  // `counts` gets the chunks that ran candidate selection or the threshold select; `timer`
  // the stage marks (when it is on). h_counts (2 nq, pinned) gets, per query, the candidates
  // kept (the threshold select: its overflow flags), then the rows of its rescored band.
  DeviceRun(cudaStream_t stream, cublasHandle_t cublas, RaftSelectK* select,
            const GpuExecutorOptions& options, GpuPathCounts* counts, StageTimer* timer,
            const Prepared& p, const uint32_t* h_filter, const char* h_queries, float* h_vals,
            uint32_t* h_ids, uint32_t* h_counts, UploadLane lane = {})
      : stream_(stream),
        cublas_(cublas),
        select_(select),
        options_(options),
        counts_(counts),
        timer_(timer),
        p_(p),
        h_filter_(h_filter),
        h_queries_(h_queries),
        h_vals_(h_vals),
        h_ids_(h_ids),
        h_counts_(h_counts),
        lane_(lane) {}
  // Copies still in flight on the upload lane write into buffers this run frees (stream-ordered
  // on stream_): the search stream waits for them first.
  ~DeviceRun() {
    if (copies_issued_) (void)cudaStreamWaitEvent(stream_, lane_.events[p_.packed.groups], 0);
  }
  DeviceRun(const DeviceRun&) = delete;
  DeviceRun& operator=(const DeviceRun&) = delete;

  // The candidate list length of the chunks that ran candidate selection (0: none did).
  uint64_t candidate_cap() const { return cand_cap_; }
  // Whether a chunk selected through the threshold select.
  bool used_threshold() const { return used_threshold_; }
  // What the chunks carried out: the strategy and the products (the last chunk's; every chunk
  // carries out the one plan), and the plan as explain shows it (TopKPlan::ToString, and a
  // products fallback where the resident rows' norms refused the planned ones).
  TopKStrategy ran_strategy() const { return ran_strategy_; }
  Products ran_products() const { return ran_products_; }
  const std::string& plan() const { return plan_; }

  Status Run();

 private:
  // What the threshold select reads: pages (the resident shard's, or a gathered block's), the
  // block table (one row), the filter (none for a block gathered through a bitset: every row of
  // it passes), and for a gathered block the ordinal of each position.
  struct ThresholdKeys {
    PagedKeys keys;
    const int32_t* table = nullptr;
    uint32_t blocks = 0;
    const uint32_t* filter = nullptr;
    int64_t filter_stride = 0;
    const uint32_t* col_ids = nullptr;
  };

  // device_run.cu: the chunk loop and its shared steps.
  uint32_t chunk() const;
  Status RunChunk(uint32_t q0, uint32_t m);
  // Dense over the resident rows (col_ids == nullptr) or over a gathered copy of the rows
  // listed in col_ids, by the threshold select, the candidate scan or cuBLAS tiles, as the
  // request's top-k plan says (after a candidate list overflowed: tiles).
  Status Dense(uint32_t q0, uint32_t m, const uint32_t* col_ids, uint64_t n_cols);
  // Writes the chunk's final (value, id) pairs, kf per query, into the pinned results.
  Status Download(uint32_t q0, uint32_t m, int kf, const float* d_vals, const uint32_t* d_ids);
  // The filter words that the chunk of queries starting at q0 tests, or null: columns gathered
  // through a shared bitset all pass it, so only a bitmap needs testing there; and without a
  // filter (no_filter) every row passes.
  const uint32_t* ChunkFilter(uint32_t q0, const uint32_t* col_ids) const;
  int64_t FilterStride() const { return p_.per_query ? static_cast<int64_t>(p_.words) : 0; }
  void Mark(const char* name);
  void NotePlan(const std::string& plan);

  // paths/compact.cu: the ids of words (rows of p_.words words each) into *out, count of them.
  Status Compact(const uint32_t* words, int64_t n_words, uint64_t count,
                 DeviceBuffer<uint32_t>* out);
  // paths/filter_unpack.cu: a filter per query, from the uploaded PackedFilters, as the path
  // reads it: per-query id lists in d_ids_ (SDDMM), or the query-by-row bitmap in d_filter_
  // and, for the gather, the union's ids in d_ids_.
  Status UnpackFilters();
  // Whether the lists arrive a row range at a time on the upload lane (PackedFilters::groups),
  // each searched by the SDDMM as it lands.
  bool Grouped() const;
  // Issues the uploads of the groups' lows on the lane.
  Status UploadListGroups();
  // Expands group g's chunks of the per-query lists into d_ids_, once its lows have landed.
  Status ExpandListGroup(uint32_t g);
  // paths/sddmm.cu
  Status Sddmm(uint32_t q0, uint32_t m);
  // paths/gather.cu
  Status GatherBlock(const uint32_t* col_ids, uint64_t n_cols, RowBlocks* rows);
  Status GatheredNorms() const;
  Status GatheredPages(const uint32_t* col_ids, uint64_t n_cols, ThresholdKeys* out);
  // paths/gemm_tiles.cu
  Status Map(const MapArgs& a);
  Status Epilogue(float* dots, uint32_t q0, uint32_t m, uint64_t n_cols, const uint32_t* col_ids,
                  int64_t col_base);
  Status Gemm(const void* A, uint64_t n_tile, const void* B, int gemm_cols, void* dots,
              uint64_t ld = 0, cudaDataType_t out = CUDA_R_32F,
              cublasComputeType_t compute = CUBLAS_COMPUTE_32F);
  Status Tiles(uint32_t q0, uint32_t m, const RowBlocks& rows, const uint32_t* col_ids,
               uint64_t n_cols);
  // paths/candidates.cu
  Status SampleThresholds(uint32_t q0, uint32_t m, const RowBlocks& rows, const uint32_t* col_ids,
                          uint64_t sample, float* thresh);
  Status Candidates(uint32_t q0, uint32_t m, const RowBlocks& rows, const uint32_t* col_ids,
                    uint64_t n_cols, const TopKPlan& plan);
  // paths/int8_scan.cu: the dense candidate scan over the resident rows' int8 codes.
  // REQUIRES: p_.shard->has_codes(n_cols).
  Status Int8Candidates(uint32_t q0, uint32_t m, const RowBlocks& rows, uint64_t n_cols,
                        const TopKPlan& plan);
  // paths/rescore.cu
  Status RescoreAndSelect(uint32_t q0, uint32_t m, const uint32_t* ids_in, const float* vals_in,
                          int64_t cap, const uint32_t* counts, int kf, const char* rescore_mark,
                          const char* select_mark);
  // paths/threshold_dense.cu
  Status ThresholdDense(uint32_t q0, uint32_t m, uint64_t n_cols, const ThresholdKeys& tk,
                        const TopKPlan& plan);

  cudaStream_t stream_;
  cublasHandle_t cublas_;
  RaftSelectK* select_;
  const GpuExecutorOptions& options_;
  GpuPathCounts* counts_;
  StageTimer* timer_;
  const Prepared& p_;
  const uint32_t* h_filter_;
  const char* h_queries_;
  float* h_vals_;
  uint32_t* h_ids_;
  uint32_t* h_counts_;
  UploadLane lane_;
  bool copies_issued_ = false;
  uint64_t cand_cap_ = 0;
  bool used_threshold_ = false;
  TopKStrategy ran_strategy_ = TopKStrategy::kSelectK;
  Products ran_products_ = Products::kFloat32;
  std::string plan_;
  int64_t key_cache_keys_ = KeyCacheKeys();
  int sm_count_ = [] {
    int dev = 0, n = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
      return 132;
    }
    return n;
  }();

  DeviceBuffer<uint32_t> d_filter_;
  DeviceBuffer<char> d_packed_;  // a filter per query, as uploaded (PackedFilters)
  DeviceBuffer<char> d_queries_;
  DeviceBuffer<uint32_t> d_ids_;
  uint64_t n_ids_ = 0;
  DeviceBuffer<char> gathered_rows_;
  const char* gathered_base_ = nullptr;
  bool gathered_ready_ = false;
  // The gathered block as pages (threshold select over a bitset's gather).
  DeviceBuffer<float> gathered_norms_;
  DeviceBuffer<int32_t> gathered_table_;
  DeviceBuffer<const void*> gathered_slab_;
  const void* gathered_slab_host_ = nullptr;
  DeviceBuffer<unsigned char> gathered_map_;
  PageMap gathered_map_host_;
  bool gathered_map_ok_ = false;
  bool gathered_pages_ready_ = false;
  bool gathered_norms_ready_ = false;
  const float* queries_ = nullptr;
  const __half* split_ = nullptr;
  const float* qnorms_ = nullptr;
  const uint64_t* starts_ = nullptr;
};

}  // namespace sieve::gpu::detail

#endif  // SIEVE_GPU_DEVICE_RUN_CUH_
