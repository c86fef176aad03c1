//===- JitRunner.cpp - Compile a module for the CPU and call it -----------===//

#include "lstm/Runner/JitRunner.h"

#include "lstm/Pipelines/Pipelines.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/TargetSelect.h"

#include "llvm/ADT/SmallPtrSet.h"

#include <cstdlib>
#include <cstring>

using namespace mlir;
using namespace mlir::lstm;

// Lowered code calls MLIR's C runner utilities (memrefCopy for strided
// copies). Referencing one keeps libmlir_c_runner_utils linked, so that the
// JIT resolves these symbols in-process.
extern "C" void memrefCopy(int64_t elemSize, void *src, void *dst);
void (*lstmRunnerKeepRunnerUtils)(int64_t, void *, void *) = &memrefCopy;

static llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

std::string TensorSpec::str() const {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s +=
        (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d)) + "x";
  static const char *names[] = {"f32", "f64", "i32", "i64"};
  return s + names[static_cast<int>(dtype)] + ">";
}

static std::optional<TensorSpec> toSpec(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return std::nullopt;
  Type e = tensor.getElementType();
  TensorSpec spec;
  if (e.isF32())
    spec.dtype = DType::f32;
  else if (e.isF64())
    spec.dtype = DType::f64;
  else if (e.isSignlessInteger(32))
    spec.dtype = DType::i32;
  else if (e.isSignlessInteger(64))
    spec.dtype = DType::i64;
  else
    return std::nullopt;
  spec.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  return spec;
}

FailureOr<Signature> mlir::lstm::getSignature(ModuleOp module,
                                              StringRef entry) {
  auto func = module.lookupSymbol<func::FuncOp>(entry);
  if (!func || func.isExternal())
    return module.emitError("no function named '")
           << entry << "' with a body in this module";
  Signature sig;
  FunctionType type = func.getFunctionType();
  for (auto [i, t] : llvm::enumerate(type.getInputs())) {
    auto spec = toSpec(t);
    if (!spec)
      return func.emitError("argument #")
             << i << " has type " << t
             << "; the runner passes ranked tensors of f32, f64, i32 or i64";
    sig.args.push_back(*spec);
  }
  for (auto [i, t] : llvm::enumerate(type.getResults())) {
    auto spec = toSpec(t);
    if (!spec)
      return func.emitError("result #")
             << i << " has type " << t
             << "; the runner returns ranked tensors of f32, f64, i32 or i64";
    sig.results.push_back(*spec);
  }
  return sig;
}

llvm::Error mlir::lstm::checkInputs(const Signature &sig,
                                    llvm::ArrayRef<Array> inputs,
                                    llvm::ArrayRef<std::string> names) {
  if (inputs.size() != sig.args.size())
    return makeError("the entry function takes " +
                     llvm::Twine(sig.args.size()) + " arguments but " +
                     llvm::Twine(inputs.size()) + " inputs were given");
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSpec &spec = sig.args[i];
    const Array &a = inputs[i];
    std::string what = "argument #" + std::to_string(i) +
                       (i < names.size() ? " (" + names[i] + ")" : "");
    if (a.dtype != spec.dtype)
      return makeError(what + ": dtype " + dtypeName(a.dtype) +
                       " does not match the argument type " + spec.str() +
                       " (expected " + dtypeName(spec.dtype) + ")");
    if (a.shape.size() != spec.shape.size())
      return makeError(what + ": shape " + a.shapeString() + " has rank " +
                       llvm::Twine(a.shape.size()) + ", the argument type " +
                       spec.str() + " has rank " +
                       llvm::Twine(spec.shape.size()));
    for (size_t d = 0; d < a.shape.size(); ++d)
      if (!ShapedType::isDynamic(spec.shape[d]) && spec.shape[d] != a.shape[d])
        return makeError(what + ": shape " + a.shapeString() +
                         " does not match the argument type " + spec.str() +
                         " in dimension " + llvm::Twine(d));
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Memref descriptors
//===----------------------------------------------------------------------===//
//
// A ranked memref is passed as {allocated, aligned, offset, sizes[r],
// strides[r]}: 3 + 2r 64-bit words. The C interface takes a pointer to one
// such descriptor per argument and, when there are results, a pointer to the
// struct of result descriptors first.

static std::vector<int64_t> makeDescriptor(const Array &a) {
  int64_t rank = a.shape.size();
  std::vector<int64_t> desc(3 + 2 * rank);
  auto ptr = reinterpret_cast<int64_t>(a.data.data());
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

/// Copies the memref described at `desc` into a dense array.
static Array readDescriptor(const int64_t *desc, const TensorSpec &spec) {
  int64_t rank = spec.shape.size();
  Array a;
  a.dtype = spec.dtype;
  a.shape.assign(desc + 3, desc + 3 + rank);
  size_t elt = dtypeSize(spec.dtype);
  a.data.resize(a.numElements() * elt);
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

llvm::Expected<std::unique_ptr<CompiledFunction>>
CompiledFunction::compile(ModuleOp module, StringRef entry) {
  FailureOr<Signature> sig = lstm::getSignature(module, entry);
  if (failed(sig))
    return makeError("invalid entry function '" + entry + "'");
  auto func = module.lookupSymbol<func::FuncOp>(entry);
  func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                UnitAttr::get(module.getContext()));

  PassManager pm(module.getContext());
  buildLSTMToCPUPipeline(pm);
  if (failed(pm.run(module)))
    return makeError("lowering to the LLVM dialect failed");

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  DialectRegistry registry;
  registerAllToLLVMIRTranslations(registry);
  module.getContext()->appendDialectRegistry(registry);

  ExecutionEngineOptions options;
  auto transformer = makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0,
                                               /*targetMachine=*/nullptr);
  options.transformer = transformer;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  auto engine = ExecutionEngine::create(module, options);
  if (!engine)
    return engine.takeError();

  std::unique_ptr<CompiledFunction> fn(new CompiledFunction());
  fn->sig = *sig;
  fn->engine = std::move(*engine);
  auto packed = fn->engine->lookupPacked(("_mlir_ciface_" + entry).str());
  if (!packed)
    return packed.takeError();
  fn->packed = *packed;
  return fn;
}

llvm::Expected<std::vector<Array>>
CompiledFunction::call(llvm::ArrayRef<Array> inputs) {
  if (llvm::Error err = checkInputs(sig, inputs))
    return std::move(err);

  size_t resultWords = 0;
  for (const TensorSpec &r : sig.results)
    resultWords += 3 + 2 * r.shape.size();
  std::vector<int64_t> resultStruct(resultWords, 0);
  void *resultPtr = resultStruct.data();

  std::vector<std::vector<int64_t>> descriptors;
  descriptors.reserve(inputs.size());
  for (const Array &a : inputs)
    descriptors.push_back(makeDescriptor(a));
  std::vector<void *> descriptorPtrs;
  for (auto &d : descriptors)
    descriptorPtrs.push_back(d.data());

  // The packed wrapper takes pointers to each argument of the C interface.
  std::vector<void *> args;
  if (!sig.results.empty())
    args.push_back(&resultPtr);
  for (void *&p : descriptorPtrs)
    args.push_back(&p);
  packed(args.data());

  std::vector<Array> results;
  size_t at = 0;
  for (const TensorSpec &r : sig.results) {
    results.push_back(readDescriptor(resultStruct.data() + at, r));
    at += 3 + 2 * r.shape.size();
  }

  // Results own their buffers unless they alias an input or a constant
  // global (whose descriptors carry the 0xdeadbeef sentinel); free each
  // distinct owned allocation once.
  llvm::SmallPtrSet<void *, 8> seen;
  for (const Array &a : inputs)
    seen.insert(const_cast<char *>(a.data.data()));
  at = 0;
  for (const TensorSpec &r : sig.results) {
    auto *allocated = reinterpret_cast<void *>(resultStruct[at]);
    if (allocated && reinterpret_cast<intptr_t>(allocated) != 0xdeadbeef &&
        seen.insert(allocated).second)
      free(allocated);
    at += 3 + 2 * r.shape.size();
  }
  return results;
}
