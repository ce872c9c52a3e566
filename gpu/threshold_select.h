// Copyright 2026 The Sieve Authors.
//
// Paged keys on the device, and the threshold select: an exact one-pass top-k over them that
// never writes the score matrix. Host-only header (no CUDA type appears; streams are passed as
// `void*` holding a cudaStream_t, device buffers as plain pointers).
//
// Paged keys. A collection's vectors live in pages of kPageRows (64) rows drawn from a
// PagePool; a block table (int32, one row per request) lists the pages a request sees, in key
// order: key j of a request is slot j % 64 of page table[j / 64]. Pools grow by whole slabs of
// 2^slab_pages_log2 pages that never move, so a collection grows without reallocating or
// copying its vectors. Each page also has the squared L2 norms of its rows (of the values as
// stored), kept in a pool-wide array indexed by page * 64 + slot.
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

#ifndef SIEVE_GPU_THRESHOLD_SELECT_H_
#define SIEVE_GPU_THRESHOLD_SELECT_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "sieve/status.h"
#include "sieve/types.h"

namespace sieve::gpu {

enum class KeyType : int { kFloat16 = 0, kBFloat16 = 1, kFloat32 = 2 };

inline constexpr uint32_t kPageRows = 64;
inline constexpr uint32_t kQueryTileRows = 128;

// Bytes of one element of `type`.
inline size_t KeyTypeBytes(KeyType type) { return type == KeyType::kFloat32 ? 4 : 2; }

// A device view of a pool's pages (all pointers are device pointers).
struct PagedKeys {
  KeyType type = KeyType::kFloat16;
  uint32_t dim = 0;
  const void* const* slabs = nullptr;  // slab s holds pages [s << log2, (s + 1) << log2)
  uint32_t slab_pages_log2 = 0;
  const float* sq_norms = nullptr;  // page p, slot i: sq_norms[p * 64 + i]
  // Optional: one kPageMapBytes tensor map a slab (EncodePageMap), 64-byte aligned. With them
  // the tensor-core kernel copies a page with the tensor memory accelerator (one instruction a
  // box of 64 keys x 64 dims) instead of 16-byte cp.async copies; without them, or where the
  // device or build has no TMA, it copies with cp.async. Same results either way.
  const void* page_maps = nullptr;
};

// Bytes of one page map (a CUtensorMap), and a page map in host memory with its alignment.
inline constexpr size_t kPageMapBytes = 128;
struct alignas(64) PageMap {
  unsigned char bytes[kPageMapBytes];
};

// Whether keys of this type and dim can use page maps: the tensor-core (mma.sync) kernel's keys
// (float16 or bfloat16, dim % 8 == 0, dim <= 256).
bool PageMapsApply(KeyType type, uint32_t dim);

// Writes the tensor map of one slab of `rows` rows of `dim` elements (row-major, `slab` a device
// address) into host memory `out` (kPageMapBytes, 64-byte aligned), as the tensor-core kernel
// reads it: boxes of 64 rows by min(64, the kernel's dims) elements, swizzled as its shared
// memory is. Internal when the driver has no tensor maps (CUDA 12 and later drivers do).
Status EncodePageMap(KeyType type, uint32_t dim, const void* slab, uint64_t rows, void* out);

// A pool of pages on the current CUDA device. Not thread-safe.
class PagePool {
 public:
  // `slab_bytes` is rounded to a power-of-two number of pages (at least one).
  static Status Create(KeyType type, uint32_t dim, size_t slab_bytes,
                       std::unique_ptr<PagePool>* out);
  ~PagePool();
  PagePool(const PagePool&) = delete;
  PagePool& operator=(const PagePool&) = delete;

  // Takes `n` pages (free pages first, then new ones, adding slabs as needed) and appends
  // their ids to *pages. ResourceExhausted when device memory runs out (nothing is taken).
  Status Allocate(uint32_t n, std::vector<int32_t>* pages);
  // Returns pages to the pool; their contents are unspecified from then on.
  void Release(const std::vector<int32_t>& pages);

  // Writes host float32 rows [first, first + n) of a collection whose pages are `table` (in key
  // order; it must cover first + n rows), converting them to the pool's type on the device and
  // writing their squared norms. `stream` is a cudaStream_t; the call returns once the rows are
  // on the device.
  Status Write(const std::vector<int32_t>& table, uint64_t first, const float* rows, uint64_t n,
               void* stream);

  PagedKeys view() const;
  KeyType type() const;
  uint32_t dim() const;
  uint32_t pages_per_slab() const;
  uint64_t allocated_pages() const;  // pages held by callers
  uint64_t capacity_pages() const;   // pages in all slabs
  size_t device_bytes() const;       // slabs, norms and the slab table

 private:
  struct Rep;
  explicit PagePool(std::unique_ptr<Rep> rep);
  std::unique_ptr<Rep> rep_;
};

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

// Which kernel ThresholdSelect uses for these keys now: "wgmma" (warpgroup MMA: float16 or
// bfloat16 keys of 33 to 128 dims with dim % 8 == 0, a compute capability 9.0 device, a build
// with SIEVE_TS_SM90A, and SIEVE_GPU_WGMMA=1), "mma-tma" (tensor cores, mma.sync, pages copied
// by the tensor memory accelerator: the other float16 and bfloat16 keys with dim % 8 == 0 and
// dim <= 256, with page_maps, on a compute capability 9.x device and a build with
// SIEVE_TS_SM90A, unless SIEVE_GPU_TMA=0), "mma" (the same kernel copying with cp.async) or
// "simt".
const char* ThresholdSelectKernelName(const PagedKeys& keys);

// Whether this build carries the warpgroup-MMA kernel (sm_90a code).
bool ThresholdSelectHasWgmma();

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

#endif  // SIEVE_GPU_THRESHOLD_SELECT_H_
