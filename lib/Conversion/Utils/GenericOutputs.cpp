//===- GenericOutputs.cpp - A generic's result computed twice -------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/Utils/GenericOutputs.h"

using namespace mlir;

Value lstm::addGenericOutput(RewriterBase &rewriter, linalg::GenericOp generic,
                             unsigned index, Value init) {
  OpBuilder::InsertionGuard guard(rewriter);
  SmallVector<Value> inits(generic.getDpsInits());
  inits.push_back(init);
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  maps.push_back(
      generic.getMatchingIndexingMap(generic.getDpsInitOperand(index)));
  SmallVector<Type> types(generic->getResultTypes());
  types.push_back(init.getType());
  rewriter.setInsertionPoint(generic);
  auto wider = linalg::GenericOp::create(rewriter, generic.getLoc(), types,
                                         generic.getDpsInputs(), inits, maps,
                                         generic.getIteratorTypesArray());
  wider->setDiscardableAttrs(generic->getDiscardableAttrDictionary());
  Region &body = wider.getRegion();
  rewriter.inlineRegionBefore(generic.getRegion(), body, body.end());
  Block &block = body.front();
  block.addArgument(getElementTypeOrSelf(init.getType()), generic.getLoc());
  Operation *yield = block.getTerminator();
  SmallVector<Value> yielded(yield->getOperands());
  yielded.push_back(yielded[index]);
  rewriter.setInsertionPoint(yield);
  rewriter.replaceOpWithNewOp<linalg::YieldOp>(yield, yielded);
  rewriter.replaceOp(generic, wider->getResults().drop_back());
  return wider->getResults().back();
}
