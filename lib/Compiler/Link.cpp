//===- Link.cpp - An object file to a shared library ----------------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm/Compiler/Compiler.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

using namespace mlir;

llvm::Error lstm::linkSharedLibrary(ArrayRef<std::string> objects,
                                    StringRef output,
                                    const CompileOptions &options) {
  // The system compiler driver knows the C runtime and the linker's flags:
  // a C++ one, else a C one with libstdc++ named (the runtimes use it), as
  // on a machine with gcc but not g++ (where the wheel may run).
  bool addLibStdcxx = false;
  llvm::ErrorOr<std::string> cxx =
      std::make_error_code(std::errc::no_such_file_or_directory);
  for (StringRef name : {"c++", "g++", "clang++", "cc", "gcc", "clang"}) {
    cxx = llvm::sys::findProgramByName(name);
    if (cxx) {
      addLibStdcxx = !name.contains("++");
      break;
    }
  }
  if (!cxx)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "no compiler driver (c++, g++, clang++, cc, gcc or clang) on PATH "
        "to link with");
  std::vector<std::string> args = {*cxx, "-shared", "-o", output.str()};
  args.insert(args.end(), objects.begin(), objects.end());
  // The target's runtime goes in whole: the library calls it by name.
  std::string runtimeDir = options.runtimeLibDir.empty()
                               ? std::string(LSTM_BUILD_LIB_DIR)
                               : options.runtimeLibDir;
  args.push_back("-Wl,--whole-archive");
  args.push_back(runtimeDir + "/liblstm_" + options.target +
                 "_runtime_static.a");
  args.push_back("-Wl,--no-whole-archive");
  // A self-contained runtime directory (the Python package's lstmc/lib,
  // python/CMakeLists.txt) carries what the library links besides its
  // runtime: a libcuda.so stub, OpenBLAS's GEMMs as liblstm_openblas.so,
  // oneDNN and GNU's OpenMP runtime.
  auto inRuntimeDir = [&](StringRef name) -> std::string {
    llvm::SmallString<256> path(runtimeDir);
    llvm::sys::path::append(path, name);
    return llvm::sys::fs::exists(path) ? std::string(path) : std::string();
  };
  if (options.target == "cuda") {
    // The library then needs only libcuda.so.1 where it runs, not MLIR.
    std::string cudaLibDir = options.cudaLibDir;
    if (cudaLibDir.empty() && !inRuntimeDir("stubs/libcuda.so").empty())
      cudaLibDir = runtimeDir + "/stubs";
    if (cudaLibDir.empty())
      cudaLibDir = LSTM_CUDA_STUBS_DIR;
    args.push_back("-L" + cudaLibDir);
    // Kept even by a linker that drops unused libraries by default (an
    // empty stub provides no symbol).
    args.push_back("-Wl,--no-as-needed");
    args.push_back("-lcuda");
  } else {
    // The GEMM libraries (lib/Runtime/CpuBlas.cpp): oneDNN with its OpenMP
    // runtime, and OpenBLAS, from the runtime directory (the Python
    // package's copies; OpenBLAS as the subset it needs) or as found when
    // the project was configured. The runtime itself defines memrefCopy:
    // the library needs no MLIR library.
    std::vector<std::pair<StringRef, StringRef>> libraries = {
        {"liblstm_openblas.so", LSTM_OPENBLAS_LIBRARY},
        {"libdnnl.so.2", LSTM_DNNL_LIBRARY},
        {"libgomp.so.1", LSTM_GOMP_LIBRARY}};
    // The package's libdnnl.so.2 finds its OpenCL loader because the
    // library needs it directly (python/CMakeLists.txt).
    if (!inRuntimeDir("libOpenCL.so.1").empty())
      libraries.push_back({"libOpenCL.so.1", ""});
    args.push_back("-Wl,--no-as-needed");
    std::vector<std::string> dirs;
    for (auto [bundled, configured] : libraries) {
      std::string library = inRuntimeDir(bundled);
      if (library.empty())
        library = configured.str();
      args.push_back(library);
      llvm::SmallString<256> dir(llvm::sys::path::parent_path(library));
      llvm::sys::fs::make_absolute(dir);
      if (llvm::find(dirs, dir.str()) == dirs.end())
        dirs.push_back(std::string(dir));
    }
    for (const std::string &dir : dirs)
      args.push_back("-Wl,-rpath," + dir);
  }
  args.push_back("-lm");
  if (addLibStdcxx)
    args.push_back("-l:libstdc++.so.6");
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
