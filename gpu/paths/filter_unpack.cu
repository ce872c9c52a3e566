// Copyright 2026 The Sieve Authors.
//
// A filter per query on the device: the distinct sets arrive packed (PackedFilters: bitsets,
// and sorted lists of 16-bit offsets in 65536-row chunks where those are smaller), and are
// expanded here into what the path reads: the query-by-row bitmap (dense and gather, which
// also compacts the union of the rows), or the per-query id lists (SDDMM).

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "gpu/cuda_status.cuh"
#include "gpu/device_run.cuh"
#include "gpu/memory.cuh"

namespace sieve::gpu::detail {
namespace {

// The uploaded PackedFilters, as device pointers.
struct PackedView {
  const uint32_t* bitsets;        // bitset slot s: words [s * words, (s + 1) * words)
  const uint64_t* bitset_starts;  // bitset slot s: its ids at [starts[s], starts[s + 1]) of
                                  // the bitset slots' compaction
  const uint64_t* chunk_ranks;    // list slot l, chunk c: its ids at list positions
                                  // [r[c], r[c + 1]), r at l * (chunks + 1)
  const uint64_t* chunk_lows;     // list slot l, chunk c: its lows from lows[cl[c]] on, cl at
                                  // l * (chunks + 1)
  const uint32_t* source;         // per query: bitset slot, or kListSource | list slot
  const uint16_t* lows;
  uint32_t chunks;
  int64_t words;
};

unsigned GridDim(uint64_t n) { return static_cast<unsigned>(std::clamp<uint64_t>(n, 1, 65535)); }

// Row q of the query-by-row bitmap, one block a (chunk, query): a bitset slot's words are
// copied; a list slot's chunk is built in shared memory and written once.
__global__ void ExpandBitmapKernel(PackedView f, uint32_t nq, uint32_t* __restrict__ out) {
  __shared__ uint32_t chunk_words[kListChunkWords];
  for (uint32_t q = blockIdx.y; q < nq; q += gridDim.y) {
    const uint32_t src = f.source[q];
    for (uint32_t c = blockIdx.x; c < f.chunks; c += gridDim.x) {
      const int64_t w0 = static_cast<int64_t>(c) * kListChunkWords;
      const int n = static_cast<int>(std::min<int64_t>(kListChunkWords, f.words - w0));
      uint32_t* dst = out + static_cast<int64_t>(q) * f.words + w0;
      if ((src & kListSource) == 0) {
        const uint32_t* from = f.bitsets + static_cast<int64_t>(src) * f.words + w0;
        for (int i = threadIdx.x; i < n; i += blockDim.x) dst[i] = from[i];
        continue;
      }
      const uint64_t table = static_cast<uint64_t>(src & ~kListSource) * (f.chunks + 1);
      const uint64_t* r = f.chunk_ranks + table;
      const uint64_t b = f.chunk_lows[table + c], e = b + (r[c + 1] - r[c]);
      if (b == e) {
        for (int i = threadIdx.x; i < n; i += blockDim.x) dst[i] = 0;
        continue;
      }
      __syncthreads();  // the previous chunk's words are written out
      for (int i = threadIdx.x; i < n; i += blockDim.x) chunk_words[i] = 0;
      __syncthreads();
      for (uint64_t j = b + threadIdx.x; j < e; j += blockDim.x) {
        const uint32_t lo = f.lows[j];
        atomicOr(&chunk_words[lo >> 5], 1u << (lo & 31));
      }
      __syncthreads();
      for (int i = threadIdx.x; i < n; i += blockDim.x) dst[i] = chunk_words[i];
    }
  }
}

// The per-query id lists, query q's at [starts[q], starts[q + 1]), for chunks [c0, c1), one
// block a (chunk, query): a list slot's chunk is decoded; a bitset slot's ids (compacted once a
// slot, bitset_ids) are copied in equal parts.
__global__ void ExpandListsKernel(PackedView f, const uint32_t* __restrict__ bitset_ids,
                                  const uint64_t* __restrict__ starts, uint32_t nq, uint32_t c0,
                                  uint32_t c1, uint32_t* __restrict__ out) {
  for (uint32_t q = blockIdx.y; q < nq; q += gridDim.y) {
    uint32_t* dst = out + starts[q];
    const uint32_t src = f.source[q];
    for (uint32_t c = c0 + blockIdx.x; c < c1; c += gridDim.x) {
      if ((src & kListSource) == 0) {
        const uint64_t b = f.bitset_starts[src], n = f.bitset_starts[src + 1] - b;
        const uint64_t lo = n * c / f.chunks, hi = n * (c + 1) / f.chunks;
        for (uint64_t i = lo + threadIdx.x; i < hi; i += blockDim.x) dst[i] = bitset_ids[b + i];
        continue;
      }
      const uint64_t table = static_cast<uint64_t>(src & ~kListSource) * (f.chunks + 1);
      const uint64_t r = f.chunk_ranks[table + c], n = f.chunk_ranks[table + c + 1] - r;
      const uint16_t* lows = f.lows + f.chunk_lows[table + c];
      const uint32_t high = c << 16;
      for (uint64_t j = threadIdx.x; j < n; j += blockDim.x) dst[r + j] = high | lows[j];
    }
  }
}

// out[w] = the OR of word w over the nq rows of the query-by-row bitmap.
__global__ void UnionRowsKernel(const uint32_t* __restrict__ bitmap, uint32_t nq, int64_t words,
                                uint32_t* __restrict__ out) {
  for (int64_t w = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; w < words;
       w += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    uint32_t acc = 0;
    for (uint32_t q = 0; q < nq; ++q) acc |= bitmap[static_cast<int64_t>(q) * words + w];
    out[w] = acc;
  }
}

PackedView ViewOf(const char* base, const Prepared& p) {
  const PackedFilters& pk = p.packed;
  PackedView f;
  f.bitsets = reinterpret_cast<const uint32_t*>(base + pk.off_bitsets);
  f.bitset_starts = reinterpret_cast<const uint64_t*>(base + pk.off_bitset_starts);
  f.chunk_ranks = reinterpret_cast<const uint64_t*>(base + pk.off_chunk_ranks);
  f.chunk_lows = reinterpret_cast<const uint64_t*>(base + pk.off_chunk_lows);
  f.source = reinterpret_cast<const uint32_t*>(base + pk.off_source);
  f.lows = reinterpret_cast<const uint16_t*>(base + pk.off_lows);
  f.chunks = pk.chunks;
  f.words = static_cast<int64_t>(p.words);
  return f;
}

}  // namespace

// The packer lays the lists out in ranges only where Prepare asked for them (a filter per query
// of lists only, on the SDDMM path); without the lane's events they go up whole.
bool DeviceRun::Grouped() const {
  return p_.packed.groups > 1 && lane_.stream != nullptr && lane_.n_events > p_.packed.groups;
}

Status DeviceRun::UploadListGroups() {
  const PackedFilters& pk = p_.packed;
  // The lane's copies write into d_packed_, allocated on stream_.
  SIEVE_CUDA_TRY(cudaEventRecord(lane_.events[0], stream_));
  SIEVE_CUDA_TRY(cudaStreamWaitEvent(lane_.stream, lane_.events[0], 0));
  const char* from = reinterpret_cast<const char*>(h_filter_) + pk.off_lows;
  char* to = d_packed_.get() + pk.off_lows;
  for (uint32_t g = 0; g < pk.groups; ++g) {
    const size_t at = pk.group_lows[g] * 2, n = (pk.group_lows[g + 1] - pk.group_lows[g]) * 2;
    cudaError_t err = n == 0 ? cudaSuccess
                             : cudaMemcpyAsync(to + at, from + at, n, cudaMemcpyHostToDevice,
                                               lane_.stream);
    if (err == cudaSuccess) err = cudaEventRecord(lane_.events[g + 1], lane_.stream);
    if (err != cudaSuccess) {
      // Copies already issued must end before d_packed_ is freed.
      (void)cudaStreamSynchronize(lane_.stream);
      return FromCuda(err, "upload of a filter's lists");
    }
  }
  copies_issued_ = true;
  return Status::OK();
}

Status DeviceRun::ExpandListGroup(uint32_t g) {
  const Prepared& p = p_;
  const PackedFilters& pk = p.packed;
  SIEVE_CUDA_TRY(cudaStreamWaitEvent(stream_, lane_.events[g + 1], 0));
  const uint32_t c0 = pk.group_chunks[g], c1 = pk.group_chunks[g + 1];
  const dim3 grid(GridDim(c1 - c0), GridDim(p.nq));
  ExpandListsKernel<<<grid, 256, 0, stream_>>>(ViewOf(d_packed_.get(), p), nullptr, starts_, p.nq,
                                               c0, c1, d_ids_.get());
  SIEVE_CUDA_CHECK_LAUNCH("ExpandListsKernel");
  return Status::OK();
}

Status DeviceRun::UnpackFilters() {
  const Prepared& p = p_;
  const PackedFilters& pk = p.packed;
  const PackedView f = ViewOf(d_packed_.get(), p);
  const dim3 grid(GridDim(pk.chunks), GridDim(p.nq));

  if (p.path == SearchPath::kSddmm) {
    SIEVE_RETURN_IF_ERROR(d_ids_.Allocate(std::max<uint64_t>(p.total_passing, 1), stream_));
    n_ids_ = p.total_passing;
    // Grouped, the SDDMM expands each group as it lands (ExpandListGroup).
    if (Grouped()) return Status::OK();
    DeviceBuffer<uint32_t> bitset_ids;
    if (pk.bitset_ids > 0) {
      SIEVE_RETURN_IF_ERROR(Compact(f.bitsets, static_cast<int64_t>(pk.bitset_slots * p.words),
                                    pk.bitset_ids, &bitset_ids));
    }
    ExpandListsKernel<<<grid, 256, 0, stream_>>>(f, bitset_ids.get(), starts_, p.nq, 0,
                                                 pk.chunks, d_ids_.get());
    SIEVE_CUDA_CHECK_LAUNCH("ExpandListsKernel");
    Mark("unpack");
    return Status::OK();
  }

  SIEVE_RETURN_IF_ERROR(d_filter_.Allocate(p.filter_words, stream_));
  ExpandBitmapKernel<<<grid, 256, 0, stream_>>>(f, p.nq, d_filter_.get());
  SIEVE_CUDA_CHECK_LAUNCH("ExpandBitmapKernel");
  Mark("unpack");
  if (p.path != SearchPath::kGather) return Status::OK();
  DeviceBuffer<uint32_t> union_words;
  SIEVE_RETURN_IF_ERROR(union_words.Allocate(p.words, stream_));
  UnionRowsKernel<<<GridFor(static_cast<int64_t>(p.words), 256), 256, 0, stream_>>>(
      d_filter_.get(), p.nq, f.words, union_words.get());
  SIEVE_CUDA_CHECK_LAUNCH("UnionRowsKernel");
  SIEVE_RETURN_IF_ERROR(
      Compact(union_words.get(), static_cast<int64_t>(p.words), p.union_count, &d_ids_));
  n_ids_ = p.union_count;
  Mark("compact");
  return Status::OK();
}

}  // namespace sieve::gpu::detail
