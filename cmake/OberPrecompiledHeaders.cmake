#===- OberPrecompiledHeaders.cmake - MLIR's headers parsed once per library -===#
#
# A compiler source spends most of its compile time parsing MLIR's headers
# (the dialect's generated op classes alone are thousands of lines). Each
# compiler library of three sources or more precompiles the headers most of
# them include, once, and every source starts from that.
# -DOBER_PRECOMPILED_HEADERS=OFF turns it off (to check that each source
# includes what it uses).
#
#===----------------------------------------------------------------------===#

option(OBER_PRECOMPILED_HEADERS "Precompile MLIR's common headers per library" ON)

set(OBER_PRECOMPILED_HEADER_LIST
  <ober/Dialect/Ober/IR/OberOps.h>
  <mlir/Dialect/Arith/IR/Arith.h>
  <mlir/Dialect/Func/IR/FuncOps.h>
  <mlir/Dialect/Linalg/IR/Linalg.h>
  <mlir/Dialect/MemRef/IR/MemRef.h>
  <mlir/Dialect/SCF/IR/SCF.h>
  <mlir/Dialect/Tensor/IR/Tensor.h>
  <mlir/IR/Builders.h>
  <mlir/IR/BuiltinOps.h>
  <mlir/IR/PatternMatch.h>
  <mlir/Pass/Pass.h>
  <llvm/ADT/TypeSwitch.h>
  <llvm/Support/FormatVariadic.h>
  <llvm/Support/raw_ostream.h>)

# The static libraries named Ober* defined in `dir` and below.
function(ober_collect_libraries dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  set(found)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    if(type STREQUAL "STATIC_LIBRARY" AND t MATCHES "^Ober")
      list(APPEND found ${t})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    ober_collect_libraries(${sub} more)
    list(APPEND found ${more})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# Gives every compiler library under `dir` with three sources or more the
# precompiled headers.
function(ober_precompile_headers dir)
  if(NOT OBER_PRECOMPILED_HEADERS)
    return()
  endif()
  ober_collect_libraries(${dir} libraries)
  foreach(t ${libraries})
    get_target_property(sources ${t} SOURCES)
    list(LENGTH sources count)
    if(count GREATER_EQUAL 3)
      target_precompile_headers(${t} PRIVATE ${OBER_PRECOMPILED_HEADER_LIST})
      add_dependencies(${t} OberOpsIncGen)
    endif()
  endforeach()
endfunction()
