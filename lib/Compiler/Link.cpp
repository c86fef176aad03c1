//===- Link.cpp - An object file to a shared library ----------------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm/Compiler/Compiler.h"

#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

using namespace mlir;

llvm::Error lstm::linkSharedLibrary(StringRef object, StringRef output,
                                    const CompileOptions &options) {
  // The system compiler driver knows the C runtime and the linker's flags.
  auto cxx = llvm::sys::findProgramByName("c++");
  if (!cxx)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "no C++ compiler driver (c++) on PATH to link with");
  std::vector<std::string> args = {*cxx, "-shared", "-o", output.str(),
                                   object.str()};
  // The target's runtime goes in whole: the library calls it by name.
  std::string runtimeDir = options.runtimeLibDir.empty()
                               ? std::string(LSTM_BUILD_LIB_DIR)
                               : options.runtimeLibDir;
  args.push_back("-Wl,--whole-archive");
  args.push_back(runtimeDir + "/liblstm_" + options.target +
                 "_runtime_static.a");
  args.push_back("-Wl,--no-whole-archive");
  if (options.target == "cuda") {
    // The library then needs only libcuda.so.1 where it runs, not MLIR.
    std::string cudaLibDir = options.cudaLibDir.empty()
                                 ? std::string(LSTM_CUDA_STUBS_DIR)
                                 : options.cudaLibDir;
    args.push_back("-L" + cudaLibDir);
    args.push_back("-lcuda");
  } else {
    // OpenBLAS, where it was found when the project was configured.
    std::string blas = LSTM_OPENBLAS_LIBRARY;
    args.push_back(blas);
    args.push_back("-Wl,-rpath," + llvm::sys::path::parent_path(blas).str());
    // memrefCopy and friends.
    args.push_back(std::string("-L") + LSTM_MLIR_LIB_DIR);
    args.push_back("-lmlir_c_runner_utils");
    args.push_back(std::string("-Wl,-rpath,") + LSTM_MLIR_LIB_DIR);
  }
  args.push_back("-lm");
  std::vector<StringRef> refs(args.begin(), args.end());
  std::string linkError;
  int rc =
      llvm::sys::ExecuteAndWait(*cxx, refs, std::nullopt, {}, 0, 0, &linkError);
  if (rc != 0)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "linking " + output + " failed" +
            (linkError.empty() ? "" : ": " + linkError));
  return llvm::Error::success();
}
