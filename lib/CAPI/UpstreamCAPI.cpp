//===- UpstreamCAPI.cpp - Upstream's C API for IR as a shared library -----===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Empty: libLSTMUpstreamCAPI.so is all of libMLIRCAPIIR.a (see
// CMakeLists.txt); a library needs at least one source file.
//
//===----------------------------------------------------------------------===//
