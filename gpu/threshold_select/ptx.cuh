// Copyright 2026 The Sieve Authors.
//
// PTX wrappers of the threshold select: shared-memory addresses, cp.async, ldmatrix,
// shared-memory barriers, the tensor memory accelerator and mma.sync.

#ifndef SIEVE_GPU_THRESHOLD_SELECT_PTX_CUH_
#define SIEVE_GPU_THRESHOLD_SELECT_PTX_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace sieve::gpu::detail::ts {

// PTX wrappers (sm_80+).

__device__ __forceinline__ uint32_t SmemAddr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void CpAsync16(void* smem, const void* gmem) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(SmemAddr(smem)), "l"(gmem));
}
__device__ __forceinline__ void LdMatrixX4At(uint32_t (&r)[4], uint32_t smem_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr));
}
__device__ __forceinline__ void LdMatrixX4(uint32_t (&r)[4], const void* smem) {
  LdMatrixX4At(r, SmemAddr(smem));
}
// Shared-memory barriers (sm_80+): a stage's "full" barrier completes when the copies of its
// page have landed, its "empty" barrier when every warp has read it (PipelineSweep).
__device__ __forceinline__ void MbarInit(uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(SmemAddr(bar)), "r"(count));
}
// Arrives on bar once this thread's earlier cp.async copies have completed.
__device__ __forceinline__ void MbarArriveOnCopies(uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(SmemAddr(bar))
               : "memory");
}
__device__ __forceinline__ void MbarArrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(SmemAddr(bar)) : "memory");
}
// Waits until the phase of bar with this parity has completed.
__device__ __forceinline__ void MbarWait(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred done;\nwait:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait;\n}\n" ::"r"(SmemAddr(bar)),
      "r"(parity)
      : "memory");
}

// The tensor memory accelerator (sm_90): bulk copies into shared memory that complete a
// transaction count on a shared-memory barrier. Elsewhere these trap; the host passes page maps
// only for a compute capability 9 device and a build with sm_90 code (ChooseKernel).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define SIEVE_TMA_DEVICE 1
#endif
// Arrives on bar and adds `bytes` to the transactions its phase waits for.
__device__ __forceinline__ void MbarArriveExpectTx(uint64_t* bar, uint32_t bytes) {
#ifdef SIEVE_TMA_DEVICE
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(SmemAddr(bar)),
               "r"(bytes)
               : "memory");
#else
  __trap();
#endif
}
// Box (x, y) of the tensor map at `map` (a global address) into dst, completing on bar.
__device__ __forceinline__ void TmaLoad2d(void* dst, const void* map, int x, int y, uint64_t* bar) {
#ifdef SIEVE_TMA_DEVICE
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(SmemAddr(dst)),
      "l"(map), "r"(x), "r"(y), "r"(SmemAddr(bar))
      : "memory");
#else
  __trap();
#endif
}
// `bytes` (a multiple of 16) contiguous bytes from global src into dst, completing on bar.
__device__ __forceinline__ void BulkLoad(void* dst, const void* src, uint32_t bytes,
                                         uint64_t* bar) {
#ifdef SIEVE_TMA_DEVICE
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
      ::"r"(SmemAddr(dst)), "l"(src), "r"(bytes), "r"(SmemAddr(bar))
      : "memory");
#else
  __trap();
#endif
}
// Orders this thread's shared-memory accesses so far (generic proxy) before later ones of the
// async proxy (TMA writes over the stages Init zeroed).
__device__ __forceinline__ void FenceProxyAsync() {
#ifdef SIEVE_TMA_DEVICE
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

template <typename T>
__device__ __forceinline__ void Mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                    uint32_t b1) {
  if constexpr (std::is_same_v<T, __half>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

}  // namespace sieve::gpu::detail::ts

#endif  // SIEVE_GPU_THRESHOLD_SELECT_PTX_CUH_
