# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Precompiled MLIR headers for the project's C++ (option
# LSTM_ENABLE_PRECOMPILED_HEADERS).
#
# A pass of this project spends most of its compile in MLIR's headers (the
# dialects' generated op classes): with g++ 12 on the 2-core machine,
# lib/Conversion/ElideCopies/ElideCopies.cpp took 13.8 s, 5.3 s with these
# headers precompiled. The headers are compiled once, in the target
# LSTMPrecompiledHeaders, and every target of the project that links MLIR
# reuses that one header (CMake's REUSE_FROM): one precompile for the whole
# build, not one a library.

# The upstream headers that most of lib/ and tools/ include. Our own headers
# stay out: a change to a .td rebuilds what includes it, not everything.
set(LSTM_PRECOMPILED_HEADERS
  <mlir/Dialect/Arith/IR/Arith.h>
  <mlir/Dialect/Arith/Utils/Utils.h>
  <mlir/Dialect/Bufferization/IR/Bufferization.h>
  <mlir/Dialect/ControlFlow/IR/ControlFlowOps.h>
  <mlir/Dialect/Func/IR/FuncOps.h>
  <mlir/Dialect/GPU/IR/GPUDialect.h>
  <mlir/Dialect/LLVMIR/LLVMDialect.h>
  <mlir/Dialect/Linalg/IR/Linalg.h>
  <mlir/Dialect/Math/IR/Math.h>
  <mlir/Dialect/MemRef/IR/MemRef.h>
  <mlir/Dialect/SCF/IR/SCF.h>
  <mlir/Dialect/Tensor/IR/Tensor.h>
  <mlir/Dialect/Utils/StaticValueUtils.h>
  <mlir/IR/Dominance.h>
  <mlir/IR/IRMapping.h>
  <mlir/IR/Matchers.h>
  <mlir/IR/PatternMatch.h>
  <mlir/Interfaces/SideEffectInterfaces.h>
  <mlir/Pass/Pass.h>
  <mlir/Pass/PassManager.h>
  <mlir/Transforms/DialectConversion.h>
  <mlir/Transforms/GreedyPatternRewriteDriver.h>
  <llvm/ADT/SetVector.h>
)

# The targets defined in `dir` and below.
function(lstm_collect_targets dir out)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    lstm_collect_targets("${sub}" sub_targets)
    list(APPEND targets ${sub_targets})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# Whether `target` compiles with OpenMP: it or a library of this project it
# links (directly or through others) links OpenMP::OpenMP_CXX.
function(lstm_uses_openmp target out)
  set(pending ${target})
  set(seen "")
  set(result FALSE)
  while(pending)
    list(POP_FRONT pending current)
    if(current IN_LIST seen OR NOT TARGET ${current})
      continue()
    endif()
    list(APPEND seen ${current})
    if(current STREQUAL "OpenMP::OpenMP_CXX")
      set(result TRUE)
      break()
    endif()
    get_target_property(imported ${current} IMPORTED)
    if(imported)
      continue()
    endif()
    get_target_property(type ${current} TYPE)
    if(NOT type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(links ${current} LINK_LIBRARIES)
      if(links)
        list(APPEND pending ${links})
      endif()
    endif()
    get_target_property(interface ${current} INTERFACE_LINK_LIBRARIES)
    if(interface)
      list(APPEND pending ${interface})
    endif()
  endwhile()
  set(${out} ${result} PARENT_SCOPE)
endfunction()

# Gives every library under the directories given that links MLIR the
# precompiled headers. Called once every target exists. Left out: the
# executables (LLVM's build compiles them without exceptions, and g++ does
# not use a header precompiled with them) and what OpenMP compiles (_OPENMP
# defined); for those g++ would read the whole list as text, slower than
# their own includes. A small translation unit pays for loading the headers
# (about 3 s), a pass gains 8-10 s.
function(lstm_use_precompiled_headers)
  set(source "${CMAKE_BINARY_DIR}/lstm-precompiled-headers.cpp")
  file(CONFIGURE OUTPUT "${source}"
       CONTENT "// The translation unit of the precompiled headers.\n")
  add_library(LSTMPrecompiledHeaders OBJECT "${source}")
  target_precompile_headers(LSTMPrecompiledHeaders PRIVATE
                            ${LSTM_PRECOMPILED_HEADERS})
  foreach(dir IN LISTS ARGN)
    lstm_collect_targets("${dir}" targets)
    foreach(target IN LISTS targets)
      get_target_property(type ${target} TYPE)
      if(NOT type MATCHES "^(STATIC|SHARED|MODULE|OBJECT)_LIBRARY$")
        continue()
      endif()
      get_target_property(links ${target} LINK_LIBRARIES)
      if(NOT links OR NOT "MLIR" IN_LIST links)
        continue()
      endif()
      lstm_uses_openmp(${target} openmp)
      if(openmp)
        continue()
      endif()
      target_precompile_headers(${target} REUSE_FROM LSTMPrecompiledHeaders)
    endforeach()
  endforeach()
endfunction()
