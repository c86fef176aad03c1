# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# cmake -DNM=nm -DOBJECTS="a.o;b.o" -DEXPORTS=lstmc.map -DUNDEFS=undefs.rsp -P
# exports.cmake: from the undefined symbols of the tools' objects, the
# version script of liblstmc.so (the C API, lstm* and mlir*, and these) and
# a linker response file with one --undefined= per symbol (so that the
# static link pulls in what defines them). python/CMakeLists.txt.
set(symbols "")
foreach(object ${OBJECTS})
  execute_process(COMMAND ${NM} --undefined-only --format=just-symbols ${object}
    OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} failed on ${object}")
  endif()
  string(REPLACE "\n" ";" out "${out}")
  list(APPEND symbols ${out})
endforeach()
# What every image defines for itself.
list(FILTER symbols EXCLUDE REGEX "^(_GLOBAL_OFFSET_TABLE_|__dso_handle)$")
list(FILTER symbols EXCLUDE REGEX "^$")
list(REMOVE_DUPLICATES symbols)
list(SORT symbols)
set(map "{\n  global:\n    lstm*;\n    mlir*;\n")
set(undefs "")
foreach(symbol ${symbols})
  string(APPEND map "    ${symbol};\n")
  string(APPEND undefs "--undefined=${symbol}\n")
endforeach()
string(APPEND map "  local: *;\n};\n")
file(WRITE ${EXPORTS} "${map}")
file(WRITE ${UNDEFS} "${undefs}")
