include/lstm/Dialect/LSTM/IR/LSTMOpsEnums.h.inc: \
  /usr/lib/llvm-22/include/mlir/IR/AttrTypeBase.td \
  /usr/lib/llvm-22/include/mlir/IR/CommonAttrConstraints.td \
  /usr/lib/llvm-22/include/mlir/IR/CommonTypeConstraints.td \
  /usr/lib/llvm-22/include/mlir/IR/Constraints.td \
  /usr/lib/llvm-22/include/mlir/IR/DialectBase.td \
  /usr/lib/llvm-22/include/mlir/IR/EnumAttr.td \
  /usr/lib/llvm-22/include/mlir/IR/Interfaces.td \
  /usr/lib/llvm-22/include/mlir/IR/OpBase.td \
  /usr/lib/llvm-22/include/mlir/IR/Properties.td \
  /usr/lib/llvm-22/include/mlir/IR/Traits.td \
  /usr/lib/llvm-22/include/mlir/IR/Utils.td \
  /usr/lib/llvm-22/include/mlir/Interfaces/ControlFlowInterfaces.td \
  /usr/lib/llvm-22/include/mlir/Interfaces/InferTypeOpInterface.td \
  /usr/lib/llvm-22/include/mlir/Interfaces/SideEffectInterfaceBase.td \
  /usr/lib/llvm-22/include/mlir/Interfaces/SideEffectInterfaces.td \
  /work/main/include/lstm/Dialect/LSTM/IR/LSTMDialect.td
