//===- Compiler.h - Compile lstm modules to shared libraries ----*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Ahead-of-time compilation of a module of lstm IR into a shared library that
// exports the C interface of every public function (`_mlir_ciface_NAME`).
// lstm-compile is a command line around compileToSharedLibrary(); the C API
// (lstm-c/Compiler.h) and the Python package call it in-process. Each step
// is a function of its own (one per file in lib/Compiler), so that callers
// can stop after any of them.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_COMPILER_COMPILER_H
#define LSTM_COMPILER_COMPILER_H

#include "lstm/Conversion/Utils/GpuTargetOptions.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir {
class DialectRegistry;
class OpPassManager;

namespace lstm {

struct CompileOptions {
  /// "cpu" or "cuda".
  std::string target = "cuda";
  /// The GPU architecture and PTX features of the kernels (cuda only).
  std::string chip = kDefaultGpuChip.str();
  std::string features = kDefaultPtxFeatures.str();
  /// The CUDA toolkit with ptxas and libdevice; empty: the one found when the
  /// project was configured.
  std::string cudaPath;
  /// The directory with libcuda.so (the driver or its stub) to link against;
  /// empty: the stubs of the toolkit found at configure time.
  std::string cudaLibDir;
  /// The directory with the target's runtime, liblstm_cuda_runtime_static.a
  /// or liblstm_cpu_runtime_static.a; empty: the build tree's lib/.
  std::string runtimeLibDir;
  /// Passes run on the lstm IR before the lowering, as a textual pipeline on
  /// builtin.module (e.g. "lstm-combine-gate-gemms"); empty for none.
  std::string prePasses;
  /// The GEMMs on the GPU: through cuBLAS (from `cublasMinSize` m·n·k·batch
  /// up) or generated kernels, in `computeType` arithmetic (fp32, tf32, or
  /// bf16: bf16 operands with fp32 accumulation); see LSTMToNVVMOptions. The
  /// CPU computes in the module's types whatever it says.
  bool cublas = true;
  int64_t cublasMinSize = 0;
  GemmComputeType computeType = GemmComputeType::fp32;
  /// Under the fp32 compute type, a sequence's products on TF32 tensor
  /// cores with split operands (3xTF32; LSTMToNVVMOptions::splitTF32Gemms).
  bool splitTF32Gemms = true;
  /// Layers of a form lstm-to-persistent handles run as one persistent
  /// kernel each (cuda; fp32 FMAs, and tensor cores from the batch the
  /// cost model starts them at: 3xTF32 under the fp32 compute type, TF32 or
  /// bf16 operands under tf32 and bf16; see
  /// LSTMToNVVMOptions::persistent).
  bool persistent = false;
  /// With `persistent`, the kernels' products on tensor cores
  /// (LSTMToNVVMOptions::persistentTensorCores).
  bool persistentTensorCores = true;
  /// With the kernels on tensor cores, the warps that split each tile's
  /// depth (LSTMToNVVMOptions::persistentSplitDepth; 1: none, 0: where
  /// the weights would not fit the registers whole, -1: chosen).
  int64_t persistentSplitDepth = -1;
  /// With `persistent`, the per-step lowering beside each kernel for the
  /// batches and GPUs it does not run at; without it such a run fails with
  /// a message saying so, and the library compiles faster (see
  /// LSTMToNVVMOptions::perStepFallback).
  bool perStepFallback = true;
  /// With `persistent`, the kernels lowered before the rest and serialised
  /// beside it (LSTMToNVVMOptions::persistentFirst).
  bool persistentFirst = false;
  /// With `gradients`: NAME becomes a call of NAME_train that drops the
  /// saved activations (lstm-differentiate{forward-through-train}): one copy
  /// of the recurrence fewer to compile; inference then stores them.
  bool forwardThroughTrain = false;
  /// The most streams that independent products run on at once (cuda;
  /// lstm-fork-independent-work; 1: one stream).
  int64_t streams = 4;
  /// The CPU lowering (cpu only): GEMMs in oneDNN/OpenBLAS from `blasMinSize`
  /// m·n·k·batch up, f32 transcendental functions as polynomials; see
  /// LSTMToCPUOptions.
  bool blas = true;
  int64_t blasMinSize = 0;
  bool approximateMath = true;
  /// The bytes of a hoisted input projection computed at a time, per
  /// thread (cpu only; 0, the default: whole; see
  /// LSTMToCPUOptions::chunkBytes).
  int64_t chunkBytes = 0;
  /// The least number of threads at run time that runs the hoisted input
  /// projections hoisted; fewer compute them in the steps (cpu only; see
  /// LSTMToCPUOptions::hoistMinThreads; 1 or less: always hoisted).
  int64_t hoistMinThreads = 3;
  /// Each layer with independent rows on parts of its batch, a thread each
  /// (cpu only; see LSTMToCPUOptions::splitBatch).
  bool splitBatch = true;
  /// Add and export the gradient functions of every public function with
  /// layers (`NAME_grad`, `NAME_train`, `NAME_backward`; see
  /// lstm-differentiate): runs lstm-combine-gate-gemms and
  /// lstm-differentiate before the pre-passes.
  bool gradients = false;
  /// With `gradients`, also NAME_grad; false: only NAME_train and
  /// NAME_backward (lstm-differentiate{grad-function=false}).
  bool gradFunction = true;
  /// The CPU the host code is compiled for: "native" (this machine's, with
  /// its vector extensions), "generic", or an LLVM CPU name; empty: native
  /// for the cpu target, whose libraries run where they are compiled (the
  /// vectorised cells need its SIMD width), generic for cuda, whose host code
  /// only launches kernels and may run on another machine.
  std::string hostCPU;
  /// LLVM's optimisation and code generation level of the host code, 0-3;
  /// lower levels compile several times faster (the tests of what the code
  /// computes use 0). Unset: 3 for cpu, whose host code is the network's
  /// arithmetic; 0 for cuda, whose host code only sequences launches, GEMM
  /// calls and allocations (char-rnn's training library: 0.15 s of LLVM
  /// instead of 0.95, and its training step as fast, measured on the H200;
  /// docs/benchmarks.md).
  std::optional<unsigned> optLevel;
  /// The level optLevel gives for `target` where it is unset.
  unsigned hostOptLevel() const {
    return optLevel.value_or(target == "cuda" ? 0 : 3);
  }
  /// How many threads serialise the kernels (cuda): the persistent kernels
  /// and then the others are each split among at most this many modules,
  /// which that many threads compile (LLVM's NVPTX code generation, then
  /// ptxas), largest first, beside the host code's lowering.
  /// 0: one fewer than the cores this process may run on, at least 2 and
  /// at most 4, each module split only where one kernel dominates it
  /// (splitKernelModules' onlyWithDominantKernel; docs/benchmarks.md,
  /// "Compile time").
  unsigned kernelThreads = 0;
  /// The number kernelThreads gives on this machine.
  unsigned kernelModules() const;
  /// Keep the intermediate object files next to the library: OUTPUT.o (the
  /// host code) and, for cuda, OUTPUT.kernels.o (the kernels' fatbin).
  bool keepObject = false;
  /// Where to write the host code's LLVM IR before optimisation (after
  /// hoistLaunchAllocas); empty for nowhere.
  std::string llvmIRPath;
  /// Report on stderr where the time goes, as mlir-opt's --mlir-timing does:
  /// each pass of the pre-passes and of the lowering, then the translation
  /// to LLVM IR, the kernels' GPU binary (ptxas included; it runs beside the
  /// host object, so their wall times overlap), the host object (LLVM's
  /// optimisation and code generation), the kernels' object and the link.
  bool timing = false;
  /// Verify the IR after every pass of the lowering, as lstm-opt does. By
  /// default it is verified once after each stage instead (the lowering to
  /// kernels in NVVM, the host code's lowering): every pass's verification
  /// of the whole module was a fifth of a persistent library's compile
  /// time. The pre-passes, which a caller may write, are verified after
  /// each pass either way.
  bool verifyEachPass = false;
};

/// Adds to `registry` what compiling needs beyond the lstm dialects: the
/// upstream extensions of the GPU pipeline and the translations to LLVM IR.
void registerCompilerDependencies(DialectRegistry &registry);

/// Checks the target and compute type names of `options`.
llvm::Error verifyCompileOptions(const CompileOptions &options);

/// Marks every public function with a body to get the C interface
/// (`llvm.emit_c_interface`). (Lower.cpp)
void addCInterfaces(ModuleOp module);

/// Adds to `pm` what runs on the lstm IR before the lowering: with
/// `options.gradients`, lstm-combine-gate-gemms and lstm-differentiate, then
/// the pre-passes. Fails if `options.prePasses` does not parse; the parser's
/// message goes to `errorStream`. (Lower.cpp)
LogicalResult buildPrePassPipeline(OpPassManager &pm,
                                   const CompileOptions &options,
                                   raw_ostream &errorStream);

/// Refuses (an error at each function) the functions with a body whose
/// name the compiled code's own calls may take: a function of the C or the
/// math library (malloc, free, memcpy, tanhf, exit), a prefix of the
/// runtimes' entry points (mgpu, lstmRuntime, _mlir_, cublas, ...), a CUDA
/// driver function's (cu and a capital), a name C reserves (__). Such a
/// function would take those calls. (Preconditions.cpp)
LogicalResult checkFunctionNames(ModuleOp module);

/// Refuses (an error at the first) a module whose functions with a body are
/// all llvm.funcs: what a lowering given as a pre-pass leaves.
/// (Preconditions.cpp)
LogicalResult checkNotLowered(ModuleOp module);

/// Refuses (an error at each function) a compute type other than fp32 for
/// functions with float arguments of another type than f32: TF32 and bf16
/// round f32 products, and the products of another type would stay as
/// they are. (Preconditions.cpp)
LogicalResult checkComputeType(ModuleOp module, GemmComputeType computeType);

/// Adds to `pm` the lowering of `options.target` (lstm-to-cpu or
/// lstm-to-nvvm). (Lower.cpp)
void buildLoweringPipeline(OpPassManager &pm, const CompileOptions &options);

/// For target cuda, lstm-to-nvvm without the kernels' serialisation, in
/// three parts: `buffers` lowers the host code to buffers and the
/// persistent kernels to NVVM (buildLSTMToNVVMBuffersPipeline),
/// `launches` the rest up to the kernels in NVVM
/// (buildLSTMToNVVMLaunchesPipeline), `host` the host code to the LLVM
/// dialect (buildLSTMToNVVMHostPipeline); the kernels in NVVM after either
/// of the first two may leave through moveKernelModules. (Lower.cpp)
void buildCudaLoweringPipelines(OpPassManager &buffers, OpPassManager &launches,
                                OpPassManager &host,
                                const CompileOptions &options);

/// Moves the stack arrays of kernel arguments that the translation of
/// gpu.launch_func puts inside loops to the entry block of their function, so
/// that a loop of launches does not grow the stack at every iteration.
/// translateToLLVMIR runs it; the JIT runs it before optimising.
/// (HoistLaunchAllocas.cpp)
void hoistLaunchAllocas(llvm::Module &module);

/// Asks LLVM to vectorise the functions of `module` for 512-bit registers
/// where `machine` has them (AVX-512): LLVM prefers 256 bits there by
/// default. emitObjectFile runs it; the JIT runs it before optimising.
/// (EmitObject.cpp)
void preferWideVectors(llvm::Module &module,
                       const llvm::TargetMachine &machine);

/// Adds `_lstm_packed_NAME(void **arguments)` beside each C interface
/// `_mlir_ciface_NAME` of `module`, which calls it with the pointers of the
/// array: the one-argument form the CPU runtime's guarded call takes
/// (lstmRuntimeCpuGuardedCall). (PackedEntryPoints.cpp)
void addPackedEntryPoints(llvm::Module &module);

/// Translates a module in the LLVM dialect to LLVM IR. (Translate.cpp)
std::unique_ptr<llvm::Module> translateToLLVMIR(ModuleOp module,
                                                llvm::LLVMContext &context);

/// LLVM's code generation level for the optimisation level `optLevel`
/// (0-3, as -O0 .. -O3); an error for any other.
llvm::Expected<llvm::CodeGenOptLevel> codeGenOptLevel(unsigned optLevel);

/// Optimises `module` at -O`optLevel` (0-3) for the host CPU `cpu`
/// ("native": this machine's CPU and features; "generic"; or an LLVM CPU
/// name such as "x86-64-v3") and writes it as a relocatable object file.
/// (EmitObject.cpp)
llvm::Error emitObjectFile(llvm::Module &module, StringRef path,
                           StringRef cpu = "generic", unsigned optLevel = 3);

/// Links `objects` into the shared library `output` with the system compiler
/// driver (c++), with the CUDA runtime and driver for cuda, with MLIR's C
/// runner utilities for cpu. (Link.cpp)
llvm::Error linkSharedLibrary(ArrayRef<std::string> objects, StringRef output,
                              const CompileOptions &options);

/// Moves the gpu.modules of `host` (in NVVM, not serialised yet) to the end
/// of `kernels`, each replaced in `host` by a gpu.binary of its name whose
/// fatbin is empty; returns their names. The kernels are then serialised
/// apart from the host code and reach the library in an object of their
/// own (kernelObjectModule), to which the host's LLVM IR is made to refer
/// (referToKernelObject). Fails, moving nothing, where a module has no
/// target to serialise for (an error on it). (KernelObject.cpp)
FailureOr<SmallVector<std::string>> moveKernelModules(ModuleOp host,
                                                      ModuleOp kernels);

/// Splits the kernels of each gpu.module of `host` (lowered to NVVM: the
/// llvm.funcs marked nvvm.kernel) among at most `parts` modules of about
/// equal size, the largest kernels first, each into the part that has the
/// fewest operations so far; the parts after the first are new modules
/// named after the first (`<name>_part<i>`) with their own copies of the
/// module's other symbols (declarations, globals: what a part does not use
/// goes in its dead-code elimination), and the launches in `host` follow
/// their kernels. Each part is then serialised on a thread of its own.
/// With `onlyWithDominantKernel`, a module is split only where its largest
/// kernel is at least a quarter of its operations (a persistent kernel,
/// whose ptxas the others then run beside): split, many small kernels only
/// add each module's fixed cost (libdevice's link, a ptxas process) on
/// cores that the host code's lowering needs too. (KernelObject.cpp)
void splitKernelModules(ModuleOp host, unsigned parts,
                        bool onlyWithDominantKernel = false);

/// In `host`, translated from a module that moveKernelModules split, makes
/// each kernel module's fatbin an external symbol and its size, passed to
/// mgpuModuleLoad, another one. Fails if the translation did not make the
/// constant and the load expected. (KernelObject.cpp)
llvm::Error referToKernelObject(llvm::Module &host,
                                ArrayRef<std::string> names);

/// The LLVM module that defines the symbols referToKernelObject refers to,
/// from the gpu.binary ops of `kernels` (serialised by
/// buildKernelBinaryPipeline). (KernelObject.cpp)
llvm::Expected<std::unique_ptr<llvm::Module>>
kernelObjectModule(ModuleOp kernels, llvm::LLVMContext &context);

/// All of the above on `module` (changed in place: it ends in the LLVM
/// dialect): the pre-passes, the C interfaces of the public functions then
/// (the pre-passes may add functions), the lowering, the object and the
/// library; for cuda the kernels leave the module (moveKernelModules), the
/// persistent ones as soon as the host code is in buffers, the others once
/// in NVVM, and are serialised by CompileOptions::kernelModules threads
/// (splitKernelModules), while the host code is lowered and its object
/// compiled. Diagnostics of the
/// passes go to the module's context, the pass pipeline parser's messages to
/// `pipelineErrors`; the returned error says which step failed. (Compile.cpp)
llvm::Error compileToSharedLibrary(ModuleOp module, StringRef output,
                                   const CompileOptions &options,
                                   raw_ostream &pipelineErrors);

} // namespace lstm
} // namespace mlir

#endif // LSTM_COMPILER_COMPILER_H
