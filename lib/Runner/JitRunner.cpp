//===- JitRunner.cpp - JIT-compile a module and call it -------------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm/Runner/JitRunner.h"

#include "CudaApi.h"
#include "lstm/Compiler/Compiler.h"
#include "lstm/Pipelines/Pipelines.h"
#include "lstm/Runtime/CpuRuntime.h"
#include "lstm/Runtime/CudaRuntime.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

#include <cstdlib>
#include <cstring>
#include <numeric>

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::runner;

static llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

//===----------------------------------------------------------------------===//
// Memref descriptors
//===----------------------------------------------------------------------===//
//
// A ranked memref is passed as {allocated, aligned, offset, sizes[r],
// strides[r]}: 3 + 2r 64-bit words. The C interface takes a pointer to one
// such descriptor per argument and, when there are results, a pointer to the
// struct of result descriptors first.

/// The descriptor of `a` with its data at `data` (a.data, or a device copy).
static std::vector<int64_t> makeDescriptor(const Array &a, const void *data) {
  int64_t rank = a.shape.size();
  std::vector<int64_t> desc(3 + 2 * rank);
  auto ptr = reinterpret_cast<int64_t>(data);
  desc[0] = ptr;
  desc[1] = ptr;
  desc[2] = 0;
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    desc[3 + d] = a.shape[d];
    desc[3 + rank + d] = stride;
    stride *= a.shape[d];
  }
  return desc;
}

/// Copies the memref described at `desc` into a dense array (result
/// `number` of the function).
static llvm::Expected<Array>
readDescriptor(const int64_t *desc, const TensorSpec &spec, size_t number) {
  int64_t rank = spec.shape.size();
  Array a;
  a.dtype = spec.dtype;
  a.shape.assign(desc + 3, desc + 3 + rank);
  size_t elt = dtypeSize(spec.dtype);
  if (llvm::Error err = a.allocate("result #" + llvm::Twine(number)))
    return std::move(err);
  const char *base = reinterpret_cast<const char *>(desc[1]) + desc[2] * elt;
  const int64_t *strides = desc + 3 + rank;
  std::vector<int64_t> index(rank, 0);
  for (int64_t n = 0, e = a.numElements(); n < e; ++n) {
    int64_t off = 0;
    for (int64_t d = 0; d < rank; ++d)
      off += index[d] * strides[d];
    std::memcpy(a.data.data() + n * elt, base + off * elt, elt);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < a.shape[d])
        break;
      index[d] = 0;
    }
  }
  return a;
}

//===----------------------------------------------------------------------===//
// CompiledFunction
//===----------------------------------------------------------------------===//

CompiledFunction::~CompiledFunction() = default;

llvm::Error mlir::lstm::runPrePasses(ModuleOp module, StringRef pipeline) {
  if (pipeline.empty())
    return llvm::Error::success();
  PassManager pm(module.getContext());
  std::string parseError;
  llvm::raw_string_ostream os(parseError);
  if (failed(parsePassPipeline(pipeline, pm, os)))
    return makeError("malformed --pre-passes pipeline '" + pipeline +
                     "': " + StringRef(parseError).trim());
  if (failed(pm.run(module)))
    return makeError("the --pre-passes pipeline '" + pipeline + "' failed");
  return llvm::Error::success();
}

/// The CPU runtime's entry points (lstm/Runtime/CpuRuntime.h), linked into
/// this library, made visible to the JIT'd code by name: the executable that
/// embeds the runner need not export them.
static void registerCpuRuntime(ExecutionEngine &engine) {
  engine.registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    auto add = [&](llvm::StringRef name, void *address) {
      symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                 llvm::JITSymbolFlags::Exported};
    };
    add("lstmRuntimeCpuSgemm", reinterpret_cast<void *>(&lstmRuntimeCpuSgemm));
    add("lstmRuntimeCpuDgemm", reinterpret_cast<void *>(&lstmRuntimeCpuDgemm));
    add("lstmRuntimeCpuSgemmPrepare",
        reinterpret_cast<void *>(&lstmRuntimeCpuSgemmPrepare));
    add("lstmRuntimeCpuSgemmPrepared",
        reinterpret_cast<void *>(&lstmRuntimeCpuSgemmPrepared));
    add("lstmRuntimeCpuSgemmRelease",
        reinterpret_cast<void *>(&lstmRuntimeCpuSgemmRelease));
    add("lstmRuntimeCpuParallelFor",
        reinterpret_cast<void *>(&lstmRuntimeCpuParallelFor));
    // The chunks of hoisted projections are sized by the threads.
    add("lstmRuntimeCpuGetThreads",
        reinterpret_cast<void *>(&lstmRuntimeCpuGetThreads));
    add("_mlir_memref_to_llvm_alloc",
        reinterpret_cast<void *>(&_mlir_memref_to_llvm_alloc));
    add("_mlir_memref_to_llvm_aligned_alloc",
        reinterpret_cast<void *>(&_mlir_memref_to_llvm_aligned_alloc));
    add("_mlir_memref_to_llvm_free",
        reinterpret_cast<void *>(&_mlir_memref_to_llvm_free));
    // Strided copies (the CPU runtime's, not libmlir_c_runner_utils').
    add("memrefCopy", reinterpret_cast<void *>(&memrefCopy));
    // Failed checks and allocations (unguarded here: they abort the child
    // process that runs the call, after their message).
    add("lstmRuntimeCpuCheckFailed",
        reinterpret_cast<void *>(&lstmRuntimeCpuCheckFailed));
    add("lstmRuntimeCpuOutOfMemory",
        reinterpret_cast<void *>(&lstmRuntimeCpuOutOfMemory));
    return symbols;
  });
}

llvm::Expected<std::unique_ptr<CompiledFunction>>
CompiledFunction::compile(ModuleOp module, StringRef entry,
                          const JitOptions &options) {
  bool cuda = options.device == Device::CUDA;
  // Before the lowering: a machine without the driver fails at once.
  if (cuda)
    if (llvm::Error err = loadCudaRuntime(options.cudaRuntimePath))
      return std::move(err);

  // The pre-passes first: they may add the entry (lstm-differentiate adds
  // the gradient functions).
  if (llvm::Error err = runPrePasses(module, options.prePasses))
    return std::move(err);
  FailureOr<Signature> sig = lstm::getSignature(module, entry);
  if (failed(sig))
    return makeError("invalid entry function '" + entry + "'");
  if (failed(checkFunctionNames(module)))
    return makeError("a function's name would take the compiled code's own "
                     "calls (the error above)");
  if (cuda && failed(checkComputeType(module, options.nvvm.computeType)))
    return makeError("the compute type does not apply to this network (the "
                     "error above)");
  auto func = module.lookupSymbol<func::FuncOp>(entry);
  func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                UnitAttr::get(module.getContext()));

  // The GPU lowering needs upstream extensions (the NVVM target's
  // serialisation) and the translations to LLVM IR, the JIT the latter.
  DialectRegistry registry;
  registerCompilerDependencies(registry);
  module.getContext()->appendDialectRegistry(registry);

  PassManager pm(module.getContext());
  if (cuda) {
    LSTMToNVVMOptions nvvm = options.nvvm;
    nvvm.runtimeChecks = options.runtimeChecks;
    buildLSTMToNVVMPipeline(pm, nvvm);
  } else {
    LSTMToCPUOptions cpu = options.cpu;
    cpu.runtimeChecks = options.runtimeChecks;
    buildLSTMToCPUPipeline(pm, cpu);
    lstmRuntimeCpuSetThreads(options.threads);
  }
  if (failed(pm.run(module)))
    return makeError(cuda ? "lowering for CUDA failed"
                          : "lowering to the LLVM dialect failed");

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();

  ExecutionEngineOptions engineOptions;
  // The optimiser sees the host's CPU and vector extensions (the JIT'd code
  // runs here): without them LLVM vectorises the cells' loops for the
  // baseline SIMD width only.
  auto hostMachineBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!hostMachineBuilder)
    return hostMachineBuilder.takeError();
  auto hostMachine = hostMachineBuilder->createTargetMachine();
  if (!hostMachine)
    return hostMachine.takeError();
  auto optimize = makeOptimizingTransformer(options.optLevel, /*sizeLevel=*/0,
                                            hostMachine->get());
  // ExecutionEngineOptions::transformer is a function_ref: the callable
  // must outlive ExecutionEngine::create (a lambda temporary would not).
  llvm::TargetMachine &machine = **hostMachine;
  auto transform = [&optimize, &machine](llvm::Module *m) -> llvm::Error {
    hoistLaunchAllocas(*m);
    preferWideVectors(*m, machine);
    return optimize(m);
  };
  engineOptions.transformer = transform;
  llvm::Expected<llvm::CodeGenOptLevel> codeGenLevel =
      codeGenOptLevel(options.optLevel);
  if (!codeGenLevel)
    return codeGenLevel.takeError();
  engineOptions.jitCodeGenOptLevel = *codeGenLevel;
  // Neither creating the engine nor looking a function up runs the module's
  // global constructors (initialize() does): compiling touches no GPU.
  auto engine = ExecutionEngine::create(module, engineOptions);
  if (!engine)
    return engine.takeError();
  if (!cuda)
    registerCpuRuntime(**engine);

  std::unique_ptr<CompiledFunction> fn(new CompiledFunction());
  fn->sig = *sig;
  fn->device = options.device;
  fn->engine = std::move(*engine);
  auto packed = fn->engine->lookupPacked(("_mlir_ciface_" + entry).str());
  if (!packed)
    return packed.takeError();
  fn->packed = *packed;
  return fn;
}

llvm::Error CompiledFunction::initialize() {
  if (initialized)
    return llvm::Error::success();
  if (device == Device::CUDA) {
    CudaResult status = cudaApi().cuInit(0);
    if (status != 0)
      return makeError("--device=cuda needs an NVIDIA GPU: " +
                       cudaFailure("cuInit(0)", status));
    int count = 0;
    status = cudaApi().cuDeviceGetCount(&count);
    if (status != 0)
      return makeError("--device=cuda needs an NVIDIA GPU: " +
                       cudaFailure("cuDeviceGetCount", status));
    if (count == 0)
      return makeError("--device=cuda needs an NVIDIA GPU: the CUDA driver "
                       "finds no device");
    // The lowering of gpu.binary loads the kernels in a global constructor
    // (mgpuModuleLoad); a failure there is recorded by the runtime.
    cudaApi().lstmRuntimeClearError();
    engine->initialize();
    if (llvm::Error err = takeRuntimeFailure("loading the GPU kernels failed"))
      return err;
  }
  // The CPU code has no constructors to run; its behaviour stays as it was
  // before CUDA was supported.
  initialized = true;
  return llvm::Error::success();
}

/// Sizes in 64-bit words of the result descriptors, in order.
static std::vector<size_t> resultWordCounts(const Signature &sig) {
  std::vector<size_t> words;
  for (const TensorSpec &r : sig.results)
    words.push_back(3 + 2 * r.shape.size());
  return words;
}

/// Calls the packed C interface with one descriptor per argument; the
/// result descriptors land in the returned words, in order.
static std::vector<int64_t>
callPacked(void (*packed)(void **), const Signature &sig,
           std::vector<std::vector<int64_t>> &argDescriptors) {
  std::vector<size_t> words = resultWordCounts(sig);
  std::vector<int64_t> resultStruct(
      std::accumulate(words.begin(), words.end(), size_t(0)), 0);
  void *resultPtr = resultStruct.data();
  std::vector<void *> descriptorPtrs;
  for (auto &d : argDescriptors)
    descriptorPtrs.push_back(d.data());
  // The packed wrapper takes pointers to each argument of the C interface.
  std::vector<void *> args;
  if (!sig.results.empty())
    args.push_back(&resultPtr);
  for (void *&p : descriptorPtrs)
    args.push_back(&p);
  packed(args.data());
  return resultStruct;
}

llvm::Expected<std::vector<Array>>
CompiledFunction::call(llvm::ArrayRef<Array> inputs) {
  if (llvm::Error err = checkInputs(sig, inputs))
    return std::move(err);
  if (llvm::Error err = initialize())
    return std::move(err);
  if (device == Device::CUDA)
    return callOnCuda(inputs);

  std::vector<std::vector<int64_t>> descriptors;
  descriptors.reserve(inputs.size());
  for (const Array &a : inputs)
    descriptors.push_back(makeDescriptor(a, a.data.data()));
  std::vector<int64_t> resultStruct = callPacked(packed, sig, descriptors);

  std::vector<size_t> words = resultWordCounts(sig);
  std::vector<Array> results;
  size_t at = 0;
  llvm::Error readError = llvm::Error::success();
  for (auto [k, rw] : llvm::enumerate(llvm::zip(sig.results, words))) {
    auto [r, w] = rw;
    llvm::Expected<Array> result =
        readDescriptor(resultStruct.data() + at, r, k);
    if (!result && !readError)
      readError = result.takeError();
    else if (!result)
      llvm::consumeError(result.takeError());
    else
      results.push_back(std::move(*result));
    at += w;
  }

  // Results own their buffers unless they alias an input or a constant
  // global (whose descriptors carry the 0xdeadbeef sentinel); free each
  // distinct owned allocation once.
  llvm::SmallPtrSet<void *, 8> seen;
  for (const Array &a : inputs)
    seen.insert(const_cast<char *>(a.data.data()));
  at = 0;
  for (size_t w : words) {
    auto *allocated = reinterpret_cast<void *>(resultStruct[at]);
    if (allocated && reinterpret_cast<intptr_t>(allocated) != 0xdeadbeef &&
        seen.insert(allocated).second)
      free(allocated);
    at += w;
  }
  if (readError)
    return std::move(readError);
  return results;
}

llvm::Expected<std::vector<Array>>
CompiledFunction::callOnCuda(llvm::ArrayRef<Array> inputs) {
  const CudaApi &api = cudaApi();
  api.lstmRuntimeClearError();
  // The runtime's stream: the compiled code orders its work on it, so the
  // copies go there too.
  void *stream = api.mgpuStreamCreate();

  // The compiled code reads its arguments from device memory: a copy of
  // each input, freed when the call is done (after the work queued on the
  // stream, which the runtime orders the free after).
  std::vector<void *> deviceInputs;
  llvm::scope_exit freeInputs([&] {
    for (void *p : deviceInputs)
      api.lstmRuntimeFree(p);
  });
  for (const Array &a : inputs) {
    void *p = a.data.empty() ? nullptr
                             : api.mgpuMemAlloc(a.data.size(), stream,
                                                /*isHostShared=*/false);
    deviceInputs.push_back(p);
    if (p)
      api.mgpuMemcpy(p, const_cast<char *>(a.data.data()), a.data.size(),
                     stream);
  }
  if (llvm::Error err =
          takeRuntimeFailure("copying the inputs to the GPU failed"))
    return std::move(err);

  std::vector<size_t> words = resultWordCounts(sig);
  std::vector<std::vector<int64_t>> descriptors;
  for (auto [a, p] : llvm::zip(inputs, deviceInputs))
    descriptors.push_back(makeDescriptor(a, p));

  // The call returns once its work is queued; a failing CUDA call inside it
  // is recorded, not fatal.
  std::vector<int64_t> resultStruct = callPacked(packed, sig, descriptors);
  api.lstmRuntimeSynchronize();

  // Results own their device buffers unless they alias an input or a
  // constant global (the 0xdeadbeef sentinel); each distinct one is freed
  // once, also when the run failed.
  llvm::SmallPtrSet<void *, 8> owned;
  for (void *p : deviceInputs)
    owned.insert(p);
  llvm::scope_exit freeResults([&] {
    size_t at = 0;
    for (size_t w : words) {
      auto *allocated = reinterpret_cast<void *>(resultStruct[at]);
      if (allocated && reinterpret_cast<intptr_t>(allocated) != 0xdeadbeef &&
          owned.insert(allocated).second)
        api.lstmRuntimeFree(allocated);
      at += w;
    }
  });
  if (llvm::Error err = takeRuntimeFailure("the CUDA run failed"))
    return std::move(err);

  // A result may be a strided view: copy the span its elements cover, then
  // gather them on the host as for the CPU.
  std::vector<std::vector<char>> spans;
  std::vector<std::vector<int64_t>> hostDescriptors;
  size_t at = 0;
  for (auto [r, w] : llvm::zip(sig.results, words)) {
    const int64_t *desc = resultStruct.data() + at;
    at += w;
    int64_t rank = r.shape.size();
    int64_t lo = desc[2], hi = desc[2];
    bool empty = false;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t size = desc[3 + d], stride = desc[3 + rank + d];
      if (size == 0)
        empty = true;
      else if (stride >= 0)
        hi += (size - 1) * stride;
      else
        lo += (size - 1) * stride;
    }
    size_t elt = dtypeSize(r.dtype);
    std::vector<char> &span = spans.emplace_back();
    if (llvm::Error err =
            allocateBuffer(span, empty ? 0 : (hi - lo + 1) * elt,
                           "copying result #" + llvm::Twine(spans.size() - 1) +
                               " from the GPU"))
      return std::move(err);
    if (!span.empty())
      api.mgpuMemcpy(span.data(), reinterpret_cast<char *>(desc[1]) + lo * elt,
                     span.size(), stream);
    std::vector<int64_t> &host = hostDescriptors.emplace_back(desc, desc + w);
    host[0] = host[1] = reinterpret_cast<int64_t>(span.data());
    host[2] = desc[2] - lo;
  }
  api.lstmRuntimeSynchronize();
  if (llvm::Error err =
          takeRuntimeFailure("copying the results from the GPU failed"))
    return std::move(err);

  std::vector<Array> results;
  for (auto [k, rh] :
       llvm::enumerate(llvm::zip(sig.results, hostDescriptors))) {
    auto [r, host] = rh;
    llvm::Expected<Array> result = readDescriptor(host.data(), r, k);
    if (!result)
      return result.takeError();
    results.push_back(std::move(*result));
  }
  return results;
}
