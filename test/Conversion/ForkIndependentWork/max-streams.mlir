// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fewer than one stream is an error of the option, not ignored.
// RUN: not lstm-opt %s --lstm-fork-independent-work="max-streams=0" 2>&1 | FileCheck %s
// CHECK: error: lstm-fork-independent-work: max-streams must be at least 1 (got 0)
module {
}
