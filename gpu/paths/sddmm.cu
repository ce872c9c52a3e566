// Copyright 2026 The Sieve Authors.
//
// The SDDMM path: distances of only the (query, passing row) pairs, from the compacted lists
// (one for the batch, or one per query), then select_k over them.

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "gpu/cuda_status.cuh"
#include "gpu/device_run.cuh"
#include "gpu/memory.cuh"
#include "gpu/paths/distance.cuh"
#include "gpu/resident_rows.cuh"

namespace sieve::gpu::detail {

struct SddmmArgs {
  ResidentRows rows;            // resident rows (T)
  const float* x_sq_norms;      // by ordinal
  int dim;
  const float* queries;         // m × dim float32
  const float* q_sq_norms;      // m
  int m;
  const uint32_t* ids;          // passing ordinals
  const uint64_t* starts;       // per-query lists: query q's are ids[starts[q], starts[q+1])
  int64_t n_shared;             // one shared list of this length when starts == nullptr
  int64_t ld;                   // output row length
  // SddmmVecKernel only, per-query lists: nullable; query q covers list positions
  // [seg[2q], seg[2q + 1]) (a row range of the lists: PackedFilters::groups), positions past
  // its list's length getting the sentinel; else [0, ld).
  const uint64_t* seg;
  int64_t span;                 // positions a query covers at the most: ld, or the segments'
  int metric;
  float sentinel;
  float* out;                   // m × ld; out[q][p] = distance of q to its p-th listed row
  // SddmmVecKernel only: > 0 when its grid is one-dimensional with the query groups fastest
  // (block b is group b % query_blocks at list block b / query_blocks), else 0 (x: list block,
  // y: group).
  unsigned query_blocks;
  int tiles;                    // SddmmVecKernel only: tiles a block takes (LaunchSddmmVec)
};

// One warp per listed row: it reads the row once and takes its dot with QB queries (a group of
// the batch when the list is shared; QB = 1 with per-query lists). Slots past a query's list
// get the sentinel.
template <typename T, int QB>
__global__ void __launch_bounds__(256) SddmmKernel(SddmmArgs a) {
  const int lane = threadIdx.x & 31;
  const int64_t p = static_cast<int64_t>(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (p >= a.ld) return;
  const int q0 = blockIdx.y * QB;
  uint32_t id;
  if (a.starts != nullptr) {
    const uint64_t begin = a.starts[q0];
    const int64_t len = static_cast<int64_t>(a.starts[q0 + 1] - begin);
    if (p >= len) {
      if (lane == 0) a.out[static_cast<int64_t>(q0) * a.ld + p] = a.sentinel;
      return;
    }
    id = a.ids[begin + p];
  } else {
    if (p >= a.n_shared) {
      if (lane < QB && q0 + lane < a.m) a.out[static_cast<int64_t>(q0 + lane) * a.ld + p] = a.sentinel;
      return;
    }
    id = a.ids[p];
  }
  const T* x = RowAt<T>(a.rows, id, a.dim);
  const int nq = min(QB, a.m - q0);
  float acc[QB];
#pragma unroll
  for (int i = 0; i < QB; ++i) acc[i] = 0.0f;
  for (int j = lane; j < a.dim; j += 32) {
    const float xv = ToFloat(x[j]);
#pragma unroll
    for (int i = 0; i < QB; ++i) {
      if (i < nq) acc[i] = fmaf(xv, a.queries[static_cast<int64_t>(q0 + i) * a.dim + j], acc[i]);
    }
  }
#pragma unroll
  for (int i = 0; i < QB; ++i) {
    for (int off = 16; off > 0; off >>= 1) acc[i] += __shfl_xor_sync(0xffffffffu, acc[i], off);
  }
  if (lane == 0) {
    const float xn2 = a.x_sq_norms[id];
#pragma unroll
    for (int i = 0; i < QB; ++i) {
      if (i < nq) {
        a.out[static_cast<int64_t>(q0 + i) * a.ld + p] =
            FinishDistance(a.metric, acc[i], a.q_sq_norms[q0 + i], xn2);
      }
    }
  }
}

// Elements 4 v4 .. 4 v4 + 3 of 16 bytes of a row, as floats.
template <typename T>
__device__ __forceinline__ float4 Unpack4(const uint4& raw, int v4);
template <>
__device__ __forceinline__ float4 Unpack4<__half>(const uint4& raw, int v4) {
  const __half2* h = reinterpret_cast<const __half2*>(&raw);
  const float2 a = __half22float2(h[2 * v4]), b = __half22float2(h[2 * v4 + 1]);
  return make_float4(a.x, a.y, b.x, b.y);
}
template <>
__device__ __forceinline__ float4 Unpack4<float>(const uint4& raw, int) {
  return make_float4(__uint_as_float(raw.x), __uint_as_float(raw.y), __uint_as_float(raw.z),
                     __uint_as_float(raw.w));
}

// SddmmKernel with 16-byte loads, for rows of a multiple of 16 bytes: L lanes (a power of two
// up to 32) share a listed row, each reading its 16-byte chunks c ≡ lane (mod L), and each
// group of L lanes takes R rows at a time (list positions p0 + j·G, G = groups in the block)
// whose loads are in flight together; the lanes of a row then sum their partial dots. A block
// takes a.tiles such tiles of consecutive positions, the next tile's ids loaded while the
// current tile's rows and norms are: one memory round trip a tile instead of three.
template <typename T, int QB, int L, int R>
__global__ void __launch_bounds__(256) SddmmVecKernel(SddmmArgs a) {
  constexpr int V = 16 / sizeof(T);
  const int sub = threadIdx.x & (L - 1);
  const int groups = blockDim.x / L;
  const unsigned list_block = a.query_blocks ? blockIdx.x / a.query_blocks : blockIdx.x;
  const unsigned group = a.query_blocks ? blockIdx.x % a.query_blocks : blockIdx.y;
  const int q0 = static_cast<int>(group) * QB;
  const int nq = min(QB, a.m - q0);
  uint64_t begin = 0;
  int64_t len = a.n_shared, lo = 0, limit = a.ld;
  if (a.starts != nullptr) {
    begin = a.starts[q0];
    len = static_cast<int64_t>(a.starts[q0 + 1] - begin);
  }
  if (a.seg != nullptr) {
    lo = static_cast<int64_t>(a.seg[2 * q0]);
    limit = static_cast<int64_t>(a.seg[2 * q0 + 1]);
  }
  // Positions are offsets from the block's first (at most a.tiles · tile_rows of them), its
  // bounds clamped to that range.
  const int tile_rows = groups * R;
  const int64_t block0 = lo + static_cast<int64_t>(list_block) * a.tiles * tile_rows;
  const int block_span = a.tiles * tile_rows;
  auto clamp_off = [&](int64_t bound) {
    const int64_t d = bound - block0;
    return static_cast<int>(d < 0 ? 0 : d > block_span ? block_span : d);
  };
  const int lim = clamp_off(limit);
  const int end = clamp_off(len);
  const uint32_t* ids = a.ids + begin + block0;
  const int lane_off = static_cast<int>(threadIdx.x) / L;
  // Per row, 0 = nothing to write, 1 = sentinels, 2 = a row.
  auto state_of = [&](int off) { return off >= lim ? 0 : off < end ? 2 : 1; };
  auto load_ids = [&](int t, uint32_t (&out)[R]) {
#pragma unroll
    for (int j = 0; j < R; ++j) {
      const int off = lane_off + t * tile_rows + j * groups;
      out[j] = off < min(lim, end) ? ids[off] : 0;
    }
  };
  uint32_t id[R], next[R] = {};
  load_ids(0, id);
  for (int t = 0; t < a.tiles && t * tile_rows < lim; ++t) {
    // Every lane stays for the shuffles (the loop's bound is the block's).
    const uint4* x[R];
    float xn2[R];
#pragma unroll
    for (int j = 0; j < R; ++j) {
      const bool row = state_of(lane_off + t * tile_rows + j * groups) == 2;
      x[j] = row ? reinterpret_cast<const uint4*>(RowAt<T>(a.rows, id[j], a.dim)) : nullptr;
      xn2[j] = row && sub == 0 ? __ldg(a.x_sq_norms + id[j]) : 0.0f;
    }
    float acc[QB][R];
#pragma unroll
    for (int i = 0; i < QB; ++i) {
#pragma unroll
      for (int j = 0; j < R; ++j) acc[i][j] = 0.0f;
    }
    const int chunks = a.dim / V;
    for (int c = sub; c < chunks; c += L) {
      uint4 raw[R];
#pragma unroll
      for (int j = 0; j < R; ++j) raw[j] = x[j] != nullptr ? __ldg(x[j] + c) : make_uint4(0, 0, 0, 0);
      // Issued behind the rows' loads, so that both are in flight together.
      if (c == sub && t + 1 < a.tiles) load_ids(t + 1, next);
#pragma unroll
      for (int i = 0; i < QB; ++i) {
        if (i >= nq) continue;
        const float4* qv = reinterpret_cast<const float4*>(
            a.queries + static_cast<int64_t>(q0 + i) * a.dim + static_cast<int64_t>(c) * V);
#pragma unroll
        for (int v4 = 0; v4 < V / 4; ++v4) {
          const float4 q = __ldg(qv + v4);
#pragma unroll
          for (int j = 0; j < R; ++j) {
            const float4 xv = Unpack4<T>(raw[j], v4);
            acc[i][j] = fmaf(xv.x, q.x, acc[i][j]);
            acc[i][j] = fmaf(xv.y, q.y, acc[i][j]);
            acc[i][j] = fmaf(xv.z, q.z, acc[i][j]);
            acc[i][j] = fmaf(xv.w, q.w, acc[i][j]);
          }
        }
      }
    }
    // A lane with no chunk of its own (dim / V < L) still loads the next ids.
    if (sub >= chunks && t + 1 < a.tiles) load_ids(t + 1, next);
#pragma unroll
    for (int i = 0; i < QB; ++i) {
#pragma unroll
      for (int j = 0; j < R; ++j) {
#pragma unroll
        for (int off = L / 2; off > 0; off >>= 1) {
          acc[i][j] += __shfl_xor_sync(0xffffffffu, acc[i][j], off);
        }
      }
    }
    if (sub == 0) {
#pragma unroll
      for (int j = 0; j < R; ++j) {
        const int off = lane_off + t * tile_rows + j * groups;
        const int state = state_of(off);
        if (state == 0) continue;
#pragma unroll
        for (int i = 0; i < QB; ++i) {
          if (i < nq) {
            a.out[static_cast<int64_t>(q0 + i) * a.ld + block0 + off] =
                state == 2 ? FinishDistance(a.metric, acc[i][j], a.q_sq_norms[q0 + i], xn2[j])
                           : a.sentinel;
          }
        }
      }
    }
#pragma unroll
    for (int j = 0; j < R; ++j) id[j] = next[j];
  }
}

// Launches SddmmVecKernel over query_blocks groups of QB queries, with L lanes a row: the
// smallest power of two covering the row's 16-byte chunks (at most 32). The groups run fastest,
// so the blocks in flight read the same stretch of every list: rows listed for several queries
// (and a shared list's rows) come from L2 after the first read. A block takes more tiles where
// there are blocks enough to fill the device many times over, and its lanes take one chunk of a
// row each (longer rows keep more loads in flight a lane already, and measured no faster).
// A launch whose blocks take several tiles is counted in counts->sddmm_tiled_launches.
template <typename T, int QB>
void LaunchSddmmVec(SddmmArgs a, unsigned query_blocks, int sm_count, GpuPathCounts* counts,
                    cudaStream_t stream) {
  const int chunks = a.dim * static_cast<int>(sizeof(T)) / 16;
  int lanes = 1;
  while (lanes < chunks && lanes < 32) lanes *= 2;
  constexpr int kRowsPerGroup = 4;
  constexpr int64_t kMaxTiles = 8;
  const int64_t tile_rows = 256 / lanes * kRowsPerGroup;
  const int64_t tiles_needed = (a.span + tile_rows - 1) / tile_rows;
  const int64_t fill = int64_t{std::max(sm_count, 1)} * 32;
  a.tiles = chunks > lanes ? 1
                           : static_cast<int>(std::clamp<int64_t>(
                                 tiles_needed * query_blocks / fill, 1, kMaxTiles));
  const int64_t list_blocks = (tiles_needed + a.tiles - 1) / a.tiles;
  dim3 grid(static_cast<unsigned>(list_blocks), query_blocks);
  a.query_blocks = 0;
  if (list_blocks * query_blocks <= int64_t{INT32_MAX}) {
    grid = dim3(static_cast<unsigned>(list_blocks * query_blocks));
    a.query_blocks = query_blocks;
  }
  switch (lanes) {
    case 1: SddmmVecKernel<T, QB, 1, kRowsPerGroup><<<grid, 256, 0, stream>>>(a); break;
    case 2: SddmmVecKernel<T, QB, 2, kRowsPerGroup><<<grid, 256, 0, stream>>>(a); break;
    case 4: SddmmVecKernel<T, QB, 4, kRowsPerGroup><<<grid, 256, 0, stream>>>(a); break;
    case 8: SddmmVecKernel<T, QB, 8, kRowsPerGroup><<<grid, 256, 0, stream>>>(a); break;
    case 16: SddmmVecKernel<T, QB, 16, kRowsPerGroup><<<grid, 256, 0, stream>>>(a); break;
    default: SddmmVecKernel<T, QB, 32, kRowsPerGroup><<<grid, 256, 0, stream>>>(a); break;
  }
  if (a.tiles > 1) ++counts->sddmm_tiled_launches;
}

Status DeviceRun::Sddmm(uint32_t q0, uint32_t m) {
  const Prepared& p = p_;
  const uint64_t* starts = p.per_query ? starts_ + q0 : nullptr;
  const int64_t ld = static_cast<int64_t>(p.per_query ? p.max_passing : p.total_passing);
  if (ld == 0) return Status::OK();
  DeviceBuffer<float> dist;
  SIEVE_RETURN_IF_ERROR(dist.Allocate(size_t{m} * ld, stream_));
  SddmmArgs a;
  a.rows = p.shard->resident();
  a.x_sq_norms = p.shard->sq_norms();
  a.dim = static_cast<int>(p.dim);
  a.queries = queries_ + size_t{q0} * p.dim;
  a.q_sq_norms = qnorms_ + q0;
  a.m = static_cast<int>(m);
  a.ids = d_ids_.get();
  a.starts = starts;
  a.n_shared = ld;
  a.ld = ld;
  a.seg = nullptr;
  a.span = ld;
  a.metric = p.metric;
  a.sentinel = p.sentinel;
  a.out = dist.get();
  a.query_blocks = 0;
  a.tiles = 1;
  constexpr int kWarps = 8;
  constexpr int kQb = 4;
  const bool half = p.shard->dtype == DType::kFloat16;
  dim3 block(32 * kWarps);
  const size_t row_bytes = size_t{p.dim} * (half ? 2 : 4);
  // 16-byte loads (the rows, and the float32 queries, are 16-byte aligned).
  auto launch_vec = [&]() {
    if (p.per_query && half) {
      LaunchSddmmVec<__half, 1>(a, m, sm_count_, counts_, stream_);
    } else if (p.per_query) {
      LaunchSddmmVec<float, 1>(a, m, sm_count_, counts_, stream_);
    } else if (half) {
      LaunchSddmmVec<__half, kQb>(a, (m + kQb - 1) / kQb, sm_count_, counts_, stream_);
    } else {
      LaunchSddmmVec<float, kQb>(a, (m + kQb - 1) / kQb, sm_count_, counts_, stream_);
    }
  };
  if (Grouped()) {
    // A row range of every query's list at a time, each as soon as its lists have landed.
    if (q0 != 0 || m != p.nq || row_bytes % 16 != 0) {
      return Status::Internal("grouped lists need one chunk of every query and 16-byte rows");
    }
    const auto* segments =
        reinterpret_cast<const uint64_t*>(d_packed_.get() + p.packed.off_segments);
    for (uint32_t g = 0; g < p.packed.groups; ++g) {
      SIEVE_RETURN_IF_ERROR(ExpandListGroup(g));
      a.seg = segments + size_t{g} * p.nq * 2;
      a.span = static_cast<int64_t>(p.packed.group_span[g]);
      if (a.span == 0) continue;
      launch_vec();
      SIEVE_CUDA_CHECK_LAUNCH("SddmmVecKernel");
    }
  } else if (row_bytes % 16 == 0) {
    launch_vec();
  } else if (p.per_query) {
    dim3 grid(static_cast<unsigned>((ld + kWarps - 1) / kWarps), m);
    if (half) {
      SddmmKernel<__half, 1><<<grid, block, 0, stream_>>>(a);
    } else {
      SddmmKernel<float, 1><<<grid, block, 0, stream_>>>(a);
    }
  } else {
    dim3 grid(static_cast<unsigned>((ld + kWarps - 1) / kWarps), (m + kQb - 1) / kQb);
    if (half) {
      SddmmKernel<__half, kQb><<<grid, block, 0, stream_>>>(a);
    } else {
      SddmmKernel<float, kQb><<<grid, block, 0, stream_>>>(a);
    }
  }
  SIEVE_CUDA_CHECK_LAUNCH("SddmmKernel");
  Mark("sddmm");

  const int kf = static_cast<int>(std::min<int64_t>(p.k, ld));
  DeviceBuffer<float> vals;
  DeviceBuffer<uint32_t> pos, ids;
  SIEVE_RETURN_IF_ERROR(ids.Allocate(size_t{m} * kf, stream_));
  // With no more listed rows than k every one is a result (the host orders them): no select.
  const bool keep_all = kf == ld;
  if (!keep_all) {
    SIEVE_RETURN_IF_ERROR(vals.Allocate(size_t{m} * kf, stream_));
    SIEVE_RETURN_IF_ERROR(pos.Allocate(size_t{m} * kf, stream_));
    SIEVE_RETURN_IF_ERROR(
        select_->Select(dist.get(), m, ld, kf, p.select_min, vals.get(), pos.get()));
  }
  MapArgs map{};
  map.pos = keep_all ? nullptr : pos.get();
  map.m = static_cast<int>(m);
  map.kf = kf;
  map.table = d_ids_.get();
  map.starts = starts;
  map.ids_out = ids.get();
  map.out_ld = kf;
  SIEVE_RETURN_IF_ERROR(Map(map));
  return Download(q0, m, kf, keep_all ? dist.get() : vals.get(), ids.get());
}

}  // namespace sieve::gpu::detail
