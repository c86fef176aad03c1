//===- NarrowKernelIndices.cpp - Kernels with 32-bit indices --------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The NVVM lowering gives `index` the width of the module's data layout, 64
// bits by default, so a kernel's address arithmetic is 64-bit: on NVIDIA
// GPUs an add is two instructions and a multiply several, and each size or
// stride a loop keeps live takes two registers. The persistent kernels are
// long loops of such arithmetic around a few loads and FMAs; ptxas gave
// char-rnn's backward kernel 231 registers a thread with 64-bit indices and
// 169 with 32-bit ones.
//
// A kernel's index width cannot change alone: the host passes each memref as
// its descriptor's fields, with the host's 64-bit sizes. So the narrowed
// kernels take what both sides agree on: a memref's aligned pointer as an
// i64, and its dynamic offset, sizes and strides as i32 (the static ones
// are constants in the kernel); an index argument becomes an i32. The
// kernel rebuilds each memref descriptor from them with LLVM dialect ops and
// casts it to the memref type; the NVVM lowering, which converts that type
// to the same 32-bit descriptor, folds the cast away.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/NarrowKernelIndices/NarrowKernelIndices.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/BitVector.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_NARROWKERNELINDICESPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {

/// The width of `index` in the narrowed kernels.
constexpr unsigned kIndexBits = 32;

using lstm::kNarrowIndexLimit;

/// The name of the module of the narrowed kernels.
constexpr llvm::StringLiteral kNarrowModuleName = "lstm_kernels_i32";

/// The memref's fields that the kernel takes as arguments, besides its
/// pointer: the offset, sizes and strides its type leaves dynamic.
struct DynamicFields {
  bool offset = false;
  SmallVector<unsigned> sizes, strides;

  unsigned count() const {
    return (offset ? 1 : 0) + sizes.size() + strides.size();
  }
};

/// The dynamic fields of `type`, or nothing where the kernel cannot take
/// it in pieces (a layout that is not strided, a memory space: kernels'
/// arguments are global memory).
static std::optional<DynamicFields> dynamicFields(MemRefType type) {
  if (type.getMemorySpace())
    return std::nullopt;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return std::nullopt;
  DynamicFields fields;
  fields.offset = ShapedType::isDynamic(offset);
  for (auto [i, size] : llvm::enumerate(type.getShape()))
    if (ShapedType::isDynamic(size))
      fields.sizes.push_back(i);
  for (auto [i, stride] : llvm::enumerate(strides))
    if (ShapedType::isDynamic(stride))
      fields.strides.push_back(i);
  return fields;
}

/// Whether every argument of `kernel` is an index, a scalar that needs no
/// change, or a memref the kernel can take in pieces; its body refers to no
/// symbol of its module (a global would stay behind); and every index
/// constant in it lies within the bounds of its indices (a constant that
/// 32 bits truncate, a "larger than any batch" say, would change what the
/// kernel computes, even loop forever).
static bool canNarrow(gpu::GPUFuncOp kernel) {
  std::optional<SymbolTable::UseRange> uses =
      SymbolTable::getSymbolUses(&kernel.getBody());
  if (!uses || !uses->empty())
    return false;
  WalkResult constants = kernel.walk([](arith::ConstantIndexOp constant) {
    int64_t value = constant.value();
    return value < kNarrowIndexLimit && value > -kNarrowIndexLimit
               ? WalkResult::advance()
               : WalkResult::interrupt();
  });
  if (constants.wasInterrupted())
    return false;
  return llvm::all_of(kernel.getArgumentTypes(), [](Type type) {
    if (auto memref = dyn_cast<MemRefType>(type))
      return dynamicFields(memref).has_value();
    return type.isIntOrIndexOrFloat();
  });
}

/// The narrowed kernel's arguments for an argument of type `type`.
static SmallVector<Type> narrowedTypes(Type type) {
  MLIRContext *context = type.getContext();
  auto i32 = IntegerType::get(context, kIndexBits);
  if (type.isIndex())
    return {i32};
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return {type};
  SmallVector<Type> types{IntegerType::get(context, 64)};
  types.append(dynamicFields(memref)->count(), i32);
  return types;
}

/// Rebuilds, at the start of `kernel`'s body, the memref that arguments
/// `args` (pointer, then dynamic fields) describe.
static Value rebuildMemRef(OpBuilder &b, Location loc, MemRefType type,
                           ValueRange args,
                           const LLVMTypeConverter &converter) {
  SmallVector<int64_t> strides;
  int64_t offset;
  (void)type.getStridesAndOffset(strides, offset);
  DynamicFields fields = *dynamicFields(type);
  auto descriptorType = converter.convertType(type);
  MemRefDescriptor descriptor =
      MemRefDescriptor::poison(b, loc, descriptorType);
  Value pointer = LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), args.front());
  descriptor.setAllocatedPtr(b, loc, pointer);
  descriptor.setAlignedPtr(b, loc, pointer);
  unsigned next = 1;
  if (fields.offset)
    descriptor.setOffset(b, loc, args[next++]);
  else
    descriptor.setConstantOffset(b, loc, offset);
  for (auto [i, size] : llvm::enumerate(type.getShape())) {
    if (ShapedType::isDynamic(size))
      descriptor.setSize(b, loc, i, args[next++]);
    else
      descriptor.setConstantSize(b, loc, i, size);
  }
  for (auto [i, stride] : llvm::enumerate(strides)) {
    if (ShapedType::isDynamic(stride))
      descriptor.setStride(b, loc, i, args[next++]);
    else
      descriptor.setConstantStride(b, loc, i, stride);
  }
  return UnrealizedConversionCastOp::create(b, loc, type, Value(descriptor))
      .getResult(0);
}

/// Gives `kernel` the narrowed signature, its body the values of the old
/// arguments rebuilt from the new ones.
static void narrowSignature(gpu::GPUFuncOp kernel,
                            const LLVMTypeConverter &converter) {
  unsigned oldCount = kernel.getNumArguments();
  SmallVector<Type> oldTypes(kernel.getArgumentTypes());
  SmallVector<unsigned> positions;
  SmallVector<Type> types;
  for (Type type : oldTypes)
    for (Type narrowed : narrowedTypes(type)) {
      positions.push_back(oldCount);
      types.push_back(narrowed);
    }
  SmallVector<DictionaryAttr> attrs(types.size(), DictionaryAttr());
  SmallVector<Location> locs(types.size(), kernel.getLoc());
  LogicalResult inserted =
      kernel.insertArguments(positions, types, attrs, locs);
  assert(succeeded(inserted) && "gpu.func takes any argument types");
  (void)inserted;

  Block &entry = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Location loc = kernel.getLoc();
  unsigned next = oldCount;
  for (unsigned i = 0; i < oldCount; ++i) {
    BlockArgument old = entry.getArgument(i);
    unsigned count = narrowedTypes(oldTypes[i]).size();
    ValueRange args = entry.getArguments().slice(next, count);
    next += count;
    Value value;
    if (oldTypes[i].isIndex())
      value = arith::IndexCastOp::create(b, loc, b.getIndexType(), args[0]);
    else if (auto memref = dyn_cast<MemRefType>(oldTypes[i]))
      value = rebuildMemRef(b, loc, memref, args, converter);
    else
      value = args[0];
    old.replaceAllUsesWith(value);
  }
  llvm::BitVector erase(kernel.getNumArguments());
  erase.set(0, oldCount);
  LogicalResult erased = kernel.eraseArguments(erase);
  assert(succeeded(erased) && "gpu.func's arguments can be erased");
  (void)erased;
}

/// `value` (an index) as an i32.
static Value toI32(OpBuilder &b, Location loc, Value value) {
  return arith::IndexCastOp::create(b, loc, b.getI32Type(), value);
}

/// The operands of `launch` for the narrowed kernel, and the host's
/// assertion that they are within kNarrowIndexLimit.
static SmallVector<Value> narrowOperands(gpu::LaunchFuncOp launch,
                                         StringRef kernelName) {
  OpBuilder b(launch);
  Location loc = launch.getLoc();
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value limit = index(kNarrowIndexLimit);
  Value ok = arith::ConstantIntOp::create(b, loc, 1, /*width=*/1);
  auto require = [&](arith::CmpIPredicate predicate, Value lhs, Value rhs) {
    ok = arith::AndIOp::create(
        b, loc, ok, arith::CmpIOp::create(b, loc, predicate, lhs, rhs));
  };
  SmallVector<Value> operands;
  for (Value operand : launch.getKernelOperands()) {
    Type type = operand.getType();
    if (type.isIndex()) {
      require(arith::CmpIPredicate::slt, operand, limit);
      require(arith::CmpIPredicate::sgt, operand, index(-kNarrowIndexLimit));
      operands.push_back(toI32(b, loc, operand));
      continue;
    }
    auto memref = dyn_cast<MemRefType>(type);
    if (!memref) {
      operands.push_back(operand);
      continue;
    }
    Value pointer =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, operand);
    operands.push_back(
        arith::IndexCastOp::create(b, loc, b.getI64Type(), pointer));
    auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, operand);
    DynamicFields fields = *dynamicFields(memref);
    if (fields.offset)
      operands.push_back(toI32(b, loc, metadata.getOffset()));
    for (unsigned i : fields.sizes)
      operands.push_back(toI32(b, loc, metadata.getSizes()[i]));
    for (unsigned i : fields.strides)
      operands.push_back(toI32(b, loc, metadata.getStrides()[i]));
    // The element one past the last that an index reaches: offset + sum of
    // (size - 1) * stride, plus one. Strides are not negative in the
    // kernels' buffers (a strided layout's are not, unless written so).
    Value extent = metadata.getOffset();
    for (auto [size, stride] :
         llvm::zip(metadata.getSizes(), metadata.getStrides())) {
      Value last = arith::SubIOp::create(b, loc, size, index(1));
      extent = arith::AddIOp::create(
          b, loc, extent, arith::MulIOp::create(b, loc, last, stride));
    }
    extent = arith::AddIOp::create(b, loc, extent, index(1));
    require(arith::CmpIPredicate::slt, extent, limit);
    for (Value stride : metadata.getStrides())
      require(arith::CmpIPredicate::slt, stride, limit);
  }
  cf::AssertOp::create(
      b, loc, ok,
      ("kernel @" + kernelName +
       ": a buffer of 2^30 elements or more, or an index outside +-2^30, "
       "passed to a kernel with 32-bit indices")
          .str());
  return operands;
}

struct NarrowKernelIndicesPass
    : public lstm::impl::NarrowKernelIndicesPassBase<NarrowKernelIndicesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    SmallVector<gpu::GPUFuncOp> kernels;
    for (auto gpuModule : module.getOps<gpu::GPUModuleOp>())
      for (auto kernel : gpuModule.getOps<gpu::GPUFuncOp>())
        if (kernel.isKernel() &&
            kernel.getName().starts_with(kernelPrefix.getValue()) &&
            canNarrow(kernel))
          kernels.push_back(kernel);
    if (kernels.empty())
      return;

    // The kernels' new module, after their first one, with the same
    // targets (if any are attached yet) and a 32-bit index.
    auto first = kernels.front()->getParentOfType<gpu::GPUModuleOp>();
    OpBuilder builder(first);
    builder.setInsertionPointAfter(first);
    auto narrow =
        gpu::GPUModuleOp::create(builder, first.getLoc(), kNarrowModuleName);
    if (ArrayAttr targets = first.getTargetsAttr())
      narrow.setTargetsAttr(targets);
    narrow->setAttr(DLTIDialect::kDataLayoutAttrName,
                    DataLayoutSpecAttr::get(
                        context, {DataLayoutEntryAttr::get(
                                     IndexType::get(context),
                                     builder.getI64IntegerAttr(kIndexBits))}));
    SymbolTable narrowSymbols(narrow);

    LowerToLLVMOptions options(context);
    options.overrideIndexBitwidth(kIndexBits);
    LLVMTypeConverter converter(context, options);

    // Each kernel's old symbol (module, name) and new one.
    llvm::DenseMap<std::pair<StringAttr, StringAttr>, SymbolRefAttr> moved;
    for (gpu::GPUFuncOp kernel : kernels) {
      auto from = kernel->getParentOfType<gpu::GPUModuleOp>();
      std::pair<StringAttr, StringAttr> key{from.getNameAttr(),
                                            kernel.getNameAttr()};
      kernel->remove();
      StringAttr name = narrowSymbols.insert(kernel);
      moved[key] = SymbolRefAttr::get(narrow.getNameAttr(),
                                      {FlatSymbolRefAttr::get(name)});
      narrowSignature(kernel, converter);
    }

    module.walk([&](gpu::LaunchFuncOp launch) {
      auto it =
          moved.find({launch.getKernelModuleName(), launch.getKernelName()});
      if (it == moved.end())
        return;
      SmallVector<Value> operands =
          narrowOperands(launch, launch.getKernelName().getValue());
      launch.getKernelOperandsMutable().assign(operands);
      launch.setKernelAttr(it->second);
    });

    // A module left without kernels goes (the merged module of a network
    // whose kernels are all persistent).
    for (auto gpuModule :
         llvm::make_early_inc_range(module.getOps<gpu::GPUModuleOp>()))
      if (gpuModule != narrow && gpuModule.getBody()->empty())
        gpuModule.erase();
  }
};

} // namespace
