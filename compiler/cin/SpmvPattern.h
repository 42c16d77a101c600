/// \file SpmvPattern.h: recognises a CSR sparse matrix-vector product, y = A x or y = A^T x, or a
/// CSR matrix times a dense matrix, C = A B, in a kernel.
/// Takes:      a lowered CPU kernel (cin/Lower.h), before or after its schedules: the loop
///             kinds, a row loop's balance and Block nesting do not matter.
/// Gives:      where its operands stand among the C parameters, when the kernel computes for
///             each row i of a CSR matrix (offsets, column indices, values) the sum over its
///             entries of value * x[column], written to out[i]; otherwise why it does not. A plan
///             (`plan()`, docs/plans.md) runs other kernels of the same product in the kernel's
///             place: it takes the seven parameters of the runtime's CSR kernel type
///             (spl_runtime.h's spl_csr_spmv_f64_fn: n, m, offs, cols, vals, x, out), in any
///             order (stdlib formats' `csr64` puts the values before the columns), 32-bit
///             indices, f32 or f64. The transposed product: out zeroed over its m entries, then
///             for each row i and each of its entries out[column] += value * x[i] (an einsum
///             `y[j] = A[i, j] * x[i]` over a CSR matrix), the same seven parameters with x of n
///             entries and out of m.
/// Assumes:    the row loop's segment is recognised (Stmt::segment, cin/Cin.h); reassociation
///             of the sum is allowed (a `reduce`, not a `fold`).
#pragma once

#include <array>
#include <optional>
#include <string>

#include "cin/Cin.h"

namespace spl::cin {

struct CsrSpmv {
  Scalar elem = Scalar::F64;  // of vals, x and out
  bool transposed = false;    // y = A^T x
  /// The kernel's parameter that carries each argument of the runtime's CSR kernel type, in
  /// its order: n, m, offs, cols, vals, x, out.
  std::array<int, 7> paramOf{};
};

/// The product's description, or nullopt with `whyNot` saying what differs (for a diagnostic).
std::optional<CsrSpmv> recogniseCsrSpmv(const Kernel &k, std::string &whyNot);

/// C = A B for a CSR matrix A and a dense B of k columns (row-major), as an einsum
/// `C[i, l] = A[i, j] * B[j, l]` lowers: out zeroed over n x k, then for each row i, each of its
/// entries and each l in [0, k), out[i, l] += value * B[column, l]. The runtime's plan of it
/// (spl_spmm_plan_*) takes the eight parameters of its kernel type (spl_csr_spmm_f64_fn: n, m, k,
/// offs, vals, cols, B, out).
struct CsrSpmm {
  Scalar elem = Scalar::F64;
  /// The kernel's parameter that carries each argument of the runtime's kernel type: n, m, k,
  /// offs, vals, cols, B, out.
  std::array<int, 8> paramOf{};
};

std::optional<CsrSpmm> recogniseCsrSpmm(const Kernel &k, std::string &whyNot);

}  // namespace spl::cin
