//===- GemmCall.h - Buffer-level GEMMs as calls of a BLAS -------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The generated code of a contraction is a loop nest (CPU) or one thread per
// output element (GPU) with a sequential reduction: far from the GEMM
// ceiling on either device. Both paths hand their products to a BLAS through
// the project's runtime, cuBLAS on the GPU and oneDNN/OpenBLAS on the CPU; what
// the two share is here: recognising a product on buffers structurally
// (linalg's contraction interface and the shape of its indexing maps) and
// replacing it by a call whose arguments describe it as a row-major (batched)
// GEMM.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_CONVERSION_UTILS_GEMMCALL_H
#define LSTM_CONVERSION_UTILS_GEMMCALL_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::lstm {

/// One operand of a GEMM as a BLAS sees it: a row-major matrix (or a batch
/// of them) with contiguous rows.
struct GemmOperand {
  Value memref;
  /// Whether the matrix is stored transposed relative to the product's
  /// operand (A stored [k, m], B stored [n, k], C never).
  bool transposed = false;
  /// Positions in the memref of the batch, row and column dimensions; the
  /// batch is absent (-1) when the operand is shared by every product.
  int64_t batchDim = -1, rowDim = 0, colDim = 1;
  /// Whether the layout leaves the column stride to run time (a buffer
  /// carried through a loop gets a fully dynamic layout from
  /// bufferization): the call then happens only when it is 1.
  bool dynamicColumnStride = false;
};

/// A contraction on buffers that maps onto a (batched) GEMM
/// `C[b?, m, n] += A[b?, m, k] · B[b?, k, n]`.
struct GemmMatch {
  linalg::LinalgOp op;
  GemmOperand a, b, c;
  /// Loop positions of the m, n, k and (optional) batch dimensions.
  unsigned m, n, k;
  std::optional<unsigned> batch;

  Type getElementTypeA() const;
  Type getElementTypeC() const;
};

/// Recognises `op` as a (batched) GEMM whose operands a row-major BLAS
/// accepts (each matrix 2-D after an optional leading batch dimension, rows
/// contiguous or contiguous only at run time), whatever its element types:
/// the caller decides which it supports.
FailureOr<GemmMatch> matchGemm(linalg::LinalgOp op);

/// Reshape propagation at tensor level can turn the hoisted input projection
/// `[T·B, K] x [K, N]` into a contraction over (t, b, n, k) on `[T, B, K]`
/// and `[T, B, N]` buffers. When both are contiguous (identity layout) with
/// the two row dimensions leading, this rewrites it as the same contraction
/// on `memref.collapse_shape`d views, which matchGemm takes. Leaves any
/// other op alone.
void collapseLeadingRowDims(RewriterBase &rewriter, linalg::GenericOp op);

/// Every contraction of host code in `module` (not inside kernels already
/// outlined) that matchGemm takes, after collapseLeadingRowDims has run on
/// every generic: what both call-out passes start from.
SmallVector<GemmMatch> collectGemms(RewriterBase &rewriter, ModuleOp module);

/// Declares (once per module) `name(prefix..., transA: i32, transB: i32,
/// m, n, k: i64, alpha: f32, a: ptr, lda, strideA: i64, b: ptr, ldb,
/// strideB: i64, beta: f32, c: ptr, ldc, strideC: i64, batch: i64)`, the
/// shape of the runtime's GEMM entry points (lstm/Runtime/*.h).
func::FuncOp declareGemmFunction(ModuleOp module, StringRef name,
                                 TypeRange prefixTypes);

/// Positions of the GEMM's own arguments in a call of such a function, after
/// its prefix (none for the CPU runtime's).
enum GemmCallOperand : unsigned {
  kGemmTransA = 0,
  kGemmTransB,
  kGemmM,
  kGemmN,
  kGemmK,
  kGemmAlpha,
  kGemmA,
  kGemmLda,
  kGemmStrideA,
  kGemmB,
  kGemmLdb,
  kGemmStrideB,
  kGemmBeta,
  kGemmC,
  kGemmLdc,
  kGemmStrideC,
  kGemmBatch,
  kGemmOperandCount
};

/// Replaces the contraction of `match` by a call of `callee` (declared by
/// declareGemmFunction) with `prefix` before the GEMM's own arguments. A
/// zero fill of the accumulator right before the contraction becomes
/// beta = 0. Products whose m·n·k·batch is below `minSize`, and operands
/// whose rows only run time can tell contiguous, keep the contraction
/// behind an `scf.if` (or untouched, when the types settle it).
void replaceGemmWithCall(RewriterBase &rewriter, const GemmMatch &match,
                         func::FuncOp callee, ValueRange prefix,
                         int64_t minSize);

} // namespace mlir::lstm

#endif // LSTM_CONVERSION_UTILS_GEMMCALL_H
