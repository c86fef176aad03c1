//===- LoweringUtils.cpp - Helpers shared by the lstm lowerings -----------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

SmallVector<Value>
mlir::lstm::detail::dynamicSizes(OpBuilder &b, Location loc,
                                 RankedTensorType type,
                                 ArrayRef<std::pair<Value, int64_t>> from) {
  SmallVector<Value> sizes;
  for (int64_t i = 0, e = type.getRank(); i < e; ++i)
    if (type.isDynamicDim(i))
      sizes.push_back(
          tensor::DimOp::create(b, loc, from[i].first, from[i].second));
  return sizes;
}

void mlir::lstm::detail::assertSameExtent(OpBuilder &b, Location loc, Value x,
                                          int64_t dx, Value y, int64_t dy,
                                          const Twine &what) {
  auto tx = cast<RankedTensorType>(x.getType());
  auto ty = cast<RankedTensorType>(y.getType());
  if ((!tx.isDynamicDim(dx) && !ty.isDynamicDim(dy)) || (x == y && dx == dy))
    return;
  Value ex = tensor::DimOp::create(b, loc, x, dx);
  Value ey = tensor::DimOp::create(b, loc, y, dy);
  Value same = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, ex, ey);
  std::string where;
  llvm::raw_string_ostream os(where);
  os << loc;
  cf::AssertOp::create(b, loc, same, (what + " (at " + where + ")").str());
}
