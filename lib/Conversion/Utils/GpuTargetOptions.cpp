//===- GpuTargetOptions.cpp - The GPU target's options -------------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm/Conversion/Utils/GpuTargetOptions.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir::lstm;

llvm::StringRef mlir::lstm::stringifyGemmComputeType(GemmComputeType type) {
  switch (type) {
  case GemmComputeType::fp32:
    return "fp32";
  case GemmComputeType::tf32:
    return "tf32";
  case GemmComputeType::bf16:
    return "bf16";
  }
  llvm_unreachable("unknown GemmComputeType");
}

std::optional<GemmComputeType>
mlir::lstm::symbolizeGemmComputeType(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<GemmComputeType>>(name)
      .Case("fp32", GemmComputeType::fp32)
      .Case("tf32", GemmComputeType::tf32)
      .Case("bf16", GemmComputeType::bf16)
      .Default(std::nullopt);
}

llvm::StringRef mlir::lstm::gemmComputeTypeSpellings() {
  return "fp32, tf32 or bf16";
}

int mlir::lstm::gpuChipVersion(llvm::StringRef chip) {
  int version = 0;
  if (!chip.consume_front("sm_") ||
      chip.take_while(llvm::isDigit).getAsInteger(10, version))
    return 0;
  return version;
}

llvm::cl::ValuesClass mlir::lstm::gemmComputeTypeValues() {
  return llvm::cl::values(
      clEnumValN(GemmComputeType::fp32, "fp32", "fp32 arithmetic (no TF32)"),
      clEnumValN(GemmComputeType::tf32, "tf32", "TF32 tensor cores"),
      clEnumValN(GemmComputeType::bf16, "bf16",
                 "bf16 operands, fp32 accumulation"));
}
