//===- CpuThreads.h - The CPU runtime's thread count, inside --*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_LIB_RUNTIME_CPUTHREADS_H
#define LSTM_LIB_RUNTIME_CPUTHREADS_H

namespace lstm {

/// Applies the thread count of lstmRuntimeCpuSetThreads to OpenMP on the
/// calling thread (OpenMP's count is a setting of each thread), before a
/// call into oneDNN. (CpuBlas.cpp)
void applyCpuThreadCount();

} // namespace lstm

#endif // LSTM_LIB_RUNTIME_CPUTHREADS_H
