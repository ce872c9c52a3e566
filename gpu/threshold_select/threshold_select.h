// Copyright 2026 The Sieve Authors.
//
// The threshold select: an exact one-pass top-k over paged keys (gpu/page_pool.h) that never
// writes the score matrix. Host-only header (no CUDA type appears; streams are passed as
// `void*` holding a cudaStream_t, device buffers as plain pointers).
//
// ThresholdSelect (one launch, no host synchronization, capturable in a CUDA graph once it has
// run once):
//   * query rows come in tiles of 128; tile t is query rows [128 t, 128 t + 128) and sees the
//     pages of block-table row tile_requests[t]; query row r sees keys j < row_ends[r];
//   * score(r, j): the inner product for kInnerProduct; -(|q|^2 + |x|^2 - 2 q.x) for kL2;
//     q.x / (|q| |x|) - 1 for kCosine (-1 when either norm is 0). The dot product is multiplied
//     by query_scales[r] when given, and |q|^2 is query_sq_norms[r] when given (else computed
//     from the stored query row, times the scale squared);
//   * a key that fails the filter (bit j of the row's filter words clear) or lies at or past
//     row_ends[r] is never counted nor stored. Of the others, a score strictly above
//     thresholds[r] is a candidate; equal to it, or NaN, a tie;
//   * counters[2 r] / counters[2 r + 1] count candidates / ties (zeroed by the caller);
//   * candidates[r] has top_k + capacity slots of (key index, score bits): the n-th candidate
//     at slot top_k + n when n < capacity, the n-th tie at slot top_k - 1 - n when n < top_k,
//     so the filled slots are one contiguous range. The score stored is s - t when the row's
//     threshold t > 0 and s <= 2 t (exact by Sterbenz's lemma), else s itself; the map keeps
//     the order of scores, and DecodeScore inverts it;
//   * a row fits when its candidates fit `capacity` and its candidates plus its stored ties
//     that are not NaN reach min(visible passing keys, top_k): its exact top-k (by the scores
//     this kernel computes, NaN ranking below every other score) is then among its slots;
//   * with `arrivals` (int32 per tile, zeroed once; every call leaves it zeroed) and `ranges`
//     (int32 [2, rows]: first and one-past-last filled slot of each row) and capacity >=
//     top_k - 1, every row fits: the last CTA of a tile to finish sweeps the tile again for
//     the rows that do not fit, radix-selects each one's min(passing, top_k)-th largest score
//     (NaN counting as the lowest), makes it the row's new threshold (written to thresholds[r])
//     and selects the row again — leaving NaN keys out when that score is not NaN, so that they
//     cannot take tie slots from real ties (with fewer than K keys that are not NaN, the
//     threshold is -inf and NaN keys fill the row). The result then does not depend on the
//     thresholds given; they only decide how often a repair runs. A repair is one CTA sweeping
//     the tile's keys five times: cheap for short rows, long for millions of keys.
//
// Kernels: float16 and bfloat16 keys with dim % 8 == 0 and dim <= 256 use tensor cores
// (mma.sync, float32 accumulation; the query tile stays in shared memory, pages stream through
// shared memory, copied by the tensor memory accelerator where the keys carry page maps, else
// with cp.async); float32 keys and other dims use a CUDA-core kernel with the same contract.
// Within one kernel a (row, key) score is computed bit-identically every time (the repair
// relies on it).

#ifndef SIEVE_GPU_THRESHOLD_SELECT_THRESHOLD_SELECT_H_
#define SIEVE_GPU_THRESHOLD_SELECT_THRESHOLD_SELECT_H_

#include <cstdint>

#include "gpu/page_pool.h"
#include "sieve/status.h"
#include "sieve/types.h"

namespace sieve::gpu {

inline constexpr uint32_t kQueryTileRows = 128;

struct ThresholdSelectArgs {
  PagedKeys keys;
  Metric metric = Metric::kL2;

  const void* queries = nullptr;         // [num_rows, keys.dim] of keys.type, 16-byte aligned
  uint32_t num_rows = 0;
  const float* query_scales = nullptr;   // optional [num_rows]
  const float* query_sq_norms = nullptr; // optional [num_rows]

  const int32_t* row_ends = nullptr;       // [num_rows]
  const int32_t* tile_requests = nullptr;  // [ceil(num_rows / 128)]
  const int32_t* block_table = nullptr;    // [requests, blocks_per_request]
  uint32_t blocks_per_request = 0;
  uint32_t max_context = 0;  // the most keys a row sees (<= blocks_per_request * 64)

  // Optional filter: bit j of word j / 32 of row r's words keeps key j, where row r's words
  // start at filter + r * filter_stride (0: one bitset for every row). It must cover
  // max_context keys.
  const uint32_t* filter = nullptr;
  int64_t filter_stride = 0;

  float* thresholds = nullptr;  // [num_rows]
  int32_t* counters = nullptr;  // [num_rows, 2], zeroed by the caller
  int32_t* candidates = nullptr;  // [num_rows, top_k + capacity, 2]
  uint32_t top_k = 0;
  uint32_t capacity = 0;

  int32_t* arrivals = nullptr;  // optional [tiles], zeroed once
  int32_t* ranges = nullptr;    // optional [2, num_rows]
};

// Launches the threshold select on `stream` (a cudaStream_t). InvalidArgument for arguments
// that break the contract (named in the message); Internal for a CUDA launch failure.
Status ThresholdSelect(const ThresholdSelectArgs& args, void* stream);

// Whether ThresholdSelect takes keys of this type and dim on its tensor-core kernel (float16 or
// bfloat16, dim % 8 == 0, dim <= 256), the keys that may carry page maps; the others take its
// CUDA-core kernel.
inline constexpr uint32_t kTensorCoreMaxDim = 256;
inline constexpr uint32_t kTensorCoreDimMultiple = 8;
inline bool ThresholdSelectUsesTensorCores(KeyType type, uint32_t dim) {
  return type != KeyType::kFloat32 && dim % kTensorCoreDimMultiple == 0 &&
         dim <= kTensorCoreMaxDim;
}

// Which kernel ThresholdSelect uses for these keys on the current device: "mma-tma" (tensor
// cores, mma.sync, pages copied by the tensor memory accelerator: keys with page_maps on a
// compute capability 9.x device, in a build with sm_90 code), "mma" (the same kernel copying
// with cp.async) or "simt" (CUDA cores).
const char* ThresholdSelectKernelName(const PagedKeys& keys);

// Whether this build carries the tensor memory accelerator's copies (sm_90 code).
bool ThresholdSelectHasTma();

// Writes the tensor map of one slab of `rows` rows of `dim` elements (row-major, `slab` a device
// address) into host memory `out` (kPageMapBytes, 64-byte aligned), as the tensor-core kernel
// reads it: boxes of 64 rows by min(64, the kernel's dims) elements, swizzled as its shared
// memory is. InvalidArgument for keys without the tensor-core kernel or a misaligned slab or output;
// Internal when the driver has no tensor maps (CUDA 12 and later drivers do).
Status EncodePageMap(KeyType type, uint32_t dim, const void* slab, uint64_t rows, void* out);

// The true score of a stored slot value of a row whose threshold is `threshold`.
inline float DecodeScore(float stored, float threshold) {
  return (threshold > 0.0f && stored <= threshold) ? stored + threshold : stored;
}

// The exact top-k from the slots, best first (ties by smaller key index; NaN scores last):
// out_keys [num_rows, k] (-1 past a row's filled slots) and out_scores [num_rows, k] (decoded
// scores; -inf past the end). Reads `ranges` when given, else derives each row's filled range
// from counters (the rows must fit). k <= top_k + capacity and k <= 4096.
Status TopKFromCandidates(const int32_t* candidates, const int32_t* counters,
                          const int32_t* ranges, const float* thresholds, uint32_t num_rows,
                          uint32_t top_k, uint32_t capacity, uint32_t k, int32_t* out_keys,
                          float* out_scores, void* stream);

// thresholds[r] = out_scores[r * k + k - 1] - margin[r] (margin optional, else 0): the k-th
// best score of a previous selection (for example over a sample of pages), loosened by a
// margin; -inf where that selection found fewer than k keys. Also zeroes counters.
Status ThresholdsFromTopK(const float* out_scores, uint32_t num_rows, uint32_t k,
                          const float* margin, float* thresholds, int32_t* counters,
                          void* stream);

// For callers whose scores are approximate (for example float16 queries) and who rescore
// exactly: lists, per row, every key in its slots whose score is at least
// kth_scores[r * k + k - 1] - margin[r] (every key when that is -inf or NaN), the band within
// which any key of the exact top-k must lie. out_ids [num_rows, out_cap] (unsigned key indices)
// and out_counts [num_rows]: the band's size, which may exceed out_cap (then the list is cut).
Status CollectBand(const int32_t* candidates, const int32_t* counters, const int32_t* ranges,
                   const float* thresholds, uint32_t num_rows, uint32_t top_k, uint32_t capacity,
                   const float* kth_scores, uint32_t k, const float* margin, uint32_t out_cap,
                   uint32_t* out_ids, uint32_t* out_counts, void* stream);

}  // namespace sieve::gpu

#endif  // SIEVE_GPU_THRESHOLD_SELECT_THRESHOLD_SELECT_H_
