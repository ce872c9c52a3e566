// Copyright 2026 The Sieve Authors.
//
// GpuExecutorOptions: how the GPU executor runs a search. The defaults are what the engine
// uses; every setting keeps results exact, so they differ only in speed and device memory.
// Benchmarks and tests map their own flags onto these fields to compare variants in one
// process. The choices they lead to are shown by a search's explain (ShardPlan::select_plan).

#ifndef SIEVE_INCLUDE_SIEVE_GPU_OPTIONS_H_
#define SIEVE_INCLUDE_SIEVE_GPU_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "sieve/status.h"

namespace sieve {

struct GpuExecutorOptions {
  // The most row ranges list_upload_groups takes, and the most threads filter_pack_threads.
  static constexpr uint32_t kMaxListUploadGroups = 64;
  static constexpr uint32_t kMaxFilterPackThreads = 256;

  // The CUDA device the executor runs on. Default: 0.
  int device = 0;

  // Bytes of one slab of a resident shard's page pool (rounded down to a power-of-two number of
  // 64-row pages, at least one page). Resident rows never move, so a slab is the longest run of
  // rows one cuBLAS call reads. Default: 256 MiB.
  size_t resident_slab_bytes = size_t{256} << 20;

  // Candidate selection for the gather and dense paths over at least 65,536 columns: an exact
  // threshold from a sample of the columns, then only the rows that can beat it are kept, and
  // of those (float16 rows) only the ones that can still be in the exact top-k are rescored.
  // false: cuBLAS tiles and select_k over every column (and no threshold select). Default: true.
  bool candidate_selection = true;
  // Scales the candidate scan's exact sample of about sqrt(4 max(k, 8) n) columns: a larger
  // sample costs more up front and leaves fewer candidates to keep. In [0.25, 16]. Default: 1.
  double candidate_sample_factor = 1.0;
  // Bytes of dot products in one candidate-scan tile (float32 products, or float16 where they
  // cannot overflow); 0 chooses: one tile for a gathered block of at most 64 MiB of them, else
  // 32 MiB. Default: 0.
  size_t candidate_tile_bytes = 0;
  // Float32 rows, l2 and ip: the candidate scan's GEMM on TF32 tensor cores (inputs rounded to
  // 10 mantissa bits, float32 sums), its error bound widened to match, and the band of kept rows
  // that can hold the exact top-k rescored exactly in float32, as for float16 rows; false:
  // float32 products, whose kept distances need no rescoring. Default: true.
  bool candidate_tf32 = true;
  // The dense candidate scan over int8 codes (float16 or float32 rows, l2, ip and cosine): each
  // resident shard keeps beside its rows a code of each row (one byte a dimension, padded to a
  // multiple of 16, and 16 bytes of scale and error-bound terms, built on the device as rows are
  // uploaded), the scan multiplies codes on the int8 tensor cores, keeps every row whose distance
  // can still reach the sample threshold within that row's deterministic error bound, and
  // rescores the band that can hold the exact top-k from the stored rows: results stay exact.
  // Planned before the threshold select; shown as "int8" products in explain. The codes count in
  // the device memory a shard takes. Default: false.
  bool candidate_int8 = false;

  // The threshold select (one tensor-core pass that keeps only rows above a per-query
  // threshold, no score matrix) for the dense path over float16 rows with dim % 8 == 0,
  // dim <= 256, k <= 4096 and at least 65,536 rows. Needs candidate_selection. Default: true.
  bool threshold_select = true;
  // The gather path over one filter (a bitset) selects through the threshold select from this
  // many gathered rows up, where it measured faster than the candidate scan on the H200
  // (tools/bench/results/2026-11-30-h200-session3/); 0: at any size. Default: 262144.
  uint64_t threshold_gather_min_rows = uint64_t{1} << 18;
  // The most levels of growing row prefixes the threshold select takes, in [2, 6]. Default: 4.
  uint32_t threshold_max_levels = 4;
  // The threshold select's tensor-core kernel copies pages with the tensor memory accelerator
  // where the device (compute capability 9.x) and the build allow; false: with cp.async.
  // Default: true.
  bool tma_page_copies = true;

  // A filter per query made of id lists, on the SDDMM path: the lists cross PCIe in this many
  // row ranges, on a second stream, and the SDDMM searches each range as soon as it has landed
  // while the later ones upload. 0 chooses: a range a MiB of lists, up to 8; 1 uploads them
  // whole before the search. In [0, 64]. Default: 0.
  uint32_t list_upload_groups = 0;
  // Host threads that write a filter per query's packed sets (bitsets and lists) into pinned
  // memory, for batches of at least 8 MiB of them and at most one thread per 4 MiB; 0: one per
  // hardware thread, up to 8. In [0, 256]. Default: 0.
  uint32_t filter_pack_threads = 0;

  // OK, or InvalidArgument naming the first field outside its range.
  Status Validate() const;
  // The fields that differ from the defaults, as "name=value ..." ("" for the defaults).
  std::string Changed() const;
};

}  // namespace sieve

#endif  // SIEVE_INCLUDE_SIEVE_GPU_OPTIONS_H_
