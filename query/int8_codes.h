// Copyright 2026 The Sieve Authors.
//
// Int8 codes of vectors and the deterministic bound that keeps a scan of them exact.
//
// A vector x of dim floats is coded symmetrically: scale s = max_j |x_j| / 127 (float32
// division), code q_j = rint(x_j / s) clamped to [-127, 127] (0 when s is 0), and x = s q + r
// holds exactly for the residual r = x - s q whatever s was rounded to. For a row x and a query
// y, the int32 dot q_x · q_y is exact (|q_x · q_y| <= 127² · kInt8MaxDim < 2^31), and
//
//   x · y = s_x s_y (q_x · q_y) + s_x q_x · r_y + r_x · y,
//   |x · y - s_x s_y (q_x · q_y)| <= s_x |q_x| |r_y| + |r_x| |y|          (Cauchy-Schwarz).
//
// What a device computes is the estimate est = fl(fl(q_x · q_y) · fl(s_x · s_y)): three float32
// roundings, each fl(a b) = a b (1 + d) + h with |d| <= 2^-24 and |h| <= 2^-150 (denormals are
// kept: the build uses neither fast math nor flush-to-zero). With |q_x · q_y| < 2^30, that is
// |est - s_x s_y (q_x · q_y)| <= 3 · 2^-24 (1 + 2^-23) |s_x q_x| |s_y q_y| + 2^-119 (the scales'
// product's h times at most 2^30 (1 + 2^-23), and the last product's h). Hence, with the
// per-vector terms of Int8Terms (each rounded up),
//
//   |x · y - est| <= a_x A_y + b_x B_y + 2^-118,
//   a_x = s_x |q_x|, b_x = |r_x|; A_y = |r_y| + 2^-22 a_y, B_y = |y|                    (*)
//
// (2^-22 > 3 · 2^-24 (1 + 2^-23); 2^-118 > 2^-119 plus what the roundings of (*) itself may
// lose below float32's normal range). The terms are computed in float64 from
// the float32 inputs (each s q_j product exact, each difference and the sum of squares within
// dim · 2^-53 of its value), widened by 2^-30 and rounded up to float32, so each is an upper
// bound for dim <= kInt8MaxDim. Int8DotError evaluates (*) in float32 with round-to-nearest
// operations on non-negative values, five roundings of at most 2^-24 each, and widens it by
// 2^-20 > (1 - 2^-24)^-5 - 1: the float result is never below (*)'s right side.
//
// The scan compares est against a float32 reference, not the true dot: the candidate scan's
// sample threshold and the exact rescore multiply in float32 (float16 rows: the query's two
// float16 halves, which carry 22 of its 24 bits). Each is within gamma_dim |x| |y| of the true
// dot (gamma_n = n 2^-24 / (1 - n 2^-24), the classic bound of a float32 sum of n products), so
// Int8ReferenceError adds 2 gamma_dim + 2^-21 of |x| |y|. Distances then follow the metric
// (Int8DistanceError): ip the dot's error; l2 = |x|² + |y|² - 2 x·y twice it plus the finishing
// roundings (2^-20 (|x|² + |y|²), the bound the other candidate scans use); cosine
// (1 - x·y / (|x| |y|), rows not normalized: the GPU divides by the stored norms) the error over
// |x| |y| plus 2^-20, and 0 when either norm is 0 (both sides return 1 exactly).
//
// Host-only: the GPU's kernels (gpu/paths/int8_scan.cu) follow the same operations, and the CPU
// tests check the contract through Int8ScanEmulation.

#ifndef SIEVE_QUERY_INT8_CODES_H_
#define SIEVE_QUERY_INT8_CODES_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sieve/types.h"

namespace sieve {

// Codes are padded with zero codes to a multiple of this (cuBLAS's int8 tensor-core GEMM takes
// leading dimensions that are multiples of 4 and 16-byte aligned rows).
inline constexpr uint32_t kInt8CodeMultiple = 16;
// The largest dim the int32 dot of two codes cannot overflow at (127² · 2^16 < 2^31).
inline constexpr uint32_t kInt8MaxDim = 65536;

// dim rounded up to kInt8CodeMultiple.
uint32_t Int8CodeDim(uint32_t dim);
// Device bytes a resident row's code takes: the padded code and its four float terms.
uint64_t Int8CodeBytesPerRow(uint32_t dim);

// What (*) needs of one vector, each an upper bound (rounded up) except `scale`, which is the
// s the code was made with. Laid out as the device's float4 of a row, whose w holds the row's
// stored squared norm instead of `norm` (the GPU reads norms as stored).
struct Int8Terms {
  float scale = 0;          // s
  float code_norm = 0;      // a = s |q|
  float residual_norm = 0;  // b = |x - s q|
  float norm = 0;           // |x|
};

// Codes x (dim floats) into codes[0, code_dim) (zeros past dim) and returns its terms.
// REQUIRES: dim <= code_dim, dim <= kInt8MaxDim; x finite.
Int8Terms QuantizeInt8(const float* x, uint32_t dim, uint32_t code_dim, int8_t* codes);

// A query's side of (*): A_y = |r_y| + 2^-22 a_y and B_y = |y|, rounded up.
struct Int8QueryTerms {
  float scale = 0;  // s_y
  float a = 0;      // A_y
  float b = 0;      // B_y
};
Int8QueryTerms QueryTerms(const Int8Terms& y);

// est = fl(float(dot) · fl(s_x · s_y)), as the device computes it.
float Int8Estimate(int32_t dot, float row_scale, float query_scale);
// (*) in float32, never below its right side: (a_x A_y + b_x B_y + 2^-118)(1 + 2^-20).
float Int8DotError(float row_a, float row_b, const Int8QueryTerms& q);
// The allowance for the float32 reference (sample threshold and rescore) against the true dot,
// relative to |x| |y|: 2 gamma_dim + 2^-21, rounded up.
float Int8ReferenceError(uint32_t dim);
// A bound on |computed - reference| of a distance whose dot estimate is off the true dot by at
// most dot_err: see the header comment. qn2, xn2: the stored squared norms the distance uses.
float Int8DistanceError(Metric metric, float dot_err, float ref_rel, float qn2, float xn2);

// The int32 dot of two codes of code_dim (exact).
int32_t Int8Dot(const int8_t* a, const int8_t* b, uint32_t code_dim);

// The host emulation of the GPU's int8 candidate scan over n rows (row-major, dim floats each,
// as stored: float16 rows converted to float) for one query, with what the device computes:
// codes and terms, float32 norms, the int8 estimate and its distance, and the keep test
// d - E <= thresh (ip: d + E >= thresh) in directed rounding. `keep` gets the rows kept (in row
// order) with their computed distances and error bounds.
struct Int8ScanRow {
  uint32_t row = 0;
  float dist = 0;  // the int8 estimate's distance
  float err = 0;   // its bound against the float32 reference
};
void Int8ScanEmulation(const float* rows, uint64_t n, uint32_t dim, const float* query,
                       Metric metric, float thresh, std::vector<Int8ScanRow>* keep);

// The band of kept rows that can hold the reference top-kf (the GPU's Int8BandKernel): with U the
// kf-th best of the rows' worst-case distances (dist + err rounded up; ip: dist - err rounded
// down), the rows whose best case (dist - err rounded down; ip: dist + err up) is no worse than
// U. Every row whose reference distance is at most the reference kf-th best is in it. Rows of
// `kept` in their order; all of them when there are at most kf.
std::vector<uint32_t> Int8Band(const std::vector<Int8ScanRow>& kept, uint32_t kf, Metric metric);

// The float32 distance the reference computes from a dot and the stored squared norms (the
// GPU's FinishDistance): l2 clamped at 0, ip the dot, cosine 1 - dot / (|q| |x|) or 1 for a
// zero vector.
float FinishDistanceHost(Metric metric, float dot, float qn2, float xn2);
// The float32 squared norm of x as the device stores it (a float32 sum in order).
float SquaredNormHost(const float* x, uint32_t dim);

}  // namespace sieve

#endif  // SIEVE_QUERY_INT8_CODES_H_
