// Copyright 2026 The Sieve Authors.
//
// PagePool (gpu/page_pool.h): slab rounding, allocation across several slabs, released
// pages taken again, and Write through a permuted table (starting mid-page) read back byte for
// byte through the slab table, with the squared norms of the stored values, and the page maps
// of the slabs (those of float16 keys of 24 dims; none for the others). float16, bfloat16 and
// float32. Skipped without a CUDA device (but for the argument checks that need none).

#if SIEVE_GPU_BACKEND

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gpu/page_pool.h"
#include "gpu/threshold_select/threshold_select.h"

namespace sieve {
namespace {

using gpu::KeyType;
using gpu::kPageRows;
using gpu::PagePool;

bool HaveDevice() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

// The bits the pool stores for v (round to nearest even; no NaN in these tests).
uint32_t StoredBits(KeyType type, float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  switch (type) {
    case KeyType::kFloat16: {
      const _Float16 h = static_cast<_Float16>(v);
      uint16_t b;
      std::memcpy(&b, &h, 2);
      return b;
    }
    case KeyType::kBFloat16:
      return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    default:
      return u;
  }
}

float StoredValue(KeyType type, uint32_t bits) {
  switch (type) {
    case KeyType::kFloat16: {
      const uint16_t b = static_cast<uint16_t>(bits);
      _Float16 h;
      std::memcpy(&h, &b, 2);
      return static_cast<float>(h);
    }
    case KeyType::kBFloat16: {
      const uint32_t u = bits << 16;
      float f;
      std::memcpy(&f, &u, 4);
      return f;
    }
    default: {
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
  }
}

TEST(PagePoolTest, RejectsBadArguments) {
  std::unique_ptr<PagePool> pool;
  EXPECT_TRUE(PagePool::Create(KeyType::kFloat16, 0, 1 << 20, &pool).IsInvalidArgument());
  EXPECT_EQ(pool, nullptr);
  // Page maps are for the tensor-core kernel's keys only, and need a slab and aligned output.
  EXPECT_TRUE(gpu::ThresholdSelectUsesTensorCores(KeyType::kBFloat16, 256));
  EXPECT_FALSE(gpu::ThresholdSelectUsesTensorCores(KeyType::kFloat16, 20));
  EXPECT_FALSE(gpu::ThresholdSelectUsesTensorCores(KeyType::kFloat16, 264));
  EXPECT_FALSE(gpu::ThresholdSelectUsesTensorCores(KeyType::kFloat32, 64));
  alignas(64) unsigned char map[gpu::kPageMapBytes];
  alignas(16) static const float slab[16] = {};
  EXPECT_TRUE(gpu::EncodePageMap(KeyType::kFloat32, 64, slab, 64, map).IsInvalidArgument());
  EXPECT_TRUE(gpu::EncodePageMap(KeyType::kFloat16, 64, nullptr, 64, map).IsInvalidArgument());
  EXPECT_TRUE(gpu::EncodePageMap(KeyType::kFloat16, 64, slab, 0, map).IsInvalidArgument());
  EXPECT_TRUE(gpu::EncodePageMap(KeyType::kFloat16, 64, slab, 64, map + 1).IsInvalidArgument());
  if (!HaveDevice()) GTEST_SKIP() << "no CUDA device";
  ASSERT_TRUE(PagePool::Create(KeyType::kFloat32, 8, 1 << 20, &pool).ok());
  std::vector<int32_t> pages;
  ASSERT_TRUE(pool->Allocate(2, &pages).ok());
  std::vector<float> rows(size_t{3} * kPageRows * 8, 1.0f);
  cudaStream_t stream = nullptr;
  // The table covers 128 rows, not 129.
  EXPECT_TRUE(pool->Write(pages, 1, rows.data(), 2 * kPageRows, stream).IsInvalidArgument());
  // A page this pool never handed out.
  std::vector<int32_t> bad = {pages[0], 7};
  EXPECT_TRUE(pool->Write(bad, 0, rows.data(), 2 * kPageRows, stream).IsInvalidArgument());
  EXPECT_TRUE(pool->Write(pages, 0, rows.data(), 2 * kPageRows, stream).ok());
}

TEST(PagePoolTest, AllocateReleaseWriteReadBack) {
  if (!HaveDevice()) GTEST_SKIP() << "no CUDA device";
  struct Case {
    KeyType type;
    uint32_t dim;
    uint32_t pages_per_slab;  // of a 64 KiB slab, rounded down to a power of two
  };
  for (const Case& c : {Case{KeyType::kFloat16, 20, 16}, Case{KeyType::kBFloat16, 3, 128},
                        Case{KeyType::kFloat32, 16, 16}, Case{KeyType::kFloat16, 24, 16}}) {
    SCOPED_TRACE("type " + std::to_string(static_cast<int>(c.type)) + " dim " +
                 std::to_string(c.dim));
    const size_t elem = gpu::KeyTypeBytes(c.type);
    const size_t page_bytes = size_t{kPageRows} * c.dim * elem;
    std::unique_ptr<PagePool> pool;
    ASSERT_TRUE(PagePool::Create(c.type, c.dim, 64 << 10, &pool).ok());
    EXPECT_EQ(pool->pages_per_slab(), c.pages_per_slab);
    EXPECT_EQ(pool->type(), c.type);
    EXPECT_EQ(pool->dim(), c.dim);
    EXPECT_EQ(pool->capacity_pages(), 0u);

    const uint32_t pps = c.pages_per_slab;
    const uint32_t n1 = 2 * pps + 8;  // three slabs
    std::vector<int32_t> first;
    ASSERT_TRUE(pool->Allocate(n1, &first).ok());
    ASSERT_EQ(first.size(), n1);
    EXPECT_EQ(pool->capacity_pages(), 3u * pps);
    std::vector<int32_t> released = {first[1], first[pps], first[n1 - 1]};
    pool->Release(released);
    EXPECT_EQ(pool->allocated_pages(), n1 - 3);
    std::vector<int32_t> table;
    for (int32_t p : first) {
      if (std::find(released.begin(), released.end(), p) == released.end()) table.push_back(p);
    }
    ASSERT_TRUE(pool->Allocate(3 + pps, &table).ok());  // the released three, then a fourth slab
    const uint32_t n_pages = n1 + pps;
    ASSERT_EQ(table.size(), n_pages);
    EXPECT_EQ(pool->allocated_pages(), n_pages);
    EXPECT_EQ(pool->capacity_pages(), 4u * pps);
    EXPECT_EQ(std::set<int32_t>(table.begin(), table.end()).size(), n_pages);
    EXPECT_GE(pool->device_bytes(), 4 * pps * (page_bytes + kPageRows * sizeof(float)));
    for (int32_t p : table) {
      ASSERT_GE(p, 0);
      ASSERT_LT(static_cast<uint32_t>(p), 4 * pps);
    }
    std::mt19937_64 rng(17);
    std::shuffle(table.begin(), table.end(), rng);

    // Rows 0 .. n_pages * 64 - 5, written in two pieces, the second starting mid-page.
    const uint64_t n_rows = uint64_t{n_pages} * kPageRows - 5;
    std::vector<float> rows(n_rows * c.dim);
    std::uniform_real_distribution<float> u(-3.0f, 3.0f);
    for (float& v : rows) v = u(rng);
    cudaStream_t stream = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
    const uint64_t split = 3 * kPageRows + 17;
    Status st = pool->Write(table, 0, rows.data(), split, stream);
    ASSERT_TRUE(st.ok()) << st.ToString();
    st = pool->Write(table, split, rows.data() + split * c.dim, n_rows - split, stream);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);

    // Read back through the slab table.
    const gpu::PagedKeys keys = pool->view();
    EXPECT_EQ(keys.type, c.type);
    EXPECT_EQ(keys.dim, c.dim);
    EXPECT_EQ(uint32_t{1} << keys.slab_pages_log2, pps);
    std::vector<const void*> slabs(4);
    ASSERT_EQ(cudaMemcpy(slabs.data(), keys.slabs, 4 * sizeof(void*), cudaMemcpyDeviceToHost),
              cudaSuccess);
    std::vector<float> norms(size_t{4} * pps * kPageRows);
    ASSERT_EQ(cudaMemcpy(norms.data(), keys.sq_norms, norms.size() * sizeof(float),
                         cudaMemcpyDeviceToHost),
              cudaSuccess);
    // One page map a slab, in slab order, where the keys take them: each the map of its slab
    // (rows of 64 pages), byte for byte.
    if (gpu::ThresholdSelectUsesTensorCores(c.type, c.dim)) {
      ASSERT_NE(keys.page_maps, nullptr);
      std::vector<unsigned char> maps(4 * gpu::kPageMapBytes);
      ASSERT_EQ(cudaMemcpy(maps.data(), keys.page_maps, maps.size(), cudaMemcpyDeviceToHost),
                cudaSuccess);
      for (int s = 0; s < 4; ++s) {
        alignas(64) unsigned char want[gpu::kPageMapBytes];
        ASSERT_TRUE(
            gpu::EncodePageMap(c.type, c.dim, slabs[s], uint64_t{pps} * kPageRows, want).ok());
        EXPECT_EQ(std::memcmp(want, maps.data() + s * gpu::kPageMapBytes, gpu::kPageMapBytes), 0)
            << "page map of slab " << s;
      }
    } else {
      EXPECT_EQ(keys.page_maps, nullptr);
    }
    std::vector<uint8_t> page(page_bytes);
    for (uint64_t b = 0; b < n_pages; ++b) {
      const uint32_t p = static_cast<uint32_t>(table[b]);
      const uint8_t* src =
          static_cast<const uint8_t*>(slabs[p / pps]) + size_t{p % pps} * page_bytes;
      ASSERT_EQ(cudaMemcpy(page.data(), src, page_bytes, cudaMemcpyDeviceToHost), cudaSuccess);
      for (uint32_t slot = 0; slot < kPageRows; ++slot) {
        const uint64_t r = b * kPageRows + slot;
        if (r >= n_rows) break;
        double acc = 0;
        for (uint32_t d = 0; d < c.dim; ++d) {
          uint32_t got = 0;
          std::memcpy(&got, &page[(size_t{slot} * c.dim + d) * elem], elem);
          const uint32_t want = StoredBits(c.type, rows[r * c.dim + d]);
          ASSERT_EQ(got, want) << "row " << r << " dim " << d << " (page " << p << ")";
          const double v = StoredValue(c.type, want);
          acc += v * v;
        }
        const float n = norms[size_t{p} * kPageRows + slot];
        ASSERT_NEAR(n, acc, 1e-5 * acc + 1e-6) << "norm of row " << r;
      }
    }
  }
}

}  // namespace
}  // namespace sieve

#endif  // SIEVE_GPU_BACKEND
