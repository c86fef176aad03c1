//===- Passes.h - Conversions out of the lstm dialect -----------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#ifndef LSTM_CONVERSION_PASSES_H
#define LSTM_CONVERSION_PASSES_H

#include "lstm/Conversion/AccumulateIntoProducts/AccumulateIntoProducts.h"
#include "lstm/Conversion/ApproximateMath/ApproximateMath.h"
#include "lstm/Conversion/CollapseBeforeSlice/CollapseBeforeSlice.h"
#include "lstm/Conversion/ConcatSummedProducts/ConcatSummedProducts.h"
#include "lstm/Conversion/ElideCopies/ElideCopies.h"
#include "lstm/Conversion/FmaToLLVM/FmaToLLVM.h"
#include "lstm/Conversion/ForkIndependentWork/ForkIndependentWork.h"
#include "lstm/Conversion/FusePointwiseGenerics/FusePointwiseGenerics.h"
#include "lstm/Conversion/GemmOperandsToBF16/GemmOperandsToBF16.h"
#include "lstm/Conversion/GemmToBlas/GemmToBlas.h"
#include "lstm/Conversion/GemmToCublas/GemmToCublas.h"
#include "lstm/Conversion/HostMemoryToGPU/HostMemoryToGPU.h"
#include "lstm/Conversion/LSTMToLinalg/LSTMToLinalg.h"
#include "lstm/Conversion/LSTMToPersistent/LSTMToPersistent.h"
#include "lstm/Conversion/LowerDynamicExpandShape/LowerDynamicExpandShape.h"
#include "lstm/Conversion/LowerGridBarriers/LowerGridBarriers.h"
#include "lstm/Conversion/MergeGPULaunches/MergeGPULaunches.h"
#include "lstm/Conversion/MergeGPUModules/MergeGPUModules.h"
#include "lstm/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "lstm/Conversion/NarrowKernelIndices/NarrowKernelIndices.h"
#include "lstm/Conversion/ParallelLoopsToCpuThreads/ParallelLoopsToCpuThreads.h"
#include "lstm/Conversion/ParallelLoopsToGPU/ParallelLoopsToGPU.h"
#include "lstm/Conversion/ReadOnlyArguments/ReadOnlyArguments.h"
#include "lstm/Conversion/RuntimeChecks/RuntimeChecks.h"
#include "lstm/Conversion/SeparateSharedInits/SeparateSharedInits.h"
#include "lstm/Conversion/ShareAssembledColumns/ShareAssembledColumns.h"
#include "lstm/Conversion/SpecializeKernelArguments/SpecializeKernelArguments.h"
#include "lstm/Conversion/SplitBatchedGemms/SplitBatchedGemms.h"
#include "lstm/Conversion/SplitTF32Gemms/SplitTF32Gemms.h"
#include "lstm/Conversion/TransposeLoopWeights/TransposeLoopWeights.h"
#include "lstm/Conversion/WritePartStacksInPlace/WritePartStacksInPlace.h"
#include "lstm/Conversion/WriteResultsInPlace/WriteResultsInPlace.h"
#include "lstm/Conversion/WriteSequencesInPlace/WriteSequencesInPlace.h"

namespace mlir::lstm {

#define GEN_PASS_REGISTRATION
#include "lstm/Conversion/Passes.h.inc"

} // namespace mlir::lstm

#endif // LSTM_CONVERSION_PASSES_H
