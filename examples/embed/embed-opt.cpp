//===- embed-opt.cpp - Another project's opt tool with the lstm dialect ---===//
//
// What a compiler that embeds the lstm dialect puts in its own opt tool: its
// own dialects (here only func) plus one call, registerAllLSTM(), which
// brings the dialect, what its IR is written in and lowered through, the
// passes and the pipelines. No registerAllDialects(): the call alone has to
// be enough to parse lstm IR and run --lstm-to-cpu.
//
//===----------------------------------------------------------------------===//

#include "lstm/Registration.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::func::FuncDialect>();
  mlir::lstm::registerAllLSTM(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "An opt tool that embeds the lstm dialect\n", registry));
}
