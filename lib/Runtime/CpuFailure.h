//===- CpuFailure.h - The CPU runtime's parallel regions ---------*- C++
//-*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#ifndef LSTM_RUNTIME_CPUFAILURE_H
#define LSTM_RUNTIME_CPUFAILURE_H

namespace lstm {

/// While one lives, a failure on this thread aborts instead of returning
/// to the guarded call (CpuFailure.cpp): a parallel region cannot be left
/// by a longjmp.
class CpuParallelRegion {
public:
  CpuParallelRegion();
  ~CpuParallelRegion();
  CpuParallelRegion(const CpuParallelRegion &) = delete;
  CpuParallelRegion &operator=(const CpuParallelRegion &) = delete;
};

} // namespace lstm

#endif // LSTM_RUNTIME_CPUFAILURE_H
