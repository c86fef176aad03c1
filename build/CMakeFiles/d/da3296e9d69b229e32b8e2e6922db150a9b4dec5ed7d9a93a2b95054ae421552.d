include/lstm/Conversion/Passes.h.inc: \
  /usr/lib/llvm-22/include/mlir/Pass/PassBase.td
