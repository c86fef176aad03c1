//===- LaunchFuncEffects.h - What gpu.launch_func reads and writes -*- C++ -*-//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Upstream's gpu.launch_func declares no memory effects, and the
// ownership-based buffer deallocation rejects an op whose effects it does
// not know. The persistent kernels are outlined before bufferization (their
// unrolled bodies then stay out of the host passes), so their launches meet
// the deallocation with the buffers they use as operands.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_CONVERSION_UTILS_LAUNCHFUNCEFFECTS_H
#define LSTM_CONVERSION_UTILS_LAUNCHFUNCEFFECTS_H

namespace mlir {
class DialectRegistry;

namespace lstm {

/// Attaches the MemoryEffectOpInterface to gpu.launch_func: the kernel may
/// read and write every memref it is passed, and any other memory (it may
/// be passed pointers as integers); it allocates and frees nothing.
void registerLaunchFuncMemoryEffectsExternalModel(DialectRegistry &registry);

} // namespace lstm
} // namespace mlir

#endif // LSTM_CONVERSION_UTILS_LAUNCHFUNCEFFECTS_H
